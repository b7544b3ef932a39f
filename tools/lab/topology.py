"""Topology JSON for sf-lab: load, validate, resolve (docs/lab.md).

Everything is checked before anything starts; an error names the JSON path:
  links[2].b: unknown node 'h9'
The result is a Topology of plain dataclasses that launch.py turns into
processes. Only the standard library is used.
"""
import difflib
import ipaddress
import json
import os
import re
from dataclasses import dataclass, field

import events  # tools/lab/events.py (same directory, as the other lab modules)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MIN_SPEED_GBPS, MAX_SPEED_GBPS = 1, 800  # sf-switch PORT.speed: whole Gb/s
IB_MTUS = (256, 512, 1024)  # pktio frames must fit one 2 KiB mbuf (net_pcap)
FLOW_SPORT_BASE = 49152     # UDP source port of flow 0 (sf-pktio sink --flow-sport-base)
MAX_FLOWS = 65536 - FLOW_SPORT_BASE  # flow i's UDP source port FLOW_SPORT_BASE + i is a port number
NIC_CCS = ("none", "dcqcn-paper", "dcqcn-nvidia", "swift", "bbr", "hpcc")
MRC_CCS = ("none", "nscc")  # an MRC QP runs nscc or none (docs/cc.md "MRC integration")
WORKLOAD_TYPES = ("incast", "background", "victim", "probe")
PROBE_TESTS = ("write_lat", "read_lat", "send_lat")  # sf-nic's latency tests (docs/nic-app.md)
PROBE_SIZE_BYTES = 64
MAX_HOST_PORTS = 64         # a nic host's "ports" (multi-port defaults: second IPv4 octet 128 + port)


class TopologyError(ValueError):
    def __init__(self, path, msg):
        super().__init__(f"{path}: {msg}" if path else msg)
        self.path = path


@dataclass
class Switch:
    name: str
    config_path: str          # absolute
    config: dict              # parsed
    ports: list               # port names in config order
    shaper_burst_us: float = 2000.0
    index: int = 0
    shard_map: list = None    # shard of each port (config order); None = one shard


@dataclass
class HostPort:
    """One port of a host: its own MAC and IPv4, the switch port it hangs off
    and, on a routed switch (a config with STATIC_ROUTE), that switch port's
    MAC as its gateway."""
    index: int                # 0-based; link end "host:p<index>", workload / nic.json "port" index + 1
    mac: str
    ip: str
    switch: str = ""
    port: str = ""
    speed_gbps: int = 0
    gateway_mac: str = ""     # "" = L2 (frames to the destination's MAC)
    ipv6: str = ""            # nic: an IPv6 address beside the IPv4 one ("" = none; MRC ev_mode srv6 needs it)


@dataclass
class Host:
    name: str
    kind: str                 # "pktio" | "nic"
    mac: str
    ip: str
    index: int
    ib_mtu: int = 1024        # pktio
    rate_gbps: float = 0.0    # pktio sender shaper (0 = link speed)
    nice: int = 10            # pktio senders
    process: str = "nic"      # nic: sf-nic process group
    mtu: int = 4096           # nic
    dscp: int = 26
    pfc_enable: str = "3"
    cnp_dscp: int = 48
    cc: str = "dcqcn-nvidia"
    mrc_cc: str = "none"  # the cc of its MRC flows and probes
    rx_drain_gbps: float = 0.0  # nic: a slow receiver (nic.json rx_drain_rate); 0 = drains at once
    pfc_generate: str = ""      # nic: priorities it pauses its switch port for from that backlog
    pfc_xoff: int = 0           # nic: backlog bytes asserting / releasing the pause (0 = sf-nic's default)
    pfc_xon: int = 0
    trim_dscp: int = -1         # nic: the DSCP a trimming switch marks (nic.json mrc_trim_dscp); -1 = none
    cc_params: dict = None      # nic: sf-nic nic.json "cc_params" of its RC flows and probes (checked by sf-nic)
    switch: str = ""          # filled from links: the switch and port it hangs off (port 0's)
    port: str = ""
    speed_gbps: int = 0
    ports: list = field(default_factory=list)  # HostPort per port (one for a plain host); ports[0] mirrors the above
    multi: bool = False       # declared with "ports" (nic.json "ports" list, link ends "host:p<k>")

    @property
    def gateway_mac(self):
        return self.ports[0].gateway_mac if self.ports else ""


@dataclass
class Link:
    index: int
    a: tuple                  # (node, port or None)
    b: tuple
    speed_gbps: int
    delay_ns: int = None      # propagation delay in virtual time (sf-sim); None = sim.SIM_DELAY_NS
    host_port: int = 0        # the host end's port index (0 for a switch-switch link)


@dataclass
class Flow:
    """One sender -> receiver stream (an incast of N senders makes N flows)."""
    name: str
    workload: str
    type: str
    src: str
    dst: str
    index: int                # flow id: UDP source port FLOW_SPORT_BASE + index
    dscp: int
    size_bytes: int = 0       # 0 = timed
    duration_s: float = 0.0
    rate_gbps: float = 0.0    # 0 = as fast as the link allows
    start_ms: int = 0
    message_bytes: int = 65536  # nic: RDMA WRITE message size
    qps: int = 1
    path: str = ""            # JSON path of the workload (errors)
    port: int = 1             # 1-based port of src and dst the flow runs on (multi-port hosts)
    transport: str = "rc"     # nic: rc, or mrc (sprays over every port of src; docs/mrc.md)
    mrc: dict = None          # nic mrc: sf-nic nic.json "mrc" (MrcQpAttr fields), passed through
    verify: bool = False      # nic: sf-nic --verify (every byte checked where it lands; WRITEs with immediates)
    srv6: tuple = None        # nic mrc ev_mode srv6 without a template: (client's, server's) from the SRV6 tables

    @property
    def sport(self):
        return FLOW_SPORT_BASE + self.index


@dataclass
class Probe:
    """A latency probe: sf-nic's ping-pong test between two nic hosts, run
    alongside the other workloads through the same switches and queues."""
    name: str
    src: str                  # the client (it times the round trips)
    dst: str                  # the server
    test: str                 # write_lat | read_lat | send_lat
    size_bytes: int = PROBE_SIZE_BYTES
    interval_us: int = None   # at most one round trip per interval (0 = back to back; None: probe_interval_us)
    start_ms: int = 0
    duration_s: float = 0.0   # 0 = as long as the other clients of the src's sf-nic process run
    dscp: int = 26            # its QPs' DSCP (default: the src host's, as its flows)
    path: str = ""
    port: int = 1             # 1-based port of src and dst
    transport: str = "rc"     # write_lat only: rc or mrc
    mrc: dict = None
    srv6: tuple = None        # as Flow.srv6


