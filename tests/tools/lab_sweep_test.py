#!/usr/bin/python3
"""sf-lab sweep end to end (tools/lab/sweep.py): a grid of sf-lab run --sim runs.

The grid of cases 2 and 4: config/topologies/nic-incast.json (n0, n1 -> n2 with a
write_lat probe n0 -> n2) at 100 Gb/s (--speed-gbps), cc none / dcqcn-nvidia on every
nic host (nodes[kind=nic].cc) x 256 KiB / 512 KiB per sender (workloads[0].size_bytes),
seed 3: four runs, one plot (probe p99 vs size per cc).

Cases:
  spec   1. Bad specs: an unknown key (with a hint), a bad path, a path that matches
            nothing, a parameter value the topology refuses, an out-of-range option, a
            plot of an unknown result, a plot that leaves a parameter unpinned, a sim.seed
            path beside "seeds", duplicate keys. Expect: exit 2, the message names the JSON
            path, nothing written to --out. --dry-run lists the four runs in grid order;
            every spec in config/sweeps/ passes --dry-run.
  local  2. The grid with -j 2. Expect: exit 0, sweep.csv with a header and four rows in
            grid order (index, run dir, topology, cc, size, speed, seed, status ok), every
            flow complete, bytes_received = 2 x size, ECN marks with DCQCN, probe p99
            present, completion slower for 512 KiB; the plot PNG; each run's report.
         3. The same spec again with -j 1 into another directory. Expect: the same CSV,
            byte for byte (nothing in it depends on the clock, the order runs end in, or
            the directory).
         5. A run that fails (run_limit_s 1 us: sf-sim stops before the incast ends) and a
            run that times out (timeout_s 0.2). Expect: exit 1, rows "failed" with sf-lab's
            error and exit 1, "timeout" with its reason; no process of the runs left.
         6. SIGINT to a sweep at -j 1 once its first sf-sim runs. Expect: exit 130, rows
            interrupted, not run, not run, not run; no process of the sweep left.
  slurm  4. A real single-node Slurm started by the test in a temp dir (munged with its
            own key and socket; slurmctld and slurmd with a generated slurm.conf on free
            localhost ports, SlurmUser the current user, proctrack/linuxproc, task/none,
            no cgroups, no accounting), then sf-lab sweep --slurm on two runs of
            nic-incast, run_limit_s 10 ms and 1 us. Expect: exit 1, a batch script with
            --array=0-1, one Slurm output per task, the first row ok with every byte,
            the second failed with sf-sim's error, a CSV identical to the same sweep run
            locally, the plot; the daemons stopped by PID after.
            Skipped (77) when the Slurm or MUNGE binaries are missing (Debian: slurm-wlm,
            munge).

Usage: lab_sweep_test.py --build BUILD_DIR --source SOURCE_DIR CASE
"""
import argparse
import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

