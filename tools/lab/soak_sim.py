#!/usr/bin/python3
"""The chaos soak's virtual-time twin (docs/soak.md "Virtual time").

The real-time soak's schedule (tools/lab/soak_schedule.py, same config and
seed) restricted to the kinds sf-sim can inject -- nic_kill and pktio_kill
(the killed host's link down, up when it restarts: a NIC after
NIC_RESTART_S, a pktio host after the event's down_s), link_flap (link
down, up after down_s), loss (a rate for len_s), blackhole (for len_s), reset (a
reboot with the links down for REBOOT_DOWN_MS) -- on a scaled clock: one
second of the real schedule is --ms-per-s virtual milliseconds. The fabric is
the soak switch's config with four sf-nic hosts: h0 -> h1 and h2 -> h3, RDMA
WRITE flows sized to outlast the schedule (at --speed-gbps), run with
`sf-lab run --sim`. The same fault timeline runs again with the same seed and
must give the same trace_hash and the same counters.

Checks (exit 1 on any): sf-sim finished (every flow completed: RC recovers
every loss) or a flow failed with a QP error -- never a wrong byte; the
switch conserves packets (tx + dropped = rx - rx_mac_control -
rx_credit_ignored + flood_extra_copies; per port dropped = sum of causes,
tx = sum of queue tx; nothing queued or held; buffer empty); the simulator's
mbuf pool is back to 0 in use; both runs identical.

Usage: soak_sim.py --build DIR [--seconds S] [--seed N] [--config FILE] [--out DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import soak  # noqa: E402
import soak_schedule  # noqa: E402

REBOOT_DOWN_MS = 0.05
HOSTS = ("h0", "h1", "h2", "h3")
# The real soak's processes as the twin's hosts: its NIC pair is rdma0
# (client h0 -> server h1); its pktio stream (gen -> sink) is rdma1 (h2 -> h3).
KILL_HOST = {("nic_kill", "client"): "h0", ("nic_kill", "server"): "h1",
             ("pktio_kill", "gen"): "h2", ("pktio_kill", "sink"): "h3"}
NIC_RESTART_S = 0.5  # a killed NIC host's link is down this long (schedule seconds): the next pair starts
KILL_TARGETS = ("gen", "sink")  # as tools/lab/soak.py draws pktio_kill


def sim_events(schedule, ports, ms_per_s, end_ms):
    """The sf-lab topology events of the schedule's sim kinds. ports: switch
    port -> host name (a link is named by its host)."""
    out = []
    for e in schedule:
        at = round(e["t_s"] * ms_per_s, 6)
        k = e["kind"]
        if k == "reset":
            out.append({"kind": "reboot", "switch": "sw0", "at_ms": at, "down_ms": REBOOT_DOWN_MS})
            continue
        if k in ("nic_kill", "pktio_kill"):
            host = KILL_HOST[(k, e.get("side", e.get("target")))]
            down_s = e.get("down_s", NIC_RESTART_S)
            until = round(min(end_ms, at + down_s * ms_per_s), 6)
            out += [{"kind": "link_down", "link": host, "at_ms": at}, {"kind": "link_up", "link": host, "at_ms": until}]
            continue
        host = ports.get(e["port"])
        if host is None:
            continue  # the rogue port has no host in the twin
        dur = e.get("down_s", e.get("len_s"))
        until = round(min(end_ms, at + dur * ms_per_s), 6)
        if k == "link_flap":
            out += [{"kind": "link_down", "link": host, "at_ms": at}, {"kind": "link_up", "link": host, "at_ms": until}]
        elif k == "loss":
            out += [{"kind": "loss", "link": host, "rate": e["rate"], "at_ms": at},
                    {"kind": "loss", "link": host, "rate": 0, "at_ms": until}]
        elif k == "blackhole":
            out.append({"kind": "blackhole", "port": f"sw0:{e['port']}", "at_ms": at, "until_ms": until})
    return out


def topology(cfg, work, events, a):
    sw_path = os.path.join(work, "soak-switch.json")
    with open(sw_path, "w") as f:
        json.dump(soak.switch_config(cfg, work), f, indent=1)
    ports = list(cfg["switch"]["ports"])
    nodes = {"sw0": {"kind": "switch", "config": sw_path}}
    links = []
    for i, h in enumerate(HOSTS):
        nodes[h] = {"kind": "nic", "process": f"p{h}"}
        links.append({"a": h, "b": f"sw0:{ports[i]}", "speed_gbps": a.speed_gbps})
    size = int(a.gbytes_per_flow * (1 << 30))
    wl = [{"name": "rdma0", "type": "background", "src": "h0", "dst": "h1", "size_bytes": size},
          {"name": "rdma1", "type": "background", "src": "h2", "dst": "h3", "size_bytes": size}]
    t = {"name": "soak-sim", "duration_s": a.run_limit_s, "ts_period_ms": 1000, "nodes": nodes, "links": links,
         "workloads": wl, "events": events}
    path = os.path.join(work, "soak-sim-topology.json")
    with open(path, "w") as f:
        json.dump(t, f, indent=1)
    return path, {ports[i]: h for i, h in enumerate(HOSTS)}


def run_once(a, topo, out):
    r = subprocess.run([os.path.join(ROOT, "tools", "sf-lab"), "run", "--sim", topo, "--out", out,
                        "--build", a.build, "--seed", str(a.seed), "--ts-period-us", "100000"],
                       capture_output=True, text=True, timeout=a.timeout_s)
    line = None
    for root, _, files in os.walk(out):
        if "sf-sim.stdout" in files:
            with open(os.path.join(root, "sf-sim.stdout")) as f:
                txt = f.read().strip()
            line = json.loads(txt.splitlines()[-1]) if txt else None
    rep = None
    p = os.path.join(out, "switch-sw0-report.json")
    if os.path.exists(p):
        with open(p) as f:
            rep = json.load(f)
    nics = {}
    for h in HOSTS:
        q = os.path.join(out, f"nic-p{h}-report.json")
        if os.path.exists(q):
            with open(q) as f:
                nics[h] = json.load(f)
    return r, line, rep, nics


def check(a, r, line, rep, nics, fail):
    if line is None or rep is None:
        fail(f"sf-lab run --sim exit {r.returncode}, no sf-sim result:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        return
    # Workloads: done byte-exact or failed with a QP error, never a verify error.
    for h, nr in nics.items():
        for w in nr.get("workloads", []):
            if w.get("verify_errors", 0):
                fail(f"{h} {w['name']}: {w['verify_errors']} verify errors")
            if w.get("status") != "ok" and "retry" not in w.get("status", "") and "error" not in w.get("status", ""):
                fail(f"{h} {w['name']}: status {w.get('status')}")
    if r.returncode not in (0, 1) or (r.returncode == 1 and line.get("failed_workloads", 0) == 0):
        fail(f"sf-lab run --sim exit {r.returncode}: {line}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
    ports = rep["ports"]
    for p in ports:
        if sum(p["drops"].values()) != p["dropped"]:
            fail(f"{p['name']}: dropped {p['dropped']} != sum of causes {p['drops']}")
        if sum(q["tx_packets"] for q in p["queues"]) != p["tx_packets"]:
            fail(f"{p['name']}: tx_packets != sum over queues")
        if sum(q["depth_packets"] for q in p["queues"]) or sum(g["held_packets"] for g in p["pgs"]):
            fail(f"{p['name']}: packets queued or held at the end")
    rx = sum(p["rx_packets"] for p in ports)
    ctl = sum(p["rx_mac_control"] for p in ports)
    credit = sum(p.get("rx_credit_ignored", 0) for p in ports)
    extra = sum(p["flood_extra_copies"] for p in ports)
    tx = sum(p["tx_packets"] for p in ports)
    dropped = sum(p["dropped"] for p in ports)
    if tx + dropped != rx - ctl - credit + extra:
        fail(f"conservation: tx {tx} + dropped {dropped} != rx {rx} - mac_control {ctl} - credit_ignored {credit} "
             f"+ flood_extra_copies {extra}")
    if rep["buffer"]["used_bytes"] != 0:
        fail(f"buffer holds {rep['buffer']['used_bytes']} bytes at the end")
    mb = line.get("mbufs", {})
    if mb.get("in_use_at_end") != 0 or mb.get("alloc_failures"):
        fail(f"sf-sim mbufs at the end: {mb}")


def summary(line, rep, nics):
    drops = {}
    for p in rep["ports"] if rep else []:
        for k, v in p["drops"].items():
            drops[k] = drops.get(k, 0) + v
    flows = {}
    for h, nr in nics.items():
        for w in nr.get("workloads", []):
            if w.get("role") == "client":
                flows[w["name"]] = {"status": w["status"], "bytes": w["bytes"], "retransmits":
                                    sum(x.get("retransmits", 0) for x in nr.get("hosts", []))}
    return {"sim_events": line and line.get("events"), "trace_hash": line and line.get("trace_hash"),
            "end_s": line and line.get("end_s"), "finished": line and line.get("finished"),
            "failed_workloads": line and line.get("failed_workloads"), "mbufs": line and line.get("mbufs"),
            "switch_rx": rep and sum(p["rx_packets"] for p in rep["ports"]),
            "switch_tx": rep and sum(p["tx_packets"] for p in rep["ports"]),
            "drops": dict(sorted(drops.items())), "flows": flows}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="soak_sim", description="the chaos soak in virtual time (docs/soak.md)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--config", default=os.path.join(ROOT, "config", "soak", "soak.json"))
    ap.add_argument("--seconds", type=float, default=60.0, help="length of the real-time schedule drawn (default 60)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ms-per-s", type=float, help="virtual ms per schedule second (default 60 / --seconds: "
                    "the schedule, however long, spans the first 60 virtual ms, while the flows run)")
    ap.add_argument("--speed-gbps", type=int, default=100)
    ap.add_argument("--gbytes-per-flow", type=float, default=1.0, help="GiB per RDMA flow (default 1)")
    ap.add_argument("--run-limit-s", type=float, default=2.0, help="virtual seconds at most")
    ap.add_argument("--timeout-s", type=float, default=600)
    ap.add_argument("--runs", type=int, default=2, help="identical runs to compare (default 2)")
    ap.add_argument("--out", help="keep the runs' directories and soak-sim-report.json here")
    a = ap.parse_args(argv)
    if a.seconds <= 0 or (a.ms_per_s is not None and a.ms_per_s <= 0):
        print("soak_sim: --seconds and --ms-per-s must be > 0", file=sys.stderr)
        return 2
    if a.ms_per_s is None:
        a.ms_per_s = 60.0 / a.seconds
    try:
        cfg = soak_schedule.load(a.config)
    except soak_schedule.ScheduleError as e:
        print(f"soak_sim: {e}", file=sys.stderr)
        return 2
    work = os.path.abspath(a.out) if a.out else tempfile.mkdtemp(prefix="sf-soak-sim-")
    os.makedirs(work, exist_ok=True)
    failures = []

    def fail(msg):
        failures.append(msg)
        print("soak_sim: FAIL:", msg, flush=True)
    try:
        ports = list(cfg["switch"]["ports"])
        sched = soak_schedule.draw(cfg, a.seed, a.seconds, kinds=soak_schedule.SIM_KINDS, fault_ports=ports,
                                   kill_targets=KILL_TARGETS)
        _, port_host = topology(cfg, work, [], a)
        events = sim_events(sched, port_host, a.ms_per_s, a.run_limit_s * 1000)
        topo, _ = topology(cfg, work, events, a)
        results = []
        for k in range(max(1, a.runs)):
            out = os.path.join(work, f"run{k}")
            shutil.rmtree(out, ignore_errors=True)
            r, line, rep, nics = run_once(a, topo, out)
            check(a, r, line, rep, nics, fail)
            results.append((line, rep, summary(line, rep, nics)))
        base = results[0]
        for k, (line, rep, _) in enumerate(results[1:], 1):
            if line != base[0] or json.dumps(rep, sort_keys=True) != json.dumps(base[1], sort_keys=True):
                fail(f"run {k} differs from run 0 with the same seed: {line} vs {base[0]}")
        out = dict(base[2], soak_sim="pass" if not failures else "fail", seed=a.seed, schedule_seconds=a.seconds,
                   ms_per_s=a.ms_per_s, faults=soak_schedule.counts(sched), sim_events_injected=len(events),
                   runs=len(results), failures=failures)
        if a.out:
            with open(os.path.join(work, "soak-sim-report.json"), "w") as f:
                json.dump(dict(out, schedule=sched, events=events), f, indent=1)
        print(json.dumps(out))
    finally:
        if not a.out:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
