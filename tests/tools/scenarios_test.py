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
     exit 0 with every byte; with DCQCN the senders received CNPs, the hot
     queue's mean depth over the second half of the run is under 0.75 x the
     uncontrolled one, and fewer PFC pauses were sent.
  6. pfc-deadlock-wd-off / -on: five switches in a ring, each host writing two hops
     clockwise. Expect (the run limit ends both: exit 1): without the watchdog not
     one byte reaches a host after the first millisecond, and at the end every
     switch still holds bytes with its ring egress paused (a deadlock); with it the
     watchdog storms and drops, and more than 1 MiB reaches the hosts after 1 ms.
Also: `sf-lab check` refuses a nic host with pfc_generate but no rx_drain_gbps
(exit 2, naming nodes.bad.pfc_generate); `sf-lab compare` of the drift pair
writes its PNG and prints each run's marks; of a directory that is not a report,
exit 2. Each pair runs as two processes at once.

Usage: scenarios_test.py --build BUILD_DIR --source SOURCE_DIR
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def start(src, build, name, d):
    out = os.path.join(d, name)
    cmd = [sys.executable, os.path.join(src, "tools", "sf-lab"), "run", "--sim",
           os.path.join(src, "config", "scenarios", f"{name}.json"), "--out", out, "--build", build]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def pair(src, build, names, d, want_rc):
    """Both runs of a pair at once (two cores); returns their results in order."""
    t0 = time.monotonic()
    procs = [start(src, build, n, d) for n in names]
    out = [finish(p, n, d, want_rc) for p, n in zip(procs, names)]
    print(f"  {' + '.join(names)}: {time.monotonic() - t0:.1f} s wall")
    return out


def finish(p, name, d, want_rc):
    out = os.path.join(d, name)
    try:
        stdout, stderr = p.communicate(timeout=150)
    except subprocess.TimeoutExpired:
        p.kill()
        fail(f"{name}: sf-lab run --sim took more than 150 s")
    check(p.returncode == want_rc, f"{name}: exit {p.returncode}, want {want_rc}\n{stdout[-2000:]}\n{stderr[-2000:]}")
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
    return {"res": res, "sw": sw, "tel": tel, "nic": nic, "rep": rep, "out": out,
            "ts": ts}


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


