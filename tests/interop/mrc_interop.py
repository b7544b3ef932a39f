#!/usr/bin/python3
"""MRC wire interop (docs/mrc.md "Wire", docs/wire-formats.md "MRC").

usage: mrc_interop.py MRC_INTEROP_HELPER SF_DECODE MRC_LUA

1. Frames built by our MRC builders (every op over IPv4, IPv6 and SRv6, VLAN,
   a PSN-wrapping SACK, a probe response, trimmed data frames, one frame on
   UDP 4792 with opcode base 0xE0) are dissected by tshark with our Lua
   dissector (tools/wireshark/mrc.lua) on top of Wireshark's RoCE dissector:
   Eth / IP / UDP / BTH fields come from Wireshark's own dissectors, every
   MRC header field from the Lua one, and all must equal what we built; the
   ICRC position and value too. The 4792 / 0xE0 frame needs the Lua
   preferences (-o mrc.udp_port / mrc.opcode_base). A plain RoCE WRITE is
   still dissected by Wireshark alone with the Lua loaded.
2. sf-decode decodes the same frames to the same values; ICRCs verify (IPv4
   ones also equal scapy's computation), trimmed frames are classified.
3. scapy with our MRC layer (mrc_scapy.py, written from docs/mrc.md) dissects
   our frames to the same values.
4. Frames built by scapy with that layer (every op; IPv4 with scapy's ICRC,
   IPv6 and SRv6 with an independent zlib ICRC) are parsed by sf-decode field
   by field with a valid ICRC, and by tshark + the Lua dissector.
Missing tshark or scapy is a FAILURE, not a skip.
"""
import json
import os
import struct
import subprocess
import tempfile

from interop_common import (TSHARK, tshark_fields, Ether, IP, IPv6, UDP, Raw, wrpcap, rdpcap, raw, BTH, AETH,
                            check, die, args, scapy_icrc, finish)
from mrc_scapy import (bind_mrc, with_icrc, ref_icrc_v6, METH, RETH, ImmDt, SETH, MrcCcState, NETH, PETH,
                       ERTH, EETH, DATA_OPS, IMM_OPS, LAST_OPS, ENDPOINT_QPN)

HELPER, SF_DECODE, LUA = args("mrc_interop.py MRC_INTEROP_HELPER SF_DECODE MRC_LUA", 3)
if not os.path.isfile(LUA):
    die(f"Lua dissector {LUA} not found")
bind_mrc(4791, 0xC0)
bind_mrc(4792, 0xE0)

tmp = tempfile.mkdtemp(prefix="sf-mrc-interop-")


def tshark_packets(pcap, *opts):
    r = subprocess.run([TSHARK, "-X", f"lua_script:{LUA}", *opts, "-r", pcap, "-T", "json",
                        "--no-duplicate-keys"], capture_output=True, text=True)
    if r.returncode != 0:
        die(f"tshark with {LUA} failed ({r.returncode}): {r.stderr}")
    if "Lua: Error" in r.stderr or "lua_script" in r.stderr:
        die(f"tshark reported a Lua error: {r.stderr}")
    return tshark_fields(r.stdout)


def sf_decode(pcap, *opts):
    r = subprocess.run([SF_DECODE, *opts, pcap], capture_output=True, text=True)
    if r.returncode != 0:
        die(f"sf-decode {pcap} exited {r.returncode}: {r.stderr}")
    return [json.loads(line) for line in r.stdout.splitlines()]


def num(s):
    if isinstance(s, bool):
        return int(s)
    if isinstance(s, int):
        return s
    return int(s, 0)


# Manifest header -> tshark field prefix.
TS_PREFIX = {"meth": "mrc.meth.", "reth": "mrc.reth.", "aeth": "mrc.aeth.", "seth": "mrc.seth.",
             "cc_state": "mrc.cc.", "neth": "mrc.neth.", "peth": "mrc.peth.", "erth": "mrc.erth.",
             "eeth": "mrc.eeth."}
HEADERS = tuple(TS_PREFIX)

# ------------------------------------------------- our frames
ours = os.path.join(tmp, "ours.pcap")
gen = subprocess.run([HELPER, "gen", ours], capture_output=True, text=True)
if gen.returncode != 0:
    die(f"helper gen failed: {gen.stderr}")
