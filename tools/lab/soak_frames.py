"""Malformed and fuzzer-made frames for the chaos soak's bursts (docs/soak.md):
the wire fuzz corpora (tests/fuzz/wire/corpus) and seeded mutations of them
(truncations, bit flips, random bytes, broken IPv4 headers, bad MAC control
bodies, RoCE frames with random BTH fields and a wrong ICRC aimed at the
soak's NICs, frames over the MTU). A classic pcap writer; only the standard
library is used.
"""
import os
import random
import struct

CORPORA = ("fuzz_frame", "fuzz_mac_control", "fuzz_icrc", "fuzz_srv6", "fuzz_credit_frame")
MAX_FRAME = 9300  # up to here: over the soak ports' MTU (9100 + 14), dropped as oversize


def load_corpus(root):
    """Every corpus frame (bytes) under ROOT/tests/fuzz/wire/corpus, in name order."""
    out = []
    base = os.path.join(root, "tests", "fuzz", "wire", "corpus")
    for c in CORPORA:
        d = os.path.join(base, c)
        if not os.path.isdir(d):
            continue
        for n in sorted(os.listdir(d)):
            with open(os.path.join(d, n), "rb") as f:
                b = f.read()
            if 1 <= len(b):
                out.append(b)
    return out


def _mac(s):
    return bytes.fromhex(s.replace(":", ""))


def _ipv4(src, dst, proto, payload, tos=0, ttl=64, csum_ok=True):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(payload), 0, 0x4000, ttl, proto, 0, bytes(src), bytes(dst))
    s = sum(struct.unpack("!10H", hdr))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    c = (~s) & 0xFFFF
    if not csum_ok:
        c ^= 0x5A5A
    return hdr[:10] + struct.pack("!H", c) + hdr[12:] + payload


def roce_frame(rng, dst_mac, dst_ip):
    """RoCEv2 (UDP 4791) to a NIC with a random BTH (opcode, QPN, PSN) and a
    random ICRC: the NIC must drop it, counted."""
    bth = struct.pack("!BBHII", rng.randrange(256), rng.randrange(256), 0xFFFF, rng.randrange(1 << 24),
                      rng.randrange(1 << 31))
    body = bth + bytes(rng.randrange(256) for _ in range(rng.choice((0, 16, 64, 256))))
    udp = struct.pack("!HHHH", 0xC000 | rng.randrange(1 << 14), 4791, 8 + len(body) + 4, 0) + body + \
        struct.pack("!I", rng.randrange(1 << 32))
    ip = _ipv4([10, 7, 0, rng.randrange(1, 255)], dst_ip, 17, udp, tos=26 << 2 | 2)
    return dst_mac + _mac("02:66:00:00:00:01") + b"\x08\x00" + ip


def mutate(rng, base, nic_targets):
    """One malformed frame from `base` (a corpus frame)."""
    k = rng.randrange(9)
    b = bytearray(base)
    if k == 0:  # truncated anywhere (runts included)
        return bytes(b[:rng.randrange(1, max(2, len(b)))])
    if k == 1:  # bit flips
        for _ in range(rng.randrange(1, 9)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        return bytes(b)
    if k == 2:  # random tail
        cut = rng.randrange(0, len(b))
        return bytes(b[:cut]) + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    if k == 3:  # IPv4 with a bad checksum / version / length
        ip = _ipv4([10, 1, 0, 1], [10, 2, 0, 2], 17, bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300))),
                   tos=rng.choice((0, 26 << 2)), csum_ok=rng.random() < 0.3)
        ip = bytearray(ip)
        if rng.random() < 0.5:
            ip[0] = rng.choice((0x65, 0x44, 0x4F, 0x35))
        else:
            struct.pack_into("!H", ip, 2, rng.randrange(1 << 16))
        return _mac("ff:ff:ff:ff:ff:ff" if rng.random() < 0.3 else "02:77:00:00:00:09") + \
            _mac("02:66:00:00:00:02") + b"\x08\x00" + bytes(ip)
    if k == 4:  # MAC control with a bad body / opcode / destination
        dst = rng.choice(("01:80:c2:00:00:01", "01:80:c2:00:00:02", "02:00:00:00:00:02"))
        body = struct.pack("!HH", rng.choice((0x0101, 0x0001, 0x0202, rng.randrange(1 << 16))), rng.randrange(1 << 16))
        body += bytes(rng.randrange(256) for _ in range(rng.choice((0, 4, 16, 42))))
        return _mac(dst) + _mac("02:66:00:00:00:03") + b"\x88\x08" + body
    if k == 5 and nic_targets:  # RoCE at a NIC, wrong ICRC
        mac, ip = rng.choice(nic_targets)
        return roce_frame(rng, mac, ip)
    if k == 6:  # jumbo, or over the MTU (oversize)
        lo, hi = rng.choice(((1500, 9114), (9115, MAX_FRAME)))
        return bytes(b[:14]) + bytes(rng.randrange(256) for _ in range(rng.randrange(lo, hi + 1) - 14))
    if k == 7:  # VLAN tags stacked / odd EtherTypes
        tag = struct.pack("!HH", rng.choice((0x8100, 0x88A8, 0x9100)), rng.randrange(1 << 16))
        return bytes(b[:12]) + tag * rng.randrange(1, 4) + bytes(b[12:])
    return bytes(b)  # the corpus frame itself


def burst(seed, n, corpus, nic_targets=()):
    """n frames for one burst, from `seed` (at most MAX_FRAME bytes)."""
    rng = random.Random(seed)
    out = []
    cap = MAX_FRAME
    for _ in range(n):
        f = mutate(rng, rng.choice(corpus), list(nic_targets)) if corpus else \
            bytes(rng.randrange(256) for _ in range(60))
        out.append(f[:cap] if f else b"\x00")
    return out


def write_pcap(path, frames):
    """Microsecond pcap, Ethernet link type, one record per frame."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1000 + i, 0, len(fr), len(fr)))
            f.write(fr)


def pfc_storm_frame(prio=3, quanta=0xFFFF, src="02:66:00:00:00:10"):
    """A PFC XOFF naming `prio` (class-enable bit), as a misbehaving host sends them."""
    times = [0] * 8
    times[prio] = quanta
    body = struct.pack("!HH8H", 0x0101, 1 << prio, *times) + bytes(26)
    return _mac("01:80:c2:00:00:01") + _mac(src) + b"\x88\x08" + body
