#!/usr/bin/python3
"""Writes the real-time congestion-control lab topologies (issue 16 section 4;
docs/lab.md "Congestion control in real time"): one sf-lab topology per
congestion control, each small enough for a 2-core machine, all on one
switch config.

  incast-<cc>.json   4:1 incast of sf-nic hosts s0-s3 (one process) into r0
                     (another) through sf-switch at 1 Gb/s: two rounds of
                     2 MiB per sender (64 KiB messages) and a write_lat probe
                     s0 -> r0 through the hot queue, every host's cc = <cc>
                     (nscc: MRC flows with mrc_cc nscc; the probe too).
  switch.json        ../switch-9port-lossless.json (the seed-000 static
                     lossless profile on 9 ports: ECN
                     from 120 KiB, PFC on priority 3) with INT on queue 3 of
                     the five ports used: inert for every CC but HPCC, whose
                     requests alone ask for records.

Swift runs with base_target 20 ms and HPCC with base_rtt (T) 1 ms: their
targets are absolute (Swift's 25 us and HPCC's 10 us are a hardware
fabric's) and this path's RTT is a software one, 0.1-10 ms (docs/cc.md
"Swift in real time"); with T = 10 us HPCC's window is 1.25 KB at 1 Gb/s
and the four flows moved 0.1-0.2 Gb/s together.

usage: config/topologies/cc/gen.py [--out DIR]   (default: this directory)
Output is deterministic; tests/integration/lab/lab_test.py case cc_files
checks the shipped files equal what this writes."""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
TOPOLOGIES = os.path.dirname(HERE)
CCS = ["none", "dcqcn-nvidia", "dcqcn-paper", "swift", "bbr", "hpcc", "nscc"]
CC_PARAMS = {"swift": {"base_target": "20ms"}, "hpcc": {"base_rtt": "1ms"}}
SENDERS = 4
ROUNDS = [(0, 2 << 20), (1500, 2 << 20)]  # (start ms, bytes per sender)


def switch_cfg():
    with open(os.path.join(TOPOLOGIES, "switch-9port-lossless.json")) as f:
        cfg = json.load(f)
    cfg["DEVICE_METADATA"]["localhost"]["hostname"] = "sf-switch-cc-lab"
    used = [f"Ethernet{4 * i}" for i in range(SENDERS + 1)]
    cfg["INT"] = {",".join(used) + "|3": {"enable": "true"}}
    return cfg


def topology(cc):
    senders = [f"s{i}" for i in range(SENDERS)]
    nodes = {"sw0": {"kind": "switch", "config": "switch.json"}}
    for n in senders + ["r0"]:
        node = {"kind": "nic", "process": "receiver" if n == "r0" else "senders"}
        if cc == "nscc":
            node["mrc_cc"] = "nscc"
        else:
            node["cc"] = cc
            if cc in CC_PARAMS:
                node["cc_params"] = CC_PARAMS[cc]
        nodes[n] = node
    links = [{"a": n, "b": f"sw0:Ethernet{4 * i}", "speed_gbps": 1} for i, n in enumerate(senders + ["r0"])]
    transport = {"transport": "mrc"} if cc == "nscc" else {}
    wls = [{"name": f"round{k}", "type": "incast", "senders": senders, "receiver": "r0", "size_bytes": size,
            "message_bytes": 65536, "start_ms": start, **transport} for k, (start, size) in enumerate(ROUNDS)]
    wls.append({"name": "probe", "type": "probe", "src": "s0", "dst": "r0", "test": "write_lat",
                "size_bytes": 64, **transport})
    what = "MRC flows under NSCC (mrc_cc nscc)" if cc == "nscc" else f"RC flows under cc = {cc}"
    tuned = f" with cc_params {json.dumps(CC_PARAMS[cc])}" if cc in CC_PARAMS else ""
    return {"name": f"cc-incast-{cc}",
            "description": f"Congestion control in real time (issue 16 section 4): a {SENDERS}:1 incast of sf-nic "
                           f"hosts s0-s3 (one process) into r0 (another) through sf-switch at 1 Gb/s, {what}{tuned}: "
                           f"{len(ROUNDS)} rounds of 2 MiB per sender in 64 KiB messages (start "
                           f"{'/'.join(str(s) for s, _ in ROUNDS)} ms), a write_lat probe s0 -> r0 through the hot "
                           "queue (queue 3 of r0's port; seed-000 profile, ECN from 120 KiB, PFC on priority 3, INT "
                           "on queue 3). Written by config/topologies/cc/gen.py; docs/lab.md \"Congestion control "
                           "in real time\".",
            "duration_s": 20, "drain_s": 3, "ts_period_ms": 50,
            "nodes": nodes, "links": links, "workloads": wls}


def files():
    """{file name: JSON text} of everything gen.py writes."""
    out = {"switch.json": json.dumps(switch_cfg(), indent=1) + "\n"}
    for cc in CCS:
        out[f"incast-{cc}.json"] = json.dumps(topology(cc), indent=1) + "\n"
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=HERE)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name, text in files().items():
        with open(os.path.join(a.out, name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
