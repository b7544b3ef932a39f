"""A small scapy layer for softfabric's MRC headers (docs/mrc.md "Wire"), on
top of scapy.contrib.roce's BTH: METH, RETH, ImmDt, SETH + MrcCcState, NETH,
PETH, ERTH, EETH, bound to the BTH by opcode (transport bits = the opcode
base). Written from docs/mrc.md alone, as an independent check of
common/wire/mrc.h: tests/interop/mrc_interop.py builds MRC frames with it
that our parser must accept with the same values, and dissects ours with it.

    from mrc_scapy import bind_mrc, mrc_frame, METH, SETH, ...
    bind_mrc(port=4791, base=0xC0)
"""
import struct
import zlib

from scapy.fields import (BitField, BitEnumField, ByteEnumField, ByteField, IntField, ShortField,
                          SignedShortField, ThreeBytesField, XByteField, XIntField, XLongField)
from scapy.layers.inet import IP, UDP
from scapy.packet import Packet, Raw, bind_layers
from scapy.contrib.roce import BTH, AETH

OPS = {0x06: "WRITE_FIRST", 0x07: "WRITE_MIDDLE", 0x08: "WRITE_LAST", 0x09: "WRITE_LAST_IMM",
       0x0A: "WRITE_ONLY", 0x0B: "WRITE_ONLY_IMM", 0x11: "ACK", 0x18: "ENDPOINT_REQUEST",
       0x19: "ENDPOINT_RESPONSE", 0x1C: "SACK", 0x1D: "NACK", 0x1E: "PROBE"}
DATA_OPS = (0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B)
IMM_OPS = (0x09, 0x0B)
LAST_OPS = (0x08, 0x09, 0x0A, 0x0B)
ENDPOINT_QPN = 2
NACK_REASONS = {0x01: "TRIMMED", 0x02: "TRIMMED_LASTHOP", 0x06: "NO_BITMAP", 0x07: "NO_PKT_BUFFER",
                0x0A: "NO_RESOURCE", 0x0B: "PSN_OOR_WINDOW", 0x19: "UNEXP_EVENT", 0x20: "ACCESS_ERROR",
                0x21: "INVALID_REQUEST", 0x22: "WIMM_OVERFLOW"}


class METH(Packet):
    name = "MRC METH"
    fields_desc = [BitField("rtx", 0, 1), BitField("last", 0, 1), BitField("ts_valid", 0, 1),
                   BitField("resv", 0, 5), ByteField("reserved", 0), ShortField("rqmsn", 0),
                   IntField("msn", 0), IntField("msg_offset", 0), XIntField("ev", 0), IntField("tx_ts", 0)]


class RETH(Packet):
    name = "RETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0), IntField("dma_length", 0)]

    def guess_payload_class(self, payload):
        bth = self.underlayer.underlayer if self.underlayer is not None else None
        if isinstance(bth, BTH) and bth.opcode % 32 in IMM_OPS:
            return ImmDt
        return Raw


class ImmDt(Packet):
    name = "ImmDt"
    fields_desc = [XIntField("imm", 0)]

    def guess_payload_class(self, payload):
        return Raw


class SETH(Packet):
    name = "MRC SETH"
    fields_desc = [BitEnumField("skip", 0, 2, {0: "NONE", 1: "SKIP_ONCE", 2: "ALWAYS_SKIP"}),
                   BitField("probe_response", 0, 1), BitField("ce", 0, 1), BitField("resv", 0, 4),
                   ByteField("reserved", 0), SignedShortField("ack_psn_offset", 0), XIntField("ev", 0),
                   SignedShortField("sack_offset", 1), ShortField("mpr", 0), XLongField("bitmap", 0)]


class MrcCcState(Packet):
    name = "MRC CC state"
    fields_desc = [IntField("ts_echo", 0), IntField("rcvd_bytes", 0), ShortField("ecn_count", 0),
                   ShortField("ooo_count", 0), ByteField("rcv_cwnd_pen", 0),
                   ByteEnumField("cc_type", 0, {0: "NONE", 1: "NSCC"}), ShortField("service_time", 0)]


class NETH(Packet):
    name = "MRC NETH"
    fields_desc = [ByteEnumField("reason", 1, NACK_REASONS), BitField("ce", 0, 1), BitField("rtx", 0, 1),
                   BitField("resv", 0, 6), XByteField("vendor_code", 0), ByteField("reserved", 0),
                   XIntField("ev", 0), ByteField("reserved2", 0), ThreeBytesField("nack_psn", 0),
                   IntField("ts_echo", 0)]


class PETH(Packet):
    name = "MRC PETH"
    fields_desc = [ByteField("flags", 0), ByteField("reserved", 0), ShortField("probe_id", 0),
                   XIntField("ev", 0), IntField("tx_ts", 0), IntField("reserved2", 0)]


class ERTH(Packet):
    name = "MRC ERTH"
    fields_desc = [ByteEnumField("op", 1, {0: "PORT_STATUS", 1: "EV_PROBE"}), ByteField("num_ports", 0),
                   ShortField("request_id", 0), XIntField("ev", 0), XIntField("port_status_mask", 0),
                   IntField("tx_ts", 0)]


class EETH(Packet):
    name = "MRC EETH"
    fields_desc = [ByteEnumField("op", 1, {0: "PORT_STATUS", 1: "EV_PROBE"}),
                   ByteEnumField("status", 0, {0: "OK", 1: "UNSUPPORTED", 2: "REJECTED"}),
                   ShortField("request_id", 0), XIntField("ev", 0), XIntField("port_status_mask", 0),
                   IntField("ts_echo", 0)]


bind_layers(METH, RETH)
bind_layers(SETH, MrcCcState)
_BOUND = set()


def bind_mrc(port=4791, base=0xC0):
    """Binds the MRC layers to the BTH for opcodes base|op, and BTH to UDP `port`."""
    if (port, base) in _BOUND:
        return
    _BOUND.add((port, base))
    if port != 4791:
        bind_layers(UDP, BTH, dport=port)
    for op in DATA_OPS:
        bind_layers(BTH, METH, opcode=base | op)
    bind_layers(BTH, AETH, opcode=base | 0x11)
    bind_layers(BTH, SETH, opcode=base | 0x1C)
    bind_layers(BTH, NETH, opcode=base | 0x1D)
    bind_layers(BTH, PETH, opcode=base | 0x1E)
    bind_layers(BTH, ERTH, opcode=base | 0x18)
    bind_layers(BTH, EETH, opcode=base | 0x19)


def ref_icrc_v6(frame, ip_off):
    """ICRC (endpoint.md 1.7) over the IPv6 header at ip_off with zlib (scapy has no IPv6 ICRC)."""
    hdr = bytearray(frame[ip_off:ip_off + 40 + 8 + 12])
    hdr[0] |= 0x0F
    hdr[1:4] = b"\xff\xff\xff"
    hdr[7] = 0xFF
    hdr[46:48] = b"\xff\xff"
    hdr[52] = 0xFF
    return zlib.crc32(b"\xff" * 8 + bytes(hdr) + frame[ip_off + len(hdr):-4]) & 0xFFFFFFFF


def with_icrc(pkt):
    """Raw bytes of an Ether/IP|IPv6[/IPv6]/UDP/BTH/... packet with a correct ICRC: scapy's BTH
    computes it for IPv4; for IPv6 (and SRv6: the inner header) the zlib reference does."""
    b = bytes(pkt)
    if IP in pkt:
        return b
    ip_off = len(b) - len(bytes(pkt[UDP])) - 40
    return b[:-4] + struct.pack("<I", ref_icrc_v6(b, ip_off))
