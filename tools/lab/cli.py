"""sf-lab command line: sf-lab run TOPOLOGY.json [--out DIR] [--duration S] [--build DIR];
sf-lab sweep SPEC.json (sweep.py).

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
    r.add_argument("--sim", action="store_true", help="run in virtual time (build/tools/sf-sim/sf-sim): nic hosts only, "
                   "any link speed, deterministic; times in virtual seconds (docs/lab.md \"Virtual time\")")
    r.add_argument("--seed", type=int, metavar="N", help="--sim: simulator seed (default: the topology's sim.seed, or 1)")
    r.add_argument("--speed-gbps", type=int, metavar="G", help="--sim: every link, switch port and nic host at G Gb/s "
                   "(default: the topology's sim.speed_gbps, or each link's own speed)")
    r.add_argument("--ts-period-us", type=int, metavar="US", help="--sim: time-series period in virtual us "
                   "(default: the topology's sim.ts_period_us, or ts_period_ms / 50 scaled by 1 Gb/s / the fastest link)")
    r.add_argument("--run-limit-s", type=float, metavar="S", help="--sim: virtual seconds at most (default: the "
                   "topology's sim.run_limit_s, or duration_s)")
    r.add_argument("--sim-threads", type=int, metavar="N", help="--sim: sf-sim --threads N, the partitioned engine "
                   "on N threads (1..256; the same run for any N; docs/sf-sim.md \"Threads\")")
    m = sub.add_parser("compare", help="two (or more) report directories side by side in one PNG: hot queue "
                       "with Kmin / Kmax and ECN marks, PFC pauses, goodput per receiver (docs/scenarios.md)")
    m.add_argument("dirs", nargs="+", metavar="DIR", help="report directories of sf-lab run (real or --sim)")
    m.add_argument("--out", required=True, metavar="PNG")
    m.add_argument("--labels", metavar="A,B", help="column titles (default: the topologies' names)")
    import sweep  # noqa: E402
    sweep.add_arguments(sub.add_parser("sweep", help="a grid of --sim runs (topologies x parameter values x seeds) "
                                       "in parallel or as a Slurm job array: one CSV and plots (docs/lab.md \"Sweeps\")"))
    c = sub.add_parser("check", help="validate a topology and print what would run; starts nothing")
    c.add_argument("topology")
    c.add_argument("--duration", type=float, metavar="S")
    c.add_argument("--verbose", action="store_true", help="list every node and flow of a large topology too")
    x = sub.add_parser("metrics", help="figures of a finished run the report does not give: goodput dip and "
                       "recovery around an event, first retransmission after it, QP errors, per-plane load "
                       "(docs/lab.md \"Metrics\"); one JSON object on stdout")
    x.add_argument("dir", metavar="DIR", help="a report directory of sf-lab run (real or --sim)")
    x.add_argument("--event-ms", type=float, metavar="T", help="the event's time (default: the run's first event)")
    x.add_argument("--window-us", type=float, default=10.0, metavar="W", help="goodput window (default 10 us)")
    x.add_argument("--flows", default="", metavar="PREFIX", help="only flows whose name starts with PREFIX")
    add_gen_parser(sub)
    return ap.parse_args(argv)


def add_gen_parser(sub):
    """sf-lab gen: a fabric's topology and switch configs (tools/lab/gen.py)."""
    import gen  # noqa: E402
    g = sub.add_parser("gen", help="write a Clos / leaf-spine / multi-plane fabric: a topology and one switch "
                       "config per switch (docs/lab.md \"Generated fabrics\")")
    g.add_argument("--out", required=True, metavar="DIR", help="writes DIR/NAME.json and DIR/switch/<switch>.json")
    g.add_argument("--force", action="store_true", help="replace what a non-empty DIR holds")
    g.add_argument("--name", default="fabric", help="topology name (default fabric)")
    g.add_argument("--tiers", type=int, default=2, help="2: leaf-spine; 3: pods of leaves and spines under cores")
    g.add_argument("--radix", type=int, default=64, help="ports per switch (default 64)")
    g.add_argument("--hosts-per-leaf", type=int, default=0, metavar="H",
                   help="default: the most the radix allows at the oversubscription")
    g.add_argument("--oversub", default="1", metavar="X[,Y]", help="down:up bandwidth ratio of the leaves "
                   "(and the spines of a 3-tier fabric); default 1 (full bisection)")
    g.add_argument("--leaves", type=int, default=0, help="2 tiers: leaves (default: the spine radix allows); "
                   "3 tiers: leaves per pod")
    g.add_argument("--spines", type=int, default=0, help="2 tiers: spines; 3 tiers: spines per pod (default: one "
                   "per leaf uplink; fewer spines take parallel links)")
    g.add_argument("--pods", type=int, default=0, help="3 tiers: pods (default: the radix)")
    g.add_argument("--hosts", type=int, default=0, help="2 tiers: total hosts instead of --leaves")
    g.add_argument("--planes", type=int, default=1, help="P parallel planes; every host has P ports, one per plane")
    g.add_argument("--speed-gbps", default="100", metavar="A[,B[,C]]",
                   help="link speeds: host links, leaf-spine, spine-core (the last repeats)")
    g.add_argument("--delay-ns", default="1000", metavar="A[,B[,C]]",
                   help="propagation delays of the same tiers, in virtual time (sf-sim)")
    g.add_argument("--profile", default="lossless", choices=sorted(gen.PROFILES),
                   help="buffers / QoS: " + "; ".join(f"{k}: {v}" for k, v in gen.PROFILES.items()))
    g.add_argument("--host-kind", default="nic", choices=("nic", "pktio"))
    g.add_argument("--traffic", default="pair", choices=gen.TRAFFIC,
                   help="pair: first host -> last; shift: host i -> i + hosts-per-leaf; incast: hosts off h0's "
                        "leaf -> h0 (one set of flows per plane); permutation: host i -> perm(i), a random "
                        "permutation drawn from --seed without fixed points, one flow per host, host i's on plane "
                        "i mod P")
    g.add_argument("--seed", type=int, default=1, help="the draw of --traffic permutation (default 1)")
    g.add_argument("--incast-senders", type=int, default=0, metavar="N")
    g.add_argument("--size", default="1MiB", metavar="BYTES", help="bytes per flow (default 1MiB)")
    g.add_argument("--qps", type=int, default=1, help="QPs per nic flow (their UDP source ports spread over ECMP)")
    g.add_argument("--cc", default="dcqcn-nvidia", help="nic hosts' congestion control (their RC flows)")
    g.add_argument("--transport", default="rc", help="nic flows: rc (one flow per plane) or mrc (one flow per "
                   "pair spraying over every plane; docs/mrc.md)")
    g.add_argument("--ev-mode", default="udp_sport", help="MRC flows' entropy: udp_sport (the EV in the UDP source "
                   "port, ECMP picks the path) or srv6 (every host port gets an IPv6 address, the flows' QPs source-"
                   "route each packet over the uSID path of its EV, derived from the SRV6 tables; docs/lab.md)")
    g.add_argument("--duration", type=float, default=10.0, metavar="S", help="topology duration_s")
    g.add_argument("--mmu-size", default="32MiB", metavar="BYTES", help="every switch's buffer (default 32MiB); "
                   "the profile's pools scale with it. Smaller buffers take fewer huge pages in real time")


