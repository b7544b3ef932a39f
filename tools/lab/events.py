"""Topology `events`: failure injection with one meaning in real time (sf-lab
run: tools/lab/faults.py drives sf-switch's telemetry commands) and in
virtual time (sf-lab run --sim: sf-sim's plan "events", the simulator's links
and nodes). docs/lab.md "Events" is the reference.

  "events": [
    {"kind": "link_down", "link": "sw0:Ethernet0", "at_ms": 5},
    {"kind": "link_up",   "link": "h0", "at_ms": 8},
    {"kind": "flap",      "link": "sw0:Ethernet0", "from_ms": 5, "until_ms": 50, "period_ms": 10, "down_ms": 2},
    {"kind": "blackhole", "port": "sw0:Ethernet4", "at_ms": 5, "until_ms": 10},
    {"kind": "blackhole", "switch": "sw1", "at_ms": 5},
    {"kind": "loss",      "link": "sw0:Ethernet0", "rate": 0.01, "at_ms": 0},
    {"kind": "reboot",    "switch": "sw1", "at_ms": 5, "down_ms": 3},
    {"kind": "plane_down", "plane": 3, "at_ms": 5}
  ]

A link is named by one of its ends: a switch port "sw:port" or a host name
(a host has one link). Times are milliseconds from the start of the
workloads (float). Everything is checked at load; errors name the JSON path
(events[2].link: ...). Only the standard library is used.
"""
import json
from dataclasses import dataclass

KINDS = ("link_down", "link_up", "flap", "blackhole", "loss", "reboot", "plane_down", "plane_up")
KEYS = {
    "link_down": {"kind", "link", "at_ms"},
    "link_up": {"kind", "link", "at_ms"},
    "flap": {"kind", "link", "from_ms", "until_ms", "period_ms", "down_ms"},
    "blackhole": {"kind", "port", "switch", "at_ms", "until_ms"},
    "loss": {"kind", "link", "rate", "at_ms"},
    "reboot": {"kind", "switch", "at_ms", "down_ms"},
    "plane_down": {"kind", "plane", "at_ms"},
    "plane_up": {"kind", "plane", "at_ms"},
}
MAX_FLAP_PERIODS = 10000  # per flap event: each period is two telemetry commands in real time


@dataclass
class Event:
    index: int
    kind: str
    at_ms: float                # start (flap: from_ms)
    until_ms: float = None      # blackhole / flap end (None: for good)
    link: int = None            # index into topology.links (link kinds)
    switch: str = None          # blackhole of a whole switch, reboot
    port: tuple = None          # blackhole of one port: (switch, port)
    rate: float = 0.0           # loss
    period_ms: float = 0.0      # flap
    down_ms: float = 0.0        # flap (per period), reboot
    plane: int = None           # plane_down / plane_up: host port index (0-based) of every multi-port host
    links: tuple = ()           # plane_down / plane_up: the links of those host ports
    path: str = ""

    def label(self, topo):
        """Short text for plots and logs."""
        what = self.target_text(topo)
        if self.kind == "flap":
            return f"flap {what} ({self.down_ms:g}/{self.period_ms:g} ms)"
        if self.kind == "loss":
            return f"loss {self.rate:g} {what}"
        if self.kind == "reboot":
            return f"reboot {what} ({self.down_ms:g} ms)"
        return f"{self.kind} {what}"

    def target_text(self, topo):
        if self.plane is not None:
            return f"plane {self.plane}"
        if self.link is not None:
            lk = topo.links[self.link]
            return f"{_end_text(lk.a)}-{_end_text(lk.b)}"
        if self.port is not None:
            return f"{self.port[0]}:{self.port[1]}"
        return self.switch or ""

    def to_json(self, topo):
        """The plan form (sf-sim "events", the report): links as [a, b] ends."""
        j = {"kind": self.kind, "at_ms": self.at_ms, "label": self.label(topo)}
        if self.until_ms is not None:
            j["until_ms"] = self.until_ms
        if self.link is not None:
            lk = topo.links[self.link]
            j["link"] = [_end_text(lk.a), _end_text(lk.b)]
        if self.switch is not None:
            j["switch"] = self.switch
        if self.port is not None:
            j["port"] = f"{self.port[0]}:{self.port[1]}"
        if self.kind == "loss":
            j["rate"] = self.rate
        if self.kind == "flap":
            j["period_ms"] = self.period_ms
            j["down_ms"] = self.down_ms
        if self.kind == "reboot":
            j["down_ms"] = self.down_ms
        if self.plane is not None:
            j["plane"] = self.plane
            j["links"] = [[_end_text(topo.links[li].a), _end_text(topo.links[li].b)] for li in self.links]
        return j


def plan_events(topo, evs):
    """The events in sf-sim's plan form (no labels): a plane_down / plane_up
    becomes one link_down / link_up per host port of the plane (sf-sim has
    links, not planes); the others as to_json."""
    out = []
    for ev in evs:
        if ev.plane is not None:
            kind = "link_down" if ev.kind == "plane_down" else "link_up"
            for li in ev.links:
                out.append({"kind": kind, "at_ms": ev.at_ms, "link": _plan_link(topo, li)})
            continue
        j = {k: v for k, v in ev.to_json(topo).items() if k != "label"}
        if ev.link is not None:
            j["link"] = _plan_link(topo, ev.link)
        out.append(j)
    return out


