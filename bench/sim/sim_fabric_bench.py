#!/usr/bin/python3
"""sim_fabric: sf-sim at scale (issue 14 section 4), one JSON line per case.

(a) the N:1 incast grid at 400G, 4 KiB MTU, 1 us links through one switch
    (seed 001's 65-port switch config): N = 8, 32, 64 senders x 2 MiB and
    64 KiB each, cc none and dcqcn-nvidia. Figures: completion / ideal
    (ideal = N x size x 8 / 400 Gb/s), the hot port's max queue (watermark)
    and the PFC pauses it sent, events/s, wall seconds per virtual ms, peak
    RSS, setup seconds.
(b) a two-tier fabric of P planes (sf-lab gen --planes P --traffic
    permutation: a random permutation of the hosts drawn from --seed, one
    1 MiB RC flow per host, host i's on plane i mod P), at the host count
    given (--hosts; the issue's goal is 1,024 x 8 planes).

Each case runs sf-lab run --sim once (the report's figures) and sf-sim
--timing on the plan it wrote (the cost figures), --rounds times. With
--ref REF_SF_SIM (another build, e.g. main's) every round runs the
reference and then SF_SIM on the same plan (interleaved, so load drifts hit
both alike); each line then carries the reference's medians (ref_*) and
ratio = SF_SIM's median / the reference's for the case's unit, and
ratio_loop_cpu = the same for the event loop's events per CPU-second (steady
under load, where wall times swing), and says whether the two gave the same
trace_hash. Without --ref, ref/ratio are
against the goals: setup 0.5 s and 200 MB RSS for the 64:1 incast, 2 M
events/s and 8 GB for (b).

--threads N runs SF_SIM with sf-sim --threads N (the partitioned engine,
docs/sf-sim.md "Threads"), --ref-threads M the reference so; --ref may name
the same binary to set the default engine against the partitioned one (their
trace_hash differ by design: another order of equal-time events). With
threads the loop's CPU time is the process's (every thread), so
events_per_s_loop_cpu is then per CPU-second of all of them and
events_per_s_loop (wall) is the speed.

Usage: sim_fabric_bench.py SF_SIM [--ref REF_SF_SIM] [--rounds N] [--grid 8,32,64]
       [--hosts 1024] [--planes 8] [--seed 1] [--no-grid] [--no-fabric] [--keep DIR]
       [--threads N] [--ref-threads M]
"""
import statistics
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SF_LAB = os.path.join(SRC, "tools", "sf-lab")
SEED001 = os.path.join(SRC, "config", "topologies", "seed001-incast-64to1.json")


def line(case, **kv):
    print(json.dumps({"bench": "sim_fabric", "case": case, **kv}), flush=True)


def incast_topology(n, size, cc):
    t = json.load(open(SEED001))
    t = copy.deepcopy(t)
    t["name"] = f"incast-{n}to1-{size}-{cc}"
    keep = {f"s{i}" for i in range(n)} | {"r0", "sw0"}
    t["nodes"] = {k: v for k, v in t["nodes"].items() if k in keep}
    for k, v in t["nodes"].items():
        if v.get("kind") == "nic":
            v["cc"] = cc
    t["links"] = [dict(l, delay_ns=1000) for l in t["links"] if l["a"] in keep]
    w = t["workloads"][0]
    w["senders"] = [f"s{i}" for i in range(n)]
    w["size_bytes"] = size
    w["message_bytes"] = min(size, 65536)
    t["sim"]["run_limit_s"] = 1.0
    t["description"] = f"sim_fabric: {n}:1 incast, {size} B per sender, cc {cc}"
    return t


THREADS = {"mine": None, "ref": None}  # sf-sim --threads of SF_SIM and of the reference (None: not given)


def timed(sf_sim, plan, out, threads=None):
    """One sf-sim --timing run: (summary, timing)."""
    extra = ["--threads", str(threads)] if threads else []
    s = subprocess.run([sf_sim, plan, "--out", out, "--timing", *extra], capture_output=True, text=True, timeout=7200)
    lines = s.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(f"{sf_sim} {plan}: exit {s.returncode}: {s.stderr[-2000:]}")
    summary = json.loads(lines[-1])
    timing = json.loads([x for x in s.stderr.splitlines() if x.startswith("{")][-1])
    return summary, timing