@dataclass
class Topology:
    name: str
    path: str
    description: str
    duration_s: float
    drain_s: float
    ts_period_ms: int
    switches: dict = field(default_factory=dict)
    hosts: dict = field(default_factory=dict)
    links: list = field(default_factory=list)
    flows: list = field(default_factory=list)
    workloads: list = field(default_factory=list)   # the raw objects, for the report
    probes: list = field(default_factory=list)      # Probe, in topology order
    sim: dict = field(default_factory=dict)         # "sim" section: defaults of sf-lab run --sim
    events: list = field(default_factory=list)      # events.Event (failure injection), file order

    def pktio_hosts(self):
        return [h for h in self.hosts.values() if h.kind == "pktio"]

    def nic_hosts(self):
        return [h for h in self.hosts.values() if h.kind == "nic"]

    def senders(self):
        return sorted({f.src for f in self.flows})

    def receivers(self):
        return sorted({f.dst for f in self.flows})

    def flows_from(self, host):
        return [f for f in self.flows if f.src == host]


# ---- value parsers -----------------------------------------------------------------

_UNITS = {"": 1, "B": 1, "KB": 1000, "MB": 1000 ** 2, "GB": 1000 ** 3, "TB": 1000 ** 4,
          "KIB": 1024, "MIB": 1024 ** 2, "GIB": 1024 ** 3, "TIB": 1024 ** 4}


def parse_bytes(v, path):
    if isinstance(v, bool):
        raise TopologyError(path, "want a byte count (integer or \"64KiB\")")
    if isinstance(v, int):
        n = v
    elif isinstance(v, str):
        m = re.fullmatch(r"\s*(\d+)\s*([KMGT]i?B|B)?\s*", v, re.IGNORECASE)
        if not m:
            raise TopologyError(path, f"'{v}' is not a byte count (e.g. 65536, \"64KiB\", \"1MB\")")
        n = int(m.group(1)) * _UNITS[(m.group(2) or "").upper()]
    else:
        raise TopologyError(path, "want a byte count (integer or \"64KiB\")")
    if n <= 0:
        raise TopologyError(path, f"{n} bytes: must be > 0")
    return n


def _num(obj, key, path, default=None, lo=None, hi=None, integer=False, required=False):
    p = f"{path}.{key}"
    if key not in obj:
        if required:
            raise TopologyError(path, f"missing required field '{key}'")
        return default
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TopologyError(p, f"want a number, got {json.dumps(v)}")
    if integer and (not isinstance(v, int) and not float(v).is_integer()):
        raise TopologyError(p, f"want a whole number, got {v}")
    if lo is not None and v < lo or hi is not None and v > hi:
        raise TopologyError(p, f"{v} is out of range [{lo}, {hi}]")
    return int(v) if integer else float(v)


def _str(obj, key, path, default=None, required=False, choices=None):
    p = f"{path}.{key}"
    if key not in obj:
        if required:
            raise TopologyError(path, f"missing required field '{key}'")
        return default
    v = obj[key]
    if not isinstance(v, str) or not v:
        raise TopologyError(p, f"want a non-empty string, got {json.dumps(v)}")
    if choices and v not in choices:
        raise TopologyError(p, f"'{v}' is not one of {', '.join(choices)}")
    return v


def _keys(obj, path, allowed):
    if not isinstance(obj, dict):
        raise TopologyError(path, f"want an object, got {json.dumps(obj)[:40]}")
    for k in obj:
        if k not in allowed:
            near = difflib.get_close_matches(k, sorted(allowed), n=1, cutoff=0.6)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise TopologyError(path, f"unknown key '{k}'{hint}; known: {', '.join(sorted(allowed))}")


def _mac(v, path):
    if not isinstance(v, str) or not re.fullmatch(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}", v):
        raise TopologyError(path, f"{json.dumps(v)} is not a MAC address (aa:bb:cc:dd:ee:ff)")
    if int(v[:2], 16) & 1:
        raise TopologyError(path, f"{v} is a multicast MAC; a host needs a unicast one")
    return v.lower()


def _ip(v, path):
    parts = v.split(".") if isinstance(v, str) else []
    if len(parts) != 4 or not all(p.isdigit() and 0 <= int(p) <= 255 for p in parts):
        raise TopologyError(path, f"{json.dumps(v)} is not an IPv4 address")
    return v


def _ip6(v, path):
    try:
        a = ipaddress.IPv6Address(v) if isinstance(v, str) else None
    except ValueError:
        a = None
    if a is None or a.is_unspecified or a.is_multicast or a.is_loopback:
        raise TopologyError(path, f"{json.dumps(v)} is not a unicast IPv6 address")
    return str(a)