manifest = [json.loads(line) for line in gen.stdout.splitlines()]
frames = [bytes(p) for p in rdpcap(ours)]
check(len(frames) == len(manifest) and len(manifest) >= 40, f"{len(frames)} frames for {len(manifest)} manifest lines")
std = [i for i, m in enumerate(manifest) if m["udp_port"] == 4791]
alt = [i for i, m in enumerate(manifest) if m["udp_port"] != 4791]
check(len(alt) == 1, "one frame on the alternative port")

# ------------------------------------------------- 1. ours -> tshark + Lua
ts = tshark_packets(ours)
ts_alt = tshark_packets(ours, "-o", "mrc.udp_port:4792", "-o", "mrc.opcode_base:224")
check(len(ts) == len(manifest) and len(ts_alt) == len(manifest), "tshark frame count")


def check_tshark(m, t, f, tag):
    n = f"{tag} {m['name']}"

    def eq(field, want, conv=num, idx=-1):
        got = t.get(field)
        check(got is not None and conv(got[idx]) == want, f"{n}: tshark {field}={got} want {want}")

    # Wireshark's own dissectors: Eth / IP / UDP / BTH.
    eq("eth.type", 0x8100 if m["vlan"] else (0x0800 if m["l3"] == "ipv4" else 0x86DD), idx=0)
    if m["l3"] == "ipv4":
        check(t.get("ip.src") == ["10.0.0.1"], f"{n}: ip.src {t.get('ip.src')}")
    else:
        eq("ipv6.nxt", 41 if m["l3"] == "srv6" else 17, idx=0)
    eq("udp.srcport", m["udp_sport"])
    eq("udp.dstport", m["udp_port"])
    eq("infiniband.bth.opcode", m["opcode"])
    eq("infiniband.bth.destqp", m["dest_qp"])
    eq("infiniband.bth.psn", m["psn"])
    eq("infiniband.bth.a", int(m["ack_req"]))
    check("_ws.malformed" not in t, f"{n}: tshark marked it malformed")
    # Our Lua dissector: every MRC header field.
    eq("mrc.op", m["op"])
    eq("mrc.trimmed", int(m["trimmed"]))
    for h in HEADERS:
        for k, v in m.get(h, {}).items():
            eq(TS_PREFIX[h] + k, v)
    if "immdt" in m:
        eq("mrc.immdt", m["immdt"])
    if m["op"] in DATA_OPS and not m["trimmed"]:
        eq("mrc.payload_length", m["payload_bytes"])
        eq("mrc.icrc", struct.unpack("<I", f[-4:])[0])
    elif m["trimmed"]:
        check("mrc.icrc" not in t and "mrc.trimmed.expert" in t, f"{n}: trimmed frame: ICRC shown or no expert note")
    else:
        eq("mrc.icrc", struct.unpack("<I", f[-4:])[0])
    if m["op"] == 0x1C and not m["seth"]["probe_response"]:
        eq("mrc.seth.ack_psn", (m["psn"] + m["seth"]["ack_psn_offset"]) % (1 << 24))
    check(t.get("_ws.col.Protocol", ["MRC"])[-1] == "MRC", f"{n}: protocol column")


for i in std:
    check_tshark(manifest[i], ts[i], frames[i], "default prefs")
for i in alt:
    check("mrc.op" not in ts[i], f"{manifest[i]['name']}: dissected as MRC without the port preference")
    check_tshark(manifest[i], ts_alt[i], frames[i], "port 4792 prefs")
# With those prefs the 4791 frames (base 0xC0) are Wireshark's RoCE alone again.
for i in std:
    check("mrc.op" not in ts_alt[i] and "infiniband.bth.opcode" in ts_alt[i],
          f"{manifest[i]['name']}: with mrc.udp_port 4792 a 4791 frame is still MRC, or lost its BTH")

# ------------------------------------------------- 2. ours -> sf-decode
dec = sf_decode(ours)
alt_pcap = os.path.join(tmp, "alt.pcap")
wrpcap(alt_pcap, [Ether(frames[i]) for i in alt])
dec_alt = sf_decode(alt_pcap, "--mrc-port", "4792", "--mrc-opcode-base", "0xE0")
check(len(dec) == len(manifest), "sf-decode frame count")


