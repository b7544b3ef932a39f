#!/usr/bin/python3
"""Writes the seed-001 congestion-control topologies (docs/scenarios.md "Seed
001: congestion control compared"): seed001-cc-<cc>.json for every CC, all on
seed001-cc-switch.json (the 65-port 400G seed-001 switch, Kmin 120 KiB / Kmax
600 KiB, PFC on priority 3, INT on queue 3 of every port: inert for every CC
but HPCC, whose requests alone carry the INT flag).

usage: config/scenarios/seed001-cc-gen.py [--senders N] [--rounds K] [--uniform | --bursts] [--scale F] [--out DIR]
--senders / --scale make the small versions the test runs (tests/tools).
Besides one file per CC with its defaults it writes the tuned variants of
VARIANTS (seed001-cc-<variant>.json: a CC with nic.json cc_params)."""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
CCS = ["none", "dcqcn-nvidia", "dcqcn-paper", "swift", "bbr", "hpcc"]
# Tuned variants: file name -> (cc, cc_params with "{fair}" = line rate / senders, Gb/s).
# hpcc-fair: HPCC starting at the fair share (initial_rate) with T = the
# fabric's base RTT (base_rtt 4.5 us: the 64 B probe's least round trip is
# 4.0 us, a 4 KiB frame adds 0.2 us of serialisation; HPCC's default T is
# 10 us) and the paper's eta 0.95; -eta98 / -eta99 raise the utilisation
# target (the trade-off: throughput against queue). bbr-fair: BBR pacing at
# the fair share until its first bandwidth sample, with Linux's minimum
# 4-packet initial window; bbr-fair-cwnd1 also lowers the window floor
# (min_cwnd_pkts, Linux's 4) to one packet: 64 flows x 4 packets is 1 MiB in
# flight, five times the path's BDP (400G x 4.2 us = 210 KB).
VARIANTS = {
    "hpcc-fair": ("hpcc", {"initial_rate": "{fair}", "base_rtt": "4500ns"}),
    "hpcc-fair-eta98": ("hpcc", {"initial_rate": "{fair}", "base_rtt": "4500ns", "eta": 0.98}),
    "hpcc-fair-eta99": ("hpcc", {"initial_rate": "{fair}", "base_rtt": "4500ns", "eta": 0.99}),
    "bbr-fair": ("bbr", {"initial_rate": "{fair}", "initial_cwnd_pkts": 4}),
    "bbr-fair-cwnd1": ("bbr", {"initial_rate": "{fair}", "initial_cwnd_pkts": 1, "min_cwnd_pkts": 1}),
    "bbr-paced": ("bbr", {"initial_rate": "{fair}", "initial_cwnd_pkts": 2, "min_cwnd_pkts": 2, "high_gain": 1.1}),
}
LINE_GBPS = 400
# All-reduce-like rounds: every sender sends its burst into r0, and the next
# round starts only after the previous one has completed (rounds are
# gap_ms apart; the test and docs check that each round ended before the
# next began). 64:1 (the seed's): 3 rounds of 1 MiB per sender (64 MiB a
# round, 1.34 ms at 400G), 2 ms apart. The test's 16:1 runs rounds of 64 KiB,
# 256 KiB and 1 MiB per sender (x --scale), as the seed's 4-64 MB bursts. r0
# then serves senders x rounds workloads plus the probe's: sf-lab raises
# the host's verbs limits (nic.json max_pds, max_qps ...) to fit.
SMALL_ROUNDS = [(0, 64 << 10), (1, 256 << 10), (2, 1 << 20)]


def rounds_for(senders, rounds, gap_ms, uniform=False, bursts=False):
    if bursts:  # the seed's 4-64 MB bursts at any N: SMALL_ROUNDS' sizes, gap_ms apart
        return [(k * gap_ms, size) for k, (_, size) in enumerate(SMALL_ROUNDS)]
    if senders <= 16 and not uniform:
        return SMALL_ROUNDS
    return [(k * gap_ms, 1 << 20) for k in range(rounds)]