def _no_dup_object_pairs(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise ValueError(f"duplicate key '{k}'")
        seen[k] = v
    return seen


def _read_json(path, what):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise TopologyError(what, f"cannot read {path}: {e.strerror}") from e
    try:
        return json.loads(text, object_pairs_hook=_no_dup_object_pairs)
    except json.JSONDecodeError as e:
        where = f"{path}: " if what else ""
        raise TopologyError(what, f"{where}line {e.lineno}, column {e.colno}: {e.msg}") from e
    except ValueError as e:
        raise TopologyError(what, f"{path}: {e}" if what else str(e)) from e


def resolve_file(rel, topo_dir, path):
    """A file named relative to the topology's directory or to the repository."""
    if os.path.isabs(rel):
        cands = [rel]
    else:
        cands = [os.path.join(topo_dir, rel), os.path.join(ROOT, rel)]
    for c in cands:
        if os.path.isfile(c):
            return os.path.abspath(c)
    raise TopologyError(path, f"no such file '{rel}' (looked in {', '.join(os.path.dirname(c) or '.' for c in cands)})")


def mem_available_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 1 << 30


# ---- the loader -----------------------------------------------------------------------

TOP_KEYS = {"name", "description", "duration_s", "drain_s", "ts_period_ms", "nodes", "links", "workloads", "sim",
            "events"}
SIM_KEYS = {"seed", "speed_gbps", "ts_period_us", "run_limit_s"}
SWITCH_KEYS = {"kind", "config", "shaper_burst_us", "shards", "shard_map"}
MAX_SHARDS = 8  # sf-switch --shards (switch/pipeline/shard_ring.h kMaxShards)
PKTIO_KEYS = {"kind", "mac", "ip", "ib_mtu", "rate_gbps", "nice"}
NIC_KEYS = {"kind", "process", "mac", "ip", "ipv6", "port_ipv6s", "mtu", "dscp", "pfc_enable", "cnp_dscp", "cc", "mrc_cc", "rx_drain_gbps",
            "pfc_generate", "pfc_xoff", "pfc_xon", "ports", "port_macs", "port_ips", "trim_dscp", "cc_params"}
LINK_KEYS = {"a", "b", "speed_gbps", "delay_ns"}
MAX_DELAY_NS = 1_000_000_000
WL_KEYS = {
    "incast": {"name", "type", "senders", "receiver", "size_bytes", "start_ms", "dscp", "rate_gbps",
               "message_bytes", "qps", "port", "transport", "mrc"},
    "background": {"name", "type", "src", "dst", "size_bytes", "duration_s", "rate_gbps", "start_ms", "dscp",
                   "message_bytes", "qps", "port", "transport", "mrc", "verify"},
}
WL_KEYS["victim"] = WL_KEYS["background"]
WL_KEYS["probe"] = {"name", "type", "src", "dst", "test", "size_bytes", "interval_us", "start_ms", "duration_s", "dscp",
                    "port", "transport", "mrc"}
TRANSPORTS = ("rc", "mrc")


def _transport(obj, p, kinds, test="write_bw", rate=0.0):
    """A nic workload's "transport" and "mrc" (sf-nic nic.json keys, checked there
    again by sf-nic with the JSON path of its nic.json)."""
    tr = _str(obj, "transport", p, default="rc", choices=TRANSPORTS)
    mrc = obj.get("mrc")
    if mrc is not None and tr != "mrc":
        raise TopologyError(f"{p}.mrc", "needs \"transport\": \"mrc\"")
    if mrc is not None and not isinstance(mrc, dict):
        raise TopologyError(f"{p}.mrc", "want an object (sf-nic nic.json \"mrc\": MrcQpAttr fields, docs/nic-app.md)")
    if tr == "mrc":
        if any(k != "nic" for k in kinds):
            raise TopologyError(f"{p}.transport", "mrc runs between nic hosts (sf-nic)")
        if test not in ("write_bw", "write_lat"):
            raise TopologyError(f"{p}.transport", f"mrc carries RDMA WRITE only: not {test}")
    return tr, mrc


def load(path, *, duration_override=None, memory_bytes=None):
    """Reads and validates a topology file. Raises TopologyError."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise TopologyError("", f"no such topology file '{path}'")
    raw = _read_json(path, "")
    topo_dir = os.path.dirname(path)
    _keys(raw, "topology", TOP_KEYS)
    for k in ("nodes", "links", "workloads"):
        if k not in raw:
            raise TopologyError("topology", f"missing required field '{k}'")
    t = Topology(
        name=_str(raw, "name", "topology", default=os.path.splitext(os.path.basename(path))[0]),
        path=path,
        description=raw.get("description", "") if isinstance(raw.get("description", ""), str) else "",
        duration_s=_num(raw, "duration_s", "topology", default=10.0, lo=0.1, hi=3600),
        drain_s=_num(raw, "drain_s", "topology", default=3.0, lo=0.1, hi=60),
        ts_period_ms=_num(raw, "ts_period_ms", "topology", default=100, lo=10, hi=1000, integer=True),
    )
    sim = raw.get("sim", {})
    if not isinstance(sim, dict):
        raise TopologyError("topology.sim", "want an object")
    _keys(sim, "topology.sim", SIM_KEYS)
    t.sim = {"seed": _num(sim, "seed", "topology.sim", default=1, lo=0, hi=2**63 - 1, integer=True),
             "speed_gbps": _num(sim, "speed_gbps", "topology.sim", default=0, lo=0, hi=MAX_SPEED_GBPS, integer=True),
             "ts_period_us": _num(sim, "ts_period_us", "topology.sim", default=0, lo=0, hi=1_000_000, integer=True),
             "run_limit_s": _num(sim, "run_limit_s", "topology.sim", default=0.0, lo=0, hi=3600)}
    if duration_override is not None:
        if duration_override <= 0:
            raise TopologyError("--duration", f"{duration_override} s: must be > 0")
        t.duration_s = float(duration_override)
    _load_nodes(t, raw["nodes"], topo_dir)
    _load_links(t, raw["links"])
    _load_workloads(t, raw["workloads"])
    try:
        t.events = events.load(t, raw.get("events", []))  # tools/lab/events.py
    except events.EventError as e:
        raise TopologyError(e.path, str(e)[len(e.path) + 2:]) from None
    _check_reachability(t)
    _srv6_templates(t)
    _check_memory(t, memory_bytes if memory_bytes is not None else mem_available_bytes())
    return t


def _shard_map(obj, path, ports):
    """A switch node's "shards" (N: contiguous blocks of ports in config order,
    as sf-switch --shards) or "shard_map" ({port: shard}, naming every port) as
    the shard of each port; None for one shard."""
    if "shards" in obj and "shard_map" in obj:
        raise TopologyError(path, "give 'shards' or 'shard_map', not both")
    top = min(len(ports), MAX_SHARDS)
    if "shards" in obj:
        n = _num(obj, "shards", path, integer=True)
        if n < 1 or n > top:
            raise TopologyError(f"{path}.shards", f"{n} is out of range [1, {top}] (at least one port per shard, "
                                                  f"at most {MAX_SHARDS} shards)")
        n = int(n)
        return None if n == 1 else [p * n // len(ports) for p in range(len(ports))]
    if "shard_map" not in obj:
        return None
    m = obj["shard_map"]
    mp = f"{path}.shard_map"
    if not isinstance(m, dict):
        raise TopologyError(mp, "want an object {port: shard}")
    for port, v in m.items():
        if port not in ports:
            near = difflib.get_close_matches(port, ports, n=1, cutoff=0.6)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise TopologyError(f"{mp}.{port}", f"the switch config has no port '{port}'{hint}")
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < top:
            raise TopologyError(f"{mp}.{port}", f"want a shard number 0..{top - 1}, got {json.dumps(v)}")
    missing = [p for p in ports if p not in m]
    if missing:
        raise TopologyError(mp, f"port '{missing[0]}' has no shard (the map names every port of the config)")
    shards = [m[p] for p in ports]
    for s in range(max(shards) + 1):
        if s not in shards:
            raise TopologyError(mp, f"shard {s} owns no port (shards are numbered 0..N-1, each with a port)")
    return None if max(shards) == 0 else shards


def _load_nodes(t, nodes, topo_dir):
    if not isinstance(nodes, dict) or not nodes:
        raise TopologyError("nodes", "want a non-empty object of named nodes")
    n_sw = n_host = 0
    for name, obj in nodes.items():
        p = f"nodes.{name}"
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,30}", name):
            raise TopologyError(p, "a node name is a letter then letters, digits, '_' or '-' (at most 31)")
        if not isinstance(obj, dict):
            raise TopologyError(p, "want an object")
        kind = _str(obj, "kind", p, required=True, choices=("switch", "pktio", "nic"))
        if kind == "switch":
            _keys(obj, p, SWITCH_KEYS)
            rel = _str(obj, "config", p, required=True)
            cfg_path = resolve_file(rel, topo_dir, f"{p}.config")
            cfg = _read_json(cfg_path, f"{p}.config")
            if not isinstance(cfg, dict) or not isinstance(cfg.get("PORT"), dict) or not cfg["PORT"]:
                raise TopologyError(f"{p}.config", f"{rel}: no PORT table (a switch config needs its ports)")
            t.switches[name] = Switch(name, cfg_path, cfg, list(cfg["PORT"]),
                                      _num(obj, "shaper_burst_us", p, default=2000.0, lo=0, hi=1e6), n_sw)
            t.switches[name].shard_map = _shard_map(obj, p, list(cfg["PORT"]))
            n_sw += 1
            continue
        n_host += 1
        i = n_host
        mac_default = f"02:1a:00:00:{i >> 8:02x}:{i & 0xff:02x}"
        ip_default = f"10.{(i >> 16) & 0xff}.{(i >> 8) & 0xff}.{i & 0xff}"
        if kind == "pktio":
            _keys(obj, p, PKTIO_KEYS)
            ib_mtu = _num(obj, "ib_mtu", p, default=1024, integer=True)
            if ib_mtu not in IB_MTUS:
                raise TopologyError(f"{p}.ib_mtu", f"{ib_mtu}: one of {IB_MTUS} (a frame must fit a 2 KiB mbuf)")
            h = Host(name, kind, _mac(obj.get("mac", mac_default), f"{p}.mac"), _ip(obj.get("ip", ip_default), f"{p}.ip"),
                     i, ib_mtu=ib_mtu, rate_gbps=_num(obj, "rate_gbps", p, default=0.0, lo=0),
                     nice=_num(obj, "nice", p, default=10, lo=0, hi=19, integer=True))
        else:
            _keys(obj, p, NIC_KEYS)
            h = Host(name, kind, _mac(obj.get("mac", mac_default), f"{p}.mac"), _ip(obj.get("ip", ip_default), f"{p}.ip"),
                     i, process=_str(obj, "process", p, default="nic"),
                     mtu=_num(obj, "mtu", p, default=4096, integer=True),
                     dscp=_num(obj, "dscp", p, default=26, lo=0, hi=63, integer=True),
                     pfc_enable=_str(obj, "pfc_enable", p, default="3"),
                     cnp_dscp=_num(obj, "cnp_dscp", p, default=48, lo=0, hi=63, integer=True),
                     cc=_str(obj, "cc", p, default="dcqcn-nvidia", choices=NIC_CCS),
                     mrc_cc=_str(obj, "mrc_cc", p, default="none", choices=MRC_CCS),
                     rx_drain_gbps=_num(obj, "rx_drain_gbps", p, default=0.0, lo=0, hi=MAX_SPEED_GBPS),
                     pfc_generate=_str(obj, "pfc_generate", p, default=""),
                     pfc_xoff=parse_bytes(obj["pfc_xoff"], f"{p}.pfc_xoff") if "pfc_xoff" in obj else 0,
                     pfc_xon=parse_bytes(obj["pfc_xon"], f"{p}.pfc_xon") if "pfc_xon" in obj else 0,
                     trim_dscp=_num(obj, "trim_dscp", p, default=-1, lo=0, hi=63, integer=True)
                     if "trim_dscp" in obj else -1)
            if "cc_params" in obj:
                if not isinstance(obj["cc_params"], dict):
                    raise TopologyError(f"{p}.cc_params", "want an object (sf-nic nic.json \"cc_params\", docs/cc.md)")
                h.cc_params = obj["cc_params"]
            if h.pfc_generate and (not re.fullmatch(r"[0-7](,[0-7])*", h.pfc_generate) or not h.rx_drain_gbps):
                raise TopologyError(f"{p}.pfc_generate", f"'{h.pfc_generate}': priorities like \"3\", with rx_drain_gbps > 0")
            if h.mtu not in (256, 512, 1024, 2048, 4096):
                raise TopologyError(f"{p}.mtu", f"{h.mtu}: an IB MTU is 256, 512, 1024, 2048 or 4096")
            if not re.fullmatch(r"[0-7](,[0-7])*", h.pfc_enable):
                raise TopologyError(f"{p}.pfc_enable", f"'{h.pfc_enable}': priorities like \"3\" or \"3,4\"")
            _host_ports(h, obj, p)
        if not h.ports:
            h.ports = [HostPort(0, h.mac, h.ip)]
        t.hosts[name] = h
    if not t.switches:
        raise TopologyError("nodes", "no switch (kind \"switch\")")
    seen = {}
    for h in t.hosts.values():
        for hp in h.ports:
            for what, v in (("mac", hp.mac), ("ip", hp.ip), ("ipv6", hp.ipv6)):
                if not v:
                    continue
                where = f"nodes.{h.name}.{what}" if not h.multi else f"nodes.{h.name}.port_{what}s[{hp.index}]"
                label = h.name if not h.multi else f"{h.name}:p{hp.index}"
                if (what, v) in seen:
                    raise TopologyError(where, f"{v} is also {seen[(what, v)]}'s")
                seen[(what, v)] = label


def port_mac_default(i, k):
    """MAC of port k (0-based) of the i-th host (1-based) declared with
    "ports" > 1: 02:1b:KK:II:II:II (plain hosts are 02:1a:00:00:II:II)."""
    return f"02:1b:{k:02x}:{(i >> 16) & 0xff:02x}:{(i >> 8) & 0xff:02x}:{i & 0xff:02x}"


def port_ip_default(i, k):
    """IPv4 of port k of the i-th host declared with "ports" > 1:
    10.(128 + k).I.I (plain hosts are 10.0.I.I below 65,536 hosts)."""
    return f"10.{128 + k}.{(i >> 8) & 0xff}.{i & 0xff}"


def _host_ports(h, obj, p):
    """A nic host's "ports": P (default 1) and optional "port_macs" /
    "port_ips" (one per port). A host with P > 1 takes its addresses from
    these or the defaults above, never from "mac" / "ip"."""
    n = _num(obj, "ports", p, default=1, lo=1, hi=MAX_HOST_PORTS, integer=True)
    lists = {}
    if "ipv6" in obj and "port_ipv6s" in obj:
        raise TopologyError(f"{p}.ipv6", "give ipv6 (a one-port host) or port_ipv6s (one per port), not both")
    if n > 1 and "ipv6" in obj:
        raise TopologyError(f"{p}.ipv6", f"a host with \"ports\" gives its addresses per port: use port_ipv6s "
                                         f"(an array of {n})")
    v6 = [_ip6(obj["ipv6"], f"{p}.ipv6")] if "ipv6" in obj else None
    for key, check in (("port_macs", _mac), ("port_ips", _ip), ("port_ipv6s", _ip6)):
        if key not in obj:
            continue
        v = obj[key]
        if not isinstance(v, list) or len(v) != n:
            raise TopologyError(f"{p}.{key}", f"want an array of {n} address(es), one per port (\"ports\": {n})")
        lists[key] = [check(x, f"{p}.{key}[{k}]") for k, x in enumerate(v)]
    if "port_ipv6s" in lists:
        v6 = lists.pop("port_ipv6s")
    if n == 1 and not lists:
        if v6:
            h.ports = [HostPort(0, h.mac, h.ip, ipv6=v6[0])]
        return
    for key in ("mac", "ip"):
        if key in obj:
            raise TopologyError(f"{p}.{key}", f"a host with \"ports\" gives its addresses per port: use port_{key}s "
                                              f"(an array of {n})")
    h.multi = n > 1
    dmac = (lambda k: port_mac_default(h.index, k)) if h.multi else (lambda k: h.mac)
    dip = (lambda k: port_ip_default(h.index, k)) if h.multi else (lambda k: h.ip)
    h.ports = [HostPort(k, lists["port_macs"][k] if "port_macs" in lists else dmac(k),
                        lists["port_ips"][k] if "port_ips" in lists else dip(k), ipv6=v6[k] if v6 else "")
               for k in range(n)]
    h.mac, h.ip = h.ports[0].mac, h.ports[0].ip


def _endpoint(t, v, path):
    if not isinstance(v, str) or not v:
        raise TopologyError(path, "want \"host\" or \"switch:port\"")
    node, _, port = v.partition(":")
    if node not in t.switches and node not in t.hosts:
        raise TopologyError(path, f"unknown node '{node}'")
    if node in t.switches:
        sw = t.switches[node]
        if not port:
            raise TopologyError(path, f"'{node}' is a switch: name its port, e.g. \"{node}:{sw.ports[0]}\"")
        if port not in sw.ports:
            raise TopologyError(path, f"switch {node} has no port '{port}' ({os.path.relpath(sw.config_path, ROOT)} "
                                      f"has {', '.join(sw.ports)})")
        return node, port
    h = t.hosts[node]
    if not port:
        if h.multi:
            raise TopologyError(path, f"'{node}' has {len(h.ports)} ports: name one, \"{node}:p0\" .. "
                                      f"\"{node}:p{len(h.ports) - 1}\"")
        return node, None, 0
    m = re.fullmatch(r"p(0|[1-9][0-9]*)", port)
    if not m or int(m.group(1)) >= len(h.ports):
        if len(h.ports) == 1:
            raise TopologyError(path, f"'{node}' is a host (one port): write \"{node}\", not \"{v}\"")
        raise TopologyError(path, f"host {node} has ports p0 .. p{len(h.ports) - 1}, not '{port}'")
    return node, None, int(m.group(1))


def _load_links(t, links):
    if not isinstance(links, list) or not links:
        raise TopologyError("links", "want a non-empty array of links")
    used = {}
    for i, obj in enumerate(links):
        p = f"links[{i}]"
        _keys(obj, p, LINK_KEYS)
        for k in ("a", "b"):
            if k not in obj:
                raise TopologyError(p, f"missing required field '{k}'")
        a = _endpoint(t, obj["a"], f"{p}.a")
        b = _endpoint(t, obj["b"], f"{p}.b")
        host_port = (a[2] if len(a) == 3 else b[2] if len(b) == 3 else 0)
        a, b = a[:2], b[:2]
        for end, ep in (("a", a), ("b", b)):
            key = ep if ep[1] else (ep[0], host_port)
            if key in used:
                what = f"{ep[0]}:{ep[1]}" if ep[1] else (f"host {ep[0]}" if not t.hosts[ep[0]].multi
                                                         else f"{ep[0]}:p{host_port}")
                raise TopologyError(f"{p}.{end}", f"{what} is used twice (already by {used[key]})")
            used[key] = f"{p}.{end}"
        if a[1] is None and b[1] is None:
            raise TopologyError(p, "a link joins a host and a switch port, or two switch ports")
        if a[0] == b[0]:
            raise TopologyError(p, f"both ends on {a[0]}")
        sp = f"{p}.speed_gbps"
        if "speed_gbps" in obj:
            v = obj["speed_gbps"]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not float(v).is_integer() \
                    or not MIN_SPEED_GBPS <= v <= MAX_SPEED_GBPS:
                raise TopologyError(sp, f"{json.dumps(v)} Gb/s is impossible: a port runs at a whole number of "
                                        f"Gb/s in [{MIN_SPEED_GBPS}, {MAX_SPEED_GBPS}] (sf-switch PORT.speed)")
            speed = int(v)
        else:
            sw, port = (a if a[1] else b)
            cfg_speed = t.switches[sw].config["PORT"][port].get("speed")
            try:
                speed = int(cfg_speed)
            except (TypeError, ValueError):
                raise TopologyError(sp, f"missing, and {sw}:{port} has no usable speed in its config") from None
        delay = _num(obj, "delay_ns", p, default=None, lo=0, hi=MAX_DELAY_NS, integer=True)
        link = Link(i, a, b, speed, delay, host_port)
        t.links.append(link)
        for host_ep, sw_ep in ((a, b), (b, a)):
            if host_ep[1] is None:
                h = t.hosts[host_ep[0]]
                hp = h.ports[host_port]
                hp.switch, hp.port, hp.speed_gbps = sw_ep[0], sw_ep[1], speed
                hp.gateway_mac = _gateway_mac(t, sw_ep, p)
                if host_port == 0:
                    h.switch, h.port, h.speed_gbps = sw_ep[0], sw_ep[1], speed
    for h in t.hosts.values():
        for hp in h.ports:
            if not hp.switch:
                what = "this host" if not h.multi else f"{h.name}:p{hp.index}"
                raise TopologyError(f"nodes.{h.name}", f"not connected: no link names {what}")
        if h.kind == "pktio" and h.rate_gbps > h.speed_gbps:
            raise TopologyError(f"nodes.{h.name}.rate_gbps",
                                f"{h.rate_gbps:g} Gb/s exceeds its link speed {h.speed_gbps} Gb/s")


def is_routed(sw):
    """A switch routes (IPv4 by STATIC_ROUTE) when its config has routes;
    the lab then writes no FDB entries into it and its hosts send to the
    switch port's MAC (their gateway)."""
    return bool(sw.config.get("STATIC_ROUTE"))


