"""sf-lab gen: a Clos fabric as an sf-lab topology and one sf-switch config per
switch, from a few parameters (docs/lab.md "Generated fabrics").

  2 tiers: leaf-spine (every leaf joined to every spine), 3 tiers: pods of
  leaves and spines joined by cores (a k-ary fat tree with the defaults);
  P planes: P copies of the fabric, every host with P ports, one per plane.

Every switch routes IPv4 (STATIC_ROUTE: a /32 per host port on its leaf, a
subnet per leaf / pod further up, the plane's prefix as an ECMP group over
the uplinks, hashed on the 5-tuple with the UDP source port), knows its
neighbours (NEIGH) and is an SRv6 uN node (SRV6: a 32-bit locator block, its
own 16-bit uSID, the uSIDs of its neighbours and of its hosts' ports), so a
source can pin a path by naming the switches. Buffers and QoS come from a
named profile. plan() validates everything and computes the fabric,
render() makes the files (a dict: name -> text), write() writes them; the
same parameters give byte-identical files. Only the standard library.
"""
import copy
import ipaddress
import json
import os
import random
import re
import shutil
from dataclasses import dataclass, field

import topology as tp

PROFILES = {
    "lossless": "the seed-000 static lossless profile (config/switch/seed000-static-lossless.json): PFC on "
                "priority 3, static lossless pools, ECN on queue 3",
    "mrc-trim": "lossy for MRC (seed 002): no PFC, dynamic pools, a full data queue trims to a 128 B header "
                "(SWITCH_TRIMMING, DSCP 48, strict queue 6), ECN on queue 3 except toward hosts",
}
LOSSLESS_FILE = os.path.join(tp.ROOT, "config", "switch", "seed000-static-lossless.json")
QOS_TABLES = ("BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "DSCP_TO_TC_MAP",
              "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP", "PORT_QOS_MAP", "WRED_PROFILE", "SCHEDULER", "QUEUE")
TRAFFIC = ("pair", "shift", "incast", "permutation")
SRV6_BLOCK = "fcbb:bbbb::/32"
HOST_USID_BASE = 0x8000     # host h's ports: uSID 0x8000 + h; switches: 1 + their index
MAX_PLANES = 16             # plane p's hosts: 10.(16 p).0.0/12
LINK_NET = (172 << 24) | (16 << 16)  # switch-switch link n: 172.16.0.0 + 2n (a end), + 1 (b end)
MTU = 9100
PROFILE_MMU = 32 << 20      # both profiles' buffer; --mmu-size scales their pools
MIN_MMU, MAX_MMU = 2 << 20, 4 << 30


class GenError(ValueError):
    """A bad parameter: the message names the option."""


@dataclass
class Params:
    name: str = "fabric"
    tiers: int = 2
    radix: int = 64
    hosts_per_leaf: int = 0     # 0: as many as the radix and oversubscription allow
    oversub: list = field(default_factory=lambda: [1.0])  # down:up per tier (leaf, spine)
    leaves: int = 0             # 2 tiers: all leaves; 3 tiers: per pod (0: the most the radix allows)
    spines: int = 0             # 2 tiers: all spines; 3 tiers: per pod (0: one per leaf uplink)
    pods: int = 0               # 3 tiers (0: the core radix)
    hosts: int = 0              # total hosts (2 tiers; 0: leaves x hosts_per_leaf)
    planes: int = 1
    speeds: list = field(default_factory=lambda: [100])   # Gb/s: host links, leaf-spine, spine-core
    delays: list = field(default_factory=lambda: [1000])  # ns, the same tiers
    profile: str = "lossless"
    host_kind: str = "nic"
    traffic: str = "pair"
    incast_senders: int = 0     # traffic incast: senders (0: every host off the receiver's leaf, at most 63)
    size_bytes: int = 1 << 20
    qps: int = 1
    cc: str = "dcqcn-nvidia"
    transport: str = "rc"       # nic flows: rc (one flow per plane) or mrc (one flow spraying over every plane)
    ev_mode: str = "udp_sport"  # mrc flows: udp_sport, or srv6 (hosts get IPv6 addresses, the lab derives the paths)
    duration_s: float = 10.0
    seed: int = 1               # traffic permutation: the draw
    mmu_bytes: int = 0          # switch buffer (0: the profile's 32 MiB); pools scale with it


@dataclass
class Sw:
    name: str
    tier: int                   # 0 leaf, 1 spine, 2 core
    plane: int
    index: int                  # global (plane-major, then tier, then number): MACs and uSIDs
    ports: list = field(default_factory=list)   # [(port name, peer)]: peer ("host", h) | ("switch", sw name, port)
    pod: int = 0
    number: int = 0             # within its plane and tier

    def port_name(self):
        return f"Ethernet{4 * len(self.ports)}"

    def mac(self, q):
        return f"02:5f:{self.index >> 8 & 0xff:02x}:{self.index & 0xff:02x}:{q >> 8 & 0xff:02x}:{q & 0xff:02x}"

    @property
    def usid(self):
        return 1 + self.index


