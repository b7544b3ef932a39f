#!/usr/bin/python3
"""Wire interop for common/wire (docs/wire-formats.md, "Interop").

usage: wire_interop.py WIRE_INTEROP_HELPER SF_DECODE

1. Frames built by our builders are dissected by tshark; BTH/RETH/AETH/ImmDt,
   DSCP/ECN, flow label, VLAN, PFC and PAUSE fields must match what we set.
2. Their ICRC equals what scapy's RoCE layer computes (IPv4). For IPv6 (scapy
   has no IPv6 ICRC) the masking rules are proven: changing only masked fields
   keeps our ICRC valid, changing a covered field breaks it; and our value
   equals an independent zlib implementation of endpoint.md 1.7.
3. Frames built by scapy (SEND, WRITE+RETH, READ req/resp, ACK+AETH, CNP; IPv4
   and IPv6) are parsed by sf-decode field by field; IPv4 ICRCs verify.
Missing tshark or scapy is a FAILURE (./dev setup installs them), not a skip.
"""
import json
import os
import struct
import subprocess
import tempfile

from interop_common import (TSHARK, tshark_fields, AETH, BTH, Ether, IP, IPv6, UDP, Raw, cnp, wrpcap, rdpcap,
                            raw, check, die, args, ref_icrc, scapy_icrc, finish)

HELPER, SF_DECODE = args("wire_interop.py WIRE_INTEROP_HELPER SF_DECODE", 2)

# ---------------------------------------------------------------- helpers
def tshark_packets(pcap):
    out = subprocess.run([TSHARK, "-r", pcap, "-T", "json", "--no-duplicate-keys",
                          "-d", "udp.port==4791,infiniband"],
                         check=True, capture_output=True, text=True).stdout
    return tshark_fields(out)


def num(s):
    return int(s, 0)


def sf_decode(pcap):
    r = subprocess.run([SF_DECODE, pcap], capture_output=True, text=True)
    if r.returncode != 0:
        die(f"sf-decode {pcap} exited {r.returncode}: {r.stderr}")
    return [json.loads(line) for line in r.stdout.splitlines()]


tmp = tempfile.mkdtemp(prefix="sf-wire-interop-")
ours = os.path.join(tmp, "ours.pcap")

# ------------------------------------------------- 1. ours -> tshark
gen = subprocess.run([HELPER, "gen", ours], capture_output=True, text=True)
if gen.returncode != 0:
    die(f"helper gen failed: {gen.stderr}")
manifest = [json.loads(line) for line in gen.stdout.splitlines()]
ts = tshark_packets(ours)
check(len(ts) == len(manifest), f"tshark saw {len(ts)} frames, expected {len(manifest)}")

for m, t in zip(manifest, ts):
    n = m["name"]

    def eq(field, want, conv=num, idx=-1):
        got = t.get(field)
        check(got is not None and conv(got[idx]) == want, f"{n}: tshark {field}={got} want {want}")

    if m["kind"] == "roce":
        eq("infiniband.bth.opcode", m["opcode"])
        eq("infiniband.bth.destqp", m["dest_qp"])
        eq("infiniband.bth.psn", m["psn"])
        eq("infiniband.bth.a", int(m["ack_req"]))
        if m["becn"]:
            eq("infiniband.reserved", 0x40, conv=lambda s: int(s, 16))
        if "reth" in m:
            eq("infiniband.reth.va", m["reth"]["va"])
            eq("infiniband.reth.r_key", m["reth"]["rkey"])
            eq("infiniband.reth.dmalen", m["reth"]["dma_length"])
        if "aeth" in m:
            eq("infiniband.aeth.syndrome", m["aeth"]["syndrome"])
            eq("infiniband.aeth.msn", m["aeth"]["msn"])
        if "immdt" in m:
            eq("infiniband.immdt", m["immdt"], conv=lambda s: int(s.replace(":", ""), 16))
        if m["l3"] == "ipv4":
            eq("ip.dsfield.dscp", m["dscp"])
            eq("ip.dsfield.ecn", m["ecn"])
        else:
            eq("ipv6.tclass.dscp", m["dscp"])  # last = inner header for SRv6
            eq("ipv6.tclass.ecn", m["ecn"])
            eq("ipv6.flow", m["flow_label"])
        if m["l3"] == "srv6":
            eq("ipv6.nxt", 41, idx=0)
            check(t.get("ipv6.dst", [""])[0] == "fcbb:0:20:10:22::", f"{n}: outer DA {t.get('ipv6.dst')}")
        if "vlan" in m:
            eq("vlan.priority", m["vlan"]["pcp"])
            eq("vlan.id", m["vlan"]["vid"])
            eq("vlan.dei", int(m["vlan"]["dei"]))
    elif m["kind"] == "pfc":
        eq("macc.opcode", 0x0101)
        eq("macc.cbfc.enbv", m["enable_vector"])
        for i, q in enumerate(m["pause_quanta"]):
            eq(f"macc.cbfc.pause_time.c{i}", q)
    elif m["kind"] == "pause":
        eq("macc.opcode", 0x0001)
        eq("macc.pause_time", m["pause_quanta"])

