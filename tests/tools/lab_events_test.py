#!/usr/bin/python3
"""Topology `events` (tools/lab/events.py, docs/lab.md "Events").

Cases:
  validate  1. Bad events are refused at load with the JSON path (unknown kind,
               port, switch; down_ms >= period_ms; a time past duration_s; both
               port and switch; a rate outside [0, 1]; an unknown key).
            2. A flap expands to down/up pairs, a reboot to every link of the
               switch down + reset + up, a switch blackhole to every port;
               the plot markers are the starts and ends.
  sim       3. sf-lab run --sim of a 2:1 nic incast (1 Gb/s) with a link flap
               on n1's link, a blackhole of n0's port that ends, and a loss
               rate on n0's link. Expect: exit 0 (RC recovers every loss), all
               bytes delivered, results.json "events" as planned, the switch
               port of n1 saw down_events, the plan carries the events, the
               plots are written; the same seed twice gives identical
               results.json.
  realtime  4. sf-lab run (real processes, root) of the two-switch pktio incast with the
               switch-switch link down at 20 ms and up at 200 ms, a blackhole, a loss
               rate and a reboot of leaf1. Expect: exit 0, every telemetry command
               answered (results.json events.sent), frames dropped under the fault
               causes (port_down / link_down), the byte conservation holding with
               them, down_events on both ends of the link, the plots written.

Usage: lab_events_test.py --build BUILD_DIR --source SOURCE_DIR CASE
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def topology(src, d, events, name="ev"):
    t = {"name": f"events-{name}", "duration_s": 1, "ts_period_ms": 10,
         "nodes": {"sw0": {"kind": "switch", "config": os.path.join(src, "config", "switch",
                                                                   "seed000-static-lossless.json")},
                   "n0": {"kind": "nic", "process": "senders"}, "n1": {"kind": "nic", "process": "senders"},
                   "n2": {"kind": "nic", "process": "receiver"}},
         "links": [{"a": "n0", "b": "sw0:Ethernet0", "speed_gbps": 1},
                   {"a": "n1", "b": "sw0:Ethernet4", "speed_gbps": 1},
                   {"a": "n2", "b": "sw0:Ethernet8", "speed_gbps": 1}],
         "workloads": [{"name": "incast", "type": "incast", "senders": ["n0", "n1"], "receiver": "n2",
                        "size_bytes": "1MiB", "message_bytes": "64KiB"}],
         "events": events}
    path = os.path.join(d, f"topo-{name}.json")
    with open(path, "w") as f:
        json.dump(t, f)
    return path


def case_validate(a):
    sys.path.insert(0, os.path.join(a.source, "tools", "lab"))
    import events
    import topology as tp
    bad = [
        ({"kind": "boom"}, "events[0].kind: \"boom\" is not one of"),
        ({"kind": "link_down", "link": "sw0:Ethernet99", "at_ms": 1}, "events[0].link: switch sw0 has no port"),
        ({"kind": "link_down", "link": "n9", "at_ms": 1}, "events[0].link: unknown node 'n9'"),
        ({"kind": "flap", "link": "n0", "from_ms": 1, "until_ms": 9, "period_ms": 2, "down_ms": 2},
         "events[0].down_ms: 2 ms: must be shorter than period_ms 2"),
        ({"kind": "link_up", "link": "n0", "at_ms": 5000}, "events[0].at_ms: 5000 ms is outside the run"),
        ({"kind": "blackhole", "port": "sw0:Ethernet0", "switch": "sw0", "at_ms": 1}, "events[0]: name either"),
        ({"kind": "loss", "link": "n0", "rate": 1.5}, "events[0].rate: want a probability"),
        ({"kind": "reboot", "switch": "n0", "at_ms": 1, "down_ms": 1}, "events[0].switch: unknown switch \"n0\""),
        ({"kind": "link_down", "link": "n0", "at_ms": 1, "when": 2}, "events[0]: unknown key 'when'"),
    ]
    with tempfile.TemporaryDirectory() as d:
        for ev, want in bad:
            try:
                tp.load(topology(a.source, d, [ev]))
                fail(f"accepted {ev}")
            except tp.TopologyError as e:
                check(str(e).startswith(want), f"{ev}: message '{e}', want it to start with '{want}'")
        t = tp.load(topology(a.source, d, [
            {"kind": "flap", "link": "n1", "from_ms": 10, "until_ms": 31, "period_ms": 10, "down_ms": 2},
            {"kind": "reboot", "switch": "sw0", "at_ms": 50, "down_ms": 5},
            {"kind": "blackhole", "switch": "sw0", "at_ms": 60, "until_ms": 70}]))
        acts = events.actions(t, t.events)
        flap = [(x[0], x[3]) for x in acts if x[4] == 0]
        check(flap == [(10, False), (12, True), (20, False), (22, True), (30, False), (31, True)], f"flap {flap}")
        reboot = [(x[0], x[1], x[3]) for x in acts if x[4] == 1]
        check(reboot == [(50, "link", False)] * 3 + [(50, "reset", None)] + [(55, "link", True)] * 3, f"reboot {reboot}")
        bh = [x for x in acts if x[4] == 2]
        check(len(bh) == 2 * len(t.switches["sw0"].ports), f"switch blackhole: {len(bh)} actions")
        marks = events.markers(t, t.events)
        check([m[0] for m in marks] == [0.01, 0.031, 0.05, 0.055, 0.06, 0.07], f"markers {marks}")
    print("PASS validate")


def run_sim(a, topo, out):
    r = subprocess.run([os.path.join(a.source, "tools", "sf-lab"), "run", "--sim", topo, "--out", out,
                        "--build", a.build, "--seed", "3"], capture_output=True, text=True, timeout=150)
    return r


def case_sim(a):
    evs = [{"kind": "flap", "link": "n1", "from_ms": 2, "until_ms": 6, "period_ms": 2, "down_ms": 0.1},
           {"kind": "blackhole", "port": "sw0:Ethernet0", "at_ms": 3, "until_ms": 3.2},
           {"kind": "loss", "link": "n0", "rate": 0.001, "at_ms": 1}]
    with tempfile.TemporaryDirectory() as d:
        topo = topology(a.source, d, evs, "sim")
        res = []
        for k in range(2):
            out = os.path.join(d, f"out{k}")
            r = run_sim(a, topo, out)
            check(r.returncode == 0, f"sf-lab run --sim exit {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
            with open(os.path.join(out, "results.json")) as f:
                res.append(json.load(f))
            with open(os.path.join(out, "run", "sim-plan.json")) as f:
                plan = json.load(f)
            check([e["kind"] for e in plan.get("events", [])] == ["flap", "blackhole", "loss"], f"plan {plan.get('events')}")
            for p in ("queue_depth.png", "marks_pauses.png", "flow_throughput.png"):
                check(os.path.getsize(os.path.join(out, p)) > 0, f"no {p}")
        r0 = res[0]
        check(r0["events"]["virtual_time"] and len(r0["events"]["planned"]) == 3, f"events {r0.get('events')}")
        for fl in r0["flows"]:
            check(fl.get("complete") or fl.get("bytes") == fl.get("size_bytes"), f"flow incomplete {fl}")
        with open(os.path.join(d, "out0", "switch-sw0-report.json")) as f:
            sw = json.load(f)
        e4 = [p for p in sw["ports"] if p["name"] == "Ethernet4"][0]
        check(e4["down_events"] == 2, f"Ethernet4 down_events {e4['down_events']} (two flaps)")
        check(json.dumps(res[0], sort_keys=True) == json.dumps(res[1], sort_keys=True), "two runs differ")
    print("PASS sim")


def case_realtime(a):
    if os.geteuid() != 0:
        print("SKIP: needs root")
        return 77
    with open(os.path.join(a.source, "config", "topologies", "two-switch-incast.json")) as f:
        t = json.load(f)
    t["duration_s"] = 4
    t["events"] = [{"kind": "link_down", "link": "leaf0:Ethernet12", "at_ms": 20},
                   {"kind": "link_up", "link": "leaf0:Ethernet12", "at_ms": 200},
                   {"kind": "blackhole", "port": "leaf1:Ethernet0", "at_ms": 250, "until_ms": 300},
                   {"kind": "loss", "link": "h0", "rate": 0.01, "at_ms": 300},
                   {"kind": "reboot", "switch": "leaf1", "at_ms": 350, "down_ms": 50}]
    with tempfile.TemporaryDirectory() as d:
        topo = os.path.join(d, "two-switch-events.json")
        with open(topo, "w") as f:
            json.dump(t, f)
        out = os.path.join(d, "out")
        r = subprocess.run([os.path.join(a.source, "tools", "sf-lab"), "run", topo, "--out", out, "--build", a.build,
                            "--no-console"], capture_output=True, text=True, timeout=200)
        check(r.returncode == 0, f"sf-lab run exit {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}")
        with open(os.path.join(out, "results.json")) as f:
            res = json.load(f)
        sent = res["events"]["sent"]
        print("events sent:", json.dumps(sent))
        # link down/up: 2 ends each; blackhole on/off; loss; reboot: leaf1's links (to leaf0: both
        # ends; to r0: its own end) down, reset, up.
        check(len(sent) == 4 + 2 + 1 + (3 + 1 + 3) and all(c["ok"] for c in sent), f"commands {sent}")
        check(not res["events"]["virtual_time"], "events.virtual_time")
        fault = sum(p["drops"].get(k, 0) for p in res["ports"] for k in ("port_down", "link_down"))
        check(fault > 0, f"no frame dropped by the link down: {[(p['switch'], p['port'], p['drops']) for p in res['ports']]}")
        check(res["conservation"]["ok"], f"conservation {res['conservation'].get('equation')}")
        for sw in ("leaf0", "leaf1"):
            with open(os.path.join(out, f"switch-{sw}-report.json")) as f:
                rep = json.load(f)
            e12 = [p for p in rep["ports"] if p["name"] == "Ethernet12"][0]
            check(e12["down_events"] >= 2 and e12["admin_status"] == "up", f"{sw} Ethernet12 {e12['down_events']}")
        for p in ("queue_depth.png", "marks_pauses.png", "flow_throughput.png"):
            check(os.path.getsize(os.path.join(out, p)) > 0, f"no {p}")
    print("PASS realtime")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("case", choices=["validate", "sim", "realtime"])
    a = ap.parse_args()
    return {"validate": case_validate, "sim": case_sim, "realtime": case_realtime}[a.case](a) or 0


if __name__ == "__main__":
    sys.exit(main())
