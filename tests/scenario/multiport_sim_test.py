#!/usr/bin/python3
"""Multi-port hosts in sf-sim (docs/nic-app.md "Multi-port hosts"): two hosts
with two ports each, every port its own MAC and IP, on one switch with one
link per port (plane 1: Ethernet0/Ethernet4, plane 2: Ethernet8/Ethernet12).
A verified write_bw runs on port 1 and another on port 2 at the same time.
Expect: both finish with every byte checked; each plane's switch ports carry
exactly the frames of the host port on them (the per-port report entries),
nothing crosses planes, no drops. A plan naming a port the host does not
have exits 2 naming the path.

Usage: multiport_sim_test.py --build BUILD_DIR --source SOURCE_DIR
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from sim_run import fail, run, run_finished  # noqa: E402

MSG, ITERS = 65536, 64
NAMES = ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"]


def mac(host, port):
    return f"02:4d:50:00:{host:02x}:{port:02x}"


def write_configs(src, d):
    sw = json.load(open(os.path.join(src, "config", "switch", "seed000-static-lossless.json")))
    old, new = ",".join(sw["PORT"].keys()), ",".join(NAMES)
    sw["PORT"] = {n: {"devargs": f"sim{i}", "speed": 100, "mtu": 9100} for i, n in enumerate(NAMES)}
    for t in ("BUFFER_PG", "BUFFER_QUEUE", "QUEUE"):
        if t in sw:
            sw[t] = {k.replace(old, new): v for k, v in sw[t].items()}
    # Switch port of (host h, port k): Ethernet{4 * (2 * (k - 1) + h)}.
    sw["FDB"] = {mac(h, k): {"port": NAMES[2 * (k - 1) + h]} for h in (0, 1) for k in (1, 2)}
    json.dump(sw, open(os.path.join(d, "sw.json"), "w"))
    hosts = {}
    for h in (0, 1):
        hosts[f"h{h}"] = {"ports": [{"devargs": f"d{h}{k}", "mac": mac(h, k), "ip": f"10.{k}.0.{h + 1}",
                                     "speed_gbps": 100} for k in (1, 2)],
                          "pfc_enable": "3"}
    wl = []
    for k in (1, 2):
        c = {"type": "write_bw", "oob": f"127.0.0.1:{31000 + k}", "size": MSG, "iterations": ITERS,
             "verify": True, "port": k}
        wl.append(dict(name=f"s{k}", host="h1", role="server", **c))
        wl.append(dict(name=f"c{k}", host="h0", role="client", **c))
    json.dump({"hosts": hosts, "workloads": wl}, open(os.path.join(d, "nic.json"), "w"))
    links = [{"a": {"nic": "nic", "host": f"h{h}", "port": k}, "b": {"switch": "sw0", "port": NAMES[2 * (k - 1) + h]},
              "speed_gbps": 100, "delay_ns": 500} for h in (0, 1) for k in (1, 2)]
    plan = {"seed": 3, "run_limit_s": 0.05, "ts_period_us": 50, "switches": {"sw0": "sw.json"},
            "nics": {"nic": "nic.json"}, "links": links}
    json.dump(plan, open(os.path.join(d, "plan.json"), "w"))
    return plan



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    binary = os.path.join(a.build, "tools", "sf-sim", "sf-sim")
    with tempfile.TemporaryDirectory(prefix="sf-multiport-") as d:
        plan = write_configs(a.source, d)
        p = os.path.join(d, "plan.json")
        summary = run_finished(binary, p, os.path.join(d, "o"))
        rep = json.load(open(os.path.join(d, "o", "nic-nic-report.json")))
        for w in rep["workloads"]:
            if w["status"] != "ok" or w["verify_errors"] != 0 or w["port"] != int(w["name"][1]):
                fail(f"workload {w}")
            if w["role"] == "client" and w["bytes"] != MSG * ITERS:
                fail(f"client {w['name']}: {w['bytes']} bytes")
            if w["role"] == "server" and w["messages"] != ITERS:
                fail(f"server {w['name']} checked {w['messages']} messages")
        swr = json.load(open(os.path.join(d, "o", "switch-sw0-report.json")))
        sp = {x["name"]: x for x in swr["ports"]}
        hosts = {x["name"]: x for x in rep["hosts"]}
        for h in (0, 1):
            host = hosts[f"h{h}"]
            if [x["port"] for x in host["ports"]] != [1, 2]:
                fail(f"h{h} ports {host['ports']}")
            for k in (1, 2):
                hp = host["ports"][k - 1]
                if hp["mac"] != mac(h, k) or hp["ip"] != f"10.{k}.0.{h + 1}":
                    fail(f"h{h} port {k} address {hp}")
                s = sp[NAMES[2 * (k - 1) + h]]
                # Each plane's switch port sees exactly its host port's frames.
                if s["rx_packets"] != hp["tx_packets"] or s["tx_packets"] != hp["rx_packets"]:
                    fail(f"h{h} port {k}: switch rx/tx {s['rx_packets']}/{s['tx_packets']}, "
                         f"host tx/rx {hp['tx_packets']}/{hp['rx_packets']}")
                if hp["drops"] or s["dropped"]:
                    fail(f"h{h} port {k} drops: host {hp['drops']}, switch {s['dropped']}")
                # Data flows h0 -> h1 on both planes: a full 64-message run each.
                data = hp["tx_packets"] if h == 0 else hp["rx_packets"]
                if data < ITERS * MSG // 4096:
                    fail(f"h{h} port {k}: only {data} data frames")
            if host["tx_packets"] != sum(x["tx_packets"] for x in host["ports"]):
                fail(f"h{h}: host tx_packets is not the sum of its ports'")
        # Time series: a multi-port host's sample lists each port; the host figure is their sum.
        last = json.loads(open(os.path.join(d, "o", "timeseries-nic-nic.jsonl")).read().strip().splitlines()[-1])
        for h in (0, 1):
            th = last["hosts"][f"h{h}"]
            if [x["port"] for x in th.get("ports", [])] != [1, 2]:
                fail(f"time series h{h}: {th}")
            if th["tx_bytes"] != sum(x["tx_bytes"] for x in th["ports"]) or \
                    [x["tx_bytes"] for x in th["ports"]] != [x["tx_bytes"] for x in hosts[f"h{h}"]["ports"]]:
                fail(f"time series h{h}: per-port tx_bytes {th['ports']} vs the report's")
        # Bad plan: a port the host does not have.
        plan["links"][1]["a"]["port"] = 3
        json.dump(plan, open(p, "w"))
        rc, _, err = run(binary, p, os.path.join(d, "o2"))
        if rc != 2 or "links[1].a.port: host h0 of nic process nic has 2 ports (port is 1-based)" not in err:
            fail(f"port 3: rc {rc}: {err}")
        print("PASS", summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