def check_decode(m, d, f, tag):
    n = f"{tag} {m['name']}"
    check("error" not in d and d.get("kind") == "mrc", f"{n}: sf-decode kind={d.get('kind')} error={d.get('error')}")
    check(d.get("mrc", {}).get("op") == m["op_name"] and d["mrc"].get("trimmed") == m["trimmed"],
          f"{n}: mrc {d.get('mrc')}")
    bth = d.get("bth", {})
    for k in ("opcode", "dest_qp", "psn", "ack_req"):
        check(bth.get(k) == m[k], f"{n}: bth.{k}={bth.get(k)} want {m[k]}")
    check(d.get("udp", {}).get("dst_port") == m["udp_port"], f"{n}: udp dst")
    for h in HEADERS:
        for k, v in m.get(h, {}).items():
            got = d.get(h, {}).get(k)
            if h == "seth" and k == "skip":
                got = {"none": 0, "skip_once": 1, "always_skip": 2}.get(got)
            check(got is not None and num(got) == v, f"{n}: {h}.{k}={got} want {v}")
    if "immdt" in m:
        check(num(d.get("immdt", "-1")) == m["immdt"], f"{n}: immdt")
    check(d.get("payload_bytes") == m["payload_bytes"], f"{n}: payload_bytes {d.get('payload_bytes')}")
    if m["trimmed"]:
        check(d.get("icrc") == "not_roce", f"{n}: trimmed frame icrc={d.get('icrc')}")
    else:
        check(d.get("icrc") == "ok", f"{n}: icrc={d.get('icrc')}")
        if m["l3"] == "ipv4":
            check(scapy_icrc(f) == f[-4:], f"{n}: scapy ICRC {scapy_icrc(f).hex()} != ours {f[-4:].hex()}")
        else:
            ip_off = (18 if m["vlan"] else 14) + (40 if m["l3"] == "srv6" else 0)
            check(struct.pack("<I", ref_icrc_v6(f, ip_off)) == f[-4:], f"{n}: reference IPv6 ICRC")


for i in std:
    check_decode(manifest[i], dec[i], frames[i], "sf-decode")
for j, i in enumerate(alt):
    check_decode(manifest[i], dec_alt[j], frames[i], "sf-decode --mrc-port 4792")
    check(dec[i].get("error") == "not_roce", f"{manifest[i]['name']}: default sf-decode error {dec[i].get('error')}")

# Invalid MRC options are refused (exit 2), never ignored.
for bad in (["--mrc-opcode-base", "0x20"], ["--mrc-port", "0"], ["--mrc-port", "70000"], ["--mrc-trim-dscp", "64"],
            ["--mrc-port"]):
    r = subprocess.run([SF_DECODE, *bad, ours], capture_output=True, text=True)
    check(r.returncode == 2 and "sf-decode:" in r.stderr, f"sf-decode {bad}: rc={r.returncode} {r.stderr[:80]}")
dec_off = sf_decode(ours, "--no-mrc")
check(all(d.get("error") in ("unknown_opcode", "not_roce") for d in dec_off), "sf-decode --no-mrc still decodes MRC")

# ------------------------------------------------- 3. ours -> scapy
SC_LAYER = {"meth": METH, "reth": RETH, "seth": SETH, "cc_state": MrcCcState, "neth": NETH, "peth": PETH,
            "erth": ERTH, "eeth": EETH, "aeth": AETH}
n_scapy = 0
for m, f in zip(manifest, frames):
    if m["trimmed"]:
        continue  # scapy's BTH takes the last 4 bytes as the ICRC: no use on a trimmed frame
    p = Ether(f)
    n = f"scapy {m['name']}"
    check(BTH in p and p[BTH].opcode == m["opcode"] and p[BTH].psn == m["psn"], f"{n}: BTH")
    for h, cls in SC_LAYER.items():
        if h not in m:
            continue
        if cls not in p:
            check(False, f"{n}: scapy found no {cls.__name__}")
            continue
        for k, v in m[h].items():
            if h == "seth" and k == "sack_base_psn":
                continue
            if h == "aeth" and k == "syndrome":
                got = p[cls].syndrome
            else:
                got = getattr(p[cls], k)
            check(int(got) == int(v), f"{n}: scapy {cls.__name__}.{k}={got} want {v}")
    if "immdt" in m:
        check(ImmDt in p and p[ImmDt].imm == m["immdt"], f"{n}: scapy ImmDt")
    n_scapy += 1