def run_case(sf_sim, topo_path, out, extra=(), ref=None, rounds=1):
    """sf-lab run --sim (report), then sf-sim --timing on its plan (cost),
    `rounds` times, the reference first in each round."""
    r = subprocess.run([sys.executable, SF_LAB, "run", "--sim", topo_path, "--out", out,
                        "--build", os.path.dirname(os.path.dirname(os.path.dirname(sf_sim))), *extra],
                       capture_output=True, text=True, timeout=7200)
    res_path = os.path.join(out, "results.json")
    if not os.path.exists(res_path):
        raise RuntimeError(f"sf-lab run --sim {topo_path}: exit {r.returncode}: {r.stderr[-2000:]}")
    res = json.load(open(res_path))
    plan = os.path.join(out, "run", "sim-plan.json")
    mine, refs = [], []
    for _ in range(rounds):
        if ref:
            refs.append(timed(ref, plan, os.path.join(out, "timing-ref"), THREADS["ref"]))
        mine.append(timed(sf_sim, plan, os.path.join(out, "timing"), THREADS["mine"]))
    return res, mine, refs


def cost(runs):
    """Medians over the rounds of one binary's (summary, timing) pairs."""
    summary = runs[0][0]
    vms = summary["end_s"] * 1e3
    med = lambda k: statistics.median(t[k] for _, t in runs)  # noqa: E731
    run_s, setup_s, rss = med("run_s"), med("setup_s"), med("peak_rss_mb")
    split = {k: round(statistics.median(t.get("setup_split_s", {}).get(k, 0) for _, t in runs), 3)
             for k in ("plan", "eal", "pool", "nodes")}
    loop_s = statistics.median(t.get("run_split_s", {}).get("events", run_s) for _, t in runs)
    loop_cpu_s = statistics.median(t.get("events_cpu_s", 0) for _, t in runs)
    return {"events": summary["events"],
            "events_per_s": round(summary["events"] / max(run_s, 1e-9)),
            # The simulator's event loop alone (sf-sim --timing run_split_s; no samples, no reports).
            "events_per_s_loop": round(summary["events"] / max(loop_s, 1e-9)),
            # The same per second of the loop's CPU time (sf-sim --timing events_cpu_s; None from an
            # older sf-sim): steadier than wall time on a loaded machine.
            "events_per_s_loop_cpu": (round(summary["events"] / max(loop_cpu_s, 1e-9)) if loop_cpu_s else None),
            "wall_s_per_virtual_ms": round(run_s / vms, 4) if vms > 0 else None,
            "setup_s": round(setup_s, 3), "setup_s_max": round(max(t["setup_s"] for _, t in runs), 3),
            "setup_split_s": split, "peak_rss_mb": round(rss, 1), "rounds": len(runs),
            "mbufs_peak": summary["mbufs"]["peak_in_use"], "mbufs_pool": summary["mbufs"]["pool"],
            "alloc_failures": summary["mbufs"]["alloc_failures"], "trace_hash": summary["trace_hash"],
            "threads": summary.get("threads", 0)}


def with_ref(kv, c, refs, unit, goal):
    """The line's ref/ratio: against the reference build's medians if run, else the goal."""
    if refs:
        rc = cost(refs)
        kv.update({"unit": unit, "value": c[unit], "ref": rc[unit], "ratio": round(c[unit] / max(rc[unit], 1e-9), 3),
                   "ref_setup_s": rc["setup_s"], "ref_events_per_s": rc["events_per_s"],
                   "ref_peak_rss_mb": rc["peak_rss_mb"], "ref_events": rc["events"], "ref_threads": rc["threads"],
                   "ref_events_per_s_loop": rc["events_per_s_loop"],
                   "ratio_loop": round(c["events_per_s_loop"] / max(rc["events_per_s_loop"], 1e-9), 3),
                   # The event loop per CPU-second, both builds (steadier than wall time under load).
                   "ref_events_per_s_loop_cpu": rc["events_per_s_loop_cpu"],
                   "ratio_loop_cpu": (round(c["events_per_s_loop_cpu"] / rc["events_per_s_loop_cpu"], 3)
                                      if c["events_per_s_loop_cpu"] and rc["events_per_s_loop_cpu"] else None),
                   "same_trace_hash": rc["trace_hash"] == c["trace_hash"] and rc["events"] == c["events"]})
    else:
        kv.update({"unit": unit, "value": c[unit], "ref": goal, "ratio": round(c[unit] / goal, 3)})
    return kv