@dataclass
class Fabric:
    p: Params
    switches: dict              # name -> Sw, in index order
    hosts: list                 # [{"name", "leaf": [leaf name per plane], "slot", "ips", "macs"}]
    links: list                 # [(a, b, speed, delay)] a/b: "sw:port" | "h" | "h:pK"
    sw_links: list              # [(sw a, port a, ip a, sw b, port b, ip b)] switch-switch, numbered
    H: int = 0
    U: int = 0
    host_bits: int = 0
    leaf_addr: dict = field(default_factory=dict)   # leaf name -> address index within its plane
    pod_bits: int = 0
    speed_of: dict = field(default_factory=dict)    # link end -> Gb/s (render's cache)
    ip_of: dict = field(default_factory=dict)       # (switch, port) -> IP of that end of a switch-switch link


def _ip(n):
    return f"{n >> 24 & 255}.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"


def _ip6(plane, h):
    """Host h's IPv6 address on plane `plane` (--ev-mode srv6): fd00:0:<plane>::<h + 1>
    (hex), beside its IPv4 one. Only the inner header of an SRv6 frame
    carries it; the switches forward by the outer uSID address."""
    return str(ipaddress.IPv6Address(f"fd00:0:{plane:x}::{h + 1:x}"))


def _tiered(values, what, opt, n, lo, hi, integer=True):
    """A per-tier option: one value per tier, the last repeated."""
    if not values or len(values) > n:
        raise GenError(f"{opt}: give 1 to {n} values ({what}), got {len(values or [])}")
    out = list(values) + [values[-1]] * (n - len(values))
    for v in out:
        if integer and int(v) != v or not lo <= v <= hi:
            raise GenError(f"{opt} {v:g}: want {'a whole number ' if integer else ''}in [{lo}, {hi}] ({what})")
    return [int(v) if integer else float(v) for v in out]


def _whole(x):
    return abs(x - round(x)) < 1e-9


