#!/usr/bin/python3
"""NIC interop (docs/wire-formats.md, "NIC interop").

usage: nic_interop.py NIC_INTEROP_HELPER

1. scapy -> our NIC. `helper place` prints a responder's QPNs, ePSNs, rkey, VA
   and posted receives; scapy builds RoCEv2 frames to it (IPv4 with scapy's
   ICRC; IPv6 with an independent zlib ICRC, as scapy has none for IPv6):
   SEND_ONLY, SEND_FIRST/MIDDLE/LAST (with pad), WRITE_ONLY, WRITE_FIRST/
   MIDDLE/LAST with RETH, WRITE_ONLY_WITH_IMM, across a PSN wrap; plus a frame
   with a flipped ICRC byte and truncated frames. The helper replays them and
   reports what was placed: every payload byte must be where the RETH or the
   receive WR said (whole data MR and receive buffer compared), the receive
   completions right, an ACK for every AckReq frame, the 64 KiB guards intact;
   the bad frames dropped under their reason with nothing placed or sent.
2. our NIC -> scapy/tshark. `helper gen` captures every frame two NICs send
   (SEND, WRITE, WRITE_WITH_IMM, READ on IPv4 and IPv6, read responses, ACKs,
   a remote-access NAK, a CNP). Every ICRC verifies with scapy's RoCE layer
   (IPv4) or the independent reference (IPv6); tshark dissects every frame and
   its BTH/RETH/AETH fields equal what the helper's parser read; the request
   PSNs, opcodes and RETHs follow from the posted work requests alone.
Missing tshark or scapy is a FAILURE (./dev setup installs them), not a skip.
"""
import json
import os
import struct
import subprocess
import tempfile

from interop_common import (TSHARK, BTH, Ether, IP, IPv6, UDP, Raw, wrpcap, rdpcap, raw, check, die,
                            args, ref_icrc, scapy_icrc, finish)

[HELPER] = args("nic_interop.py NIC_INTEROP_HELPER", 1)

tmp = tempfile.mkdtemp(prefix="sf-nic-interop-")