# ------------------------------------------------- 2. our ICRC vs scapy / reference
frames = [bytes(p) for p in rdpcap(ours)]
n_v4 = n_v6 = 0
for m, f in zip(manifest, frames):
    if m["kind"] != "roce":
        continue
    ip_off = 18 if "vlan" in m else 14
    if m["l3"] == "ipv4":
        check(scapy_icrc(f) == f[-4:], f"{m['name']}: scapy ICRC {scapy_icrc(f).hex()} != ours {f[-4:].hex()}")
        n_v4 += 1
    else:
        if m["l3"] == "srv6":
            ip_off += 40  # ICRC covers the inner header only
        want = ref_icrc(f, ip_off, True)
        check(struct.pack("<I", want) == f[-4:], f"{m['name']}: reference IPv6 ICRC {want:#x} != ours {f[-4:].hex()}")
        n_v6 += 1
check(n_v4 >= 5 and n_v6 >= 5, "too few RoCE frames generated")

# IPv6 masking: mutate masked vs covered fields of plain IPv6 frames, check with our ICRC.
v6_frames = [(m, f) for m, f in zip(manifest, frames) if m["kind"] == "roce" and m["l3"] == "ipv6"]
IPO, UDPO, BTHO = 14, 54, 62
masked_mut = {
    "traffic class": lambda b: (b.__setitem__(IPO, b[IPO] ^ 0x0F), b.__setitem__(IPO + 1, b[IPO + 1] ^ 0xF0)),
    "flow label": lambda b: (b.__setitem__(IPO + 1, b[IPO + 1] ^ 0x0F), b.__setitem__(IPO + 3, b[IPO + 3] ^ 0xFF)),
    "hop limit": lambda b: b.__setitem__(IPO + 7, 1),
    "udp checksum": lambda b: b.__setitem__(UDPO + 6, 0x12),
    "bth byte 4 (fecn/becn/resv6a)": lambda b: b.__setitem__(BTHO + 4, 0xC0),
}
covered_mut = {
    "payload/last covered byte": lambda b: b.__setitem__(len(b) - 5, b[len(b) - 5] ^ 1),
    "psn": lambda b: b.__setitem__(BTHO + 11, b[BTHO + 11] ^ 1),
    "udp src port": lambda b: b.__setitem__(UDPO + 1, b[UDPO + 1] ^ 1),
    "udp length": lambda b: b.__setitem__(UDPO + 5, b[UDPO + 5] ^ 1),
    "next header": lambda b: b.__setitem__(IPO + 6, 0x11 ^ 0x80),
    "payload length": lambda b: b.__setitem__(IPO + 5, b[IPO + 5] ^ 1),
    "source address": lambda b: b.__setitem__(IPO + 8, b[IPO + 8] ^ 1),
    "ip version": lambda b: b.__setitem__(IPO, b[IPO] ^ 0x10),
    "bth opcode": lambda b: b.__setitem__(BTHO, b[BTHO] ^ 0x01),
    "bth resv7": lambda b: b.__setitem__(BTHO + 8, b[BTHO + 8] ^ 0x01),
    "pkey": lambda b: b.__setitem__(BTHO + 2, b[BTHO + 2] ^ 0x01),
}


def icrc_raw(frames_, v):
    path = os.path.join(tmp, "mut.pcap")
    wrpcap(path, [Ether(f) for f in frames_])
    r = subprocess.run([HELPER, "icrc-raw", path, v], capture_output=True, text=True, check=True)
    return r.stdout.split()