def _plan_link(topo, li):
    """A link's ends for sf-sim. sf-sim reads a host name as that host's
    first node port, so a link of a multi-port host is named by its switch
    end (twice: both entries must name the link)."""
    lk = topo.links[li]
    multi = [ep for ep in (lk.a, lk.b) if not ep[1] and ep[0] in topo.hosts and topo.hosts[ep[0]].multi]
    if multi:
        sw = _end_text(lk.b if lk.a in multi else lk.a)
        return [sw, sw]
    return [_end_text(lk.a), _end_text(lk.b)]


def _end_text(ep):
    return f"{ep[0]}:{ep[1]}" if ep[1] else ep[0]


class EventError(ValueError):
    def __init__(self, path, msg):
        super().__init__(f"{path}: {msg}")
        self.path = path


def _ms(obj, key, path, required=True, lo=0.0, hi=None, positive=False):
    if key not in obj:
        if required:
            raise EventError(path, f"missing required field '{key}'")
        return None
    v = obj[key]
    p = f"{path}.{key}"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise EventError(p, f"want a number of milliseconds, got {json.dumps(v)}")
    v = float(v)
    if positive and v <= 0:
        raise EventError(p, f"{v:g} ms: must be > 0")
    if v < lo or (hi is not None and v > hi):
        raise EventError(p, f"{v:g} ms is outside the run [0, {hi:g}] ms (duration_s)" if hi is not None
                         else f"{v:g} ms: must be >= {lo:g}")
    return v


def _link_of(topo, v, path):
    """The index of the link named by one of its ends."""
    if not isinstance(v, str) or not v:
        raise EventError(path, f"want a link end (\"switch:port\" or a host name), got {json.dumps(v)}")
    node, _, port = v.partition(":")
    for lk in topo.links:
        for ep in (lk.a, lk.b):
            if ep[0] == node and (ep[1] or "") == port:
                return lk.index
    if node in topo.switches and not port:
        raise EventError(path, f"'{node}' is a switch: name one of its ports, e.g. \"{node}:{topo.switches[node].ports[0]}\"")
    if node in topo.switches and port not in topo.switches[node].ports:
        raise EventError(path, f"switch {node} has no port '{port}'")
    if node not in topo.switches and node not in topo.hosts:
        raise EventError(path, f"unknown node '{node}'")
    raise EventError(path, f"no link has the end '{v}'")


def _switch(topo, v, path):
    if not isinstance(v, str) or v not in topo.switches:
        hint = " (a host: blackhole or reboot switches only)" if isinstance(v, str) and v in topo.hosts else ""
        raise EventError(path, f"unknown switch {json.dumps(v)}{hint}")
    return v


def _port(topo, v, path):
    if not isinstance(v, str) or ":" not in v:
        raise EventError(path, f"want a switch port \"switch:port\", got {json.dumps(v)}")
    sw, _, port = v.partition(":")
    _switch(topo, sw, path)
    if port not in topo.switches[sw].ports:
        raise EventError(path, f"switch {sw} has no port '{port}' (it has {', '.join(topo.switches[sw].ports)})")
    return sw, port


