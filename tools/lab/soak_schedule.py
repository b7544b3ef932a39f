"""The chaos soak's fault schedule (docs/soak.md): drawn from a seed, the same
for the real-time soak (tools/lab/soak.py) and its virtual-time twin
(tools/lab/soak_sim.py), which runs the kinds sf-sim has (nic_kill,
mrc_kill and pktio_kill as a host's link down and up, link_flap, loss,
blackhole, reset, and the rogue host's pfc_storm and malformed_burst as
frames injected into its switch port) on a scaled clock.

Each kind has its own random stream (seeded by "SEED:KIND"), so the times of
one kind do not depend on which other kinds are on: the twin's link flaps
fall where the real run's do. Arrivals are exponential with the kind's
mean_s; each event's parameters come from the same stream.

Only the standard library is used; nothing reads a clock.
"""
import json
import random

KINDS = ("nic_kill", "mrc_kill", "pktio_kill", "link_flap", "pfc_storm", "malformed_burst", "bad_command", "bad_config",
         "loss", "blackhole", "reset")
# What sf-sim's events can do: a killed host process is its link down, then
# up again when it restarts (nic_kill, mrc_kill, pktio_kill); PFC storms and
# malformed bursts are frames sf-sim injects into the rogue port (its
# `inject` event); bad telemetry commands and bad configs have no sf-sim
# counterpart (they test the real process's front end).
SIM_KINDS = ("nic_kill", "mrc_kill", "pktio_kill", "link_flap", "pfc_storm", "malformed_burst", "loss", "blackhole",
             "reset")
PARAMS = {  # kind -> allowed keys besides mean_s
    "nic_kill": set(), "mrc_kill": set(), "pktio_kill": {"down_s"}, "link_flap": {"down_s"}, "pfc_storm": {"len_s"},
    "malformed_burst": {"frames"}, "bad_command": set(), "bad_config": set(),
    "loss": {"len_s", "rate"}, "blackhole": {"len_s"}, "reset": set(),
}


class ScheduleError(ValueError):
    pass


def load(path):
    """The soak config (config/soak/soak.json), checked: errors name the JSON path."""
    try:
        with open(path) as f:
            cfg = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ScheduleError(f"{path}: {e}") from None
    ev = cfg.get("events")
    if not isinstance(ev, dict) or not ev:
        raise ScheduleError(f"{path}: events: want an object of kind -> {{mean_s, ...}}")
    for k, v in ev.items():
        p = f"{path}: events.{k}"
        if k not in KINDS:
            raise ScheduleError(f"{p}: unknown kind; known: {', '.join(KINDS)}")
        if not isinstance(v, dict):
            raise ScheduleError(f"{p}: want an object")
        for key in v:
            if key != "mean_s" and key not in PARAMS[k]:
                raise ScheduleError(f"{p}: unknown key '{key}'; known: mean_s {' '.join(sorted(PARAMS[k]))}")
        m = v.get("mean_s")
        if isinstance(m, bool) or not isinstance(m, (int, float)) or m <= 0:
            raise ScheduleError(f"{p}.mean_s: want a number of seconds > 0, got {json.dumps(m)}")
        for key in PARAMS[k] & set(v):
            r = v[key]
            if (not isinstance(r, list) or len(r) != 2 or not all(isinstance(x, (int, float)) for x in r)
                    or r[0] > r[1] or r[0] < 0):
                raise ScheduleError(f"{p}.{key}: want [lo, hi] with 0 <= lo <= hi, got {json.dumps(r)}")
    return cfg


def _uniform(rng, r):
    return rng.uniform(r[0], r[1])


def draw(cfg, seed, duration_s, kinds=None, fault_ports=(), kill_targets=(), bad_commands=1, bad_configs=1):
    """[{"t_s", "kind", ...params}] sorted by time, for events starting in
    [0, duration_s). kinds: the kinds to draw (default: every configured one).
    fault_ports: ports link_flap / loss / blackhole pick from; kill_targets:
    pktio_kill targets; bad_commands / bad_configs: how many variants there
    are (an index is drawn)."""
    out = []
    for kind in KINDS:
        spec = cfg["events"].get(kind)
        if spec is None or (kinds is not None and kind not in kinds):
            continue
        rng = random.Random(f"{seed}:{kind}")
        t = 0.0
        while True:
            t += rng.expovariate(1.0 / spec["mean_s"])
            if t >= duration_s:
                break
            e = {"t_s": round(t, 6), "kind": kind}
            if kind in ("nic_kill", "mrc_kill"):
                e["side"] = rng.choice(("server", "client"))
            elif kind == "pktio_kill":
                e["target"] = rng.choice(list(kill_targets) or ["gen"])
                e["down_s"] = round(_uniform(rng, spec.get("down_s", [0.2, 1.0])), 6)
            elif kind == "link_flap":
                e["port"] = rng.choice(list(fault_ports))
                e["down_s"] = round(_uniform(rng, spec.get("down_s", [0.05, 0.5])), 6)
            elif kind == "pfc_storm":
                e["len_s"] = round(_uniform(rng, spec.get("len_s", [0.5, 2.0])), 6)
            elif kind == "malformed_burst":
                e["frames"] = int(_uniform(rng, spec.get("frames", [500, 2000])))
                e["seed"] = rng.randrange(1 << 30)
            elif kind == "bad_command":
                e["variant"] = rng.randrange(max(1, bad_commands))
            elif kind == "bad_config":
                e["variant"] = rng.randrange(max(1, bad_configs))
            elif kind == "loss":
                e["port"] = rng.choice(list(fault_ports))
                e["len_s"] = round(_uniform(rng, spec.get("len_s", [0.5, 2.0])), 6)
                e["rate"] = round(_uniform(rng, spec.get("rate", [0.001, 0.05])), 6)
            elif kind == "blackhole":
                e["port"] = rng.choice(list(fault_ports))
                e["len_s"] = round(_uniform(rng, spec.get("len_s", [0.1, 1.0])), 6)
            out.append(e)
    out.sort(key=lambda e: (e["t_s"], e["kind"]))
    return out


def counts(schedule):
    c = {}
    for e in schedule:
        c[e["kind"]] = c.get(e["kind"], 0) + 1
    return dict(sorted(c.items()))
