#!/usr/bin/python3
"""Writes the seed-001 congestion-control topologies (docs/scenarios.md "Seed
001: congestion control compared"): seed001-cc-<cc>.json for every CC, all on
seed001-cc-switch.json (the 65-port 400G seed-001 switch, Kmin 120 KiB / Kmax
600 KiB, PFC on priority 3, INT on queue 3 of every port: inert for every CC
but HPCC, whose requests alone carry the INT flag).

usage: config/scenarios/seed001-cc-gen.py [--senders N] [--scale F] [--out DIR]
--senders / --scale make the small versions the test runs (tests/tools)."""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
CCS = ["none", "dcqcn-nvidia", "dcqcn-paper", "swift", "bbr", "hpcc"]
# All-reduce-like bursts: (start ms, bytes per sender). An sf-nic host holds
# at most 64 perftest workloads (HostConfig::max_pds), and the receiver r0
# serves one per sender per burst plus the probe: the 63:1 run (63 senders +
# the probe = 64) has one burst of 1 MiB per sender (63 MiB); smaller runs
# (the test's 16 senders) repeat bursts of 64 KiB, 256 KiB and 1 MiB per
# sender (x --scale), as the seed's 4-64 MB bursts.
ROUNDS = [(0, 64 << 10), (1, 256 << 10), (2, 1 << 20)]
MAX_WORKLOADS = 64


def switch_cfg():
    with open(os.path.join(HERE, "..", "switch", "seed001-incast-65port.json")) as f:
        cfg = json.load(f)
    ports = list(cfg["PORT"])
    cfg["DEVICE_METADATA"]["localhost"]["hostname"] = "sf-switch-seed001-cc"
    cfg["INT"] = {",".join(ports) + "|3": {"enable": "true"}}
    return cfg


def topology(cc, senders, scale, switch_rel):
    names = [f"s{i}" for i in range(senders)]
    nodes = {"sw0": {"kind": "switch", "config": switch_rel}}
    for n in names:
        nodes[n] = {"kind": "nic", "process": "senders", "cc": cc}
    nodes["r0"] = {"kind": "nic", "process": "receiver", "cc": cc}
    links = [{"a": n, "b": f"sw0:Ethernet{4 * i}", "speed_gbps": 400} for i, n in enumerate(names)]
    links.append({"a": "r0", "b": "sw0:Ethernet256", "speed_gbps": 400})
    wls = []
    rounds = ROUNDS if senders * len(ROUNDS) + 1 <= MAX_WORKLOADS else ROUNDS[-1:]
    for k, (start, size) in enumerate(rounds):
        start = start if len(rounds) > 1 else 0
        b = max(4096, int(size * scale) // 4096 * 4096)
        wls.append({"name": f"round{k}", "type": "incast", "senders": names, "receiver": "r0",
                    "size_bytes": b, "message_bytes": min(b, 65536), "start_ms": start})
    wls.append({"name": "probe", "type": "probe", "src": "s0", "dst": "r0", "test": "write_lat", "size_bytes": 64,
                "interval_us": 2})
    return {"name": f"seed001-cc-{cc}",
            "description": f"Seed 001's 64:1 incast at 400G in virtual time with every host's cc = {cc}: "
                           f"{senders}:1, " + ("bursts of " + ", ".join(f'{int(z * scale) >> 10} KiB' for _, z in rounds) + " per sender (start 0/1/2 ms)" if len(rounds) > 1 else f"one burst of {int(rounds[0][1] * scale) >> 10} KiB per sender") + " into r0 through "
                           "the 65-port seed-001 switch (Kmin 120 KiB, Kmax 600 KiB, PFC on priority 3, INT on "
                           "queue 3), a write_lat probe s0 -> r0 through the hot queue every 2 us. "
                           "docs/scenarios.md \"Seed 001: congestion control compared\". Virtual time only.",
            "duration_s": 1, "drain_s": 1, "ts_period_ms": 10,
            "sim": {"seed": 1, "ts_period_us": 5, "run_limit_s": 0.05},
            "nodes": nodes, "links": links, "workloads": wls}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--senders", type=int, default=63)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--out", default=HERE)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    sw_path = os.path.join(a.out, "seed001-cc-switch.json")
    with open(sw_path, "w") as f:
        json.dump(switch_cfg(), f, indent=1)
        f.write("\n")
    for cc in CCS:
        with open(os.path.join(a.out, f"seed001-cc-{cc}.json"), "w") as f:
            json.dump(topology(cc, a.senders, a.scale, "seed001-cc-switch.json"), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
