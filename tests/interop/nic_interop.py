#!/usr/bin/python3
"""NIC wire interop (docs/nic.md): every frame two NicNodes exchanged (from
nic-interop-helper's pcap) carries an ICRC that scapy's RoCE layer and an
independent zlib implementation agree with, and the run covers the RC
opcodes and AETH syndromes it is meant to (WRITE FIRST/MIDDLE/LAST, SEND ONLY
with immediate, READ request and responses, WRITE ONLY with immediate, ACK,
PSN-sequence NAK, RNR NAK, CNP), with 4 KiB frames built as mbuf chains.

usage: nic_interop.py NIC_INTEROP_HELPER
Missing scapy is a FAILURE, not a skip.
"""
import os
import subprocess
import sys
import tempfile
import zlib

try:
    import logging
    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy.all import Ether, UDP, rdpcap, raw  # noqa: E402
    from scapy.contrib.roce import BTH  # noqa: E402
except ImportError as e:
    print(f"FAIL: /usr/bin/python3 cannot import scapy.contrib.roce ({e}); run ./dev setup", file=sys.stderr)
    sys.exit(1)

if len(sys.argv) != 2:
    print("usage: nic_interop.py NIC_INTEROP_HELPER", file=sys.stderr)
    sys.exit(2)

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def ref_icrc(frame):
    """endpoint.md 1.7 for IPv4 at offset 14, with zlib."""
    ip_len = (frame[14] & 0x0F) * 4
    hdr = bytearray(frame[14:14 + ip_len + 8 + 12])
    hdr[1] = 0xFF
    hdr[8] = 0xFF
    hdr[10:12] = b"\xff\xff"
    hdr[ip_len + 6:ip_len + 8] = b"\xff\xff"
    hdr[ip_len + 8 + 4] = 0xFF
    return (zlib.crc32(b"\xff" * 8 + bytes(hdr) + frame[14 + len(hdr):-4]) & 0xFFFFFFFF).to_bytes(4, "little")


tmp = tempfile.mkdtemp(prefix="sf-nic-interop-")
pcap = os.path.join(tmp, "nic.pcap")
r = subprocess.run([sys.argv[1], pcap], capture_output=True, text=True)
print(r.stdout.strip())
check(r.returncode == 0, f"helper exited {r.returncode}: {r.stderr.strip()}")

opcodes = set()
syndromes = set()
big = 0
roce = 0
for pkt in rdpcap(pcap):
    f = raw(pkt)
    p = Ether(f)
    if UDP not in p or p[UDP].dport != 4791:
        continue
    roce += 1
    op = f[14 + 20 + 8]
    opcodes.add(op)
    if len(f) > 2048:
        big += 1
    check(ref_icrc(f) == f[-4:], f"frame {roce} opcode {op:#x}: ICRC {f[-4:].hex()} != reference {ref_icrc(f).hex()}")
    q = Ether(f)
    q[BTH].icrc = None
    check(raw(q)[-4:] == f[-4:], f"frame {roce} opcode {op:#x}: scapy ICRC {raw(q)[-4:].hex()} != ours {f[-4:].hex()}")
    if op == 0x11:
        syndromes.add(f[14 + 20 + 8 + 12])

want_ops = {0x06: "WRITE_FIRST", 0x07: "WRITE_MIDDLE", 0x08: "WRITE_LAST", 0x05: "SEND_ONLY_IMM",
            0x0C: "READ_REQUEST", 0x0D: "READ_RESPONSE_FIRST", 0x0E: "READ_RESPONSE_MIDDLE",
            0x0F: "READ_RESPONSE_LAST", 0x0B: "WRITE_ONLY_IMM", 0x04: "SEND_ONLY", 0x11: "ACKNOWLEDGE", 0x81: "CNP"}
for op, name in want_ops.items():
    check(op in opcodes, f"no {name} frame in the run")
check(0x1F in syndromes, "no ACK (syndrome 0x1f)")
check(0x60 in syndromes, "no PSN sequence error NAK (syndrome 0x60)")
check(any(s & 0xE0 == 0x20 for s in syndromes), "no RNR NAK")
check(big > 0, "no frame above one 2 KiB segment")
print(f"{roce} RoCE frames, opcodes {sorted(hex(o) for o in opcodes)}, syndromes {sorted(hex(s) for s in syndromes)}")
if FAILURES:
    print(f"{len(FAILURES)} failures")
    sys.exit(1)
print("ok")
