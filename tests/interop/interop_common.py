"""What the interop scripts (wire_interop.py, nic_interop.py) share: the
check/die bookkeeping, tshark and scapy (with scapy.contrib.roce) found or a
FAILURE (./dev setup installs them; never a skip), the two ICRC references
(scapy's RoCE layer for IPv4, an independent zlib one for IPv4 or IPv6) and
the final verdict. Imported by the scripts from their own folder.
"""
import json
import shutil
import sys
import zlib

__all__ = ["FAILURES", "CHECKS", "check", "die", "args", "TSHARK", "tshark_fields", "ref_icrc", "scapy_icrc", "finish",
           # scapy, for the scripts
           "Ether", "IP", "IPv6", "UDP", "Raw", "wrpcap", "rdpcap", "raw", "BTH", "AETH", "cnp"]

FAILURES = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def die(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def args(usage, count):
    """The script's `count` arguments, or die with `usage`."""
    if len(sys.argv) != count + 1:
        die(f"usage: {usage}")
    return sys.argv[1:]


TSHARK = shutil.which("tshark")
if TSHARK is None:
    die("tshark not found in PATH; install it with ./dev setup (apt-get install tshark)")
try:
    import logging
    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy.all import Ether, IP, IPv6, UDP, Raw, wrpcap, rdpcap, raw
    from scapy.contrib.roce import BTH, AETH, cnp
except ImportError as e:
    die(f"/usr/bin/python3 cannot import scapy with scapy.contrib.roce ({e}); install it with ./dev setup")


def tshark_fields(json_text):
    """tshark -T json output -> one dict per packet: every leaf field name ->
    the list of its values, in the order tshark printed them."""
    pkts = []
    for p in json.loads(json_text):
        fields = {}

        def walk(o):
            if isinstance(o, dict):
                for k, v in o.items():
                    if isinstance(v, dict) or (isinstance(v, list) and v and not isinstance(v[0], str)):
                        walk(v)
                    else:
                        fields.setdefault(k, []).extend(v if isinstance(v, list) else [v])
            elif isinstance(o, list):
                for v in o:
                    walk(v)
        walk(p["_source"]["layers"])
        pkts.append(fields)
    return pkts


def ref_icrc(frame, ip_off, v6):
    """Independent ICRC (endpoint.md 1.7) with zlib, for IPv4 or IPv6."""
    ip_len = 40 if v6 else (frame[ip_off] & 0x0F) * 4
    hdr = bytearray(frame[ip_off:ip_off + ip_len + 8 + 12])
    if v6:
        hdr[0] |= 0x0F
        hdr[1:4] = b"\xff\xff\xff"
        hdr[7] = 0xFF
    else:
        hdr[1] = 0xFF
        hdr[8] = 0xFF
        hdr[10:12] = b"\xff\xff"
    hdr[ip_len + 6:ip_len + 8] = b"\xff\xff"
    hdr[ip_len + 8 + 4] = 0xFF
    return zlib.crc32(b"\xff" * 8 + bytes(hdr) + frame[ip_off + len(hdr):-4]) & 0xFFFFFFFF


def scapy_icrc(frame):
    """ICRC bytes scapy's BTH computes for a frame (IPv4 only)."""
    p = Ether(frame)
    p[BTH].icrc = None
    return raw(p)[-4:]


def finish(tmp, name, summary):
    """Removes `tmp`; exits 1 when a check failed, else prints the summary."""
    shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} {name} interop check(s) failed")
        sys.exit(1)
    print(f"{name} interop OK ({CHECKS[0]} checks): {summary}")