for label, muts, want in (("masked", masked_mut, "ok"), ("covered", covered_mut, "bad")):
    for name, mut in muts.items():
        batch = []
        for m, f in v6_frames:
            b = bytearray(f)
            mut(b)
            batch.append(bytes(b))
        res = icrc_raw(batch, "v6")
        check(res == [want] * len(batch), f"IPv6 {label} field '{name}': our ICRC said {res}, want all {want}")
# The same masking holds on IPv4, cross-checked with scapy's computation.
for m, f in zip(manifest, frames):
    if m["kind"] == "roce" and m["l3"] == "ipv4" and "vlan" not in m:
        b = bytearray(f)
        b[15] ^= 0xFF  # TOS
        b[22] = 7      # TTL
        b[24:26] = b"\x00\x00"  # IP checksum
        b[40:42] = b"\xab\xcd"  # UDP checksum
        b[46] = 0x40   # BTH byte 4
        check(icrc_raw([bytes(b)], "v4") == ["ok"], f"{m['name']}: IPv4 masked fields changed ICRC")
        check(scapy_icrc(bytes(b)) == f[-4:], f"{m['name']}: scapy disagrees after masked change")
        b[-5] ^= 1
        check(icrc_raw([bytes(b)], "v4") == ["bad"], f"{m['name']}: IPv4 payload change kept ICRC")

# ------------------------------------------------- 3. scapy frames -> sf-decode
PAYLOAD = bytes(range(32))
RETH = struct.pack("!QII", 0x00007F00DEADBEEF, 0x1234ABCD, 4096)


def l3(v6, tos=0x68, fl=0x12345):
    if v6:
        return IPv6(src="fd00::1", dst="fd00::2", tc=tos, fl=fl, hlim=9) / UDP(sport=0xC001, dport=4791, chksum=0)
    return IP(src="10.1.0.1", dst="10.1.0.2", tos=tos, ttl=9, flags="DF") / UDP(sport=0xC001, dport=4791, chksum=0)


def scapy_frames(v6):
    e = Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
    return [
        ("send_only", e / l3(v6) / BTH(opcode=0x04, dqpn=0x111, psn=0xFFFFFF, ackreq=1) / Raw(PAYLOAD),
         {"opcode": 4, "dest_qp": 0x111, "psn": 0xFFFFFF, "ack_req": True, "payload_bytes": 32}),
        ("send_only_pad", e / l3(v6) / BTH(opcode=0x04, dqpn=0x111, psn=5, padcount=3) / Raw(PAYLOAD[:13] + b"\0\0\0"),
         {"opcode": 4, "psn": 5, "payload_bytes": 13, "pad_bytes": 3}),
        ("write_only", e / l3(v6) / BTH(opcode=0x0A, dqpn=0x222, psn=7) / Raw(RETH + PAYLOAD),
         {"opcode": 10, "dest_qp": 0x222, "reth": {"va": "0x7f00deadbeef", "rkey": 0x1234ABCD, "dma_length": 4096},
          "payload_bytes": 32}),
        ("read_request", e / l3(v6) / BTH(opcode=0x0C, dqpn=0x333, psn=8, ackreq=1) / Raw(RETH),
         {"opcode": 12, "reth": {"va": "0x7f00deadbeef", "rkey": 0x1234ABCD, "dma_length": 4096}, "payload_bytes": 0}),
        ("read_response_only", e / l3(v6) / BTH(opcode=0x10, dqpn=0x444, psn=8) / AETH(syndrome=0x1F, msn=3) / Raw(PAYLOAD),
         {"opcode": 16, "aeth": {"syndrome": 0x1F, "msn": 3, "type": "ack"}, "payload_bytes": 32}),
        ("ack_nak", e / l3(v6) / BTH(opcode=0x11, dqpn=0x555, psn=9) / AETH(syndrome=0x61, msn=0xABCDEF),
         {"opcode": 17, "aeth": {"syndrome": 0x61, "msn": 0xABCDEF, "type": "nak", "value": 1}, "payload_bytes": 0}),
        ("cnp", e / l3(v6, tos=0xC2) / cnp(0xD2),
         {"opcode": 0x81, "dest_qp": 0xD2, "becn": True, "payload_bytes": 0}),
    ]