def plan(p):
    """Validates p and computes the fabric. Raises GenError (nothing written)."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,63}", p.name or ""):
        raise GenError(f"--name '{p.name}': a letter then letters, digits, '_' or '-'")
    if p.tiers not in (2, 3):
        raise GenError(f"--tiers {p.tiers}: 2 (leaf-spine) or 3 (pods of leaves and spines under cores)")
    if not 2 <= p.radix <= 256:
        raise GenError(f"--radix {p.radix}: want 2..256 ports per switch")
    if not 1 <= p.planes <= MAX_PLANES:
        raise GenError(f"--planes {p.planes}: want 1..{MAX_PLANES} (plane p's hosts are 10.{{16p}}.0.0/12)")
    if p.profile not in PROFILES:
        raise GenError(f"--profile '{p.profile}': one of {', '.join(PROFILES)}")
    if p.host_kind not in ("nic", "pktio"):
        raise GenError(f"--host-kind '{p.host_kind}': nic or pktio")
    if p.host_kind == "pktio" and p.planes > 1:
        raise GenError(f"--planes {p.planes} with --host-kind pktio: a pktio host has one port; multi-plane hosts "
                       "are nic hosts")
    if p.host_kind == "pktio" and p.traffic in ("shift", "permutation"):
        raise GenError(f"--traffic {p.traffic} with --host-kind pktio: every host would send and receive, and a "
                       "pktio host is a sender or a receiver (use pair or incast, or nic hosts)")
    if not 0 <= p.seed < 2 ** 63:
        raise GenError(f"--seed {p.seed}: want 0..2^63-1")
    if p.traffic not in TRAFFIC:
        raise GenError(f"--traffic '{p.traffic}': one of {', '.join(TRAFFIC)}")
    if p.cc not in tp.NIC_CCS:
        raise GenError(f"--cc '{p.cc}': one of {', '.join(tp.NIC_CCS)}")
    if not 1 <= p.qps <= 64:
        raise GenError(f"--qps {p.qps}: 1..64 (sf-nic QPs per workload)")
    if p.transport not in tp.TRANSPORTS:
        raise GenError(f"--transport '{p.transport}': one of {', '.join(tp.TRANSPORTS)}")
    if p.transport == "mrc" and p.host_kind != "nic":
        raise GenError("--transport mrc: MRC runs on nic hosts (sf-nic), not pktio")
    if p.ev_mode not in ("udp_sport", "srv6"):
        raise GenError(f"--ev-mode '{p.ev_mode}': udp_sport or srv6")
    if p.ev_mode == "srv6" and p.transport != "mrc":
        raise GenError("--ev-mode srv6: MRC flows only (--transport mrc)")
    if p.ev_mode == "srv6" and p.tiers != 2:
        raise GenError("--ev-mode srv6 with --tiers 3: an MRC QP's uSID template picks one uplink per EV, and a "
                       "3-tier path needs two (spine and core); 2 tiers only")
    if p.size_bytes <= 0:
        raise GenError(f"--size {p.size_bytes}: must be > 0")
    if not 0.1 <= p.duration_s <= 3600:
        raise GenError(f"--duration {p.duration_s:g}: want 0.1..3600 s")
    if p.mmu_bytes and not MIN_MMU <= p.mmu_bytes <= MAX_MMU:
        raise GenError(f"--mmu-size {p.mmu_bytes}: want {MIN_MMU >> 20} MiB .. {MAX_MMU >> 30} GiB (the profiles' "
                       "pools scale with it; a lossless PG's 256 KiB headroom must fit)")
    speeds = _tiered(p.speeds, "Gb/s of host links, leaf-spine, spine-core", "--speed-gbps", p.tiers,
                     tp.MIN_SPEED_GBPS, tp.MAX_SPEED_GBPS)
    delays = _tiered(p.delays, "ns of host links, leaf-spine, spine-core", "--delay-ns", p.tiers, 0, tp.MAX_DELAY_NS)
    over = _tiered(p.oversub, "down:up bandwidth ratio of leaves, spines", "--oversub", p.tiers - 1, 1, 64,
                   integer=False)
    R = p.radix
    # Leaves: H hosts down, U uplinks; the leaf's down:up ratio is
    # H x host speed : U x uplink speed.
    ratio = speeds[0] / speeds[1] / over[0]  # uplinks per host
    if p.hosts_per_leaf:
        H = p.hosts_per_leaf
        if H >= R:
            raise GenError(f"--hosts-per-leaf {H}: a leaf of radix {R} needs at least one uplink")
    else:
        H = max((h for h in range(1, R) if _whole(h * ratio) and h + round(h * ratio) <= R and h * ratio >= 1),
                default=0)
        if not H:
            raise GenError(f"--radix {R} with --oversub {over[0]:g}: no whole number of hosts and uplinks fits a leaf")
    if not _whole(H * ratio) or round(H * ratio) < 1:
        raise GenError(f"--hosts-per-leaf {H} at {speeds[0]} Gb/s with --oversub {over[0]:g} over {speeds[1]} Gb/s "
                       f"uplinks needs {H * ratio:g} uplinks: want a whole number >= 1")
    U = round(H * ratio)
    if H + U > R:
        raise GenError(f"--hosts-per-leaf {H} + {U} uplinks (--oversub {over[0]:g}) = {H + U} ports exceed "
                       f"--radix {R}")
    S = p.spines or U
    if S > U or U % S:
        raise GenError(f"--spines {S}: a leaf's {U} uplinks are spread evenly over the spines (of its pod): want a "
                       f"divisor of {U}")
    par = U // S  # parallel links leaf-spine
    if p.tiers == 2:
        if p.pods:
            raise GenError("--pods: 3 tiers only (--tiers 3)")
        max_leaves = R // par
        if p.hosts and p.leaves:
            raise GenError("--hosts and --leaves: give one")
        if p.hosts:
            if p.hosts % H:
                raise GenError(f"--hosts {p.hosts}: want a multiple of {H} hosts per leaf")
            L = p.hosts // H
        else:
            L = p.leaves or max_leaves
        if L > max_leaves:
            raise GenError(f"{L} leaves x {par} link(s) each exceed a spine's radix {R}")
        if L < 1:
            raise GenError("--leaves: at least 1")
        pods, Lp, A = 1, L, S
    else:
        if p.hosts:
            raise GenError("--hosts: 2 tiers only; give --pods and --leaves (per pod) for 3 tiers")
        A = S
        ratio2 = speeds[1] / speeds[2] / over[1]
        # A spine of a pod: Lp x par links down, Lp x par x ratio2 up (one per core of its group).
        if p.leaves:
            Lp = p.leaves
        else:
            Lp = max((n for n in range(1, R + 1) if _whole(n * par * ratio2) and n * par * ratio2 >= 1
                      and n * par + round(n * par * ratio2) <= R), default=0)
            if not Lp:
                raise GenError(f"--radix {R} with --oversub {over[1]:g} at the spines: no whole number of leaves and "
                               "core uplinks fits a spine")
        down = Lp * par
        if not _whole(down * ratio2) or round(down * ratio2) < 1:
            raise GenError(f"--leaves {Lp} per pod: a spine's {down} downlinks at --oversub {over[1]:g} need "
                           f"{down * ratio2:g} core uplinks: want a whole number >= 1")
        G = round(down * ratio2)
        if down + G > R:
            raise GenError(f"--leaves {Lp} per pod: a spine's {down} downlinks + {G} core uplinks exceed --radix {R}")
        pods = p.pods or R
        if pods > R:
            raise GenError(f"--pods {pods}: a core joins every pod once: at most --radix {R}")
        L = pods * Lp
    n_hosts = L * H
    if n_hosts >= 0x8000:
        raise GenError(f"{n_hosts:,} hosts: at most 32,767 (a host's uSID is 0x8000 + its number)")
    host_bits = H.bit_length()  # hosts .1 .. .H of a leaf's subnet
    pod_bits = (Lp - 1).bit_length() if p.tiers == 3 else 0
    leaf_slots = pods << pod_bits if p.tiers == 3 else L
    if leaf_slots << host_bits > 1 << 20:
        raise GenError(f"{L} leaves of {H} hosts do not fit a plane's 10.x.0.0/12 (a /{32 - host_bits} per leaf)")
    f = Fabric(p, {}, [], [], [], H=H, U=U, host_bits=host_bits, pod_bits=pod_bits)
    # Switches, plane-major.
    multi = p.planes > 1
    for pl in range(p.planes):
        pre = f"p{pl}-" if multi else ""
        for i in range(L):
            _add_sw(f, f"{pre}leaf{i}", 0, pl, pod=i // Lp, number=i)
            f.leaf_addr[f"{pre}leaf{i}"] = ((i // Lp) << pod_bits | i % Lp) if p.tiers == 3 else i
        for i in range(pods * A):
            _add_sw(f, f"{pre}spine{i}", 1, pl, pod=i // A, number=i)
        if p.tiers == 3:
            for i in range(A * G):
                _add_sw(f, f"{pre}core{i}", 2, pl, number=i)
    if len(f.switches) >= 0x8000:
        raise GenError(f"{len(f.switches):,} switches: at most 32,767 (a switch's uSID is 1 + its number)")
    # Hosts and their links.
    for h in range(n_hosts):
        f.hosts.append({"name": f"h{h}", "slot": h % H, "leaf": [], "ips": [], "macs": []})
    for pl in range(p.planes):
        pre = f"p{pl}-" if multi else ""
        base = (10 << 24) | (pl << 20)
        for h, host in enumerate(f.hosts):
            leaf = f.switches[f"{pre}leaf{h // H}"]
            ip = base | f.leaf_addr[leaf.name] << host_bits | (h % H + 1)
            host["leaf"].append(leaf.name)
            host["ips"].append(_ip(ip))
            host.setdefault("ip6s", []).append(_ip6(pl, h))
            host["macs"].append(f"02:1c:{pl:02x}:{h >> 16 & 0xff:02x}:{h >> 8 & 0xff:02x}:{h & 0xff:02x}")
            port = leaf.port_name()
            leaf.ports.append((port, ("host", h)))
            f.links.append((f"{host['name']}:p{pl}" if multi else host["name"], f"{leaf.name}:{port}",
                            speeds[0], delays[0]))
    # Switch-switch links: leaf i's uplink u goes to spine u // par of its pod;
    # spine j of a pod (j-th of A) has core uplinks to cores j*G .. j*G+G-1.
    for pl in range(p.planes):
        pre = f"p{pl}-" if multi else ""
        for i in range(L):
            for u in range(U):
                _join(f, f"{pre}leaf{i}", f"{pre}spine{(i // Lp) * A + u // par}", speeds[1], delays[1])
        if p.tiers == 3:
            for s in range(pods * A):
                for g in range(G):
                    _join(f, f"{pre}spine{s}", f"{pre}core{(s % A) * G + g}", speeds[2], delays[2])
    for sw in f.switches.values():
        if len(sw.ports) > R:
            raise GenError(f"{sw.name} needs {len(sw.ports)} ports: more than --radix {R}")
    _check_traffic(f)
    return f


def _add_sw(f, name, tier, plane, pod=0, number=0):
    f.switches[name] = Sw(name, tier, plane, len(f.switches), pod=pod, number=number)


def _join(f, a, b, speed, delay):
    sa, sb = f.switches[a], f.switches[b]
    n = len(f.sw_links)
    pa, pb = sa.port_name(), sb.port_name()
    sa.ports.append((pa, ("switch", b, pb)))
    sb.ports.append((pb, ("switch", a, pa)))
    f.sw_links.append((a, pa, _ip(LINK_NET + 2 * n), b, pb, _ip(LINK_NET + 2 * n + 1)))
    f.links.append((f"{a}:{pa}", f"{b}:{pb}", speed, delay))


# ---- workloads -----------------------------------------------------------------------

def permutation(n, seed):
    """A random permutation of range(n) without a fixed point (host h never
    sends to itself), drawn from `seed` (Python's Mersenne Twister: the
    same seed gives the same flows on every machine and version). Sattolo's
    algorithm: a uniformly drawn single n-cycle."""
    perm = list(range(n))
    rng = random.Random(seed)
    for i in range(n - 1, 0, -1):
        j = rng.randrange(i)  # j < i: a cycle, so no fixed point
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def _flows(f):
    """[(src, dst)] host numbers of the traffic pattern."""
    p, n, H = f.p, len(f.hosts), f.H
    if p.traffic == "pair":
        return [(0, n - 1)] if n > 1 else []
    if p.traffic == "shift":
        return [(h, (h + H) % n) for h in range(n)] if n > H else []
    if p.traffic == "permutation":
        if n <= H:
            return []
        perm = permutation(n, p.seed)
        return [(h, perm[h]) for h in range(n)]
    far = [h for h in range(n) if h // H != 0]
    k = p.incast_senders or min(len(far), 63)
    return [(h, 0) for h in far[len(far) - k:]] if 0 < k <= len(far) else None


def _check_traffic(f):
    p = f.p
    pairs = _flows(f)
    if pairs is None:
        raise GenError(f"--incast-senders {p.incast_senders}: {len([h for h in range(len(f.hosts)) if h >= f.H])} "
                       f"hosts are off the receiver h0's leaf")
    if not pairs:
        raise GenError(f"--traffic {p.traffic}: the fabric has {len(f.hosts)} host(s) on "
                       f"{len(f.hosts) // f.H} leaf(s): no flow crosses a spine")
    n = len(pairs) * (1 if p.traffic == "permutation" else p.planes)
    if n > tp.MAX_FLOWS:
        raise GenError(f"--traffic {p.traffic}: {n:,} flows ({len(pairs):,} x {p.planes} plane(s)) exceed the lab's "
                       f"{tp.MAX_FLOWS}; use --traffic pair or incast")
    per_host = {}
    for s, d in pairs:
        for h in (s, d):
            per_host[h] = per_host.get(h, 0) + (1 if p.traffic == "permutation" or p.transport == "mrc" else p.planes)
    if p.host_kind == "nic" and max(per_host.values()) > 64:
        raise GenError(f"--traffic {p.traffic}: a host would run {max(per_host.values())} sf-nic workloads (at most "
                       "64); use fewer --incast-senders or planes")


def _workloads(f):
    p = f.p
    pairs = _flows(f)
    out = []
    mrc = p.transport == "mrc"
    tr = {"transport": "mrc"} if mrc else {}
    if mrc and p.ev_mode == "srv6":  # the lab derives each side's uSID template (topology.srv6_template)
        tr["mrc"] = {"ev_mode": "srv6"}
    if p.traffic == "permutation":
        # One RC flow per host, on one plane: source host h sends on plane
        # h mod P (its port h mod P + 1, the destination's port of that plane),
        # so the flows spread evenly over the planes. An MRC flow sprays over
        # every plane itself.
        extra = dict({"qps": p.qps} if p.qps > 1 else {}, **tr)
        for s, d in pairs:
            pl = s % p.planes
            port = {"port": pl + 1} if p.planes > 1 and not mrc else {}
            suffix = f"-p{pl}" if p.planes > 1 and not mrc else ""
            out.append(dict({"name": f"perm-h{s}-h{d}{suffix}", "type": "background", "src": f"h{s}",
                             "dst": f"h{d}", "size_bytes": p.size_bytes, "dscp": 26}, **port, **extra))
        return out
    for pl in range(1 if mrc else p.planes):  # MRC: one set of flows, each spraying over every plane
        suffix = f"-p{pl}" if p.planes > 1 and not mrc else ""
        port = {"port": pl + 1} if p.planes > 1 and not mrc else {}
        extra = dict({"qps": p.qps} if p.host_kind == "nic" and p.qps > 1 else {}, **tr)
        if p.traffic == "incast":
            out.append(dict({"name": f"incast{suffix}", "type": "incast",
                             "senders": [f"h{s}" for s, _ in pairs], "receiver": "h0",
                             "size_bytes": p.size_bytes}, **port, **extra))
            continue
        for s, d in pairs:
            out.append(dict({"name": f"{p.traffic}-h{s}-h{d}{suffix}", "type": "background", "src": f"h{s}",
                             "dst": f"h{d}", "size_bytes": p.size_bytes, "dscp": 26}, **port, **extra))
    return out


# ---- switch configs ------------------------------------------------------------------

_LOSSLESS = []


def _lossless_base():
    if not _LOSSLESS:
        with open(LOSSLESS_FILE) as fh:
            _LOSSLESS.append(json.load(fh))
    return _LOSSLESS[0]


def _scale_pools(tables, mmu):
    """--mmu-size: every pool's size x mmu / 32 MiB, a profile's static
    threshold at most its pool (sf-switch: ingress pools fit mmu_size)."""
    if not mmu or mmu == PROFILE_MMU:
        return tables
    tables["DEVICE_METADATA"]["mmu_size"] = str(mmu)
    pools = tables["BUFFER_POOL"]
    for v in pools.values():
        v["size"] = str(int(v["size"]) * mmu // PROFILE_MMU)
    for v in tables["BUFFER_PROFILE"].values():
        if "static_th" in v:
            v["static_th"] = str(min(int(v["static_th"]), int(pools[v["pool"]]["size"])))
    return tables


def _profile_tables(profile, ports, host_ports, mmu=0):
    return _scale_pools(_profile_base(profile, ports, host_ports), mmu)


def _profile_base(profile, ports, host_ports):
    """The buffer / QoS tables of a profile for these ports (per-port keys
    name them all: "Ethernet0,Ethernet4|3")."""
    plist = ",".join(ports)
    if profile == "lossless":
        base = _lossless_base()
        out = {"DEVICE_METADATA": {k: v for k, v in base["DEVICE_METADATA"]["localhost"].items() if k != "hostname"}}
        for t in QOS_TABLES:
            if t not in base:
                continue
            tab = copy.deepcopy(base[t])
            if t in ("BUFFER_PG", "BUFFER_QUEUE", "QUEUE"):
                tab = {f"{plist}|{k.split('|', 1)[1]}": v for k, v in tab.items()}
            out[t] = tab
        return out
    # mrc-trim: lossy, trimming, ECN in the fabric, none toward hosts.
    core = [q for q in ports if q not in host_ports]
    queue = {f"{plist}|0-2": {"scheduler": "scheduler.lossy"}}
    if core:
        queue[f"{','.join(core)}|3"] = {"scheduler": "scheduler.roce", "wred_profile": "ROCE_LOSSY"}
    if host_ports:
        queue[f"{','.join(host_ports)}|3"] = {"scheduler": "scheduler.roce"}
    queue.update({f"{plist}|4-5": {"scheduler": "scheduler.lossy"}, f"{plist}|6": {"scheduler": "scheduler.cnp"},
                  f"{plist}|7": {"scheduler": "scheduler.lossy"}})
    return {
        "DEVICE_METADATA": {"mmu_size": "32MiB", "cell_size": 256},
        "BUFFER_POOL": {
            "ingress_lossy_pool": {"type": "ingress", "mode": "dynamic", "size": "25165824"},
            "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "size": "25165824"}},
        "BUFFER_PROFILE": {
            "ingress_lossy_profile": {"pool": "ingress_lossy_pool", "size": "0", "dynamic_th": "3"},
            "egress_trim_profile": {"pool": "egress_lossy_pool", "size": "1518", "dynamic_th": "-1",
                                    "packet_discard_action": "trim"},
            "trim_queue_profile": {"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"}},
        "BUFFER_PG": {f"{plist}|0-7": {"profile": "ingress_lossy_profile"}},
        "BUFFER_QUEUE": {f"{plist}|0-5": {"profile": "egress_trim_profile"},
                         f"{plist}|6": {"profile": "trim_queue_profile"},
                         f"{plist}|7": {"profile": "egress_trim_profile"}},
        "DSCP_TO_TC_MAP": {"ROCE": {"26": "3", "48": "6", "46": "5", "0": "0"}},
        "TC_TO_PRIORITY_GROUP_MAP": {"ROCE": {str(i): str(i) for i in range(8)}},
        "TC_TO_QUEUE_MAP": {"ROCE": {str(i): str(i) for i in range(8)}},
        "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": "ROCE", "tc_to_pg_map": "ROCE", "tc_to_queue_map": "ROCE"}},
        "WRED_PROFILE": {"ROCE_LOSSY": {"ecn": "ecn_all", "wred_green_enable": "false",
                                        "green_min_threshold": "122880", "green_max_threshold": "368640",
                                        "green_drop_probability": "20"}},
        "SCHEDULER": {"scheduler.lossy": {"type": "DWRR", "weight": "14"},
                      "scheduler.roce": {"type": "DWRR", "weight": "15"},
                      "scheduler.cnp": {"type": "STRICT", "priority": "5"}},
        "QUEUE": queue,
        "SWITCH_TRIMMING": {"GLOBAL": {"size": "128", "dscp_value": "48", "queue_index": "6"}},
    }


def fdb_capacity(ports):
    """The FDB a generated switch needs: it routes, so it learns at most the
    MAC behind each port (a host port's, a neighbour switch's): room for 4
    per port, a power of two, at least 64 (sf-switch's default, 65,536
    entries, is ~10 MB of tables per switch; a fabric has hundreds)."""
    n = 64
    while n < 4 * ports:
        n *= 2
    return n


def switch_config(f, sw):
    """The sf-switch config of one switch (a dict, key order fixed)."""
    p = f.p
    ports = [q for q, _ in sw.ports]
    host_ports = [q for q, peer in sw.ports if peer[0] == "host"]
    prof = _profile_tables(p.profile, ports, host_ports, p.mmu_bytes)
    cfg = {"DEVICE_METADATA": {"localhost": dict({"hostname": sw.name}, **prof.pop("DEVICE_METADATA"),
                                                 fdb_capacity=fdb_capacity(len(ports)))}}
    if not f.speed_of:
        for a, b, speed, _ in f.links:
            for end in (a, b):
                f.speed_of[end] = speed
        for a, pa, ia, b, pb, ib in f.sw_links:
            f.ip_of[(a, pa)], f.ip_of[(b, pb)] = ia, ib
    speed_of, ip_of = f.speed_of, f.ip_of
    cfg["PORT"] = {q: {"devargs": f"net_memif{i},role=server,socket=/run/softfabric/{sw.name}-{q}.sock",
                       "speed": speed_of[f"{sw.name}:{q}"], "mtu": MTU, "mac": sw.mac(i)}
                   for i, q in enumerate(ports)}
    cfg.update(prof)
    neigh, routes, nxt = {}, {}, {}
    pl = sw.plane
    ups = []    # (port, peer switch, peer port) toward the tier above
    downs = {}  # peer switch -> [(port, peer port)]
    for q, peer in sw.ports:
        if peer[0] == "host":
            h = f.hosts[peer[1]]
            ip, mac = h["ips"][pl], h["macs"][pl]
            neigh[f"{q}|{ip}"] = {"neigh": mac, "family": "IPv4"}
            routes[f"{ip}/32"] = {"nexthop": ip, "ifname": q}
            nxt.setdefault(f"{HOST_USID_BASE + peer[1]:x}", {"port": q, "mac": mac})
            continue
        other = f.switches[peer[1]]
        neigh[f"{q}|{ip_of[(other.name, peer[2])]}"] = {"neigh": other.mac(_port_index(other, peer[2])),
                                                      "family": "IPv4"}
        nxt.setdefault(f"{other.usid:x}", {"port": q, "mac": other.mac(_port_index(other, peer[2]))})
        if other.tier > sw.tier:
            ups.append((q, other.name, peer[2]))
        else:
            downs.setdefault(other.name, []).append((q, peer[2]))

    def group(links):
        return {"nexthop": ",".join(ip_of[(s, pp)] for _, s, pp in links), "ifname": ",".join(q for q, _, _ in links)}

    # Down: a spine routes each leaf's subnet (3 tiers: its own pod's), a
    # core each pod's subnet, over the links to it (parallel links: ECMP).
    for other_name, links in downs.items():
        other = f.switches[other_name]
        if other.tier == 0:
            pfx = _leaf_prefix(f, other)
        else:  # a core's pod spine: the pod's subnet (every spine of the pod reaches all of it)
            pfx = _pod_prefix(f, other.plane, other.pod)
        cur = routes.get(pfx)
        g = group([(q, other_name, pp) for q, pp in links])
        if cur:  # several spines of one pod under a core: one ECMP group
            g = {"nexthop": cur["nexthop"] + "," + g["nexthop"], "ifname": cur["ifname"] + "," + g["ifname"]}
        routes[pfx] = g
    if ups:
        routes[f"{_ip((10 << 24) | (pl << 20))}/12"] = group(ups)
    cfg["NEIGH"] = neigh
    cfg["STATIC_ROUTE"] = dict(sorted(routes.items(), key=lambda kv: _route_key(kv[0])))
    cfg["SRV6"] = {"locator_block": SRV6_BLOCK, "usid": f"{sw.usid:x}", "next": nxt}
    return cfg


def _port_index(sw, port):
    return next(i for i, (q, _) in enumerate(sw.ports) if q == port)


def _leaf_prefix(f, leaf):
    base = (10 << 24) | (leaf.plane << 20)
    return f"{_ip(base | f.leaf_addr[leaf.name] << f.host_bits)}/{32 - f.host_bits}"


def _pod_prefix(f, plane, pod):
    base = (10 << 24) | (plane << 20)
    bits = f.host_bits + f.pod_bits
    return f"{_ip(base | pod << bits)}/{32 - bits}"


def _route_key(pfx):
    net, _, d = pfx.partition("/")
    a, b, c, e = (int(x) for x in net.split("."))
    return (-int(d), a, b, c, e)


# ---- the topology --------------------------------------------------------------------

def command_line(p):
    """The sf-lab gen options that make this fabric (without --out), those
    that differ from the defaults: the topology's description says how to
    make it again."""
    def text(v):
        if isinstance(v, list):
            return ",".join(f"{x:g}" for x in v)
        return f"{v:g}" if isinstance(v, float) else str(v)

    d = Params()
    opts = [("--name", "name"), ("--tiers", "tiers"), ("--radix", "radix"), ("--hosts-per-leaf", "hosts_per_leaf"),
            ("--oversub", "oversub"), ("--leaves", "leaves"), ("--spines", "spines"), ("--pods", "pods"),
            ("--hosts", "hosts"), ("--planes", "planes"), ("--speed-gbps", "speeds"), ("--delay-ns", "delays"),
            ("--profile", "profile"), ("--host-kind", "host_kind"), ("--traffic", "traffic"),
            ("--incast-senders", "incast_senders"), ("--size", "size_bytes"), ("--qps", "qps"), ("--cc", "cc"),
            ("--transport", "transport"), ("--ev-mode", "ev_mode"), ("--duration", "duration_s"), ("--mmu-size", "mmu_bytes"), ("--seed", "seed")]
    out = [f"{opt} {text(getattr(p, attr))}" for opt, attr in opts
           if text(getattr(p, attr)) != text(getattr(d, attr))
           and not (attr == "mmu_bytes" and getattr(p, attr) == PROFILE_MMU)]
    return " ".join(["sf-lab gen"] + out)


def describe_params(p):
    return f"generated by: {command_line(p)}"


def topology(f):
    p = f.p
    nodes = {}
    for sw in f.switches.values():
        nodes[sw.name] = {"kind": "switch", "config": f"switch/{sw.name}.json"}
    for h, host in enumerate(f.hosts):
        n = {"kind": p.host_kind}
        if p.host_kind == "nic":
            n["process"] = f"rack{h // f.H}"
            n["cc"] = p.cc
        srv6 = p.ev_mode == "srv6"
        if p.planes > 1:
            n.update({"ports": p.planes, "port_macs": host["macs"], "port_ips": host["ips"]})
            if srv6:
                n["port_ipv6s"] = host["ip6s"]
        else:
            n.update({"mac": host["macs"][0], "ip": host["ips"][0]})
            if srv6:
                n["ipv6"] = host["ip6s"][0]
        nodes[host["name"]] = n
    links = [{"a": a, "b": b, "speed_gbps": s, "delay_ns": d} for a, b, s, d in f.links]
    return {"name": p.name, "description": describe_params(p), "duration_s": p.duration_s,
            "nodes": nodes, "links": links, "workloads": _workloads(f)}


def render(f):
    """{relative file name: text}: the topology and every switch config."""
    out = {f"{f.p.name}.json": json.dumps(topology(f), indent=2) + "\n"}
    for sw in f.switches.values():
        out[f"switch/{sw.name}.json"] = json.dumps(switch_config(f, sw), indent=2) + "\n"
    return out


def write(files, out_dir, force=False):
    """Writes the rendered files under out_dir. A non-empty out_dir is
    refused unless force (then the switch/ directory is replaced)."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise GenError(f"--out {out_dir}: not a directory")
    if os.path.isdir(out_dir) and os.listdir(out_dir) and not force:
        raise GenError(f"--out {out_dir}: not empty (--force replaces its topology and switch/ configs)")
    os.makedirs(out_dir, exist_ok=True)
    sw_dir = os.path.join(out_dir, "switch")
    if os.path.isdir(sw_dir):
        shutil.rmtree(sw_dir)
    os.makedirs(sw_dir)
    for rel in sorted(files):
        with open(os.path.join(out_dir, rel), "w") as fh:
            fh.write(files[rel])
    return os.path.join(out_dir, sorted(k for k in files if "/" not in k)[0])


