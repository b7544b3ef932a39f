"""sf-lab run --sim: the same topology in virtual time (build/tools/sf-sim/sf-sim).

The topology is planned as for a real run (launch.Plan writes the switch
configs and the nic.json files into DIR/run/), then an sf-sim plan
(docs/sf-sim.md) joins them: each host link becomes {"a": {"nic": PROCESS,
"host": HOST}, "b": {"switch": SW, "port": PORT}} (a multi-port host's end adds
"port": k, 1-based), each switch-switch link {"switch", "port"} on both ends,
at the link's speed (or --speed-gbps, which also sets the switch PORT speeds
and the nic hosts' speeds, so shaping and pacing agree with the links) with
the link's delay_ns of propagation delay (default 1000 ns). sf-sim writes
the files the real processes write; SimLab presents them to report.py and
plots.py as a Lab would, with times in virtual seconds. Nothing here reads a
clock: two runs with the same seed give identical results.json.

Only nic hosts run in virtual time (pktio senders replay pcaps in real time).
"""
import json
import os
import subprocess

import events
import launch
import series

SIM_DELAY_NS = 1000
SIM_OOB_PORT_BASE = 40000  # oob addresses only pair workloads in sf-sim (no TCP): fixed, so the plan is reproducible
# verbs::MrcQpAttr's defaults (a hardware NIC's timers); sf-nic's nic.json
# defaults are real-time ones (nic/app/sf_nic_config.h app_mrc_defaults).
# Except the reordering tolerance: verbs' 15 us is too tight once NSCC (or any
# window past ~1 BDP) queues the sprayed paths unevenly (RTT samples 8-37 us
# in scenario b): reordering is taken as loss and every such "loss" retires
# its EV (docs/scenarios.md "Why a 30 us reordering tolerance"); the lab runs
# 30 us, what the MRC scenarios measured with. A flow's own "mrc" still wins.
MRC_HW_TIMERS = {"base_rtt_ns": 10_000, "rto_ns": 100_000, "ooo_tolerance_ns": 30_000, "probe_interval_ns": 20_000,
                 "ev_probe_interval_ns": 50_000}


class SimError(RuntimeError):
    pass


def check_sim_topology(t):
    """Raises SimError for what virtual time cannot run (before anything runs)."""
    pk = [h.name for h in t.pktio_hosts()]
    if pk:
        raise SimError(f"virtual time runs nic hosts only; pktio host(s) {', '.join(pk)} replay pcaps in real time "
                       "(run without --sim, or make them \"kind\": \"nic\")")


def apply_speed(t, speed_gbps):
    """--speed-gbps: every link, and so every switch port and nic host, at one speed."""
    for link in t.links:
        link.speed_gbps = speed_gbps
    for h in t.hosts.values():
        h.speed_gbps = speed_gbps
        for hp in h.ports:
            hp.speed_gbps = speed_gbps


class SimPlan(launch.Plan):
    """launch.Plan's switch configs and nic.json files, with no memif sockets
    and fixed out-of-band ports (sf-sim ignores devargs and pairs workloads by
    their oob address)."""

    def write(self):
        os.makedirs(self.run_dir, exist_ok=True)
        os.makedirs(self.logs, exist_ok=True)
        self.work = "/sim-no-memif"  # devargs name it; sf-sim never opens it
        self._switch_configs()
        self.sockets = []
        import nic
        self.oob = {name: SIM_OOB_PORT_BASE + i for i, name in enumerate(nic.oob_names(self.t))}  # flows, probes
        for proc in nic.active_processes(self.t):  # a process without workloads is not simulated
            vdev = nic.vdev_indices(self.t, proc)
            cfg = nic.build_nic_config(self.t, proc, lambda h, k=0: self.host_devargs(h, vdev[(h.name, k)], k),
                                       lambda f: self.oob[f.name])
            for w in cfg["workloads"]:
                if w.get("transport") == "mrc":
                    # Virtual time has no descheduled processes: an MRC QP runs
                    # a hardware NIC's timers (verbs' defaults), not sf-nic's
                    # real-time ones (docs/nic-app.md); the flow's own win.
                    w["mrc"] = dict(MRC_HW_TIMERS, **w.get("mrc", {}))
            path = os.path.join(self.run_dir, f"nic-{proc}.json")
            with open(path, "w") as f:
                json.dump(cfg, f, indent=2)
            self.nic_cfgs[proc] = path
        with open(os.path.join(self.run_dir, "topology.json"), "w") as f:
            with open(self.t.path) as src:
                f.write(src.read())

    def check_binaries(self):
        if not os.access(self.sim_bin, os.X_OK):
            raise launch.LabError(f"{self.sim_bin} not found: build first (ninja -C {self.build} tools/sf-sim/sf-sim)")

    @property
    def sim_bin(self):
        return os.path.join(self.build, "tools", "sf-sim", "sf-sim")


