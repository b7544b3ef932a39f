#!/usr/bin/python3
"""sf-sim end to end: a 2:1 incast of RDMA WRITEs (sf-nic's nic.json, DCQCN)
through the seed-000 switch config at 400G in virtual time. The run finishes,
every byte of every flow is reported, the switch's counters agree with the
hosts', and a second run with the same seed writes byte-identical files;
bad plans exit 2 naming the JSON path. The mbuf pool is sized from the
plan, and a pool made too small (--mbufs) runs dry without a crash: the
failures are counted and sf-sim exits 1 saying so. --icrc trust (no ICRC
check at the receivers) gives the same run on this plan of good frames.
--threads 1, 2 and 3 (the partitioned engine) give the same run and files.

Usage: sf_sim_test.py --build BUILD_DIR --source SOURCE_DIR
"""
import argparse
import filecmp
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from sim_run import fail, run, run_finished  # noqa: E402

SENDERS = 2
MSG, ITERS = 65536, 128


def write_configs(src, d):
    sw = json.load(open(os.path.join(src, "config", "switch", "seed000-static-lossless.json")))
    names = [f"Ethernet{4 * i}" for i in range(SENDERS + 1)]
    old, new = ",".join(sw["PORT"].keys()), ",".join(names)
    sw["PORT"] = {n: {"devargs": f"sim{i}", "speed": 400, "mtu": 9100} for i, n in enumerate(names)}
    for t in ("BUFFER_PG", "BUFFER_QUEUE", "QUEUE"):
        if t in sw:
            sw[t] = {k.replace(old, new): v for k, v in sw[t].items()}
    macs = [f"02:4e:00:00:00:{i + 1:02x}" for i in range(SENDERS + 1)]
    sw["FDB"] = {m: {"port": names[i]} for i, m in enumerate(macs)}
    json.dump(sw, open(os.path.join(d, "sw.json"), "w"))
    nic = {"hosts": {f"h{i}": {"devargs": f"d{i}", "mac": macs[i], "ip": f"10.0.0.{i + 1}", "speed": 400,
                               "pfc_enable": "3"} for i in range(SENDERS + 1)},
           "workloads": []}
    for i in range(SENDERS):
        c = {"type": "write_bw", "oob": f"127.0.0.1:{30000 + i}", "size": MSG, "iterations": ITERS,
             "cc": "dcqcn-nvidia"}
        nic["workloads"].append(dict(name=f"s{i}", host=f"h{SENDERS}", role="server", **c))
        nic["workloads"].append(dict(name=f"c{i}", host=f"h{i}", role="client", **c))
    json.dump(nic, open(os.path.join(d, "nic.json"), "w"))
    plan = {"seed": 7, "run_limit_s": 0.05, "ts_period_us": 10, "switches": {"sw0": "sw.json"},
            "nics": {"nic": "nic.json"},
            "links": [{"a": {"nic": "nic", "host": f"h{i}"}, "b": {"switch": "sw0", "port": names[i]},
                       "speed_gbps": 400, "delay_ns": 500} for i in range(SENDERS + 1)]}
    json.dump(plan, open(os.path.join(d, "plan.json"), "w"))
    return plan



ROUTER_MAC = ["02:53:00:00:00:00", "02:53:00:00:00:04"]
HOST_MAC = ["02:4e:00:08:01:01", "02:4e:00:08:02:02"]