# ------------------------------------------------- 4. scapy frames -> sf-decode and tshark
PAYLOAD = bytes((i * 11 + 5) & 0xFF for i in range(61))


def l3(kind, port=4791):
    u = UDP(sport=0xE001, dport=port, chksum=0)
    if kind == "ipv4":
        return IP(src="10.9.0.1", dst="10.9.0.2", tos=0x68, ttl=9, flags="DF") / u
    inner = IPv6(src="fd00::9:1", dst="fd00::9:2", tc=0x68, fl=0x12345, hlim=9) / u
    if kind == "ipv6":
        return inner
    return IPv6(src="fd00::9:1", dst="fcbb:0:20:10:22::", nh=41, hlim=12) / inner


def scapy_items(kind):
    e = Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
    items = []
    for op in DATA_OPS:
        first = op in (0x06, 0x0A, 0x0B)
        off = 0 if first else 4096
        n = len(PAYLOAD)
        pad = (4 - n % 4) % 4
        dma = off + n + (0 if op in LAST_OPS else 4096)
        meth = METH(rtx=1, last=int(op in LAST_OPS), ts_valid=1, rqmsn=7, msn=0xFEDCBA98, msg_offset=off,
                    ev=0x00ABCDEF, tx_ts=123456789)
        reth = RETH(va=0x7F0000001000 + off, rkey=0x11223344, dma_length=dma)
        pkt = e / l3(kind) / BTH(opcode=0xC0 | op, dqpn=0x777, psn=0xFFFFFF, ackreq=int(op in LAST_OPS),
                                 padcount=pad) / meth / reth
        if op in IMM_OPS:
            pkt = pkt / ImmDt(imm=0xA5A5A5A5)
        pkt = pkt / Raw(PAYLOAD + b"\0" * pad)
        want = {"meth": {"rtx": True, "last": op in LAST_OPS, "msn": 0xFEDCBA98, "msg_offset": off, "ev": "0xabcdef",
                         "tx_ts": 123456789, "rqmsn": 7},
                "reth": {"va": hex(0x7F0000001000 + off), "rkey": 0x11223344, "dma_length": dma},
                "payload_bytes": n, "pad_bytes": pad}
        if op in IMM_OPS:
            want["immdt"] = "0xa5a5a5a5"
        items.append((f"data_{op:#x}", op, pkt, want))
    sack = SETH(skip=2, probe_response=0, ce=1, ack_psn_offset=-2, ev=0x01020304, sack_offset=-8, mpr=512,
                bitmap=0xF0F0F0F0F0F0F0F0) / MrcCcState(ts_echo=99, rcvd_bytes=100000, ecn_count=3, ooo_count=9,
                                                      rcv_cwnd_pen=127, cc_type=1, service_time=640)
    items.append(("sack", 0x1C, e / l3(kind) / BTH(opcode=0xDC, dqpn=0x777, psn=3) / sack,
                  {"seth": {"skip": "always_skip", "ce": True, "ack_psn_offset": -2, "ack_psn": 1, "ev": "0x1020304",
                            "sack_offset": -8, "sack_base_psn": 0xFFFFFB, "mpr": 512, "bitmap": "0xf0f0f0f0f0f0f0f0"},
                   "cc_state": {"ts_echo": 99, "rcvd_bytes": 100000, "ecn_count": 3, "ooo_count": 9,
                                "rcv_cwnd_pen": 127, "cc_type": 1, "service_time": 640}}))
    items.append(("nack", 0x1D, e / l3(kind) / BTH(opcode=0xDD, dqpn=0x777, psn=3) /
                  NETH(reason=0x01, ce=0, rtx=1, vendor_code=0x33, ev=0x0BADBEEF, nack_psn=5, ts_echo=77),
                  {"neth": {"reason": 1, "reason_name": "TRIMMED", "rtx": True, "ce": False, "vendor_code": 0x33,
                            "ev": "0xbadbeef", "nack_psn": 5, "ts_echo": 77}}))
    items.append(("probe", 0x1E, e / l3(kind) / BTH(opcode=0xDE, dqpn=0x777, psn=9) /
                  PETH(probe_id=4321, ev=0x00000042, tx_ts=5),
                  {"peth": {"probe_id": 4321, "ev": "0x42", "tx_ts": 5}}))
    items.append(("ep_request", 0x18, e / l3(kind) / BTH(opcode=0xD8, dqpn=ENDPOINT_QPN, psn=0) /
                  ERTH(op=0, num_ports=8, request_id=11, ev=0x00000107, port_status_mask=0xFE, tx_ts=6),
                  {"erth": {"op": 0, "op_name": "port_status", "num_ports": 8, "request_id": 11, "ev": "0x107",
                            "port_status_mask": "0xfe", "tx_ts": 6}}))
    items.append(("ep_response", 0x19, e / l3(kind) / BTH(opcode=0xD9, dqpn=ENDPOINT_QPN, psn=0) /
                  EETH(op=1, status=1, request_id=12, ev=0x00000108, port_status_mask=0xFF, ts_echo=6),
                  {"eeth": {"op": 1, "status": 1, "status_name": "unsupported", "request_id": 12, "ev": "0x108",
                            "port_status_mask": "0xff", "ts_echo": 6}}))
    items.append(("ack", 0x11, e / l3(kind) / BTH(opcode=0xD1, dqpn=0x777, psn=4) / AETH(syndrome=0x1F, msn=0x10203),
                  {"aeth": {"syndrome": 0x1F, "msn": 0x10203}}))
    return items