def switch_cfg():
    with open(os.path.join(HERE, "..", "switch", "seed001-incast-65port.json")) as f:
        cfg = json.load(f)
    ports = list(cfg["PORT"])
    cfg["DEVICE_METADATA"]["localhost"]["hostname"] = "sf-switch-seed001-cc"
    cfg["INT"] = {",".join(ports) + "|3": {"enable": "true"}}
    return cfg


def topology(name, cc, cc_params, senders, scale, switch_rel, rounds):
    names = [f"s{i}" for i in range(senders)]
    nodes = {"sw0": {"kind": "switch", "config": switch_rel}}
    for n in names:
        nodes[n] = {"kind": "nic", "process": "senders", "cc": cc}
    nodes["r0"] = {"kind": "nic", "process": "receiver", "cc": cc}
    if cc_params:
        for n in nodes:
            if n != "sw0":
                nodes[n]["cc_params"] = cc_params
    links = [{"a": n, "b": f"sw0:Ethernet{4 * i}", "speed_gbps": LINE_GBPS} for i, n in enumerate(names)]
    links.append({"a": "r0", "b": "sw0:Ethernet256", "speed_gbps": LINE_GBPS})
    wls = []
    for k, (start, size) in enumerate(rounds):
        b = max(4096, int(size * scale) // 4096 * 4096)
        wls.append({"name": f"round{k}", "type": "incast", "senders": names, "receiver": "r0",
                    "size_bytes": b, "message_bytes": min(b, 65536), "start_ms": start})
    wls.append({"name": "probe", "type": "probe", "src": "s0", "dst": "r0", "test": "write_lat", "size_bytes": 64,
                "interval_us": 2})
    sizes = ", ".join(f"{max(4096, int(z * scale) // 4096 * 4096) >> 10} KiB" for _, z in rounds)
    starts = "/".join(str(st) for st, _ in rounds)
    tuned = f" with cc_params {json.dumps(cc_params)}" if cc_params else ""
    return {"name": f"seed001-cc-{name}",
            "description": f"Seed 001's 64:1 incast at 400G in virtual time with every host's cc = {cc}{tuned}: "
                           f"{senders}:1, {len(rounds)} rounds of {sizes} per sender (start {starts} ms) into r0 "
                           "through the 65-port seed-001 switch (Kmin 120 KiB, Kmax 600 KiB, PFC on priority 3, "
                           "INT on queue 3), a write_lat probe s0 -> r0 through the hot queue every 2 us. "
                           "docs/scenarios.md \"Seed 001: congestion control compared\". Virtual time only.",
            "duration_s": 1, "drain_s": 1, "ts_period_ms": 10,
            "sim": {"seed": 1, "ts_period_us": 5, "run_limit_s": 0.05},
            "nodes": nodes, "links": links, "workloads": wls}


def fill(params, senders):
    fair = LINE_GBPS / senders
    return {k: (fair if v == "{fair}" else v) for k, v in params.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--senders", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of 1 MiB per sender (above 16 senders)")
    ap.add_argument("--gap-ms", type=int, default=2, help="ms between round starts (above 16 senders)")
    ap.add_argument("--uniform", action="store_true", help="rounds of 1 MiB per sender at any --senders (the N:1 grid)")
    ap.add_argument("--bursts", action="store_true",
                    help="rounds of 64 KiB, 256 KiB, 1 MiB per sender, --gap-ms apart (4-64 MiB at 64:1, the seed's bursts)")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--out", default=HERE)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    sw_path = os.path.join(a.out, "seed001-cc-switch.json")
    with open(sw_path, "w") as f:
        json.dump(switch_cfg(), f, indent=1)
        f.write("\n")
    rounds = rounds_for(a.senders, a.rounds, a.gap_ms, a.uniform, a.bursts)
    runs = [(cc, cc, None) for cc in CCS] + [(v, cc, fill(p, a.senders)) for v, (cc, p) in VARIANTS.items()]
    for name, cc, params in runs:
        with open(os.path.join(a.out, f"seed001-cc-{name}.json"), "w") as f:
            json.dump(topology(name, cc, params, a.senders, a.scale, "seed001-cc-switch.json", rounds), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
