#!/usr/bin/python3
"""HPCC with the switch's INT over real processes (docs/switch.md "INT",
docs/cc.md "HPCC").

usage: nic_int_test.py --build BUILD_DIR CASE
CASE: switch_hpcc_int

Two sf-nic processes (write_bw --cc hpcc --verify) through sf-switch over
memif, INT on the server port's queues: the switch appends a record to every
request (its report's int.records equals the client's INT-opened requests
that reached it, none refused), the server echoes them, and the client's
HPCC saw one-hop stacks (report qp_cc: hops 1, int_acks > 0, commits > 0).
Same rules as nic_test.py (harness.py): --no-pci, own --file-prefix, --backoff.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "switch"))
import harness  # noqa: E402
import nic_test  # noqa: E402
from harness import check, port_by_name  # noqa: E402


def switch_hpcc_int(h):
    """write_bw 64 KiB x 100 --verify --cc hpcc through sf-switch with INT on
    Ethernet0 (toward the server), queues 0-7."""
    cfg = nic_test.switch_cfg(h)
    cfg["INT"] = {"Ethernet0|0-7": {"enable": "true"}}
    sw = h.start_switch(cfg)
    s = f"net_memif0,role=client,socket={h.path('Ethernet0.sock')}"
    c = f"net_memif0,role=client,socket={h.path('Ethernet4.sock')}"
    srv, cli, _ = nic_test.pair(h, "write_bw", ["-s", 65536, "-n", 100, "--verify", "--speed", 10, "--cc", "hpcc"],
                                s, c)
    rep = h.stop_switch(sw)
    nic_test.check_clean(srv, "server")
    nic_test.check_clean(cli, "client")
    check(srv["workloads"][0]["messages"] == 100, f"server {srv['workloads'][0]}")
    p0 = port_by_name(rep, "Ethernet0")
    check("int" in p0, f"switch report has no int block for Ethernet0: {sorted(p0)}")
    i = p0["int"]
    check(i["records"] >= 100 * 16 and i["bytes"] == 16 * i["records"], f"switch INT {i}")
    check(i["full"] == 0 and i["no_room"] == 0 and i["bad_shim"] == 0, f"switch INT refused frames: {i}")
    check(rep["int"]["records"] == i["records"], f"switch-wide INT {rep['int']} vs port {i}")
    check(p0["dropped"] == 0, "switch dropped frames")
    ccs = cli["hosts"][0].get("qp_cc", [])
    check(len(ccs) >= 1, f"client report has no qp_cc: {cli['hosts'][0].keys()}")
    q = ccs[0]
    check(q["cc"] == "hpcc", f"client CC {q['cc']}")
    check(q["hops"] == 1, f"client HPCC hops {q.get('hops')} (want 1: one switch)")
    check(q["int_acks"] > 0 and q["commits"] > 0, f"client HPCC saw no records: {q}")
    # Each INT record came from one request: the switch wrote no more than the client opened.
    check(srv["hosts"][0]["rx_int_frames"] == i["records"],
          f"server received {srv['hosts'][0]['rx_int_frames']} INT frames, switch wrote {i['records']} records")


CASES = {"switch_hpcc_int": switch_hpcc_int}

if __name__ == "__main__":
    sys.exit(harness.run_main(CASES, 'nic-int-'))
