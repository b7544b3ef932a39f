#!/usr/bin/python3
"""sf-lab integration tests: the launcher end to end with real processes,
its bad-input errors, and the sf-nic config generation (no process).

Usage: lab_test.py --build BUILD_DIR CASE
CASE:
  small          config/topologies/small-incast.json (2 senders, 1 receiver):
                 processes start, traffic crosses the switch, the report has
                 non-empty plots and numbers that add up (recomputed here from
                 the processes' own reports), nothing is left running
  two_switch     config/topologies/two-switch-incast.json: across a
                 switch-switch memif link
  victim         config/topologies/incast-victim.json: sized and timed
                 flows, per-flow accounting
  interrupt      a timed workload, SIGINT to sf-lab mid-run: the senders
                 stop, the switches drain (run.drained), stderr says so,
                 exit 130, the report is still written, nothing is left running
  interrupt_term the same with SIGTERM
  interrupt_startup  SIGINT while sf-lab plans or starts processes: exit
                 130, nothing left
  child_term     SIGTERM to sf-lab's sf-switch mid-run: sf-lab names it,
                 stops the rest, exits non-zero, nothing left
  bad_topology   unknown nodes, a port used twice, impossible speeds, a
                 workload larger than memory, a missing config file, ...:
                 exit 2 with the JSON path, before anything starts
  nic            config/topologies/nic-incast.json with the real sf-nic
                 (skipped where build/nic/app/sf-nic does not exist), its
                 write_lat probe measuring the latency through the incast's queue
  cc_CC          config/topologies/cc/incast-CC.json with the real sf-nic and
                 sf-switch, one per congestion control (CC: none, dcqcn-nvidia,
                 dcqcn-paper, swift, bbr, hpcc, nscc): every flow completes and
                 each QP's CC state moved (HPCC: INT records from the switch)
  cc_files       config/topologies/cc/ is what its gen.py writes (no process)
  nic_config     nic.json and the sf-nic command line per the contract, and
                 parsing a contract-shaped --report (no sf-nic process)
  frames         pktio frames against scapy (headers, ICRC), pcap round trip,
                 per-flow attribution of a looped replay (no process)
Exit 0 = pass, 77 = skipped, else fail. Waits are bounded polls on the
sf-lab process and its files, never a sleep to let time pass.
"""
import argparse
import copy
import glob
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SF_LAB = os.path.join(ROOT, "tools", "sf-lab")
sys.path.insert(0, os.path.join(ROOT, "tools", "lab"))
sys.path.insert(0, os.path.join(ROOT, "tools", "demo"))

SKIP = 77


class TestFailure(AssertionError):
    pass


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


def run_lab(args, timeout_s):
    p = subprocess.run([SF_LAB] + args, capture_output=True, text=True, timeout=timeout_s)
    return p


def hugetlbfs_mounts():
    with open("/proc/mounts") as f:
        return [l.split()[1] for l in f if len(l.split()) > 2 and l.split()[2] == "hugetlbfs"]


def check_nothing_left(res, lab_pid):
    """Every child PID gone, no runtime dir or huge page file of its prefix,
    no memif socket dir of the run."""
    procs = res["processes"]
    for name, pid in procs["pids"].items():
        alive = os.path.exists(f"/proc/{pid}")
        if alive:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            check("--file-prefix sflab" not in cmd and procs["prefixes"][0].split("-")[0] not in cmd,
                  f"{name} (pid {pid}) still running: {cmd}")
    check(procs["still_running"] == [] and procs["still_present"] == [], f"left: {procs}")
    for pre in procs["prefixes"]:
        check(not os.path.exists(os.path.join("/var/run/dpdk", pre)), f"runtime dir of {pre} left")
        for mnt in hugetlbfs_mounts():
            left = [f for f in os.listdir(mnt) if f.startswith(pre + "map_")]
            check(not left, f"huge page files left: {left}")
    socks = glob.glob(f"/tmp/sflab{lab_pid}-*")
    check(not socks, f"run dir with memif sockets left: {socks}")
    check(procs["removed_leftovers"] == [], f"the lab had to remove what a killed process left: "
                                            f"{procs['removed_leftovers']}")


