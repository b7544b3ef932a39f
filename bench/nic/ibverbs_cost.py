#!/usr/bin/python3
"""Instructions per WRITE: libsfverbs (Debian's ib_write_bw under
LD_PRELOAD) against sf-nic write_bw, counted by callgrind (this VM has no
hardware counters), so that the figures do not follow the machine's load
(docs/ibverbs.md "Cost per WRITE").

Method. The measured side (client or server) runs under callgrind
(--separate-threads=yes); its peer is always a native sf-nic (with perftest's
exchange when the measured side is perftest: docs/perftest.md), at nice -10,
so both tools face the same peer and the measured side, ~50x slower, is the
bottleneck: its loop seldom waits. Each side runs at -n N and -n 2N;
(count(2N) - count(N)) / N is one message, set-up and teardown cancelling.
Each N runs --repeat times and the run with the fewest instructions counts:
what the load adds is idle spinning (the loop's back-off spins ~1,100
iterations before it sleeps), never less work.

Per message, "datapath":
  sf-nic     its loop iterations (PollLoop::iterate: receive, timers,
             transmit, and the workload's posts and polls, which run inside
             them); the rest of its thread is the run loop's stop checks and
             its per-message report bookkeeping ("thread").
  libsfverbs the progress thread (loop iterations, lock, doorbell, CQ hints,
             back-off) plus, on the application's thread, ibv_post_send
             (conversion, lock, the NIC's post) and the NIC's poll under
             ibv_poll_cq (perftest spins on its CQ: how often it finds it
             empty is the scheduler's, so those polls are left out), less
             the instructions either thread spun waiting for the lock
             (DeviceLock::wait: contention, set by scheduling; valgrind runs
             one thread at a time), reported as "lock_wait". perftest's own
             code is not counted.
"iterations" = loop iterations per message; "app_poll_empty" = ibv_poll_cq
calls per message that found nothing. The per-thread, per-function detail
(inclusive instructions and calls per message) is in "sf_nic" / "lib".

One JSON line per (size, side), then one per size for both sides:
  {"bench":"ibverbs_cost","size":65536,"side":"client","sf_nic_cost":{..},
   "lib_cost":{..},"ratio_datapath":lib/sf-nic, ...}
  {"bench":"ibverbs_cost","size":65536,"side":"both","sf_nic_per_msg":..,
   "lib_per_msg":..,"sf_nic_per_frame":..,"lib_per_frame":..,"ratio":..}
Usage: ibverbs_cost.py SF_NIC LIBSFVERBS [--iters N] [--sizes 65536,4096]
         [--repeat R] [--sides client,server] [--lib-args ARGS] [--keep DIR]
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ibverbs_bench as ib  # noqa: E402  (the link, the waits, the addresses)

MTU = 4096
# Function patterns (substrings of callgrind's demangled names) whose
# inclusive instructions and calls are reported per message.
FUNCS = {
    "iterate": "PollLoop<sf::dpdk::Port, sf::dpdk::TscClock>::iterate(",
    "nic_receive": "sf::nic::NicNode::receive(",
    "nic_transmit": "sf::nic::NicNode::transmit(",
    "nic_advance": "sf::nic::NicNode::advance(",
    "loop_flush": "PollLoop<sf::dpdk::Port, sf::dpdk::TscClock>::flush(",
    "v_post_send": "sf::nic::verbs::post_send(",
    "v_poll_cq": "sf::nic::verbs::poll_cq(",
    "workload_poll": "sf::nic::app::Workload::poll(",
    "op_post_send": "sf::nic::ibverbs::abi::op_post_send(",
    "op_poll_cq": "sf::nic::ibverbs::abi::op_poll_cq(",
    "refresh": "sf::nic::ibverbs::Runtime::refresh(",
    "lock_wait": "sf::nic::ibverbs::DeviceLock::wait(",
    "wake": "sf::nic::ibverbs::Runtime::wake(",
    "sched_yield": "sched_yield",
}


def parse(path):
    """One callgrind file (--compress-strings=no --compress-pos=no): total
    instructions, and per FUNCS key the inclusive instructions and calls
    (summed over call sites whose caller is not the function itself)."""
    total = 0
    incl = {k: 0 for k in FUNCS}
    calls = {k: 0 for k in FUNCS}
    fns = set()
    fn = ""
    pending = None  # (callee key or None, count) after a calls= line
    cfn = ""
    with open(path, errors="replace") as f:
        for ln in f:
            c0 = ln[:1]
            if c0.isdigit() or c0 in "+-*":
                parts = ln.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending is not None:
                    key, n = pending
                    if key is not None:
                        incl[key] += cost
                        calls[key] += n
                    pending = None
                else:
                    total += cost
                continue
            if ln.startswith("fn="):
                fn = ln[3:].rstrip("\n")
                fns.add(fn)
            elif ln.startswith("cfn="):
                cfn = ln[4:].rstrip("\n")
            elif ln.startswith("calls="):
                n = int(ln[6:].split()[0])
                key = None
                for k, pat in FUNCS.items():
                    if pat in cfn and pat not in fn:
                        key = k
                        break
                pending = (key, n)
    return total, incl, calls, fns


def threads(prefix):
    """{role: (total, incl, calls)} for one process's per-thread files."""
    out = {}
    d, base = os.path.split(prefix)
    for name in sorted(os.listdir(d)):
        m = re.fullmatch(re.escape(base) + r"\.\d+-(\d+)", name)
        if not m:
            continue
        tid = int(m.group(1))
        total, incl, calls, fns = parse(os.path.join(d, name))
        if any("Runtime::progress_main" in f for f in fns):
            role = "progress"
        elif tid == 1:
            role = "main"
        else:
            role = "other"
        t, i, c = out.get(role, (0, {k: 0 for k in FUNCS}, {k: 0 for k in FUNCS}))
        out[role] = (t + total, {k: i[k] + incl[k] for k in FUNCS}, {k: c[k] + calls[k] for k in FUNCS})
    return out