for v6 in (False, True):
    fam = "ipv6" if v6 else "ipv4"
    items = scapy_frames(v6)
    path = os.path.join(tmp, f"scapy_{fam}.pcap")
    wrpcap(path, [p for _, p, _ in items])
    decoded = sf_decode(path)
    check(len(decoded) == len(items), f"sf-decode printed {len(decoded)} lines for {len(items)} scapy {fam} frames")
    for (name, pkt, want), d in zip(items, decoded):
        tag = f"scapy {fam} {name}"
        check("error" not in d, f"{tag}: rejected: {d.get('error')}")
        bth = d.get("bth", {})
        for k in ("opcode", "dest_qp", "psn", "ack_req", "becn"):
            if k in want:
                check(bth.get(k) == want[k], f"{tag}: bth.{k}={bth.get(k)} want {want[k]}")
        for k in ("payload_bytes", "pad_bytes"):
            if k in want:
                check(d.get(k) == want[k], f"{tag}: {k}={d.get(k)} want {want[k]}")
        for hdr in ("reth", "aeth"):
            for k, v in want.get(hdr, {}).items():
                check(d.get(hdr, {}).get(k) == v, f"{tag}: {hdr}.{k}={d.get(hdr, {}).get(k)} want {v}")
        check(d.get("udp", {}).get("src_port") == 0xC001, f"{tag}: udp src port")
        tos = 0xC2 if name == "cnp" else 0x68
        if v6:
            check(d["ipv6"]["traffic_class"] == tos and d["ipv6"]["flow_label"] == 0x12345 and d["ipv6"]["hop_limit"] == 9,
                  f"{tag}: ipv6 fields {d.get('ipv6')}")
            # scapy leaves the IPv6 ICRC zero: ours must match the independent reference instead.
            f = raw(pkt)
            check(d.get("icrc_computed") == hex(ref_icrc(f, 14, True)), f"{tag}: computed ICRC vs reference")
            check(d.get("icrc") == ("ok" if f[-4:] == struct.pack("<I", ref_icrc(f, 14, True)) else "bad"),
                  f"{tag}: icrc status")
        else:
            check(d["ipv4"]["tos"] == tos and d["ipv4"]["ttl"] == 9 and d["ipv4"]["df"], f"{tag}: ipv4 fields {d.get('ipv4')}")
            check(d.get("icrc") == "ok", f"{tag}: scapy-computed ICRC does not verify with ours: {d.get('icrc')}")

# ------------------------------------------------- 4. sf-decode pcap handling
# Big-endian, nanosecond pcap of our first frame decodes like the original.
be = os.path.join(tmp, "be_nsec.pcap")
with open(be, "wb") as fh:
    fh.write(struct.pack(">IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
    fh.write(struct.pack(">IIII", 7, 123, len(frames[0]), len(frames[0])) + frames[0])
d_be = sf_decode(be)
d_le = sf_decode(ours)
check(len(d_be) == 1 and d_be[0]["ts_ns"] == 7_000_000_123, f"big-endian nsec pcap: {d_be}")
check(d_be[0]["bth"] == d_le[0]["bth"] and d_be[0]["icrc"] == "ok", "big-endian pcap decodes differently")
for label, content in (("pcapng", b"\x0a\x0d\x0d\x0a" + b"\0" * 28), ("garbage", b"hello"),
                       ("truncated", open(ours, "rb").read()[:100])):
    bad = os.path.join(tmp, label + ".pcap")
    with open(bad, "wb") as fh:
        fh.write(content)
    r = subprocess.run([SF_DECODE, bad], capture_output=True, text=True)
    check(r.returncode == 2 and "sf-decode:" in r.stderr, f"sf-decode on {label}: rc={r.returncode} {r.stderr}")
r = subprocess.run([SF_DECODE, "--help"], capture_output=True, text=True)
check(r.returncode == 0 and "usage" in r.stdout, "sf-decode --help")

finish(tmp, "wire", f"{len(manifest)} builder frames vs tshark, {n_v4} IPv4 ICRCs vs scapy, {n_v6} IPv6 ICRCs vs "
       "reference + masking, 14 scapy frames vs sf-decode")