def _gateway_mac(t, sw_ep, path):
    sw = t.switches[sw_ep[0]]
    if not is_routed(sw):
        return ""
    mac = sw.config["PORT"][sw_ep[1]].get("mac")
    if not mac:
        raise TopologyError(path, f"{sw_ep[0]} routes (its config has STATIC_ROUTE) but PORT.{sw_ep[1]} has no mac: "
                                  "a host needs its switch port's MAC as gateway")
    return _mac(mac, f"{path} ({sw_ep[0]} PORT.{sw_ep[1]}.mac)")


def _host_ref(t, v, path):
    if not isinstance(v, str) or v not in t.hosts:
        if isinstance(v, str) and v in t.switches:
            raise TopologyError(path, f"'{v}' is a switch; workloads run between hosts")
        raise TopologyError(path, f"unknown node {json.dumps(v)}")
    return v


def _load_workloads(t, wls):
    if not isinstance(wls, list) or not wls:
        raise TopologyError("workloads", "want a non-empty array of workloads")
    names = set()
    for i, obj in enumerate(wls):
        p = f"workloads[{i}]"
        if not isinstance(obj, dict):
            raise TopologyError(p, "want an object")
        typ = _str(obj, "type", p, required=True, choices=WORKLOAD_TYPES)
        _keys(obj, p, WL_KEYS[typ])
        name = _str(obj, "name", p, default=f"{typ}{i}")
        if name in names:
            raise TopologyError(f"{p}.name", f"'{name}' is used twice")
        names.add(name)
        if typ == "probe":
            t.probes.append(_load_probe(t, obj, name, p))
            t.workloads.append(dict(obj, name=name))
            continue
        start_ms = _num(obj, "start_ms", p, default=0, lo=0, hi=3_600_000, integer=True)
        dscp = _num(obj, "dscp", p, default=0 if typ == "background" else 26, lo=0, hi=63, integer=True)
        rate = _num(obj, "rate_gbps", p, default=0.0, lo=0)
        msg = parse_bytes(obj["message_bytes"], f"{p}.message_bytes") if "message_bytes" in obj else 65536
        qps = _num(obj, "qps", p, default=1, lo=1, hi=1024, integer=True)
        port = _num(obj, "port", p, default=1, lo=1, hi=MAX_HOST_PORTS, integer=True)
        if typ == "incast":
            for k in ("senders", "receiver", "size_bytes"):
                if k not in obj:
                    raise TopologyError(p, f"missing required field '{k}'")
            snd = obj["senders"]
            if not isinstance(snd, list) or len(snd) < 1:
                raise TopologyError(f"{p}.senders", "want an array of host names")
            dst = _host_ref(t, obj["receiver"], f"{p}.receiver")
            size = parse_bytes(obj["size_bytes"], f"{p}.size_bytes")
            pairs = []
            for k, s in enumerate(snd):
                src = _host_ref(t, s, f"{p}.senders[{k}]")
                if src == dst:
                    raise TopologyError(f"{p}.senders[{k}]", f"'{src}' is also the receiver")
                if src in [x for x, _ in pairs]:
                    raise TopologyError(f"{p}.senders[{k}]", f"'{src}' is listed twice")
                pairs.append((src, f"{p}.senders[{k}]"))
            dur = 0.0
        else:
            for k in ("src", "dst"):
                if k not in obj:
                    raise TopologyError(p, f"missing required field '{k}'")
            src = _host_ref(t, obj["src"], f"{p}.src")
            dst = _host_ref(t, obj["dst"], f"{p}.dst")
            if src == dst:
                raise TopologyError(f"{p}.dst", f"'{dst}' is also the source")
            if ("size_bytes" in obj) == ("duration_s" in obj):
                raise TopologyError(p, "give exactly one of size_bytes (a sized flow) or duration_s (a timed flow)")
            size = parse_bytes(obj["size_bytes"], f"{p}.size_bytes") if "size_bytes" in obj else 0
            dur = _num(obj, "duration_s", p, default=0.0, lo=0.01, hi=3600)
            pairs = [(src, f"{p}.src")]
        for src, sp in pairs:
            hs, hd = t.hosts[src], t.hosts[dst]
            _check_port(t, port, (src, dst), p)
            if hs.kind != hd.kind:
                raise TopologyError(sp, f"{src} is a {hs.kind} host and {dst} a {hd.kind} host: a flow runs "
                                        "between two hosts of one kind")
            if hs.kind == "nic" and qps > 64:
                raise TopologyError(f"{p}.qps", f"{qps}: sf-nic runs at most 64 QPs per workload")
            if rate > hs.ports[port - 1].speed_gbps:
                raise TopologyError(f"{p}.rate_gbps", f"{rate:g} Gb/s exceeds {src}'s link speed "
                                                      f"{hs.ports[port - 1].speed_gbps} Gb/s")
            if len(t.flows) >= MAX_FLOWS:
                raise TopologyError(p, f"more than {MAX_FLOWS} flows")
            fname = name if len(pairs) == 1 else f"{name}/{src}"
            # An sf-nic flow without its own dscp sends with its host's, as sf-nic does.
            fdscp = dscp if ("dscp" in obj or hs.kind != "nic") else hs.dscp
            tr, mrc = _transport(obj, p, (hs.kind, hd.kind), rate=rate)
            verify = obj.get("verify", False)
            if not isinstance(verify, bool):
                raise TopologyError(f"{p}.verify", f"{json.dumps(verify)}: true or false")
            if verify and hs.kind != "nic":
                raise TopologyError(f"{p}.verify", "sf-nic's --verify: nic flows only")
            t.flows.append(Flow(fname, name, typ, src, dst, len(t.flows), fdscp, size, dur, rate, start_ms,
                                msg, qps, p, port, tr, mrc, verify))
        t.workloads.append(dict(obj, name=name))
    for pr in t.probes:
        proc = t.hosts[pr.src].process
        if not pr.duration_s and not any(t.hosts[f.src].kind == "nic" and t.hosts[f.src].process == proc
                                         for f in t.flows):
            raise TopologyError(pr.path, f"without duration_s a probe runs as long as the other flows sent by its "
                                         f"src's sf-nic process '{proc}', and that process sends none: give "
                                         "duration_s, or a src in a process that sends")
    # pktio: a sender process replays one pcap, so a host only sends or only
    # receives, and all its flows are sized or all timed, starting together.
    for h in t.pktio_hosts():
        out = t.flows_from(h.name)
        if out and h.name in t.receivers():
            f = next(f for f in t.flows if f.dst == h.name)
            raise TopologyError(f.path, f"pktio host {h.name} both sends and receives (a pktio host is a sender "
                                        "or a receiver; use another host)")
        if out and len({f.size_bytes > 0 for f in out}) > 1:
            raise TopologyError(out[-1].path, f"pktio host {h.name} mixes sized and timed flows")
        if out and len({f.start_ms for f in out}) > 1:
            raise TopologyError(out[-1].path, f"pktio host {h.name}: all its flows start together (start_ms differs)")
        if out and len({f.rate_gbps for f in out}) > 1:
            raise TopologyError(out[-1].path, f"pktio host {h.name}: its flows share one shaper (rate_gbps differs)")