class SimLab(launch.Lab):
    """A Lab whose processes are nodes of sf-sim: run() writes the plan, runs
    sf-sim and reads back what it wrote. Attributes as report.py and plots.py
    read them; t0 is virtual time 0."""

    def __init__(self, topo, out, build, seed, ts_period_us, run_limit_s, log=print, threads=None):
        super().__init__(topo, out, build, console=None, log=log)
        self.threads = threads  # sf-sim --threads (None: the default engine)
        self.plan = SimPlan(topo, self.out, os.path.abspath(build))
        self.seed = seed
        self.ts_period_us = ts_period_us
        self.run_limit_s = run_limit_s
        self.sim = None  # sf-sim's stdout line
        self.plot_window_s = None
        self.started_utc = None  # virtual time: no wall-clock fields in the results

    def _switch_entry(self, name, rel):
        """The plan's entry of a switch: its config, with its shard of every port when sharded."""
        sw = self.t.switches[name]
        if not sw.shard_map:
            return rel
        return {"config": rel, "shard_map": dict(zip(sw.ports, sw.shard_map))}

    def sim_plan(self):
        t, p = self.t, self.plan
        nic_of = {h.name: h.process for h in t.nic_hosts()}
        links = []
        active = set(p.nic_cfgs)
        for link in t.links:
            if any(not port and nic_of.get(node) not in active for node, port in (link.a, link.b)):
                continue  # the host of a process without workloads: no node, no link
            ends = []
            for node, port in (link.a, link.b):
                if port:
                    ends.append({"switch": node, "port": port})
                else:  # a multi-port host's end names its port (1-based)
                    ends.append(dict({"nic": nic_of[node], "host": node},
                                     **({"port": link.host_port + 1} if t.hosts[node].multi else {})))
            links.append({"a": ends[0], "b": ends[1], "speed_gbps": link.speed_gbps,
                          "delay_ns": SIM_DELAY_NS if link.delay_ns is None else link.delay_ns})
        plan = {"seed": self.seed, "run_limit_s": self.run_limit_s, "ts_period_us": self.ts_period_us,
                "switches": {n: self._switch_entry(n, os.path.relpath(path, p.run_dir))
                             for n, (path, _) in p.switch_cfgs.items()},
                "nics": {proc: os.path.relpath(path, p.run_dir) for proc, path in p.nic_cfgs.items()},
                "links": links}
        if t.events:  # failure injection (tools/lab/events.py; sf-sim's plan "events")
            plan["events"] = events.plan_events(t, t.events)
        return plan

    def run(self):
        """Returns (rc, raw results or None, process record)."""
        self.plan.check_binaries()
        self.plan.write()
        plan_path = os.path.join(self.plan.run_dir, "sim-plan.json")
        with open(plan_path, "w") as f:
            json.dump(self.sim_plan(), f, indent=2)
        log_out = os.path.join(self.plan.logs, "sf-sim.stdout")
        log_err = os.path.join(self.plan.logs, "sf-sim.stderr")
        with open(log_out, "w") as fo, open(log_err, "w") as fe:
            extra = ["--threads", str(self.threads)] if self.threads else []
            r = subprocess.run([self.plan.sim_bin, plan_path, "--out", self.out, *extra], stdout=fo, stderr=fe)
        clean = {"pids": {}, "prefixes": [], "removed_leftovers": [], "removed_runtime_dirs": [], "still_running": [],
                 "still_present": [], "signals": {}, "exit_status": {"sf-sim": r.returncode}}
        with open(log_err) as f:
            err = f.read().strip()
        try:
            with open(log_out) as f:
                self.sim = json.loads(f.read().strip().splitlines()[-1])
        except (ValueError, IndexError, OSError):
            self.sim = None
        if r.returncode == 2 or self.sim is None:
            self.error = f"sf-sim exited {r.returncode}: {err or 'no result line'} (plan {plan_path})"
            self.stop_reason = "bad input" if r.returncode == 2 else "sf-sim failed"
            return (2 if r.returncode == 2 else 1), None, clean
        self.t0_ns = 0
        self.t_end_ns = int(round(self.sim["end_s"] * 1e9))
        if self.sim.get("finished"):
            self.stop_reason = "every workload finished (virtual time)"
        else:
            self.stop_reason = f"run_limit_s ({self.run_limit_s:g} virtual s) came first"
        if r.returncode != 0:
            self.error = f"sf-sim exited {r.returncode}: failed workloads {self.sim.get('failed_workloads')}" + \
                (f"; {err}" if err else "")
        self.drained = True
        for name in self.t.switches:
            ts = series.TimeSeries(os.path.join(self.out, f"timeseries-{name}.jsonl"))
            ts.poll()
            self.ts[name] = ts
        self.tel = self.pfc_samples()
        self.plot_window_s = max(2 * self.ts_period_us / 1e6, self.sim["end_s"] / 100)
        raw = {"switches": {}, "senders": {}, "receivers": {}, "nics": {}}
        for name in self.t.switches:
            raw["switches"][name] = _read(os.path.join(self.out, f"switch-{name}-report.json"))
        for proc in self.plan.nic_cfgs:
            raw["nics"][proc] = _read(os.path.join(self.out, f"nic-{proc}-report.json"))
        return r.returncode, raw, clean

    def pfc_samples(self):
        """The PFC pause counters the real lab polls over telemetry
        ({"t_s", "switches": {sw: {port: {"tx_pfc_frames", "rx_pause",
        "tx_pause"}}}}), one per sample of sf-sim's switch time series (which
        carries the same three counters per port; switch_stats
        timeseries_sample), at its virtual t_s."""
        per_sw = {}
        for name in self.t.switches:
            path = os.path.join(self.out, f"timeseries-{name}.jsonl")
            per_sw[name] = series.read_jsonl(path)
        n = min((len(r) for r in per_sw.values()), default=0)
        out = []
        for i in range(n):
            sample = {"t_s": None, "switches": {}}
            for name, rows in per_sw.items():
                r = rows[i]
                sample["t_s"] = r["t_s"]
                sample["switches"][name] = {
                    port: {"tx_pfc_frames": v.get("tx_pfc_frames", 0), "rx_pause": v.get("rx_pause", 0),
                           "tx_pause": v.get("tx_pause", 0)}
                    for port, v in r.get("ports", {}).items()}
            out.append(sample)
        return out

    def nic_series(self):
        """{host: [(virtual t_s, sample)]}: sf-sim's nic time series start at virtual 0."""
        out = {}
        for proc in self.plan.nic_cfgs:
            path = self.nic_ts(proc)
            for r in series.read_jsonl(path):
                for host, v in r.get("hosts", {}).items():
                    out.setdefault(host, []).append((r["t_s"], v))
        return out

    def receiver_series(self, raw):
        return {}


def _read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
