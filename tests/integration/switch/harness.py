"""Process harness for the sf-switch integration tests (switch_test.py).

One Harness per test case owns a temp dir, every process it starts (by PID,
never by name), the DPDK file prefixes it chose and the veths it created; its
close() (called from a finally) stops what is still running, removes the temp
dir, the prefixes' runtime dirs and any huge page files left under them, and
deletes the veths. Output of every process goes to files in the temp dir (no
pipes to fill up). Waiting is bounded polling on external processes and files,
never a sleep to let time pass in the code under test.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

SKIP = 77

# Every DPDK process: no PCI probing (the VM's virtio NIC must not be touched),
# and lcore 0 floats over both CPUs so that several poll loops share the
# machine instead of all being pinned to CPU 0 (EAL's default for lcore 0).
EAL_COMMON = ["--no-pci", "--lcores=0@(0,1)", "--log-level=*:warning"]


class TestFailure(AssertionError):
    pass


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


def last_json(text, what="process"):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    raise TestFailure(f"no JSON line in the output of {what}:\n{text[-3000:]}")


def wait_until(pred, timeout_s, what, poll_s=0.02, procs=()):
    """Polls pred() until true; fails after timeout_s or when one of procs
    exited early (with its stderr tail)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if pred():
            return
        for p in procs:
            if p.poll() is not None:
                raise TestFailure(f"{p.name} exited ({p.returncode}) while waiting for {what}:\n{p.err_tail()}")
        if time.monotonic() >= deadline:
            raise TestFailure(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(poll_s)


class Proc:
    """A started process with its output in files."""

    def __init__(self, name, cmd, out_path, err_path, popen):
        self.name, self.cmd, self.out_path, self.err_path, self.popen = name, cmd, out_path, err_path, popen
        self.pid = popen.pid
        self.returncode = None

    def poll(self):
        self.returncode = self.popen.poll()
        return self.returncode

    def out(self):
        with open(self.out_path, errors="replace") as f:
            return f.read()

    def err(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def err_tail(self, n=3000):
        return self.err()[-n:]

    def wait(self, timeout_s):
        """Waits for exit; on timeout kills it (own PID) and fails."""
        try:
            self.returncode = self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            raise TestFailure(f"{self.name} did not exit within {timeout_s} s:\n{self.err_tail()}")
        return self.returncode

    def stop(self, timeout_s=15):
        """SIGINT (clean stop with final report), then wait."""
        if self.poll() is None:
            self.popen.send_signal(signal.SIGINT)
        return self.wait(timeout_s)

    def json(self):
        return last_json(self.out(), self.name)


class Harness:
    def __init__(self, build_dir, name):
        self.build = os.path.abspath(build_dir)
        self.sf_switch = os.path.join(self.build, "switch", "app", "sf-switch")
        self.sf_pktio = os.path.join(self.build, "tools", "sf-pktio", "sf-pktio")
        for b in (self.sf_switch, self.sf_pktio):
            check(os.access(b, os.X_OK), f"{b} not built")
        self.dir = tempfile.mkdtemp(prefix=f"sf-swt-{name}-")
        self.tag = f"swt{os.getpid() % 100000}"
        self.procs = []
        self.prefixes = []
        self.veths = []
        self.n = 0

    # ---- naming -------------------------------------------------------------
    def path(self, name):
        return os.path.join(self.dir, name)

    def prefix(self, what):
        self.n += 1
        p = f"{self.tag}-{what}{self.n}"
        self.prefixes.append(p)
        return p

    def memif(self, idx, role, sock):
        return f"net_memif{idx},role={role},socket={sock}"

    # ---- processes ----------------------------------------------------------
    def start(self, name, cmd, env=None):
        self.n += 1
        out = self.path(f"{self.n:02d}-{name}.out")
        err = self.path(f"{self.n:02d}-{name}.err")
        with open(out, "w") as fo, open(err, "w") as fe:
            popen = subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, cwd=self.dir, env=env)
        p = Proc(name, cmd, out, err, popen)
        self.procs.append(p)
        return p

    def write_json(self, name, obj):
        path = self.path(name)
        with open(path, "w") as f:
            json.dump(obj, f, indent=1)
        return path

    def start_switch(self, cfg, app=(), eal=(), telemetry=False, name="sf-switch", ready_timeout_s=20, lcores=None):
        """Writes cfg, starts sf-switch with its own prefix and --backoff and
        waits (bounded) for its ready file. Returns the Proc with .prefix,
        .report (path) and .config (path). lcores replaces EAL_COMMON's
        --lcores (a sharded switch needs one lcore per shard)."""
        cfg_path = self.write_json(f"{name}-{self.n + 1}.json", cfg)
        prefix = self.prefix("sw")
        ready = self.path(f"{prefix}.ready")
        report = self.path(f"{prefix}.report.json")
        eal_common = [a for a in EAL_COMMON if not a.startswith("--lcores")] + [f"--lcores={lcores}"] if lcores \
            else EAL_COMMON
        cmd = [self.sf_switch] + eal_common + [f"--file-prefix={prefix}"] + \
              ([] if telemetry else ["--no-telemetry"]) + list(eal) + \
              ["--", "--config", cfg_path, "--backoff", "--ready-file", ready, "--report", report,
               "--log-level", "warn"] + [str(a) for a in app]
        p = self.start(name, cmd)
        p.prefix, p.report, p.config = prefix, report, cfg_path
        wait_until(lambda: os.path.exists(ready), ready_timeout_s, f"{name} ready file", procs=[p])
        return p

    def stop_switch(self, p, timeout_s=15):
        """SIGINT; returns the final report (stdout JSON line == --report file)."""
        rc = p.stop(timeout_s)
        check(rc == 0, f"{p.name} exited {rc}:\n{p.err_tail()}")
        rep = p.json()
        with open(p.report) as f:
            check(json.load(f) == rep, "--report file differs from the stdout report")
        return rep

    def pktio(self, name, mode, ports, args=(), ready=False, nice=0):
        """Starts sf-pktio (own prefix, --backoff). With ready=True waits for
        its ready file (ports up, loop running). nice > 0 runs it at a lower
        CPU priority (a sender that polls without pause must not starve the
        switch on 2 cores)."""
        prefix = self.prefix(mode)
        cmd = (["nice", "-n", str(nice)] if nice else []) + [self.sf_pktio] + EAL_COMMON + [f"--file-prefix={prefix}", "--no-telemetry", "--"]
        cmd += ["--mode", mode, "--backoff", "--log-level", "warn"]
        for d in ports:
            cmd += ["--port", d]
        rf = self.path(f"{prefix}.ready")
        cmd += ["--ready-file", rf] + [str(a) for a in args]
        p = self.start(name, cmd)
        p.prefix = prefix
        if ready:
            wait_until(lambda: os.path.exists(rf), 20, f"{name} ready file", procs=[p])
        return p

    def finish(self, p, timeout_s=30, ok_rc=(0,)):
        rc = p.wait(timeout_s)
        check(rc in ok_rc, f"{p.name} exited {rc}:\n{p.err_tail()}")
        return p.json()

    # ---- veths ----------------------------------------------------------------
    def add_veth(self, a, b):
        subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True,
                       capture_output=True)
        self.veths.append(a)

    def dump_logs(self, n=1500):
        """Prints every process's command line, exit status and stderr tail."""
        for p in self.procs:
            p.poll()
            print(f"--- {p.name} (pid {p.pid}, exit {p.returncode}): {' '.join(p.cmd)}")
            tail = p.err_tail(n).strip()
            if tail:
                print(tail)

    # ---- teardown ------------------------------------------------------------
    def close(self, keep_dir=False):
        for p in self.procs:
            if p.poll() is None:
                try:
                    p.popen.send_signal(signal.SIGINT)
                    p.popen.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.popen.kill()
                    p.popen.wait()
        leaked = []
        for prefix in self.prefixes:
            shutil.rmtree(os.path.join("/var/run/dpdk", prefix), ignore_errors=True)
            for mnt in hugetlbfs_mounts():
                try:
                    names = os.listdir(mnt)
                except OSError:
                    continue
                for n in names:
                    if n.startswith(prefix + "map_"):
                        leaked.append(os.path.join(mnt, n))
                        try:
                            os.unlink(os.path.join(mnt, n))
                        except OSError:
                            pass
        for v in self.veths:
            subprocess.run(["ip", "link", "del", v], capture_output=True)
        if keep_dir:
            print("kept", self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
        return leaked


def af_xdp_unavailable(mount_bpffs=False):
    """Why af_xdp cannot run here (None when it can): the kernel's AF_XDP
    sockets and DPDK's net_af_xdp PMD; with mount_bpffs, bpffs is mounted at
    /sys/fs/bpf when it is not (an XDP program's maps live there)."""
    import glob
    import socket
    try:
        socket.socket(44, socket.SOCK_RAW, 0).close()  # AF_XDP
    except OSError as e:
        return f"kernel lacks AF_XDP sockets ({e})"
    if not glob.glob("/usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so*") and \
            not glob.glob("/usr/local/lib/*/dpdk/pmds-*/librte_net_af_xdp.so*"):
        return "DPDK has no net_af_xdp PMD"
    if mount_bpffs and not os.path.ismount("/sys/fs/bpf"):
        subprocess.run(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"], capture_output=True, timeout=30)
    return None


def hugetlbfs_mounts():
    out = []
    with open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) > 2 and parts[2] == "hugetlbfs":
                out.append(parts[1])
    return out


def huge_files(prefix):
    out = []
    for mnt in hugetlbfs_mounts():
        try:
            out += [os.path.join(mnt, n) for n in os.listdir(mnt) if n.startswith(prefix + "map_")]
        except OSError:
            pass
    return out


# ---- switch report helpers -------------------------------------------------------

def port_by_name(report, name):
    for p in report["ports"]:
        if p["name"] == name:
            return p
    raise TestFailure(f"no port {name} in the report")


def check_drop_causes(report):
    """Every port's dropped equals the sum of its drops by cause, and drops
    charged to egress queues equal drops charged to ingress ports minus those
    decided before a queue was chosen (oversize, malformed, hairpin, ttl, route)."""
    pre_queue = {"malformed", "oversize", "ttl_expired", "no_route", "hairpin"}
    ingress_q = 0
    egress_q = 0
    for p in report["ports"]:
        check(sum(p["drops"].values()) == p["dropped"],
              f"{p['name']}: dropped {p['dropped']} != sum of causes {p['drops']}")
        ingress_q += sum(v for k, v in p["drops"].items() if k not in pre_queue)
        egress_q += sum(q["dropped"] for q in p["queues"])
    check(ingress_q == egress_q, f"queue drops {egress_q} != ingress drops after queueing {ingress_q}")


def check_conservation(report):
    """Every arrival is transmitted or dropped exactly once per copy: a flooded
    arrival makes (ports - 1) copies, a consumed MAC-control frame none; at the
    end nothing is queued and the driver dropped nothing."""
    n = len(report["ports"])
    rx = sum(p["rx_packets"] for p in report["ports"])
    tx = sum(p["tx_packets"] for p in report["ports"])
    dropped = sum(p["dropped"] for p in report["ports"])
    flooded = sum(p["flooded"] for p in report["ports"])
    ctl = sum(p["rx_mac_control"] for p in report["ports"])
    expect = rx - ctl + flooded * (n - 2)
    check(tx + dropped == expect,
          f"conservation: tx {tx} + dropped {dropped} != rx {rx} - mac_control {ctl} + flooded {flooded} x {n - 2}")
    for p in report["ports"]:
        depth = sum(q["depth_packets"] for q in p["queues"])
        check(depth == 0, f"{p['name']}: {depth} packets still queued at stop")
        check(p.get("driver_tx_drops", 0) == 0, f"{p['name']}: driver dropped {p['driver_tx_drops']} at tx")
    check(report.get("tx_left_at_stop", 0) == 0, f"tx_left_at_stop {report.get('tx_left_at_stop')}")
    check(report["buffer"]["used_bytes"] == 0, f"buffer still holds {report['buffer']['used_bytes']} bytes")


def run_main(cases, name_prefix=""):
    """The driver of a test script: --build DIR [--keep] CASE; runs
    cases[CASE](harness) in a Harness that is closed (processes stopped, temp
    dir and DPDK leftovers removed) whatever happens. Exit 0 pass, 77 skip
    (meson), 1 fail."""
    import argparse
    import sys
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (debugging)")
    ap.add_argument("case", choices=sorted(cases))
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: needs root (huge pages, /var/run/dpdk, veths)")
        return SKIP
    t0 = time.monotonic()
    h = Harness(a.build, name_prefix + a.case)
    rc = 1
    try:
        rc = cases[a.case](h) or 0
    except (TestFailure, subprocess.TimeoutExpired, subprocess.CalledProcessError) as e:
        print("FAIL:", e)
        h.dump_logs()
        rc = 1
    finally:
        leaked = h.close(keep_dir=a.keep)
        if leaked:
            print("removed huge page files left behind:", " ".join(leaked))
    print(("PASS" if rc == 0 else "SKIP" if rc == SKIP else "FAIL"), a.case, f"{time.monotonic() - t0:.1f} s")
    sys.stdout.flush()
    return rc
