#!/usr/bin/python3
"""A sharded switch in sf-lab / sf-sim topologies (tools/lab/topology.py "shards" /
"shard_map", tools/sf-sim plan switch entries; docs/lab.md, docs/sf-sim.md).

  1. The 2:1 nic incast (n0, n1 -> n2, DCQCN, 400G) with sw0 unsharded, with "shards": 2
     (Ethernet0/4 on shard 0, Ethernet8/12 on shard 1: the incast crosses the rings) and
     with a "shard_map" that puts every port on its own shard. Expect: exit 0, every flow
     complete, and the very same flows, ports, totals (marks, pauses, drops) and
     timeseries.jsonl as unsharded; the sf-sim plan gives sw0 its shard of every port, the
     switch report lists the shards, and their rings moved packets and release notes.
  2. Bad shard fields in the topology. Expect: exit 2 before anything runs, the message
     naming the JSON path: shards 0, shards above the port count, a shard_map missing a
     port, a shard_map naming an unknown port, a shard owning no port, both keys.
  3. Bad shard fields in an sf-sim plan. Expect: sf-sim exit 2 naming the plan path
     (switches.sw0.shards, switches.sw0.shard_map).
  4. The real-time side, without starting anything: `sf-lab check` names the shards and
     their --shard-map, and the EAL lcores a sharded sf-switch gets (one per shard, all
     floating over the lab's CPUs).

Usage: lab_shards_test.py --build BUILD_DIR --source SOURCE_DIR
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

PORTS = ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def topology(src, d, name, **sw):
    t = {"name": "shards-test", "duration_s": 1, "ts_period_ms": 10, "sim": {"speed_gbps": 400, "seed": 3},
         "nodes": {"sw0": {"kind": "switch", "config": os.path.join(src, "config", "switch",
                                                                   "seed000-static-lossless.json"), **sw},
                   "n0": {"kind": "nic", "process": "senders"}, "n1": {"kind": "nic", "process": "senders"},
                   "n2": {"kind": "nic", "process": "receiver"}},
         "links": [{"a": "n0", "b": "sw0:Ethernet0", "speed_gbps": 400},
                   {"a": "n1", "b": "sw0:Ethernet4", "speed_gbps": 400},
                   {"a": "n2", "b": "sw0:Ethernet8", "speed_gbps": 400}],
         "workloads": [{"name": "incast", "type": "incast", "senders": ["n0", "n1"], "receiver": "n2",
                        "size_bytes": "2MiB", "message_bytes": "64KiB"}]}
    path = os.path.join(d, f"{name}.json")
    with open(path, "w") as f:
        json.dump(t, f)
    return path


def sf_lab(src, build, topo, out):
    cmd = [sys.executable, os.path.join(src, "tools", "sf-lab"), "run", "--sim", topo, "--out", out, "--build", build]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=150)


def run_ok(src, build, d, name, **sw):
    out = os.path.join(d, name)
    r = sf_lab(src, build, topology(src, d, name, **sw), out)
    if r.returncode != 0:
        fail(f"{name}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    res = json.load(open(os.path.join(out, "results.json")))
    for f in res["flows"]:
        if not f["complete"] or f["bytes_received"] != 2 << 20:
            fail(f"{name}: flow {f['name']} complete {f['complete']}, received {f['bytes_received']}")
    ts = open(os.path.join(out, "timeseries.jsonl")).read()
    rep = json.load(open(os.path.join(out, "switch-sw0-report.json")))
    plan = json.load(open(os.path.join(out, "run", "sim-plan.json")))
    return res, ts, rep, plan


def case_same(src, build, d):
    base, base_ts, base_rep, base_plan = run_ok(src, build, d, "one")
    if not isinstance(base_plan["switches"]["sw0"], str) or "shards" in base_rep:
        fail(f"unsharded: plan entry {base_plan['switches']['sw0']}, report shards {base_rep.get('shards')}")
    if base["totals"]["ecn_marked"] == 0:
        fail("the 2:1 incast at 400G made no ECN marks (nothing to compare)")
    for name, sw, want_map in (("two", {"shards": 2}, [0, 0, 1, 1]),
                               ("four", {"shard_map": {"Ethernet0": 3, "Ethernet4": 1, "Ethernet8": 0,
                                                       "Ethernet12": 2}}, [3, 1, 0, 2])):
        res, ts, rep, plan = run_ok(src, build, d, name, **sw)
        entry = plan["switches"]["sw0"]
        if not isinstance(entry, dict) or entry.get("shard_map") != dict(zip(PORTS, want_map)):
            fail(f"{name}: sim plan entry {entry}")
        shards = rep.get("shards", [])
        if len(shards) != max(want_map) + 1:
            fail(f"{name}: report shards {shards}")
        if [p["shard"] for p in rep["ports"]] != want_map:
            fail(f"{name}: port shards {[p.get('shard') for p in rep['ports']]}")
        if sum(s["forwarded"] for s in shards) == 0 or sum(s["releases_sent"] for s in shards) == 0:
            fail(f"{name}: nothing crossed the rings {shards}")
        if sum(s["ring_full"] for s in shards) != 0 or \
                sum(s["releases_sent"] for s in shards) != sum(s["releases_received"] for s in shards):
            fail(f"{name}: ring counters {shards}")
        for key in ("flows", "ports", "totals"):
            if res[key] != base[key]:
                fail(f"{name}: results.json {key} differ from unsharded:\n{json.dumps(res[key])[:2000]}\n"
                     f"vs\n{json.dumps(base[key])[:2000]}")
        if ts != base_ts:
            fail(f"{name}: timeseries.jsonl differs from unsharded")
        crossed = sum(s["forwarded"] for s in shards)
        print(f"{name}: {crossed} packets crossed shards; flows, ports, totals and time series as unsharded")
    print(f"PASS same: 2 and 4 shards = unsharded ({base['totals']['ecn_marked']} marks)")


def case_bad_topology(src, build, d):
    cases = [({"shards": 0}, "nodes.sw0.shards: 0 is out of range [1, 4]"),
             ({"shards": 5}, "nodes.sw0.shards: 5 is out of range [1, 4]"),
             ({"shards": "2"}, "nodes.sw0.shards: want a number"),
             ({"shard_map": {"Ethernet0": 0, "Ethernet4": 1, "Ethernet8": 1}},
              "nodes.sw0.shard_map: port 'Ethernet12' has no shard"),
             ({"shard_map": {"Ethernet0": 0, "Ethernet4": 1, "Ethernet8": 1, "Ethernet12": 1, "Ethernet16": 0}},
              "nodes.sw0.shard_map.Ethernet16: the switch config has no port 'Ethernet16'"),
             ({"shard_map": {"Ethernet0": 0, "Ethernet4": 2, "Ethernet8": 2, "Ethernet12": 2}},
              "nodes.sw0.shard_map: shard 1 owns no port"),
             ({"shard_map": {"Ethernet0": 0, "Ethernet4": 1, "Ethernet8": 9, "Ethernet12": 1}},
              "nodes.sw0.shard_map.Ethernet8: want a shard number 0..3"),
             ({"shards": 2, "shard_map": {}}, "nodes.sw0: give 'shards' or 'shard_map', not both")]
    for i, (sw, want) in enumerate(cases):
        out = os.path.join(d, f"bad{i}")
        r = sf_lab(src, build, topology(src, d, f"bad{i}", **sw), out)
        if r.returncode != 2 or want not in r.stderr:
            fail(f"bad topology {sw}: exit {r.returncode}, stderr {r.stderr!r}, want {want!r}")
        if os.path.exists(os.path.join(out, "results.json")):
            fail(f"bad topology {sw}: results.json written")
    print(f"PASS bad_topology: {len(cases)} bad shard fields refused with their path")


def case_bad_plan(src, build, d):
    run = os.path.join(d, "one", "run")
    plan = json.load(open(os.path.join(run, "sim-plan.json")))
    cfg = plan["switches"]["sw0"]
    cases = [({"config": cfg, "shards": 9}, "switches.sw0.shards: 9 out of range [1, 4]"),
             ({"config": cfg, "shard_map": {"Ethernet0": 0}},
              "switches.sw0.shard_map: port \"Ethernet4\" has no shard"),
             ({"config": cfg, "shard_map": {"Ethernet0": 0, "Ethernet4": 0, "Ethernet8": 0, "Ethernet12": 0,
                                            "Ethernet99": 1}}, "switches.sw0.shard_map.Ethernet99"),
             ({"config": cfg, "shard_map": {"Ethernet0": 0, "Ethernet4": 2, "Ethernet8": 2, "Ethernet12": 2}},
              "switches.sw0.shard_map: shard 1 owns no port"),
             ({"config": cfg, "shardz": 2}, "switches.sw0")]
    for i, (entry, want) in enumerate(cases):
        bad = os.path.join(run, f"plan-bad{i}.json")
        json.dump(dict(plan, switches={"sw0": entry}), open(bad, "w"))
        r = subprocess.run([os.path.join(build, "tools", "sf-sim", "sf-sim"), bad, "--out", os.path.join(d, f"pb{i}")],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 2 or want not in r.stderr:
            fail(f"bad plan {entry}: exit {r.returncode}, stderr {r.stderr!r}, want {want!r}")
    print(f"PASS bad_plan: {len(cases)} bad sf-sim switch entries refused with their path")


def case_real_argv(src, d):
    topo = topology(src, d, "check", shard_map={"Ethernet0": 0, "Ethernet4": 2, "Ethernet8": 1, "Ethernet12": 1})
    r = subprocess.run([sys.executable, os.path.join(src, "tools", "sf-lab"), "check", topo],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or "3 shards (--shard-map 0,2,1,1)" not in r.stdout:
        fail(f"sf-lab check: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    sys.path.insert(0, os.path.join(src, "tools", "lab"))
    import launch  # noqa: E402
    cpus = ",".join(map(str, sorted(os.sched_getaffinity(0))))
    if launch.eal_cpus() != ["--lcores", f"0@({cpus})"] or launch.eal_cpus(3) != ["--lcores", f"(0-2)@({cpus})"]:
        fail(f"EAL lcores: {launch.eal_cpus()} / {launch.eal_cpus(3)}")
    print("PASS real_argv: sf-lab check shows the shard map; 3 shards get EAL lcores 0-2")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    build, src = os.path.abspath(a.build), os.path.abspath(a.source)
    with tempfile.TemporaryDirectory(prefix="lab-shards-") as d:
        case_same(src, build, d)
        case_bad_topology(src, build, d)
        case_bad_plan(src, build, d)
        case_real_argv(src, d)


if __name__ == "__main__":
    main()
