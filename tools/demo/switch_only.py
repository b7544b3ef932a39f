#!/usr/bin/python3
"""softfabric switch-only demo (the first demo): three RoCEv2 hosts congest one egress port.

  ./dev demo --switch-only [--duration S] [--quick] [--out DIR]
  (or: tools/demo/switch_only.py --build build ...)

Three memif "hosts" (sf-pktio fwd, each replaying a scapy-made pcap of RoCEv2
RDMA WRITEs, DSCP 26 + ECT(0), plus some DSCP 0 background frames) send
toward one receiver (sf-pktio sink) through sf-switch running the shipped
seed-000 profile (config/switch/seed000-static-lossless.json: DSCP 26 -> TC 3 ->
lossless queue 3 with WRED/ECN Kmin 120 KiB, Kmax 360 KiB, Pmax 20 %). The
receiver's port is shaped slower than the hosts together, so queue 3 builds
and the switch marks CE; since replayed pcaps do not slow down on ECN and
nothing pauses them (PFC), the lossless ingress PGs overflow their headroom.

Every second the console shows per-port rates, the queue depth, ECN marks and
drops; at the end a summary, and in the report directory the switch report,
the time series, a plot and summary.md. See docs/demo.md.
"""
import argparse
import datetime
import json
import os
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))  # tools/demo
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import procs  # noqa: E402
import series  # noqa: E402

PROFILE = os.path.join(ROOT, "config", "switch", "seed000-static-lossless.json")
RECEIVER_MAC = "02:5f:00:00:00:99"
RECEIVER_IP = "10.0.0.100"
ROCE_DSCP = 26
N_HOSTS = 3
TS_PERIOD_MS = 100
HOST_NICE = 10  # the switch (device under test) and the receiver get the CPU first
EAL = ["--no-pci", "--log-level", "*:warning"]


class DemoError(RuntimeError):
    pass


class Interrupted(Exception):
    pass


CONSOLE = []  # the per-second table, repeated in summary.md


def log(msg="", table=False):
    print(msg, flush=True)
    if table:
        CONSOLE.append(msg)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="demo.py",
        description="softfabric switch demo: three RoCEv2 hosts congest one sf-switch egress port "
                    "(seed-000 lossless profile); live console, then a report directory.",
        epilog="Outputs: DIR/switch-report.json, timeseries.jsonl, plot.png, summary.md (+ logs/). "
               "Needs root (huge pages, memif) and the built sf-switch and sf-pktio.")
    ap.add_argument("--build", default="build", metavar="DIR", help="meson build directory (default: build)")
    ap.add_argument("--duration", type=float, default=None, metavar="S",
                    help="seconds of traffic (default 20; 5 with --quick)")
    ap.add_argument("--quick", action="store_true", help="a 5 s smoke run")
    ap.add_argument("--out", default=None, metavar="DIR", help="report directory (default: ./out/demo-<timestamp>)")
    ap.add_argument("--host-gbps", type=float, default=1.0, metavar="GBPS",
                    help="shaped rate of each host (default 1.0)")
    ap.add_argument("--egress-gbps", type=int, default=1, metavar="N",
                    help="line rate of the receiver's switch port, whole Gb/s (default 1)")
    ap.add_argument("--keep-work", action="store_true", help="keep the work directory (pcaps, config)")
    ap.add_argument("--host-burst-kib", type=int, default=512, metavar="KIB",
                    help="token bucket of each host's shaper (default 512): a host the scheduler "
                         "held off the CPU catches up in a burst instead of losing its rate")
    a = ap.parse_args(argv)
    if a.duration is None:
        a.duration = 5.0 if a.quick else 20.0
    if a.duration <= 0 or a.host_gbps <= 0 or a.egress_gbps < 1 or a.host_burst_kib < 16:
        ap.error("--duration and --host-gbps must be > 0, --egress-gbps >= 1, --host-burst-kib >= 16")
    return a


# ---- configuration -------------------------------------------------------------


def lossless_queue(cfg):
    """Queue of DSCP 26 through the profile's maps (3 in seed 000)."""
    qos = cfg["PORT_QOS_MAP"]["global"]
    tc = cfg["DSCP_TO_TC_MAP"][qos["dscp_to_tc_map"]][str(ROCE_DSCP)]
    return int(cfg["TC_TO_QUEUE_MAP"][qos["tc_to_queue_map"]][tc])