def _numbers(text, opt, conv):
    try:
        return [conv(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"{opt} '{text}': want comma-separated numbers") from None


def run_gen(a):
    """sf-lab gen: exit 0 written, 2 bad parameters (nothing written)."""
    import gen  # noqa: E402
    try:
        p = gen.Params(name=a.name, tiers=a.tiers, radix=a.radix, hosts_per_leaf=a.hosts_per_leaf,
                       oversub=_numbers(a.oversub, "--oversub", float), leaves=a.leaves, spines=a.spines,
                       pods=a.pods, hosts=a.hosts, planes=a.planes,
                       speeds=_numbers(a.speed_gbps, "--speed-gbps", float),
                       delays=_numbers(a.delay_ns, "--delay-ns", float), profile=a.profile, host_kind=a.host_kind,
                       traffic=a.traffic, incast_senders=a.incast_senders,
                       size_bytes=tp.parse_bytes(a.size, "--size"), qps=a.qps, cc=a.cc, transport=a.transport,
                       ev_mode=a.ev_mode, duration_s=a.duration, seed=a.seed,
                       mmu_bytes=tp.parse_bytes(a.mmu_size, "--mmu-size"))
        for opt in ("radix", "hosts_per_leaf", "leaves", "spines", "pods", "hosts", "incast_senders"):
            if getattr(a, opt) < 0:
                raise gen.GenError(f"--{opt.replace('_', '-')} {getattr(a, opt)}: must not be negative")
        fab = gen.plan(p)
        files = gen.render(fab)
        path = gen.write(files, a.out, a.force)
    except (gen.GenError, tp.TopologyError, ValueError) as e:
        print(f"sf-lab: gen: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"sf-lab: gen: cannot write {a.out}: {e.strerror} ({e.filename})", file=sys.stderr)
        return 1
    print(f"sf-lab gen: {len(fab.switches)} switches, {len(fab.hosts)} hosts, {len(fab.links)} links -> {path} "
          f"(+ {len(files) - 1} switch configs in {os.path.join(a.out, 'switch')})")
    return 0


DESCRIBE_MAX_NODES = 64  # a larger topology lists its nodes and flows with check --verbose only


def describe(t, full=False):
    lines = [f"topology {t.name}: {len(t.switches)} switch(es), {len(t.hosts)} host(s), {len(t.links)} link(s), "
             f"{len(t.flows)} flow(s), up to {t.duration_s:g} s"]
    if not full and len(t.switches) + len(t.hosts) > DESCRIBE_MAX_NODES:
        lines.append(f"  ({len(t.switches) + len(t.hosts)} nodes: sf-lab check --verbose lists them and the flows)")
        return "\n".join(lines)
    for s in t.switches.values():
        shards = f"  {max(s.shard_map) + 1} shards (--shard-map {','.join(map(str, s.shard_map))})" if s.shard_map else ""
        lines.append(f"  switch {s.name:<8} {os.path.relpath(s.config_path, tp.ROOT)}{shards}")
    for h in t.hosts.values():
        for hp in h.ports:
            name = h.name if not h.multi else f"{h.name}:p{hp.index}"
            gw = f" via gateway {hp.gateway_mac}" if hp.gateway_mac else ""
            lines.append(f"  host   {name:<8} {h.kind:<5} {hp.mac} {hp.ip:<12} -> {hp.switch}:{hp.port} at "
                         f"{hp.speed_gbps} Gb/s{gw}")
    for f in t.flows:
        what = f"{f.size_bytes:,} B" if f.size_bytes else f"{f.duration_s:g} s"
        lines.append(f"  flow   {f.name:<16} {f.type:<10} {f.src} -> {f.dst}, {what}, DSCP {f.dscp}"
                     + (f", start {f.start_ms} ms" if f.start_ms else "") + (f", port {f.port}" if f.port > 1 else ""))
    for p in t.probes:
        lines.append(f"  probe  {p.name:<16} {p.test:<10} {p.src} -> {p.dst}, {p.size_bytes:,} B, one round trip per "
                     f"{tp.probe_interval_us(t, p):,} us at most, DSCP {p.dscp}, "
                     + (f"{p.duration_s:g} s" if p.duration_s else f"while process {t.hosts[p.src].process} sends")
                     + (f", start {p.start_ms} ms" if p.start_ms else ""))
    return "\n".join(lines)


def run_metrics(a):
    import metrics  # noqa: E402
    if not os.path.isfile(os.path.join(a.dir, "results.json")):
        print(f"sf-lab: metrics: {a.dir}: not a report directory (no results.json)", file=sys.stderr)
        return 2
    if a.window_us <= 0:
        print(f"sf-lab: metrics: --window-us {a.window_us:g}: must be positive", file=sys.stderr)
        return 2
    print(json.dumps(metrics.compute(a.dir, a.event_ms, a.window_us, a.flows), indent=1))
    return 0


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.cmd == "compare":
        return run_compare(a)
    if a.cmd == "sweep":
        import sweep  # noqa: E402
        return sweep.main(a)
    if a.cmd == "gen":
        return run_gen(a)
    if a.cmd == "metrics":
        return run_metrics(a)
    try:
        t = tp.load(a.topology, duration_override=a.duration)
    except tp.TopologyError as e:
        print(f"sf-lab: {a.topology}: {e}", file=sys.stderr)
        return 2
    if a.cmd == "check":
        import gen  # noqa: E402
        print(gen.summary(t))
        print(describe(t, full=a.verbose))
        return 0
    if a.sim:
        return run_sim(a, t)
    for opt in ("seed", "speed_gbps", "ts_period_us", "run_limit_s", "sim_threads"):
        if getattr(a, opt) is not None:
            print(f"sf-lab: --{opt.replace('_', '-')} applies to --sim runs only", file=sys.stderr)
            return 2
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
        lab.signal_name = signal.Signals(signum).name
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
    write_report(lab, res, raw, out, con.history if con else [])
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


def run_compare(a):
    """sf-lab compare DIR... --out PNG: exit 0 written, 2 a directory is not a report."""
    labels = a.labels.split(",") if a.labels else None
    if labels is not None and len(labels) != len(a.dirs):
        print(f"sf-lab: --labels names {len(labels)} columns for {len(a.dirs)} directories", file=sys.stderr)
        return 2
    for d in a.dirs:
        if not os.path.isfile(os.path.join(d, "results.json")):
            print(f"sf-lab: {d}: not a report directory (no results.json)", file=sys.stderr)
            return 2
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "demo"))  # plots reads tools/demo/series.py
    import plots
    try:
        summary_ = plots.compare(a.dirs, a.out, labels)
    except (OSError, ValueError, KeyError) as e:
        print(f"sf-lab: compare: {e}", file=sys.stderr)
        return 2
    for s in summary_:
        print(f"  {s['label']}: ECN marks {s['ecn_marked']:,}, CNPs {s['cnp_sent']:,}, PFC pauses sent "
              f"{s['pfc_pause_sent']:,}, drops {s['dropped']:,}, deepest queue {s['hot_queue_max_bytes']:,} B")
    print(f"compare: {a.out}")
    return 0