MRC_DEFAULT_EVS = 128      # sf-nic's num_evs default (verbs MrcQpAttr)
SRV6_MAX_UPLINKS = 16      # verbs kMrcSrv6MaxUplinks


def _srv6_of(t, sw, path):
    cfg = t.switches[sw].config.get("SRV6")
    if not isinstance(cfg, dict) or "usid" not in cfg or "locator_block" not in cfg:
        raise TopologyError(path, f"mrc ev_mode srv6: switch {sw} has no SRV6 table (locator_block, usid, next): "
                                  "the uSID path cannot be derived")
    return cfg


def srv6_template(t, src, dst, mrc, path):
    """The uSID path template (sf-nic nic.json "mrc.srv6", docs/mrc.md "SRv6
    uSID paths") of an MRC QP on src toward dst, from the switches' SRV6
    tables: per plane p (src's and dst's port p), before = [src's switch],
    uplinks = the switches one hop from both edge switches that list the
    next hop's uSID (the spines, at most 16, lowest uSIDs first), after =
    [dst's switch, dst's port uSID on it]. Both ports on one switch: no
    uplink but that switch itself (before [], uplinks [it], after [port]).
    2-tier paths only (a 3-tier path has no single uplink choice)."""
    g = switch_graph(t)
    hs, hd = t.hosts[src], t.hosts[dst]
    planes = (mrc or {}).get("num_planes") or len(hs.ports)
    evs = (mrc or {}).get("num_evs", MRC_DEFAULT_EVS)
    if not isinstance(planes, int) or not isinstance(evs, int) or planes < 1 or evs < planes:
        raise TopologyError(f"{path}.mrc", "num_planes / num_evs: whole numbers, num_evs >= planes")
    if planes > min(len(hs.ports), len(hd.ports)):
        raise TopologyError(f"{path}.mrc.num_planes", f"{planes} planes: {src} or {dst} has fewer ports")
    cap = min(SRV6_MAX_UPLINKS, evs // planes)
    block, out = None, []
    for k in range(planes):
        ps, pd = hs.ports[k], hd.ports[k]
        for h, hp in ((src, ps), (dst, pd)):
            if not hp.ipv6:
                raise TopologyError(f"nodes.{h}", f"mrc ev_mode srv6 needs an IPv6 address on every port (the inner "
                                                  f"header is IPv6): port {k} has none (ipv6 / port_ipv6s)")
        S, D = _srv6_of(t, ps.switch, path), _srv6_of(t, pd.switch, path)
        for c in (S, D):
            block = block or c["locator_block"]
            if c["locator_block"] != block:
                raise TopologyError(path, f"mrc ev_mode srv6: locator blocks differ ({block}, {c['locator_block']}): "
                                          "one block per QP")
        host_usid = next((u for u, e in D.get("next", {}).items() if e.get("port") == pd.port), None)
        if host_usid is None:
            raise TopologyError(path, f"mrc ev_mode srv6: {pd.switch}'s SRV6.next has no uSID for {dst}'s port "
                                      f"{pd.port}")
        if ps.switch == pd.switch:
            out.append({"uplinks": [S["usid"]], "after": [host_usid]})
            continue
        ups = []
        for _, x, _ in g[ps.switch]:
            X = t.switches[x].config.get("SRV6")
            if not isinstance(X, dict) or X.get("locator_block") != block or X.get("usid") in ups:
                continue
            if X.get("usid") in S.get("next", {}) and D["usid"] in X.get("next", {}):
                ups.append(X["usid"])
        if not ups:
            raise TopologyError(path, f"mrc ev_mode srv6: no switch one hop from both {ps.switch} and {pd.switch} "
                                      "forwards by uSID between them (the derived templates need 2-tier paths; "
                                      "give mrc.srv6 by hand)")
        ups = sorted(ups, key=lambda u: int(u, 16))[:cap]
        out.append({"before": [S["usid"]], "uplinks": ups, "after": [D["usid"], host_usid]})
    return {"block": block, "planes": out}


def _srv6_templates(t):
    """Every MRC flow and probe with ev_mode srv6 and no mrc.srv6 of its own
    gets its two templates (client toward server, server toward client)."""
    for f in list(t.flows) + list(t.probes):
        m = f.mrc or {}
        if f.transport != "mrc" or m.get("ev_mode") != "srv6" or "srv6" in m:
            continue
        f.srv6 = (srv6_template(t, f.src, f.dst, m, f.path), srv6_template(t, f.dst, f.src, m, f.path))


def _check_port(t, port, hosts, p):
    """A workload's "port" (1-based) must exist on both of its hosts; a
    pktio host has one port."""
    for h in hosts:
        n = len(t.hosts[h].ports)
        if port > n:
            raise TopologyError(f"{p}.port", f"{port}: {h} has {n} port(s) (a workload's port is 1-based, "
                                             "on its source and destination)")


def _load_probe(t, obj, name, p):
    for k in ("src", "dst", "test"):
        if k not in obj:
            raise TopologyError(p, f"missing required field '{k}'")
    test = obj["test"]
    if test not in PROBE_TESTS:
        raise TopologyError(f"{p}.test", f"{json.dumps(test)} is not a latency test; a probe times single round "
                                         f"trips: one of {', '.join(PROBE_TESTS)}")
    src = _host_ref(t, obj["src"], f"{p}.src")
    dst = _host_ref(t, obj["dst"], f"{p}.dst")
    if src == dst:
        raise TopologyError(f"{p}.dst", f"'{dst}' is also the source")
    for k, h in (("src", src), ("dst", dst)):
        if t.hosts[h].kind != "nic":
            raise TopologyError(f"{p}.{k}", f"{h} is a {t.hosts[h].kind} host; a probe runs sf-nic's {test} "
                                            "between two nic hosts")
    size = parse_bytes(obj["size_bytes"], f"{p}.size_bytes") if "size_bytes" in obj else PROBE_SIZE_BYTES
    if test == "write_lat" and size < 2:
        raise TopologyError(f"{p}.size_bytes", "write_lat needs at least 2 bytes (the last one is the marker)")
    mtu = min(t.hosts[src].mtu, t.hosts[dst].mtu)
    if size > mtu * 1024:
        raise TopologyError(f"{p}.size_bytes", f"{size} bytes: a latency test takes at most 1024 MTUs ({mtu * 1024} B)")
    interval = _num(obj, "interval_us", p, default=None, lo=0, hi=10_000_000, integer=True)
    port = _num(obj, "port", p, default=1, lo=1, hi=MAX_HOST_PORTS, integer=True)
    _check_port(t, port, (src, dst), p)
    tr, mrc = _transport(obj, p, ("nic", "nic"), test=test)
    return Probe(name, src, dst, test, size, interval,
                 _num(obj, "start_ms", p, default=0, lo=0, hi=3_600_000, integer=True),
                 _num(obj, "duration_s", p, default=0.0, lo=0.01, hi=3600),
                 _num(obj, "dscp", p, default=t.hosts[src].dscp, lo=0, hi=63, integer=True), p, port, tr, mrc)


def probe_interval_us(t, pr):
    """The probe's interval: as given, else 1000 us / the slower link's Gb/s
    (1 ms at 1 Gb/s, 3 us at 400G: 125 KB of link time per round trip), from
    the speeds at the time of asking (sf-lab run --sim --speed-gbps sets them)."""
    if pr.interval_us is not None:
        return pr.interval_us
    return max(1, round(1000 / min(t.hosts[pr.src].ports[pr.port - 1].speed_gbps,
                                   t.hosts[pr.dst].ports[pr.port - 1].speed_gbps)))


def switch_graph(t):
    """{switch: [(port, peer_switch, peer_port)]} over switch-switch links."""
    g = {s: [] for s in t.switches}
    for l in t.links:
        if l.a[1] and l.b[1]:
            g[l.a[0]].append((l.a[1], l.b[0], l.b[1]))
            g[l.b[0]].append((l.b[1], l.a[0], l.a[1]))
    return g


def fdb_routes(t):
    """{switch: {host port mac: port}}: every switch's port toward every
    host port (BFS over the switch-switch links)."""
    g = switch_graph(t)
    routes = {s: {} for s in t.switches}
    for h in t.hosts.values():
        for hp in h.ports:
            routes[hp.switch][hp.mac] = hp.port
            seen = {hp.switch}
            frontier = [hp.switch]
            while frontier:
                nxt = []
                for s in frontier:
                    for port, peer, peer_port in g[s]:
                        if peer not in seen:
                            seen.add(peer)
                            routes[peer][hp.mac] = peer_port
                            nxt.append(peer)
                frontier = nxt
    return routes


def _ip_int(ip):
    a, b, c, d = (int(x) for x in ip.split("."))
    return a << 24 | b << 16 | c << 8 | d


class Router:
    """The IPv4 forwarding of a topology's routed switches, from their
    configs (STATIC_ROUTE longest prefix match, NEIGH, ECMP groups), for the
    reachability check: route(src host port, dst host port) follows every
    ECMP member and says where a packet ends (or why it does not arrive)."""

    def __init__(self, t):
        self.t = t
        self.peer = {}  # (switch, port) -> ("switch", sw, port) | ("host", host, port index)
        for link in t.links:
            for ep, other in ((link.a, link.b), (link.b, link.a)):
                if ep[1]:
                    self.peer[ep] = ("switch", other[0], other[1]) if other[1] else ("host", other[0], link.host_port)
        self.tables = {}
        self.memo = {}

    def _table(self, sw):
        if sw not in self.tables:
            cfg = self.t.switches[sw].config
            neigh = {}
            for key, v in (cfg.get("NEIGH") or {}).items():
                port, _, ip = key.partition("|")
                if isinstance(v, dict):
                    neigh[(port, ip)] = str(v.get("neigh", "")).lower()
            rows = []
            for key, v in (cfg.get("STATIC_ROUTE") or {}).items():
                pfx = key.split("|")[-1]
                net, _, depth = pfx.partition("/")
                if ":" in net or not isinstance(v, dict):
                    continue  # IPv6 routes: not what hosts send
                try:
                    d = int(depth)
                    n = _ip_int(net) & (((1 << d) - 1) << (32 - d))
                except ValueError:
                    continue  # sf-switch refuses the config itself
                hops = list(zip(str(v.get("nexthop", "")).split(","), str(v.get("ifname", "")).split(",")))
                rows.append((d, n, pfx, hops))
            rows.sort(key=lambda r: -r[0])
            self.tables[sw] = (rows, neigh)
        return self.tables[sw]

    def route(self, sw, dst):
        """None when every path from switch sw reaches host port dst (a
        HostPort), else why not (the first failing path)."""
        key = (sw, dst.ip)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = f"a routing loop through {sw}"
        self.memo[key] = why = self._route(sw, dst)
        return why

    def _route(self, sw, dst):
        if not is_routed(self.t.switches[sw]):
            return f"{sw} does not route (no STATIC_ROUTE) and the path needs it to"
        rows, neigh = self._table(sw)
        a = _ip_int(dst.ip)
        row = next((r for r in rows if a >> (32 - r[0]) == r[1] >> (32 - r[0])), None)
        if row is None:
            return f"{sw} has no route to {dst.ip}"
        for hop, ifname in row[3]:
            where = f"{sw} route {row[2]} via {ifname}"
            p = self.peer.get((sw, ifname))
            if p is None:
                return f"{where}: no link on that port"
            mac = neigh.get((ifname, hop))
            if p[0] == "host":
                hp = self.t.hosts[p[1]].ports[p[2]]
                if hp is not dst:
                    return f"{where} reaches {p[1]} ({hp.ip}), not {dst.ip}"
                if mac != hp.mac:
                    return f"{where}: NEIGH {ifname}|{hop} is {mac or 'missing'}, the host port's MAC is {hp.mac}"
                continue
            peer_mac = str(self.t.switches[p[1]].config["PORT"][p[2]].get("mac", "")).lower()
            if not peer_mac or mac != peer_mac:
                return f"{where}: NEIGH {ifname}|{hop} is {mac or 'missing'}, {p[1]}:{p[2]} has MAC {peer_mac or 'none'}"
            why = self.route(p[1], dst)
            if why:
                return why
        return None


def _check_reachability(t):
    routes = fdb_routes(t)
    router = None
    for f in list(t.flows) + list(t.probes):
        sp = t.hosts[f.src].ports[f.port - 1]
        dp = t.hosts[f.dst].ports[f.port - 1]
        if sp.gateway_mac:
            router = router or Router(t)
            why = router.route(sp.switch, dp)
            if why:
                raise TopologyError(f.path, f"{f.dst} cannot be reached from {f.src} (port {f.port}): {why}")
        elif dp.mac not in routes[sp.switch]:
            raise TopologyError(f.path, f"{f.dst} cannot be reached from {f.src}: no switch path")


def pktio_frame_bytes(h):
    """Every frame of a pktio host has this length (without FCS): RoCEv2 RDMA
    WRITE ONLY of ib_mtu payload: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ICRC 4."""
    return 74 + h.ib_mtu


def pktio_flow_frames(f, h):
    """Frames of a sized pktio flow (size rounded up to whole packets)."""
    return -(-f.size_bytes // h.ib_mtu)


def _check_memory(t, mem_bytes):
    """A sized pktio flow is written whole into a pcap; a nic workload's
    buffers are registered memory. Both must fit the machine."""
    budget = mem_bytes // 2
    pcap = 0
    for f in t.flows:
        h = t.hosts[f.src]
        if h.kind == "pktio" and f.size_bytes:
            pcap += pktio_flow_frames(f, h) * (pktio_frame_bytes(h) + 16)
            if pcap > budget:
                raise TopologyError(f"{f.path}.size_bytes",
                                    f"the workload is larger than memory: its pcaps would take {pcap / 2**20:,.0f} MiB, "
                                    f"more than half the {mem_bytes / 2**20:,.0f} MiB available")
    per_proc = {}
    for f in t.flows:
        h = t.hosts[f.src]
        if h.kind == "nic":
            need = min(f.message_bytes, f.size_bytes or f.message_bytes) * f.qps * 2  # client and server buffers
            per_proc[h.process] = per_proc.get(h.process, 0) + need
            if per_proc[h.process] > budget:
                raise TopologyError(f"{f.path}.message_bytes",
                                    f"the workload is larger than memory: sf-nic '{h.process}' would register "
                                    f"{per_proc[h.process] / 2**20:,.0f} MiB, more than half the "
                                    f"{mem_bytes / 2**20:,.0f} MiB available")
