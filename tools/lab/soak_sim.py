#!/usr/bin/python3
"""The chaos soak's virtual-time twin (docs/soak.md "Virtual time").

The real-time soak's schedule (tools/lab/soak_schedule.py, same config and
seed) restricted to the kinds sf-sim can inject -- nic_kill, mrc_kill and
pktio_kill (the killed host's link down, up when it restarts: a NIC after
NIC_RESTART_S, a pktio host after the event's down_s), link_flap (link down,
up after down_s), loss (a rate for len_s), blackhole (for len_s), reset (a
reboot with the links down for REBOOT_DOWN_MS), pfc_storm and
malformed_burst (the rogue host's frames: sf-sim "inject" events on the rogue
port, the same frames the real soak's rogue host sends: a PFC XOFF at the
storm's rate for len_s, the burst's seeded malformed and fuzzer-made frames
from tools/lab/soak_frames.py at line rate) -- on a scaled clock: one second
of the real schedule is --ms-per-s virtual milliseconds. The fabric is the
soak switch's config with six sf-nic hosts standing for the real soak's
processes: h0 -> h1 (its RC pair, client -> server), h2 -> h3 (its pktio gen
-> sink) and h4 -> h5 (its MRC pair, `"transport": "mrc"` on the lossy,
trimming priority of the real pair), RDMA WRITE flows sized to outlast the
schedule (at --speed-gbps), every byte checked at the receiver (verify), and
the rogue port fed by sf-sim's injector. The plan is sf-lab's (tools/lab
sim.SimLab), run by sf-sim directly so that the inject events and verify can
be added. The same fault timeline runs again with the same seed and must
give the same trace_hash and the same counters.

Checks (exit 1 on any): sf-sim finished (every flow completed: RC and MRC
recover every loss) or a flow failed with a QP error -- never a wrong byte
(verify_errors 0); the switch conserves packets (tx + dropped = rx -
rx_mac_control - rx_credit_ignored + flood_extra_copies; per port dropped =
sum of causes, tx = sum of queue tx; nothing queued or held; buffer empty);
every injected frame was sent, and the rogue port received exactly what its
link delivered; the simulator's mbuf pool is back to 0 in use; both runs
identical.

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
import soak_frames  # noqa: E402
import soak_schedule  # noqa: E402

REBOOT_DOWN_MS = 0.05
# The real soak's processes as the twin's hosts (by their switch port's role).
ROLE_HOST = {"nic_client": "h0", "nic_server": "h1", "gen": "h2", "sink": "h3", "mrc_client": "h4",
             "mrc_server": "h5"}
KILL_HOST = {("nic_kill", "client"): "h0", ("nic_kill", "server"): "h1",
             ("mrc_kill", "client"): "h4", ("mrc_kill", "server"): "h5",
             ("pktio_kill", "gen"): "h2", ("pktio_kill", "sink"): "h3"}
NIC_RESTART_S = 0.5  # a killed NIC host's link is down this long (schedule seconds): the next pair starts
KILL_TARGETS = ("gen", "sink")  # as tools/lab/soak.py draws pktio_kill
PFC_FRAME_BYTES = 60


def rogue_frames(cfg, e, pcap_dir, corpus, scale=1.0):
    """(pcap path, count, rate_gbps) of a pfc_storm / malformed_burst event:
    the frames the real soak's rogue host sends for it (soak.py start_rogue),
    at its rate x scale (the twin's link speed over the real one's: the same
    share of the line)."""
    r = {k: v * scale for k, v in cfg["rogue"].items()}
    if e["kind"] == "pfc_storm":
        path = os.path.join(pcap_dir, "pfc-storm.pcap")
        if not os.path.exists(path):
            soak_frames.write_pcap(path, [soak_frames.pfc_storm_frame()])
        return path, None, r["pfc_rate_gbps"]
    path = os.path.join(pcap_dir, f"burst-{e['seed']}.pcap")
    if not os.path.exists(path):
        targets = [(bytes.fromhex(soak.NIC_MACS[x].replace(":", "")), [int(v) for v in soak.NIC_IPS[x].split(".")])
                   for x in ("nic_server", "nic_client", "mrc_server", "mrc_client")]
        soak_frames.write_pcap(path, soak_frames.burst(e["seed"], e["frames"], corpus, targets))
    return path, e["frames"], r["malformed_rate_gbps"]


def sim_events(schedule, ports, ms_per_s, end_ms, cfg=None, rogue_port=None, pcap_dir=None, corpus=None, scale=1.0):
    """The sf-sim plan events of the schedule's sim kinds. ports: switch port
    -> host name (a link is named by its host); rogue_port: the switch port
    the inject events feed (pfc_storm, malformed_burst; skipped when None)."""
    out = []
    for e in schedule:
        at = round(e["t_s"] * ms_per_s, 6)
        k = e["kind"]
        if k == "reset":
            out.append({"kind": "reboot", "switch": "sw0", "at_ms": at, "down_ms": REBOOT_DOWN_MS})
            continue
        if k in ("nic_kill", "mrc_kill", "pktio_kill"):
            host = KILL_HOST.get((k, e.get("side", e.get("target"))))
            if host not in ports.values():
                continue  # no such host in the twin (no MRC pair configured)
            down_s = e.get("down_s", NIC_RESTART_S)
            until = round(min(end_ms, at + down_s * ms_per_s), 6)
            out += [{"kind": "link_down", "link": [host, f"sw0:{soak_port(ports, host)}"], "at_ms": at},
                    {"kind": "link_up", "link": [host, f"sw0:{soak_port(ports, host)}"], "at_ms": until}]
            continue
        if k in ("pfc_storm", "malformed_burst"):
            if rogue_port is None:
                continue
            path, count, rate = rogue_frames(cfg, e, pcap_dir, corpus, scale)
            if count is None:  # a storm: XOFFs at the storm's rate for its length (virtual)
                wire_bits = (PFC_FRAME_BYTES + 24) * 8
                count = max(1, round(e["len_s"] * ms_per_s * 1e-3 * rate * 1e9 / wire_bits))
            out.append({"kind": "inject", "port": f"sw0:{rogue_port}", "pcap": path, "count": count,
                        "rate_gbps": rate, "at_ms": at})
            continue
        port = e["port"]
        host = ports.get(port)
        dur = e.get("down_s", e.get("len_s"))
        until = round(min(end_ms, at + dur * ms_per_s), 6)
        if host is None:
            # The rogue port: its link is the injector's (sf-sim makes it); a blackhole names the port.
            if k == "blackhole" and port == rogue_port:
                out.append({"kind": "blackhole", "port": f"sw0:{port}", "at_ms": at, "until_ms": until})
            continue
        link = [host, f"sw0:{port}"]
        if k == "link_flap":
            out += [{"kind": "link_down", "link": link, "at_ms": at}, {"kind": "link_up", "link": link, "at_ms": until}]
        elif k == "loss":
            out += [{"kind": "loss", "link": link, "rate": e["rate"], "at_ms": at},
                    {"kind": "loss", "link": link, "rate": 0, "at_ms": until}]
        elif k == "blackhole":
            out.append({"kind": "blackhole", "port": f"sw0:{port}", "at_ms": at, "until_ms": until})
    return out


def soak_port(ports, host):
    return next(p for p, h in ports.items() if h == host)


def topology(cfg, work, a):
    """The twin's sf-lab topology: the soak switch, a host per NIC / pktio role
    (addresses of the real soak's NICs), an RDMA WRITE flow per pair. Returns
    (path, {switch port: host})."""
    sw_path = os.path.join(work, "soak-switch.json")
    sw = soak.switch_config(cfg, work, sim=True)
    role_port = {r: p for p, r in cfg["switch"]["ports"].items()}
    if "rogue" in role_port:  # the injector's link runs at the port's speed: the twin's, as every other link
        sw["PORT"][role_port["rogue"]]["speed"] = a.speed_gbps
    with open(sw_path, "w") as f:
        json.dump(sw, f, indent=1)
    nodes = {"sw0": {"kind": "switch", "config": sw_path}}
    links, port_host = [], {}
    for role, h in ROLE_HOST.items():
        if role not in role_port:
            continue
        nodes[h] = {"kind": "nic", "process": f"p{h}"}
        if role in soak.NIC_MACS:
            nodes[h].update(mac=soak.NIC_MACS[role], ip=soak.NIC_IPS[role])
        links.append({"a": h, "b": f"sw0:{role_port[role]}", "speed_gbps": a.speed_gbps})
        port_host[role_port[role]] = h
    size = int(a.gbytes_per_flow * (1 << 30))
    wl = [{"name": "rdma0", "type": "background", "src": "h0", "dst": "h1", "size_bytes": size},
          {"name": "rdma1", "type": "background", "src": "h2", "dst": "h3", "size_bytes": size}]
    if "mrc" in cfg and "h4" in nodes and "h5" in nodes:
        wl.append({"name": "mrc0", "type": "background", "src": "h4", "dst": "h5", "size_bytes": size,
                   "transport": "mrc", "dscp": cfg["mrc"].get("dscp", 26)})
    t = {"name": "soak-sim", "duration_s": a.run_limit_s, "ts_period_ms": 1000, "nodes": nodes, "links": links,
         "workloads": wl}
    path = os.path.join(work, "soak-sim-topology.json")
    with open(path, "w") as f:
        json.dump(t, f, indent=1)
    return path, port_host


def run_once(a, topo, events, out):
    """sf-lab's plan of the topology (its switch config and nic.json files),
    with verify on every workload and the schedule's events, run by sf-sim."""
    import sim as labsim
    import topology as tp
    t = tp.load(topo)
    lab = labsim.SimLab(t, out, a.build, a.seed, 100000, a.run_limit_s, log=lambda *x: None)
    lab.plan.check_binaries()
    lab.plan.write()
    for path in lab.plan.nic_cfgs.values():
        with open(path) as f:
            nc = json.load(f)
        for w in nc["workloads"]:
            w["verify"] = True  # every byte checked where it lands (sf-lab's flows run without)
        with open(path, "w") as f:
            json.dump(nc, f, indent=2)
    plan = lab.sim_plan()
    plan["events"] = events
    plan_path = os.path.join(lab.plan.run_dir, "sim-plan.json")
    with open(plan_path, "w") as f:
        json.dump(plan, f, indent=1)
    r = subprocess.run([lab.plan.sim_bin, plan_path, "--out", out], capture_output=True, text=True,
                       timeout=a.timeout_s)
    with open(os.path.join(out, "sf-sim.stdout"), "w") as f:
        f.write(r.stdout)
    with open(os.path.join(out, "sf-sim.stderr"), "w") as f:
        f.write(r.stderr)
    txt = r.stdout.strip()
    try:
        line = json.loads(txt.splitlines()[-1]) if txt else None
    except ValueError:
        line = None
    rep = None
    p = os.path.join(out, "switch-sw0-report.json")
    if os.path.exists(p):
        with open(p) as f:
            rep = json.load(f)
    nics = {}
    for h in ROLE_HOST.values():
        q = os.path.join(out, f"nic-p{h}-report.json")
        if os.path.exists(q):
            with open(q) as f:
                nics[h] = json.load(f)
    return r, line, rep, nics


def check(a, r, line, rep, nics, fail, rogue_port=None, inject_planned=0):
    if line is None or rep is None:
        fail(f"sf-sim exit {r.returncode}, no result:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        return
    if len(nics) < 4:
        fail(f"nic reports of {sorted(nics)} only")
    # Workloads: done byte-exact or failed with a QP error, never a verify error.
    for h, nr in nics.items():
        for w in nr.get("workloads", []):
            if w.get("verify_errors", 0):
                fail(f"{h} {w['name']}: {w['verify_errors']} verify errors")
            if w.get("status") != "ok" and "retry" not in w.get("status", "") and "error" not in w.get("status", ""):
                fail(f"{h} {w['name']}: status {w.get('status')}")
    if r.returncode not in (0, 1) or (r.returncode == 1 and line.get("failed_workloads", 0) == 0):
        fail(f"sf-sim exit {r.returncode}: {line}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
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
    # The rogue host: every frame planned was sent, and the rogue port received exactly what its link
    # delivered (the rest the link's faults took: down, blackholed).
    if inject_planned:
        inj = line.get("inject") or {}
        if not inj.get("done") or inj.get("sent") != inject_planned:
            fail(f"injector: {inj} (planned {inject_planned} frames)")
        rogue = [p for p in ports if p["name"] == rogue_port]
        if not rogue or rogue[0]["rx_packets"] != inj.get("delivered"):
            fail(f"{rogue_port}: received {rogue and rogue[0]['rx_packets']}, its link delivered {inj.get('delivered')}")


def summary(line, rep, nics):
    drops = {}
    for p in rep["ports"] if rep else []:
        for k, v in p["drops"].items():
            drops[k] = drops.get(k, 0) + v
    flows = {}
    for h, nr in nics.items():
        for w in nr.get("workloads", []):
            if w.get("role") == "client":
                flows[w["name"]] = {"transport": w.get("transport", "rc"), "status": w["status"], "bytes": w["bytes"],
                                    "retransmits": sum(x.get("retransmits", 0) for x in nr.get("hosts", []))}
                m = (nr.get("hosts") or [{}])[0].get("mrc")
                if m:
                    flows[w["name"]]["mrc"] = {k: m[k] for k in ("rtx_sack", "rtx_nack", "rtx_timeout", "timeouts")
                                               if k in m}
    verify = sum(w.get("verify_errors", 0) for nr in nics.values() for w in nr.get("workloads", []))
    checked = sum(w.get("bytes", 0) for nr in nics.values() for w in nr.get("workloads", [])
                  if w.get("role") == "server")
    return {"sim_events": line and line.get("events"), "trace_hash": line and line.get("trace_hash"),
            "end_s": line and line.get("end_s"), "finished": line and line.get("finished"),
            "failed_workloads": line and line.get("failed_workloads"), "mbufs": line and line.get("mbufs"),
            "switch_rx": rep and sum(p["rx_packets"] for p in rep["ports"]),
            "switch_tx": rep and sum(p["tx_packets"] for p in rep["ports"]),
            "drops": dict(sorted(drops.items())), "trimming": rep and rep.get("trimming"),
            "pfc_rx_pause": rep and sum(v for p in rep["ports"] for k, v in p["pfc"].items()
                                        if k.startswith("rx_prio") and k.endswith("_pause")),
            "inject": line and line.get("inject"), "flows": flows, "verify_errors": verify,
            "bytes_verified": checked}


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
    ap.add_argument("--keep-pcaps", action="store_true", help="keep the rogue host's pcaps (DIR/pcaps) with --out")
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
        topo, port_host = topology(cfg, work, a)
        rogue_port = next((p for p, r in cfg["switch"]["ports"].items() if r == "rogue"), None)
        pcap_dir = os.path.join(work, "pcaps")
        os.makedirs(pcap_dir, exist_ok=True)
        events = sim_events(sched, port_host, a.ms_per_s, a.run_limit_s * 1000, cfg=cfg, rogue_port=rogue_port,
                            pcap_dir=pcap_dir, corpus=soak_frames.load_corpus(ROOT),
                            scale=a.speed_gbps / cfg["switch"]["speed_gbps"])
        inject_planned = sum(e["count"] for e in events if e["kind"] == "inject")
        results = []
        for k in range(max(1, a.runs)):
            out = os.path.join(work, f"run{k}")
            shutil.rmtree(out, ignore_errors=True)
            r, line, rep, nics = run_once(a, topo, events, out)
            check(a, r, line, rep, nics, fail, rogue_port, inject_planned)
            results.append((line, rep, summary(line, rep, nics)))
        if not a.keep_pcaps:
            shutil.rmtree(pcap_dir, ignore_errors=True)
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