def run_sim(a, t):
    """sf-lab run --sim: plan, sf-sim, then the real run's report from its files."""
    import sim  # noqa: E402
    try:
        sim.check_sim_topology(t)
    except sim.SimError as e:
        print(f"sf-lab: {a.topology}: {e}", file=sys.stderr)
        return 2
    for opt in ("keep_pcaps", "no_console"):
        if getattr(a, opt):
            print(f"sf-lab: --{opt.replace('_', '-')} applies to real-time runs only (--sim has no pcaps and no "
                  "console)", file=sys.stderr)
            return 2
    speed = a.speed_gbps if a.speed_gbps is not None else t.sim.get("speed_gbps", 0)
    if speed or a.speed_gbps is not None:  # an explicit 0 is refused, not read as "unset"
        if not tp.MIN_SPEED_GBPS <= speed <= tp.MAX_SPEED_GBPS:
            print(f"sf-lab: --speed-gbps {speed}: want a whole number of Gb/s in [{tp.MIN_SPEED_GBPS}, "
                  f"{tp.MAX_SPEED_GBPS}]", file=sys.stderr)
            return 2
        sim.apply_speed(t, speed)
    seed = a.seed if a.seed is not None else t.sim.get("seed", 1)
    # A flag given wins even when it is 0, so that 0 is refused below instead
    # of silently falling back to the default. (The topology's sim.* keys are
    # 0 when absent: the loader's "unset".)
    period_us = next((v for v in (a.ts_period_us, t.sim.get("ts_period_us") or None) if v is not None),
                     max(1, t.ts_period_ms * 1000 // (50 * max(l.speed_gbps for l in t.links))))
    limit_s = next((v for v in (a.run_limit_s, t.sim.get("run_limit_s") or None) if v is not None), t.duration_s)
    if seed < 0 or period_us <= 0 or limit_s <= 0:
        print("sf-lab: --seed, --ts-period-us and --run-limit-s must be positive", file=sys.stderr)
        return 2
    if a.sim_threads is not None and not 1 <= a.sim_threads <= 256:
        print(f"sf-lab: --sim-threads {a.sim_threads}: must be within [1, 256]", file=sys.stderr)
        return 2
    import report  # noqa: E402
    import launch  # noqa: E402
    out = os.path.abspath(a.out or os.path.join("out", f"sim-{t.name}-seed{seed}"))
    lab = sim.SimLab(t, out, a.build, seed, period_us, limit_s, threads=a.sim_threads)
    try:
        lab.plan.check_binaries()
    except launch.LabError as e:
        print(f"sf-lab: {e}", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    first, rest = describe(t).split("\n", 1)
    print(first.rsplit(", up to ", 1)[0] + f", up to {limit_s:g} s of virtual time\n" + rest, flush=True)
    print(f"  sim      seed {seed}, time series every {period_us} us, links "
          f"{', '.join(sorted({str(l.speed_gbps) for l in t.links}))} Gb/s", flush=True)
    print(f"  report   {out}", flush=True)
    rc, raw, clean = lab.run()
    if lab.error:
        print(f"sf-lab: {lab.error}", file=sys.stderr)
    if raw is None:
        return rc or 1
    res = report.build_results(lab, raw, clean)
    res["run"].update({"virtual_time": True, "traffic_s": lab.sim["end_s"], "seed": seed,
                       "ts_period_us": period_us, "run_limit_s": limit_s,
                       "sim": {k: lab.sim.get(k) for k in ("finished", "end_s", "events", "trace_hash",
                                                            "failed_workloads")}})
    write_report(lab, res, raw, out, [])
    return rc


def write_report(lab, res, raw, out, history):
    """The report directory of a finished run (real or virtual time): the time
    series, the plots, results.json (without the per-sample latency values)
    and report.md; then the console summary."""
    import report  # noqa: E402
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
    report.write_markdown(lab, res, made, os.path.join(out, "report.md"), history)
    summary(res, out)


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
    if res["run"].get("virtual_time"):
        print(f"Flows ({res['run']['stop_reason']}, {res['run']['traffic_s'] * 1e3:.3f} ms of virtual time):")
    else:
        print(f"Flows ({res['run']['stop_reason']}, {res['run']['traffic_s']:.1f} s):")
    virtual = res["run"].get("virtual_time")
    print(f"  {'flow':<18} {'src -> dst':<14} {'sent B':>12} {'received B':>12} {'lost':>7} {'Gb/s':>6} "
          f"{'done ms' if virtual else 'done s':>7}")
    for f in res["flows"]:
        done = "-" if f.get("completion_s") is None else \
            (f"{f['completion_s'] * 1e3:.3f}" if virtual else f"{f['completion_s']:.3f}")
        print(f"  {f['name']:<18} {f['src'] + ' -> ' + f['dst']:<14} {f.get('bytes_sent', 0):>12,} "
              f"{f.get('bytes_received', 0) or 0:>12,} {f.get('frames_lost', 0) or 0:>7,} "
              f"{f.get('goodput_gbps') or 0:>6.2f} {done:>7}")
    tot = res["totals"]
    print(f"  ECN marks {tot['ecn_marked']:,}  CNPs {tot['cnp_sent']:,}/{tot['cnp_received']:,}  "
          f"PFC pauses sent {tot['pfc_pause_sent']:,} received {tot['pfc_pause_received']:,}  drops {tot['dropped']:,}")
    for p in res.get("probes", []):
        for what, st in (("during flows", p["during_flows"]), ("idle", p["idle"])):
            if st:
                print(f"  latency probe {p['name']} ({p['test']} {p['src']} -> {p['dst']}) round trip {what}: "
                      f"p50 {st['p50']:,.1f} us, p99 {st['p99']:,.1f} us, max {st['max']:,.1f} us ({st['samples']:,})")
    for k, v in res["latency"]["ports"].items():
        print(f"  queueing delay (estimate) {k}: p50 {v['p50_us']:.0f} us, p99 {v['p99_us']:.0f} us, max {v['max_us']:.0f} us")
    c = res["conservation"]
    if c.get("applies"):
        print(f"  conservation: {c.get('equation', c.get('why'))}")
    if res["run"].get("virtual_time"):
        sm = res["run"]["sim"]
        print(f"  sf-sim: {sm['events']:,} events, trace hash {sm['trace_hash']}, seed {res['run']['seed']}")
    else:
        print(cleanup_line(res["processes"]))
    print(f"report: {os.path.join(out, 'report.md')} (results.json, timeseries.jsonl, "
          f"{', '.join(res['plots'])})")


if __name__ == "__main__":
    sys.exit(main())