PLOT = "probe_p99_us-vs-size-by-cc.png"


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def grid_spec(src, d, name="grid", **extra):
    spec = {"name": name,
            "topology": os.path.join(src, "config", "topologies", "nic-incast.json"),
            "parameters": {"cc": {"path": "nodes[kind=nic].cc", "values": ["none", "dcqcn-nvidia"]},
                           "size": {"path": "workloads[0].size_bytes", "values": ["256KiB", "512KiB"]},
                           "speed": {"option": "speed_gbps", "values": [100]}},
            "seeds": [3],
            "plots": [{"x": "size", "y": "probe_p99_us", "series": "cc"}]}
    spec.update(extra)
    path = os.path.join(d, f"{name}.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def sweep(src, build, spec, out, *extra, env=None, timeout=300):
    cmd = [sys.executable, os.path.join(src, "tools", "sf-lab"), "sweep", spec, "--build", build] + \
        (["--out", out] if out else []) + list(extra)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def check_grid(out, r):
    if r.returncode != 0:
        fail(f"sweep exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    rows = read_csv(os.path.join(out, "sweep.csv"))
    want = [("none", "256KiB"), ("none", "512KiB"), ("dcqcn-nvidia", "256KiB"), ("dcqcn-nvidia", "512KiB")]
    if [(r["cc"], r["size"]) for r in rows] != want:
        fail(f"rows {[(r['cc'], r['size']) for r in rows]}, want {want}")
    for i, row in enumerate(rows):
        size = 256 << 10 if row["size"] == "256KiB" else 512 << 10
        expect = {"index": str(i), "run": f"runs/{i:04d}", "topology": "nic-incast", "speed": "100", "seed": "3",
                  "status": "ok", "exit_code": "0", "error": "", "flows": "2", "flows_complete": "2",
                  "finished": "true", "bytes_received": str(2 * size)}
        for k, v in expect.items():
            if row[k] != v:
                fail(f"row {i} {k} = {row[k]!r}, want {v!r}: {row}")
        for k in ("completion_s", "probe_p99_us", "max_queue_bytes", "events", "trace_hash"):
            if row[k] == "":
                fail(f"row {i} has no {k}: {row}")
        res = json.load(open(os.path.join(out, row["run"], "results.json")))
        if res["run"]["seed"] != 3 or {h["cc"] for h in
                                       json.load(open(os.path.join(out, row["run"], "topology.json")))["nodes"].values()
                                       if h["kind"] == "nic"} != {row["cc"]}:
            fail(f"run {row['run']}: seed {res['run']['seed']} or cc not applied")
        nic = json.load(open(os.path.join(out, row["run"], "run", "nic-senders.json")))
        if {h["speed"] for h in nic["hosts"].values()} != {100}:
            fail(f"run {row['run']}: --speed-gbps 100 did not reach the nic hosts")
    for cc in ("none", "dcqcn-nvidia"):
        small, big = (float(r["completion_s"]) for r in rows if r["cc"] == cc)
        if not small < big:
            fail(f"cc {cc}: 512 KiB completed in {big} s, not later than 256 KiB in {small} s")
    if int(rows[2]["ecn_marked"]) == 0 or int(rows[2]["cnp_sent"]) == 0:
        fail(f"the DCQCN incast made no ECN marks / CNPs: {rows[2]}")
    png = os.path.join(out, PLOT)
    if not os.path.exists(png) or os.path.getsize(png) < 1000 or open(png, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
        fail(f"plot {png} missing or not a PNG")
    return open(os.path.join(out, "sweep.csv")).read()


def case_spec(src, build):
    with tempfile.TemporaryDirectory(prefix="lab-sweep-") as d:
        topo = os.path.join(src, "config", "topologies", "nic-incast.json")
        bad = [
            ({"topology": topo, "paramters": {}}, "spec: unknown key 'paramters' (did you mean 'parameters'?)"),
            ({"topology": topo, "parameters": {"x": {"path": "workloads..size_bytes", "values": [1]}}},
             "spec.parameters.x.path: 'workloads..size_bytes': cannot read the path at '..size_bytes'"),
            ({"topology": topo, "parameters": {"x": {"path": "workloads[7].size_bytes", "values": [1]}}},
             "spec.parameters.x.path: 'workloads[7].size_bytes' in nic-incast: workloads[7] does not exist"),
            ({"topology": topo, "parameters": {"x": {"path": "nodes[kind=pktio].cc", "values": ["none"]}}},
             "nodes has no member whose 'kind' is 'pktio'"),
            # nodes.* includes the switch: the topology check refuses the key there.
            ({"topology": topo, "parameters": {"cc": {"path": "nodes.*.cc", "values": ["none"]}}},
             "run 0 (topology=nic-incast cc=none): topology nodes.sw0: unknown key 'cc'"),
            ({"topology": topo, "parameters": {"cc": {"path": "nodes[kind=nic].cc", "values": ["none", "fast"]}}},
             "run 1 (topology=nic-incast cc=fast): topology nodes.n0.cc: 'fast' is not one of"),
            ({"topology": topo, "parameters": {"s": {"option": "speed_gbps", "values": [400, 1600]}}},
             "spec.parameters.s.values[1]: 1600: a whole number of Gb/s in [1, 800]"),
            ({"topology": topo, "parameters": {"s": {"option": "speed", "values": [400]}}},
             "spec.parameters.s.option: \"speed\": one of speed_gbps"),
            ({"topology": topo, "plots": [{"x": "seed", "y": "p99"}]}, "spec.plots[0].y: \"p99\""),
            ({"topology": topo, "parameters": {"cc": {"path": "nodes[kind=nic].cc", "values": ["none", "dcqcn-paper"]},
                                               "s": {"option": "speed_gbps", "values": [100, 400]}},
              "plots": [{"x": "s", "y": "completion_s"}]},
             "spec.plots[0]: 'cc' takes 2 values and is neither x nor series: pin it with \"where\""),
            ({"topology": topo, "seeds": [1, 2], "parameters": {"s": {"path": "sim.seed", "values": [4]}}},
             "spec.parameters.s.path: 'sim.seed': the spec's \"seeds\" set the seed of every run"),
            ({"topology": topo, "seeds": [1, 1]}, "spec.seeds[1]: seed 1 twice"),
        ]
        for i, (spec, want) in enumerate(bad):
            path = os.path.join(d, f"bad{i}.json")
            with open(path, "w") as f:
                json.dump(spec, f)
            out = os.path.join(d, f"out{i}")
            r = sweep(src, build, path, out)
            if r.returncode != 2 or want not in r.stderr:
                fail(f"bad spec {i}: exit {r.returncode}, stderr {r.stderr!r}; want exit 2 and {want!r}")
            if os.path.exists(out):
                fail(f"bad spec {i}: {out} was written")
        path = os.path.join(d, "dup.json")
        with open(path, "w") as f:
            f.write('{"topology": "%s", "seeds": [1], "seeds": [2]}' % topo)
        r = sweep(src, build, path, os.path.join(d, "dup"))
        if r.returncode != 2 or "duplicate key 'seeds'" not in r.stderr:
            fail(f"duplicate key: exit {r.returncode}, {r.stderr!r}")
        r = sweep(src, build, grid_spec(src, d), os.path.join(d, "dry"), "--dry-run")
        lines = [ln.split()[0] for ln in r.stdout.splitlines() if ln.startswith("  runs/")]
        if r.returncode != 0 or lines != [f"runs/{i:04d}" for i in range(4)] or os.path.exists(os.path.join(d, "dry")):
            fail(f"--dry-run: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        # The shipped specs stay valid.
        shipped = sorted(os.listdir(os.path.join(src, "config", "sweeps")))
        for name in shipped:
            r = sweep(src, build, os.path.join(src, "config", "sweeps", name), os.path.join(d, "shipped"), "--dry-run")
            if r.returncode != 0:
                fail(f"config/sweeps/{name}: --dry-run exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    print(f"PASS spec: {len(bad) + 1} bad specs refused with their JSON paths; --dry-run lists 4 runs; "
          f"{len(shipped)} shipped spec(s) valid")


def no_runs_left(out):
    """No process has a file of the sweep open or runs from it (sf-lab and sf-sim name OUT on their command line)."""
    left = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if out.encode() in f.read():
                        left.append(int(pid))
            except OSError:
                pass
    if left:
        fail(f"processes of the sweep left: {left}")


def case_local(src, build):
    with tempfile.TemporaryDirectory(prefix="lab-sweep-") as d:
        spec = grid_spec(src, d)
        a, b = os.path.join(d, "a"), os.path.join(d, "b")
        t0 = time.monotonic()
        csv_a = check_grid(a, sweep(src, build, spec, a, "-j", "2"))
        t1 = time.monotonic()
        csv_b = check_grid(b, sweep(src, build, spec, b, "-j", "1"))
        if csv_a != csv_b:
            fail(f"the same spec twice gave different CSVs:\n{csv_a}\n{csv_b}")
        # 5. A failed run and a timed-out run.
        failing = os.path.join(d, "failing.json")
        with open(failing, "w") as f:
            json.dump({"topology": os.path.join(src, "config", "topologies", "nic-incast.json"),
                       "parameters": {"limit": {"option": "run_limit_s", "values": [1e-6]}}}, f)
        out = os.path.join(d, "f")
        r = sweep(src, build, failing, out)
        rows = read_csv(os.path.join(out, "sweep.csv")) if os.path.exists(os.path.join(out, "sweep.csv")) else []
        if r.returncode != 1 or len(rows) != 1 or rows[0]["status"] != "failed" or rows[0]["exit_code"] != "1" \
                or "sf-sim exited 1" not in rows[0]["error"] or rows[0]["finished"] != "false":
            fail(f"failing run: exit {r.returncode}, rows {rows}\n{r.stdout}\n{r.stderr}")
        slow = os.path.join(d, "slow.json")
        with open(slow, "w") as f:
            json.dump({"topology": os.path.join(src, "config", "topologies", "nic-incast.json"), "timeout_s": 0.2}, f)
        out = os.path.join(d, "t")
        r = sweep(src, build, slow, out)
        rows = read_csv(os.path.join(out, "sweep.csv")) if os.path.exists(os.path.join(out, "sweep.csv")) else []
        if r.returncode != 1 or len(rows) != 1 or rows[0]["status"] != "timeout" or "timed out" not in rows[0]["error"]:
            fail(f"timed-out run: exit {r.returncode}, rows {rows}\n{r.stdout}\n{r.stderr}")
        # 6. SIGINT while the first run's sf-sim runs.
        out = os.path.join(d, "i")
        cmd = [sys.executable, os.path.join(src, "tools", "sf-lab"), "sweep", spec, "--build", build, "--out", out,
               "-j", "1"]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        t_start = time.monotonic()
        while not sim_running(out):  # bounded poll for a real process starting
            if p.poll() is not None or time.monotonic() - t_start > 120:
                p.kill()
                fail(f"no sf-sim of the sweep appeared (sweep exit {p.poll()})")
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        so, se = p.communicate(timeout=60)
        rows = read_csv(os.path.join(out, "sweep.csv")) if os.path.exists(os.path.join(out, "sweep.csv")) else []
        if p.returncode != 130 or [r["status"] for r in rows] != ["interrupted", "not run", "not run", "not run"]:
            fail(f"interrupted sweep: exit {p.returncode}, statuses {[r['status'] for r in rows]}\n{so}\n{se}")
        no_runs_left(d)
    print(f"PASS local: 4 runs -> sweep.csv and {PLOT} ({t1 - t0:.1f} s at -j 2); the same CSV at -j 1; "
          "a failed and a timed-out run are rows, exit 1; SIGINT: exit 130, the running run stopped")


def sim_running(out):
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    args = f.read().split(b"\0")
            except OSError:
                continue
            if args and args[0].endswith(b"sf-sim") and any(out.encode() in a for a in args):
                return True
    return False


# ---- a single-node Slurm ------------------------------------------------------------------------

SLURM_BINS = ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo")


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


class Slurm:
    """munged, slurmctld and slurmd for this test only, in dir d; stop() ends them by PID."""

    def __init__(self, d):
        self.d = d
        self.procs = {}
        self.host = socket.gethostname().split(".")[0]
        import pwd
        self.user = pwd.getpwuid(os.getuid()).pw_name

    def start(self):
        d = self.d
        key_dir, sock_dir = os.path.join(d, "munge-key"), os.path.join(d, "munge")
        os.makedirs(key_dir, mode=0o700)
        os.makedirs(sock_dir, mode=0o755)
        os.chmod(d, 0o755)  # munged wants the socket's directories reachable by all
        key = os.path.join(key_dir, "munge.key")
        subprocess.run(["mungekey", "--create", "--keyfile", key, "--bits", "1024"], check=True, capture_output=True)
        os.chmod(key, 0o600)
        self.sock = os.path.join(sock_dir, "munge.socket")
        self._spawn("munged", ["munged", "--foreground", "--force", f"--socket={self.sock}", f"--key-file={key}",
                               f"--pid-file={os.path.join(sock_dir, 'munged.pid')}",
                               f"--log-file={os.path.join(d, 'munged.log')}",
                               f"--seed-file={os.path.join(key_dir, 'munged.seed')}"])
        self._until(lambda: os.path.exists(self.sock), "munged's socket")
        ctld_port, d_port = free_ports(2)
        for sub in ("state", "spool", "jobs"):
            os.makedirs(os.path.join(d, sub))
        self.conf = os.path.join(d, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write("\n".join([
                "ClusterName=sfsweeptest",
                f"SlurmctldHost={self.host}(127.0.0.1)",
                f"SlurmctldPort={ctld_port}",
                f"SlurmdPort={d_port}",
                f"SlurmUser={self.user}",
                f"SlurmdUser={self.user}",
                "AuthType=auth/munge",
                f"AuthInfo=socket={self.sock}",
                "CredType=cred/munge",
                f"StateSaveLocation={os.path.join(d, 'state')}",
                f"SlurmdSpoolDir={os.path.join(d, 'spool')}",
                f"SlurmctldPidFile={os.path.join(d, 'slurmctld.pid')}",
                f"SlurmdPidFile={os.path.join(d, 'slurmd.pid')}",
                f"SlurmctldLogFile={os.path.join(d, 'slurmctld.log')}",
                f"SlurmdLogFile={os.path.join(d, 'slurmd.log')}",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_CPU",
                "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none",
                "JobCompType=jobcomp/none",
                "MpiDefault=none",
                "ReturnToService=2",
                "MailProg=/bin/true",
                f"NodeName={self.host} NodeAddr=127.0.0.1 CPUs={min(2, os.cpu_count() or 1)} State=UNKNOWN",
                f"PartitionName=test Nodes={self.host} Default=YES MaxTime=INFINITE State=UP",
                ""]))
        self.env = {**os.environ, "SLURM_CONF": self.conf}
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf])
        self._spawn("slurmd", ["slurmd", "-D", "-N", self.host, "-f", self.conf])

        def idle():
            r = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=self.env)
            return r.returncode == 0 and r.stdout.strip() == "idle"
        self._until(idle, "the node idle in sinfo")

    def _spawn(self, name, cmd):
        log = open(os.path.join(self.d, f"{name}.out"), "w")
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env=getattr(self, "env", None))
        log.close()

    def _until(self, cond, what, limit_s=30):
        # Waits on real daemons starting (not on time passing): bounded, polled.
        t0 = time.monotonic()
        while not cond():
            for name, p in self.procs.items():
                if p.poll() is not None:
                    fail(f"{name} exited {p.returncode} while waiting for {what}:\n{self.log(name)}")
            if time.monotonic() - t0 > limit_s:
                fail(f"no {what} after {limit_s} s:\n" + "\n".join(self.log(n) for n in self.procs))
            time.sleep(0.2)

    def log(self, name):
        try:
            return open(os.path.join(self.d, f"{name}.out")).read()[-3000:]
        except OSError:
            return ""

    def stop(self):
        """SIGTERM to each daemon by PID (slurmd, slurmctld, munged), SIGKILL after 10 s. Returns the PIDs."""
        pids = []
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.get(name)
            if p is None:
                continue
            pids.append(p.pid)
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        return pids


def case_slurm(src, build):
    missing = [b for b in SLURM_BINS if shutil.which(b) is None]
    if missing:
        print(f"SKIP: {', '.join(missing)} not installed (Debian: slurm-wlm munge)")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="lab-sweep-slurm-") as d:
        # Two runs of nic-incast at 100G: run_limit_s 10 ms (finishes) and 1 us (sf-sim stops first: failed).
        spec = os.path.join(d, "slurm.json")
        with open(spec, "w") as f:
            json.dump({"name": "slurm", "topology": os.path.join(src, "config", "topologies", "nic-incast.json"),
                       "parameters": {"size": {"path": "workloads[0].size_bytes", "values": ["256KiB"]},
                                      "limit": {"option": "run_limit_s", "values": [0.01, 1e-6]},
                                      "speed": {"option": "speed_gbps", "values": [100]}},
                       "plots": [{"x": "limit", "y": "probe_p99_us"}]}, f)
        cluster = Slurm(os.path.join(d, "slurm"))
        os.makedirs(cluster.d)
        local, out = os.path.join(d, "local"), os.path.join(d, "slurm-out")
        try:
            cluster.start()
            t0 = time.monotonic()
            r = sweep(src, build, spec, out, "--slurm", "--poll-s", "0.5", env=cluster.env)
            t1 = time.monotonic()
        finally:
            pids = cluster.stop()
        rl = sweep(src, build, spec, local, "-j", "2")
        for what, res in (("slurm", r), ("local", rl)):
            if res.returncode != 1:
                fail(f"{what} sweep: exit {res.returncode}, want 1 (one run fails)\n{res.stdout}\n{res.stderr}")
        rows = read_csv(os.path.join(out, "sweep.csv"))
        if [(x["limit"], x["status"], x["exit_code"]) for x in rows] != [("0.01", "ok", "0"), ("1e-06", "failed", "1")]:
            fail(f"rows {rows}")
        if rows[0]["flows_complete"] != "2" or rows[0]["bytes_received"] != str(2 * (256 << 10)) or \
                rows[0]["probe_p99_us"] == "" or "sf-sim exited 1" not in rows[1]["error"]:
            fail(f"rows {rows}")
        csv_slurm, csv_local = (open(os.path.join(o, "sweep.csv")).read() for o in (out, local))
        if csv_slurm != csv_local:
            fail(f"the Slurm sweep's CSV differs from the local one:\n{csv_slurm}\n{csv_local}")
        png = os.path.join(out, "probe_p99_us-vs-limit.png")
        if not os.path.exists(png) or os.path.getsize(png) < 1000:
            fail(f"plot {png} missing")
        script = open(os.path.join(out, "slurm", "sweep.sbatch")).read()
        if "#SBATCH --array=0-1\n" not in script:
            fail(f"batch script without --array=0-1:\n{script}")
        job = [ln for ln in r.stdout.splitlines() if ln.startswith("slurm: submitted job array ")]
        if not job:
            fail(f"no 'submitted job array' line:\n{r.stdout}")
        job = job[0].split()[4]
        for i in range(2):
            if not os.path.exists(os.path.join(out, "slurm", f"{job}_{i}.out")):
                fail(f"no Slurm output slurm/{job}_{i}.out")
        for pid in pids:
            if os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split()[2] != "Z":
                fail(f"daemon {pid} still running")
    print(f"PASS slurm: job array {job} of 2 tasks on a single-node Slurm ({t1 - t0:.1f} s): the failed task a "
          "row, exit 1, CSV identical to the local sweep's; daemons stopped")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("case", choices=["spec", "local", "slurm"])
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if a.case != "spec" and not os.access(os.path.join(build, "tools", "sf-sim", "sf-sim"), os.X_OK):
        print("SKIP: tools/sf-sim/sf-sim is not built")
        sys.exit(77)
    {"spec": case_spec, "local": case_local, "slurm": case_slurm}[a.case](os.path.abspath(a.source), build)


if __name__ == "__main__":
    main()