# ------------------------------------------------- 1. scapy -> our NIC
helper = subprocess.Popen([HELPER, "place"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
line = helper.stdout.readline()
if not line:
    die(f"helper place printed nothing: {helper.stderr.read()}")
info = json.loads(line)
MTU = info["mtu"]
VA, RKEY, DATA_LEN = info["data"]["va"], info["data"]["rkey"], info["data"]["length"]
RECV_LEN = info["recv_length"]


def pattern(n, seed):
    return bytes((i * 31 + seed * 17 + 5) & 0xFF for i in range(n))


class Responder:
    """Builds frames to one responder QP and tracks what they must do."""

    def __init__(self, fam):
        self.fam = fam
        self.qpn = info[fam]["qpn"]
        self.psn = info[fam]["epsn"]
        self.recvs = [r for r in info["recvs"] if r["qp"] == fam]

    def frame(self, opcode, payload, ackreq, ext=b"", psn=None, pad=0):
        e = Ether(dst=info["mac_b"], src=info["mac_a"])
        if self.fam == "v6":
            l3 = IPv6(src=info["ip6_a"], dst=info["ip6_b"], tc=26 << 2, fl=0x1234, hlim=64)
        else:
            l3 = IP(src=info["ip4_a"], dst=info["ip4_b"], tos=26 << 2, flags="DF")
        p = e / l3 / UDP(sport=0xC123, dport=4791, chksum=0) / \
            BTH(opcode=opcode, dqpn=self.qpn, psn=self.psn if psn is None else psn, ackreq=int(ackreq),
                padcount=pad) / Raw(ext + payload + b"\0" * pad)
        self.last = self.psn if psn is None else psn
        f = raw(p)
        if self.fam == "v6":
            f = f[:-4] + struct.pack("<I", ref_icrc(f, 14, True))
        if psn is None:
            self.psn = (self.psn + 1) & 0xFFFFFF
        return f


def reth(va, length):
    return struct.pack("!QII", va, RKEY, length)


data_img = bytearray(DATA_LEN)
recv_img = bytearray(RECV_LEN)
VA_OFF = {"v4 READ_REQUEST 1100": 0x1000, "v6 READ_REQUEST 1100": 8192 + 0x1000}
frames = []   # (name, bytes, expect): expect = "ok" (ACK if AckReq) or a drop reason
want_wcs = []


def add(name, f, expect="ok", ackreq=False, psn=None):
    frames.append((name, f, expect, ackreq, psn))


for fam in ("v4", "v6"):
    r = Responder(fam)
    recv = iter(r.recvs)
    base = 0 if fam == "v4" else 8192
    # SEND_ONLY into the first receive.
    rv = next(recv)
    pl = pattern(100, 1)
    add(f"{fam} SEND_ONLY 100", r.frame(0x04, pl, True), ackreq=True, psn=r.last)
    recv_img[rv["offset"]:rv["offset"] + 100] = pl
    want_wcs.append({"wr_id": rv["wr_id"], "opcode": 128, "byte_len": 100, "with_imm": False})
    # SEND_FIRST / MIDDLE / LAST (LAST with 3 pad bytes) into the second.
    rv = next(recv)
    pl = pattern(MTU * 2 + 301, 2)
    add(f"{fam} SEND_FIRST", r.frame(0x00, pl[:MTU], False), psn=r.last)
    add(f"{fam} SEND_MIDDLE", r.frame(0x01, pl[MTU:2 * MTU], False), psn=r.last)
    add(f"{fam} SEND_LAST pad 3", r.frame(0x02, pl[2 * MTU:], True, pad=3), ackreq=True, psn=r.last)
    recv_img[rv["offset"]:rv["offset"] + len(pl)] = pl
    want_wcs.append({"wr_id": rv["wr_id"], "opcode": 128, "byte_len": len(pl), "with_imm": False})
    # RDMA_WRITE_ONLY.
    off = base + 0x100
    pl = pattern(200, 3)
    add(f"{fam} WRITE_ONLY 200", r.frame(0x0A, pl, True, reth(VA + off, 200)), ackreq=True, psn=r.last)
    data_img[off:off + 200] = pl
    # RDMA_WRITE_FIRST / MIDDLE / LAST with the RETH in the FIRST.
    off = base + 0x1000
    pl = pattern(2 * MTU + 76, 4)
    add(f"{fam} WRITE_FIRST", r.frame(0x06, pl[:MTU], False, reth(VA + off, len(pl))), psn=r.last)
    add(f"{fam} WRITE_MIDDLE", r.frame(0x07, pl[MTU:2 * MTU], False), psn=r.last)
    add(f"{fam} WRITE_LAST", r.frame(0x08, pl[2 * MTU:], True), ackreq=True, psn=r.last)
    data_img[off:off + len(pl)] = pl
    # RDMA_WRITE_ONLY_WITH_IMMEDIATE: data placed, the third receive consumed (no data in it).
    rv = next(recv)
    off = base + 0x1800
    pl = pattern(64, 5)
    imm = 0xDEAD0000 | (0x4 if fam == "v4" else 0x6)
    add(f"{fam} WRITE_ONLY_IMM 64", r.frame(0x0B, pl, True, reth(VA + off, 64) + struct.pack("!I", imm)),
        ackreq=True, psn=r.last)
    data_img[off:off + 64] = pl
    want_wcs.append({"wr_id": rv["wr_id"], "opcode": 129, "byte_len": 64, "with_imm": True, "imm": imm})
    # Bad frames at the next PSN: flipped ICRC byte, truncated inside the
    # payload, truncated inside the BTH. None may be placed or answered, nor
    # advance the ePSN: the same WRITE, valid, is accepted afterwards.
    off = base + 0x1C00
    pl = pattern(128, 6)
    good = r.frame(0x0A, pl, True, reth(VA + off, 128), psn=r.psn)
    bad = bytearray(good)
    bad[-2] ^= 0x40
    add(f"{fam} WRITE flipped ICRC byte", bytes(bad), expect="bad_icrc", psn=r.last)
    add(f"{fam} WRITE truncated in payload", good[:len(good) - 40], expect="malformed", psn=r.last)
    add(f"{fam} WRITE truncated in BTH", good[:(14 + 20 + 8 + 6) if fam == "v4" else (14 + 40 + 8 + 6)],
        expect="malformed", psn=r.last)
    add(f"{fam} WRITE valid after the bad ones", r.frame(0x0A, pl, True, reth(VA + off, 128)), ackreq=True,
        psn=r.last)
    data_img[off:off + 128] = pl
    # RDMA_READ_REQUEST of 1100 bytes written above (WRITE_FIRST/MIDDLE/LAST):
    # three responses with the READ's PSNs and exactly those bytes.
    off = base + 0x1000
    rd_psn = r.psn
    add(f"{fam} READ_REQUEST 1100", r.frame(0x0C, b"", True, reth(VA + off, 2 * MTU + 76)), expect="read",
        ackreq=True, psn=rd_psn)
    r.psn = (rd_psn + 3) & 0xFFFFFF  # a READ takes one PSN per response packet
    # A frame to a QPN the host does not have: counted unknown_qp.
    q = Responder(fam)
    q.qpn = 0x7777
    add(f"{fam} SEND_ONLY to unknown QPN", q.frame(0x04, pattern(16, 7), True), expect="unknown_qp")
    r_final = r.psn
    info[fam]["final_epsn"] = r_final

pcap = os.path.join(tmp, "scapy_to_nic.pcap")
wrpcap(pcap, [Ether(f) for _, f, _, _, _ in frames])
# scapy's own ICRC (IPv4) must be what our builder computes: cross-check one.
out, err = helper.communicate(pcap + "\n", timeout=120)
if helper.returncode != 0:
    die(f"helper place exited {helper.returncode}: {err}")
res = json.loads(out.splitlines()[-1])
check(len(res["frames"]) == len(frames), f"helper replayed {len(res['frames'])} frames, sent {len(frames)}")
ACK_TYPE = 0
for (name, f, expect, ackreq, psn), got in zip(frames, res["frames"]):
    if expect == "read":
        check(got["drops"] == {} and not got["changed"], f"{name}: drops {got['drops']} / memory changed")
        rr = got["sent"]
        check([s.get("opcode") for s in rr] == [0x0D, 0x0E, 0x0F], f"{name}: responses {rr}")
        check([s.get("psn") for s in rr] == [(psn + k) & 0xFFFFFF for k in range(3)], f"{name}: response PSNs")
        body = bytes.fromhex("".join(s.get("payload", "") for s in rr))
        off = VA_OFF[name]
        check(body == bytes(data_img[off:off + len(body)]) and len(body) == 2 * MTU + 76,
              f"{name}: read response bytes differ from the MR")
        check(all(s.get("icrc") == "ok" for s in rr), f"{name}: read response ICRC")
    elif expect == "ok":
        check(got["drops"] == {}, f"{name}: dropped {got['drops']}")
        if ackreq:
            acks = [s for s in got["sent"] if s.get("opcode") == 0x11]
            check(len(acks) == 1 and acks[0]["psn"] == psn and (acks[0]["aeth"]["syndrome"] >> 5) == ACK_TYPE,
                  f"{name}: want one ACK for PSN {psn:#x}, sent {got['sent']}")
            check(all(s.get("icrc") == "ok" for s in got["sent"]), f"{name}: our ACK's ICRC")
        else:
            check(got["sent"] == [], f"{name}: no AckReq, yet sent {got['sent']}")
    else:
        check(got["drops"] == {expect: 1}, f"{name}: drops {got['drops']}, want {{{expect}: 1}}")
        check(not got["changed"], f"{name}: memory changed by a dropped frame")
        check(got["sent"] == [], f"{name}: a dropped frame was answered: {got['sent']}")
data = bytes.fromhex(res["data"])
recvb = bytes.fromhex(res["recv"])
for i in range(0, DATA_LEN, 64):
    if data[i:i + 64] != data_img[i:i + 64]:
        check(False, f"data MR bytes [{i:#x}, +64) differ: got {data[i:i+64].hex()} want {data_img[i:i+64].hex()}")
        break
else:
    check(True, "data MR")
check(recvb == bytes(recv_img), "receive buffer bytes differ from the SEND payloads at their receive WRs")
check(res["guards_ok"], "a 64 KiB guard byte around the data MR changed")
got_wcs = sorted(res["recv_wcs"], key=lambda w: w["wr_id"])
check(len(got_wcs) == len(want_wcs), f"{len(got_wcs)} receive completions, want {len(want_wcs)}: {got_wcs}")
for g, w in zip(got_wcs, sorted(want_wcs, key=lambda w: w["wr_id"])):
    for k, v in w.items():
        check(g.get(k) == v, f"receive completion {w['wr_id']}: {k}={g.get(k)} want {v}")
    check(g["status"] == 0, f"receive completion {w['wr_id']}: status {g['status']}")
for fam in ("v4", "v6"):
    check(res[f"{fam}_state"] == 3, f"{fam} responder QP state {res[f'{fam}_state']}, want RTS (3)")
    check(res[f"{fam}_epsn"] == info[fam]["final_epsn"], f"{fam} ePSN {res[f'{fam}_epsn']:#x} want "
          f"{info[fam]['final_epsn']:#x}")
n_scapy = len(frames)

# ------------------------------------------------- 2. our NIC -> scapy and tshark
ours = os.path.join(tmp, "nic_frames.pcap")
g = subprocess.run([HELPER, "gen", ours], capture_output=True, text=True, timeout=120)
if g.returncode != 0:
    die(f"helper gen failed ({g.returncode}): {g.stderr}")
lines = [json.loads(x) for x in g.stdout.splitlines()]
setup, manifest, done = lines[0], [x for x in lines if "index" in x], lines[-1]
check(done.get("done") is True, "helper gen did not finish")
pcap_frames = [bytes(p) for p in rdpcap(ours)]
check(len(pcap_frames) == len(manifest) and len(manifest) > 10,
      f"{len(pcap_frames)} frames in the pcap, {len(manifest)} in the manifest")

# 2a. ICRC: scapy for IPv4, the reference for IPv6.
n_v4 = n_v6 = 0
for m, f in zip(manifest, pcap_frames):
    check(m.get("icrc") == "ok", f"frame {m['index']}: our parser says ICRC {m.get('icrc')}")
    if m["l3"] == "ipv4":
        check(scapy_icrc(f) == f[-4:], f"frame {m['index']} (opcode {m['opcode']:#x}): scapy ICRC "
              f"{scapy_icrc(f).hex()} != ours {f[-4:].hex()}")
        n_v4 += 1
    else:
        check(struct.pack("<I", ref_icrc(f, 14, True)) == f[-4:], f"frame {m['index']}: IPv6 reference ICRC")
        n_v6 += 1

# 2b. tshark dissects every frame; fields equal what our parser read.
FIELDS = ["frame.len", "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.bth.a",
          "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen", "infiniband.aeth.syndrome",
          "infiniband.aeth.msn", "_ws.malformed", "_ws.expert.message"]
ts = subprocess.run([TSHARK, "-r", ours, "-d", "udp.port==4791,infiniband", "-T", "fields", "-E", "separator=|",
                     "-E", "occurrence=f"] + sum([["-e", f] for f in FIELDS], []),
                    check=True, capture_output=True, text=True).stdout.splitlines()
check(len(ts) == len(manifest), f"tshark printed {len(ts)} lines for {len(manifest)} frames")


def num(s):
    return int(s, 0) if s else None


for m, line in zip(manifest, ts):
    t = dict(zip(FIELDS, line.split("|")))
    tag = f"frame {m['index']} ({m['dir']} opcode {m['opcode']:#x})"
    check(not t["_ws.malformed"], f"{tag}: tshark says malformed: {t['_ws.expert.message']}")
    check(num(t["frame.len"]) == m["frame_bytes"], f"{tag}: frame.len {t['frame.len']}")
    check(num(t["infiniband.bth.opcode"]) == m["opcode"], f"{tag}: tshark opcode {t['infiniband.bth.opcode']}")
    check(num(t["infiniband.bth.destqp"]) == m["dest_qp"], f"{tag}: tshark destqp {t['infiniband.bth.destqp']}")
    check(num(t["infiniband.bth.psn"]) == m["psn"], f"{tag}: tshark psn {t['infiniband.bth.psn']}")
    if m["opcode"] != 0x81:
        check(num(t["infiniband.bth.a"]) == int(m["ack_req"]), f"{tag}: tshark AckReq {t['infiniband.bth.a']}")
    if "reth" in m:
        check(num(t["infiniband.reth.va"]) == m["reth"]["va"], f"{tag}: reth.va {t['infiniband.reth.va']}")
        check(num(t["infiniband.reth.r_key"]) == m["reth"]["rkey"], f"{tag}: reth.r_key")
        check(num(t["infiniband.reth.dmalen"]) == m["reth"]["dma_length"], f"{tag}: reth.dmalen")
    else:
        check(not t["infiniband.reth.va"], f"{tag}: tshark found a RETH we did not write")
    if "aeth" in m:
        check(num(t["infiniband.aeth.syndrome"]) == m["aeth"]["syndrome"], f"{tag}: aeth.syndrome")
        check(num(t["infiniband.aeth.msn"]) == m["aeth"]["msn"], f"{tag}: aeth.msn")

# 2c. What the frames must be, from the posted work requests alone.
pairs = {p["name"]: p for p in setup["pairs"]}
by_qpn_a2b = {p["b_qpn"]: p["name"] for p in setup["pairs"]}
by_qpn_b2a = {p["a_qpn"]: p["name"] for p in setup["pairs"]}
OPS = {"SEND": (0x00, 0x01, 0x02, 0x04), "WRITE": (0x06, 0x07, 0x08, 0x0A), "WRITE_WITH_IMM": (0x06, 0x07, 0x09, 0x0B)}
for name, p in pairs.items():
    reqs = [m for m in manifest if m["dir"] == "a2b" and by_qpn_a2b.get(m["dest_qp"]) == name]
    # Retransmissions would repeat PSNs; none are expected on this lossless wire.
    want = []
    psn = p["a_sq_psn"]
    read_psns = {}
    for wr in [w for w in setup["wrs"] if w["pair"] == name]:
        if wr["op"] == "READ":
            want.append((0x0C, psn, 0, {"va": wr["remote_va"], "rkey": wr["rkey"], "dma_length": wr["length"]}))
            npk = max(1, -(-wr["length"] // p["mtu"]))
            read_psns[wr["wr_id"]] = (psn, npk, wr["length"])
            psn = (psn + npk) & 0xFFFFFF
            continue
        first, middle, last, only = OPS[wr["op"]]
        n = max(1, -(-wr["length"] // p["mtu"]))
        for k in range(n):
            op = only if n == 1 else first if k == 0 else last if k == n - 1 else middle
            plen = min(p["mtu"], wr["length"] - k * p["mtu"])
            r = {"va": wr["remote_va"], "rkey": wr["rkey"], "dma_length": wr["length"]} \
                if wr["op"] != "SEND" and k == 0 else None
            want.append((op, psn, plen, r))
            psn = (psn + 1) & 0xFFFFFF
    got = [(m["opcode"], m["psn"], m["payload_bytes"], m.get("reth")) for m in reqs]
    check(got == want, f"pair {name}: requests {got}\n  want {want}")
    resp = [m for m in manifest if m["dir"] == "b2a" and by_qpn_b2a.get(m["dest_qp"]) == name]
    for wr_id, (rpsn, npk, length) in read_psns.items():
        rr = [m for m in resp if 0x0D <= m["opcode"] <= 0x10]
        want_ops = [0x10] if npk == 1 else [0x0D] + [0x0E] * (npk - 2) + [0x0F]
        check([m["opcode"] for m in rr] == want_ops, f"pair {name}: read response opcodes {[m['opcode'] for m in rr]}")
        check([m["psn"] for m in rr] == [(rpsn + k) & 0xFFFFFF for k in range(npk)],
              f"pair {name}: read response PSNs {[m['psn'] for m in rr]}")
        check(sum(m["payload_bytes"] for m in rr) == length, f"pair {name}: read response bytes")
        for m in rr:
            check(("aeth" in m) == (m["opcode"] != 0x0E), f"pair {name}: AETH on read response opcode {m['opcode']}")
    acks = [m for m in resp if m["opcode"] == 0x11]
    if name == "nak":
        check(len(acks) == 1 and acks[0]["aeth"]["syndrome"] == 0x62 and acks[0]["psn"] == p["a_sq_psn"],
              f"pair nak: want one remote access error NAK (0x62) for PSN {p['a_sq_psn']:#x}: {acks}")
    else:
        check(acks and all(a["aeth"]["syndrome"] >> 5 == 0 for a in acks), f"pair {name}: ACKs {acks}")
        check(acks[-1]["psn"] == (psn - 1) & 0xFFFFFF, f"pair {name}: last ACK PSN {acks[-1]['psn']:#x} want "
              f"{(psn - 1) & 0xFFFFFF:#x}")
cnps = [m for m in manifest if m["opcode"] == 0x81]
check(len(cnps) == 1 and cnps[0]["dir"] == "b2a" and cnps[0]["dest_qp"] == pairs["v6"]["a_qpn"]
      and cnps[0]["l3"] == "ipv6", f"want one CNP to the IPv6 sender QP after the CE mark: {cnps}")
check(any(m.get("ce_marked_on_wire") for m in manifest), "no frame was CE-marked")
a_wcs = {w["wr_id"]: w for w in done["a_wcs"]}
for wr in setup["wrs"]:
    w = a_wcs.get(wr["wr_id"])
    want_status = 10 if wr["pair"] == "nak" else 0  # IBV_WC_REM_ACCESS_ERR
    check(w is not None and w["status"] == want_status, f"send completion of WR {wr['wr_id']}: {w}")

finish(tmp, "nic", f"{n_scapy} scapy frames placed/dropped by our NIC, {len(manifest)} NIC frames ({n_v4} IPv4 "
       f"ICRCs vs scapy, {n_v6} IPv6 vs reference) dissected by tshark")
