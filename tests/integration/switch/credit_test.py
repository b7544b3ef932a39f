#!/usr/bin/python3
"""sf-switch in credit mode (CREDIT_FC) end to end, real time, net_pcap ports.

Usage: credit_test.py --build BUILD_DIR credit_pcap|credit_pcap_shards
Exit 0 = pass, 77 = skipped (meson), else fail.

credit_pcap: Ethernet0 replays 4 data frames A -> B (B on Ethernet4 by a
static FDB entry), then a truncated credit frame and one for VL 9 (the port
has VL 0 only). Ethernet0 is a credit port with update threshold 2,
Ethernet4 one with 2 credits (vl_buffer 8 KiB / mtu 4 KiB), both captured to
pcaps. Expect: exactly 2 data frames leave Ethernet4 (no credit came back:
nothing answers there) and it reports one credit stall in progress; the 2
that left free 2 slots of Ethernet0, which sends one credit update frame
(EtherType 0x88B5, version 1, VL 0, granted 256 + 2); the bad credit frames
are counted (malformed by reason, unknown VL) and consumed; no drops.

credit_pcap_shards: the same with --shards 2 (Ethernet0 on shard 0, Ethernet4
on shard 1, two EAL lcores): the slots the 2 frames held on Ethernet0 are
freed on shard 1 and go back as credit notes. Expect: the very same frames
and counters, and the report's shards moved 4 packets and 2 credit notes,
every note applied.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pcapfile import read_pcap, write_pcap  # noqa: E402
from harness import check, port_by_name, wait_until  # noqa: E402
from switch_test import eth, ip_udp, telemetry  # noqa: E402

A = "02:00:00:00:00:0a"
B = "02:00:00:00:00:0b"


def credit_frame(entries, count=None, version=1):
    b = eth("03:53:46:43:46:00", B, 0x88B5) + bytes([version, 1, len(entries) if count is None else count, 0])
    for vl, granted in entries:
        b += bytes([vl, 0, 0, 0]) + struct.pack("!I", granted)
    return b + bytes(max(0, 60 - len(b)))


def credit_pcap(h, shards=1):
    data = [ip_udp(A, B, 1000, tos=26 << 2, sport=3000 + i, seq=i) for i in range(4)]
    bad = [credit_frame([(0, 5)])[:16], credit_frame([(9, 100)])]
    inp, out0, out1 = h.path("in0.pcap"), h.path("out0.pcap"), h.path("out1.pcap")
    write_pcap(inp, data + bad)
    cfg = {"DEVICE_METADATA": {"localhost": {"mmu_size": "4MiB"}},
           "PORT": {"Ethernet0": {"devargs": f"net_pcap0,rx_pcap={inp},tx_pcap={out0}", "speed": 10, "mtu": 4000},
                    "Ethernet4": {"devargs": f"net_pcap1,tx_pcap={out1}", "speed": 10, "mtu": 4000}},
           "FDB": {B: {"port": "Ethernet4"}},
           "CREDIT_FC": {"Ethernet0": {"update_threshold": 2},
                         "Ethernet4": {"mtu": 4096, "vl_buffer": 8192}}}
    if shards == 1:
        sw = h.start_switch(cfg, telemetry=True, eal=["-m", "256"])
    else:
        sw = h.start_switch(cfg, app=["--shards", str(shards)], telemetry=True, eal=["-m", "256"],
                            lcores="0@(0,1),1@(0,1)")
    n = len(data) + len(bad)
    wait_until(lambda: (telemetry(sw.prefix, "/softfabric/switch/port,0") or {}).get("rx_packets") == n, 15,
               "Ethernet0 to receive the replay", poll_s=0.1, procs=[sw])
    wait_until(lambda: (telemetry(sw.prefix, "/softfabric/switch/credit,0") or {}).get("tx_credit_updates") == 1,
               15, "Ethernet0's credit update", poll_s=0.1, procs=[sw])
    live = telemetry(sw.prefix, "/softfabric/switch/credit,1")
    rep = h.stop_switch(sw)
    p0, p1 = port_by_name(rep, "Ethernet0"), port_by_name(rep, "Ethernet4")
    c0, c1 = p0["credit"], p1["credit"]
    print(f"Ethernet4 tx {p1['tx_packets']} (credits {c1['vls'][0]}), stalls {c1['credit_stalls']}; "
          f"Ethernet0 updates {c0['tx_credit_updates']}, malformed {c0['rx_credit_malformed_by_reason']}, "
          f"unknown VL {c0['rx_credit_unknown_vl']}; telemetry {live}")
    check(p1["tx_packets"] == 2, f"Ethernet4 sent {p1['tx_packets']} frames with 2 credits")
    check(c1["credit_stalls"] == 1 and c1["vls"][0]["stalled"] and c1["vls"][0]["credits_available"] == 0,
          f"Ethernet4 credit state {c1}")
    check(live["credit_stalls"] == 1, f"telemetry /softfabric/switch/credit,1: {live}")
    check(p1["queues"][3]["depth_packets"] == 2, "2 frames wait for credit in queue 3")
    check(c0["tx_credit_updates"] == 1 and c0["vls"][0]["rx_granted_total"] == 258, f"Ethernet0 credit state {c0}")
    check(c0["rx_credit_malformed_by_reason"] == {"truncated": 1}, f"malformed {c0['rx_credit_malformed_by_reason']}")
    check(c0["rx_credit_unknown_vl"] == 1 and c0["rx_credit_updates"] == 1, f"Ethernet0 credit rx {c0}")
    check(p0["dropped"] == 0 and p1["dropped"] == 0, "no drops")
    got1 = read_pcap(out1)
    check(got1 == data[:2], f"Ethernet4 captured {len(got1)} frames, want the first 2 data frames unchanged")
    got0 = read_pcap(out0)
    check(len(got0) == 1, f"Ethernet0 captured {len(got0)} frames, want 1 credit update")
    f = got0[0]
    check(len(f) == 60 and f[12:14] == b"\x88\xb5", f"not a 60-byte credit frame: {f.hex()}")
    check(f[14:17] == bytes([1, 1, 1]), f"version/opcode/count {f[14:17].hex()}")
    check(f[18] == 0 and struct.unpack("!I", f[22:26])[0] == 258, f"entry {f[18:26].hex()}")
    if shards > 1:
        sh = rep["shards"]
        print("shards:", sh)
        check(sh[0]["forwarded"] == 4 and sh[1]["received"] == 4, f"data frames across the shards {sh}")
        check(sh[1]["credit_notes_sent"] == 2 and sh[0]["credit_notes_received"] == 2,
              f"credit notes {sh}: want the 2 sent frames' slots back on shard 0")
        check(sh[1]["releases_sent"] == sh[0]["releases_received"], f"release notes {sh}")
    return 0


CASES = {"credit_pcap": credit_pcap, "credit_pcap_shards": lambda h: credit_pcap(h, shards=2)}



if __name__ == "__main__":
    sys.exit(harness.run_main(CASES))
