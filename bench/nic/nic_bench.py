#!/usr/bin/python3
"""sf-nic benchmarks, each against a reference measured in the same run:

  nic_write_bw    write_bw goodput between two sf-nic processes over memif,
                  4096 B MTU, 64 KiB messages, unshaped (--speed 800); ref =
                  the raw memif frame rate between two dpdk-testpmd processes
                  (txonly -> rxonly) at the same frame size (4154 B = a
                  4096 B RoCEv2 WRITE frame), expressed as payload Gb/s.
  nic_msg_rate    write_bw message rate with 64 B messages; ref = testpmd's
                  frame rate at 122 B (a 64 B WRITE frame), in Mpps.
  nic_pacing_<R>G write_bw with --rate-limit R (the QP's timing wheel) on an
                  800 Gb/s port; value = the worst 100 ms window's wire rate
                  (frames + 24 B preamble/IFG/FCS each), ref = R; also the
                  mean and the worst relative error, and where the shortfall
                  went over the measured span: the QP's idle share (due but
                  blocked: the RC window waits for the receiver's ACKs) and
                  lost share (served more than a gap late), the wire rate over
                  the rest (sched_*: the sender's own schedule), and the least
                  CPU share the sender's and receiver's data-path threads got
                  in a window (schedstat); worst_window: that window's own
                  account (ms long, lost_ms, idle_ms, both CPU shares, the
                  sender core's steal time: the hypervisor's, 10 ms ticks);
                  tx_steal_share: that core's steal over the span;
                  max_sample_us / max_late_us: the sampler's read time and
                  lateness (the measurement's own error; samples sit on a
                  100 ms grid, both processes' on CLOCK_MONOTONIC).
                  Both sf-nic run with --sched SCHED (default nice:-20 when
                  root, else other), each in its own session (its own
                  autogroup), --idle IDLE (default spin) and
                  --max-unacked-psns WINDOW (default 128). --burst-bytes N
                  gives the sender's QP a burst bucket of N bytes (sf-nic
                  --burst-size; 0 = strict pacing, the default): a QP served
                  late or idle may make up N bytes back to back, so with
                  N > 0 the figure is "paced with bursts of up to N bytes";
                  burst_bytes and burst_share (made-up bytes / the rate's
                  bytes over the span) are reported.

One JSON line each: {"bench","value","unit","ref","ratio",...}. Usage:
  nic_bench.py SF_NIC [--seconds S] [--only NAME] [--sched SCHED] [--idle IDLE] [--window N] [--burst-bytes N]
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bench_proc  # noqa: E402  (bench/bench_proc.py)

EAL = ["--no-pci", "--log-level", "*:warning", "--no-telemetry"]
ROCE_HDR = 14 + 20 + 8 + 12 + 4          # Eth + IPv4 + UDP + BTH + ICRC (WRITE_MIDDLE)
WIRE_EXTRA = 24                          # preamble + IFG + FCS


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def emit(name, value, unit, ref, **extra):
    d = {"bench": name, "value": round(value, 4), "unit": unit, "ref": round(ref, 4),
         "ratio": round(value / ref, 4) if ref else None}
    d.update(extra)
    print(json.dumps(d), flush=True)


def sf_pair(binary, tmp, test, args, tag, client_extra=(), server_extra=()):
    sock = os.path.join(tmp, f"{tag}.sock")
    port = 20000 + os.getpid() % 10000
    common = ["--mac", "", "--ip", "", "-p", str(port), "--speed", "800", "--mtu", "4096"] + list(args)

    def cmd(role, lcore):
        mac = "02:00:00:00:00:01" if role == "server" else "02:00:00:00:00:02"
        ip = "10.0.0.1" if role == "server" else "10.0.0.2"
        a = list(common)
        a[1], a[3] = mac, ip
        dev = f"net_memif0,role={role},socket={sock}"
        c = [binary] + EAL + ["-l", str(lcore), "--file-prefix", f"sfnb-{tag}-{role}-{os.getpid()}", "--",
                              test, "--port", dev, "--report", os.path.join(tmp, f"{tag}-{role}.json"),
                              "--ready-file", os.path.join(tmp, f"{tag}-{role}.ready")] + a
        if role == "client":
            c += list(client_extra) + ["127.0.0.1"]
        else:
            c += list(server_extra)
        return c

    # Each sf-nic leads its own session: with kernel.sched_autogroup_enabled
    # that is its own autogroup, whose nice --sched nice:N sets.
    srv = subprocess.Popen(cmd("server", 0), stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, f"{tag}-s.err"), "w"),
                           start_new_session=True)
    deadline = time.monotonic() + 30
    while not os.path.exists(os.path.join(tmp, f"{tag}-server.ready")):
        if srv.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"sf-nic server did not start: {open(os.path.join(tmp, f'{tag}-s.err')).read()[-2000:]}")
        time.sleep(0.05)
    cli = subprocess.run(cmd("client", 1), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300,
                         start_new_session=True)
    srv.wait(timeout=60)
    if cli.returncode != 0:
        raise RuntimeError(f"sf-nic client exited {cli.returncode}: {cli.stderr[-2000:]}")
    with open(os.path.join(tmp, f"{tag}-client.json")) as f:
        return json.load(f)


def testpmd_rate(tmp, frame_bytes, seconds, tag):
    """txonly -> rxonly over memif; returns the receiver's mean Rx-pps after warm-up."""
    sock = os.path.join(tmp, f"tp-{tag}.sock")
    segs = []
    left = frame_bytes
    while left > 0:
        segs.append(min(2048, left))
        left -= segs[-1]
    txpkts = ",".join(str(s) for s in segs)
    rx = subprocess.Popen(["dpdk-testpmd"] + EAL + ["--file-prefix", f"sfnb-tprx-{os.getpid()}", "--lcores", "0@1,1@0",
                           f"--vdev=net_memif0,role=server,socket={sock}", "--", "--forward-mode=rxonly",
                           "--stats-period", "1", "--nb-cores", "1", "--total-num-mbufs", "16384"],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1.0)  # the server socket must exist before the client starts (external processes)
    tx = subprocess.Popen(["dpdk-testpmd"] + EAL + ["--file-prefix", f"sfnb-tptx-{os.getpid()}", "--lcores", "0@0,1@1",
                           f"--vdev=net_memif0,role=client,socket={sock}", "--", "--forward-mode=txonly",
                           f"--txpkts={txpkts}", "--stats-period", "1", "--nb-cores", "1",
                           "--total-num-mbufs", "16384"],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(seconds + 2.5)
    tx.send_signal(signal.SIGINT)
    out = bench_proc.interrupt(rx)
    try:
        tx.wait(timeout=30)
    except subprocess.TimeoutExpired:
        tx.kill()
    pps = [int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", out)]
    live = [x for x in pps if x > 0][1:]  # skip the first (partial) period
    if not live:
        raise RuntimeError("testpmd rxonly reported no traffic:\n" + out[-2000:])
    return sum(live) / len(live)


def write_bw(binary, tmp, seconds):
    frame = 4096 + ROCE_HDR
    ref_pps = testpmd_rate(tmp, frame, seconds, "bw")
    ref_gbps = ref_pps * 4096 * 8 / 1e9
    rep = sf_pair(binary, tmp, "write_bw", ["-s", "65536", "-D", str(seconds)], "bw")
    w = rep["workloads"][0]
    emit("nic_write_bw", w["goodput_gbps"], "Gb/s", ref_gbps, ref_tool=f"dpdk-testpmd txonly->rxonly memif {frame} B",
         ref_mpps=round(ref_pps / 1e6, 4), messages=w["messages"], load1=os.getloadavg()[0])


def msg_rate(binary, tmp, seconds):
    frame = 64 + ROCE_HDR + 16  # WRITE_ONLY carries a RETH
    ref_pps = testpmd_rate(tmp, frame, seconds, "mr")
    rep = sf_pair(binary, tmp, "write_bw", ["-s", "64", "-D", str(seconds)], "mr")
    w = rep["workloads"][0]
    emit("nic_msg_rate", w["msg_rate_mpps"], "Mpps", ref_pps / 1e6,
         ref_tool=f"dpdk-testpmd txonly->rxonly memif {frame} B", load1=os.getloadavg()[0])


def pacing(binary, tmp, rate_gbps, seconds, sched_policy, idle_mode, window, burst_bytes=0):
    """One paced write_bw QP at rate_gbps; with burst_bytes > 0 the QP's pacer
    may make up to that many bytes of lost or idle time back to back
    (sf-nic --burst-size, ibv_modify_qp_rate_limit max_burst_sz); 0 = strict."""
    ts = os.path.join(tmp, f"pace{rate_gbps}.jsonl")
    ts_srv = os.path.join(tmp, f"pace{rate_gbps}-srv.jsonl")
    sched_args = (["--sched", sched_policy] if sched_policy != "other" else []) + \
        (["--idle", idle_mode] if idle_mode != "spin" else []) + \
        (["--max-unacked-psns", str(window)] if window != 128 else [])
    sf_pair(binary, tmp, "write_bw", ["-s", "65536", "-D", str(seconds)] + sched_args, f"pace{rate_gbps}",
            client_extra=["--rate-limit", str(rate_gbps), "--timeseries", ts, "--ts-period-ms", "100"] +
            (["--burst-size", str(burst_bytes)] if burst_bytes else []),
            server_extra=["--timeseries", ts_srv, "--ts-period-ms", "100"])
    samples = [json.loads(l) for l in open(ts)]
    srv = [json.loads(l) for l in open(ts_srv)] if os.path.exists(ts_srv) else []
    # The two processes' samples meet on CLOCK_MONOTONIC (t_mono_s); t_s is
    # each process's own time since its sampler started (older binaries).
    tkey = "t_mono_s" if samples and "t_mono_s" in samples[0] else "t_s"

    def cpu_share(series, t0, t1):
        """The data-path thread's CPU share between t0 and t1 (nearest samples)."""
        pts = [s for s in series if "loop_cpu_s" in s and tkey in s]
        if len(pts) < 2:
            return None
        a = min(pts, key=lambda s: abs(s[tkey] - t0))
        b = min(pts, key=lambda s: abs(s[tkey] - t1))
        return (b["loop_cpu_s"] - a["loop_cpu_s"]) / (b[tkey] - a[tkey]) if b[tkey] > a[tkey] else None

    wins = []
    for a, b in zip(samples, samples[1:]):
        ha, hb = a["hosts"]["h0"], b["hosts"]["h0"]
        dt = b[tkey] - a[tkey]
        dbytes = hb["tx_bytes"] - ha["tx_bytes"]
        dpkts = hb["tx_packets"] - ha["tx_packets"]
        if dpkts > 0 and dt > 0:
            wins.append({"a": a, "b": b, "dt": dt, "rate": (dbytes + WIRE_EXTRA * dpkts) * 8 / dt / 1e9,
                         "lost_ms": (hb.get("pace_lost_ns", 0) - ha.get("pace_lost_ns", 0)) / 1e6,
                         "idle_ms": (hb.get("pace_idle_ns", 0) - ha.get("pace_idle_ns", 0)) / 1e6,
                         "burst_kb": (hb.get("pace_burst_bytes", 0) - ha.get("pace_burst_bytes", 0)) / 1e3,
                         "steal_ms": (b["cpu_steal_s"] - a["cpu_steal_s"]) * 1e3 if "cpu_steal_s" in a and "cpu_steal_s" in b else None,
                         "tx_cpu": cpu_share(samples, a[tkey], b[tkey]),
                         "rx_cpu": cpu_share(srv, a[tkey], b[tkey])})
    wins = wins[1:-1]  # the first and last windows are partly idle
    if not wins:
        raise RuntimeError(f"no pacing windows in {ts}")
    rates = [w["rate"] for w in wins]
    worst_w = max(wins, key=lambda w: abs(w["rate"] - rate_gbps))
    worst = worst_w["rate"]
    # The sender's own account over the measured span, from its QP's
    # pace_idle_ns / pace_lost_ns (the same clock as the departures; an idle
    # period is counted when it ends, so only the whole span adds up): idle =
    # the QP was due but could not send (its RC window waited for the
    # receiver's ACKs), lost = it was served more than a gap late (the sender
    # descheduled or too slow); sched = the wire rate over the rest.
    a, b = wins[0]["a"], wins[-1]["b"]
    ha, hb = a["hosts"]["h0"], b["hosts"]["h0"]
    span = b["t_s"] - a["t_s"]
    bits = (hb["tx_bytes"] - ha["tx_bytes"] + WIRE_EXTRA * (hb["tx_packets"] - ha["tx_packets"])) * 8
    idle = (hb.get("pace_idle_ns", 0) - ha.get("pace_idle_ns", 0)) / 1e9
    lost = (hb.get("pace_lost_ns", 0) - ha.get("pace_lost_ns", 0)) / 1e9
    burst_b = hb.get("pace_burst_bytes", 0) - ha.get("pace_burst_bytes", 0)
    busy = span - idle - lost
    sched = bits / busy / 1e9 if busy > 0.01 * span else None

    def r4(x):
        return None if x is None else round(x, 4)

    def lo(key):
        v = [w[key] for w in wins if w[key] is not None]
        return r4(min(v)) if v else None

    # The measurement's own error: how long the sampler took to read a
    # sample (a window's edges are uncertain by that much) and how late it
    # woke after its grid point (windows longer than 100 ms), both in us.
    pts = [w["a"] for w in wins] + [wins[-1]["b"]]
    read_us = [p["sample_us"] for p in pts if "sample_us" in p]
    late_us = [p["late_us"] for p in pts if "late_us" in p]
    emit(f"nic_pacing_{rate_gbps}G", worst, "Gb/s", rate_gbps, mean_gbps=round(sum(rates) / len(rates), 4),
         worst_error=round(abs(worst - rate_gbps) / rate_gbps, 4), windows=len(wins), window_ms=100,
         idle_share=r4(idle / span), lost_share=r4(lost / span), sched_gbps=r4(sched),
         sched_error=r4(abs(sched - rate_gbps) / rate_gbps) if sched else None,
         min_tx_cpu=lo("tx_cpu"), min_rx_cpu=lo("rx_cpu"),
         worst_window={"ms": round(worst_w["dt"] * 1e3, 2), "lost_ms": round(worst_w["lost_ms"], 3),
                       "idle_ms": round(worst_w["idle_ms"], 3), "burst_kb": round(worst_w["burst_kb"], 1),
                       "tx_cpu": r4(worst_w["tx_cpu"]),
                       "rx_cpu": r4(worst_w["rx_cpu"]),
                       "tx_steal_ms": None if worst_w["steal_ms"] is None else round(worst_w["steal_ms"], 1)},
         tx_steal_share=r4((b["cpu_steal_s"] - a["cpu_steal_s"]) / span) if "cpu_steal_s" in a and "cpu_steal_s" in b else None,
         max_sample_us=round(max(read_us), 1) if read_us else None,
         max_late_us=round(max(late_us), 1) if late_us else None,
         burst_bytes=burst_bytes, burst_share=r4(burst_b * 8 / 1e9 / rate_gbps / span),
         sched=sched_policy, idle_mode=idle_mode, max_unacked_psns=window, load1=os.getloadavg()[0])


def main():
    binary = sys.argv[1]
    seconds = 3.0
    only = None
    if "--seconds" in sys.argv:
        seconds = float(sys.argv[sys.argv.index("--seconds") + 1])
    if "--only" in sys.argv:
        only = sys.argv[sys.argv.index("--only") + 1]
    sched = "nice:-20" if os.geteuid() == 0 else "other"
    if "--sched" in sys.argv:
        sched = sys.argv[sys.argv.index("--sched") + 1]
    idle = "spin"
    if "--idle" in sys.argv:
        idle = sys.argv[sys.argv.index("--idle") + 1]
    window = 128
    if "--window" in sys.argv:
        window = int(sys.argv[sys.argv.index("--window") + 1])
    burst = 0  # pacing only: the QP's burst bucket, bytes (sf-nic --burst-size); 0 = strict
    if "--burst-bytes" in sys.argv:
        burst = int(sys.argv[sys.argv.index("--burst-bytes") + 1])
        if burst < 0 or burst > 0xFFFFFFFF:
            log("--burst-bytes must be 0..4294967295")
            return 2
    runs = [("nic_write_bw", lambda t: write_bw(binary, t, seconds)),
            ("nic_msg_rate", lambda t: msg_rate(binary, t, seconds)),
            ("nic_pacing_1G", lambda t: pacing(binary, t, 1, seconds, sched, idle, window, burst)),
            ("nic_pacing_10G", lambda t: pacing(binary, t, 10, seconds, sched, idle, window, burst)),
            ("nic_pacing_40G", lambda t: pacing(binary, t, 40, seconds, sched, idle, window, burst))]
    rc = 0
    with tempfile.TemporaryDirectory(prefix="sf-nic-bench-") as tmp:
        for name, fn in runs:
            if only and name != only:
                continue
            try:
                fn(tmp)
            except Exception as e:  # one failing figure must not hide the others
                log(f"{name}: {e}")
                rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