def wred_of_queue(cfg, q):
    for key, v in cfg.get("QUEUE", {}).items():
        ports, _, qs = key.partition("|")
        lo, _, hi = qs.partition("-")
        if int(lo) <= q <= int(hi or lo) and "wred_profile" in v:
            w = cfg["WRED_PROFILE"][v["wred_profile"]]
            return (int(w["green_min_threshold"]), int(w["green_max_threshold"]),
                    int(w["green_drop_probability"]))
    return None


def make_switch_config(work, egress_gbps):
    """The shipped profile with memif server ports in `work`, the receiver's
    port shaped to egress_gbps and a static FDB entry for the receiver."""
    with open(PROFILE) as f:
        cfg = json.load(f)
    names = list(cfg["PORT"])
    if len(names) < N_HOSTS + 1:
        raise DemoError(f"{PROFILE}: needs {N_HOSTS + 1} ports, has {len(names)}")
    names = names[:N_HOSTS + 1]
    cfg["PORT"] = {n: cfg["PORT"][n] for n in names}
    sockets = {}
    for i, n in enumerate(names):
        sockets[n] = os.path.join(work, f"memif-{n}.sock")
        cfg["PORT"][n]["devargs"] = f"net_memif{i},role=server,id=0,socket={sockets[n]},socket-abstract=no"
    egress = names[N_HOSTS]
    cfg["PORT"][egress]["speed"] = egress_gbps
    cfg.setdefault("FDB", {})[RECEIVER_MAC] = {"port": egress, "type": "static"}
    path = os.path.join(work, "switch.json")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)
    return path, cfg, names[:N_HOSTS], egress, sockets


def eal_cpu_args():
    """Let every process float over all CPUs (EAL would otherwise pin each
    main lcore to the first CPU, all five processes on one core)."""
    cpus = sorted(os.sched_getaffinity(0))
    return ["--lcores", "0@(" + ",".join(map(str, cpus)) + ")"]


# ---- console ---------------------------------------------------------------------


def fmt_int(n):
    return f"{n:,}"


def kib(n):
    return f"{n / 1024:.0f}"


def bar(frac, width=20):
    frac = min(max(frac, 0.0), 1.0)
    n = int(round(frac * width))
    return "[" + "#" * n + "." * (width - n) + "]"


def zone(depth, kmin, kmax):
    if depth < kmin:
        return "<Kmin"
    if depth < kmax:
        return "marking"
    return ">Kmax"


class Console:
    def __init__(self, hosts, egress, queue, kmin, kmax, duration):
        self.hosts, self.egress, self.queue = hosts, egress, queue
        self.kmin, self.kmax, self.duration = kmin, kmax, duration

    PROG = 30  # "  12.0s [####################]"

    def header(self):
        n = len(self.hosts)
        g1 = " ".join(f"{f'h{i + 1}':>5}" for i in range(n)) + f" {'in':>5} {'out':>5}"
        g2 = " ".join(f"{'Gb/s':>5}" for _ in range(n + 2))
        q = f"queue {self.queue} depth KiB"
        log(table=True, msg=f"{'':{self.PROG}} {g1} | {q:^23} | {'ECN CE marks':^16} | {'drops':^15}")
        log(table=True, msg=f"{'    time  progress':<{self.PROG}} {g2} | {'now':>7} {'max':>7} {'zone':<7} | "
            f"{'/s':>7} {'total':>8} | {'/s':>6} {'total':>8}")

    def row(self, elapsed, a, b, window, label=None):
        """a, b: samples one interval apart; window: the samples in between (for the max depth)."""
        rates = [series.rate_gbps(a, b, p, "rx_bytes") for p in self.hosts]
        out = series.rate_gbps(a, b, self.egress, "tx_bytes")
        d_now = series.depth(b, self.egress, self.queue)
        d_max = max([series.depth(s, self.egress, self.queue) for s in window] + [d_now])
        dt = max(b["t_s"] - a["t_s"], 1e-9)
        mk = series.marks(b, self.egress) - series.marks(a, self.egress)
        dr = series.total_drops(b) - series.total_drops(a)
        prog = label if label is not None else f"{elapsed:6.1f}s {bar(elapsed / self.duration)}"
        g = " ".join(f"{r:5.2f}" for r in rates + [sum(rates), out])
        z = zone(d_max, self.kmin, self.kmax)
        log(table=True, msg=f"{prog:<{self.PROG}} {g} | {d_now / 1024:7.1f} {d_max / 1024:7.1f} {z:<7} | "
            f"{mk / dt:7.0f} {self.total_marks(b):8d} | {dr / dt:6.0f} {series.total_drops(b) - self.base_drops:8d}")

    def set_base(self, s):
        self.base_marks = series.marks(s, self.egress)
        self.base_drops = series.total_drops(s)

    def total_marks(self, s):
        return series.marks(s, self.egress) - self.base_marks


