"""sf-lab command line: sf-lab run TOPOLOGY.json [--out DIR] [--duration S] [--build DIR].

Exit status: 0 the run completed and its numbers add up, 1 a process failed or
the numbers do not add up, 2 bad topology or arguments (nothing started),
130 interrupted (Ctrl-C; the report is still written)."""
import argparse
import datetime
import json
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import topology as tp  # noqa: E402


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="sf-lab", description="softfabric incast lab: run a topology of sf-switch, "
                                 "sf-pktio and sf-nic processes on this machine and write a report (docs/lab.md).")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a topology")
    r.add_argument("topology", help="topology JSON (docs/lab.md)")
    r.add_argument("--out", metavar="DIR", help="report directory (default ./out/lab-<name>-<timestamp>)")
    r.add_argument("--duration", type=float, metavar="S", help="override the topology's duration_s")
    r.add_argument("--build", default=os.path.join(tp.ROOT, "build"), metavar="DIR",
                   help="meson build directory (default: the repository's build/)")
    r.add_argument("--no-console", action="store_true", help="no live console (still the final summary)")
    r.add_argument("--keep-pcaps", action="store_true", help="keep the senders' pcaps in DIR/run/ (removed at the "
                   "end otherwise: they are made again from the topology)")
    c = sub.add_parser("check", help="validate a topology and print what would run; starts nothing")
    c.add_argument("topology")
    c.add_argument("--duration", type=float, metavar="S")
    return ap.parse_args(argv)


def describe(t):
    lines = [f"topology {t.name}: {len(t.switches)} switch(es), {len(t.hosts)} host(s), {len(t.links)} link(s), "
             f"{len(t.flows)} flow(s), up to {t.duration_s:g} s"]
    for s in t.switches.values():
        lines.append(f"  switch {s.name:<8} {os.path.relpath(s.config_path, tp.ROOT)}")
    for h in t.hosts.values():
        lines.append(f"  host   {h.name:<8} {h.kind:<5} {h.mac} {h.ip:<12} -> {h.switch}:{h.port} at {h.speed_gbps} Gb/s")
    for f in t.flows:
        what = f"{f.size_bytes:,} B" if f.size_bytes else f"{f.duration_s:g} s"
        lines.append(f"  flow   {f.name:<16} {f.type:<10} {f.src} -> {f.dst}, {what}, DSCP {f.dscp}"
                     + (f", start {f.start_ms} ms" if f.start_ms else ""))
    return "\n".join(lines)


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        t = tp.load(a.topology, duration_override=a.duration)
    except tp.TopologyError as e:
        print(f"sf-lab: {a.topology}: {e}", file=sys.stderr)
        return 2
    if a.cmd == "check":
        print(describe(t))
        return 0
    if os.geteuid() != 0:
        print("sf-lab: run as root (DPDK huge pages and memif sockets)", file=sys.stderr)
        return 2
    import launch  # noqa: E402  (after validation: nothing heavy before)
    import report  # noqa: E402
    from console import Console  # noqa: E402
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.abspath(a.out or os.path.join("out", f"lab-{t.name}-{stamp}"))
    con = None if a.no_console else Console()
    lab = launch.Lab(t, out, a.build, console=con)
    try:
        lab.plan.check_binaries()
    except launch.LabError as e:
        print(f"sf-lab: {e}", file=sys.stderr)
        return 2
    lab.started_utc = report.now_utc()

    def on_signal(signum, _frame):
        lab.interrupted = True
        if lab.t0_ns is None:
            raise KeyboardInterrupt()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        # A Ctrl-C from here on stops the run cleanly, even before lab.run().
        os.makedirs(out, exist_ok=True)
        print(describe(t), flush=True)
        print(f"  report   {out}", flush=True)
        rc, raw, clean = lab.run()
    except launch.LabError as e:  # before any process (binaries missing)
        print(f"sf-lab: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # during start-up: Lab.run's finally has stopped and cleaned up
        print("\nsf-lab: interrupted during start-up", file=sys.stderr)
        return 130
    if lab.error:
        print(f"\nsf-lab: {lab.error}", file=sys.stderr)
    if raw is None:
        if not a.keep_pcaps:
            for s in lab.plan.senders.values():
                if os.path.exists(s["pcap"]):
                    os.unlink(s["pcap"])
        if rc != 2:
            print("sf-lab: stopped before traffic started; no report", file=sys.stderr)
        print(cleanup_line(clean))
        return rc or 1
    res = report.build_results(lab, raw, clean)
    res["run"]["pcaps_kept"] = bool(a.keep_pcaps)
    if not a.keep_pcaps:
        for s in lab.plan.senders.values():
            if os.path.exists(s["pcap"]):
                os.unlink(s["pcap"])
    report.write_timeseries(lab, os.path.join(out, "timeseries.jsonl"), raw)
    try:
        import plots
        made = plots.make_all(lab, res, out, raw)
    except ImportError as e:
        print(f"sf-lab: no plots: {e} (python3-matplotlib)", file=sys.stderr)
        made = []
    lat = res["latency"]
    res["latency"] = {k: v for k, v in lat.items() if k != "ports"}
    res["latency"]["ports"] = {k: {kk: vv for kk, vv in v.items() if kk != "values_us"} for k, v in lat["ports"].items()}
    res["plots"] = [n for n, _ in made]
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=2)
    report.write_markdown(lab, res, made, os.path.join(out, "report.md"), con.history if con else [])
    summary(res, out)
    c = res["conservation"]
    if rc == 0 and c.get("applies") and not c.get("ok"):
        print("sf-lab: the numbers do not add up (see results.json conservation)", file=sys.stderr)
        rc = 1
    if clean["still_running"] or clean["still_present"]:
        rc = rc or 1
    bad = {n: st for n, st in clean["exit_status"].items() if st not in (0, None)}
    if rc == 0 and bad:
        print(f"sf-lab: processes exited with an error: {bad} (logs in {os.path.join(out, 'logs')})",
              file=sys.stderr)
        rc = 1
    return rc


