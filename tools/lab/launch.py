"""sf-lab process management: plan a topology into per-process configs,
start sf-switch / sf-pktio / sf-nic, run the traffic phase with the live
console, drain, stop, collect and clean up.

Process handling reuses tools/demo/procs.py (Child: own process group,
PR_SET_PDEATHSIG, output to files, SIGINT -> SIGTERM -> SIGKILL by PID). Each
child gets a DPDK --file-prefix unique to this run (sflab<pid>-<node>) and its
memif sockets live in a short per-run temp dir; both are checked and removed
at the end. Only PIDs started here are ever signalled.
"""
import copy
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "demo"))

import procs  # noqa: E402  (tools/demo/procs.py)
import series  # noqa: E402  (tools/demo/series.py)

import faults  # noqa: E402  (topology events in real time)
import frames  # noqa: E402
import nic  # noqa: E402
import topology as tp  # noqa: E402

EAL = ["--no-pci", "--log-level", "*:warning"]
SENDER_LINGER_MS = 1500  # a sender keeps its memif open this long after its last frame (the switch reads the ring)
RECEIVER_DRAIN_MS = 200
TELEMETRY_PERIOD_S = 0.2  # PFC counters polled over DPDK telemetry (the switch time series has no PFC counts)  # a sink keeps reading this long after SIGINT until idle


class LabError(RuntimeError):
    pass


class PlanError(LabError):
    """The topology cannot run here (found while planning, before any process)."""


class Interrupted(Exception):
    pass


def eal_cpus(lcores=1):
    """EAL lcores 0..lcores-1, all floating over this process's CPUs."""
    cpus = ",".join(map(str, sorted(os.sched_getaffinity(0))))
    return ["--lcores", f"0@({cpus})" if lcores == 1 else f"(0-{lcores - 1})@({cpus})"]


def memif(idx, role, sock, mac=None):
    d = f"net_memif{idx},role={role},id=0,socket={sock},socket-abstract=no"
    return d + (f",mac={mac}" if mac else "")


def telemetry(prefix, cmd, timeout_s=0.5):
    """One DPDK telemetry command to a running switch (None when it fails)."""
    path = os.path.join("/var/run/dpdk", prefix, "dpdk_telemetry.v2")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout_s)
    try:
        s.connect(path)
        s.recv(16384)
        s.send(cmd.encode())
        reply = json.loads(s.recv(1 << 20).decode())
        return reply.get(cmd.split(",")[0])
    except (OSError, ValueError):
        return None
    finally:
        s.close()


