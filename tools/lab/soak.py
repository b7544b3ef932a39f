#!/usr/bin/python3
"""Chaos soak with full accounting (docs/soak.md, issue 17 section 6).

One sf-switch (config/soak/soak.json: seven memif ports, lossless priority 3,
a PFC watchdog on the rogue port) carries an sf-nic RC pair and an sf-nic MRC
pair (--transport mrc on a lossy priority whose queue trims) running write_bw
--verify transfers back to back, an sf-pktio gen -> sink stream, and a
misbehaving host on the rogue port. For --seconds S a seeded schedule
(tools/lab/soak_schedule.py) injects: SIGKILL of a NIC of either pair
(nic_kill, mrc_kill: its peer must end in a QP error or finish, never with a
verify error) and of gen / sink (restarted),
link admin down / up, PFC storms and bursts of malformed / fuzzer-made frames
at line rate from the rogue host, telemetry commands with bad arguments,
"reload" attempts (sf-switch started on broken variants of the running
config: sf-switch has no config reload), random loss, blackholes and resets.

Checks at the end (each failure is listed; exit 1): no process crashed (exit
status, no sanitizer / abort output); the switch conserves packets (per
port: dropped = sum of drops by cause, tx = sum of queue tx, nothing queued or
held; switch-wide: tx + dropped = rx - rx_mac_control + flood_extra_copies;
buffer empty); its packet mempool in use at stop equals its use at ready,
and so does every sf-nic's that was not killed (once its node is gone);
every RDMA transfer completed byte-exact or failed with a QP error (or its
peer was killed), no verify error anywhere; sinks saw no payload error; no
process, memif socket, huge page file or /var/run/dpdk directory of ours is
left (those of SIGKILLed processes are removed by the soak and counted).

Usage: soak.py --build DIR [--seconds S] [--seed N] [--config FILE] [--out DIR]
Exit: 0 pass, 1 a check failed, 2 bad arguments, 77 not root (meson skip).
Waits are bounded polls; every DPDK process has its own --file-prefix and
--backoff; only PIDs started here are signalled.
"""
import argparse
import heapq
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import soak_frames  # noqa: E402
import soak_schedule  # noqa: E402

EAL_COMMON = ["--no-pci", "--lcores=0@(0,1)", "--log-level=*:warning"]
NIC_MACS = {"nic_server": "02:4e:00:00:00:01", "nic_client": "02:4e:00:00:00:02",
            "mrc_server": "02:4e:00:00:00:03", "mrc_client": "02:4e:00:00:00:04"}
NIC_IPS = {"nic_server": "10.7.0.1", "nic_client": "10.7.0.2", "mrc_server": "10.7.0.3", "mrc_client": "10.7.0.4"}
# The NIC pairs: transport -> (config section, server role, client role, kill kind). The MRC pair runs when
# the config has an "mrc" section and mrc_server / mrc_client ports.
PAIRS = {"rc": ("nic", "nic_server", "nic_client", "nic_kill"), "mrc": ("mrc", "mrc_server", "mrc_client", "mrc_kill")}
# memif frees its rings when the sender leaves: the rogue host stays this long
# after its last frame so that the switch (asleep in --backoff on a loaded
# machine) reads every frame it sent (checked: rogue port rx == rogue tx).
ROGUE_LINGER_MS = 2000
MEMIF_BSIZE = 0  # memif buffer of the hosts: 0 = the tools' default (16384: every frame <= 9216 B in one descriptor)
ORPHAN_GRACE_S = 5.0
RX_SEGS = 5    # mbufs (2 KiB) of the longest frame the soak sends (9300 B)
SINK_MAC = "02:00:00:00:00:02"  # sf-pktio gen frames' destination
CRASH_MARKS = ("AddressSanitizer", "UndefinedBehaviorSanitizer", "ThreadSanitizer", "runtime error:",
               "Segmentation fault", "core dumped", "terminate called", "Assertion", "PANIC", "stack smashing")
# Telemetry commands with bad arguments: each must be refused (null reply) and change nothing.
BAD_COMMANDS = [
    "/softfabric/switch/port_admin,NoSuchPort,down",
    "/softfabric/switch/port_admin,Ethernet0,sideways",
    "/softfabric/switch/port_admin",
    "/softfabric/switch/port_admin,,up",
    "/softfabric/switch/port_loss,Ethernet4,1.5",
    "/softfabric/switch/port_loss,Ethernet4,-0.1",
    "/softfabric/switch/port_loss,Ethernet4,0.1x",
    "/softfabric/switch/port_loss,Ethernet4,nan",
    "/softfabric/switch/port_blackhole,Ethernet8,maybe",
    "/softfabric/switch/port,Ethernet99",
    "/softfabric/switch/port_admin,Ethernet12," + "x" * 900,
]


# ---- processes -------------------------------------------------------------------

class Proc:
    def __init__(self, role, cmd, out, err, popen, prefix=None):
        self.role, self.cmd, self.out_path, self.err_path, self.popen = role, cmd, out, err, popen
        self.prefix = prefix
        self.pid = popen.pid
        self.killed = False        # SIGKILLed by the soak (a fault, not a crash)
        self.rc = None
        self.ready = None
        self.report = None

    def poll(self):
        if self.rc is None:
            self.rc = self.popen.poll()
        return self.rc

    def alive(self):
        return self.poll() is None

    def read(self, which="err"):
        try:
            with open(self.err_path if which == "err" else self.out_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def last_json(self):
        for line in reversed(self.read("out").strip().splitlines()):
            if line.strip().startswith("{"):
                try:
                    return json.loads(line)
                except json.JSONDecodeError:
                    continue
        return None

    def kill9(self):
        if self.alive():
            self.killed = True
            self.popen.kill()
            self.popen.wait()
            self.poll()

    def interrupt(self):
        if self.alive():
            self.popen.send_signal(signal.SIGINT)

    def wait(self, timeout_s):
        """Bounded: SIGKILL after timeout_s (then it counts as a hang)."""
        try:
            self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            self.hung = True
        return self.poll()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def telemetry(prefix, cmd, timeout_s=5):
    """One command over /var/run/dpdk/PREFIX/dpdk_telemetry.v2; the reply's
    value (None: refused), or raises OSError."""
    path = os.path.join("/var/run/dpdk", prefix, "dpdk_telemetry.v2")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout_s)
    try:
        s.connect(path)
        json.loads(s.recv(16384).decode())
        s.send(cmd.encode())
        reply = json.loads(s.recv(1 << 20).decode())
    finally:
        s.close()
    return reply.get(cmd.split(",")[0])


