#!/usr/bin/python3
"""INT interop (docs/switch.md "INT", docs/wire-formats.md "INT shim").

usage: int_interop.py INT_INTEROP_HELPER

The helper sends HPCC requests (BTH INT flag, empty shim) of IPv4 and IPv6,
WRITE/SEND/WRITE_WITH_IMM, through a SwitchNode with INT on the egress queue
(one or two hops) and captures what the switch sent. Checks:
  * tshark dissects every frame as RoCE: BTH opcode, dest QP, PSN, the INT
    flag in the reserved bits, RETH VA / rkey / DMA length, and its ICRC
    field is the frame's last 4 bytes; no malformed-packet expert info; the
    IP / UDP lengths it shows match the frame;
  * the shim (scapy-free parse of the tail) holds the expected number of
    records, each with a rate of 400000 Mb/s and increasing timestamps;
  * with the shim stripped (lengths restored), the frame is byte for byte
    what the sender built, and its ICRC verifies with scapy's RoCE layer
    (IPv4) or the independent zlib reference (IPv6): the switch did not
    disturb the ICRC.
Missing tshark or scapy is a FAILURE, not a skip.
"""
import json
import os
import struct
import subprocess
import tempfile

from interop_common import TSHARK, check, die, args, ref_icrc, scapy_icrc, tshark_fields, finish

[HELPER] = args("int_interop.py INT_INTEROP_HELPER", 1)
tmp = tempfile.mkdtemp(prefix="sf-int-interop-")
pcap = os.path.join(tmp, "int.pcap")
gen = subprocess.run([HELPER, "gen", pcap], capture_output=True, text=True)
if gen.returncode != 0:
    die(f"helper gen failed ({gen.returncode}): {gen.stderr}")
manifest = [json.loads(line) for line in gen.stdout.splitlines()]
out = subprocess.run([TSHARK, "-r", pcap, "-T", "json", "--no-duplicate-keys", "-d", "udp.port==4791,infiniband"],
                     check=True, capture_output=True, text=True).stdout
ts = tshark_fields(out)
check(len(ts) == len(manifest), f"tshark saw {len(ts)} frames, expected {len(manifest)}")

# raw frames from the pcap (classic pcap, written by the helper)
frames = []
with open(pcap, "rb") as f:
    f.read(24)
    while True:
        rec = f.read(16)
        if len(rec) < 16:
            break
        _, _, incl, _ = struct.unpack("<IIII", rec)
        frames.append(f.read(incl))

for m, t, fr in zip(manifest, ts, frames):
    n = m["name"]

    def eq(field, want, conv=lambda s: int(s, 0)):
        got = t.get(field)
        check(got is not None and conv(got[-1]) == want, f"{n}: tshark {field}={got} want {want}")

    eq("infiniband.bth.opcode", m["opcode"])
    eq("infiniband.bth.destqp", m["dest_qp"])
    eq("infiniband.bth.psn", m["psn"])
    eq("infiniband.bth.reserved7", 0x40)  # the INT flag (BTH byte 8 bit 6)
    if m["opcode"] in (6, 10, 11):  # WRITE_FIRST, WRITE_ONLY, WRITE_ONLY_WITH_IMM carry a RETH
        eq("infiniband.reth.va", m["reth"]["va"])
        eq("infiniband.reth.r_key", m["reth"]["rkey"])
        eq("infiniband.reth.dmalen", m["reth"]["dma_length"])
    icrc = t.get("infiniband.invariant.crc")
    check(icrc is not None and int(icrc[-1], 16) == struct.unpack(">I", fr[-4:])[0],
          f"{n}: tshark ICRC field {icrc} is not the last 4 bytes {fr[-4:].hex()}")
    check("_ws.malformed" not in t and "_ws.malformed.expert" not in t, f"{n}: tshark says malformed")
    check(len(fr) == m["frame_bytes"], f"{n}: pcap frame {len(fr)} B, helper said {m['frame_bytes']}")
    v6 = m["l3"] == "ipv6"
    if v6:
        eq("ipv6.plen", len(fr) - 14 - 40)
        ip_off, udp_off = 14, 54
    else:
        eq("ip.len", len(fr) - 14)
        ip_off, udp_off = 14, 34
    eq("udp.length", len(fr) - udp_off)

    # The shim: tail = 4 bytes before the ICRC.
    magic, flags, hop_count, max_hops = fr[-8], fr[-7], fr[-6], fr[-5]
    check(magic == 0xA1 and flags == 0 and max_hops == 5, f"{n}: tail {fr[-8:-4].hex()}")
    check(hop_count == m["hops"], f"{n}: {hop_count} records, expected {m['hops']}")
    shim = 16 * hop_count + 4
    recs = fr[-4 - shim:-8]
    last_ts = -1
    for i in range(hop_count):
        ts_ns, tx_units, qlen, rate = struct.unpack(">IIII", recs[16 * i:16 * i + 16])
        check(rate == 400000, f"{n}: hop {i} rate {rate} Mb/s")
        check(ts_ns > last_ts, f"{n}: hop {i} ts {ts_ns} not after {last_ts}")
        last_ts = ts_ns

    # Strip: drop the shim, restore the lengths; the sender's frame, ICRC good.
    b = bytearray(fr[:-4 - shim] + fr[-4:])
    if v6:
        struct.pack_into(">H", b, ip_off + 4, struct.unpack_from(">H", b, ip_off + 4)[0] - shim)
    else:
        struct.pack_into(">H", b, ip_off + 2, struct.unpack_from(">H", b, ip_off + 2)[0] - shim)
        struct.pack_into(">H", b, ip_off + 10, 0)
        s = sum(struct.unpack(">10H", bytes(b[ip_off:ip_off + 20])))
        while s >> 16:
            s = (s & 0xFFFF) + (s >> 16)
        struct.pack_into(">H", b, ip_off + 10, (~s) & 0xFFFF)
    struct.pack_into(">H", b, udp_off + 4, struct.unpack_from(">H", b, udp_off + 4)[0] - shim)
    sent = bytes.fromhex(m["sent"])
    # The sender's frame minus its empty shim is `sent` with the lengths as built.
    check(bytes(b) == sent, f"{n}: stripped frame differs from the sender's")
    if v6:
        check(struct.pack("<I", ref_icrc(bytes(b), ip_off, True)) == bytes(b[-4:]), f"{n}: IPv6 ICRC wrong after strip")
    else:
        check(scapy_icrc(bytes(b)) == bytes(b[-4:]), f"{n}: scapy ICRC wrong after strip")

finish(tmp, "INT", f"{len(frames)} frames through the switch's INT, dissected by tshark, ICRC intact under the shim")