# ---- sf-lab check: a topology's fabric in figures ----------------------------------------

HOPS_FULL_MAX = 256  # edge switches BFS'd from all; above: the first and last 64 (said so)


def _components(t, g):
    comp = {}
    for s in t.switches:
        if s in comp:
            continue
        comp[s] = s
        todo = [s]
        while todo:
            x = todo.pop()
            for _, y, _ in g[x]:
                if y not in comp:
                    comp[y] = s
                    todo.append(y)
    return comp


def _max_switch_hops(t, g):
    """(switches a packet crosses at most between two host ports of one
    plane, sampled or not)."""
    edge = sorted({hp.switch for h in t.hosts.values() for hp in h.ports}, key=lambda s: t.switches[s].index)
    sampled = len(edge) > HOPS_FULL_MAX
    starts = edge[:64] + edge[-64:] if sampled else edge
    edge_set = set(edge)
    best = 0
    for s in starts:
        dist = {s: 0}
        frontier = [s]
        while frontier:
            nxt = []
            for x in frontier:
                for _, y, _ in g[x]:
                    if y not in dist:
                        dist[y] = dist[x] + 1
                        nxt.append(y)
            frontier = nxt
        best = max(best, max(d for y, d in dist.items() if y in edge_set) + 1)
    return best, sampled


