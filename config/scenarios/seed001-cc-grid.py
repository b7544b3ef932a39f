#!/usr/bin/python3
"""Seed 001's N:1 grid (docs/scenarios.md "Seed 001: congestion control
compared"): for N senders in --senders and every CC in --ccs, the topology of
seed001-cc-gen.py with rounds of 1 MiB per sender (--uniform), one
virtual-time sf-lab run each (--jobs at a time), then one plot of the
probe's P99 round trip and the aggregate goodput against N, one line per CC,
and a JSON line per run on stdout.

usage: config/scenarios/seed001-cc-grid.py --out DIR [--senders 8,32,64] [--ccs none,hpcc,...]
       [--rounds 3] [--jobs 2] [--build build] [--reuse N=DIR,...]
--reuse takes the report directories of runs already made (e.g. the 64:1
table's: 64=/tmp/s64) instead of running them again."""
import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))


def summary(out, line_gbps=400):
    """Probe round trips while the rounds ran (mean, P99), PFC pauses sent by
    the switch, goodput = all bytes over the sum of the rounds' durations
    (first start to last completion), as tests/tools/seed001_cc_test.py."""
    res = json.load(open(os.path.join(out, "results.json")))
    rounds = {}
    for f in res["flows"]:
        rounds.setdefault(f["workload"], []).append(f)
    total = sum(f["bytes_received"] for f in res["flows"])
    busy = sum(max(f["completion_s"] for f in fs) for fs in rounds.values())
    lat = res["probes"][0]["during_flows"]
    return {"probe_mean_us": lat["avg"], "probe_p99_us": lat["p99"], "pauses": res["totals"]["pfc_pause_sent"],
            "throughput_gbps": total * 8 / busy / 1e9,
            "complete": all(f["complete"] for f in res["flows"])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--senders", default="8,32,64")
    ap.add_argument("--ccs", default="none,dcqcn-nvidia,swift,bbr,hpcc,hpcc-fair-eta98,bbr-fair-cwnd1")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--reuse", default="")
    a = ap.parse_args()
    ns = [int(x) for x in a.senders.split(",")]
    ccs = a.ccs.split(",")
    reuse = dict((int(k), v) for k, v in (x.split("=") for x in a.reuse.split(",") if x))
    runs = []
    for n in ns:
        if n in reuse:
            continue
        cfg = os.path.join(a.out, f"n{n}", "cfg")
        subprocess.run([sys.executable, os.path.join(HERE, "seed001-cc-gen.py"), "--senders", str(n), "--rounds",
                        str(a.rounds), "--uniform", "--out", cfg], check=True)
        runs += [(n, cc, os.path.join(cfg, f"seed001-cc-{cc}.json"), os.path.join(a.out, f"n{n}", cc)) for cc in ccs]

    def run(r):
        n, cc, topo, out = r
        if not os.path.exists(os.path.join(out, "results.json")):
            p = subprocess.run([sys.executable, os.path.join(SRC, "tools", "sf-lab"), "run", "--sim", topo, "--out", out,
                                "--build", a.build], capture_output=True, text=True)
            if p.returncode != 0:
                print(f"N={n} {cc}: exit {p.returncode}\n{p.stdout[-1500:]}{p.stderr[-1500:]}", file=sys.stderr)
        return r

    with ThreadPoolExecutor(a.jobs) as ex:
        list(ex.map(run, runs))
    table = {}
    for n in ns:
        for cc in ccs:
            d = os.path.join(reuse[n], cc) if n in reuse else os.path.join(a.out, f"n{n}", cc)
            if not os.path.exists(os.path.join(d, "results.json")):
                continue
            s = summary(d)
            table[(n, cc)] = s
            print(json.dumps({"senders": n, "cc": cc, **{k: round(v, 2) if isinstance(v, float) else v
                                                          for k, v in s.items()}}))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for cc in ccs:
        xs = [n for n in ns if (n, cc) in table]
        ax1.plot(xs, [table[(n, cc)]["probe_p99_us"] for n in xs], marker="o", label=cc)
        ax2.plot(xs, [table[(n, cc)]["throughput_gbps"] for n in xs], marker="o", label=cc)
    ax1.axhline(21.4, color="k", ls=":", lw=1, label="seed goal 21.4 us")
    ax2.axhline(388, color="k", ls=":", lw=1, label="seed goal 388 Gb/s")
    ax1.set_yscale("log")
    ax1.set_xlabel("senders N (N:1 at 400G)")
    ax2.set_xlabel("senders N (N:1 at 400G)")
    ax1.set_ylabel("probe round trip P99, us")
    ax2.set_ylabel("aggregate goodput, Gb/s")
    ax1.set_xticks(ns)
    ax2.set_xticks(ns)
    ax1.legend(fontsize=7, loc="upper left")
    ax2.legend(fontsize=7)
    fig.suptitle(f"seed 001 N:1 grid, {a.rounds} rounds of 1 MiB per sender, virtual time")
    fig.tight_layout()
    png = os.path.join(a.out, "seed001-cc-grid.png")
    fig.savefig(png, dpi=110)
    print("plot:", png, file=sys.stderr)


if __name__ == "__main__":
    main()