def load(topo, raw):
    """Validates the "events" array of a topology (after its links are
    loaded) against `topo`; returns a list of Event in file order."""
    path = "events"
    if not isinstance(raw, list):
        raise EventError(path, "want an array of events")
    end_ms = topo.duration_s * 1000.0
    out = []
    for i, obj in enumerate(raw):
        p = f"{path}[{i}]"
        if not isinstance(obj, dict):
            raise EventError(p, "want an object")
        kind = obj.get("kind")
        if kind not in KINDS:
            raise EventError(f"{p}.kind", f"{json.dumps(kind)} is not one of {', '.join(KINDS)}")
        for k in obj:
            if k not in KEYS[kind]:
                raise EventError(p, f"unknown key '{k}' for a {kind} event; known: {', '.join(sorted(KEYS[kind]))}")
        ev = Event(index=i, kind=kind, at_ms=0.0, path=p)
        if kind in ("link_down", "link_up"):
            ev.link = _link_of(topo, obj.get("link"), f"{p}.link")
            ev.at_ms = _ms(obj, "at_ms", p, hi=end_ms)
        elif kind == "flap":
            ev.link = _link_of(topo, obj.get("link"), f"{p}.link")
            ev.at_ms = _ms(obj, "from_ms", p, hi=end_ms)
            ev.until_ms = _ms(obj, "until_ms", p, hi=end_ms)
            ev.period_ms = _ms(obj, "period_ms", p, positive=True)
            ev.down_ms = _ms(obj, "down_ms", p, positive=True)
            if ev.until_ms <= ev.at_ms:
                raise EventError(f"{p}.until_ms", f"{ev.until_ms:g} ms is not after from_ms {ev.at_ms:g}")
            if ev.down_ms >= ev.period_ms:
                raise EventError(f"{p}.down_ms", f"{ev.down_ms:g} ms: must be shorter than period_ms {ev.period_ms:g}")
            if (ev.until_ms - ev.at_ms) / ev.period_ms > MAX_FLAP_PERIODS:
                raise EventError(p, f"more than {MAX_FLAP_PERIODS} periods; raise period_ms")
        elif kind == "blackhole":
            if ("port" in obj) == ("switch" in obj):
                raise EventError(p, "name either a 'port' (\"switch:port\") or a 'switch', not both or neither")
            if "port" in obj:
                ev.port = _port(topo, obj["port"], f"{p}.port")
            else:
                ev.switch = _switch(topo, obj["switch"], f"{p}.switch")
            ev.at_ms = _ms(obj, "at_ms", p, hi=end_ms)
            ev.until_ms = _ms(obj, "until_ms", p, required=False, hi=end_ms)
            if ev.until_ms is not None and ev.until_ms <= ev.at_ms:
                raise EventError(f"{p}.until_ms", f"{ev.until_ms:g} ms is not after at_ms {ev.at_ms:g}")
        elif kind == "loss":
            ev.link = _link_of(topo, obj.get("link"), f"{p}.link")
            ev.at_ms = _ms(obj, "at_ms", p, required=False, hi=end_ms) or 0.0
            r = obj.get("rate")
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 <= r <= 1:
                raise EventError(f"{p}.rate", f"want a probability in [0, 1], got {json.dumps(r)}")
            ev.rate = float(r)
        elif kind in ("plane_down", "plane_up"):
            pl = obj.get("plane")
            if isinstance(pl, bool) or not isinstance(pl, int) or pl < 0:
                raise EventError(f"{p}.plane", f"want a plane number (a host port index from 0), got {json.dumps(pl)}")
            ev.plane = pl
            ev.links = tuple(lk.index for lk in topo.links
                             if any(ep[0] in topo.hosts and topo.hosts[ep[0]].multi for ep in (lk.a, lk.b))
                             and lk.host_port == pl)
            if not ev.links:
                most = max((len(h.ports) for h in topo.hosts.values() if h.multi), default=0)
                raise EventError(f"{p}.plane", f"no multi-port host has a port {pl} (plane k is every host's port k, "
                                 f"0-based; the hosts have {most or 'one'} port(s))")
            ev.at_ms = _ms(obj, "at_ms", p, hi=end_ms)
        elif kind == "reboot":
            ev.switch = _switch(topo, obj.get("switch"), f"{p}.switch")
            ev.at_ms = _ms(obj, "at_ms", p, hi=end_ms)
            ev.down_ms = _ms(obj, "down_ms", p, positive=True)
        out.append(ev)
    return out


def actions(topo, events):
    """The events as a timeline of primitive actions, sorted by time (stable):
    (t_ms, kind, target, value, event index) with kind one of
      "link"      target link index,          value True up / False down
      "blackhole" target (switch, port),      value True on / False off
      "loss"      target link index,          value rate
      "reset"     target switch,              value None
    A reboot is every link of the switch down + reset at at_ms, up at
    at_ms + down_ms; a switch blackhole is every port of the switch."""
    out = []
    for ev in events:
        k = ev.index
        if ev.kind in ("link_down", "link_up"):
            out.append((ev.at_ms, "link", ev.link, ev.kind == "link_up", k))
        elif ev.kind in ("plane_down", "plane_up"):
            for li in ev.links:
                out.append((ev.at_ms, "link", li, ev.kind == "plane_up", k))
        elif ev.kind == "flap":
            t = ev.at_ms
            while t < ev.until_ms:
                out.append((t, "link", ev.link, False, k))
                out.append((min(t + ev.down_ms, ev.until_ms), "link", ev.link, True, k))
                t += ev.period_ms
        elif ev.kind == "blackhole":
            ports = [ev.port] if ev.port else [(ev.switch, p) for p in topo.switches[ev.switch].ports]
            for sp in ports:
                out.append((ev.at_ms, "blackhole", sp, True, k))
                if ev.until_ms is not None:
                    out.append((ev.until_ms, "blackhole", sp, False, k))
        elif ev.kind == "loss":
            out.append((ev.at_ms, "loss", ev.link, ev.rate, k))
        elif ev.kind == "reboot":
            links = [lk.index for lk in topo.links if ev.switch in (lk.a[0], lk.b[0])]
            for li in links:
                out.append((ev.at_ms, "link", li, False, k))
            out.append((ev.at_ms, "reset", ev.switch, None, k))
            for li in links:
                out.append((ev.at_ms + ev.down_ms, "link", li, True, k))
    out.sort(key=lambda a: a[0])
    return out


def markers(topo, events):
    """(t_s, label) of every event start and end, for the plots."""
    out = []
    for ev in events:
        lab = ev.label(topo)
        out.append((ev.at_ms / 1000.0, lab))
        if ev.kind == "reboot":
            out.append(((ev.at_ms + ev.down_ms) / 1000.0, f"{ev.switch} back"))
        elif ev.until_ms is not None:
            out.append((ev.until_ms / 1000.0, f"end {lab}"))
    return sorted(out)
