#!/usr/bin/python3
"""ARP / IPv6 ND frames (common/wire/arp_nd.h) against scapy and tshark:
our builders' frames dissected by scapy (fields, ICMPv6 checksum recomputed
by scapy equal to ours) and by tshark (no malformed or bad-checksum
verdict); scapy-built frames parsed by ours (fields), and scapy-broken ones
refused with the reason.

Usage: arp_nd_interop.py HELPER
"""
import os
import subprocess
import sys
import tempfile

from scapy.all import ARP, Dot1Q, Ether, ICMPv6ND_NA, ICMPv6ND_NS, ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr, IPv6
from scapy.utils import wrpcap

HELPER = sys.argv[1]
fails = []


def check(ok, msg):
    if not ok:
        fails.append(msg)
        print("FAIL:", msg)


def ours():
    out = subprocess.run([HELPER, "gen"], capture_output=True, text=True, check=True).stdout
    return [(ln.split()[0], bytes.fromhex(ln.split()[1])) for ln in out.splitlines()]


def parse(frame):
    import json
    out = subprocess.run([HELPER, "parse", bytes(frame).hex()], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


# 1. Ours, dissected by scapy.
frames = ours()
for label, b in frames:
    p = Ether(b)
    if label.startswith("arp"):
        a = p[ARP]
        check(a.hwtype == 1 and a.ptype == 0x0800 and a.hwlen == 6 and a.plen == 4, f"{label}: ARP header {a.summary()}")
        check(a.op == (1 if label == "arp_request" else 2), f"{label}: op {a.op}")
        if label == "arp_request":
            check(a.psrc == "10.0.1.2" and a.pdst == "10.0.1.1" and a.hwsrc == "02:4e:00:00:00:0a", f"{label}: {a.summary()}")
        else:
            check(a.psrc == "10.0.1.1" and a.pdst == "10.0.1.2" and a.hwsrc == "02:53:00:00:00:01", f"{label}: {a.summary()}")
        check(len(b) >= 60, f"{label}: {len(b)} bytes, under the 60-byte minimum")
    else:
        layer = ICMPv6ND_NS if label == "ns" else ICMPv6ND_NA
        nd = p[layer]
        check(p[IPv6].hlim == 255, f"{label}: hop limit {p[IPv6].hlim}")
        check(nd.tgt == "fd00:1::1", f"{label}: target {nd.tgt}")
        if label == "ns":
            check(p[IPv6].dst == "ff02::1:ff00:1" and p[Ether].dst == "33:33:ff:00:00:01", f"ns: to {p[IPv6].dst}")
            check(p[ICMPv6NDOptSrcLLAddr].lladdr == "02:4e:00:00:00:0a", "ns: source LLA")
        else:
            check(nd.S == 1 and nd.O == 1 and nd.R == 0, f"{label}: flags R{nd.R} S{nd.S} O{nd.O}")
            check(p[ICMPv6NDOptDstLLAddr].lladdr == "02:53:00:00:00:01", f"{label}: target LLA")
        c = nd.cksum
        del nd.cksum
        check(Ether(bytes(p))[layer].cksum == c, f"{label}: ICMPv6 checksum {c:#x} differs from scapy's")
    if label.endswith("vlan5"):
        check(p[Dot1Q].vlan == 5 and p[Dot1Q].prio == 3, f"{label}: tag {p[Dot1Q].summary()}")
    if label.endswith("vlan7"):
        check(p[Dot1Q].vlan == 7, f"{label}: tag {p[Dot1Q].summary()}")

# 2. Ours, dissected by tshark.
with tempfile.TemporaryDirectory() as d:
    pcap = os.path.join(d, "nd.pcap")
    wrpcap(pcap, [Ether(b) for _, b in frames])
    r = subprocess.run(["tshark", "-r", pcap, "-T", "fields", "-E", "separator=|", "-e", "frame.protocols", "-e", "arp.opcode",
                        "-e", "icmpv6.type", "-e", "icmpv6.checksum.status", "-e", "_ws.malformed",
                        "-e", "_ws.expert.severity"],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"tshark failed: {r.stderr[-500:]}")
    rows = [ln.split("|") for ln in r.stdout.splitlines()]
    check(len(rows) == len(frames), f"tshark read {len(rows)} frames, want {len(frames)}")
    for (label, _), row in zip(frames, rows):
        protos, op, typ, cks, malformed, sev = (row + [""] * 6)[:6]
        check(malformed == "", f"tshark: {label} malformed ({protos})")
        if label.startswith("arp"):
            check(op == ("1" if label == "arp_request" else "2"), f"tshark: {label} opcode {op}")
        else:
            check(typ == ("135" if label == "ns" else "136"), f"tshark: {label} type {typ}")
            check(cks == "1", f"tshark: {label} checksum status {cks!r} (1 = good)")
    print(f"tshark: {len(rows)} frames dissected: {[r[0] for r in rows]}")

# 3. scapy's frames, parsed by ours.
req = Ether(dst="ff:ff:ff:ff:ff:ff", src="02:4e:00:00:00:0b") / ARP(op=1, hwsrc="02:4e:00:00:00:0b", psrc="10.0.2.2",
                                                                      pdst="10.0.2.1")
j = parse(req)
check(j.get("kind") == "arp_request" and j["sender_ip"] == "10.0.2.2" and j["target_ip"] == "10.0.2.1" and
      j["sender_mac"] == "02:4e:00:00:00:0b", f"scapy ARP request: {j}")
j = parse(Ether(src="02:4e:00:00:00:0b") / Dot1Q(vlan=9) / ARP(op=2, hwsrc="02:4e:00:00:00:0b", psrc="10.0.2.2",
                                                              pdst="10.0.2.1"))
check(j.get("kind") == "arp_reply" and j.get("vid") == 9, f"scapy tagged ARP reply: {j}")
ns = (Ether(src="02:4e:00:00:00:0b", dst="33:33:ff:00:00:01") / IPv6(src="fd00:2::2", dst="ff02::1:ff00:1", hlim=255) /
      ICMPv6ND_NS(tgt="fd00:2::1") / ICMPv6NDOptSrcLLAddr(lladdr="02:4e:00:00:00:0c"))
j = parse(ns)
check(j.get("kind") == "ns" and j["target_ip"] == "fd00:2::1" and j["sender_mac"] == "02:4e:00:00:00:0c" and
      j["has_lla"], f"scapy NS: {j}")
na = (Ether(src="02:4e:00:00:00:0b") / IPv6(src="fd00:2::2", dst="fd00:2::1", hlim=255) /
      ICMPv6ND_NA(tgt="fd00:2::2", S=1, O=1) / ICMPv6NDOptDstLLAddr(lladdr="02:4e:00:00:00:0b"))
j = parse(na)
check(j.get("kind") == "na" and j["solicited"] and j["target_ip"] == "fd00:2::2", f"scapy NA: {j}")
# Broken by scapy: refused with the reason.
bad = ns.copy()
bad[IPv6].hlim = 64
check(parse(bad)["error"] == "nd_hop_limit", f"NS hop limit 64: {parse(bad)}")
bad = ns.copy()
bad[ICMPv6ND_NS].cksum = 0x1234
check(parse(bad)["error"] == "nd_checksum", f"NS bad checksum: {parse(bad)}")
check(parse(Ether() / ARP(hwlen=8))["error"] == "arp_format", "ARP hwlen 8")
check(parse(Ether() / ARP(op=7))["error"] == "arp_opcode", "ARP op 7")
check(parse(bytes(req)[:30])["error"] == "truncated", "ARP truncated")
check(parse(Ether() / IPv6() / b"")["error"] == "not_neighbor", "IPv6 without ICMPv6")

print("arp_nd_interop:", "FAIL" if fails else "ok", f"({len(frames)} frames of ours, 10 of scapy's)")
sys.exit(1 if fails else 0)
