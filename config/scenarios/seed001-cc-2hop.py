#!/usr/bin/python3
"""Seed 001's incast across a leaf-spine fabric (docs/scenarios.md "Seed
001: congestion control compared", two hops): `sf-lab gen` makes 2 leaves x
16 hosts at 400G under one spine (4 parallel 400G uplinks per leaf, ECMP),
the seed-000 lossless profile; this adds INT on queue 3 of every switch port,
three rounds (0, 2, 4 ms) of 1 MiB from each of leaf1's 16 hosts to h0 on
leaf0 (three switch hops, three INT records per packet), a 64 B write_lat
probe h16 -> h0 every 2 us, and writes one topology per CC variant:
hpcc (defaults) and hpcc-fair-eta98 (initial_rate = 400/16 Gb/s, T = 8.5 us,
this path's base RTT: 4 links of 1 us each way, eta 0.98).

usage: config/scenarios/seed001-cc-2hop.py --out DIR   (then sf-lab run --sim DIR/seed001-2hop-<v>.json)"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
SENDERS = 16
VARIANTS = {"hpcc": None,
            "hpcc-fair-eta98": {"initial_rate": 400 / SENDERS, "base_rtt": "8500ns", "eta": 0.98}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    subprocess.run([sys.executable, os.path.join(SRC, "tools", "sf-lab"), "gen", "--out", a.out, "--force",
                    "--name", "seed001-2hop", "--radix", "32", "--leaves", "2", "--hosts-per-leaf", str(SENDERS),
                    "--oversub", "4", "--spines", "1", "--speed-gbps", "400", "--traffic", "incast",
                    "--incast-senders", str(SENDERS), "--cc", "hpcc"], check=True)
    for sw in os.listdir(os.path.join(a.out, "switch")):
        p = os.path.join(a.out, "switch", sw)
        cfg = json.load(open(p))
        cfg["INT"] = {",".join(cfg["PORT"]) + "|3": {"enable": "true"}}
        json.dump(cfg, open(p, "w"), indent=1)
    base = json.load(open(os.path.join(a.out, "seed001-2hop.json")))
    senders = base["workloads"][0]["senders"]
    os.remove(os.path.join(a.out, "seed001-2hop.json"))
    for v, params in VARIANTS.items():
        t = json.loads(json.dumps(base))
        t["name"] = f"seed001-2hop-{v}"
        t["description"] += f"; seed001-cc-2hop.py: INT on queue 3, 3 rounds of 1 MiB, probe, cc {v}"
        for n, node in t["nodes"].items():
            if node["kind"] == "nic":
                node["cc"] = "hpcc"
                if params:
                    node["cc_params"] = params
        t["workloads"] = [{"name": f"round{k}", "type": "incast", "senders": senders, "receiver": "h0",
                           "size_bytes": 1 << 20, "message_bytes": 65536, "start_ms": 2 * k} for k in range(3)]
        t["workloads"].append({"name": "probe", "type": "probe", "src": senders[0], "dst": "h0", "test": "write_lat",
                               "size_bytes": 64, "interval_us": 2})
        t.update({"duration_s": 1, "drain_s": 1, "ts_period_ms": 10,
                  "sim": {"seed": 1, "ts_period_us": 5, "run_limit_s": 0.05}})
        json.dump(t, open(os.path.join(a.out, f"seed001-2hop-{v}.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