# ---- the run ---------------------------------------------------------------------


class Demo:
    def __init__(self, args):
        self.a = args
        self.build = os.path.abspath(args.build)
        self.sw_bin = os.path.join(self.build, "switch", "app", "sf-switch")
        self.pk_bin = os.path.join(self.build, "tools", "sf-pktio", "sf-pktio")
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.out = os.path.abspath(args.out or os.path.join("out", f"demo-{stamp}"))
        self.children = []
        self.switch = self.receiver = None
        self.host_procs = []
        self.work = None
        self.interrupted = False
        self.t_traffic = None  # monotonic time the hosts were all up

    # -- set-up --
    def check(self):
        for b in (self.sw_bin, self.pk_bin):
            if not os.access(b, os.X_OK):
                raise DemoError(f"{b} not found: build first (./dev build, or ninja -C {self.a.build} "
                                "switch/app/sf-switch tools/sf-pktio/sf-pktio)")
        if os.geteuid() != 0:
            raise DemoError("run as root (DPDK needs huge pages and the memif sockets)")

    def prepare(self):
        try:
            import pcapgen  # scapy is slow to import: only here
        except ImportError as e:
            raise DemoError(f"{e}: the demo needs python3-scapy (./dev setup installs it)") from e
        os.makedirs(self.out, exist_ok=True)
        self.logs = os.path.join(self.out, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.work = tempfile.mkdtemp(prefix="sf-demo-")
        self.cfg_path, self.cfg, self.host_ports, self.egress, self.sockets = make_switch_config(
            self.work, self.a.egress_gbps)
        shutil.copy(self.cfg_path, os.path.join(self.out, "switch-config.json"))
        self.queue = lossless_queue(self.cfg)
        w = wred_of_queue(self.cfg, self.queue)
        self.kmin, self.kmax, self.pmax = w if w else (0, 0, 0)
        self.pcaps = []
        for h in range(1, N_HOSTS + 1):
            info = pcapgen.write_host_pcap(os.path.join(self.work, f"host{h}.pcap"), h, RECEIVER_MAC, RECEIVER_IP)
            self.pcaps.append(info)
        self.ts_path = os.path.join(self.out, "timeseries.jsonl")
        self.report_path = os.path.join(self.out, "switch-report.json")
        for p in (self.ts_path, self.report_path):
            if os.path.exists(p):
                os.unlink(p)

    def start(self):
        safety = str(int(self.a.duration + 60))  # the tools stop themselves if all else fails
        cpu = eal_cpu_args()
        ready = os.path.join(self.work, "switch.ready")
        self.switch = procs.Child("switch", [self.sw_bin] + EAL + cpu + [
            # A 2 ms shaper bucket lets the switch catch up after it was off the CPU.
            "--", "--config", self.cfg_path, "--backoff", "--shaper-burst-us", "2000", "--timeseries", self.ts_path,
            "--ts-period-ms", str(TS_PERIOD_MS), "--report", self.report_path, "--duration", safety,
            "--ready-file", ready, "--log-level", "warn"], self.logs)
        self.children.append(self.switch.start())
        self.switch.wait_ready(ready, 30)
        log(f"  switch    pid {self.switch.pid:<7} sf-switch, file prefix {self.switch.prefix} "
            f"(dpdk-telemetry.py -f {self.switch.prefix})")

        ready = os.path.join(self.work, "receiver.ready")
        self.receiver = procs.Child("receiver", [self.pk_bin] + EAL + ["--no-telemetry"] + cpu + [
            "--", "--mode", "sink", "--port",
            f"net_memif0,role=client,id=0,socket={self.sockets[self.egress]},socket-abstract=no,mac={RECEIVER_MAC}",
            "--backoff", "--link-wait-s", "15", "--duration", safety, "--ready-file", ready,
            "--log-level", "warn"], self.logs)
        self.children.append(self.receiver.start())
        self.receiver.wait_ready(ready, 30)
        log(f"  receiver  pid {self.receiver.pid:<7} sf-pktio sink on {self.egress} ({RECEIVER_MAC})")

        readies = []
        for h, port in enumerate(self.host_ports, start=1):
            ready = os.path.join(self.work, f"host{h}.ready")
            c = procs.Child(f"host{h}", [self.pk_bin] + EAL + ["--no-telemetry"] + cpu + [
                "--", "--mode", "fwd",
                "--port", f"net_pcap0,rx_pcap={self.pcaps[h - 1]['path']},infinite_rx=1",
                "--port", f"net_memif0,role=client,id=0,socket={self.sockets[port]},socket-abstract=no,"
                          f"mac={self.pcaps[h - 1]['src_mac']}",
                "--rate-gbps", f"{self.a.host_gbps:g}", "--burst-bytes", str(self.a.host_burst_kib * 1024),
                "--backoff", "--link-wait-s", "15",
                "--duration", safety, "--ready-file", ready, "--log-level", "warn"], self.logs, nice=HOST_NICE)
            self.children.append(c.start())
            self.host_procs.append(c)
            readies.append(ready)
        for c, r in zip(self.host_procs, readies):
            c.wait_ready(r, 30)
        self.t_traffic = time.monotonic()
        for h, (c, port) in enumerate(zip(self.host_procs, self.host_ports), start=1):
            log(f"  host{h}     pid {c.pid:<7} sf-pktio fwd {os.path.basename(self.pcaps[h - 1]['path'])} "
                f"-> {port}, {self.a.host_gbps:g} Gb/s, {self.pcaps[h - 1]['src_mac']} {self.pcaps[h - 1]['src_ip']}")

    def check_alive(self):
        for c in self.children:
            if not c.running():
                raise DemoError(c.fail_text("exited while the demo ran"))

    # -- the traffic phase --
    def run_traffic(self, ts):
        con = self.console
        deadline = time.monotonic() + 3
        while not ts.poll() and not ts.samples:
            if time.monotonic() > deadline:
                raise DemoError(f"sf-switch wrote no time series to {self.ts_path}")
            time.sleep(0.05)
        prev = ts.last()
        con.set_base(ts.samples[0])  # counters are zero before the hosts send
        log("")
        con.header()
        dur = self.a.duration
        tick = 1
        while True:
            target = self.t_traffic + min(tick, dur)
            while time.monotonic() < target:
                time.sleep(min(0.05, max(0.0, target - time.monotonic())))
                if self.interrupted:
                    raise Interrupted()
            self.check_alive()
            ts.poll()
            cur = ts.last()
            if cur is not None and prev is not None and cur["t_s"] > prev["t_s"]:
                window = [s for s in ts.samples if prev["t_s"] < s["t_s"] <= cur["t_s"]]
                con.row(min(tick, dur), prev, cur, window)
                prev = cur
            if tick >= dur:
                break
            tick += 1
        return prev

    def drain(self, ts, prev, timeout_s=3.0):
        """After the hosts stopped: wait until the egress port's queues are empty."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            time.sleep(0.2)
            ts.poll()
            cur = ts.last()
            if cur and cur["t_s"] > prev["t_s"] and all(q[series.DEPTH] == 0 for q in
                                                          cur["ports"][self.egress]["queues"]):
                break
        ts.poll()
        cur = ts.last()
        if cur and prev and cur["t_s"] > prev["t_s"]:
            window = [s for s in ts.samples if prev["t_s"] < s["t_s"] <= cur["t_s"]]
            self.console.row(0, prev, cur, window, label="   after  hosts stopped")

    # -- shutdown --
    def stop_hosts(self):
        for c in self.host_procs:  # all at once, then wait for each
            c.interrupt()
        for c in self.host_procs:
            c.stop()

    def stop_all(self):
        """Hosts first (traffic off), then the switch (final report), then the receiver."""
        self.stop_hosts()
        if self.switch:
            self.switch.stop(int_timeout_s=8)
        if self.receiver:
            self.receiver.stop()

    def cleanup(self):
        left = []
        for c in self.children:
            if c.running():  # should not happen after stop_all
                c.stop(1, 1, 2)
            left += c.dpdk_leftovers(remove=True)
        for sock in getattr(self, "sockets", {}).values():
            if os.path.exists(sock):  # sf-switch removes them; not when it was killed
                os.unlink(sock)
                left.append(sock)
        if self.work and not self.a.keep_work:
            shutil.rmtree(self.work, ignore_errors=True)
        prefixes = [c.prefix for c in self.children if c.pid]
        still = []
        for mnt in procs.hugetlbfs_mounts():
            for p in prefixes:
                still += [f for f in os.listdir(mnt) if f.startswith(p + "map_")] if os.path.isdir(mnt) else []
        return left, still, prefixes

    # -- results --
    def results(self, ts):
        rep = self.switch.last_json() if self.switch else None
        if rep is None and os.path.exists(self.report_path):
            with open(self.report_path) as f:
                rep = json.load(f)
        hosts = [c.last_json() for c in self.host_procs]
        recv = self.receiver.last_json() if self.receiver else None
        return rep, hosts, recv

    def traffic_window(self, samples):
        """Switch-time of the first host byte and of the last sample with traffic."""
        t0 = t1 = None
        prev = None
        for s in samples:
            rx = sum(s["ports"][p]["rx_bytes"] for p in self.host_ports)
            if t0 is None and rx > 0:
                t0 = prev["t_s"] if prev else s["t_s"]
            if prev is not None and rx > sum(prev["ports"][p]["rx_bytes"] for p in self.host_ports):
                t1 = s["t_s"]
            prev = s
        if t0 is None:
            t0 = samples[0]["t_s"] if samples else 0.0
        return t0, (t1 if t1 is not None else t0)

    def run(self):
        self.check()
        t_begin = time.monotonic()
        log(f"softfabric switch demo: {N_HOSTS} RoCEv2 hosts x {self.a.host_gbps:g} Gb/s -> sf-switch -> "
            f"1 receiver port at {self.a.egress_gbps} Gb/s, {self.a.duration:g} s")
        log(f"  profile   {os.path.relpath(PROFILE, ROOT)} (DSCP {ROCE_DSCP} -> lossless queue 3, ECN before PFC)")
        self.load_before = os.getloadavg()[0]
        log(f"  machine   {len(os.sched_getaffinity(0))} CPUs, load average {self.load_before:.2f} "
            "(5 polling processes share them: the switch first, the hosts niced)")
        self.prepare()
        log(f"  work dir  {self.work}")
        log(f"  pcaps     {self.pcaps[0]['frames']} frames per host: RDMA WRITE (DSCP 26, ECT(0)) "
            f"{self.pcaps[0]['roce']} + background (DSCP 0) {self.pcaps[0]['background']}, "
            f"{self.pcaps[0]['min_len']}-{self.pcaps[0]['max_len']} B")
        log(f"  queue {self.queue}   WRED/ECN Kmin {kib(self.kmin)} KiB, Kmax {kib(self.kmax)} KiB, "
            f"Pmax {self.pmax} %; egress {self.egress} shaped to {self.a.egress_gbps} Gb/s")
        self.console = Console(self.host_ports, self.egress, self.queue, self.kmin, self.kmax, self.a.duration)
        ts = series.TimeSeries(self.ts_path)
        rc = 0
        error = None
        try:
            self.start()
            prev = self.run_traffic(ts)
            self.stop_hosts()
            self.drain(ts, prev)
        except (Interrupted, KeyboardInterrupt):
            self.interrupted = True
            log("\ninterrupted: stopping the demo's processes")
            rc = 130
        except (DemoError, procs.StartError) as e:
            error = str(e)
            rc = 1
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # let the shutdown finish
            self.stop_all()
            left, still, prefixes = self.cleanup()
        rep = None
        if self.t_traffic is not None:
            ts.poll()
            rep, hosts, recv = self.results(ts)
            if rep is None:
                error = (error + "\n" if error else "") + self.switch.fail_text("ended without a final report")
            else:
                self.summarise(rep, hosts, recv, ts, time.monotonic() - t_begin)
        elif not error:
            log("demo stopped before the traffic started")
        self.report_cleanup(left, still, prefixes)
        if error:
            log(f"\ndemo failed: {error}")
            log(f"logs of every process: {self.logs}")
        return rc or (0 if rep is not None else 1)

    def report_cleanup(self, left, still, prefixes):
        if left:
            log(f"cleanup: removed files left by killed processes: {', '.join(left)}")
        if still:
            log(f"cleanup: huge page files still present: {', '.join(still)}")
        elif prefixes:
            log(f"cleanup: all {len(prefixes)} processes stopped; no huge page files or memif sockets left "
                f"(prefixes {', '.join(prefixes)})")

    def summarise(self, rep, hosts, recv, ts, wall_s):
        try:
            import plot  # matplotlib is slow to import: only here
        except ImportError as e:
            log(f"no plot: {e} (python3-matplotlib; ./dev setup installs it)")
            plot = None
        samples = ts.samples
        t0, t1 = self.traffic_window(samples)
        ports = {p["name"]: p for p in rep["ports"]}
        eg = ports[self.egress]
        q = eg["queues"][self.queue]
        ql = eg["queues"][0]
        span = max(t1 - t0, 1e-9)
        a, b = ts.at_or_before(t0), ts.at_or_before(t1)
        offered = sum(series.rate_gbps(a, b, p, "rx_bytes") for p in self.host_ports) if a and b else 0
        delivered = series.rate_gbps(a, b, self.egress, "tx_bytes") if a and b else 0
        ts_max = max((series.depth(s, self.egress, self.queue) for s in samples), default=0)
        drops = {}
        for p in rep["ports"]:
            for cause, n in p["drops"].items():
                drops[cause] = drops.get(cause, 0) + n
        total_drops = sum(p["dropped"] for p in rep["ports"])
        marks = sum(x["ecn_marked"] for x in eg["queues"])
        sink = (recv or {}).get("sink", {})

        log("")
        log(f"Summary: {span:.1f} s of traffic, {self.egress} shaped to {self.a.egress_gbps} Gb/s "
            f"(averages over the traffic window, from the switch's time series)")
        log(f"  {'':10}{'switch port':<12}{'frames':>12}{'Gb/s':>8}   notes")
        for h, (port, hj) in enumerate(zip(self.host_ports, hosts), start=1):
            sent = hj["ports"][1]["tx_pkts"] if hj else None
            gbps = series.rate_gbps(a, b, port, "rx_bytes") if a and b else 0
            note = f"switch rx {fmt_int(ports[port]['rx_packets'])}, dropped {fmt_int(ports[port]['dropped'])}"
            log(f"  {f'host{h}':<10}{port:<12}{fmt_int(sent) if sent is not None else '?':>12}{gbps:8.2f}   "
                f"sent; {note}")
        got = sink.get("rx_pkts")
        log(f"  {'receiver':<10}{self.egress:<12}{fmt_int(got) if got is not None else '?':>12}{delivered:8.2f}   "
            f"got; switch tx {fmt_int(eg['tx_packets'])}")
        ratio = offered / self.a.egress_gbps
        log(f"  offered {offered:.2f} Gb/s into {self.a.egress_gbps} Gb/s on average: {ratio:.2f}x"
            + (" oversubscribed" if ratio > 1 else " (congested only in bursts)"))
        cfg_total = self.a.host_gbps * N_HOSTS
        if offered < 0.6 * min(cfg_total, 2 * self.a.egress_gbps):
            log(f"  note: the hosts reached {offered:.2f} of {cfg_total:g} Gb/s configured: short of CPU "
                f"(load average {os.getloadavg()[0]:.1f} on {len(os.sched_getaffinity(0))} CPUs); "
                "figures are lower than on an idle machine")
        busy_bytes, busy_s = 0, 0.0  # the egress port while it had something queued
        for x, y in zip(samples, samples[1:]):
            if all(any(qq[series.DEPTH] for qq in z["ports"][self.egress]["queues"]) for z in (x, y)):
                busy_bytes += y["ports"][self.egress]["tx_bytes"] - x["ports"][self.egress]["tx_bytes"]
                busy_s += y["t_s"] - x["t_s"]
        busy = busy_bytes * 8 / busy_s / 1e9 if busy_s > 0 else None
        if busy is not None:
            log(f"  egress busy    {self.egress} sent {busy:.2f} Gb/s while its queues were not empty "
                f"({busy_s:.1f} s; line rate {self.a.egress_gbps} Gb/s)")
            if busy < 0.9 * self.a.egress_gbps:
                log("  note: below line rate with a backlog = sf-switch waiting for a CPU (its shaper does not "
                    "bank the time it is off the CPU); see docs/demo.md")
        pct = 100.0 * q["ecn_marked"] / max(q["tx_packets"], 1)
        log(f"  ECN CE marks   {fmt_int(marks)} (queue {self.queue}: {fmt_int(q['ecn_marked'])}, "
            f"{pct:.0f} % of its {fmt_int(q['tx_packets'])} frames sent)")
        cause_txt = ", ".join(f"{k} {fmt_int(v)}" for k, v in sorted(drops.items(), key=lambda kv: -kv[1])) or "none"
        log(f"  drops          {fmt_int(total_drops)}: {cause_txt}")
        first_m = next((x["t_s"] - t0 for x in samples if series.marks(x, self.egress) > self.console.base_marks), None)
        first_d = next((x["t_s"] - t0 for x in samples if series.total_drops(x) > self.console.base_drops), None)
        if first_m is not None:
            log(f"  first CE mark  {first_m:.1f} s after the hosts started; first drop "
                + (f"{first_d:.1f} s" if first_d is not None else "never") + f" ({TS_PERIOD_MS} ms samples)")
        extras = {}  # counters this version of the report may carry (PFC, device losses)
        for p in rep["ports"]:
            for k, v in p.items():
                if isinstance(v, int) and v and any(w in k for w in ("pause", "pfc", "trim", "storm")):
                    extras[k] = extras.get(k, 0) + v
            for k, v in (p.get("device") or {}).items():
                if isinstance(v, int) and v:
                    extras[f"device {k}"] = extras.get(f"device {k}", 0) + v
        if extras:
            log("  also           " + ", ".join(f"{k} {fmt_int(v)}" for k, v in sorted(extras.items())))
        held = sum(p.get("held_at_ingress", 0) for p in rep["ports"])
        if held:
            log(f"  held           {fmt_int(held)} lossless frames waited at ingress (egress queue at its limit)")
        log(f"  queue {self.queue} max   {q['watermark_bytes'] / 1024:.1f} KiB (watermark; "
            f"largest sample {ts_max / 1024:.1f} KiB); queue 0 (lossy) max {ql['watermark_bytes'] / 1024:.1f} KiB; "
            f"Kmin {kib(self.kmin)} KiB, Kmax {kib(self.kmax)} KiB")
        pools = ", ".join(f"{p['name']} {kib(p['watermark_bytes'])} KiB" for p in rep.get("pools", []))
        log(f"  buffer pools   shared watermark: {pools}")
        log(f"  run time       {wall_s:.1f} s (wall clock, start-up and shutdown included)")

        png = os.path.join(self.out, "plot.png")
        ok = plot is not None and plot.make_plot(
            png, samples, t0=t0, t1=t1, hosts=[(f"host{i + 1}", p) for i, p in enumerate(self.host_ports)],
            egress=self.egress, queue=self.queue, lossy_queue=0, kmin=self.kmin, kmax=self.kmax,
            egress_gbps=self.a.egress_gbps,
            title=f"softfabric demo: {N_HOSTS} RoCEv2 hosts -> sf-switch ({os.path.basename(PROFILE)}) -> "
                  f"{self.egress} at {self.a.egress_gbps} Gb/s")
        figures = {
            "traffic_s": span, "egress_gbps": self.a.egress_gbps, "host_gbps_cfg": self.a.host_gbps,
            "offered_gbps": offered, "delivered_gbps": delivered,
            "hosts": [{"host": f"host{i + 1}", "port": p, "sent": (hj or {}).get("ports", [{}, {}])[1].get("tx_pkts"),
                       "switch_rx": ports[p]["rx_packets"],
                       "gbps": series.rate_gbps(a, b, p, "rx_bytes") if a and b else 0}
                      for i, (p, hj) in enumerate(zip(self.host_ports, hosts))],
            "receiver_got": got, "switch_tx": eg["tx_packets"], "ecn_marked": marks,
            "ecn_marked_queue": q["ecn_marked"], "drops": total_drops, "drops_by_cause": drops,
            "queue": self.queue, "queue_watermark_bytes": q["watermark_bytes"], "queue_sampled_max_bytes": ts_max,
            "kmin_bytes": self.kmin, "kmax_bytes": self.kmax, "wall_s": wall_s,
            "first_mark_s": first_m, "first_drop_s": first_d, "egress_busy_gbps": busy, "egress_busy_s": busy_s,
            "load_average_before": self.load_before, "load_average_after": os.getloadavg()[0],
        }
        with open(os.path.join(self.out, "processes.json"), "w") as f:
            json.dump({"figures": figures, "hosts": hosts, "receiver": recv,
                       "pids": {c.name: c.pid for c in self.children},
                       "signals": {c.name: c.signals for c in self.children}}, f, indent=2)
        self.write_markdown(figures, ok)
        log("")
        log("Outputs:")
        for name, what in (("switch-report.json", "final switch counters (sf-switch --report)"),
                           ("timeseries.jsonl", f"switch time series, one sample per {TS_PERIOD_MS} ms"),
                           ("plot.png", "queue depth, ECN marks / drops, per-port throughput"),
                           ("summary.md", "this summary with the plot"),
                           ("processes.json", "hosts' and receiver's final JSON, figures"),
                           ("switch-config.json", "the generated switch config"),
                           ("logs/", "stdout / stderr of every process")):
            p = os.path.join(self.out, name)
            if os.path.exists(p):
                rel = os.path.relpath(p)
                log(f"  {rel if not rel.startswith('..') else p:<52} {what}")

    def write_markdown(self, f, have_plot):
        lines = [
            "# softfabric switch demo",
            "",
            f"{datetime.datetime.now():%Y-%m-%d %H:%M:%S}: {N_HOSTS} memif hosts replay RoCEv2 RDMA WRITE pcaps "
            f"(DSCP 26, ECT(0), plus DSCP 0 background) at {f['host_gbps_cfg']:g} Gb/s each through sf-switch "
            f"running `config/switch/seed000-static-lossless.json` toward one receiver whose port "
            f"({self.egress}) is shaped to {f['egress_gbps']} Gb/s.",
            "",
            "| figure | value |",
            "|---|---|",
            f"| traffic | {f['traffic_s']:.1f} s |",
            f"| offered (sum of host ports rx) | {f['offered_gbps']:.2f} Gb/s |",
            f"| delivered ({self.egress} tx) | {f['delivered_gbps']:.2f} Gb/s |",
        ]
        for h in f["hosts"]:
            lines.append(f"| {h['host']} -> {h['port']} | {fmt_int(h['sent'] or 0)} frames, {h['gbps']:.2f} Gb/s |")
        lines += [
            f"| receiver got | {fmt_int(f['receiver_got'] or 0)} frames (switch sent {fmt_int(f['switch_tx'])}) |",
            f"| ECN CE marks (queue {f['queue']}) | {fmt_int(f['ecn_marked_queue'])} |",
            f"| drops | {fmt_int(f['drops'])} "
            f"({', '.join(f'{k} {fmt_int(v)}' for k, v in f['drops_by_cause'].items()) or 'none'}) |",
            f"| queue {f['queue']} max depth (watermark) | {f['queue_watermark_bytes'] / 1024:.1f} KiB "
            f"(Kmin {kib(f['kmin_bytes'])} KiB, Kmax {kib(f['kmax_bytes'])} KiB) |",
            "",
        ]
        if have_plot:
            lines += ["![queue depth, ECN marks and drops, per-port throughput](plot.png)", ""]
        if CONSOLE:
            lines += ["The console, one row per second (rates and marks per second; queue depth now and the",
                      "largest 100 ms sample of that second):", "", "```"] + CONSOLE + ["```", ""]
        lines += [
            "Files: `switch-report.json` (final counters), `timeseries.jsonl` (samples every "
            f"{TS_PERIOD_MS} ms), `processes.json`, `switch-config.json`, `logs/`.",
            "How to read this: docs/demo.md.",
            "",
        ]
        with open(os.path.join(self.out, "summary.md"), "w") as fh:
            fh.write("\n".join(lines))


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    demo = Demo(args)

    def on_signal(signum, _frame):
        demo.interrupted = True
        if demo.t_traffic is None:  # during start-up: unwind now
            raise KeyboardInterrupt()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        return demo.run()
    except KeyboardInterrupt:
        log("\ninterrupted during start-up")
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        demo.stop_all()
        left, still, prefixes = demo.cleanup()
        demo.report_cleanup(left, still, prefixes)
        return 130
    except DemoError as e:  # before any process started (build missing, scapy missing)
        log(f"demo failed: {e}")
        demo.cleanup()
        return 1


if __name__ == "__main__":
    sys.exit(main())
