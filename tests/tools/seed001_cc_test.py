#!/usr/bin/python3
"""Seed 001's congestion-control comparison, small (docs/scenarios.md "Seed
001: congestion control compared"): the topologies of
config/scenarios/seed001-cc-gen.py with 16 senders (bursts of 64 KiB,
256 KiB and 1 MiB per sender: 1, 4 and 16 MiB), one virtual-time sf-lab run
per CC (none, dcqcn-nvidia, dcqcn-paper, swift, bbr, hpcc with their
defaults, and hpcc-fair-eta98: HPCC started at the fair share, T = the
fabric's base RTT, eta 0.98), two at a time. Each held to the outcome the
docs state:

  * every run exits 0 with every flow complete (all bytes acknowledged), no
    PFC pause (the seed's generous thresholds absorb every burst), INT
    records in the HPCC runs and only there;
  * none: the hot queue beyond 4 MiB (measured 8.2 MB);
  * dcqcn-nvidia / dcqcn-paper: CNPs reached the senders;
  * bbr and hpcc: the hot queue's mean under 0.4 x none's (measured 0.10
    and 0.35), the probe's P99 round trip under none's / 1.5 (25.5 and
    88.4 us against 170.7), at least 0.9 x none's throughput (375 and 361
    Gb/s against 380). Swift
    and both DCQCNs behave like none here (docs);
  * 64:1, one round of 1 MiB per sender, bbr-paced (fair-share start,
    2-packet window floor, STARTUP gain 1.1): seed 001's goals, probe P99
    < 21.4 us (measured 13.9), no pause, >= 386 Gb/s (388.8);
  * hpcc-fair-eta98: probe P99 under seed 001's 21.4 us and under hpcc's
    (measured 5.3 us), hot queue max under half of hpcc's (67 KB against
    5.8 MB), at least 0.9 x none's throughput (362 Gb/s).
Prints one line per CC (the table's columns). 90 s of wall time on the
2-core machine (eight runs, the 16:1 ones two at a time); under load
average 12-14 the six runs of issue 16 took 3.6-5.2 min.
Usage: seed001_cc_test.py --build BUILD_DIR --source SOURCE_DIR
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CCS = ["none", "dcqcn-nvidia", "dcqcn-paper", "swift", "bbr", "hpcc", "hpcc-fair-eta98"]
SENDERS, SCALE = 16, 1.0


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def summary(out):
    """The table's figures from one report directory (docs/scenarios.md uses
    the same): the probe's round trips while the bursts ran (mean, P99,
    samples), PFC pauses the switch sent, aggregate goodput (all bytes over
    the sum of the bursts' durations, start to last completion), the hot queue (r0's port, queue 3)
    watermark and mean over the time-series samples while it was busy, the
    worst burst's completion / ideal (its bytes at 400 Gb/s), INT records."""
    res = json.load(open(os.path.join(out, "results.json")))
    rep = json.load(open(os.path.join(out, "switch-sw0-report.json")))
    hot = next(p for p in rep["ports"] if p["name"] == "Ethernet256")
    ts = [json.loads(line) for line in open(os.path.join(out, "timeseries.jsonl"))]
    depths = [r["ports"]["Ethernet256"]["queues"][3][0] for r in ts if r["source"] == "switch:sw0"]
    busy = [x for x in depths if x > 0]
    flows = res["flows"]
    rounds = {}
    for f in flows:
        rounds.setdefault(f["workload"], []).append(f)
    ratios = []
    total = sum(f["bytes_received"] for f in flows)
    busy_s = 0.0  # sum over bursts of first start to last completion (the seed's all-reduce throughput)
    for fs in rounds.values():
        b = sum(f["bytes_received"] for f in fs)
        d = max(f["completion_s"] for f in fs)
        busy_s += d
        ratios.append(d / (b * 8 / 400e9))
    lat = res["probes"][0]["during_flows"] if res.get("probes") else None
    return {"complete": all(f["complete"] for f in flows),
            "probe_mean_us": lat["avg"] if lat else None, "probe_p99_us": lat["p99"] if lat else None,
            "probe_samples": lat["samples"] if lat else 0,
            "pauses": res["totals"]["pfc_pause_sent"],
            "cnp_received": res["totals"]["cnp_received"],
            "throughput_gbps": total * 8 / busy_s / 1e9,
            "hot_max_bytes": hot["queues"][3]["watermark_bytes"],
            "hot_mean_bytes": sum(busy) / len(busy) if busy else 0.0,
            "completion_over_ideal": max(ratios),
            "int_records": rep.get("int", {}).get("records", 0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--keep", help="write the run directories here")
    a = ap.parse_args()
    build, src = os.path.abspath(a.build), os.path.abspath(a.source)
    if not os.access(os.path.join(build, "tools", "sf-sim", "sf-sim"), os.X_OK):
        print("SKIP: tools/sf-sim/sf-sim is not built")
        sys.exit(77)
    d = a.keep or tempfile.mkdtemp(prefix="seed001-cc-")
    subprocess.run([sys.executable, os.path.join(src, "config", "scenarios", "seed001-cc-gen.py"), "--senders",
                    str(SENDERS), "--scale", str(SCALE), "--out", d], check=True)
    sums = {}
    t0 = time.monotonic()
    for i in range(0, len(CCS), 2):
        procs = []
        for cc in CCS[i:i + 2]:
            cmd = [sys.executable, os.path.join(src, "tools", "sf-lab"), "run", "--sim",
                   os.path.join(d, f"seed001-cc-{cc}.json"), "--out", os.path.join(d, cc), "--build", build]
            procs.append((cc, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        for cc, p in procs:
            try:
                so, se = p.communicate(timeout=200)
            except subprocess.TimeoutExpired:
                p.kill()
                fail(f"{cc}: sf-lab run --sim took more than 200 s")
            check(p.returncode == 0, f"{cc}: exit {p.returncode}\n{so[-2000:]}\n{se[-2000:]}")
            sums[cc] = summary(os.path.join(d, cc))
            s = sums[cc]
            print(f"{cc:13s} probe mean {s['probe_mean_us']} us p99 {s['probe_p99_us']} us ({s['probe_samples']}), "
                  f"pauses {s['pauses']}, {s['throughput_gbps']:.0f} Gb/s, hot max {s['hot_max_bytes']} B "
                  f"mean {s['hot_mean_bytes']:.0f} B, completion/ideal {s['completion_over_ideal']:.2f}, "
                  f"INT {s['int_records']}", flush=True)
    # The seed's 64:1, one round of 1 MiB per sender, with bbr-paced: the
    # variant that meets seed 001's three goals in the docs' table.
    d64 = os.path.join(d, "n64")
    subprocess.run([sys.executable, os.path.join(src, "config", "scenarios", "seed001-cc-gen.py"), "--senders", "64",
                    "--rounds", "1", "--out", d64], check=True)
    cmd = [sys.executable, os.path.join(src, "tools", "sf-lab"), "run", "--sim",
           os.path.join(d64, "seed001-cc-bbr-paced.json"), "--out", os.path.join(d64, "bbr-paced"), "--build", build]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"64:1 bbr-paced: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    # r0 serves 64 senders + the probe: 65 workloads, past sf-nic's default
    # 64; sf-lab raised its verbs limits, and passed the hosts' cc_params.
    rx = json.load(open(os.path.join(d64, "bbr-paced", "run", "nic-receiver.json")))
    lim = {k: v for k, v in rx["hosts"]["r0"].items() if k.startswith("max_")}
    check(lim == {"max_pds": 65, "max_mrs": 65, "max_cqs": 130, "max_qps": 65}, f"64:1 r0 limits {lim}")
    tx = json.load(open(os.path.join(d64, "bbr-paced", "run", "nic-senders.json")))
    check(all(w.get("cc_params", {}).get("high_gain") == 1.1 for w in tx["workloads"]), "64:1 senders' cc_params")
    paced = summary(os.path.join(d64, "bbr-paced"))
    print(f"64:1 bbr-paced probe mean {paced['probe_mean_us']} us p99 {paced['probe_p99_us']} us "
          f"({paced['probe_samples']}), pauses {paced['pauses']}, {paced['throughput_gbps']:.1f} Gb/s, "
          f"hot max {paced['hot_max_bytes']} B", flush=True)
    print(f"  {len(CCS) + 1} runs: {time.monotonic() - t0:.1f} s wall")
    for cc, s in sums.items():
        check(s["complete"], f"{cc}: a flow did not complete")
        check(s["pauses"] == 0, f"{cc}: {s['pauses']} PFC pauses (the generous thresholds absorb every burst)")
        check((s["int_records"] > 0) == cc.startswith("hpcc"), f"{cc}: INT records {s['int_records']}")
    none = sums["none"]
    check(none["hot_max_bytes"] > 4 << 20, f"none: hot queue max {none['hot_max_bytes']} B, want > 4 MiB")
    for cc in ("dcqcn-nvidia", "dcqcn-paper"):
        check(sums[cc]["cnp_received"] > 0, f"{cc}: no CNP reached the senders")
    for cc in ("bbr", "hpcc"):
        s = sums[cc]
        check(s["hot_mean_bytes"] < 0.4 * none["hot_mean_bytes"],
              f"{cc}: hot queue mean {s['hot_mean_bytes']:.0f} B, none {none['hot_mean_bytes']:.0f} B")
        check(s["probe_p99_us"] < none["probe_p99_us"] / 1.5,
              f"{cc}: probe P99 {s['probe_p99_us']} us, none {none['probe_p99_us']} us")
        check(s["throughput_gbps"] >= 0.9 * none["throughput_gbps"],
              f"{cc}: {s['throughput_gbps']:.0f} Gb/s, none {none['throughput_gbps']:.0f}")
    # HPCC tuned for the incast (seed 001's cure): a paced start at the fair
    # share, T = the fabric's base RTT, eta 0.98. Under the seed's P99 goal,
    # below HPCC with its defaults, and near none's throughput.
    t, h = sums["hpcc-fair-eta98"], sums["hpcc"]
    check(t["probe_p99_us"] < 21.4, f"hpcc-fair-eta98: probe P99 {t['probe_p99_us']} us, goal < 21.4")
    check(t["probe_p99_us"] < h["probe_p99_us"], f"hpcc-fair-eta98: P99 {t['probe_p99_us']} us, hpcc {h['probe_p99_us']}")
    check(t["hot_max_bytes"] < h["hot_max_bytes"] / 2,
          f"hpcc-fair-eta98: hot queue max {t['hot_max_bytes']} B, hpcc {h['hot_max_bytes']} B")
    check(t["throughput_gbps"] >= 0.9 * none["throughput_gbps"],
          f"hpcc-fair-eta98: {t['throughput_gbps']:.0f} Gb/s, none {none['throughput_gbps']:.0f}")
    # Seed 001's goals at 64:1: P99 < 21.4 us, no pause, >= 388 Gb/s (the
    # goodput ceiling of 4 KiB frames at 400G is 389; measured 13.9 us, 0,
    # 388.8 Gb/s; the margin allows 2 Gb/s).
    check(paced["complete"], "64:1 bbr-paced: a flow did not complete")
    check(paced["probe_p99_us"] < 21.4, f"64:1 bbr-paced: probe P99 {paced['probe_p99_us']} us, goal < 21.4")
    check(paced["pauses"] == 0, f"64:1 bbr-paced: {paced['pauses']} PFC pauses")
    check(paced["throughput_gbps"] >= 386, f"64:1 bbr-paced: {paced['throughput_gbps']:.1f} Gb/s, goal 388")
    print("seed001 cc OK")


if __name__ == "__main__":
    main()