def bisection_gbps(t):
    """Max flow (Gb/s, one direction) from the first half of the hosts (in
    topology order) to the second half over the links at their speeds; None
    for fewer than 2 hosts."""
    hosts = list(t.hosts)
    if len(hosts) < 2:
        return None
    names = list(t.switches) + hosts + ["<src>", "<dst>"]
    idx = {n: i for i, n in enumerate(names)}
    adj = [[] for _ in names]
    to, cap = [], []

    def edge(u, v, c, back):
        adj[u].append(len(to))
        to.append(v)
        cap.append(c)
        adj[v].append(len(to))
        to.append(u)
        cap.append(back)

    for link in t.links:
        edge(idx[link.a[0]], idx[link.b[0]], link.speed_gbps, link.speed_gbps)
    src, dst = idx["<src>"], idx["<dst>"]
    big = sum(link.speed_gbps for link in t.links) + 1
    half = len(hosts) // 2
    for i, h in enumerate(hosts):
        if i < half:
            edge(src, idx[h], big, 0)
        else:
            edge(idx[h], dst, big, 0)
    total = 0
    while True:  # Dinic: BFS levels, then blocking flows by DFS
        level = [-1] * len(names)
        level[src] = 0
        q = [src]
        for u in q:
            for e in adj[u]:
                if cap[e] > 0 and level[to[e]] < 0:
                    level[to[e]] = level[u] + 1
                    q.append(to[e])
        if level[dst] < 0:
            return total
        it = [0] * len(names)

        def push(u, f):
            if u == dst:
                return f
            while it[u] < len(adj[u]):
                e = adj[u][it[u]]
                v = to[e]
                if cap[e] > 0 and level[v] == level[u] + 1:
                    got = push(v, min(f, cap[e]))
                    if got:
                        cap[e] -= got
                        cap[e ^ 1] += got
                        return got
                it[u] += 1
            return 0

        while True:
            got = push(src, big)
            if not got:
                break
            total += got


