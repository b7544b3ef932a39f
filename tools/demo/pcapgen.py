"""RoCEv2-like traffic for the switch demo, written as pcap files with scapy.

Each host replays one pcap in a loop (net_pcap infinite_rx). The pcap holds a
few RC QPs doing RDMA WRITEs toward the receiver: per message one WRITE_FIRST
(BTH + RETH), MIDDLEs and a LAST (BTH only), IB MTU 1024, so frames are
1082-1098 bytes. RoCE frames carry DSCP 26 with ECT(0) (the seed-000 lossless
class, queue 3); every `bg_every`-th frame is background traffic with DSCP 0
and not-ECT (lossy class, queue 0). Each QP has its own UDP source port (the
entropy value) and destination QPN.

Frames must fit one mbuf of sf-pktio (2048 B): DPDK's net_pcap infinite_rx
replays only the first segment of a chained mbuf.
"""
import struct

from scapy.all import Ether, IP, UDP, Raw, wrpcap  # noqa: E402
from scapy.contrib.roce import BTH, opcode

ROCE_DPORT = 4791
DSCP_ROCE = 26
DSCP_BG = 0
ECT0 = 0b10
IB_MTU = 1024
MAX_FRAME = 2048

_PATTERN = bytes(range(256)) * 8  # payload bytes: slices of a counting pattern

OP_WRITE_FIRST = opcode("RC", "RDMA_WRITE_FIRST")[0]
OP_WRITE_MIDDLE = opcode("RC", "RDMA_WRITE_MIDDLE")[0]
OP_WRITE_LAST = opcode("RC", "RDMA_WRITE_LAST")[0]
OP_WRITE_ONLY = opcode("RC", "RDMA_WRITE_ONLY")[0]


def reth(vaddr, rkey, length):
    """RDMA Extended Transport Header (16 B): VA, R_Key, DMA length."""
    return struct.pack("!QII", vaddr, rkey, length)


def host_mac(i):
    return f"02:5f:00:00:00:{i:02x}"


def host_ip(i):
    return f"10.0.0.{i}"


def host_frames(host, dst_mac, dst_ip, qps=4, msgs_per_qp=6, pkts_per_msg=4, bg_every=16):
    """Frames of one host (1-based index): `qps` QPs, round-robin one packet
    per QP at a time (as a NIC interleaves QPs), plus background frames."""
    src_mac, src_ip = host_mac(host), host_ip(host)
    per_qp = []
    for q in range(qps):
        sport = 49152 + host * 64 + q  # entropy: one UDP source port per QP
        dqpn = 0x100 * host + q + 1
        psn = 1000 * (q + 1)
        pkts = []
        for m in range(msgs_per_qp):
            vaddr = 0x7F0000000000 + (host << 32) + (q << 24) + m * IB_MTU * pkts_per_msg
            for k in range(pkts_per_msg):
                if pkts_per_msg == 1:
                    op, ext = OP_WRITE_ONLY, reth(vaddr, 0x1000 + q, IB_MTU)
                elif k == 0:
                    op, ext = OP_WRITE_FIRST, reth(vaddr, 0x1000 + q, IB_MTU * pkts_per_msg)
                elif k == pkts_per_msg - 1:
                    op, ext = OP_WRITE_LAST, b""
                else:
                    op, ext = OP_WRITE_MIDDLE, b""
                off = (host * 31 + q * 7 + m + k) & 0xFF
                payload = _PATTERN[off:off + IB_MTU]
                pkt = (Ether(src=src_mac, dst=dst_mac)
                       / IP(src=src_ip, dst=dst_ip, tos=(DSCP_ROCE << 2) | ECT0, ttl=64, id=0)
                       / UDP(sport=sport, dport=ROCE_DPORT)
                       / BTH(opcode=op, dqpn=dqpn, psn=psn & 0xFFFFFF, ackreq=int(k == pkts_per_msg - 1))
                       / Raw(ext + payload))
                pkts.append(pkt)
                psn += 1
        per_qp.append(pkts)
    frames = []
    n = 0
    for i in range(max(len(p) for p in per_qp)):
        for pkts in per_qp:
            if i < len(pkts):
                frames.append(pkts[i])
                n += 1
                if bg_every and n % bg_every == 0:
                    bg = (Ether(src=src_mac, dst=dst_mac)
                          / IP(src=src_ip, dst=dst_ip, tos=(DSCP_BG << 2), ttl=64)
                          / UDP(sport=40000 + n % 8, dport=5201)
                          / Raw(_PATTERN[n & 0xFF:(n & 0xFF) + 1400]))
                    frames.append(bg)
    return frames


def write_host_pcap(path, host, dst_mac, dst_ip, **kw):
    """Writes the host's pcap; returns a short description of its contents."""
    frames = host_frames(host, dst_mac, dst_ip, **kw)
    raw = [bytes(f) for f in frames]
    assert max(len(r) for r in raw) <= MAX_FRAME, "frame longer than one sf-pktio mbuf"
    wrpcap(path, frames)
    roce = sum(1 for f in frames if f.haslayer(BTH))
    return {"path": path, "frames": len(frames), "roce": roce, "background": len(frames) - roce,
            "bytes": sum(len(r) for r in raw), "min_len": min(len(r) for r in raw),
            "max_len": max(len(r) for r in raw), "src_mac": host_mac(host), "src_ip": host_ip(host)}
