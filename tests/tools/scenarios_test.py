#!/usr/bin/python3
"""The shipped scenarios (config/scenarios/, docs/scenarios.md) in virtual time,
each pair held to the outcome its documentation claims, from results.json and
the time series sf-lab wrote.

  1. drift-static: a 3:1 RDMA incast, seed-000 static profile. Expect: exit 0,
     every byte delivered, the hot queue deeper than Kmin (120 KiB) and ECN marks.
  2. drift-dynamic: the same with dynamic-drift.json. Expect: exit 0, every byte
     delivered, no ECN mark and no CNP although the switch buffers more than Kmin
     (150 KiB) at some point, the hot queue itself never reaching Kmin, PFC pauses.
  3. pfc-storm-wd-on: a receiver that keeps its port paused, PFC_WD on. Expect:
     the run limit ends it (the stormed flow cannot finish: exit 1), the watchdog
     stormed the queue toward it (storm events, pfcwd_drop drops, pfc_wd_stormed
     seen in the time series), the healthy flow got all its 64 MiB through, and the
     PFC curves are a time series (pause counts rising over many samples).
  4. pfc-storm-wd-off: the same without the watchdog. Expect: no storm event, the
     switch paused the sender, the healthy receiver got (almost) nothing after the
     first millisecond: under 1 % of what it got with the watchdog.
  5. incast-dcqcn-on / -off: an 8:1 incast with and without DCQCN. Expect: both
     exit 0 with every byte; with DCQCN the senders received CNPs and were cut, the
     hot queue's mean depth over the second half of the run is under 0.75 x the
     uncontrolled one, and fewer PFC pauses were sent.

Usage: scenarios_test.py --build BUILD_DIR --source SOURCE_DIR
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

MIB = 1 << 20


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run(src, build, name, d, want_rc=0):
    out = os.path.join(d, name)
    cmd = [sys.executable, os.path.join(src, "tools", "sf-lab"), "run", "--sim",
           os.path.join(src, "config", "scenarios", f"{name}.json"), "--out", out, "--build", build]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    check(r.returncode == want_rc, f"{name}: exit {r.returncode}, want {want_rc}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    res = json.load(open(os.path.join(out, "results.json")))
    check(res["run"].get("virtual_time"), f"{name}: not a virtual-time run")
    ts = [json.loads(line) for line in open(os.path.join(out, "timeseries.jsonl"))]
    sw = [r for r in ts if r["source"] == "switch:sw0"]
    tel = [r for r in ts if r["source"] == "lab:telemetry"]
    nic = {}
    for fn in sorted(os.listdir(out)):
        if fn.startswith("timeseries-nic-"):
            for line in open(os.path.join(out, fn)):
                r = json.loads(line)
                for h, v in r["hosts"].items():
                    nic.setdefault(h, []).append((r["t_s"], v))
    rep = json.load(open(os.path.join(out, "switch-sw0-report.json")))
    return {"res": res, "sw": sw, "tel": tel, "nic": nic, "rep": rep, "out": out}


def flows(r):
    return {f["name"]: f for f in r["res"]["flows"]}


def all_delivered(r, name, size):
    for f in r["res"]["flows"]:
        check(f["bytes_received"] == size, f"{name}: flow {f['name']} received {f['bytes_received']} of {size}")


def depth(sample, port, q=3):
    return sample["ports"][port]["queues"][q][0]


def rx_between(rows, t_lo):
    """Bytes a host received from virtual t_lo to the end of its series."""
    base = next((v["rx_bytes"] for t, v in rows if t >= t_lo), rows[-1][1]["rx_bytes"])
    return rows[-1][1]["rx_bytes"] - base


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    build, src = os.path.abspath(a.build), os.path.abspath(a.source)
    if not os.access(os.path.join(build, "tools", "sf-sim", "sf-sim"), os.X_OK):
        print("SKIP: tools/sf-sim/sf-sim is not built")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="scenarios-") as d:
        # 1. drift-static
        st = run(src, build, "drift-static", d)
        all_delivered(st, "drift-static", 4 * MIB)
        kmin_static = 122880
        check(max(depth(s, "Ethernet12") for s in st["sw"]) > kmin_static, "drift-static: the queue never passed Kmin")
        check(st["res"]["totals"]["ecn_marked"] > 0, "drift-static: no ECN marks")
        # 2. drift-dynamic
        dy = run(src, build, "drift-dynamic", d)
        all_delivered(dy, "drift-dynamic", 4 * MIB)
        kmin_dyn = 153600
        t = dy["res"]["totals"]
        check(t["ecn_marked"] == 0 and t["cnp_sent"] == 0, f"drift-dynamic: marks {t['ecn_marked']}, CNPs {t['cnp_sent']}")
        check(max(s["buffer_used_bytes"] for s in dy["sw"]) > kmin_dyn,
              "drift-dynamic: the switch never buffered more than Kmin")
        check(max(depth(s, "Ethernet12") for s in dy["sw"]) < kmin_dyn,
              "drift-dynamic: the hot queue reached Kmin (the drift should keep it under)")
        check(t["pfc_pause_sent"] > 0, "drift-dynamic: no PFC pause: the incast was not absorbed by PFC")
        print(f"drift: static {st['res']['totals']['ecn_marked']} marks; dynamic 0 marks, "
              f"buffer max {max(s['buffer_used_bytes'] for s in dy['sw'])} B, {t['pfc_pause_sent']} pauses")
        # 3. pfc-storm-wd-on (the stormed flow never completes: the run limit ends the run, exit 1)
        on = run(src, build, "pfc-storm-wd-on", d, want_rc=1)
        check("run_limit" in on["res"]["run"]["stop_reason"], f"wd-on: stop reason {on['res']['run']['stop_reason']}")
        storms = [e for e in on["rep"]["pfc_wd_events"]["log"] if e["event"] == "storm"]
        check(storms and storms[0]["port"] == "Ethernet8", f"wd-on: no storm on Ethernet8: {storms[:2]}")
        check(200 <= storms[0]["t_us"] <= 260, f"wd-on: first storm at {storms[0]['t_us']} us (detection 200 us)")
        drops = sum(p["drops"].get("pfcwd_drop", 0) for p in on["res"]["ports"])
        check(drops > 0, "wd-on: the watchdog dropped nothing")
        check(any(s["ports"]["Ethernet8"].get("pfc_wd_stormed") for s in on["sw"]),
              "wd-on: pfc_wd_stormed never set in the time series")
        check(flows(on)["healthy"]["bytes_received"] == 64 * MIB,
              f"wd-on: healthy flow got {flows(on)['healthy']['bytes_received']} of {64 * MIB}")
        rx = [s["switches"]["sw0"]["Ethernet8"]["rx_pause"] for s in on["tel"]]
        check(len(set(rx)) > 10 and rx == sorted(rx), f"wd-on: PFC rx_pause is not a rising time series ({len(set(rx))} values)")
        good_on = rx_between(on["nic"]["good"], 0.001)
        # 4. pfc-storm-wd-off
        off = run(src, build, "pfc-storm-wd-off", d, want_rc=1)
        check(off["rep"]["pfc_wd_events"]["total"] == 0, "wd-off: watchdog events without a watchdog")
        s0 = next(p for p in off["res"]["ports"] if p["port"] == "Ethernet0")
        check(s0["pfc_pause_sent"] > 0, "wd-off: the switch never paused the sender")
        good_off = rx_between(off["nic"]["good"], 0.001)
        check(good_on > 32 * MIB, f"wd-on: the healthy receiver got only {good_on} B after 1 ms")
        check(good_off < 0.01 * good_on, f"wd-off: the healthy receiver got {good_off} B after 1 ms (wd on: {good_on})")
        print(f"storm: healthy after 1 ms: wd on {good_on} B, wd off {good_off} B; {len(storms)} storms, {drops} drops")
        # 5. incast-dcqcn-on / off
        res = {}
        for cc in ("on", "off"):
            r = run(src, build, f"incast-dcqcn-{cc}", d)
            all_delivered(r, f"incast-dcqcn-{cc}", 10 * MIB)
            q = [depth(s, "Ethernet32") for s in r["sw"]]
            late = q[len(q) // 2:]
            res[cc] = (r, sum(late) / len(late))
        (ron, qon), (roff, qoff) = res["on"], res["off"]
        cnp_rx = sum(h.get("cnp_received", 0) for n, h in ron["res"]["hosts"].items() if n.startswith("s"))
        check(cnp_rx > 0, "dcqcn-on: the senders received no CNP")
        check(qon < 0.75 * qoff, f"dcqcn: late mean queue on {qon:.0f} B, off {qoff:.0f} B (want on < 0.75 x off)")
        pon, poff = ron["res"]["totals"]["pfc_pause_sent"], roff["res"]["totals"]["pfc_pause_sent"]
        check(pon < poff, f"dcqcn: PFC pauses on {pon}, off {poff}")
        print(f"dcqcn: late mean queue on {qon:.0f} B, off {qoff:.0f} B; PFC {pon} vs {poff}; CNPs received {cnp_rx}")
    print("PASS scenarios")


if __name__ == "__main__":
    main()
