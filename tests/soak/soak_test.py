#!/usr/bin/python3
"""The chaos soak (docs/soak.md, issue 17 section 6).

Cases:
  schedule  The fault schedule (tools/lab/soak_schedule.py): the same seed
            draws the same schedule, another seed another; a kind's events do
            not depend on which other kinds are drawn (the virtual-time twin's
            link flaps fall where the real run's do); every kind of
            config/soak/soak.json is drawn in 60 s; bad configs are refused
            naming the JSON path.
  realtime  tools/lab/soak.py for 60 s (seed 1, root): real sf-switch, sf-nic
            and sf-pktio processes under kills, link flaps, PFC storms,
            malformed bursts, bad telemetry commands and bad configs, loss,
            blackholes and resets; exit 0 means every check of soak.py held
            (no crash, conservation, mempool at baseline, every RDMA transfer
            byte-exact or a QP error, no leftovers). Also asserted here: every
            fault kind was injected, at least one transfer completed and one
            peer was killed.
  sim       tools/lab/soak_sim.py: the same schedule's sim kinds in virtual
            time, twice with the same seed (identical trace_hash and switch
            report), over a million simulator events, with the same
            conservation checks and the mbuf pool back to 0.

Usage: soak_test.py --build BUILD_DIR --source SOURCE_DIR CASE
Exit 0 pass, 77 skip (not root: realtime), 1 fail.
"""
import argparse
import json
import os
import sys
import tempfile


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def case_schedule(a):
    import soak_schedule as ss
    cfg = ss.load(os.path.join(a.source, "config", "soak", "soak.json"))
    ports = ["Ethernet0", "Ethernet4"]
    s1 = ss.draw(cfg, 1, 60, fault_ports=ports, kill_targets=["gen", "sink"], bad_commands=5, bad_configs=6)
    check(s1 == ss.draw(cfg, 1, 60, fault_ports=ports, kill_targets=["gen", "sink"], bad_commands=5, bad_configs=6),
          "same seed, different schedules")
    check(s1 != ss.draw(cfg, 2, 60, fault_ports=ports, kill_targets=["gen", "sink"]), "seeds 1 and 2 draw the same")
    check(set(ss.counts(s1)) == set(cfg["events"]), f"60 s drew only {ss.counts(s1)}")
    check(all(0 <= e["t_s"] < 60 for e in s1) and [e["t_s"] for e in s1] == sorted(e["t_s"] for e in s1),
          "times outside [0, 60) or unsorted")
    sim = ss.draw(cfg, 1, 60, kinds=ss.SIM_KINDS, fault_ports=ports, kill_targets=["gen", "sink"])
    check(sim == [e for e in s1 if e["kind"] in ss.SIM_KINDS], "the sim kinds' events depend on the other kinds")
    bad = [({"events": {"boom": {"mean_s": 1}}}, "events.boom: unknown kind"),
           ({"events": {"loss": {"mean_s": 0}}}, "events.loss.mean_s: want a number of seconds > 0"),
           ({"events": {"loss": {"mean_s": 1, "rate": [0.5, 0.1]}}}, "events.loss.rate: want [lo, hi]"),
           ({"events": {"reset": {"mean_s": 1, "down_s": [1, 2]}}}, "events.reset: unknown key 'down_s'"),
           ({"events": {}}, "events: want an object")]
    with tempfile.TemporaryDirectory() as d:
        for obj, want in bad:
            p = os.path.join(d, "c.json")
            with open(p, "w") as f:
                json.dump(obj, f)
            try:
                ss.load(p)
                fail(f"accepted {obj}")
            except ss.ScheduleError as e:
                check(want in str(e) and str(e).startswith(p), f"{obj}: message '{e}', want '{want}'")
    print("PASS schedule:", ss.counts(s1))
    return 0


def run_json(fn, argv):
    """Runs fn(argv) capturing its last stdout line (JSON)."""
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = fn(argv)
    out = buf.getvalue()
    sys.stdout.write(out[-6000:])
    last = [ln for ln in out.strip().splitlines() if ln.startswith("{")]
    return rc, (json.loads(last[-1]) if last else {})


def case_realtime(a):
    if os.geteuid() != 0:
        print("SKIP: needs root (huge pages, /var/run/dpdk)")
        return 77
    import soak
    rc, r = run_json(soak.main, ["--build", a.build, "--seconds", "60", "--seed", "1"])
    check(rc == 0, f"soak.py exit {rc}: failures {r.get('failures')}")
    want = {"nic_kill", "pktio_kill", "link_flap", "pfc_storm", "malformed_burst", "bad_command", "bad_config",
            "loss", "blackhole", "reset"}
    check(set(r["events_injected"]) == want, f"kinds injected {r['events_injected']}, want all of {sorted(want)}")
    check(r["rdma"]["outcomes"].get("completed", 0) >= 1, f"no RDMA transfer completed: {r['rdma']}")
    check(r["rdma"]["verify_errors"] == 0, f"verify errors {r['rdma']}")
    check(r["switch"]["conservation_ok"] and r["switch"]["rx_packets"] > 0, f"switch {r['switch']}")
    check(r["pktio"]["sink_rx"] > 0 and r["pktio"]["payload_errors"] == 0, f"pktio {r['pktio']}")
    print(f"PASS realtime: wall {r['wall_s']} s, injected {r['events_injected']}, rdma {r['rdma']['outcomes']}")
    return 0


def case_sim(a):
    import soak_schedule as ss
    import soak_sim
    rc, r = run_json(soak_sim.main, ["--build", a.build, "--seconds", "60", "--seed", "1", "--runs", "2",
                                     "--gbytes-per-flow", "0.5"])
    check(rc == 0, f"soak_sim.py exit {rc}: failures {r.get('failures')}")
    check(r["runs"] == 2 and r["sim_events"] >= 1_000_000, f"simulator events {r.get('sim_events')} (want >= 1e6)")
    check(set(r["faults"]) == set(ss.SIM_KINDS), f"faults {r['faults']}")
    check(r["mbufs"]["in_use_at_end"] == 0, f"mbufs {r['mbufs']}")
    print(f"PASS sim: {r['sim_events']} events, trace_hash {r['trace_hash']}, faults {r['faults']}")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("case", choices=["schedule", "realtime", "sim"])
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.source, "tools", "lab"))
    return {"schedule": case_schedule, "realtime": case_realtime, "sim": case_sim}[a.case](a)


if __name__ == "__main__":
    sys.exit(main())
