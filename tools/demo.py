#!/usr/bin/python3
"""softfabric demo: an 8:1 incast of RDMA WRITE bursts with DCQCN through sf-switch.

  ./dev demo [--quick] [--out DIR] [--no-console]     real time, 1 Gb/s links (~20 s; --quick ~5 s)
  ./dev demo --sim [--out DIR]                         seed 001's 64:1 incast at 400G in virtual time
  ./dev demo --switch-only [...]                       the first demo (pktio hosts, switch only)
  (or: tools/demo.py --build build ...)

The real-time demo runs sf-lab (tools/sf-lab, docs/lab.md) on
config/topologies/demo-rdma-incast.json: eight sf-nic hosts (one process)
RDMA-WRITE bursts in 64 KiB messages with DCQCN to one sf-nic receiver
(another process) through sf-switch with the seed-000 static lossless profile
on 9 ports, with a write_lat probe s0 -> r0 timing round trips through the
same queue. The live console shows the run; at the end a summary table
(goodput, the probe's measured latency p50/p99 per round, the queueing-delay
estimate, ECN marks, CNPs, PFC pauses) and the report path. --sim runs config/topologies/seed001-incast-64to1.json with
sf-lab run --sim. See docs/demo.md.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOPO = os.path.join(ROOT, "config", "topologies")
DEMOS = {"full": os.path.join(TOPO, "demo-rdma-incast.json"),
         "quick": os.path.join(TOPO, "demo-rdma-incast-quick.json"),
         "sim": os.path.join(TOPO, "seed001-incast-64to1.json")}
SEED001 = "seed 001 (DCQCN, 64:1 at 400G, real fabric): mean latency 48.2 us, P99 320.5 us, 1,482,900 PFC pauses/day"


def parse_args(argv):
    if "--switch-only" in argv:
        return None
    ap = argparse.ArgumentParser(prog="./dev demo", description="softfabric demo: 8:1 RDMA WRITE incast with DCQCN "
                                 "through sf-switch (docs/demo.md)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="meson build directory")
    ap.add_argument("--quick", action="store_true", help="a ~5 s variant (one smaller round)")
    ap.add_argument("--sim", action="store_true", help="seed 001's 64:1 incast at 400G in virtual time (sf-sim)")
    ap.add_argument("--out", metavar="DIR", help="report directory (default ./out/demo-<kind>-<timestamp>)")
    ap.add_argument("--no-console", action="store_true", help="no live console (real-time runs)")
    ap.add_argument("--switch-only", action="store_true", help="the first demo: pktio hosts, switch only")
    a = ap.parse_args(argv)
    if a.quick and a.sim:
        ap.error("--quick and --sim: pick one")
    return a


def fmt_us(v):
    return "-" if v is None else f"{v:,.1f}"


def summary(res, out, wall_s, kind):
    """The table: per incast round, goodput, completion and the probe's
    round trips during it (measured); the probe over the whole run and on the
    idle fabric; the receiver's queueing-delay estimate; ECN marks, CNPs, PFC
    pauses; the report path."""
    virtual = res["run"].get("virtual_time")
    t_unit = "virtual ms" if virtual else "s"
    scale = 1e3 if virtual else 1.0
    rounds = {}
    for f in res["flows"]:
        rounds.setdefault(f["workload"], []).append(f)
    probe = (res.get("probes") or [None])[0]
    per_round = (probe or {}).get("per_workload") or {}
    print("")
    head = (f"softfabric demo ({'virtual time, sf-sim' if virtual else 'real time'}): "
            f"{res['topology']['name']}, {len(res['flows'])} flows; wall time {wall_s:.1f} s"
            + (f", {res['run']['traffic_s'] * 1e3:.3f} ms of virtual time" if virtual else ""))
    print(head)
    print(f"  {'round':<10} {'senders':>7} {'delivered':>14} {'aggregate Gb/s':>15} {'per-flow Gb/s':>17} "
          f"{'done (' + t_unit + ')':>16}" + (f" {'probe RTT p50 / p99 us':>24}" if probe else ""))
    all_ok = True
    for name, fl in rounds.items():
        got = sum(f.get("bytes_received") or 0 for f in fl)
        done = [f["completion_s"] for f in fl if f.get("completion_s") is not None]
        gp = [f["goodput_gbps"] for f in fl if f.get("goodput_gbps") is not None]
        agg = got * 8 / max(done) / 1e9 if done and max(done) > 0 else 0.0
        all_ok &= all(f.get("complete") for f in fl)
        per = f"{min(gp):.3f}-{max(gp):.3f}" if gp else "-"
        lat = per_round.get(name)
        lat_s = f"{fmt_us(lat['p50'])} / {fmt_us(lat['p99'])}" if lat else "-"
        print(f"  {name:<10} {len(fl):>7} {got:>12,} B {agg:>15.3f} {per:>17} "
              f"{(max(done) * scale if done else 0):>16.3f}" + (f" {lat_s:>24}" if probe else ""))
    if probe:
        for what, st in (("during the incast", probe.get("during_flows")), ("idle fabric", probe.get("idle"))):
            if st:
                print(f"  latency (measured): probe {probe['test']} {probe['src']} -> {probe['dst']} round trip, "
                      f"{what}: p50 {fmt_us(st['p50'])} us, p99 {fmt_us(st['p99'])} us, max {fmt_us(st['max'])} us "
                      f"({st['samples']:,} round trip{'' if st['samples'] == 1 else 's'})")
    recv = {f["dst"] for f in res["flows"]}
    ports = {f"{h['switch']}:{h['port']}": n for n, h in res["hosts"].items() if n in recv}
    for k, v in res["latency"]["ports"].items():
        if k in ports:
            print(f"  queueing-delay estimate toward {ports[k]} at {k} (egress depth x 8 / line rate, per time-series "
                  f"sample): p50 {fmt_us(v['p50_us'])} us, p99 {fmt_us(v['p99_us'])} us, max {fmt_us(v['max_us'])} us")
    tot = res["totals"]
    sw_pfc_frames = sum(p.get("tx_pfc_frames", 0) for p in res["ports"])
    host_pfc_rx = sum(h.get("rx_pfc_frames", 0) for h in res["hosts"].values())
    print(f"  ECN marks {tot['ecn_marked']:,}   CNPs sent {tot['cnp_sent']:,} / received {tot['cnp_received']:,}   "
          f"drops {tot['dropped']:,}")
    print(f"  PFC pauses sent by the switch {tot['pfc_pause_sent']:,} (PFC frames with the resumes {sw_pfc_frames:,}; "
          f"received by the hosts {host_pfc_rx:,}), received by the switch {tot['pfc_pause_received']:,}")
    print(f"  every flow complete: {'yes' if all_ok else 'NO'}")
    if kind == "sim":
        print(f"  for comparison, {SEED001}")
    print(f"report: {os.path.join(out, 'report.md')}")
    print(f"plots:  {', '.join(os.path.join(out, p) for p in res.get('plots', []))}")


def _die_with_parent():
    """In the child: SIGTERM when the demo dies (even by SIGKILL), so sf-lab
    still stops its processes and cleans up."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def run_forwarding_signals(cmd):
    """Runs sf-lab and waits for it. SIGINT or SIGTERM sent to the demo (its
    own PID, or Ctrl-C to the whole group) is passed on to sf-lab, which
    stops its senders, drains, writes the report and removes what the run
    made; the demo waits for that and then prints the summary. sf-lab treats a
    second copy of the signal (Ctrl-C reaches both) the same as the first."""
    child = subprocess.Popen(cmd, preexec_fn=_die_with_parent)

    def forward(signum, _frame):
        if child.poll() is None:
            try:
                os.kill(child.pid, signum)  # our own child, by PID
            except ProcessLookupError:
                pass

    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return child.wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    a = parse_args(argv)
    if a is None:  # the first demo, unchanged
        rest = [x for x in argv if x != "--switch-only"]
        os.execv(sys.executable, [sys.executable, os.path.join(HERE, "demo", "switch_only.py")] + rest)
    kind = "sim" if a.sim else ("quick" if a.quick else "full")
    topo = DEMOS[kind]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = os.path.abspath(a.out or os.path.join("out", f"demo-{kind}-{stamp}"))
    cmd = [sys.executable, os.path.join(HERE, "sf-lab"), "run", topo, "--out", out, "--build", a.build]
    if a.sim:
        cmd.append("--sim")
    elif a.no_console:
        cmd.append("--no-console")
    print(f"demo: {' '.join(os.path.relpath(c) if c.startswith(ROOT) else c for c in cmd)}", flush=True)
    t0 = time.monotonic()
    rc = run_forwarding_signals(cmd)
    wall_s = time.monotonic() - t0
    path = os.path.join(out, "results.json")
    if not os.path.exists(path):
        print(f"demo: sf-lab exited {rc} and wrote no results (see {out}/logs)", file=sys.stderr)
        return rc or 1
    with open(path) as f:
        res = json.load(f)
    summary(res, out, wall_s, kind)
    return rc


if __name__ == "__main__":
    sys.exit(main())