def routed(binary, d):
    """Two hosts in different subnets (10.8.1.1/24, 10.8.2.2/24) through a
    switch routing between its two router interfaces, each host with a
    nic.json "gateway" (the config sf-nic runs in integration_nic_routed_*):
    in virtual time each gateway is resolved by ARP to its switch port's MAC
    before the workloads start, the switch gleans both hosts, and write_bw
    --verify lands in full, nothing dropped. A gateway nobody has exits 1
    naming the workload and the unanswered ARP."""
    r = os.path.join(d, "routed")
    os.makedirs(r)
    names = ["Ethernet0", "Ethernet4"]
    hosts, gws, nets = ["10.8.1.1", "10.8.2.2"], ["10.8.1.254", "10.8.2.254"], ["10.8.1.0/24", "10.8.2.0/24"]
    sw = {"DEVICE_METADATA": {"localhost": {"mmu_size": "64MiB"}},
          "PORT": {n: {"devargs": f"sim{i}", "speed": 100, "mtu": 9100, "mac": ROUTER_MAC[i]} for i, n in enumerate(names)},
          "INTERFACE": {**{n: {} for n in names}, **{f"{n}|{gws[i]}/24": {} for i, n in enumerate(names)}},
          "STATIC_ROUTE": {nets[i]: {"nexthop": hosts[i], "ifname": n} for i, n in enumerate(names)}}
    json.dump(sw, open(os.path.join(r, "sw.json"), "w"))

    def nic(gw_b):
        c = {"type": "write_bw", "oob": "127.0.0.1:31000", "size": 65536, "iterations": 64, "verify": True}
        cfg = {"hosts": {"a": {"devargs": "d0", "mac": HOST_MAC[0], "ip": f"{hosts[0]}/24", "speed": 100,
                               "gateway": gws[0]},
                         "b": {"devargs": "d1", "mac": HOST_MAC[1], "ip": f"{hosts[1]}/24", "speed": 100,
                               "gateway": gw_b}},
               "workloads": [dict(name="srv", host="a", role="server", **c),
                             dict(name="cli", host="b", role="client", **c)]}
        json.dump(cfg, open(os.path.join(r, "nic.json"), "w"))

    plan = {"seed": 3, "run_limit_s": 0.05, "ts_period_us": 10, "switches": {"sw0": "sw.json"},
            "nics": {"nic": "nic.json"},
            "links": [{"a": {"nic": "nic", "host": h}, "b": {"switch": "sw0", "port": names[i]},
                       "speed_gbps": 100, "delay_ns": 1000} for i, h in enumerate(["a", "b"])]}
    p = os.path.join(r, "plan.json")
    json.dump(plan, open(p, "w"))
    nic(gws[1])
    summary = run_finished(binary, p, os.path.join(r, "o"))
    rep = json.load(open(os.path.join(r, "o", "nic-nic-report.json")))
    cli = [w for w in rep["workloads"] if w["role"] == "client"]
    if len(cli) != 1 or cli[0]["bytes"] != 65536 * 64 or cli[0]["status"] != "ok":
        fail(f"routed: client {cli}")
    for i, h in enumerate(rep["hosts"]):
        hp = h["ports"][0]
        if hp.get("gateway_mac") != ROUTER_MAC[i] or hp["neighbors"]["gateway_state"] != "reachable":
            fail(f"routed: host {h['name']} gateway {hp.get('gateway_mac')} {hp['neighbors']} (want {ROUTER_MAC[i]})")
    swr = json.load(open(os.path.join(r, "o", "switch-sw0-report.json")))
    for i, x in enumerate(swr["ports"]):
        ri = x["router_if"]
        if x["dropped"] != 0 or ri["rx_arp_request"] != 1 or ri["tx_arp_reply"] != 1 or ri["neighbors"] != \
                [{"ip": hosts[i], "mac": HOST_MAC[i], "solicits": 0, "state": "resolved"}]:
            fail(f"routed: switch port {x['name']}: dropped {x['dropped']}, router_if {ri}")
    # A gateway on the subnet that nobody has: resolution gives up (three requests a virtual
    # second apart), and the run stops before the workloads, naming the client and the reason.
    nic("10.8.2.253")
    rc, out, err = run(binary, p, os.path.join(r, "o2"))
    if rc != 1 or "workload cli" not in err or "10.8.2.253" not in err:
        fail(f"routed, a gateway nobody has: rc {rc}: {out} {err}")
    print(f"routed: {summary['events']} events, end {summary['end_s'] * 1e3:.3f} ms; bad gateway: {err.strip()}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    binary = os.path.join(a.build, "tools", "sf-sim", "sf-sim")
    with tempfile.TemporaryDirectory(prefix="sf-sim-test-") as d:
        plan = write_configs(a.source, d)
        p = os.path.join(d, "plan.json")
        summary = run_finished(binary, p, os.path.join(d, "o1"))
        rep = json.load(open(os.path.join(d, "o1", "nic-nic-report.json")))
        clients = [w for w in rep["workloads"] if w["role"] == "client"]
        if len(clients) != SENDERS or any(w["bytes"] != MSG * ITERS or w["status"] != "ok" for w in clients):
            fail(f"clients {clients}")
        swr = json.load(open(os.path.join(d, "o1", "switch-sw0-report.json")))
        ports = {x["name"]: x for x in swr["ports"]}
        hosts = {h["name"]: h for h in rep["hosts"]}
        for i in range(SENDERS):
            if ports[f"Ethernet{4 * i}"]["rx_packets"] != hosts[f"h{i}"]["tx_packets"]:
                fail(f"switch port {i} rx != h{i} tx")
        sink = ports[f"Ethernet{4 * SENDERS}"]
        if sink["tx_packets"] != hosts[f"h{SENDERS}"]["rx_packets"]:
            fail("switch sink tx != receiver rx")
        if sink["dropped"] != 0:
            fail(f"drops at the sink port: {sink['drops']}")
        # Same seed: identical run, identical files.
        rc, out2, err = run(binary, p, os.path.join(d, "o2"))
        if rc != 0 or json.loads(out2.strip().splitlines()[-1]) != summary:
            fail(f"second run differs: {out2} vs {summary}")
        for f in sorted(os.listdir(os.path.join(d, "o1"))):
            if not filecmp.cmp(os.path.join(d, "o1", f), os.path.join(d, "o2", f), shallow=False):
                fail(f"{f} differs between two runs with the same seed")
        # --icrc trust (receivers skip the ICRC check, docs/sf-sim.md "Cost"): every frame here is
        # good, so the run is the same event for event (trace_hash, counters); a bad value is refused.
        rc, out11, err = run(binary, p, os.path.join(d, "o11"), "--icrc", "trust")
        s11 = json.loads(out11.strip().splitlines()[-1]) if out11.strip() else {}
        if rc != 0 or summary.get("icrc") != "check" or s11.get("icrc") != "trust" or \
                {k: v for k, v in s11.items() if k != "icrc"} != {k: v for k, v in summary.items() if k != "icrc"}:
            fail(f"--icrc trust: rc {rc}: {out11} vs {summary}: {err}")
        for f in ("nic-nic-report.json", "switch-sw0-report.json"):
            if not filecmp.cmp(os.path.join(d, "o1", f), os.path.join(d, "o11", f), shallow=False):
                fail(f"--icrc trust: {f} differs from the checked run")
        rc, _, err = run(binary, p, os.path.join(d, "o12"), "--icrc", "maybe")
        if rc != 2 or "--icrc maybe: must be check or trust" not in err:
            fail(f"--icrc maybe: rc {rc}: {err}")
        # --threads N (the partitioned engine, docs/sf-sim.md "Threads"): 1, 2 and 3 threads give
        # the same run: the summary (but for its cache-dependent mbuf counts and "threads") and
        # every file written are equal; the switch and the nic process run on two threads with 2.
        runs = {}
        for t in (1, 2, 3):
            rc, out_t, err = run(binary, p, os.path.join(d, f"t{t}"), "--threads", str(t))
            st = json.loads(out_t.strip().splitlines()[-1]) if out_t.strip() else {}
            if rc != 0 or st.get("threads") != t or not st.get("finished") or st["mbufs"]["alloc_failures"] != 0 or \
                    st["mbufs"]["in_use_at_end"] != 0:
                fail(f"--threads {t}: rc {rc}: {out_t} {err}")
            runs[t] = {k: v for k, v in st.items() if k not in ("mbufs", "threads")}
        if runs[2] != runs[1] or runs[3] != runs[1]:
            fail(f"--threads 1 / 2 / 3 differ: {runs}")
        if runs[1]["events"] == 0:
            fail(f"--threads 1: {runs[1]}")
        for f in sorted(os.listdir(os.path.join(d, "t1"))):
            for t in (2, 3):
                if not filecmp.cmp(os.path.join(d, "t1", f), os.path.join(d, f"t{t}", f), shallow=False):
                    fail(f"--threads {t}: {f} differs from --threads 1")
        rep_t = json.load(open(os.path.join(d, "t2", "nic-nic-report.json")))
        if [w["bytes"] for w in rep_t["workloads"] if w["role"] == "client"] != [MSG * ITERS] * SENDERS:
            fail(f"--threads 2: clients {rep_t['workloads']}")
        # Threads that take and give mbufs while the pool grows (a dequeue that populates a new
        # chunk enqueues it under the same lock): the 64:1 incast holds ~24,000 mbufs (the pool
        # starts with 4,096); 1 and 2 threads, the same run.
        big = os.path.join(d, "s64")
        r = subprocess.run([os.path.join(a.source, "tools", "sf-lab"), "run", "--sim",
                            os.path.join(a.source, "config", "topologies", "seed001-incast-64to1.json"),
                            "--out", big, "--build", a.build], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            fail(f"sf-lab run --sim seed001-incast-64to1: {r.returncode}: {r.stderr[-2000:]}")
        bigs = {}
        for t in (1, 2):
            rc, out_t, err = run(binary, os.path.join(big, "run", "sim-plan.json"), os.path.join(d, f"s64-{t}"),
                                 "--threads", str(t))
            st = json.loads(out_t.strip().splitlines()[-1]) if out_t.strip() else {}
            if rc != 0 or not st.get("finished") or st["mbufs"]["populated"] <= 4096 or st["mbufs"]["in_use_at_end"] != 0:
                fail(f"64:1 incast --threads {t}: rc {rc}: {out_t} {err[-2000:]}")
            bigs[t] = {k: v for k, v in st.items() if k not in ("mbufs", "threads")}
        if bigs[1] != bigs[2]:
            fail(f"64:1 incast: --threads 1 {bigs[1]} vs 2 {bigs[2]}")
        for bad in ("0", "257", "two"):
            rc, _, err = run(binary, p, os.path.join(d, "t9"), "--threads", bad)
            if rc != 2 or f"--threads {bad}: must be an integer within [1, 256]" not in err:
                fail(f"--threads {bad}: rc {rc}: {err}")
        # The mbuf pool is sized from the plan (docs/sf-sim.md "Cost"): far below the old fixed
        # 196,607, above what the run used, never dry.
        mb = summary["mbufs"]
        if not mb["from_plan"] or mb["alloc_failures"] != 0 or not mb["peak_in_use"] < mb["pool"] < 65536:
            fail(f"mbuf pool not sized from the plan: {mb}")
        # A pool too small for the run: every failed allocation counted, the nodes retry, the run
        # still finishes (no crash), and sf-sim says so and exits 1.
        rc, out5, err = run(binary, p, os.path.join(d, "o5"), "--mbufs", "256")
        s5 = json.loads(out5.strip().splitlines()[-1]) if out5.strip() else {}
        if rc != 1 or "the mbuf pool ran dry" not in err or "--mbufs 512" not in err or \
                s5.get("mbufs", {}).get("alloc_failures", 0) == 0 or not s5.get("finished"):
            fail(f"a dry pool: rc {rc}: {out5} {err}")
        rc, _, err = run(binary, p, os.path.join(d, "o6"), "--mbufs", "12")
        if rc != 2 or "--mbufs 12: must be an integer within [64, 2^30]" not in err:
            fail(f"--mbufs 12: rc {rc}: {err}")
        # Bad plans: exit 2, the path named.
        plan["links"][0]["b"]["switch"] = "sw9"
        json.dump(plan, open(p, "w"))
        rc, _, err = run(binary, p, os.path.join(d, "o3"))
        if rc != 2 or "links[0].b.switch: unknown switch \"sw9\"" not in err:
            fail(f"bad switch name: rc {rc}: {err}")
        plan["links"][0]["b"]["switch"] = "sw0"
        plan["links"][1]["b"]["port"] = "Ethernet0"  # a port used twice
        json.dump(plan, open(p, "w"))
        rc, _, err = run(binary, p, os.path.join(d, "o4"))
        if rc != 2 or "links[1]" not in err:
            fail(f"port used twice: rc {rc}: {err}")
        plan["links"][1]["b"]["port"] = "Ethernet4"
        # A link speed that differs from a port's configured speed is refused, naming both
        # (the link would silently override PORT.speed / the nic host's speed).
        plan["links"][0]["speed_gbps"] = 100
        json.dump(plan, open(p, "w"))
        rc, _, err = run(binary, p, os.path.join(d, "o7"))
        if rc != 2 or "links[0].speed_gbps: 100 Gb/s differs from nic process nic host h0 speed (400 Gb/s)" not in err:
            fail(f"link slower than its ports: rc {rc}: {err}")
        plan["links"][0]["speed_gbps"] = 400
        json.dump(plan, open(p, "w"))
        routed(binary, d)
        sw = json.load(open(os.path.join(d, "sw.json")))
        sw["PORT"]["Ethernet0"]["speed"] = 100
        json.dump(sw, open(os.path.join(d, "sw.json"), "w"))
        json.dump(plan, open(p, "w"))
        rc, _, err = run(binary, p, os.path.join(d, "o8"))
        if rc != 2 or "links[0].speed_gbps: 400 Gb/s differs from switch sw0 PORT.Ethernet0.speed (100 Gb/s)" not in err:
            fail(f"switch port slower than its link: rc {rc}: {err}")
        sw["PORT"]["Ethernet0"]["speed"] = 400
        # DEVICE_METADATA.seed of a switch config is kept (not replaced by plan seed + index): the
        # switch's seed in its report is the config's.
        sw.setdefault("DEVICE_METADATA", {}).setdefault("localhost", {})["seed"] = "4242"
        json.dump(sw, open(os.path.join(d, "sw.json"), "w"))
        rc, _, err = run(binary, p, os.path.join(d, "o9"))
        if rc != 0:
            fail(f"with DEVICE_METADATA.seed: rc {rc}: {err}")
        seeds = [json.load(open(os.path.join(d, o, "switch-sw0-report.json"))).get("seed") for o in ("o1", "o9")]
        if seeds != [7, 4242]:
            fail(f"switch seeds (plan seed 7 + index 0, then the config's 4242): {seeds}")
        # --icrc trust with an inject event (a pcap's frames may carry any ICRC): refused, exit 2.
        sw["PORT"]["Ethernet12"] = {"devargs": "sim3", "speed": 400, "mtu": 9100}
        json.dump(sw, open(os.path.join(d, "sw.json"), "w"))
        frame = bytes.fromhex("024e00000003" "024e000000ff" "0800") + bytes(46)
        with open(os.path.join(d, "one.pcap"), "wb") as f:
            f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
            f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame)
        plan["events"] = [{"kind": "inject", "port": "sw0:Ethernet12", "pcap": "one.pcap", "at_ms": 0}]
        json.dump(plan, open(p, "w"))
        rc, _, err = run(binary, p, os.path.join(d, "o13"), "--icrc", "trust")
        if rc != 2 or "--icrc trust: the plan has inject events" not in err:
            fail(f"--icrc trust with an inject event: rc {rc}: {err}")
        rc, out14, err = run(binary, p, os.path.join(d, "o14"))
        if rc != 0 or json.loads(out14.strip().splitlines()[-1]).get("inject", {}).get("sent") != 1:
            fail(f"the inject plan with --icrc check: rc {rc}: {out14} {err}")
        print("PASS", summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