def cleanup_line(clean):
    if clean["still_running"] or clean["still_present"]:
        return (f"cleanup: STILL PRESENT: pids {clean['still_running']}, files {clean['still_present']}")
    extra = f"; removed what killed processes left: {', '.join(clean['removed_leftovers'])}" \
        if clean["removed_leftovers"] else ""
    extra += f" (removed {len(clean['removed_runtime_dirs'])} DPDK runtime dirs EAL leaves at exit)" \
        if clean.get("removed_runtime_dirs") else ""
    return (f"cleanup: all {len(clean['pids'])} processes stopped, no huge page files, runtime dirs or memif "
            f"sockets left{extra}")


def summary(res, out):
    print("")
    print(f"Flows ({res['run']['stop_reason']}, {res['run']['traffic_s']:.1f} s):")
    print(f"  {'flow':<18} {'src -> dst':<14} {'sent B':>12} {'received B':>12} {'lost':>7} {'Gb/s':>6} {'done s':>7}")
    for f in res["flows"]:
        done = f"{f['completion_s']:.3f}" if f.get("completion_s") is not None else "-"
        print(f"  {f['name']:<18} {f['src'] + ' -> ' + f['dst']:<14} {f.get('bytes_sent', 0):>12,} "
              f"{f.get('bytes_received', 0) or 0:>12,} {f.get('frames_lost', 0) or 0:>7,} "
              f"{f.get('goodput_gbps') or 0:>6.2f} {done:>7}")
    tot = res["totals"]
    print(f"  ECN marks {tot['ecn_marked']:,}  CNPs {tot['cnp_sent']:,}/{tot['cnp_received']:,}  "
          f"PFC pauses sent {tot['pfc_pause_sent']:,} received {tot['pfc_pause_received']:,}  drops {tot['dropped']:,}")
    for k, v in res["latency"]["ports"].items():
        print(f"  queueing delay {k}: p50 {v['p50_us']:.0f} us, p99 {v['p99_us']:.0f} us, max {v['max_us']:.0f} us")
    c = res["conservation"]
    if c.get("applies"):
        print(f"  conservation: {c.get('equation', c.get('why'))}")
    print(cleanup_line(res["processes"]))
    print(f"report: {os.path.join(out, 'report.md')} (results.json, timeseries.jsonl, "
          f"{', '.join(res['plots'])})")


if __name__ == "__main__":
    sys.exit(main())
