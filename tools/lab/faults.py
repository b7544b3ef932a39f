"""Real-time driver of topology events (tools/lab/events.py, docs/lab.md
"Events"): a thread that, at each action's time after the lab's start, sends
the sf-switch telemetry commands that make it happen:

  link down / up     /softfabric/switch/port_admin,PORT,down|up on every
                     switch end of the link (memif cannot be unplugged: the
                     switches see what a cable pull shows them; a host end
                     is not told)
  blackhole          /softfabric/switch/port_blackhole,PORT,on|off
  loss               /softfabric/switch/port_loss,PORT,RATE on one switch
                     end (it drops in both directions, as the simulated link)
  reboot             every link of the switch down, /softfabric/switch/reset,
                     the links up after down_ms

Virtual time runs the same events in sf-sim (tools/lab/sim.py). Every
command sent is logged with its planned and actual time (ms since the
start) and whether the switch answered.
"""
import threading
import time

import events as evmod


def commands(topo, action):
    """[(switch, telemetry command)] for one action of events.actions()."""
    _, kind, target, value, _ = action
    if kind == "link":
        lk = topo.links[target]
        return [(sw, f"/softfabric/switch/port_admin,{port},{'up' if value else 'down'}")
                for sw, port in (lk.a, lk.b) if port]
    if kind == "blackhole":
        sw, port = target
        return [(sw, f"/softfabric/switch/port_blackhole,{port},{'on' if value else 'off'}")]
    if kind == "loss":
        lk = topo.links[target]
        sw, port = lk.a if lk.a[1] else lk.b
        return [(sw, f"/softfabric/switch/port_loss,{port},{value:g}")]
    if kind == "reset":
        return [(target, "/softfabric/switch/reset")]
    raise ValueError(f"unknown action {kind}")


class FaultDriver(threading.Thread):
    """Sends the commands of `topo.events` at their times after `t0_ns`
    (time.monotonic_ns()). `prefix_of(switch)` is the switch's DPDK file
    prefix; `send(prefix, cmd)` returns the reply or None."""

    def __init__(self, topo, prefix_of, t0_ns, send, log=print):
        super().__init__(name="sf-lab-faults", daemon=True)
        self.t = topo
        self.prefix_of = prefix_of
        self.t0_ns = t0_ns
        self.send = send
        self.say = log
        self.actions = evmod.actions(topo, topo.events)
        self.sent = []  # {"t_ms", "at_ms", "switch", "cmd", "ok"}
        self._halt = threading.Event()

    def run(self):
        for a in self.actions:
            due_ns = self.t0_ns + int(a[0] * 1e6)
            while True:
                left = (due_ns - time.monotonic_ns()) / 1e9
                if left <= 0:
                    break
                if self._halt.wait(min(left, 0.05)):
                    return
            for sw, cmd in commands(self.t, a):
                r = self.send(self.prefix_of(sw), cmd)
                at_ms = (time.monotonic_ns() - self.t0_ns) / 1e6
                self.sent.append({"t_ms": a[0], "at_ms": round(at_ms, 3), "switch": sw, "cmd": cmd,
                                  "ok": isinstance(r, dict)})
                if not isinstance(r, dict):
                    self.say(f"events: {sw} did not answer {cmd} at {at_ms:.1f} ms")

    def stop(self):
        self._halt.set()
        if self.is_alive():
            self.join(timeout=2)


def start(topo, prefix_of, t0_ns, send, log=print):
    """A running FaultDriver, or None when the topology has no events."""
    if not topo.events:
        return None
    d = FaultDriver(topo, prefix_of, t0_ns, send, log)
    d.start()
    return d