def grid(sf_sim, ns, d, ref=None, rounds=1):
    for n in ns:
        for size in (2 * 1024 * 1024, 65536):
            for cc in ("none", "dcqcn-nvidia"):
                t = incast_topology(n, size, cc)
                tp = os.path.join(d, t["name"] + ".json")
                # The topology names its switch config relative to config/topologies/.
                t["nodes"]["sw0"]["config"] = os.path.join(SRC, "config", "switch", "seed001-incast-65port.json")
                json.dump(t, open(tp, "w"))
                res, mine, refs = run_case(sf_sim, tp, os.path.join(d, t["name"]), ref=ref, rounds=rounds)
                summary = mine[0][0]
                flows = res["flows"]
                done = max(f.get("completion_s") or 0 for f in flows)
                ideal = n * size * 8 / 400e9
                hot = [p for p in res["ports"] if p["peer"] == "r0"][0]
                c = cost(mine)
                kv = {"senders": n, "size_bytes": size, "cc": cc, "finished": summary["finished"],
                      "completion_s": done, "ideal_s": ideal, "completion_over_ideal": round(done / ideal, 3),
                      "hot_port_max_queue_bytes": hot.get("watermark_bytes"),
                      "hot_port_pfc_pauses_sent": hot.get("pfc_pause_sent"),
                      "pfc_pauses_total": res["totals"].get("pfc_pause_sent"), **c}
                if n == 64 or refs:  # the goals: setup < 0.5 s, RSS < 200 MB for the 65-node incast
                    with_ref(kv, c, refs, "setup_s", 0.5)
                    kv.update({"rss_goal_mb": 200, "rss_over_goal": round(c["peak_rss_mb"] / 200, 3)})
                line(f"incast_{n}to1_{size}_{cc}", **kv)


def fabric(sf_sim, hosts, planes, seed, d, ref=None, rounds=1):
    name = f"fabric-{hosts}h-{planes}p"
    g = os.path.join(d, name)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, SF_LAB, "gen", "--out", g, "--name", name, "--tiers", "2",
                        "--hosts", str(hosts), "--planes", str(planes), "--speed-gbps", "400",
                        "--delay-ns", "1000", "--traffic", "permutation", "--seed", str(seed),
                        "--size", str(1 << 20)],
                       capture_output=True, text=True, timeout=600)
    gen_s = time.monotonic() - t0
    if r.returncode != 0:
        line(f"fabric_{hosts}h_{planes}p", error=f"sf-lab gen: {r.stderr.strip()[-500:]}")
        return
    try:
        # A time-series sample of every switch every 100 virtual us (10 us would sample more than it simulates).
        res, mine, refs = run_case(sf_sim, os.path.join(g, name + ".json"), os.path.join(d, name + "-out"),
                                   ("--ts-period-us", "100", "--run-limit-s", "1"), ref=ref, rounds=rounds)
    except Exception as e:  # noqa: BLE001 - a case that does not run is a line, not a crash
        line(f"fabric_{hosts}h_{planes}p", error=str(e)[-800:])
        return
    c = cost(mine)
    summary = mine[0][0]
    flows = res["flows"]
    kv = dict(hosts=hosts, planes=planes, seed=seed, flows=len(flows), switch_ports=len(res.get("ports", [])),
              finished=summary["finished"], virtual_s=summary["end_s"], gen_s=round(gen_s, 2), **c)
    with_ref(kv, c, refs, "events_per_s", 2e6)
    kv.update({"rss_goal_mb": 8192, "rss_over_goal": round(c["peak_rss_mb"] / 8192, 3)})
    line(f"fabric_{hosts}h_{planes}p", **kv)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sf_sim")
    ap.add_argument("--grid", default="8,32,64")
    ap.add_argument("--hosts", type=int, default=1024)
    ap.add_argument("--planes", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1, help="(b): the permutation's draw")
    ap.add_argument("--ref", help="a reference sf-sim (another build) run on the same plans, interleaved")
    ap.add_argument("--rounds", type=int, default=1, help="timing runs per binary and case (medians)")
    ap.add_argument("--no-grid", action="store_true")
    ap.add_argument("--no-fabric", action="store_true")
    ap.add_argument("--keep", help="keep the runs in this directory")
    ap.add_argument("--threads", type=int, help="sf-sim --threads for SF_SIM (the partitioned engine)")
    ap.add_argument("--ref-threads", type=int, help="sf-sim --threads for the reference")
    a = ap.parse_args()
    THREADS["mine"], THREADS["ref"] = a.threads, a.ref_threads
    d = a.keep or tempfile.mkdtemp(prefix="sim-fabric-")
    os.makedirs(d, exist_ok=True)
    if not a.no_grid:
        grid(a.sf_sim, [int(x) for x in a.grid.split(",")], d, a.ref, a.rounds)
    if not a.no_fabric:
        fabric(a.sf_sim, a.hosts, a.planes, a.seed, d, a.ref, a.rounds)
    if not a.keep:
        subprocess.run(["rm", "-rf", d])
    return 0


if __name__ == "__main__":
    sys.exit(main())