class Plan:
    """Everything the run needs, computed and written before any process starts."""

    def __init__(self, topo, out, build):
        self.t = topo
        self.out = out
        self.build = build
        self.sw_bin = os.path.join(build, "switch", "app", "sf-switch")
        self.pk_bin = os.path.join(build, "tools", "sf-pktio", "sf-pktio")
        self.nic_bin = os.path.join(build, "nic", "app", "sf-nic")
        self.tag = f"sflab{os.getpid()}"
        self.run_dir = os.path.join(out, "run")
        self.logs = os.path.join(out, "logs")
        self.work = None  # short temp dir: memif sockets, ready and start files
        self.sockets = []
        self.switch_cfgs = {}   # name -> (path, cfg)
        self.senders = {}       # pktio host -> dict(pcap, counts, loop, frames, args)
        self.nic_cfgs = {}      # process -> path
        self.oob = {}

    def check_binaries(self):
        need = [self.sw_bin]
        if self.t.pktio_hosts():
            need.append(self.pk_bin)
        if self.t.nic_hosts():
            need.append(self.nic_bin)
        for b in need:
            if not os.access(b, os.X_OK):
                what = "sf-nic is not built (nic/app/sf-nic)" if b == self.nic_bin else f"{b} not found"
                raise LabError(f"{what}: build first (ninja -C {self.build} "
                               "switch/app/sf-switch tools/sf-pktio/sf-pktio)")

    def sock(self, sw, port):
        return os.path.join(self.work, f"{sw}-{port}.sock")

    def host_devargs(self, h, idx=0, port=0):
        """memif client devargs of a host's port (index port) toward its switch port."""
        hp = h.ports[port] if h.ports else h
        return memif(idx, "client", self.sock(hp.switch, hp.port), hp.mac)

    def write(self):
        os.makedirs(self.run_dir, exist_ok=True)
        os.makedirs(self.logs, exist_ok=True)
        self.work = tempfile.mkdtemp(prefix=f"{self.tag}-")
        self._switch_configs()
        self._pktio()
        self._nic()
        with open(os.path.join(self.run_dir, "topology.json"), "w") as f:
            with open(self.t.path) as src:
                f.write(src.read())

    def _switch_configs(self):
        t = self.t
        routes = tp.fdb_routes(t)
        peer_of = {}  # (sw, port) -> (role, socket path)
        for l in t.links:
            if l.a[1] and l.b[1]:
                # The switch started first (topology order) is the memif server:
                # a client's port cannot open before its server's socket exists.
                srv, cli = (l.a, l.b) if t.switches[l.a[0]].index < t.switches[l.b[0]].index else (l.b, l.a)
                s = self.sock(srv[0], srv[1])
                peer_of[srv] = ("server", s)
                peer_of[cli] = ("client", s)
        speeds = {}
        for l in t.links:
            for ep in (l.a, l.b):
                if ep[1]:
                    speeds[ep] = l.speed_gbps
        for name, sw in t.switches.items():
            cfg = copy.deepcopy(sw.config)
            for i, port in enumerate(sw.ports):
                role, s = peer_of.get((name, port), ("server", self.sock(name, port)))
                pc = cfg["PORT"][port]
                pc["devargs"] = memif(i, role, s)
                if (name, port) in speeds:
                    pc["speed"] = speeds[(name, port)]
                if role == "server":
                    self.sockets.append(s)
            if not tp.is_routed(sw):  # a routed switch forwards by its own tables (hosts send to its port MACs)
                fdb = cfg.setdefault("FDB", {})
                for mac, port in routes[name].items():
                    fdb[mac] = {"port": port, "type": "static"}
            path = os.path.join(self.run_dir, f"switch-{name}.json")
            with open(path, "w") as f:
                json.dump(cfg, f, indent=2)
            self.switch_cfgs[name] = (path, cfg)

    def _check_disk(self):
        """Sized pktio flows are written whole into pcaps in the run dir."""
        need = sum(tp.pktio_flow_frames(f, self.t.hosts[f.src]) * (tp.pktio_frame_bytes(self.t.hosts[f.src]) + 16)
                   for f in self.t.flows if self.t.hosts[f.src].kind == "pktio" and f.size_bytes)
        st = os.statvfs(self.run_dir)
        free = st.f_bavail * st.f_frsize
        if need > free // 2:
            raise PlanError(f"the workloads' pcaps need {need / 2**20:,.0f} MiB in {self.run_dir}, which has "
                           f"{free / 2**20:,.0f} MiB free: the workload is larger than the disk allows")

    def _pktio(self):
        t = self.t
        self._check_disk()
        for h in t.pktio_hosts():
            flows = t.flows_from(h.name)
            if not flows:
                continue
            sized = flows[0].size_bytes > 0
            # Behind a routed switch every frame goes to the gateway (the switch port's MAC).
            builders = [frames.FlowFrames(src_mac=h.mac, dst_mac=h.gateway_mac or t.hosts[f.dst].mac, src_ip=h.ip,
                                          dst_ip=t.hosts[f.dst].ip, sport=f.sport, dscp=f.dscp,
                                          qpn=0x100 + f.index, ib_mtu=h.ib_mtu, ect=f.dscp != 0) for f in flows]
            if sized:
                counts = [tp.pktio_flow_frames(f, h) for f in flows]
            else:
                counts = [64] * len(flows)  # one pass of the endless replay
            pcap = os.path.join(self.run_dir, f"{h.name}.pcap")
            n, nbytes = frames.write_pcap(pcap, (builders[i].frame(k) for i, k in frames.interleave(counts)))
            rate = flows[0].rate_gbps or h.rate_gbps or h.speed_gbps
            self.senders[h.name] = {"pcap": pcap, "flows": flows, "counts": counts, "loop": not sized,
                                    "frames": n, "bytes": nbytes, "rate_gbps": rate,
                                    "frame_bytes": tp.pktio_frame_bytes(h),
                                    "duration_s": 0 if sized else max(f.duration_s for f in flows),
                                    "start_ms": flows[0].start_ms}

    def _nic(self):
        t = self.t
        names = nic.oob_names(t)
        ports = nic.free_tcp_ports(len(names)) if names else []
        self.oob = dict(zip(names, ports))
        for proc in nic.active_processes(t):  # a process without workloads is not started
            # One vdev name per device in a process: net_memif0, net_memif1, ...
            vdev = nic.vdev_indices(t, proc)
            cfg = nic.build_nic_config(t, proc, lambda h, k=0: self.host_devargs(h, vdev[(h.name, k)], k),
                                       lambda f: self.oob[f.name])
            path = os.path.join(self.run_dir, f"nic-{proc}.json")
            with open(path, "w") as f:
                json.dump(cfg, f, indent=2)
            self.nic_cfgs[proc] = path