def vg(out_prefix):
    return ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--compress-strings=no", "--compress-pos=no",
            f"--callgrind-out-file={out_prefix}.%p"]


def pair_cmds(a, kind, tmp, tag, size, iters, side):
    """The measured side (`side`: 0 server, 1 client) is sf-nic (kind "sf")
    or ib_write_bw under libsfverbs (kind "lib"); its peer is always a native
    sf-nic (with perftest's exchange when the measured side is perftest:
    docs/perftest.md), so both measurements face the same peer."""
    sock = f"{tmp}/{tag}.sock"
    port = ib.free_port()
    cmds, envs = [], []
    for i, role in enumerate(("server", "client")):
        if kind == "lib" and i == side:
            envs.append(dict(os.environ, LD_PRELOAD=a.lib, SFVERBS_PORT=f"net_memif0,role={role},socket={sock}",
                             SFVERBS_IP=ib.IPS[i], SFVERBS_EAL="--log-level=*:error", SFVERBS_LOG="info",
                             SFVERBS_NEIGH=f"{ib.IPS[1 - i]}={ib.MACS[1 - i]}"))
            c = ["ib_write_bw", "-x", "0", "-p", str(port), "-s", str(size), "-n", str(iters)] + a.lib_args.split()
        else:
            envs.append(None)
            c = [a.sf_nic] + ib.EAL + [f"--file-prefix=sfvc-{tag}-{role}", "--", "write_bw",
                                       "--port", f"net_memif0,role={role},socket={sock}", "--mac", ib.MACS[i],
                                       "--ip", ib.IPS[i], "--backoff", "-p", str(port), "-s", str(size),
                                       "-n", str(iters)]
            if kind == "lib":
                c += ["--oob-format", "perftest", "--gateway-mac", ib.MACS[1 - i]]
        if role == "client":
            c.append("127.0.0.1")
        cmds.append(c)
    return cmds, envs, sock, port


