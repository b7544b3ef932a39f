"""RoCEv2 frames and pcaps for pktio senders, standard library only (scapy
is far too slow for megabytes of frames; tests check these frames against
scapy's decoder and ICRC).

Every frame of a pktio host has the same length, 74 + ib_mtu bytes:
Ethernet | IPv4 (DSCP, ECT(0) for RoCE) | UDP (sport = the flow's id, dport
4791) | BTH (RDMA WRITE ONLY, the flow's QP, PSN) | RETH | ib_mtu payload |
ICRC. Background flows with DSCP 0 are the same frames, Not-ECT. A uniform
frame length makes "bytes sent = bytes received + dropped frames x length"
exact per host.
"""
import struct
import zlib

ROCE_DPORT = 4791
OP_WRITE_ONLY = 0x0A  # RC RDMA WRITE Only
ECT0 = 0b10
_PCAP_HDR = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
_PATTERN = bytes(range(256)) * 17


def _mac(s):
    return bytes.fromhex(s.replace(":", ""))


def _ip(s):
    return bytes(int(x) for x in s.split("."))


def _ip_checksum(hdr):
    s = sum(struct.unpack("!10H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


class FlowFrames:
    """Frame builder of one flow; frame(k) is its k-th packet."""

    def __init__(self, *, src_mac, dst_mac, src_ip, dst_ip, sport, dscp, qpn, ib_mtu, ect=True, rkey=0x1000):
        self.ib_mtu = ib_mtu
        tos = (dscp << 2) | (ECT0 if ect else 0)
        total = 20 + 8 + 12 + 16 + ib_mtu + 4
        ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, tos, total, 0, 0x4000, 64, 17, 0, _ip(src_ip), _ip(dst_ip)))
        struct.pack_into("!H", ip, 10, _ip_checksum(bytes(ip)))
        self.eth = _mac(dst_mac) + _mac(src_mac) + b"\x08\x00"
        self.ip = bytes(ip)
        self.udp = struct.pack("!HHHH", sport, ROCE_DPORT, total - 20, 0)
        self.qpn = qpn
        self.rkey = rkey
        # ICRC pseudo-header: 8 x 0xFF, IPv4 with TOS, TTL and checksum masked, UDP checksum masked.
        mip = bytearray(ip)
        mip[1] = 0xFF
        mip[8] = 0xFF
        mip[10:12] = b"\xff\xff"
        mudp = self.udp[:6] + b"\xff\xff"
        self._crc_prefix = zlib.crc32(b"\xff" * 8 + bytes(mip) + mudp)
        self.frame_bytes = 14 + total

    def frame(self, k):
        psn = k & 0xFFFFFF
        bth = struct.pack("!BBHI", OP_WRITE_ONLY, 0, 0xFFFF, self.qpn & 0xFFFFFF) + struct.pack("!I", (1 << 31) | psn)
        reth = struct.pack("!QII", 0x7F0000000000 + k * self.ib_mtu, self.rkey, self.ib_mtu)
        off = k & 0xFF
        payload = _PATTERN[off:off + self.ib_mtu]
        # ICRC masks BTH byte 4 (FECN, BECN, reserved) as all ones.
        mbth = bth[:4] + b"\xff" + bth[5:]
        icrc = zlib.crc32(mbth + reth + payload, self._crc_prefix) & 0xFFFFFFFF
        return self.eth + self.ip + self.udp + bth + reth + payload + struct.pack("<I", icrc)


def write_pcap(path, frames_iter):
    """Writes frames (an iterable of bytes) to a classic pcap; returns (count, bytes)."""
    n = total = 0
    rec = struct.Struct("<IIII")
    with open(path, "wb") as f:
        f.write(_PCAP_HDR)
        buf = []
        for fr in frames_iter:
            buf.append(rec.pack(0, n, len(fr), len(fr)))
            buf.append(fr)
            n += 1
            total += len(fr)
            if len(buf) >= 2048:
                f.write(b"".join(buf))
                buf.clear()
        f.write(b"".join(buf))
    return n, total


def interleave(counts):
    """Order of flows in a host's pcap: round robin over flows weighted by
    their frame counts (as a NIC interleaves QPs). counts: [n_i]; yields
    (flow position, k) pairs."""
    left = list(counts)
    ks = [0] * len(counts)
    while any(left):
        for i in range(len(left)):
            if left[i]:
                yield i, ks[i]
                ks[i] += 1
                left[i] -= 1


def cycle_sent(order_counts, n_read):
    """Frames per flow among the first n_read frames of a pcap replayed in a
    loop. order_counts: per-flow frame counts of one pcap pass in interleave()
    order. Returns [frames_i]."""
    total = sum(order_counts)
    if total == 0:
        return [0] * len(order_counts)
    full, rest = divmod(n_read, total)
    out = [c * full for c in order_counts]
    for i, _ in interleave(order_counts):
        if rest == 0:
            break
        out[i] += 1
        rest -= 1
    return out