def png_ok(path):
    with open(path, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    w, h = struct.unpack("!II", head[16:24])
    check(w >= 400 and h >= 300 and os.path.getsize(path) > 10000, f"{path}: {w}x{h}, {os.path.getsize(path)} B")


def last_json(path):
    with open(path) as f:
        for line in reversed(f.read().strip().splitlines()):
            if line.startswith("{"):
                return json.loads(line)
    raise TestFailure(f"no JSON line in {path}")


def run_shipped(build, name, out, tail_chars=2000):
    """Runs config/topologies/NAME with sf-lab (no console) into `out`.
    Expect: it finishes within 50 s, exits 0, and leaves no process, socket
    or hugepage file behind. Returns its results.json."""
    topo_path = os.path.join(ROOT, "config", "topologies", name)
    p = subprocess.Popen([SF_LAB, "run", topo_path, "--out", out, "--build", build, "--no-console"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        so, se = p.communicate(timeout=50)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGINT)
        so, se = p.communicate(timeout=20)
        raise TestFailure(f"sf-lab did not finish in 50 s:\n{so[-3000:]}\n{se[-3000:]}")
    print(so[-tail_chars:])
    check(p.returncode == 0, f"sf-lab exited {p.returncode}:\n{se[-3000:]}")
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    check_nothing_left(res, p.pid)
    return res


# ---- small ------------------------------------------------------------------------

def case_small(build):
    out = tempfile.mkdtemp(prefix="sf-labt-small-")
    try:
        res = run_shipped(build, "small-incast.json", out, 2500)
        # Every process ran and exited 0; senders stopped by themselves.
        st = res["processes"]["exit_status"]
        check(set(st) == {"sw0", "h0", "h1", "r0"} and all(v == 0 for v in st.values()), f"exit status {st}")
        # The processes' own reports (not the lab's arithmetic).
        sw = json.load(open(os.path.join(out, "switch-sw0-report.json")))
        ports = {q["name"]: q for q in sw["ports"]}
        h0, h1, r0 = (last_json(os.path.join(out, "logs", f"{n}.stdout")) for n in ("h0", "h1", "r0"))
        frame = 74 + 1024
        want = 16 * 1024 * 1024 // 1024
        for name, j, port in (("h0", h0, "Ethernet0"), ("h1", h1, "Ethernet4")):
            m = j["ports"][1]
            check(j["fwd"]["read"] == want and j["fwd"]["queue_drops"] == 0,
                  f"{name}: read {j['fwd']} of {want} frames")
            check(m["tx_pkts"] == want and m["tx_bytes"] == want * frame and m["tx_drops_stalled"] == 0
                  and m["tx_drops_at_stop"] == 0, f"{name}: sent {m}")
            check(ports[port]["rx_packets"] == want, f"switch {port} rx {ports[port]['rx_packets']} of {want} "
                                                     f"({name}'s frames lost in the link)")
        eg = ports["Ethernet8"]
        check(eg["tx_packets"] > 0 and r0["sink"]["rx_pkts"] == eg["tx_packets"],
              f"receiver got {r0['sink']['rx_pkts']}, switch sent {eg['tx_packets']}")
        dropped = sum(q["dropped"] for q in sw["ports"])
        left = sw["tx_left_at_stop"] + sum(q["depth_packets"] for pp in sw["ports"] for q in pp["queues"])
        sent_b = h0["ports"][1]["tx_bytes"] + h1["ports"][1]["tx_bytes"]
        recv_b = r0["ports"][0]["rx_bytes"]
        check(sent_b == recv_b + (dropped + left) * frame,
              f"bytes sent {sent_b} != received {recv_b} + (dropped {dropped} + left {left}) x {frame}")
        print(f"sent {sent_b} B = received {recv_b} B + {dropped} dropped + {left} left frames x {frame} B")
        # results.json agrees with them.
        c = res["conservation"]
        check(c["ok"] and c["sent_bytes"] == sent_b and c["received_bytes"] == recv_b and
              c["switch_dropped_frames"] == dropped and c["lost_in_links_frames"] == 0, f"conservation {c}")
        flows = {f["name"]: f for f in res["flows"]}
        check(set(flows) == {"incast/h0", "incast/h1"}, f"flows {list(flows)}")
        per_flow_rx = {fl["sport"]: fl for fl in r0["flows"]}
        check(sum(fl["pkts"] for fl in r0["flows"]) == r0["sink"]["rx_pkts"] and r0["flow_other_pkts"] == 0,
              f"receiver's flows {r0['flows']} vs rx {r0['sink']['rx_pkts']}")
        for f in flows.values():
            check(f["frames_sent"] == want and f["frames_received"] == per_flow_rx[f["sport"]]["pkts"],
                  f"{f['name']}: {f['frames_sent']} sent, {f['frames_received']} received")
            check(f["frames_received"] > 0 and f["goodput_gbps"] > 0 and f["completion_s"] > 0,
                  f"{f['name']}: no traffic arrived: {f}")
            check(f["complete"] == (f["frames_received"] == want), f"{f['name']}: complete flag")
        check(sum(f["frames_lost"] for f in flows.values()) == dropped + left, "per-flow losses != switch drops")
        rp = {(q["switch"], q["port"]): q for q in res["ports"]}
        check(rp[("sw0", "Ethernet8")]["ecn_marked"] == sum(q["ecn_marked"] for q in eg["queues"]), "ECN marks")
        check(rp[("sw0", "Ethernet8")]["watermark_bytes"] > 0, "the receiver's queue never held a byte")
        lat = res["latency"]["ports"]["sw0:Ethernet8"]
        check(0 <= lat["p50_us"] <= lat["p99_us"] <= lat["max_us"], f"latency {lat}")
        # No probe: every flow's latency is the estimate at r0's port, labelled as such.
        check(res["latency"]["source"] == "queueing-delay estimate" and res["probes"] == [], "latency source")
        for f in flows.values():
            check(f["latency_source"] == "queueing-delay estimate at sw0:Ethernet8 (egress depth x 8 / line rate)"
                  and f["latency_us"]["p50"] == lat["p50_us"] and f["latency_us"]["max"] == lat["max_us"],
                  f"{f['name']} latency {f['latency_us']} from {f['latency_source']}")
        # Plots, time series, report.md.
        check(sorted(res["plots"]) == sorted(["queue_depth.png", "marks_pauses.png", "flow_throughput.png",
                                              "latency_cdf.png"]), f"plots {res['plots']}")
        for png in res["plots"]:
            png_ok(os.path.join(out, png))
        with open(os.path.join(out, "timeseries.jsonl")) as f:
            lines = [json.loads(l) for l in f]
        check(len([l for l in lines if l["source"] == "switch:sw0"]) >= 10, "time series too short")
        rx = [l for l in lines if l["source"] == "receiver:r0"]
        check(len(rx) >= 5, "receiver time series too short")
        final = {int(k): v for k, v in rx[-1]["flows"].items()}
        check(final == {fl["sport"]: [fl["pkts"], fl["bytes"]] for fl in r0["flows"]},
              f"the receiver's last sample {final} != its final counts {r0['flows']}")
        check(all(a["t_s"] <= b["t_s"] for a, b in zip(rx, rx[1:])), "receiver samples out of order")
        md = open(os.path.join(out, "report.md")).read()
        for png in res["plots"]:
            check(f"]({png})" in md, f"report.md does not embed {png}")
        check("holds" in md, "report.md lacks the conservation line")
    finally:
        shutil.rmtree(out, ignore_errors=True)


# ---- two switches ------------------------------------------------------------------------

def case_two_switch(build):
    """config/topologies/two-switch-incast.json: h0, h1 on leaf0 -> r0 on
    leaf1 over a switch-switch memif link. The inter-switch link loses
    nothing, the numbers add up over both switches, nothing is left."""
    out = tempfile.mkdtemp(prefix="sf-labt-2sw-")
    try:
        res = run_shipped(build, "two-switch-incast.json", out)
        l0 = {q["name"]: q for q in json.load(open(os.path.join(out, "switch-leaf0-report.json")))["ports"]}
        l1 = {q["name"]: q for q in json.load(open(os.path.join(out, "switch-leaf1-report.json")))["ports"]}
        check(l0["Ethernet12"]["tx_packets"] > 0, "nothing crossed the switch-switch link")
        check(l1["Ethernet12"]["rx_packets"] == l0["Ethernet12"]["tx_packets"],
              f"leaf0 sent {l0['Ethernet12']['tx_packets']} over the link, leaf1 got {l1['Ethernet12']['rx_packets']}")
        check(l1["Ethernet0"]["tx_packets"] == res["hosts"]["r0"]["rx_packets"], "r0 got what leaf1 sent")
        c = res["conservation"]
        check(c["ok"] and c["lost_in_links_frames"] == 0 and c["left_in_switch_frames"] == 0, f"conservation {c}")
        check(sum(f["frames_received"] for f in res["flows"]) == res["hosts"]["r0"]["rx_packets"], "per-flow sum")
        for png in res["plots"]:
            png_ok(os.path.join(out, png))
    finally:
        shutil.rmtree(out, ignore_errors=True)


# ---- incast + victim + background ---------------------------------------------------------

def case_victim(build):
    """config/topologies/incast-victim.json: sized incast and victim flows
    and a timed background flow (an endless pcap replayed for 3 s) over two
    switches. Per flow: sent = received + lost, the flows of each sender add
    up to its tx, the flows' losses add up to the switches' drops, the timed
    flow ran about its duration, nothing is left."""
    out = tempfile.mkdtemp(prefix="sf-labt-victim-")
    try:
        res = run_shipped(build, "incast-victim.json", out)
        flows = {f["name"]: f for f in res["flows"]}
        check(set(flows) == {"incast/h0", "incast/h1", "victim", "bg"}, f"flows {list(flows)}")
        for f in flows.values():
            check(f["frames_sent"] == f["frames_received"] + f["frames_lost"], f"{f['name']}: {f}")
            check(f["frames_received"] > 0, f"{f['name']}: nothing arrived")
        for host in ("h0", "h1", "h2"):
            sent = last_json(os.path.join(out, "logs", f"{host}.stdout"))["ports"][1]["tx_pkts"]
            check(sum(f["frames_sent"] for f in flows.values() if f["src"] == host) == sent == 8192 // (
                2 if host == "h2" else 1), f"{host}: flows {sent}")
        bg = last_json(os.path.join(out, "logs", "h3.stdout"))
        check(flows["bg"]["frames_sent"] == bg["ports"][1]["tx_pkts"] and bg["fwd"]["queue_drops"] == 0,
              f"bg: {flows['bg']['frames_sent']} vs {bg['ports'][1]['tx_pkts']}, {bg['fwd']}")
        check(2.5 <= bg["ports"][1]["tx_window_s"] <= 3.5, f"bg sent for {bg['ports'][1]['tx_window_s']} s, want ~3")
        drops = sum(q["dropped"] for sw in ("leaf0", "leaf1")
                    for q in json.load(open(os.path.join(out, f"switch-{sw}-report.json")))["ports"])
        check(sum(f["frames_lost"] for f in flows.values()) == drops, f"flow losses vs switch drops {drops}")
        check(res["conservation"]["ok"], f"conservation {res['conservation']}")
        check(not glob.glob(os.path.join(out, "run", "*.pcap")), "pcaps not removed")
    finally:
        shutil.rmtree(out, ignore_errors=True)


# ---- nic hosts (real sf-nic; skipped where it is not built) -----------------------------

def case_nic(build):
    """config/topologies/nic-incast.json: two sf-nic senders (one process)
    and one receiver (another) through sf-switch. Every workload completes
    with status ok and its 4 MiB, traffic crossed the switch, CNPs sent =
    CNPs received when the switch dropped nothing, plots written, nothing
    left."""
    out = tempfile.mkdtemp(prefix="sf-labt-nic-")
    try:
        res = run_shipped(build, "nic-incast.json", out)
        for f in res["flows"]:
            check(f["status"] == "ok" and f["complete"] and f["bytes_sent"] == 4 * 1024 * 1024 and
                  f["completion_s"] > 0 and f["goodput_gbps"] > 0, f"{f['name']}: {f}")
        ports = {(q["switch"], q["port"]): q for q in res["ports"]}
        check(ports[("sw0", "Ethernet0")]["rx_bytes"] >= 4 * 1024 * 1024 and
              ports[("sw0", "Ethernet4")]["rx_bytes"] >= 4 * 1024 * 1024 and
              ports[("sw0", "Ethernet8")]["tx_bytes"] >= 8 * 1024 * 1024, f"traffic through the switch: {ports}")
        h = res["hosts"]
        if res["totals"]["dropped"] == 0:
            check(h["n2"]["cnp_sent"] == h["n0"]["cnp_received"] + h["n1"]["cnp_received"],
                  f"CNPs sent {h['n2']['cnp_sent']} != received {h['n0']['cnp_received']} + {h['n1']['cnp_received']}")
        check(res["totals"]["cnp_sent"] == sum(x.get("cnp_sent", 0) for x in h.values()), "CNP totals")
        check(res["conservation"]["applies"] is False, "conservation is for pktio traffic")
        # The write_lat probe n0 -> n2 ran through the incast's queue: measured round trips.
        check(len(res["probes"]) == 1, f"probes {res.get('probes')}")
        pr = res["probes"][0]
        st = pr["rtt_us"]
        check(pr["status"] == "ok" and st is not None and st["samples"] > 0 and pr["round_trips"] == st["samples"],
              f"probe {pr}")
        check(0 < st["min"] <= st["p50"] <= st["p99"] <= st["max"], f"probe RTT order {st}")
        check(pr["during_flows"] is not None and pr["during_flows"]["samples"] > 0, f"probe during flows {pr}")
        check(res["latency"]["source"] == "probe write_lat", f"latency source {res['latency']['source']}")
        for f in res["flows"]:
            lat = f["latency_us"]
            check(f["latency_source"].startswith("probe write_lat 'probe' n0 -> n2") and
                  lat["samples"] > 0 and lat["p50"] <= lat["p99"] <= lat["max"], f"{f['name']} latency {f}")
        check("Latency probes (measured)" in open(os.path.join(out, "report.md")).read(), "report.md probe table")
        for png in res["plots"]:
            png_ok(os.path.join(out, png))
    finally:
        shutil.rmtree(out, ignore_errors=True)


# ---- interrupt --------------------------------------------------------------------------

def start_background_run(build, d):
    """sf-lab running a 30 s background flow h0 -> r0 through sw0 in `d`;
    returns (Popen, out dir) once traffic crosses the switch."""
    topo = json.load(open(os.path.join(ROOT, "config", "topologies", "small-incast.json")))
    topo["nodes"]["sw0"]["config"] = os.path.join(ROOT, "config", "switch", "seed000-static-lossless.json")
    topo["duration_s"] = 30
    topo["workloads"] = [{"name": "bg", "type": "background", "src": "h0", "dst": "r0", "duration_s": 30,
                          "rate_gbps": 0.5}]
    del topo["nodes"]["h1"]
    topo["links"] = [l for l in topo["links"] if l["a"] != "h1"]
    path = os.path.join(d, "t.json")
    json.dump(topo, open(path, "w"))
    out = os.path.join(d, "out")
    p = subprocess.Popen([SF_LAB, "run", path, "--out", out, "--build", build, "--no-console"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ts = os.path.join(out, "timeseries-sw0.jsonl")
    deadline = time.monotonic() + 30
    # Bounded wait until traffic crosses the switch (its time series shows rx bytes).
    while True:
        if p.poll() is not None:
            raise TestFailure(f"sf-lab exited early ({p.returncode}): {p.communicate()[1][-2000:]}")
        last = []
        try:
            with open(ts) as f:
                last = f.read().strip().splitlines()[-2:-1]  # the last complete line
            if last and json.loads(last[0])["ports"]["Ethernet0"]["rx_bytes"] > 100000:
                break
        except (OSError, ValueError, KeyError) as e:
            last = [f"{type(e).__name__}: {e}"]
        check(time.monotonic() < deadline, f"no traffic within 30 s: {ts}: {last[-1:]}")
        time.sleep(0.1)
    return p, out


def case_interrupt(build, sig=signal.SIGINT):
    """SIGINT (or SIGTERM) to sf-lab mid-run: it stops the senders, drains the
    switches (results.json run.drained), says so on stderr, writes the report
    and exits 130, leaving nothing behind."""
    d = tempfile.mkdtemp(prefix="sf-labt-int-")
    try:
        p, out = start_background_run(build, d)
        p.send_signal(sig)
        so, se = p.communicate(timeout=30)
        print(so[-1500:])
        print(se[-500:])
        check(p.returncode == 130, f"sf-lab exited {p.returncode} after {sig.name}, want 130:\n{se[-2000:]}")
        check(f"sf-lab: {sig.name}: senders stopped, switches drained" in se,
              f"stderr does not say the run was stopped and drained:\n{se[-2000:]}")
        res = json.load(open(os.path.join(out, "results.json")))
        check(res["run"]["interrupted"], "results.json does not say interrupted")
        check(res["run"]["drained"], f"not drained after {sig.name}: {res['run']}")
        check(res["run"]["stop_reason"] == f"interrupted ({sig.name})", f"stop_reason {res['run']['stop_reason']}")
        check_nothing_left(res, p.pid)
        f = res["flows"][0]
        check(f["frames_sent"] > 0 and f["frames_received"] > 0, f"no traffic: {f}")
        check(res["conservation"]["ok"], f"numbers after Ctrl-C: {res['conservation']}")
        for png in res["plots"]:
            png_ok(os.path.join(out, png))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def run_children(lab_pid):
    """{pid: cmdline} of the processes sf-lab `lab_pid` started (their DPDK
    file prefix names the run)."""
    pre = f"sflab{lab_pid}-".encode()
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            if pre in cmd:
                out[int(d)] = cmd.replace(b"\0", b" ").decode(errors="replace")
    return out


def check_run_gone(lab_pid):
    """Nothing of sf-lab `lab_pid`'s run is left: no process, runtime dir,
    memif socket dir or huge page file of its prefixes."""
    pre = f"sflab{lab_pid}-"
    left = run_children(lab_pid)
    check(not left, f"processes of the run left: {left}")
    check(not ([x for x in os.listdir("/var/run/dpdk") if x.startswith(pre)]
               if os.path.isdir("/var/run/dpdk") else []), "runtime dirs left")
    check(not glob.glob(f"/tmp/{pre}*"), f"socket dir left: {glob.glob(f'/tmp/{pre}*')}")
    for mnt in hugetlbfs_mounts():
        check(not [f for f in os.listdir(mnt) if f.startswith(pre)], "huge page files left")


def case_child_term(build):
    """SIGTERM to one of sf-lab's children (sf-switch) mid-run, as an operator
    or the OOM killer would: sf-lab notices, stops the other processes, says
    which one ended and how, exits non-zero and leaves nothing behind."""
    d = tempfile.mkdtemp(prefix="sf-labt-child-")
    try:
        p, out = start_background_run(build, d)
        kids = run_children(p.pid)
        sw = [pid for pid, cmd in kids.items() if "sf-switch" in cmd.split(" --")[0]]
        check(len(sw) == 1, f"want one sf-switch child of the run: {kids}")
        os.kill(sw[0], signal.SIGTERM)
        so, se = p.communicate(timeout=40)
        print(so[-1000:])
        print(se[-1000:])
        check(p.returncode not in (0, 130) and p.returncode > 0, f"sf-lab exited {p.returncode} after its switch was "
                                                                  f"terminated:\n{se[-2000:]}")
        check("sw0" in se and "exited" in se, f"stderr does not name the process that ended:\n{se[-2000:]}")
        check_run_gone(p.pid)
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---- interrupt during start-up -------------------------------------------------------------

def case_interrupt_startup(build):
    """SIGINT to sf-lab while it is still planning or starting processes
    (0, 0.3, 0.8, 1.5, 2.5 s after it said where the report goes): exit 130,
    nothing left (no PID of its own, no runtime dir, socket dir or huge page
    file of its prefixes)."""
    topo_path = os.path.join(ROOT, "config", "topologies", "small-incast.json")
    for delay in (0.0, 0.3, 0.8, 1.5, 2.5):
        out = tempfile.mkdtemp(prefix="sf-labt-early-")
        try:
            p = subprocess.Popen([SF_LAB, "run", topo_path, "--out", out, "--build", build, "--no-console"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 20
            for line in p.stdout:  # bounded by sf-lab's own progress; it prints the line before starting
                if line.startswith("  report"):
                    break
                check(time.monotonic() < deadline, "sf-lab did not print its plan")
            t0 = time.monotonic()
            while time.monotonic() - t0 < delay and p.poll() is None:
                time.sleep(0.02)
            p.send_signal(signal.SIGINT)
            so, se = p.communicate(timeout=40)
            print(f"SIGINT {delay} s after start-up began: exit {p.returncode}; {se.strip()[-200:]}")
            check(p.returncode == 130 or (p.returncode == 0 and "every workload finished" in so),
                  f"exit {p.returncode} after an early SIGINT:\n{se[-2000:]}")
            check_run_gone(p.pid)
        finally:
            shutil.rmtree(out, ignore_errors=True)


# ---- bad topology ----------------------------------------------------------------------------

def case_bad_topology(build):
    base = json.load(open(os.path.join(ROOT, "config", "topologies", "small-incast.json")))
    base["nodes"]["sw0"]["config"] = os.path.join(ROOT, "config", "switch", "seed000-static-lossless.json")

    def mut(f):
        t = copy.deepcopy(base)
        f(t)
        return t

    def set_(path, value):
        def f(t):
            o = t
            for k in path[:-1]:
                o = o[k]
            o[path[-1]] = value
        return f

    cases = [
        ("unknown node in a link", set_(["links", 2, "a"], "h9"), "links[2].a: unknown node 'h9'"),
        ("unknown switch port", set_(["links", 1, "b"], "sw0:Ethernet99"), "links[1].b: switch sw0 has no port 'Ethernet99'"),
        ("unknown node in a workload", set_(["workloads", 0, "receiver"], "r7"), "workloads[0].receiver: unknown node \"r7\""),
        ("unknown sender", set_(["workloads", 0, "senders"], ["h0", "hX"]), "workloads[0].senders[1]: unknown node \"hX\""),
        ("port used twice", set_(["links", 1, "b"], "sw0:Ethernet0"), "links[1].b: sw0:Ethernet0 is used twice (already by links[0].b)"),
        ("host linked twice", lambda t: t["links"].append({"a": "h0", "b": "sw0:Ethernet12"}),
         "links[3].a: host h0 is used twice"),
        ("speed 0", set_(["links", 0, "speed_gbps"], 0), "links[0].speed_gbps: 0 Gb/s is impossible"),
        ("speed 1000", set_(["links", 0, "speed_gbps"], 1000), "links[0].speed_gbps: 1000 Gb/s is impossible"),
        ("fractional speed", set_(["links", 2, "speed_gbps"], 2.5), "links[2].speed_gbps: 2.5 Gb/s is impossible"),
        ("rate above the link", lambda t: t["workloads"][0].update(rate_gbps=5),
         "workloads[0].rate_gbps: 5 Gb/s exceeds h0's link speed 1 Gb/s"),
        ("larger than memory", set_(["workloads", 0, "size_bytes"], "4TiB"),
         "workloads[0].size_bytes: the workload is larger than memory"),
        ("missing config file", set_(["nodes", "sw0", "config"], "config/switch/nope.json"),
         "nodes.sw0.config: no such file 'config/switch/nope.json'"),
        ("unknown key", set_(["links", 0, "sped_gbps"], 1), "links[0]: unknown key 'sped_gbps' (did you mean 'speed_gbps'?)"),
        ("bad size", set_(["workloads", 0, "size_bytes"], "lots"), "workloads[0].size_bytes: 'lots' is not a byte count"),
        ("host not linked", lambda t: t["nodes"].update(h5={"kind": "pktio"}), "nodes.h5: not connected"),
        ("bad kind", set_(["nodes", "h0", "kind"], "vm"), "nodes.h0.kind: 'vm' is not one of switch, pktio, nic"),
        ("pktio sends and receives", lambda t: t["workloads"].append(
            {"type": "victim", "src": "r0", "dst": "h0", "size_bytes": 1000}),
         "both sends and receives (a pktio host is a sender or a receiver"),
        ("mixed kinds", lambda t: (t["nodes"].update(n0={"kind": "nic"}), t["links"].append({"a": "n0", "b": "sw0:Ethernet12"}),
                                   t["workloads"][0].update(receiver="n0")),
         "workloads[0].senders[0]: h0 is a pktio host and n0 a nic host"),
        ("duplicate key", None, "duplicate key 'h0'"),
        ("probe of an unknown host", lambda t: t["workloads"].append(
            {"type": "probe", "src": "hX", "dst": "r0", "test": "write_lat"}), "workloads[1].src: unknown node \"hX\""),
        ("probe with a bandwidth test", lambda t: t["workloads"].append(
            {"type": "probe", "src": "h0", "dst": "r0", "test": "write_bw"}),
         "workloads[1].test: \"write_bw\" is not a latency test; a probe times single round trips: one of "
         "write_lat, read_lat, send_lat"),
        ("probe between pktio hosts", lambda t: t["workloads"].append(
            {"type": "probe", "src": "h0", "dst": "r0", "test": "read_lat"}),
         "workloads[1].src: h0 is a pktio host; a probe runs sf-nic's read_lat between two nic hosts"),
    ]
    d = tempfile.mkdtemp(prefix="sf-labt-bad-")
    try:
        before = set(os.listdir("/var/run/dpdk")) if os.path.isdir("/var/run/dpdk") else set()
        for i, (what, f, want) in enumerate(cases):
            path = os.path.join(d, f"t{i}.json")
            if f is None:
                text = json.dumps(base).replace('"h1": {"kind": "pktio"}', '"h0": {"kind": "pktio"}')
                open(path, "w").write(text)
            else:
                json.dump(mut(f), open(path, "w"))
            out = os.path.join(d, f"out{i}")
            p = run_lab(["run", path, "--out", out, "--build", build], 20)
            print(f"{what}: exit {p.returncode}: {p.stderr.strip()}")
            check(p.returncode == 2, f"{what}: exit {p.returncode}, want 2:\n{p.stdout[-800:]}{p.stderr[-800:]}")
            check(want in p.stderr, f"{what}: error does not say {want!r}:\n{p.stderr}")
            check(not os.path.exists(out), f"{what}: the report dir was made: something started")
            check(p.stdout == "", f"{what}: printed a plan: {p.stdout[:300]}")
        after = set(os.listdir("/var/run/dpdk")) if os.path.isdir("/var/run/dpdk") else set()
        check(not [x for x in after - before if x.startswith("sflab")], f"DPDK processes started: {after - before}")
        # A missing topology file and a bad --duration are errors too.
        p = run_lab(["run", os.path.join(d, "none.json"), "--build", build], 20)
        check(p.returncode == 2 and "no such topology file" in p.stderr, f"missing topology: {p.stderr}")
        p = run_lab(["run", os.path.join(ROOT, "config", "topologies", "small-incast.json"), "--duration", "-1",
                     "--build", build], 20)
        check(p.returncode == 2 and "--duration: -1.0 s: must be > 0" in p.stderr, f"bad --duration: {p.stderr}")
        # The shipped topologies are valid.
        for t in sorted(glob.glob(os.path.join(ROOT, "config", "topologies", "*.json"))):
            if "switch" in os.path.basename(t):
                continue
            p = run_lab(["check", t], 20)
            check(p.returncode == 0, f"{t}: {p.stderr}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---- nic config (no process) ---------------------------------------------------------------------

def case_nic_config(build):
    import nic
    import topology as tp
    d = tempfile.mkdtemp(prefix="sf-labt-nic-")
    try:
        topo = {
            "name": "nic-unit", "duration_s": 5,
            "nodes": {"sw0": {"kind": "switch", "config": os.path.join(ROOT, "config", "switch",
                                                                     "seed000-static-lossless.json")},
                      "n0": {"kind": "nic", "process": "senders", "cc": "dcqcn-paper"},
                      "n1": {"kind": "nic", "process": "senders"},
                      "n2": {"kind": "nic", "process": "rx", "mtu": 1024, "pfc_enable": "3,4"}},
            "links": [{"a": "n0", "b": "sw0:Ethernet0", "speed_gbps": 10},
                      {"a": "n1", "b": "sw0:Ethernet4", "speed_gbps": 10},
                      {"a": "n2", "b": "sw0:Ethernet8", "speed_gbps": 25}],
            "workloads": [{"name": "inc", "type": "incast", "senders": ["n0", "n1"], "receiver": "n2",
                           "size_bytes": "1MiB", "message_bytes": "64KiB", "qps": 2},
                          {"name": "bg", "type": "background", "src": "n1", "dst": "n2", "duration_s": 2,
                           "start_ms": 100, "rate_gbps": 2.5, "dscp": 0},
                          {"name": "pr", "type": "probe", "src": "n0", "dst": "n2", "test": "write_lat"}],
        }
        path = os.path.join(d, "t.json")
        json.dump(topo, open(path, "w"))
        t = tp.load(path)
        oob = {name: 19000 + i for i, name in enumerate(nic.oob_names(t))}
        check(nic.oob_names(t) == ["inc/n0", "inc/n1", "bg", "pr"], f"oob names {nic.oob_names(t)}")

        def dev(h):
            return f"net_memif0,role=client,id=0,socket=/tmp/x/{h.switch}-{h.port}.sock,socket-abstract=no,mac={h.mac}"

        procs_ = nic.nic_processes(t)
        check(procs_ == {"senders": ["n0", "n1"], "rx": ["n2"]}, f"processes {procs_}")
        snd = nic.build_nic_config(t, "senders", dev, lambda f: oob[f.name])
        rx = nic.build_nic_config(t, "rx", dev, lambda f: oob[f.name])
        print(json.dumps(snd, indent=1))
        check(set(snd["hosts"]) == {"n0", "n1"} and set(rx["hosts"]) == {"n2"}, "hosts per process")
        h0 = snd["hosts"]["n0"]
        check(h0 == {"devargs": dev(t.hosts["n0"]), "mac": "02:1a:00:00:00:01", "ip": "10.0.0.1", "speed": 10,
                     "mtu": 4096, "dscp": 26, "pfc_enable": "3", "cnp_dscp": 48}, f"n0 {h0}")
        check(rx["hosts"]["n2"]["mtu"] == 1024 and rx["hosts"]["n2"]["pfc_enable"] == "3,4" and
              rx["hosts"]["n2"]["speed"] == 25, f"n2 {rx['hosts']['n2']}")
        keys = {"name", "host", "type", "role", "oob", "size", "iterations", "duration_s", "qps", "cc", "verify",
                "start_ms", "dscp"}
        # The probe: a paced write_lat client on n0 (interval 1000 us / 10 Gb/s, every sample reported,
        # ending with the other clients of its process), its server on n2, the src's DSCP, one OOB port.
        pc = next(w for w in snd["workloads"] if w["name"] == "pr.client")
        ps = next(w for w in rx["workloads"] if w["name"] == "pr.server")
        check(pc == {"name": "pr.client", "host": "n0", "role": "client", "type": "write_lat",
                     "oob": f"127.0.0.1:{oob['pr']}", "size": 64, "iterations": 0, "duration_s": 5, "qps": 1,
                     "cc": "dcqcn-paper", "verify": False, "dscp": 26, "start_ms": 0, "interval_us": 100,
                     "samples": True, "stop_with_others": True}, f"probe client {pc}")
        check(ps == {"name": "pr.server", "host": "n2", "role": "server", "type": "write_lat", "oob": pc["oob"],
                     "size": 64, "iterations": 0, "duration_s": 5, "qps": 1, "cc": "dcqcn-paper", "verify": False,
                     "dscp": 26, "start_ms": 0}, f"probe server {ps}")
        snd["workloads"].remove(pc)
        rx["workloads"].remove(ps)
        # A probe without duration_s from a process that sends nothing, a probe's bad interval: errors.
        for mut_, want in (({"src": "n2", "dst": "n0"}, "workloads[2]: without duration_s a probe runs as long as"),
                           ({"interval_us": -1}, "workloads[2].interval_us: -1 is out of range")):
            bad = copy.deepcopy(topo)
            bad["workloads"][2].update(mut_)
            json.dump(bad, open(os.path.join(d, "bad.json"), "w"))
            try:
                tp.load(os.path.join(d, "bad.json"))
                raise TestFailure(f"{mut_}: no error")
            except tp.TopologyError as e:
                check(want in str(e), f"{mut_}: {e}")
        for w in snd["workloads"] + rx["workloads"]:
            extra = {"rate_limit"} if w["name"].startswith("bg.") else set()
            check(set(w) == keys | extra, f"workload keys {sorted(w)}")
            check(w["type"] == "write_bw", f"type {w['type']}")
            # bg sets dscp 0 (lossy) and both its sides carry it; the incast's QPs carry their host's (26).
            check(w["dscp"] == (0 if w["name"].startswith("bg.") else 26), f"{w['name']}: dscp {w['dscp']}")
        # Clients in the senders' process, servers in the receiver's, one OOB port per flow.
        check(sorted((w["name"], w["role"]) for w in snd["workloads"]) ==
              [("bg.client", "client"), ("inc-n0.client", "client"), ("inc-n1.client", "client")],
              f"senders' workloads {snd['workloads']}")
        check(sorted(w["name"] for w in rx["workloads"]) == ["bg.server", "inc-n0.server", "inc-n1.server"],
              "receiver's workloads")
        by = {w["name"]: w for w in snd["workloads"] + rx["workloads"]}
        c = by["inc-n0.client"]
        check(c["size"] == 65536 and c["iterations"] == 16 and c["qps"] == 2 and c["cc"] == "dcqcn-paper"
              and c["duration_s"] == 0 and c["oob"] == f"127.0.0.1:{oob['inc/n0']}", f"inc-n0 {c}")
        check(by["inc-n0.server"]["oob"] == c["oob"], "client and server OOB differ")
        b = by["bg.client"]
        check(b["iterations"] == 0 and b["duration_s"] == 2 and b["start_ms"] == 100 and b["cc"] == "dcqcn-nvidia"
              and b["rate_limit"] == 2.5, f"bg {b}")
        check(len({w["oob"] for w in snd["workloads"]}) == 3, "OOB ports must differ per flow")
        cmd = nic.nic_command("/b/nic/app/sf-nic", ["--no-pci", "--file-prefix", "p"], "/r/nic.json", "/o/rep.json",
                              "/o/ts.jsonl", 100, 8, "/w/ready")
        check(cmd == ["/b/nic/app/sf-nic", "--no-pci", "--file-prefix", "p", "--", "--config", "/r/nic.json",
                      "--report", "/o/rep.json", "--timeseries", "/o/ts.jsonl", "--ts-period-ms", "100",
                      "--run-limit", "8", "--backoff", "--ready-file", "/w/ready", "--log-level", "warn", "--id-seed", "0"], f"cmd {cmd}")
        ports = nic.free_tcp_ports(4)
        check(len(set(ports)) == 4 and all(1024 <= p < 65536 for p in ports), f"ports {ports}")
        # A report shaped as the contract says (what sf-nic will write); parse it.
        lat = {"min": 2.0, "p50": 3.0, "p99": 9.5, "max": 12.0, "avg": 3.4}
        rep_snd = {"workloads": [
            {"name": "inc-n0.client", "host": "n0", "type": "write_bw", "role": "client", "bytes": 1048576,
             "messages": 16, "seconds": 0.01, "goodput_gbps": 0.84, "msg_rate_mpps": 0.0016, "completion_s": 0.0100,
             "latency_us": None, "status": "ok", "verify_errors": 0},
            {"name": "inc-n1.client", "host": "n1", "type": "write_bw", "role": "client", "bytes": 524288,
             "messages": 8, "seconds": 0.02, "goodput_gbps": 0.21, "msg_rate_mpps": 0.0004, "completion_s": 0.0200,
             "latency_us": lat, "status": "IBV_WC_RETRY_EXC_ERR", "verify_errors": 0}],
            "hosts": [{"name": "n0", "tx_packets": 300, "rx_packets": 20, "tx_bytes": 1100000, "rx_bytes": 1500,
                       "cnp_sent": 0, "cnp_received": 7, "ecn_ce_received": 0, "retransmits": 3, "timeouts": 0,
                       "naks_sent": 0, "naks_received": 1, "rx_prio3_pause": 5, "tx_prio3_pause": 0,
                       "rx_prio4_pause": 1, "drops": {"bad_icrc": 2}}]}
        rep_rx = {"workloads": [{"name": "inc-n0.server", "host": "n2", "type": "write_bw", "role": "server",
                                 "bytes": 1048576, "messages": 16, "seconds": 0.01, "goodput_gbps": 0.84,
                                 "msg_rate_mpps": 0.0016, "completion_s": 0.01, "latency_us": None, "status": "ok",
                                 "verify_errors": 0}],
                  "hosts": [{"name": "n2", "tx_packets": 20, "rx_packets": 290, "tx_bytes": 1500,
                             "rx_bytes": 1000000, "cnp_sent": 7, "cnp_received": 0, "ecn_ce_received": 9,
                             "retransmits": 0, "timeouts": 0, "naks_sent": 1, "naks_received": 0,
                             "rx_prio3_pause": 0, "tx_prio3_pause": 4, "drops": {}}]}
        flows, hosts = nic.parse_nic_report([rep_snd, rep_rx], t)
        check(flows["inc/n0"]["bytes"] == 1048576 and flows["inc/n0"]["status"] == "ok" and
              flows["inc/n0"]["server_status"] == "ok" and flows["inc/n0"]["completion_s"] == 0.01, f"{flows}")
        check(flows["inc/n1"]["status"] == "IBV_WC_RETRY_EXC_ERR" and flows["inc/n1"]["latency_us"] == lat and
              flows["inc/n1"]["server_status"] is None, f"{flows['inc/n1']}")
        check(flows["bg"]["status"] == "missing from the sf-nic report", f"{flows['bg']}")
        check(hosts["n0"]["pfc_pause_received"] == 6 and hosts["n0"]["pfc_pause_sent"] == 0 and
              hosts["n0"]["dropped"] == 2 and hosts["n0"]["cnp_received"] == 7, f"{hosts['n0']}")
        check(hosts["n2"]["pfc_pause_sent"] == 4 and hosts["n2"]["cnp_sent"] == 7, f"{hosts['n2']}")
        # The probe's samples and the flows' windows (times since connect).
        rep_snd["workloads"][0].update(start_s=0.001, end_s=0.011)
        rep_snd["workloads"].append({"name": "pr.client", "host": "n0", "type": "write_lat", "role": "client",
                                     "messages": 3, "status": "ok", "start_s": 0.0, "end_s": 0.02,
                                     "latency_us": {"min": 4.0, "p50": 5.0, "p99": 900.0, "max": 900.0},
                                     "latency_samples": {"t_s": [0.0, 0.005, 0.019], "us": [4.0, 900.0, 5.0]}})
        probes, windows = nic.parse_probe_report([rep_snd, rep_rx], t)
        check(probes["pr"]["samples_us"] == [4.0, 900.0, 5.0] and probes["pr"]["samples_t_s"] == [0.0, 0.005, 0.019]
              and probes["pr"]["status"] == "ok", f"probes {probes}")
        check(windows == {"inc/n0": (0.001, 0.011)}, f"windows {windows}")
        # And a nic run refuses to start without the binary (sf-nic not built here).
        nic_bin = os.path.join(build, "nic", "app", "sf-nic")
        if not os.path.exists(nic_bin) and os.geteuid() == 0:
            p = run_lab(["run", path, "--out", os.path.join(d, "o"), "--build", build], 20)
            check(p.returncode == 2 and "sf-nic is not built" in p.stderr, f"no sf-nic: {p.returncode} {p.stderr}")
            check(not os.path.exists(os.path.join(d, "o")), "no sf-nic: the report dir was made")
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---- frames (no process) -----------------------------------------------------------------

def case_frames(build):
    """The pktio frames against scapy's decoder and ICRC; pcap round trip;
    the per-flow attribution of a looped replay."""
    import frames
    from scapy.all import Ether, IP, UDP  # python3-scapy
    from scapy.contrib.roce import BTH
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
    from pcapfile import read_pcap
    for mtu, dscp, ect in ((1024, 26, True), (256, 0, False), (512, 46, True)):
        ff = frames.FlowFrames(src_mac="02:1a:00:00:00:01", dst_mac="02:1a:00:00:00:09", src_ip="10.0.0.1",
                               dst_ip="10.0.0.9", sport=49153, dscp=dscp, qpn=0x101, ib_mtu=mtu, ect=ect)
        for k in (0, 1, 255, 0xFFFFFF + 3):
            fr = ff.frame(k)
            check(len(fr) == 74 + mtu == ff.frame_bytes, f"length {len(fr)}")
            pkt = Ether(fr)
            check(pkt[IP].tos == (dscp << 2 | (2 if ect else 0)) and pkt[UDP].sport == 49153 and
                  pkt[UDP].dport == 4791, f"headers {pkt.summary()}")
            check(pkt[BTH].opcode == 0x0A and pkt[BTH].dqpn == 0x101 and pkt[BTH].psn == k & 0xFFFFFF,
                  f"BTH {pkt[BTH].opcode} {pkt[BTH].dqpn} {pkt[BTH].psn}")
            again = Ether(fr)
            again[BTH].icrc = None
            del again[IP].chksum
            del again[UDP].chksum
            re = Ether(bytes(again))
            check(re[BTH].icrc == pkt[BTH].icrc, f"ICRC {pkt[BTH].icrc:#x}, scapy {re[BTH].icrc:#x}")
            check(re[IP].chksum == pkt[IP].chksum, "IPv4 checksum")
    d = tempfile.mkdtemp(prefix="sf-labt-frames-")
    try:
        a = frames.FlowFrames(src_mac="02:00:00:00:00:01", dst_mac="02:00:00:00:00:02", src_ip="10.0.0.1",
                              dst_ip="10.0.0.2", sport=49152, dscp=26, qpn=1, ib_mtu=256)
        b = frames.FlowFrames(src_mac="02:00:00:00:00:01", dst_mac="02:00:00:00:00:03", src_ip="10.0.0.1",
                              dst_ip="10.0.0.3", sport=49153, dscp=0, qpn=2, ib_mtu=256, ect=False)
        counts = [5, 2]
        order = list(frames.interleave(counts))
        check(order == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (0, 3), (0, 4)], f"interleave {order}")
        path = os.path.join(d, "x.pcap")
        n, nbytes = frames.write_pcap(path, ((a, b)[i].frame(k) for i, k in order))
        got = read_pcap(path)
        check(n == 7 == len(got) and nbytes == 7 * 330 and got[1] == b.frame(0) and got[6] == a.frame(4),
              f"pcap {n} {nbytes} {len(got)}")
        check(frames.cycle_sent(counts, 0) == [0, 0] and frames.cycle_sent(counts, 3) == [2, 1] and
              frames.cycle_sent(counts, 7) == [5, 2] and frames.cycle_sent(counts, 7 * 3 + 4) == [17, 8],
              "cycle_sent")
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---- congestion control in real time ----------------------------------------------------

CC_ALGO = {"none": None, "dcqcn-nvidia": "dcqcn", "dcqcn-paper": "dcqcn", "swift": "swift", "bbr": "bbr",
           "hpcc": "hpcc", "nscc": "nscc"}


def case_cc_files(build):
    """config/topologies/cc/*.json are what config/topologies/cc/gen.py
    writes (no process)."""
    sys.path.insert(0, os.path.join(ROOT, "config", "topologies", "cc"))
    import gen
    want = gen.files()
    d = os.path.join(ROOT, "config", "topologies", "cc")
    have = {n for n in os.listdir(d) if n.endswith(".json")}
    check(have == set(want), f"shipped {sorted(have)} != written {sorted(want)}")
    for name, text in want.items():
        with open(os.path.join(d, name)) as f:
            check(f.read() == text, f"config/topologies/cc/{name} differs from gen.py's output: run gen.py")
    check(sorted(gen.CCS) == sorted(CC_ALGO), f"a CC without a test case: {gen.CCS}")


def case_cc(build, cc):
    """config/topologies/cc/incast-CC.json (issue 16 section 4: a lab
    topology per CC in real time): two rounds of a 4:1 incast of 2 MiB per
    sender through sf-switch plus a write_lat probe. Every flow completes with
    its bytes, nothing is left running, the probe measured round trips, and
    every sender QP ran CC with its own state moving (DCQCN: a stage and a
    rate; the ACK-driven ones: RTT samples and a window; HPCC: INT records
    from the real switch echoed in its ACKs; NSCC: MRC QPs taking decisions);
    with none there is no CC state at all."""
    out = tempfile.mkdtemp(prefix=f"sf-labt-cc-{cc}-")
    try:
        res = run_shipped(build, os.path.join("cc", f"incast-{cc}.json"), out, tail_chars=1500)
        flows = res["flows"]
        check(len(flows) == 8, f"want 2 rounds x 4 flows: {[f['name'] for f in flows]}")
        for f in flows:
            check(f["status"] == "ok" and f["complete"] and f["bytes_sent"] == 2 << 20 and f["goodput_gbps"] > 0,
                  f"{f['name']}: {f}")
        pr = res["probes"][0]
        check(pr["status"] == "ok" and pr["rtt_us"] and pr["rtt_us"]["samples"] > 0, f"probe {pr}")
        with open(os.path.join(out, "nic-senders-report.json")) as f:
            senders = json.load(f)
        ccs = [q for h in senders["hosts"] for q in h.get("qp_cc", [])]
        algo = CC_ALGO[cc]
        gbps = [sum(f["goodput_gbps"] for f in flows if f["name"].startswith(f"round{k}/")) for k in (0, 1)]
        p99 = (pr["during_flows"] or {}).get("p99")
        print(f"{cc}: rounds {gbps[0]:.2f} / {gbps[1]:.2f} Gb/s, probe p99 during flows {p99} us, "
              f"ECN marks {res['totals']['ecn_marked']}, PFC pauses {res['totals']['pfc_pause_sent']}, "
              f"CC QPs {len(ccs)}")
        if algo is None:
            check(ccs == [], f"cc none reported CC state: {ccs[:2]}")
            return
        # 8 flows + the probe's QP, each on a sender host.
        check(len(ccs) == 9 and all(q["cc"] == algo for q in ccs), f"want 9 {algo} QPs: {ccs}")
        for q in ccs:
            if algo == "dcqcn":
                check(q["state"] in ("idle", "decrease", "fast_recovery", "additive_increase", "hyper_increase")
                      and q["rate_gbps"] > 0 and q["target_rate_gbps"] > 0, f"DCQCN state {q}")
            else:
                check(q["rtt_samples"] > 0 and 0 < q["rtt_min_us"] <= q["rtt_avg_us"] <= q["rtt_max_us"]
                      and q["window_bytes"] > 0 and q["acks"] > 0, f"{algo}: RTT / window {q}")
        if algo == "hpcc":
            with open(os.path.join(out, "switch-sw0-report.json")) as f:
                sw = json.load(f)
            records = sum(p.get("int", {}).get("records", 0) for p in sw["ports"])
            check(records > 0, f"the switch appended no INT record: {[p.get('int') for p in sw['ports']]}")
            check(all(q["int_acks"] > 0 and q["hops"] == 1 for q in ccs), f"HPCC QPs without INT feedback: {ccs}")
        if algo == "nscc":
            check(sum(q["fair"] + q["proportional"] + q["decreases"] + q["no_change"] for q in ccs) > 0,
                  f"NSCC took no decision: {ccs}")
    finally:
        shutil.rmtree(out, ignore_errors=True)


CASES = {"frames": case_frames, "small": case_small, "two_switch": case_two_switch, "victim": case_victim,
         "nic": case_nic,
         "interrupt_startup": case_interrupt_startup, "interrupt": case_interrupt,
         "child_term": case_child_term,
         "interrupt_term": lambda b: case_interrupt(b, signal.SIGTERM), "bad_topology": case_bad_topology,
         "nic_config": case_nic_config, "cc_files": case_cc_files,
         **{f"cc_{cc}": (lambda c: lambda b: case_cc(b, c))(cc) for cc in CC_ALGO}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if a.case in ("small", "interrupt", "two_switch", "interrupt_startup", "victim"):
        if os.geteuid() != 0:
            print("SKIP: needs root (huge pages, memif)")
            return SKIP
        for b in ("switch/app/sf-switch", "tools/sf-pktio/sf-pktio"):
            check(os.access(os.path.join(build, b), os.X_OK), f"{b} not built in {build}")
    if a.case == "nic" or (a.case.startswith("cc_") and a.case != "cc_files"):
        if os.geteuid() != 0:
            print("SKIP: needs root (huge pages, memif)")
            return SKIP
        if not os.access(os.path.join(build, "nic", "app", "sf-nic"), os.X_OK):
            print(f"SKIP: sf-nic is not built in {build}")
            return SKIP
    CASES[a.case](build)
    print(f"PASS {a.case}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except TestFailure as e:
        print(f"FAIL: {e}")
        sys.exit(1)