def run_one(kind, a, tmp, size, iters, side, retry=0):
    """Runs one pair with `side` (0 server, 1 client) under callgrind; returns
    that process's per-thread counts and its output."""
    run_one.seq = getattr(run_one, "seq", 0) + 1
    tag = f"{kind}{size}n{iters}{'sc'[side]}r{run_one.seq}"
    cmds, envs, sock, port = pair_cmds(a, kind, tmp, tag, size, iters, side)
    prefix = f"{tmp}/{tag}.cg"
    cmds[side] = vg(prefix) + cmds[side]
    # The native peer at a higher priority: when the load descheduled it, the
    # measured side's loop spun idle meanwhile (up to ~1,100 iterations of
    # ~1,000 instructions per gap before its back-off sleeps).
    if os.geteuid() == 0:
        cmds[1 - side] = ["nice", "-n", "-10"] + cmds[1 - side]
    try:
        out = ib.run_pair(cmds[0], cmds[1], envs[0], envs[1], sock, port, 600)
    except RuntimeError as e:
        # perftest's CPU-frequency sampling (r^2 >= 0.9) fails now and then
        # under valgrind on a loaded machine: it prints "Can't produce a
        # report" and exits 1. The traffic ran; run it again.
        if "Can't produce a report" not in str(e) or retry >= 3:
            raise
        ib.log(f"{tag}: perftest could not sample the CPU frequency; again")
        return run_one(kind, a, tmp, size, iters, side, retry + 1)
    return threads(prefix), out


def total(counts):
    """A run's instructions in the threads the datapath figures use."""
    return sum(t for role, (t, _, _) in counts.items() if role in ("main", "progress"))


def per_msg(a2, a1, n):
    """(counts at 2n) - (counts at n), per message, per role."""
    res = {}
    for role in set(a2) | set(a1):
        t2, i2, c2 = a2.get(role, (0, {k: 0 for k in FUNCS}, {k: 0 for k in FUNCS}))
        t1, i1, c1 = a1.get(role, (0, {k: 0 for k in FUNCS}, {k: 0 for k in FUNCS}))
        d = {"ir": (t2 - t1) / n}
        for k in FUNCS:
            if i2[k] or i1[k]:
                d[k] = round((i2[k] - i1[k]) / n, 1)
                d[k + "_calls"] = round((c2[k] - c1[k]) / n, 2)
        res[role] = d
    return res


def z():
    return {"ir": 0.0}