class Lab:
    def __init__(self, topo, out, build, console=None, log=print):
        self.t = topo
        self.out = os.path.abspath(out)
        self.plan = Plan(topo, self.out, os.path.abspath(build))
        self.console = console
        self.log = log
        self.switches = {}   # name -> Child
        self.receivers = {}  # host -> Child
        self.senders = {}    # host -> Child
        self.nics = {}       # process -> Child
        self.children = []
        self.interrupted = False
        self.t0_ns = None    # CLOCK_MONOTONIC of the common start
        self.t_end_ns = None
        self.ts = {}         # switch -> series.TimeSeries
        self.tel = []        # lab samples: {"t_s", "switches": {sw: {port: {...pfc...}}}}
        self.stop_reason = None
        self.switch_t0 = {}
        self.t0_real_ns = None
        self.started_utc = None
        self.drained = False
        self.error = None
        self.faults = None   # faults.FaultDriver while the events run

    # ---- start ----------------------------------------------------------------
    def _child(self, name, argv, prefix, nice=0):
        """Starts a child with SIGINT/SIGTERM blocked meanwhile, so a Ctrl-C
        cannot leave a started process that is not in self.children."""
        c = procs.Child(name, argv, self.plan.logs, nice=nice, prefix=prefix)
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            c.start()
            self.children.append(c)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return c

    def ready(self, name):
        return os.path.join(self.plan.work, f"{name}.ready")

    def start(self):
        p, t = self.plan, self.t
        cpu = eal_cpus()
        safety = t.duration_s + t.drain_s + 60
        for name, (cfg_path, _) in p.switch_cfgs.items():
            pre = f"{p.tag}-{name}"
            ts_path = os.path.join(self.out, f"timeseries-{name}.jsonl")
            sm = t.switches[name].shard_map
            # A sharded switch: one datapath lcore per shard (sf-switch --shard-map).
            shards = ["--shard-map", ",".join(map(str, sm))] if sm else []
            argv = [p.sw_bin] + EAL + (eal_cpus(max(sm) + 1) if sm else cpu) + [
                "--file-prefix", pre, "--", "--config", cfg_path] + shards + [
                "--backoff", "--shaper-burst-us", f"{t.switches[name].shaper_burst_us:g}",
                "--timeseries", ts_path, "--ts-period-ms", str(t.ts_period_ms),
                "--report", os.path.join(self.out, f"switch-{name}-report.json"),
                "--duration", f"{safety:g}", "--ready-file", self.ready(name), "--log-level", "warn"]
            self.switches[name] = self._child(name, argv, pre)
            self.ts[name] = series.TimeSeries(ts_path)
            # One at a time: the next may be a memif client of this one's sockets.
            self.switches[name].wait_ready(self.ready(name), 30)
        for h in t.pktio_hosts():
            if h.name not in t.receivers():
                continue
            pre = f"{p.tag}-{h.name}"
            argv = [p.pk_bin] + EAL + ["--no-telemetry"] + cpu + [
                "--file-prefix", pre, "--", "--mode", "sink", "--port", p.host_devargs(h), "--backoff",
                "--link-wait-s", "15", "--duration", f"{safety:g}", "--ready-file", self.ready(h.name),
                "--flow-sport-base", str(tp.FLOW_SPORT_BASE), "--stop-drain-ms", str(RECEIVER_DRAIN_MS),
                "--timeseries", self.receiver_ts(h.name), "--ts-period-ms", str(t.ts_period_ms),
                "--log-level", "warn"]
            self.receivers[h.name] = self._child(h.name, argv, pre)
        for proc, cfg_path in p.nic_cfgs.items():
            pre = f"{p.tag}-{proc}"
            argv = nic.nic_command(p.nic_bin, EAL + cpu + ["--file-prefix", pre], cfg_path,
                                   os.path.join(self.out, f"nic-{proc}-report.json"),
                                   self.nic_ts(proc), t.ts_period_ms,
                                   t.duration_s + t.drain_s, self.ready(f"nic-{proc}"))
            self.nics[proc] = self._child(f"nic-{proc}", argv, pre)
        for name, c in self.receivers.items():
            c.wait_ready(self.ready(name), 30)
        for proc, c in self.nics.items():
            c.wait_ready(self.ready(f"nic-{proc}"), 30)
        for host, s in p.senders.items():
            h = t.hosts[host]
            pre = f"{p.tag}-{host}"
            rx = f"net_pcap0,rx_pcap={s['pcap']}" + (",infinite_rx=1" if s["loop"] else "")
            bound = ["--duration", f"{s['duration_s']:g}"] if s["loop"] else \
                ["--count", str(s["frames"]), "--duration", f"{t.duration_s + 5:g}"]
            argv = [p.pk_bin] + EAL + ["--no-telemetry"] + cpu + [
                "--file-prefix", pre, "--", "--mode", "fwd", "--port", rx, "--port", p.host_devargs(h, 0),
                "--rate-gbps", f"{s['rate_gbps']:g}", "--burst-bytes", str(256 * 1024), "--backoff",
                "--link-wait-s", "15", "--linger-ms", str(SENDER_LINGER_MS), "--ready-file", self.ready(host),
                "--start-file", self.start_file(s["start_ms"]), "--log-level", "warn"] + bound
            self.senders[host] = self._child(host, argv, pre, nice=h.nice)
        for host, c in self.senders.items():
            c.wait_ready(self.ready(host), 30)

    def receiver_ts(self, host):
        return os.path.join(self.out, f"timeseries-{host}.jsonl")

    def receiver_series(self, raw):
        """{host: [(t_s since the start, {sport: (pkts, bytes)})]} from the
        receivers' time series (their loop clock, converted with the
        CLOCK_MONOTONIC zero of their final JSON)."""
        out = {}
        for host in self.receivers:
            j = (raw or {}).get("receivers", {}).get(host)
            path = self.receiver_ts(host)
            if not j or not os.path.exists(path):
                continue
            zero = j.get("clock_zero_mono_ns", 0)
            out[host] = [((zero + r["t_ns"] - self.t0_ns) / 1e9, {int(k): tuple(v) for k, v in r["flows"].items()})
                         for r in series.read_jsonl(path)]
        return out

    def start_file(self, ms):
        return os.path.join(self.plan.work, f"start-{ms}")

    # ---- traffic --------------------------------------------------------------
    def check_alive(self):
        for group in (self.switches, self.receivers):
            for c in group.values():
                if not c.running():
                    raise LabError(c.fail_text("exited while the lab ran"))
        for c in list(self.senders.values()) + list(self.nics.values()):
            rc = c.popen.poll()
            if rc not in (None, 0):
                raise LabError(c.fail_text("failed"))

    def poll_telemetry(self, t_s):
        sample = {"t_s": t_s, "switches": {}}
        for name, c in self.switches.items():
            per = {}
            for port in self.t.switches[name].ports:
                r = telemetry(c.prefix, f"/softfabric/switch/port,{port}")
                if isinstance(r, dict):
                    per[port] = {"tx_pfc_frames": r.get("tx_pfc_frames", 0),
                                 "rx_pause": sum(r.get("rx_prio_pause") or []),
                                 "tx_pause": sum(r.get("tx_prio_pause") or [])}
            sample["switches"][name] = per
        self.tel.append(sample)
        return sample

    def elapsed(self):
        return (time.monotonic_ns() - self.t0_ns) / 1e9

    def traffic(self):
        t = self.t
        pending = sorted({s["start_ms"] for s in self.plan.senders.values()})
        self.poll_telemetry(0.0)  # the baseline of the PFC counters
        self.align_switch_clocks()  # the switches' time of the start, just below
        self.t0_ns = time.monotonic_ns()
        self.faults = faults.start(t, lambda sw: self.switches[sw].prefix, self.t0_ns, telemetry, self.log)
        last_tel = time.monotonic()
        for ms in list(pending):
            if ms == 0:
                open(self.start_file(0), "w").close()
                pending.remove(0)
        if self.console:
            self.console.begin(self)
        tick = 1
        while True:
            target = self.t0_ns + int(min(tick, t.duration_s) * 1e9)
            while time.monotonic_ns() < target:
                now_ms = (time.monotonic_ns() - self.t0_ns) / 1e6
                for ms in list(pending):
                    if now_ms >= ms:
                        open(self.start_file(ms), "w").close()
                        pending.remove(ms)
                if self.interrupted:
                    raise Interrupted()
                if self.all_done() and not pending:
                    break
                if time.monotonic() - last_tel >= TELEMETRY_PERIOD_S:
                    self.poll_telemetry(self.elapsed())
                    last_tel = time.monotonic()
                time.sleep(0.02)
            self.check_alive()
            for ts in self.ts.values():
                ts.poll()
            self.poll_telemetry(self.elapsed())
            last_tel = time.monotonic()
            if self.console:
                self.console.tick(self, self.elapsed())
            if self.all_done() and not pending:
                self.stop_reason = "every workload finished"
                break
            if tick >= t.duration_s:
                self.stop_reason = f"the run's duration ({t.duration_s:g} s) ended"
                break
            tick += 1

    def align_switch_clocks(self):
        """Switch time (its time series' t_s) of the lab's start: the last
        sample's t_s plus the time since its file was written."""
        self.switch_t0 = {}
        now_real = time.time_ns()
        for name, ts in self.ts.items():
            deadline = time.monotonic() + 2
            while not ts.poll() and not ts.samples and time.monotonic() < deadline:
                time.sleep(0.01)
            last = ts.last()
            try:
                mtime = os.stat(ts.path).st_mtime_ns
            except OSError:
                mtime = now_real
            self.switch_t0[name] = (last["t_s"] if last else 0.0) + max(0, now_real - mtime) / 1e9
        self.t0_real_ns = now_real

    def nic_ts(self, proc):
        return os.path.join(self.out, f"timeseries-nic-{proc}.jsonl")

    def nic_series(self):
        """{host: [(t_s since the start, sample of that host)]} from the sf-nic
        time series. sf-nic counts t_s from the start of its traffic, which the
        lab does not see; the last line was written when the file was last
        modified, which aligns the series."""
        out = {}
        for proc in self.nics:
            path = self.nic_ts(proc)
            rows = series.read_jsonl(path)
            try:
                mtime = os.stat(path).st_mtime_ns
            except OSError:
                continue
            if not rows or self.t0_real_ns is None:
                continue
            shift = (mtime - self.t0_real_ns) / 1e9 - rows[-1]["t_s"]
            for r in rows:
                for host, v in r.get("hosts", {}).items():
                    out.setdefault(host, []).append((r["t_s"] + shift, v))
        return out

    def wred_lines(self):
        """(Kmin, Kmax) of the WRED profiles the switches' queues use."""
        out = set()
        for name, (_, cfg) in self.plan.switch_cfgs.items():
            used = {v.get("wred_profile") for v in cfg.get("QUEUE", {}).values() if isinstance(v, dict)}
            for prof in used:
                w = cfg.get("WRED_PROFILE", {}).get(prof) if prof else None
                try:
                    out.add((int(w["green_min_threshold"]), int(w["green_max_threshold"])))
                except (TypeError, KeyError, ValueError):
                    pass
        return sorted(out)

    def all_done(self):
        procs_ = list(self.senders.values()) + list(self.nics.values())
        return bool(procs_) and all(not c.running() for c in procs_)

    def drain(self):
        """Senders stopped: wait (bounded) until every switch's buffer is empty."""
        stop_t = {name: (ts.last() or {"t_s": -1})["t_s"] for name, ts in self.ts.items()}
        deadline = time.monotonic() + self.t.drain_s
        while time.monotonic() < deadline:
            time.sleep(self.t.ts_period_ms / 1000)
            empty = True
            for name, ts in self.ts.items():
                ts.poll()
                s = ts.last()
                if s is None or s["t_s"] <= stop_t[name] or s.get("buffer_used_bytes", 0) != 0:
                    empty = False
            if empty:
                return True
        return False

    # ---- stop -----------------------------------------------------------------
    def stop_senders(self):
        for c in self.senders.values():
            c.interrupt()
        for c in self.nics.values():
            c.interrupt()
        for c in list(self.senders.values()) + list(self.nics.values()):
            c.stop(int_timeout_s=SENDER_LINGER_MS / 1000 + 5)

    def stop_all(self):
        """Senders (traffic off), switches (final reports), then receivers."""
        if self.faults:
            self.faults.stop()
        self.stop_senders()
        # One at a time, the last started first: a switch is the memif client
        # of the switches started before it, and a memif server that goes away
        # under a polling client can crash the client in DPDK 22.11's memif
        # (seen as an exit -11 of the second switch in the victim topology).
        for c in reversed(list(self.switches.values())):
            c.interrupt()
            c.stop(int_timeout_s=8)
        for c in self.receivers.values():
            c.interrupt()
        for c in self.receivers.values():
            c.stop()

    def cleanup(self):
        """Removes what killed children may have left; returns a record of
        what was found and whether anything remains."""
        left, runtime_dirs = [], []
        for c in self.children:
            if c.running():
                c.stop(1, 1, 2)
            for x in c.dpdk_leftovers(remove=True):
                # EAL leaves its runtime dir (config, sockets) behind at every exit: routine.
                (runtime_dirs if x.startswith(("/var/run/dpdk/", "/run/dpdk/")) else left).append(x)
        for s in self.plan.sockets:
            if os.path.exists(s):
                os.unlink(s)
                left.append(s)
        running = [c.pid for c in self.children if c.popen and c.popen.poll() is None]
        still = []
        for c in self.children:
            if c.pid is None:
                continue
            for mnt in procs.hugetlbfs_mounts():
                if os.path.isdir(mnt):
                    still += [os.path.join(mnt, f) for f in os.listdir(mnt) if f.startswith(c.prefix + "map_")]
            if os.path.isdir(os.path.join("/var/run/dpdk", c.prefix)):
                still.append(os.path.join("/var/run/dpdk", c.prefix))
        if self.plan.work:
            shutil.rmtree(self.plan.work, ignore_errors=True)
        return {"pids": {c.name: c.pid for c in self.children}, "prefixes": [c.prefix for c in self.children],
                "removed_leftovers": left, "removed_runtime_dirs": runtime_dirs, "still_running": running, "still_present": still,
                "signals": {c.name: c.signals for c in self.children},
                "exit_status": {c.name: (c.popen.poll() if c.popen else None) for c in self.children}}

    # ---- results ----------------------------------------------------------------
    def collect(self):
        """Final JSON of every process: {"switches", "senders", "receivers", "nics"}."""
        def rep_of(c, path=None):
            j = c.last_json() if c.popen else None
            if j is None and path and os.path.exists(path):
                with open(path) as f:
                    j = json.load(f)
            return j
        out = {"switches": {n: rep_of(c, os.path.join(self.out, f"switch-{n}-report.json"))
                            for n, c in self.switches.items()},
               "senders": {n: rep_of(c) for n, c in self.senders.items()},
               "receivers": {n: rep_of(c) for n, c in self.receivers.items()},
               "nics": {}}
        for proc in self.nics:
            path = os.path.join(self.out, f"nic-{proc}-report.json")
            if os.path.exists(path):
                with open(path) as f:
                    try:
                        out["nics"][proc] = json.load(f)
                    except ValueError:
                        out["nics"][proc] = None
        for ts in self.ts.values():
            ts.poll()
        return out

    def run(self):
        """The whole run. Returns (rc, raw results or None, cleanup record)."""
        self.plan.check_binaries()
        rc, error, raw = 0, None, None
        try:
            self.plan.write()
            self.start()
            self.traffic()
            self.stop_senders()
            self.drained = self.drain()
            self.poll_telemetry(self.elapsed())  # PFC counters after the drain
        except (Interrupted, KeyboardInterrupt):
            self.interrupted = True
            sig = getattr(self, "signal_name", None) or "SIGINT"
            self.stop_reason = f"interrupted ({sig})"
            rc = 130
            if self.t0_ns is not None:
                # Traffic had started: stop the senders and drain the switches as a
                # finished run does, so the report's numbers add up (a further
                # signal meanwhile changes nothing: the handler only sets a flag).
                try:
                    self.stop_senders()
                    self.drained = self.drain()
                    self.poll_telemetry(self.elapsed())
                except (LabError, procs.StartError, KeyboardInterrupt) as e:
                    error = f"after {sig}: {e}" if str(e) else None
                print(f"\nsf-lab: {sig}: senders stopped, switches "
                      f"{'drained' if self.drained else f'not drained within {self.t.drain_s:g} s'}; "
                      "writing the report of the run so far, exit 130", file=sys.stderr, flush=True)
        except (LabError, procs.StartError) as e:
            error = str(e)
            self.stop_reason = "bad input" if isinstance(e, PlanError) else "a process failed"
            rc = 2 if isinstance(e, PlanError) else 1
        finally:
            old = signal.signal(signal.SIGINT, signal.SIG_IGN)  # let the shutdown finish
            self.stop_all()
            self.t_end_ns = time.monotonic_ns()
            if self.t0_ns is not None:
                raw = self.collect()
            clean = self.cleanup()
            signal.signal(signal.SIGINT, old)
        self.error = error
        return rc, raw, clean