def delivered_after(r, t_lo):
    """Lossless data (queue 3) the switches sent to their hosts (Ethernet0) from virtual t_lo to the end."""
    total = 0
    for src in {x["source"] for x in r["ts"] if x["source"].startswith("switch:")}:
        rows = [x for x in r["ts"] if x["source"] == src]
        a = next((x for x in rows if x["lab_t_s"] >= t_lo), rows[-1])
        total += rows[-1]["ports"]["Ethernet0"]["queues"][3][3] - a["ports"]["Ethernet0"]["queues"][3][3]
    return total


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
        # 0. A slow receiver must say what it drains at before it may pause (topology check, nothing runs).
        bad = json.load(open(os.path.join(src, "config", "scenarios", "pfc-storm-wd-on.json")))
        del bad["nodes"]["bad"]["rx_drain_gbps"]
        bad["nodes"]["sw0"]["config"] = os.path.join(src, bad["nodes"]["sw0"]["config"])
        with open(os.path.join(d, "bad.json"), "w") as f:
            json.dump(bad, f)
        r = subprocess.run([sys.executable, os.path.join(src, "tools", "sf-lab"), "check", os.path.join(d, "bad.json")],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and "nodes.bad.pfc_generate" in r.stderr, f"pfc_generate without rx_drain_gbps: "
              f"exit {r.returncode}, {r.stderr!r}")
        st, dy = pair(src, build, ["drift-static", "drift-dynamic"], d, 0)
        # 1. drift-static
        all_delivered(st, "drift-static", 4 * MIB)
        kmin_static = 122880
        check(max(depth(s, "Ethernet12") for s in st["sw"]) > kmin_static, "drift-static: the queue never passed Kmin")
        check(st["res"]["totals"]["ecn_marked"] > 0, "drift-static: no ECN marks")
        # 2. drift-dynamic
        all_delivered(dy, "drift-dynamic", 4 * MIB)
        kmin_dyn = 153600
        t = dy["res"]["totals"]
        check(t["ecn_marked"] == 0 and t["cnp_sent"] == 0, f"drift-dynamic: marks {t['ecn_marked']}, CNPs {t['cnp_sent']}")
        check(max(s["buffer_used_bytes"] for s in dy["sw"]) > kmin_dyn,
              "drift-dynamic: the switch never buffered more than Kmin")
        check(max(depth(s, "Ethernet12") for s in dy["sw"]) < kmin_dyn,
              "drift-dynamic: the hot queue reached Kmin (the drift should keep it under)")
        check(t["pfc_pause_sent"] > 0, "drift-dynamic: no PFC pause: the incast was not absorbed by PFC")
        # sf-lab compare: the pair side by side; a directory that is not a report is refused.
        png = os.path.join(d, "drift.png")
        r = subprocess.run([sys.executable, os.path.join(src, "tools", "sf-lab"), "compare", st["out"], dy["out"],
                            "--out", png], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and os.path.getsize(png) > 10000, f"compare: exit {r.returncode}\n{r.stderr}")
        check("drift-dynamic: ECN marks 0," in r.stdout and "drift-static: ECN marks 2" in r.stdout,
              f"compare: summary lines {r.stdout!r}")
        r = subprocess.run([sys.executable, os.path.join(src, "tools", "sf-lab"), "compare", st["out"], d,
                            "--out", os.path.join(d, "x.png")], capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and "not a report directory" in r.stderr, f"compare of a non-report: {r.returncode}")
        print(f"drift: static {st['res']['totals']['ecn_marked']} marks; dynamic 0 marks, "
              f"buffer max {max(s['buffer_used_bytes'] for s in dy['sw'])} B, {t['pfc_pause_sent']} pauses")
        # 3. pfc-storm-wd-on (the stormed flow never completes: the run limit ends the run, exit 1)
        on, off = pair(src, build, ["pfc-storm-wd-on", "pfc-storm-wd-off"], d, 1)
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
        check(flows(on)["healthy"]["complete"] and not flows(on)["stormed"]["complete"],
              f"wd-on: complete healthy {flows(on)['healthy']['complete']}, stormed {flows(on)['stormed']['complete']} "
              "(the run limit cut the stormed flow)")
        # 4. pfc-storm-wd-off
        check(off["rep"]["pfc_wd_events"]["total"] == 0, "wd-off: watchdog events without a watchdog")
        s0 = next(p for p in off["res"]["ports"] if p["port"] == "Ethernet0")
        check(s0["pfc_pause_sent"] > 0, "wd-off: the switch never paused the sender")
        good_off = rx_between(off["nic"]["good"], 0.001)
        check(good_on > 32 * MIB, f"wd-on: the healthy receiver got only {good_on} B after 1 ms")
        check(good_off < 0.01 * good_on, f"wd-off: the healthy receiver got {good_off} B after 1 ms (wd on: {good_on})")
        print(f"storm: healthy after 1 ms: wd on {good_on} B, wd off {good_off} B; {len(storms)} storms, {drops} drops")
        # 5. incast-dcqcn-on / off
        res = {}
        for cc, r in zip(("on", "off"), pair(src, build, ["incast-dcqcn-on", "incast-dcqcn-off"], d, 0)):
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
        # 6. pfc-deadlock-wd-off / -on (neither finishes in its 0.1 s: exit 1)
        don, doff = pair(src, build, ["pfc-deadlock-wd-on", "pfc-deadlock-wd-off"], d, 1)
        late = {k: delivered_after(r, 0.001) for k, r in (("on", don), ("off", doff))}
        end = [r for r in doff["ts"] if r["source"].startswith("switch:")][-5:]
        check(late["off"] == 0, f"deadlock wd-off: {late['off']} B delivered to hosts after 1 ms (want 0: deadlocked)")
        check(all(r["buffer_used_bytes"] > 0 and r["ports"]["Ethernet4"]["paused"] & 8 for r in end),
              "deadlock wd-off: at the end some switch has an empty buffer or an unpaused ring egress")
        check(late["on"] > 2**20, f"deadlock wd-on: only {late['on']} B delivered after 1 ms")
        check(don["rep"]["pfc_wd_events"]["total"] > 0 and
              sum(p["drops"].get("pfcwd_drop", 0) for p in don["res"]["ports"]) > 0,
              "deadlock wd-on: no watchdog storm / drop")
        print(f"deadlock: delivered after 1 ms: wd on {late['on']} B, wd off {late['off']} B")
    print("PASS scenarios")


if __name__ == "__main__":
    main()