def datapath(kind, pm):
    """Instructions per message of the datapath, and the parts reported
    apart. sf-nic: its loop iterations (PollLoop::iterate: receive, timers,
    transmit, and the workload's posts and polls, which run inside them);
    the rest of its thread is the run loop's stop checks and perftest's
    per-message report bookkeeping. libsfverbs: the whole progress thread
    (loop iterations, the lock, the doorbell, the CQ hints, the idle
    back-off) and, on the application thread, ibv_post_send (conversion,
    lock, the NIC's post) and the NIC's poll, less the time either thread
    spun waiting for the lock (DeviceLock::wait: contention, which depends on
    scheduling), reported as lock_wait; perftest's own code is not the
    library's."""
    if kind == "sf":
        m = pm.get("main", z())
        return {"datapath": m.get("iterate", 0.0), "thread": m["ir"], "iterations": m.get("iterate_calls", 0.0)}
    p, m = pm.get("progress", z()), pm.get("main", z())
    wait = p.get("lock_wait", 0.0) + m.get("lock_wait", 0.0)
    # ibv_poll_cq: the NIC's poll only. perftest spins on its CQ, and the
    # number of polls that find it empty is the scheduler's; the polls that
    # find completions are a few per hundred WRITEs (CQ moderation), their
    # conversion ~100 instructions each.
    app = m.get("op_post_send", 0.0) + m.get("v_poll_cq", 0.0)
    return {"datapath": p["ir"] + app - wait, "progress": p["ir"] - p.get("lock_wait", 0.0),
            "app_verbs": app - m.get("lock_wait", 0.0), "lock_wait": wait, "thread": p["ir"] + m["ir"],
            "iterations": p.get("iterate_calls", 0.0),
            "app_poll_empty": max(0.0, m.get("op_poll_cq_calls", 0.0) - m.get("v_poll_cq_calls", 0.0))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sf_nic")
    ap.add_argument("lib")
    ap.add_argument("--iters", type=int, default=2000, help="N (the runs are N and 2N messages; "
                    "N times 64 KiB / size, at most 8 times, below 64 KiB)")
    ap.add_argument("--sizes", default="65536,4096")
    ap.add_argument("--keep", help="copy the callgrind files here")
    ap.add_argument("--repeat", type=int, default=2,
                    help="runs of each N; the one with the fewest instructions counts (idle spinning only adds)")
    ap.add_argument("--sides", default="client,server", help="which sides to measure")
    ap.add_argument("--lib-args", default="", help="more ib_write_bw arguments (e.g. '-l 16': post lists)")
    a = ap.parse_args()
    if shutil.which("ib_write_bw") is None or shutil.which("valgrind") is None:
        ib.log("skip: perftest or valgrind not installed")
        return 0
    tmp = tempfile.mkdtemp(prefix="sfverbs-cost-")
    try:
        for size in [int(s) for s in a.sizes.split(",")]:
            frames = max(1, -(-size // MTU))
            n = a.iters * max(1, min(8, 65536 // size))  # small messages: more of them
            both = {"sf": 0.0, "lib": 0.0, "wait": 0.0}
            for side, sname in [(1, "client"), (0, "server")]:
                if sname not in a.sides.split(","):
                    continue
                line = {"bench": "ibverbs_cost", "size": size, "side": sname, "iters": [n, 2 * n],
                        "lib_args": a.lib_args, "load": round(os.getloadavg()[0], 1)}
                for kind in ("sf", "lib"):
                    t0 = time.monotonic()
                    c1 = c2 = out = None
                    for _ in range(a.repeat):
                        r1, _ = run_one(kind, a, tmp, size, n, side)
                        r2, out = run_one(kind, a, tmp, size, 2 * n, side)
                        c1 = r1 if c1 is None or total(r1) < total(c1) else c1
                        c2 = r2 if c2 is None or total(r2) < total(c2) else c2
                    pm = per_msg(c2, c1, n)
                    line["sf_nic" if kind == "sf" else "lib"] = pm
                    ib.log(f"size {size} {sname} {kind}: {time.monotonic() - t0:.0f} s")
                    if kind == "lib":
                        for ln in out.splitlines():
                            if "retrans" in ln or "timeout" in ln.lower():
                                ib.log("  " + ln.strip())
                sf_d = datapath("sf", line["sf_nic"])
                lib_d = datapath("lib", line["lib"])
                line["sf_nic_cost"] = {k: round(v, 1) for k, v in sf_d.items()}
                line["lib_cost"] = {k: round(v, 1) for k, v in lib_d.items()}
                line["ratio_datapath"] = round(lib_d["datapath"] / sf_d["datapath"], 3) if sf_d["datapath"] else None
                sf_w, lib_w = sf_d["datapath"], lib_d["datapath"]
                both["sf"] += sf_w
                both["lib"] += lib_w
                both["wait"] += lib_d["lock_wait"]
                print(json.dumps(line), flush=True)
            print(json.dumps({"bench": "ibverbs_cost", "size": size, "side": "both", "frames_per_msg": frames,
                              "sf_nic_per_msg": round(both["sf"], 1), "lib_per_msg": round(both["lib"], 1),
                              "sf_nic_per_frame": round(both["sf"] / frames, 1),
                              "lib_per_frame": round(both["lib"] / frames, 1),
                              "lib_lock_wait_per_msg": round(both["wait"], 1),
                              "ratio": round(both["lib"] / both["sf"], 3) if both["sf"] else None,
                              "load": round(os.getloadavg()[0], 1)}), flush=True)
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            for name in os.listdir(tmp):
                if ".cg." in name:
                    shutil.copy(os.path.join(tmp, name), a.keep)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
