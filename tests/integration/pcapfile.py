"""Classic little-endian pcap files for the integration drivers (no scapy
needed): write frames, read frames back, read record timestamps."""
import struct

MAGIC_US = 0xA1B2C3D4
MAGIC_NS = 0xA1B23C4D


def write_pcap(path, frames):
    """Microsecond pcap, Ethernet link type, one record per frame."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", MAGIC_US, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1000 + i, 0, len(fr), len(fr)))
            f.write(fr)


def _records(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24 or struct.unpack("<I", data[:4])[0] not in (MAGIC_US, MAGIC_NS):
        raise ValueError(f"{path}: not a little-endian pcap")
    scale = 1e-9 if struct.unpack("<I", data[:4])[0] == MAGIC_NS else 1e-6
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack("<IIII", data[off:off + 16])
        yield sec + frac * scale, data[off + 16:off + 16 + incl]
        off += 16 + incl


def read_pcap(path):
    """The frames of a pcap, in order."""
    return [fr for _, fr in _records(path)]


def read_pcap_times(path):
    """Record timestamps in seconds (us or ns resolution)."""
    return [t for t, _ in _records(path)]