n_from_scapy = 0
for kind in ("ipv4", "ipv6", "srv6"):
    items = scapy_items(kind)
    built = [with_icrc(p) for _, _, p, _ in items]
    path = os.path.join(tmp, f"scapy_{kind}.pcap")
    wrpcap(path, [Ether(b) for b in built])
    decoded = sf_decode(path)
    lua = tshark_packets(path)
    check(len(decoded) == len(items) and len(lua) == len(items), f"scapy {kind}: frame counts")
    for (name, op, _, want), b, d, t in zip(items, built, decoded, lua):
        tag = f"scapy {kind} {name}"
        check("error" not in d and d.get("kind") == "mrc", f"{tag}: sf-decode rejected it: {d.get('error')}")
        check(d.get("icrc") == "ok", f"{tag}: icrc {d.get('icrc')}")
        for k in ("payload_bytes", "pad_bytes", "immdt"):
            if k in want:
                check(d.get(k) == want[k], f"{tag}: {k}={d.get(k)} want {want[k]}")
        for h in HEADERS:
            for k, v in want.get(h, {}).items():
                check(d.get(h, {}).get(k) == v, f"{tag}: sf-decode {h}.{k}={d.get(h, {}).get(k)} want {v}")
        got_op = t.get("mrc.op")
        check(got_op is not None and int(got_op[-1], 0) == op, f"{tag}: tshark mrc.op {got_op}")
        check("_ws.malformed" not in t, f"{tag}: tshark malformed")
        if "meth" in want:
            check(int(t.get("mrc.meth.msn", ["-1"])[-1]) == want["meth"]["msn"], f"{tag}: tshark METH msn")
            check(int(t.get("mrc.payload_length", ["-1"])[-1]) == want["payload_bytes"], f"{tag}: tshark payload")
        n_from_scapy += 1
    if kind == "ipv4":  # scapy computed these ICRCs itself
        for b in built:
            check(scapy_icrc(b) == b[-4:], "scapy IPv4 ICRC self-consistency")

# ------------------------------------------------- 5. plain RoCE untouched by the Lua dissector
rc = Ether() / l3("ipv4") / BTH(opcode=0x0A, dqpn=5, psn=6) / Raw(struct.pack("!QII", 0x1000, 0x42, 8) + b"\1" * 8)
rc_pcap = os.path.join(tmp, "rc.pcap")
wrpcap(rc_pcap, [rc])
t = tshark_packets(rc_pcap)[0]
check(t.get("infiniband.reth.va") == ["0x0000000000001000"] and "mrc.op" not in t,
      f"RC WRITE_ONLY with the Lua loaded: reth.va={t.get('infiniband.reth.va')} mrc={t.get('mrc.op')}")

finish(tmp, "mrc", f"{len(manifest)} builder frames vs tshark+Lua and sf-decode, {n_scapy} vs scapy; "
       f"{n_from_scapy} scapy-built frames vs sf-decode and tshark+Lua")