def summary(t):
    """sf-lab check's fabric lines: switches, hosts, ports, links, planes,
    routing, hops, bisection."""
    from topology import switch_graph, is_routed
    g = switch_graph(t)
    host_ports = sum(len(h.ports) for h in t.hosts.values())
    cfg_ports = sum(len(s.ports) for s in t.switches.values())
    linked = sum(1 for link in t.links for ep in (link.a, link.b) if ep[1])
    sw_links = [link for link in t.links if link.a[1] and link.b[1]]
    speeds = {}
    for link in t.links:
        speeds[link.speed_gbps] = speeds.get(link.speed_gbps, 0) + 1
    comp = _components(t, g)
    planes = sorted({comp[hp.switch] for h in t.hosts.values() for hp in h.ports})
    edge = {hp.switch for h in t.hosts.values() for hp in h.ports}
    kinds = {}
    for h in t.hosts.values():
        kinds[h.kind] = kinds.get(h.kind, 0) + 1
    routed = [s for s in t.switches.values() if is_routed(s)]
    ecmp = sum(1 for s in routed for r in s.config["STATIC_ROUTE"].values()
               if isinstance(r, dict) and "," in str(r.get("nexthop", "")))
    srv6 = sum(1 for s in t.switches.values() if isinstance(s.config.get("SRV6"), dict))
    hops, sampled = _max_switch_hops(t, g)
    bis = bisection_gbps(t)
    host_bw = sum(hp.speed_gbps for h in t.hosts.values() for hp in h.ports)
    lines = [
        f"fabric {t.name}:",
        f"  switches   {len(t.switches)} ({len(edge)} with hosts, {len(t.switches) - len(edge)} without)",
        f"  hosts      {len(t.hosts)} ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}), "
        f"{host_ports} host port(s)",
        f"  ports      {cfg_ports} switch ports configured, {linked} linked",
        f"  links      {len(t.links)} ({len(t.links) - len(sw_links)} host, {len(sw_links)} switch-switch; "
        + ", ".join(f"{n} at {s} Gb/s" for s, n in sorted(speeds.items())) + ")",
        f"  planes     {len(planes)} (switch-graph components with hosts)",
        "  routing    " + (f"{len(routed)} routed switch(es) (STATIC_ROUTE, {ecmp} ECMP group(s)), "
                           f"{srv6} SRv6 node(s)" if routed else "L2 (static FDB from the lab)"),
        f"  hops       at most {hops} switch(es) between two host ports" + (" (sampled)" if sampled else ""),
        "  bisection  " + ("n/a (fewer than 2 hosts)" if bis is None else
                           f"{bis:,} Gb/s (max flow, first half of the hosts to the second; "
                           f"{host_bw / 2:,.0f} Gb/s of host ports per half)"),
    ]
    return "\n".join(lines)