def rss_kb(pid, field="VmRSS"):
    """VmRSS (all resident pages, the memif peers' shared rings mapped in
    included) or RssAnon (the process's own heap and stacks) in KiB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def hugetlbfs_mounts():
    out = []
    with open("/proc/mounts") as f:
        for line in f:
            p = line.split()
            if len(p) > 2 and p[2] == "hugetlbfs":
                out.append(p[1])
    return out


def switch_config(soak_cfg, sock_dir, sim=False):
    """The soak switch's config (also the virtual-time twin's, sim=True: its MRC
    queue threshold is switch.mrc_trim.sim_static_th): memif servers in sock_dir."""
    s = soak_cfg["switch"]
    names = list(s["ports"])
    ports = {n: {"devargs": f"net_memif{i},role=server,socket={os.path.join(sock_dir, n + '.sock')}",
                 "speed": s["speed_gbps"], "mtu": s["mtu"]} for i, n in enumerate(names)}
    all_ports = ",".join(names)
    role_port = {r: p for p, r in s["ports"].items()}
    cfg = {
        "DEVICE_METADATA": {"localhost": {"mmu_size": s["mmu_size"]}},
        "PORT": ports,
        "BUFFER_POOL": {"ip": {"type": "ingress", "mode": "static", "size": "8MiB", "xoff": "2MiB"},
                        "ep": {"type": "egress", "mode": "static", "size": "8MiB"}},
        "BUFFER_PROFILE": {"pg3": {"pool": "ip", "size": "0", "static_th": "1MiB", "xoff": "262144"},
                           "lossy": {"pool": "ip", "size": "0", "static_th": "2MiB"},
                           "q": {"pool": "ep", "size": "0", "static_th": "4MiB"}},
        "BUFFER_PG": {all_ports + "|0-2": {"profile": "lossy"}, all_ports + "|3": {"profile": "pg3"},
                      all_ports + "|4-7": {"profile": "lossy"}},
        "BUFFER_QUEUE": {all_ports + "|0-7": {"profile": "q"}},
        "PORT_QOS_MAP": {"global": {"pfc_enable": s["pfc_enable"]}},
        "FDB": {NIC_MACS[r]: {"port": role_port[r]} for r in NIC_MACS if r in role_port},
    }
    cfg["FDB"][SINK_MAC] = {"port": role_port["sink"]}
    # The MRC pair's priority is lossy (not in pfc_enable); its queue on the MRC ports trims instead of
    # dropping (SWITCH_TRIMMING: the headers go on at dscp_value in queue_index; the receiver NACKs).
    trim, mrc = s.get("mrc_trim"), soak_cfg.get("mrc")
    mrc_ports = [role_port[r] for r in ("mrc_server", "mrc_client") if r in role_port]
    if trim and mrc and mrc_ports:
        tc = mrc.get("dscp", 26) >> 3
        if str(tc) in s["pfc_enable"].split(","):
            raise ValueError(f"mrc.dscp {mrc.get('dscp')}: priority {tc} is lossless (switch.pfc_enable); "
                             "the MRC pair runs lossy")
        rest = [p for p in names if p not in mrc_ports]
        mp = ",".join(mrc_ports)
        th = trim.get("sim_static_th", trim["static_th"]) if sim else trim["static_th"]
        cfg["BUFFER_PROFILE"]["qtrim"] = {"pool": "ep", "size": "0", "static_th": th,
                                          "packet_discard_action": "trim"}
        cfg["BUFFER_QUEUE"] = {",".join(rest) + "|0-7": {"profile": "q"}, f"{mp}|{tc}": {"profile": "qtrim"}}
        others = [q for q in range(8) if q != tc]
        for q in others:
            cfg["BUFFER_QUEUE"][f"{mp}|{q}"] = {"profile": "q"}
        cfg["SWITCH_TRIMMING"] = {"GLOBAL": {k: trim[k] for k in ("size", "dscp_value", "queue_index")}}
    wd = s.get("pfc_wd")
    if wd:
        cfg["PFC_WD"] = {wd["port"]: {"action": wd["action"], "detection_time": wd["detection_time"],
                                      "restoration_time": wd["restoration_time"]}}
    return cfg


# ---- the soak ---------------------------------------------------------------------

class Soak:
    def __init__(self, a, cfg):
        self.a = a
        self.cfg = cfg
        self.build = os.path.abspath(a.build)
        self.bin = {"switch": os.path.join(self.build, "switch", "app", "sf-switch"),
                    "pktio": os.path.join(self.build, "tools", "sf-pktio", "sf-pktio"),
                    "nic": os.path.join(self.build, "nic", "app", "sf-nic")}
        for b in self.bin.values():
            if not os.access(b, os.X_OK):
                raise SystemExit(f"soak: {b} not built (ninja -C {a.build})")
        self.work = tempfile.mkdtemp(prefix="sf-soak-")  # sockets, logs, pcaps (short paths for memif)
        self.out = os.path.abspath(a.out) if a.out else self.work
        os.makedirs(self.out, exist_ok=True)
        self.tag = f"soak{os.getpid() % 100000}"
        self.n = 0
        self.procs = []
        self.failures = []
        self.ports = list(cfg["switch"]["ports"])
        self.role_port = {r: p for p, r in cfg["switch"]["ports"].items()}
        self.injected = {}
        self.skipped = {}
        self.transfers = []
        # The NIC pairs that run: RC always, MRC when configured (PAIRS).
        self.kinds = [k for k, (sec, srv, cli, _) in PAIRS.items()
                      if sec in cfg and srv in self.role_port and cli in self.role_port]
        self.pairs = {k: None for k in self.kinds}
        self.pairs_started = 0
        self.rogue = None
        self.pending = []  # heap of (t, seq, fn, label): undo actions and restarts
        self.seq = 0
        self.down = {}     # port -> count of active admin-down faults (and the like for blackhole / loss)
        self.bh = {}
        self.loss = {}
        self.loss_rate = {}  # port -> the last rate set
        self.rss = {"switch": [], "max_kb": {}}
        self.bad_command_log = []
        self.bad_config_log = []
        self.sink_reports = []
        self.pktio_mempool = {"checked": 0, "leaked": 0}  # gen / sink pools checked at exit
        self.gen_reports = []
        self.cleaned = {"runtime_dirs": 0, "huge_files": 0}
        self.corpus = soak_frames.load_corpus(ROOT)
        self.rogue_tx = 0      # frames the rogue host's processes sent (== the rogue port's rx at the switch)
        self.fuzz_frames = 0
        self.pfc_frames = 0

    def fail(self, msg):
        self.failures.append(msg)
        print("soak: FAIL:", msg, flush=True)

    def say(self, msg):
        if self.a.verbose:
            print(f"[{self.now():7.2f}] {msg}", flush=True)

    def now(self):
        return time.monotonic() - self.t0 if hasattr(self, "t0") else 0.0

    def count(self, kind, ok=True):
        d = self.injected if ok else self.skipped
        d[kind] = d.get(kind, 0) + 1

    def later(self, dt, fn, label):
        self.seq += 1
        heapq.heappush(self.pending, (self.now() + dt, self.seq, fn, label))

    def path(self, name):
        return os.path.join(self.work, name)

    def prefix(self, what):
        self.n += 1
        return f"{self.tag}-{what}{self.n}"

    def start(self, role, cmd, prefix=None):
        self.n += 1
        out, err = self.path(f"{self.n:04d}-{role}.out"), self.path(f"{self.n:04d}-{role}.err")
        with open(out, "w") as fo, open(err, "w") as fe:
            popen = subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, cwd=self.work)
        p = Proc(role, cmd, out, err, popen, prefix)
        self.procs.append(p)
        return p

    def wait_file(self, path, timeout_s, procs, what):
        deadline = time.monotonic() + timeout_s
        while not os.path.exists(path):
            for p in procs:
                if not p.alive():
                    raise RuntimeError(f"{p.role} exited ({p.rc}) while waiting for {what}:\n{p.read()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout_s} s waiting for {what}")
            time.sleep(0.02)

    # ---- switch -----------------------------------------------------------------
    def switch_config(self):
        return switch_config(self.cfg, self.work)

    def start_switch(self):
        self.sw_cfg = self.switch_config()
        self.sw_cfg_path = self.path("switch.json")
        with open(self.sw_cfg_path, "w") as f:
            json.dump(self.sw_cfg, f, indent=1)
        prefix = self.prefix("sw")
        ready, report = self.path(f"{prefix}.ready"), self.path("switch-report.json")
        cmd = [self.bin["switch"]] + EAL_COMMON + [f"--file-prefix={prefix}", "--",
               "--config", self.sw_cfg_path, "--backoff", "--ready-file", ready, "--report", report,
               "--log-level", "warn"]
        self.sw = self.start("switch", cmd, prefix)
        self.sw.report = report
        self.wait_file(ready, 30, [self.sw], "sf-switch ready file")

    def tel(self, cmd):
        try:
            return telemetry(self.sw.prefix, cmd)
        except (OSError, ValueError) as e:
            self.fail(f"telemetry {cmd}: no answer from sf-switch ({e})")
            return None

    def memif(self, port, idx=0):
        """A memif client on the switch's `port`. sf-pktio and sf-nic give a memif
        devargs without bsize= one that holds a 9216 B frame (16384); a frame over
        bsize spans descriptors, which DPDK 22.11's memif splits and, mixed with
        one-descriptor frames at line rate, loses track of (docs/soak.md
        "Findings"). --memif-bsize B (e.g. 2048) overrides it on every host."""
        b = f",bsize={self.a.memif_bsize}" if self.a.memif_bsize else ""
        return f"net_memif{idx},role=client,socket={self.path(port + '.sock')}{b}"

    # ---- pktio ------------------------------------------------------------------
    def pktio(self, role, mode, ports, args, nice=0):
        prefix = self.prefix(role)
        cmd = (["nice", "-n", str(nice)] if nice else []) + [self.bin["pktio"]] + EAL_COMMON + \
              [f"--file-prefix={prefix}", "--no-telemetry", "--", "--mode", mode, "--backoff", "--log-level", "warn"]
        for d in ports:
            cmd += ["--port", d]
        cmd += [str(x) for x in args]
        return self.start(role, cmd, prefix)

    def start_gen(self):
        g = self.cfg["gen"]
        self.gen = self.pktio("gen", "gen", [self.memif(self.role_port["gen"])],
                              ["--size", g["size"], "--rate-gbps", g["rate_gbps"], "--count", 0, "--link-wait-s", 15,
                               "--linger-ms", 300])

    def start_sink(self):
        self.sink = self.pktio("sink", "sink", [self.memif(self.role_port["sink"])], ["--link-wait-s", 15])

    # ---- nic pairs -----------------------------------------------------------------
    def start_nic(self, role, oob_port, server_addr=None, kind="rc"):
        n = self.cfg[PAIRS[kind][0]]
        prefix = self.prefix(role)
        report, ready = self.path(f"{prefix}.report.json"), self.path(f"{prefix}.ready")
        cmd = [self.bin["nic"]] + EAL_COMMON + [f"--file-prefix={prefix}", "--no-telemetry", "--", n["test"],
               "--port", self.memif(self.role_port[role]), "--mac", NIC_MACS[role], "--ip", NIC_IPS[role],
               "--backoff", "--report", report, "--ready-file", ready, "--log-level", "warn",
               "-s", str(n["size"]), "-n", str(n["iterations"]), "--verify", "--speed", str(n["speed_gbps"]),
               "-p", str(oob_port)]
        if kind == "mrc":
            cmd += ["--transport", "mrc"]
        if "dscp" in n:
            cmd += ["--dscp", str(n["dscp"])]
        if server_addr:
            cmd.append(server_addr)
        else:
            cmd += ["--oob-wait-s", str(int(ORPHAN_GRACE_S))]  # a client killed before it connected
        p = self.start(role, cmd, prefix)
        p.report, p.ready = report, ready
        return p

    def pair_step(self, stopping, kind="rc"):
        """Advances a NIC pair (kind: rc or mrc): starts the client once the
        server is ready, judges a pair when both ended, starts the next one."""
        _, srv_role, cli_role, _ = PAIRS[kind]
        pr = self.pairs[kind]
        if pr is None:
            if not stopping:
                self.pairs_started += 1
                pr = {"n": self.pairs_started, "kind": kind, "oob": free_port(), "t0": self.now(), "client": None}
                self.pairs[kind] = pr
                pr["server"] = self.start_nic(srv_role, pr["oob"], kind=kind)
            return
        srv, cli = pr["server"], pr["client"]
        if cli is None:
            if os.path.exists(srv.ready):
                pr["client"] = self.start_nic(cli_role, pr["oob"], "127.0.0.1", kind=kind)
            elif not srv.alive():
                pr["client"] = False  # the server died before it was ready (killed)
            return
        if (cli is False or not cli.alive()) and not srv.alive():
            self.judge_pair(pr)
            self.pairs[kind] = None
            return
        # A server whose client was killed before it connected gives up by
        # itself after --oob-wait-s (exit 1, "no client connected"); one still
        # waiting well after that is a fault (it used to wait 600 s).
        if (cli is False or cli.killed) and srv.alive():
            pr.setdefault("orphan_since", self.now())
            if self.now() - pr["orphan_since"] > ORPHAN_GRACE_S + 15 and not pr.get("told"):
                pr["told"] = True
                self.fail(f"nic pair {pr['n']}: server still waiting {ORPHAN_GRACE_S + 15:g} s after its client "
                          f"was killed (--oob-wait-s {int(ORPHAN_GRACE_S)})")
                srv.interrupt()
            return
        # Otherwise a pair still running long after a transfer's time is a hang.
        if self.now() - pr["t0"] > self.a.pair_timeout_s:
            self.fail(f"nic pair {pr['n']}: still running after {self.a.pair_timeout_s} s (hang)")
            for p in (srv, cli):
                if p and p.alive():
                    p.interrupt()
                    p.wait(10)

    def nic_report(self, p):
        try:
            with open(p.report) as f:
                return json.load(f)
        except (OSError, json.JSONDecodeError):
            return None

    def judge_pair(self, pr):
        srv, cli = pr["server"], pr["client"] or None
        rec = {"pair": pr["n"], "transport": pr["kind"], "t_s": round(pr["t0"], 3)}
        outcome = None
        # A survivor of a killed peer may end before its report exists (the
        # out-of-band connect or exchange failed): exit 1 with a message.
        peer_killed = srv.killed or (cli is not None and cli.killed) or cli is None
        for side, p in (("server", srv), ("client", cli)):
            if p is None:
                rec[side] = {"started": False}
                continue
            r = {"rc": p.rc, "killed": p.killed}
            rep = None if p.killed else self.nic_report(p)
            if rep:
                w = rep["workloads"][0]
                r.update(status=w["status"], messages=w["messages"], verify_errors=w["verify_errors"])
                h0 = (rep.get("hosts") or [{}])[0]
                if h0.get("drops"):  # frames the NIC dropped, by reason (floods not for it, bad ICRC, ...)
                    r["drops"] = h0["drops"]
                m = h0.get("mrc")
                if m:  # the MRC transport's counters (docs/nic-app.md): retransmissions by cause, NACKs
                    r["mrc"] = {k: m[k] for k in ("tx_data_packets", "retransmits", "rtx_sack", "rtx_nack",
                                                  "rtx_timeout", "timeouts", "nacks_sent", "sacks_sent", "probes_sent",
                                                  "ooo_arrivals") if k in m}
                if w["verify_errors"] != 0:
                    self.fail(f"nic pair {pr['n']} {side}: {w['verify_errors']} verify errors (status {w['status']})")
                    outcome = "corrupt"
                # sf-nic's packet pool once its node is gone: back to its use at ready, but for packets of
                # bursts the port's fault guard abandoned (a memif peer that died inside a burst).
                mp = rep.get("mempool") or {}
                lports = (rep.get("loop") or {}).get("ports", [])
                faults = sum(q.get("burst_faults", 0) for q in lports)
                fault_pkts = sum(q.get("burst_fault_pkts", 0) for q in lports)
                leak = (mp.get("in_use_at_stop") or 0) - (mp.get("in_use_at_ready") or 0)
                r["mempool_leaked"] = leak
                if "in_use_at_stop" not in mp or leak < 0 or (leak > 0 and (faults == 0 or leak > fault_pkts * RX_SEGS)):
                    self.fail(f"nic pair {pr['n']} {side}: mempool {mp}: {leak} mbufs leaked ({faults} abandoned "
                              f"bursts, {fault_pkts} packets)")
            rec[side] = r
            if p.killed:
                continue
            if getattr(p, "hung", False):
                outcome = outcome or "hung"
            elif p.rc not in (0, 1):
                self.fail(f"nic pair {pr['n']} {side}: exit {p.rc} (crash?):\n{p.read()[-1500:]}")
                outcome = "crash"
            elif rep is None and not peer_killed:
                self.fail(f"nic pair {pr['n']} {side}: exit {p.rc} without a report:\n{p.read()[-1500:]}")
                outcome = "crash"
        want = self.cfg[PAIRS[pr["kind"]][0]]["iterations"]
        if outcome is None:
            s, c = rec["server"], rec["client"]
            if s.get("killed") or c.get("killed") or not c.get("started", True):
                outcome = "peer_killed"
                # The survivor: a QP error, a peer-gone end, or done; never a verify error (checked above).
                alive = c if s.get("killed") else s
                if alive.get("rc") == 0 and alive is c and alive.get("messages") != want:
                    self.fail(f"nic pair {pr['n']}: client exit 0 with {alive.get('messages')} of {want} messages")
            elif c["rc"] == 0 and s["rc"] == 0:
                if c.get("messages") == want and s.get("messages") == want and c.get("status") == "ok":
                    outcome = "completed"
                else:
                    self.fail(f"nic pair {pr['n']}: exit 0 but messages {c.get('messages')}/{s.get('messages')} "
                              f"of {want} (status {c.get('status')})")
                    outcome = "short"
            elif c["rc"] == 1 and c.get("status") not in (None, "ok"):
                outcome = "qp_error"  # e.g. transport retry counter exceeded after a long link fault
            elif c["rc"] == 0 and s["rc"] == 1:
                outcome = "server_error"
                self.fail(f"nic pair {pr['n']}: client done, server exit 1:\n{srv.read()[-1500:]}")
            else:
                outcome = "error"
                self.fail(f"nic pair {pr['n']}: client exit {c['rc']} status {c.get('status')}, server exit "
                          f"{s['rc']}:\n{cli.read()[-800:] if cli else ''}\n{srv.read()[-800:]}")
        rec["outcome"] = outcome
        self.transfers.append(rec)
        self.say(f"nic pair {pr['n']}: {outcome} {json.dumps(rec)}")

    # ---- faults ---------------------------------------------------------------------
    def set_port(self, what, port, value):
        r = self.tel(f"/softfabric/switch/{what},{port},{value}")
        if not isinstance(r, dict):
            self.fail(f"{what} {port} {value}: refused ({r})")

    def fault(self, e):
        k = e["kind"]
        if k in ("nic_kill", "mrc_kill"):
            pr = self.pairs.get("rc" if k == "nic_kill" else "mrc")
            p = pr and pr.get(e["side"])
            if not p or not p.alive():
                return self.count(k, False)
            p.kill9()
        elif k == "pktio_kill":
            p = getattr(self, e["target"])
            if p is None or not p.alive():
                return self.count(k, False)
            p.kill9()
            setattr(self, e["target"], None)
            self.later(e["down_s"], self.start_gen if e["target"] == "gen" else self.start_sink,
                       f"restart {e['target']}")
        elif k == "link_flap":
            self.hold(self.down, e["port"], e["down_s"], lambda p: self.set_port("port_admin", p, "down"),
                      lambda p: self.set_port("port_admin", p, "up"))
        elif k == "blackhole":
            self.hold(self.bh, e["port"], e["len_s"], lambda p: self.set_port("port_blackhole", p, "on"),
                      lambda p: self.set_port("port_blackhole", p, "off"))
        elif k == "loss":
            def loss_on(p):
                self.loss_rate[p] = float(f"{e['rate']:g}")
                self.set_port("port_loss", p, f"{e['rate']:g}")
            self.hold(self.loss, e["port"], e["len_s"], loss_on,
                      lambda p: self.set_port("port_loss", p, "0"), always_on=True)
        elif k == "reset":
            r = self.tel("/softfabric/switch/reset")
            if not isinstance(r, dict):
                self.fail(f"reset refused: {r}")
        elif k in ("pfc_storm", "malformed_burst"):
            if self.rogue is not None:
                # One rogue host at a time: retried every 0.5 s for up to 10 s, then skipped.
                e["tries"] = e.get("tries", 0) + 1
                if e["tries"] > 20:
                    return self.count(k, False)
                return self.later(0.5, lambda: self.fault(e), f"retry {k}")
            self.start_rogue(e)
        elif k == "bad_command":
            self.bad_command(BAD_COMMANDS[e["variant"] % len(BAD_COMMANDS)])
        elif k == "bad_config":
            self.bad_config(e["variant"])
        self.count(k)

    def hold(self, table, port, dur, on, off, always_on=False):
        """A fault on `port` for `dur` s; overlapping faults of one kind on a
        port end when the last one does."""
        if table.get(port, 0) == 0 or always_on:
            on(port)
        table[port] = table.get(port, 0) + 1

        def end():
            table[port] -= 1
            if table[port] == 0:
                off(port)
        self.later(dur, end, f"end fault {port}")

    def start_rogue(self, e):
        port = self.role_port["rogue"]
        if e["kind"] == "pfc_storm":
            pc = self.path("pfc-storm.pcap")
            if not os.path.exists(pc):
                soak_frames.write_pcap(pc, [soak_frames.pfc_storm_frame()])
            self.rogue = self.pktio("rogue-pfc", "fwd",
                                    [self.memif(port), f"net_pcap1,rx_pcap={pc},infinite_rx=1,tx_pcap=/dev/null"],
                                    ["--rate-gbps", self.cfg["rogue"]["pfc_rate_gbps"], "--duration", e["len_s"],
                                     "--link-wait-s", 15, "--linger-ms", ROGUE_LINGER_MS])
        else:
            pc = self.path(f"burst-{e['seed']}.pcap")
            targets = [(bytes.fromhex(NIC_MACS[r].replace(":", "")), [int(x) for x in NIC_IPS[r].split(".")])
                       for r in ("nic_server", "nic_client")]
            soak_frames.write_pcap(pc, soak_frames.burst(e["seed"], e["frames"], self.corpus, targets))
            # No infinite_rx: net_pcap refuses it with jumbo (multi-segment) frames; the pcap holds the burst.
            self.rogue = self.pktio("rogue-fuzz", "fwd", [f"net_pcap0,rx_pcap={pc}", self.memif(port)],
                                    ["--rate-gbps", self.cfg["rogue"]["malformed_rate_gbps"], "--count", e["frames"],
                                     "--duration", 20, "--link-wait-s", 15, "--linger-ms", ROGUE_LINGER_MS])
            self.rogue.pcap = pc
            self.rogue.frames = e["frames"]
        self.rogue.kind = e["kind"]

    def port_state(self, port):
        t = self.tel(f"/softfabric/switch/port,{port}") or {}
        return {k: t.get(k) for k in ("admin_status", "blackhole", "loss_rate")}

    def expected_state(self, port):
        """The port state the soak's own faults asked for (admin, blackhole, loss rate)."""
        return ("down" if self.down.get(port) else "up", "on" if self.bh.get(port) else "off",
                self.loss_rate.get(port, 0.0) if self.loss.get(port) else 0.0)

    def settled(self, port, timeout_s=3.0):
        """Waits (bounded) until the port's state is what the soak asked for:
        the datapath applies telemetry requests at its next poll, not at once.
        Returns the last state read."""
        deadline = time.monotonic() + timeout_s
        while True:
            st = self.port_state(port)
            got = (st.get("admin_status"), st.get("blackhole"), float(st.get("loss_rate") or 0))
            want = self.expected_state(port)
            if got[:2] == want[:2] and abs(got[2] - want[2]) < 1e-6:
                return None
            if time.monotonic() > deadline:
                return f"{port} is {got}, the soak asked for {want}"
            time.sleep(0.05)

    def bad_command(self, cmd):
        port = "Ethernet4" if "Ethernet4" in cmd else "Ethernet0" if "Ethernet0" in cmd else \
            "Ethernet8" if "Ethernet8" in cmd else "Ethernet12"
        try:
            r = telemetry(self.sw.prefix, cmd)
        except (OSError, ValueError) as e:
            r = f"no answer: {e}"
        # Refused, and the port stays as the soak's own faults set it.
        wrong = self.settled(port)
        ok = r is None and wrong is None
        self.bad_command_log.append({"cmd": cmd[:80], "reply": r if r is None or isinstance(r, str) else "accepted",
                                     "ok": ok})
        if not ok:
            self.fail(f"bad telemetry command {cmd[:80]}: reply {r}; {wrong or 'state as asked'} "
                      "(want refused, unchanged)")

    def bad_configs(self):
        """[(what, config text, needles)]: broken variants of the running config."""
        base = self.sw_cfg

        def variant(fn):
            c = json.loads(json.dumps(base))
            fn(c)
            return json.dumps(c)
        p0 = self.ports[0]
        return [
            ("wrong type", variant(lambda c: c["PORT"][p0].update(speed="fast")), [f"PORT.{p0}.speed"]),
            ("unknown key", variant(lambda c: c["PORT"][p0].update(sped=10)), [f"PORT.{p0}", "sped"]),
            ("unknown profile", variant(lambda c: c["BUFFER_PG"].update({f"{p0}|3": {"profile": "nope"}})),
             ["BUFFER_PG", "nope"]),
            ("FDB port out of range", variant(lambda c: c["FDB"].update({"02:00:00:00:00:77": {"port": "Ethernet99"}})),
             ["FDB", "Ethernet99"]),
            ("pfc_enable out of range", variant(lambda c: c["PORT_QOS_MAP"]["global"].update(pfc_enable="3,9")),
             ["PORT_QOS_MAP"]),
            ("truncated JSON", json.dumps(base)[:-7], ["soak-bad-config"]),
        ]

    def bad_config(self, variant):
        what, text, needles = self.bad_configs()[variant % 6]
        path = self.path("soak-bad-config.json")
        with open(path, "w") as f:
            f.write(text)
        prefix = self.prefix("badcfg")
        cmd = [self.bin["switch"]] + EAL_COMMON + ["--no-telemetry", f"--file-prefix={prefix}", "--",
                                                   "--config", path, "--backoff"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=self.work)
            rc, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired:
            rc, err = "timeout", ""
        ok = rc == 2 and all(n in err for n in needles) and self.sw.alive() and \
            not os.path.exists(os.path.join("/var/run/dpdk", prefix))
        last = err.strip().splitlines()[-1][:160] if err.strip() else ""
        self.bad_config_log.append({"what": what, "rc": rc, "message": last, "ok": ok})
        if not ok:
            self.fail(f"bad config '{what}': exit {rc} (want 2 naming {needles}), running switch alive "
                      f"{self.sw.alive()}:\n{err[-1500:]}")

    # ---- the run -----------------------------------------------------------------------
    def sample_rss(self):
        t = round(self.now(), 1)
        r, anon = rss_kb(self.sw.pid), rss_kb(self.sw.pid, "RssAnon")
        if r:
            self.rss["switch"].append([t, r, anon])
        for p in self.procs:
            if p.alive():
                v = rss_kb(p.pid)
                if v:
                    self.rss["max_kb"][p.role] = max(self.rss["max_kb"].get(p.role, 0), v)

    def check_crashes_live(self):
        if not self.sw.alive():
            raise RuntimeError(f"sf-switch exited ({self.sw.rc}) during the soak:\n{self.sw.read()[-3000:]}")

    def run(self):
        a = self.a
        names = [p for p in self.ports]
        kill_targets = ["gen", "sink"]
        self.start_switch()
        self.schedule = soak_schedule.draw(self.cfg, a.seed, a.seconds, fault_ports=names, kill_targets=kill_targets,
                                           bad_commands=len(BAD_COMMANDS), bad_configs=6)
        with open(os.path.join(self.out, "soak-schedule.json"), "w") as f:
            json.dump(self.schedule, f, indent=0)
        self.t0 = time.monotonic()
        self.start_sink()
        self.start_gen()
        evs = list(self.schedule)
        next_rss = 0.0
        while self.now() < a.seconds:
            t = self.now()
            while evs and evs[0]["t_s"] <= t:
                e = evs.pop(0)
                self.say(f"event {json.dumps(e)}")
                self.fault(e)
            while self.pending and self.pending[0][0] <= t:
                _, _, fn, label = heapq.heappop(self.pending)
                self.say(label)
                fn()
            for kind in self.kinds:
                self.pair_step(stopping=False, kind=kind)
            if self.rogue is not None and not self.rogue.alive():
                self.judge_rogue()
            if t >= next_rss:
                self.sample_rss()
                next_rss = t + 1.0
            self.check_crashes_live()
            time.sleep(0.02)
        self.finish()

    def judge_rogue(self):
        r = self.rogue
        self.rogue = None
        r.poll()
        j = r.last_json() if r.rc == 0 else None
        if r.rc != 0 or j is None or any(m in r.read() for m in CRASH_MARKS):
            self.fail(f"{r.role}: exit {r.rc}:\n{r.read()[-1500:]}\n{r.read('out')[-1500:]}")
            return
        memif = [p for p in j["ports"] if p["driver"] == "net_memif"][0]
        self.rogue_tx += memif["tx_pkts"]
        if r.kind == "malformed_burst":
            self.fuzz_frames += memif["tx_pkts"]
            if j["fwd"]["forwarded"] != r.frames or memif["tx_pkts"] != r.frames:
                self.fail(f"{r.role}: sent {memif['tx_pkts']} (forwarded {j['fwd']['forwarded']}) of {r.frames} frames")
        else:
            self.pfc_frames += memif["tx_pkts"]
        if getattr(r, "pcap", None):
            os.unlink(r.pcap)

    def finish(self):
        """Faults end, traffic stops in order, the switch's report is judged."""
        # Every pending fault ends now; restarts happen now.
        while self.pending:
            _, _, fn, label = heapq.heappop(self.pending)
            self.say(f"end: {label}")
            fn()
        if self.rogue is not None:
            # It ends by itself (a storm's duration, a burst's count, then its linger); a SIGINT
            # while it is still starting would end it before its handler is installed.
            try:
                self.rogue.popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.rogue.interrupt()
                self.rogue.wait(15)
            self.judge_rogue()
        # The last NIC pairs end by themselves (bounded).
        deadline = time.monotonic() + self.a.pair_timeout_s
        while any(self.pairs.values()) and time.monotonic() < deadline:
            for kind in self.kinds:
                self.pair_step(stopping=True, kind=kind)
            time.sleep(0.05)
        for pr in self.pairs.values():
            if pr is None:
                continue
            self.fail(f"nic pair {pr['n']} ({pr['kind']}) did not end within {self.a.pair_timeout_s} s after the soak")
            for p in (pr["server"], pr["client"]):
                if p:
                    p.interrupt()
                    p.wait(10)
        self.sample_rss()
        if self.gen is not None:
            self.gen.interrupt()
            self.gen.wait(20)
        # The switch drains into the live sink, then stops; then the sink.
        self.sw.interrupt()
        self.sw.wait(30)
        if self.sink is not None:
            self.sink.interrupt()
            self.sink.wait(20)
        self.judge_end()

    def judge_end(self):
        # Exit status of every process we did not SIGKILL.
        for p in self.procs:
            p.poll()
            if p.rc is None:
                self.fail(f"{p.role} (pid {p.pid}) still running at the end")
                p.popen.kill()
                p.popen.wait()
                continue
            marks = [m for m in CRASH_MARKS if m in p.read() or m in p.read("out")]
            if marks and not p.killed:
                self.fail(f"{p.role} (pid {p.pid}) printed {marks}:\n{p.read()[-1500:]}")
            if p.killed:
                continue
            if getattr(p, "hung", False):
                self.fail(f"{p.role} (pid {p.pid}) did not stop when asked")
            elif p.role in ("switch", "gen", "sink") and p.rc != 0:
                self.fail(f"{p.role} (pid {p.pid}) exit {p.rc}:\n{p.read()[-1500:]}")
            if p.role in ("gen", "sink") and p.rc == 0:
                # Its packet pool after the drain: back to its use at ready, but for bursts the port's
                # fault guard abandoned (a memif peer that died inside one).
                j = p.last_json() or {}
                mp = j.get("mempool") or {}
                faults = sum(q.get("burst_faults", 0) for q in j.get("ports", []))
                leak = (mp.get("in_use_at_stop") or 0) - (mp.get("in_use_at_ready") or 0)
                self.pktio_mempool["checked"] += 1
                self.pktio_mempool["leaked"] += leak
                if "in_use_at_stop" not in mp or leak < 0 or (leak > 0 and faults == 0):
                    self.fail(f"{p.role} (pid {p.pid}): mempool {mp}: {leak} mbufs leaked ({faults} abandoned bursts)")
            if p.role == "sink" and p.rc == 0:
                j = p.last_json() or {}
                s = j.get("sink", {})
                self.sink_reports.append(s)
                if s.get("payload_errors", 1) != 0:
                    self.fail(f"sink (pid {p.pid}): payload errors {s}")
            if p.role == "gen" and p.rc == 0:
                self.gen_reports.append((p.last_json() or {}).get("gen", {}))
        self.check_switch()
        self.check_leftovers()

    def check_switch(self):
        try:
            with open(self.sw.report) as f:
                rep = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            self.fail(f"no switch report: {e}")
            return
        self.sw_report = rep
        if self.out != self.work:
            shutil.copy(self.sw.report, os.path.join(self.out, "switch-report.json"))
        ports = rep["ports"]
        for p in ports:
            n = p["name"]
            if sum(p["drops"].values()) != p["dropped"]:
                self.fail(f"{n}: dropped {p['dropped']} != sum of causes {p['drops']}")
            qtx = sum(q["tx_packets"] for q in p["queues"])
            if qtx != p["tx_packets"]:
                self.fail(f"{n}: tx_packets {p['tx_packets']} != sum over queues {qtx}")
            if sum(q["tx_bytes"] for q in p["queues"]) != p["tx_bytes"]:
                self.fail(f"{n}: tx_bytes {p['tx_bytes']} != sum over queues")
            depth = sum(q["depth_packets"] for q in p["queues"])
            held = sum(g["held_packets"] for g in p["pgs"])
            occ = sum(g["occupancy_bytes"] for g in p["pgs"])
            if depth or held or occ:
                self.fail(f"{n}: at stop {depth} packets queued, {held} held, {occ} PG bytes in use")
            if p.get("admin_status") != "up" or p.get("blackhole") or p.get("loss_rate"):
                self.fail(f"{n}: fault state left at stop: admin {p.get('admin_status')} blackhole "
                          f"{p.get('blackhole')} loss {p.get('loss_rate')}")
        rx = sum(p["rx_packets"] for p in ports)
        ctl = sum(p["rx_mac_control"] for p in ports)
        credit = sum(p.get("rx_credit_ignored", 0) for p in ports)  # credit frames on a non-credit port: consumed
        extra = sum(p["flood_extra_copies"] for p in ports)
        tx = sum(p["tx_packets"] for p in ports)
        dropped = sum(p["dropped"] for p in ports)
        self.conservation = {"rx": rx, "rx_mac_control": ctl, "rx_credit_ignored": credit,
                             "flood_extra_copies": extra, "tx": tx, "dropped": dropped,
                             "ok": tx + dropped == rx - ctl - credit + extra}
        if not self.conservation["ok"]:
            self.fail(f"conservation: tx {tx} + dropped {dropped} = {tx + dropped} != rx {rx} - mac_control {ctl} "
                      f"- credit_ignored {credit} + flood_extra_copies {extra} = {rx - ctl - credit + extra}")
        # The rogue port's only peers are the rogue processes: the switch received what they sent. More is a
        # transport fault (memif reading stale descriptors: docs/soak.md "Findings"); fewer are frames left
        # in the ring when a sender left before the switch read them (memif frees its rings then: the
        # senders linger ROGUE_LINGER_MS for this), counted, not a switch fault.
        rogue_rx = [p for p in ports if p["name"] == self.role_port["rogue"]][0]["rx_packets"]
        self.rogue_lost = max(0, self.rogue_tx - rogue_rx)
        if rogue_rx > self.rogue_tx:
            self.fail(f"{self.role_port['rogue']}: switch received {rogue_rx} frames, the rogue host sent only "
                      f"{self.rogue_tx}")
        # tx_left_at_stop: handed to a port's tx buffer (within tx_packets) but not taken by the driver
        # when the switch stopped (a NIC's port whose peer had left): freed, within driver_tx_drops.
        left = rep.get("tx_left_at_stop", 0)
        if left > sum(p.get("driver_tx_drops", 0) for p in ports):
            self.fail(f"tx_left_at_stop {left} > driver_tx_drops {sum(p.get('driver_tx_drops', 0) for p in ports)}")
        if rep["buffer"]["used_bytes"] != 0:
            self.fail(f"buffer still holds {rep['buffer']['used_bytes']} bytes")
        # The pool is back to its use at ready, except for what bursts abandoned by the fault guard (a
        # memif peer SIGKILLed inside a burst: common/dpdk/port.h) left out of it, which the switch counts
        # exactly (burst_fault_leaked_mbufs: the packet an rx burst was building; a tx burst's unsent
        # packets are freed). A fault whose mbufs could not be counted (burst_fault_inexact: a shared
        # mbuf in a tx burst) may leak its tx packets (burst_fault_pkts) on top.
        mp = rep.get("mempool", {})
        faults = sum(p.get("burst_faults", 0) for p in ports)
        leaked_counted = sum(p.get("burst_fault_leaked_mbufs", 0) for p in ports)
        inexact = sum(p.get("burst_fault_inexact", 0) for p in ports)
        tx_pkts = sum(p.get("burst_fault_pkts", 0) for p in ports)
        leak = (mp.get("in_use_at_stop") or 0) - (mp.get("in_use_at_ready") or 0)
        self.mempool = {"leaked": leak, "burst_faults": faults, "burst_fault_leaked_mbufs": leaked_counted,
                        "burst_fault_inexact": inexact, "burst_fault_pkts": tx_pkts}
        exact_ok = leak == leaked_counted if inexact == 0 else leaked_counted <= leak <= leaked_counted + tx_pkts * RX_SEGS
        if "in_use_at_stop" not in mp or not exact_ok:
            self.fail(f"mempool: {mp.get('in_use_at_stop')} mbufs in use at stop, {mp.get('in_use_at_ready')} at "
                      f"ready: {leak} leaked; the switch counted {leaked_counted} left by {faults} abandoned bursts "
                      f"({inexact} not exactly countable, {tx_pkts} tx packets dropped)")

    def check_leftovers(self):
        ours = [p for p in self.procs]
        huge = hugetlbfs_mounts()
        for p in ours:
            if not p.prefix:
                continue
            rd = os.path.join("/var/run/dpdk", p.prefix)
            hf = []
            for m in huge:
                try:
                    hf += [os.path.join(m, n) for n in os.listdir(m) if n.startswith(p.prefix + "map_")]
                except OSError:
                    pass
            if p.killed:  # SIGKILL leaves them; the soak removes them (what an operator's cleanup does)
                if os.path.isdir(rd):
                    shutil.rmtree(rd, ignore_errors=True)
                    self.cleaned["runtime_dirs"] += 1
                for f in hf:
                    os.unlink(f)
                    self.cleaned["huge_files"] += 1
                continue
            if os.path.isdir(rd):
                self.fail(f"{p.role} (pid {p.pid}, exit {p.rc}) left {rd}")
                shutil.rmtree(rd, ignore_errors=True)
            if hf:
                self.fail(f"{p.role} (pid {p.pid}) left huge page files {hf}")
                for f in hf:
                    os.unlink(f)
        socks = [n for n in os.listdir(self.work) if n.endswith(".sock")]
        if socks:
            self.fail(f"memif sockets left after sf-switch stopped: {socks}")
        cores = [n for n in os.listdir(self.work) if n.startswith("core")]
        if cores:
            self.fail(f"core files: {cores}")

    def summary(self):
        rep = getattr(self, "sw_report", None) or {}
        drops = {}
        for p in rep.get("ports", []):
            for k, v in p["drops"].items():
                drops[k] = drops.get(k, 0) + v
        outcomes, by_transport = {}, {}
        for t in self.transfers:
            outcomes[t["outcome"]] = outcomes.get(t["outcome"], 0) + 1
            bt = by_transport.setdefault(t["transport"], {"pairs": 0, "outcomes": {}, "mrc": {}, "nic_drops": {}})
            bt["pairs"] += 1
            bt["outcomes"][t["outcome"]] = bt["outcomes"].get(t["outcome"], 0) + 1
            for side in ("server", "client"):
                for k, v in t.get(side, {}).get("mrc", {}).items():
                    bt["mrc"][k] = bt["mrc"].get(k, 0) + v
                for k, v in t.get(side, {}).get("drops", {}).items():
                    bt["nic_drops"][k] = bt["nic_drops"].get(k, 0) + v
        series = self.rss["switch"]
        half = [x for x in series if x[0] >= self.a.seconds / 2]
        first = [x for x in series if x[0] < self.a.seconds / 2]
        return {
            "soak": "pass" if not self.failures else "fail",
            "seed": self.a.seed, "seconds": self.a.seconds,
            "events_scheduled": soak_schedule.counts(self.schedule) if hasattr(self, "schedule") else {},
            "events_injected": dict(sorted(self.injected.items())),
            "events_skipped": dict(sorted(self.skipped.items())),
            "switch": {"rx_packets": rep and self.conservation["rx"], "tx_packets": rep and self.conservation["tx"],
                       "dropped": rep and self.conservation["dropped"],
                       "flood_extra_copies": rep and self.conservation["flood_extra_copies"],
                       "conservation_ok": rep and self.conservation["ok"], "drops": dict(sorted(drops.items())),
                       "trimming": rep.get("trimming"), "mempool": rep.get("mempool"), "mempool_check": getattr(self, "mempool", None),
                       # sf-switch's memory over time: VmRSS swings with the memif peers' rings it maps
                       # while they are connected; RssAnon (its own memory) is the leak signal.
                       "rss_samples": len(series),
                       "vmrss_kb_max": max(x[1] for x in series) if series else None,
                       "rss_anon_kb_first_half_max": max(x[2] for x in first) if first else None,
                       "rss_anon_kb_second_half_max": max(x[2] for x in half) if half else None,
                       "rss_anon_kb_last": series[-1][2] if series else None},
            "rogue": {"fuzz_frames": self.fuzz_frames, "pfc_frames": self.pfc_frames,
                      "lost_at_disconnect": getattr(self, "rogue_lost", None)},
            "rdma": {"pairs": len(self.transfers), "outcomes": dict(sorted(outcomes.items())),
                     "by_transport": dict(sorted(by_transport.items())),
                     "verify_errors": sum(t.get(s, {}).get("verify_errors", 0) for t in self.transfers
                                          for s in ("server", "client")),
                     # sf-nic processes whose pool was checked after their node was gone, and what leaked
                     "mempool_checked": sum("mempool_leaked" in t.get(s, {}) for t in self.transfers
                                            for s in ("server", "client")),
                     "mempool_leaked": sum(t.get(s, {}).get("mempool_leaked", 0) for t in self.transfers
                                           for s in ("server", "client"))},
            "pktio": {"sinks": len(self.sink_reports), "mempool": self.pktio_mempool,
                      "sink_rx": sum(s.get("rx_pkts", 0) for s in self.sink_reports),
                      "payload_errors": sum(s.get("payload_errors", 0) for s in self.sink_reports)},
            "bad_commands": len(self.bad_command_log), "bad_configs": len(self.bad_config_log),
            "cleaned_after_sigkill": self.cleaned,
            "max_rss_kb": self.rss["max_kb"],
            "failures": self.failures,
        }

    def close(self):
        for p in self.procs:
            if p.alive():
                p.interrupt()
                try:
                    p.popen.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.popen.kill()
                    p.popen.wait()
            if p.prefix:
                shutil.rmtree(os.path.join("/var/run/dpdk", p.prefix), ignore_errors=True)
        if self.a.keep:  # (without --out nothing else is kept either: --out DIR is where the report goes)
            print("soak: work dir kept:", self.work)
        else:
            shutil.rmtree(self.work, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="soak", description="chaos soak with full accounting (docs/soak.md)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--config", default=os.path.join(ROOT, "config", "soak", "soak.json"))
    ap.add_argument("--seconds", type=float, default=60.0, help="fault injection time (default 60)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="write soak-report.json, soak-schedule.json, rss.json here (default: not kept)")
    ap.add_argument("--pair-timeout-s", type=float, default=90.0, help="a NIC pair running longer is a hang")
    ap.add_argument("--memif-bsize", type=int, default=MEMIF_BSIZE, metavar="B",
                    help="memif buffer size of every host (default 0: the tools' 16384, a frame in one descriptor; "
                    "2048, the PMD's own default, DPDK 22.11 mishandles with frames over it: docs/soak.md \"Findings\")")
    ap.add_argument("--keep", action="store_true", help="keep the work dir (logs, configs)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every event as it happens")
    a = ap.parse_args(argv)
    if a.seconds <= 0:
        print("soak: --seconds must be > 0", file=sys.stderr)
        return 2
    try:
        cfg = soak_schedule.load(a.config)
    except soak_schedule.ScheduleError as e:
        print(f"soak: {e}", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("SKIP: the soak needs root (huge pages, /var/run/dpdk)")
        return 77
    wall0 = time.monotonic()
    s = Soak(a, cfg)
    try:
        s.run()
    except (RuntimeError, subprocess.SubprocessError) as e:
        s.fail(str(e))
    except KeyboardInterrupt:
        s.fail("interrupted")
    finally:
        s.close()
    out = s.summary()
    out["wall_s"] = round(time.monotonic() - wall0, 1)
    if a.out:
        with open(os.path.join(a.out, "soak-report.json"), "w") as f:
            json.dump(dict(out, transfers=s.transfers, bad_command_log=s.bad_command_log,
                           bad_config_log=s.bad_config_log, rss_switch=s.rss["switch"]), f, indent=1)
    print(json.dumps(out))
    return 0 if not s.failures else 1


if __name__ == "__main__":
    sys.exit(main())
