#!/usr/bin/python3
"""sf-nic benchmarks, each against a reference measured in the same run:

  nic_write_bw    write_bw goodput between two sf-nic processes over memif,
                  4096 B MTU, 64 KiB messages, unshaped (--speed 800); ref =
                  the raw memif frame rate between two dpdk-testpmd processes
                  (txonly -> rxonly) at the same frame size (4154 B = a
                  4096 B RoCEv2 WRITE frame), expressed as payload Gb/s.
                  Between the two, the floor (--floor ROCE_FLOOR, default
                  build/bench/nic/roce_floor): the least per-frame work of
                  any RoCE endpoint on the same link (sender: the ICRC;
                  receiver: parse, ICRC check, copy into a buffer; no
                  transport): placements[p].floor_* and best_of_all give
                  floor / ref (what a software RoCE NIC can reach here at
                  all) and ours / floor (how much of that sf-nic gets).
  nic_mrc_write_bw  write_bw goodput of an MRC QP (--transport mrc) between
                  two sf-nic over memif; ref = the same with --transport rc,
                  rounds interleaved (goal >= 0.9: SACK and placement
                  tracking must cost little).
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

nic_write_bw and nic_msg_rate run interleaved rounds (reference, [floor,]
sf-nic, reference, ... --rounds N of each, --seconds S long) with the vCPU
placement probe (build/bench/common/core_rtt, --probe PATH) before and after
every round: the hypervisor moves the two vCPUs of the development VM
between one physical core (same_core), two cores sharing an L3 (shared_l3)
and two that do not (split_l3), and each tool's rate moves 2-4x with it
(docs/performance.md, "Placements of the two vCPUs"). A round counts for a
placement only when the probes on both sides of it agree, its own
per-period rates are steady (max/min <= STEADY_SPREAD: a placement change
inside the round shows as a step) and, with 3 or more rounds of its side
in that placement, it is within STEADY_SPREAD of their median. Added fields: placements (per placement: counted rounds of each side,
the median of each side and ratio_median = median(ours) / median(ref), the
best of each side and ratio_best = best(ours) / best(ref), the medians of
sf-nic's data-path threads' CPU shares (running, and waiting for the CPU:
other load), for nic_write_bw an estimated ceiling (see ceiling())); a
placement no counted round ran in says so (note, figures null); with the
floor, floor_rounds/_median/_best, floor_ratio_median/_best (floor / ref)
and ours_vs_floor_median/_best (ours / floor); best_of_all: each tool's
best round over the run whatever its placement (with its second best and
where the best ran). Which side
limits sf-nic: nic_write_bw_sides, run only when --only names it
(write_bw_sides()). value / ref /
ratio are those of the placement with the most counted rounds (shared_l3 on
a tie), named in `placement`; rounds = every round's raw figures and its
probes; discarded = the rounds that counted for no placement. Both tools
always run the same link: every memif devargs carries bsize=8192, the
buffer size sf-nic gives a memif port by itself for its 4096 B MTU
(common/dpdk/port.cc memif_devargs_for_mtu: one descriptor per 4154 B
frame; the reference once ran memif's default 2048, three descriptors a
frame, while sf-nic ran 8192). --mbuf-size N changes the mbufs of both
tools: sf-nic --mbuf-size N (both processes), testpmd --mbuf-size=N (both;
--txpkts segments of N - 128 B).

One JSON line each: {"bench","value","unit","ref","ratio",...}. Usage:
  nic_bench.py SF_NIC [--seconds S] [--only NAME] [--rounds N] [--probe CORE_RTT] [--floor ROCE_FLOOR]
               [--mbuf-size N] [--prio other|nice:N] [--tag TAG]
               [--sched SCHED] [--idle IDLE] [--window N] [--burst-bytes N]
"""
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time


EAL = ["--no-pci", "--log-level", "*:warning", "--no-telemetry"]
ROCE_HDR = 14 + 20 + 8 + 12 + 4          # Eth + IPv4 + UDP + BTH + ICRC (WRITE_MIDDLE)
WIRE_EXTRA = 24                          # preamble + IFG + FCS


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def emit(name, value, unit, ref, **extra):
    d = {"bench": name, "value": None if value is None else round(value, 4), "unit": unit,
         "ref": None if ref is None else round(ref, 4), "ratio": round(value / ref, 4) if ref and value is not None else None}
    d.update(extra)
    print(json.dumps(d), flush=True)


MBUF_HEADROOM = 128                      # RTE_PKTMBUF_HEADROOM: an mbuf carries data room - this
DEFAULT_SEG_BYTES = 2048                 # testpmd's default mbuf (2176 B data room) carries this
PACED_GBPS = 100                         # nic_write_bw_sides: a rate limit neither placement reaches
SLACK_MARGIN = 0.05                      # shares this close: no side clearly limits
STEADY_SPREAD = 1.5                      # a round's per-period max/min above this changed pace inside


# memif's buffer size on every link of this bench, both tools: what sf-nic's
# Port picks for a 4096 B MTU by itself (memif_devargs_for_mtu), given
# explicitly so that the testpmd reference runs the same link.
MEMIF_BSIZE = 8192
SF_NIC_MIN_MBUF = 640  # sf-nic --mbuf-size's lower bound (nic/app/main.cc)


class Link:
    """What both tools' memif links run with (--mbuf-size) and the run's tag
    (in every --file-prefix; the temporary directory holding the sockets
    carries it too)."""
    mbuf_size = None                     # None: each tool's default
    tag = "sfnb"
    nice = None                          # --prio nice:N: both tools' sessions at nice N; None: as started

    @classmethod
    def start(cls, cmd, **kw):
        """Starts a reference process in its own session (its own autogroup
        with kernel.sched_autogroup_enabled) and gives that autogroup --prio's
        nice, as sf-nic --sched nice:N does for itself."""
        p = subprocess.Popen(cmd, start_new_session=True, **kw)
        if cls.nice is not None:
            try:
                with open(f"/proc/{p.pid}/autogroup", "w") as f:
                    f.write(str(cls.nice))
            except OSError as e:
                log(f"nic_bench: --prio nice:{cls.nice} for {cmd[0]}: {e}")
        return p

    @classmethod
    def memif(cls, role, sock):
        dev = f"net_memif0,role={role},socket={sock}"
        return dev + f",bsize={MEMIF_BSIZE}"

    @classmethod
    def sf_args(cls):
        return ["--mbuf-size", str(cls.mbuf_size)] if cls.mbuf_size else []

    @classmethod
    def sf_sched_args(cls):
        return ["--sched", f"nice:{cls.nice}"] if cls.nice is not None else []

    @classmethod
    def testpmd_args(cls):
        return [f"--mbuf-size={cls.mbuf_size}"] if cls.mbuf_size else []

    @classmethod
    def seg_bytes(cls):
        return cls.mbuf_size - MBUF_HEADROOM if cls.mbuf_size else DEFAULT_SEG_BYTES


def sf_nic_has_mbuf_size(binary):
    """Whether this sf-nic takes --mbuf-size (its --help lists it)."""
    try:
        out = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--mbuf-size" in out


def sf_pair(binary, tmp, test, args, tag, client_extra=(), server_extra=()):
    sock = os.path.join(tmp, f"{tag}.sock")
    port = 20000 + os.getpid() % 10000
    common = ["--mac", "", "--ip", "", "-p", str(port), "--speed", "800", "--mtu", "4096"] + list(args) + Link.sf_args()

    def cmd(role, lcore):
        mac = "02:00:00:00:00:01" if role == "server" else "02:00:00:00:00:02"
        ip = "10.0.0.1" if role == "server" else "10.0.0.2"
        a = list(common)
        a[1], a[3] = mac, ip
        dev = Link.memif(role, sock)
        c = [binary] + EAL + ["-l", str(lcore), "--file-prefix", f"{Link.tag}-{tag}-{role}-{os.getpid()}", "--",
                              test, "--port", dev, "--report", os.path.join(tmp, f"{tag}-{role}.json"),
                              "--ready-file", os.path.join(tmp, f"{tag}-{role}.ready")] + a
        if role == "client":
            c += list(client_extra) + ["127.0.0.1"]
        else:
            c += list(server_extra)
        return c

    for f in (f"{tag}-server.ready", f"{tag}-client.ready"):  # a round before left them
        if os.path.exists(os.path.join(tmp, f)):
            os.unlink(os.path.join(tmp, f))
    # Each sf-nic leads its own session: with kernel.sched_autogroup_enabled
    # that is its own autogroup, whose nice --sched nice:N sets.
    srv = subprocess.Popen(cmd("server", 0), stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, f"{tag}-s.err"), "w"),
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(os.path.join(tmp, f"{tag}-server.ready")):
            if srv.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sf-nic server did not start: {open(os.path.join(tmp, f'{tag}-s.err')).read()[-2000:]}")
            time.sleep(0.05)
        cli = subprocess.run(cmd("client", 1), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             timeout=300, start_new_session=True)
        srv.wait(timeout=60)
    finally:
        # A round that failed must not leave its server spinning on lcore 0
        # (its own session, nice -20, the same OOB port) under the next round.
        if srv.poll() is None:
            os.killpg(srv.pid, signal.SIGKILL)
            srv.wait()
    if cli.returncode != 0:
        raise RuntimeError(f"sf-nic client exited {cli.returncode}: {cli.stderr[-2000:]}")
    with open(os.path.join(tmp, f"{tag}-client.json")) as f:
        return json.load(f)


def testpmd_run(tmp, frame_bytes, seconds, tag, start_timeout_s=30):
    """txonly -> rxonly over memif; returns the receiver's Rx-pps of each of
    ceil(seconds) whole one-second periods after the first period with
    traffic (the partial one), however long the transmitter took to start
    (start_timeout_s at most)."""
    sock = os.path.join(tmp, f"tp-{tag}.sock")
    seg = Link.seg_bytes()
    segs = []
    left = frame_bytes
    while left > 0:
        segs.append(min(seg, left))
        left -= segs[-1]
    txpkts = ",".join(str(s) for s in segs)
    rx = Link.start(["dpdk-testpmd"] + EAL + ["--file-prefix", f"{Link.tag}-tprx-{os.getpid()}", "--lcores", "0@1,1@0",
                           "--vdev=" + Link.memif("server", sock), "--", "--forward-mode=rxonly",
                           "--stats-period", "1", "--nb-cores", "1", "--total-num-mbufs", "16384"] + Link.testpmd_args(),
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    periods = []   # every Rx-pps line, in order
    lines = []
    want = max(1, math.ceil(seconds))
    got_enough = threading.Event()

    def reader():
        for line in rx.stdout:
            lines.append(line)
            m = re.search(r"Rx-pps:\s+(\d+)", line)
            if m:
                periods.append(int(m.group(1)))
                live = [x for x in periods if x > 0]
                if len(live) >= want + 1:
                    got_enough.set()
    th = threading.Thread(target=reader, daemon=True)
    th.start()
    time.sleep(1.0)  # the server socket must exist before the client starts (external processes)
    # --mbuf-size before --txpkts: testpmd checks each segment against the
    # mbuf size parsed so far and, failing that, sends 64 B frames.
    tx = Link.start(["dpdk-testpmd"] + EAL + ["--file-prefix", f"{Link.tag}-tptx-{os.getpid()}", "--lcores", "0@0,1@1",
                           "--vdev=" + Link.memif("client", sock), "--", "--forward-mode=txonly"] + Link.testpmd_args() +
                          [f"--txpkts={txpkts}", "--stats-period", "1", "--nb-cores", "1",
                           "--total-num-mbufs", "16384"],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    got_enough.wait(timeout=start_timeout_s + want + 1)
    tx.send_signal(signal.SIGINT)
    rx.send_signal(signal.SIGINT)
    for p in (rx, tx):
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    th.join(timeout=5)
    live = [x for x in periods if x > 0][1:want + 1]  # skip the first (partial) period
    totals = re.findall(r"RX-packets:\s+(\d+)\s+RX-missed:\s+\d+\s+RX-bytes:\s+(\d+)", "".join(lines))
    if totals and int(totals[-1][0]) > 0 and round(int(totals[-1][1]) / int(totals[-1][0])) != frame_bytes:
        raise RuntimeError(f"testpmd rxonly received {int(totals[-1][1]) / int(totals[-1][0]):.1f} B frames, "
                           f"not {frame_bytes} (--txpkts={txpkts} refused?)")
    if len(live) < want:
        raise RuntimeError(f"testpmd rxonly reported {len(live)} of {want} periods with traffic:\n" +
                           "".join(lines)[-2000:])
    return live


def floor_run(floor_bin, tmp, seconds, tag, start_timeout_s=30):
    """roce_floor tx -> rx over the same memif link as testpmd_run: the least
    per-frame work of any RoCE endpoint (bench/nic/roce_floor.cc). Returns
    the receiver's payload Gb/s of each of ceil(seconds) whole one-second
    periods after the first, and a dict of the round's figures (Mpps over
    those periods; the sender's frames refused by the full ring; frames
    that failed the receiver's checks). The sender stops half a second
    before the receiver: DPDK 22.11's memif can crash a process whose peer
    leaves while it sends (docs/demo.md "Known limits")."""
    sock = os.path.join(tmp, f"fl-{tag}.sock")
    ready = os.path.join(tmp, f"fl-{tag}.ready")
    want = max(1, math.ceil(seconds))
    extra = ["--mbuf-size", str(Link.mbuf_size)] if Link.mbuf_size else []
    if os.path.exists(ready):
        os.unlink(ready)
    paths = {k: os.path.join(tmp, f"fl-{tag}-{k}") for k in ("rx.err", "tx.out", "tx.err")}

    def tail(k):
        with open(paths[k]) as f:
            return f.read()[-1000:]

    rx = tx = None
    with open(paths["rx.err"], "w") as rx_err, open(paths["tx.out"], "w") as tx_out, \
            open(paths["tx.err"], "w") as tx_err:
        try:
            rx = Link.start([floor_bin] + EAL + ["--file-prefix", f"{Link.tag}-flrx-{os.getpid()}", "-l", "0", "--",
                                                 "--role", "rx", "--port", Link.memif("server", sock),
                                                 "--seconds", str(want + 2), "--ready-file", ready] + extra,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=rx_err, text=True)
            deadline = time.monotonic() + start_timeout_s
            while not os.path.exists(ready):
                if rx.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("roce_floor rx did not start: " + tail("rx.err"))
                time.sleep(0.05)
            tx = Link.start([floor_bin] + EAL + ["--file-prefix", f"{Link.tag}-fltx-{os.getpid()}", "-l", "1", "--",
                                                 "--role", "tx", "--port", Link.memif("client", sock),
                                                 "--seconds", str(want + 1.5)] + extra,
                            stdin=subprocess.DEVNULL, stdout=tx_out, stderr=tx_err)
            out, _ = rx.communicate(timeout=start_timeout_s + want + 30)
            tx.wait(timeout=30)
        finally:
            for p in (tx, rx):  # SIGTERM first: roce_floor then closes its port and EAL
                if p is not None and p.poll() is None:
                    os.killpg(p.pid, signal.SIGTERM)
                    try:
                        p.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        os.killpg(p.pid, signal.SIGKILL)
                        p.wait()
    lines = [json.loads(x) for x in out.strip().splitlines() if x.startswith("{")]
    final = [x for x in lines if "role" in x]
    if rx.returncode != 0 or not final:
        raise RuntimeError(f"roce_floor rx exited {rx.returncode}: {final[-1] if final else out[-500:]}")
    with open(paths["tx.out"]) as f:
        tx_final = [json.loads(x) for x in f.read().strip().splitlines() if x.startswith("{") and '"role"' in x]
    if tx.returncode != 0 or not tx_final:
        raise RuntimeError(f"roce_floor tx exited {tx.returncode}: {tail('tx.err')}")
    periods = [x for x in lines if "t_s" in x][1:want + 1]  # skip the first (the sender starting)
    if len(periods) < want or any(x["frames"] == 0 for x in periods):
        raise RuntimeError(f"roce_floor rx: {len(periods)} of {want} periods, frames {[x['frames'] for x in periods]}")
    gbps = [x["bytes"] * 8 / 1e9 for x in periods]
    fig = {"mpps": round(sum(x["frames"] for x in periods) / len(periods) / 1e6, 4),
           "tx_refused": tx_final[-1]["tx_refused"], "icrc_bad": final[-1]["icrc_bad"],
           "parse_bad": final[-1]["parse_bad"]}
    return gbps, fig


class Probe:
    """The placement probe (bench/common/core_rtt) on the two CPUs both tools
    run on; sample() is one JSON line of it (a few ms), or a stand-in saying
    why there is none."""

    def __init__(self, path, cpus="0,1"):
        self.path = path
        self.cpus = cpus

    def sample(self):
        if not self.path or not os.path.exists(self.path):
            return {"placement": "unknown", "rtt_ns": None, "why": f"no probe at {self.path}"}
        try:
            r = subprocess.run([self.path, "--cpus", self.cpus], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=10)
            d = json.loads(r.stdout.strip().splitlines()[-1])
            return {"placement": d["placement"], "rtt_ns": d["rtt_ns"], "probe_us": d["probe_us"]}
        except (OSError, subprocess.TimeoutExpired, ValueError, IndexError, KeyError) as e:
            return {"placement": "unknown", "rtt_ns": None, "why": f"probe failed: {e}"}


PLACEMENTS = ("same_core", "shared_l3", "split_l3")  # core_rtt's classes (unclear and unknown count for none)
OPT_IN = ("nic_write_bw_sides",)          # diagnostics run only when --only names them


def spread(xs):
    xs = [x for x in xs if x is not None]
    return round(max(xs) / min(xs), 3) if xs and min(xs) > 0 else None


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def sf_round_account(tmp, tag, paced=False):
    """The sender's and receiver's account from both time series (250 ms
    windows, first and last dropped): the sender's per-window rates; each
    data-path thread's shares of the span running (tx_cpu / rx_cpu), runnable
    but waiting for its CPU (*_wait: other load) and neither (*_sleep: the
    thread slept, which only an --idle back-off does when it has nothing to
    do: slack); with paced (a --rate-limit above what it reaches) also where
    the sender's time went: pace_idle (due but blocked: the RC window waiting
    for the receiver's ACKs, or no WR) and pace_lost (served late: the sender
    itself busy). Unpaced, every gap counts as pace_idle, so it says nothing."""
    def load(path):
        return [json.loads(l) for l in open(path)] if os.path.exists(path) else []
    cli = load(os.path.join(tmp, f"{tag}-cli.jsonl"))
    srv = load(os.path.join(tmp, f"{tag}-srv.jsonl"))
    tkey = "t_mono_s"
    cli = [x for x in cli if tkey in x]
    srv = [x for x in srv if tkey in x]
    wins = []
    for a, b in zip(cli, cli[1:]):
        ha, hb = a["hosts"]["h0"], b["hosts"]["h0"]
        dt = b[tkey] - a[tkey]
        if dt > 0 and hb["tx_packets"] > ha["tx_packets"]:
            wins.append((a, b, (hb["tx_bytes"] - ha["tx_bytes"]) * 8 / dt / 1e9))
    wins = wins[1:-1]
    if not wins:
        return {"window_gbps": [], "steady_spread": None}
    a, b = wins[0][0], wins[-1][1]
    span = b[tkey] - a[tkey]
    ha, hb = a["hosts"]["h0"], b["hosts"]["h0"]

    def shares(series, side):
        pts = [x for x in series if "loop_cpu_s" in x and "loop_wait_s" in x]
        if len(pts) < 2:
            return {}
        x = min(pts, key=lambda s: abs(s[tkey] - a[tkey]))
        y = min(pts, key=lambda s: abs(s[tkey] - b[tkey]))
        dt = y[tkey] - x[tkey]
        if dt <= 0:
            return {}
        run = (y["loop_cpu_s"] - x["loop_cpu_s"]) / dt
        wait = (y["loop_wait_s"] - x["loop_wait_s"]) / dt
        return {f"{side}_cpu": round(run, 4), f"{side}_wait": round(wait, 4),
                f"{side}_sleep": round(max(0.0, 1 - run - wait), 4)}

    d = {"window_gbps": [round(w[2], 2) for w in wins], "steady_spread": spread([w[2] for w in wins]),
         **shares(cli, "tx"), **shares(srv, "rx")}
    if paced:
        d["tx_idle_share"] = round((hb.get("pace_idle_ns", 0) - ha.get("pace_idle_ns", 0)) / 1e9 / span, 4)
        d["tx_lost_share"] = round((hb.get("pace_lost_ns", 0) - ha.get("pace_lost_ns", 0)) / 1e9 / span, 4)
    return d


def frame_cost(opts):
    """bench/common/frame_cost next to the probe: hot per-frame ns of a 4 KiB
    ICRC and a 4 KiB copy; None when it is not there or fails."""
    path = os.path.join(os.path.dirname(opts.probe or ""), "frame_cost")
    try:
        # Short batches, many of them, the least taken: on a loaded machine
        # some batch runs without being preempted (and at --prio's nice).
        p = Link.start([path, "--iterations", "5000", "--batches", "31"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    except OSError:
        return None
    try:
        out, _ = p.communicate(timeout=60)
        return json.loads(out.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return None
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def ceiling(ref_mpps, cost):
    """An estimate of the best ratio any correct RoCE endpoint could reach
    against testpmd txonly -> rxonly at 4 KiB in a placement: testpmd spends
    ref_ns = 1e3 / ref_mpps per frame on each side (memif's one copy of the
    frame; both sides in step, the slower sets the rate), a RoCE sender adds
    the ICRC over the frame, a receiver the ICRC check and the copy into the
    MR (hot caches: the least they cost); ceiling = ref_ns / (ref_ns + extra)
    for each side, the smaller of the two bounds the ratio."""
    if not ref_mpps or not cost:
        return None
    ref_ns = 1e3 / ref_mpps
    tx_extra = cost["icrc_ns"]
    rx_extra = cost["icrc_ns"] + cost["memcpy_ns"]
    return {"estimate": True, "ref_ns_per_frame": round(ref_ns, 1), "icrc_ns": cost["icrc_ns"],
            "memcpy_ns": cost["memcpy_ns"], "tx_extra_ns": round(tx_extra, 1), "rx_extra_ns": round(rx_extra, 1),
            "tx_ceiling": round(ref_ns / (ref_ns + tx_extra), 3), "rx_ceiling": round(ref_ns / (ref_ns + rx_extra), 3),
            "ceiling_ratio": round(ref_ns / (ref_ns + max(tx_extra, rx_extra)), 3)}


def best_of_all(rounds):
    """Each tool's best round over the whole run, whatever the placement (the
    rounds of one placement are few on this VM): the figures to read when no
    placement has enough counted rounds."""
    best, second, where = {}, {}, {}
    for kind in ("ref", "floor", "ours"):
        xs = sorted((x for x in rounds if x["kind"] == kind and x["value"] is not None), key=lambda x: -x["value"])
        best[kind] = xs[0]["value"] if xs else None
        second[kind] = xs[1]["value"] if len(xs) > 1 else None
        where[kind] = {"round": xs[0]["round"], "counted_as": xs[0]["counted_as"]} if xs else None
    r = lambda a, b: round(a / b, 4) if a and b else None  # noqa: E731
    return {"best_of_all": {"ref": best["ref"], "floor": best["floor"], "ours": best["ours"],
                            "floor_ratio": r(best["floor"], best["ref"]), "ratio": r(best["ours"], best["ref"]),
                            "ours_vs_floor": r(best["ours"], best["floor"]),
                            "second_best": second, "best_round": where}}


def interleaved(name, unit, opts, ref_round, ours_round, ref_tool, with_ceiling=False, floor_round=None):
    """Runs opts.rounds reference rounds and as many sf-nic rounds (and, with
    floor_round, as many roce_floor rounds between them), alternating, with
    the placement probe between every two; emits one JSON line (see the
    module docstring)."""
    probe = Probe(opts.probe)
    cost = frame_cost(opts) if with_ceiling else None
    rounds = []
    before = probe.sample()
    for r in range(opts.rounds):
        kinds = (("ref", ref_round),) + ((("floor", floor_round),) if floor_round else ()) + (("ours", ours_round),)
        for kind, fn in kinds:
            try:
                fig = fn(r)
            except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError, KeyError) as e:
                fig = {"value": None, "failed": str(e)[:300]}
            after = probe.sample()
            fig.update({"kind": kind, "round": r, "before": before["placement"], "after": after["placement"],
                        "before_rtt_ns": before["rtt_ns"], "after_rtt_ns": after["rtt_ns"]})
            if fig["value"] is None:
                fig["counted_as"] = None
                fig["why"] = "the round failed"
            elif before["placement"] != after["placement"] or before["placement"] not in PLACEMENTS:
                fig["counted_as"] = None
                fig["why"] = "probes disagree" if before["placement"] != after["placement"] else \
                    f"placement {before['placement']}" + (f" ({before['why']})" if "why" in before else "")
            elif fig.get("steady_spread") is not None and fig["steady_spread"] > STEADY_SPREAD:
                fig["counted_as"] = None
                fig["why"] = f"per-period rates spread {fig['steady_spread']} > {STEADY_SPREAD}"
            else:
                fig["counted_as"] = before["placement"]
            log(f"{name} round {r} {kind}: {fig['value']} {unit}, probes {before['placement']}"
                f"({before['rtt_ns']}) -> {after['placement']}({after['rtt_ns']}), counted as {fig['counted_as']}")
            rounds.append(fig)
            before = after

    # A round can leave a placement and come back between two probes (they
    # are seconds apart, a placement lasts ~0.2-1 s when the vCPUs idle): with
    # 3 or more rounds of one side in a placement, one further than
    # STEADY_SPREAD from their median was a hidden mix and counts for none.
    for p in PLACEMENTS:
        for kind in ("ref", "floor", "ours"):
            xs = [x for x in rounds if x["kind"] == kind and x["counted_as"] == p]
            if len(xs) < 3:
                continue
            m = median([x["value"] for x in xs])
            for x in xs:
                if m > 0 and not 1 / STEADY_SPREAD <= x["value"] / m <= STEADY_SPREAD:
                    x["counted_as"] = None
                    x["why"] = f"{x['value']} is off the {p} median {round(m, 4)} of its side: a hidden mix"

    def r4(x):
        return None if x is None else round(x, 4)

    per = {}
    for p in PLACEMENTS:
        ref = [x["value"] for x in rounds if x["kind"] == "ref" and x["counted_as"] == p]
        ours = [x for x in rounds if x["kind"] == "ours" and x["counted_as"] == p]
        ov = [x["value"] for x in ours]
        d = {"ref_rounds": len(ref), "ours_rounds": len(ov),
             "ref_median": r4(median(ref)), "ours_median": r4(median(ov)),
             "ratio_median": r4(median(ov) / median(ref)) if ref and ov else None,
             "ref_best": r4(max(ref)) if ref else None, "ours_best": r4(max(ov)) if ov else None,
             "ratio_best": r4(max(ov) / max(ref)) if ref and ov else None}
        if floor_round:
            fl = [x["value"] for x in rounds if x["kind"] == "floor" and x["counted_as"] == p]
            d.update({"floor_rounds": len(fl), "floor_median": r4(median(fl)), "floor_best": r4(max(fl)) if fl else None,
                      "floor_ratio_best": r4(max(fl) / max(ref)) if fl and ref else None,
                      "ours_vs_floor_best": r4(max(ov) / max(fl)) if fl and ov else None,
                      "floor_ratio_median": r4(median(fl) / median(ref)) if fl and ref else None,
                      "ours_vs_floor_median": r4(median(ov) / median(fl)) if fl and ov else None})
        for k in ("tx_cpu", "tx_wait", "rx_cpu", "rx_wait"):
            v = [x[k] for x in ours if x.get(k) is not None]
            d[k] = r4(median(v)) if v else None
        if with_ceiling and ref:
            mpps = median([x["mpps"] for x in rounds if x["kind"] == "ref" and x["counted_as"] == p])
            d["ceiling"] = ceiling(mpps, cost)
        if not ref or not ov:
            d["note"] = ("no round ran in this placement" if not ref and not ov else
                         f"no counted {'reference' if not ref else 'sf-nic'} round in this placement: no ratio")
        per[p] = d
    full = [p for p in PLACEMENTS if per[p]["ratio_median"] is not None]
    main_p = max(full, key=lambda p: (per[p]["ref_rounds"] + per[p]["ours_rounds"], p == "shared_l3")) if full else None
    if main_p:
        value, ref, placement = per[main_p]["ours_median"], per[main_p]["ref_median"], main_p
    else:  # no placement has both sides: the medians over every round, said so
        value = median([x["value"] for x in rounds if x["kind"] == "ours" and x["value"] is not None])
        ref = median([x["value"] for x in rounds if x["kind"] == "ref" and x["value"] is not None])
        placement = None
    emit(name, value, unit, ref, placement=placement, statistic="median of each side's counted rounds",
         placements=per, ref_tool=ref_tool, rounds_each=opts.rounds, round_seconds=opts.seconds,
         discarded=sum(1 for x in rounds if x["counted_as"] is None),
         mbuf_size=Link.mbuf_size, prio=f"nice:{Link.nice}" if Link.nice is not None else "other",
         **({"frame_cost": cost} if with_ceiling else {}),
         **({"floor_tool": "roce_floor tx -> rx (ICRC; parse, ICRC check, copy; no transport), same link"}
            if floor_round else {}),
         **(best_of_all(rounds) if floor_round else {}), rounds=rounds,
         load1=os.getloadavg()[0],
         **({} if main_p else {"note": "no placement had a counted round of both sides: value/ref are medians over every round, not a placement's"}))


def sf_round(binary, tmp, opts, size_bytes, tag, r, extra=()):
    t = f"{tag}{r}"
    rep = sf_pair(binary, tmp, "write_bw", ["-s", str(size_bytes), "-D", str(opts.seconds)] + list(extra) +
                  Link.sf_sched_args(), t,
                  client_extra=["--timeseries", os.path.join(tmp, f"{t}-cli.jsonl"), "--ts-period-ms", "250"],
                  server_extra=["--timeseries", os.path.join(tmp, f"{t}-srv.jsonl"), "--ts-period-ms", "250"])
    return rep["workloads"][0], sf_round_account(tmp, t)


def write_bw(binary, tmp, opts):
    frame = 4096 + ROCE_HDR

    def ref_round(r):
        live = testpmd_run(tmp, frame, opts.seconds, f"bw{r}")
        gbps = [x * 4096 * 8 / 1e9 for x in live]
        return {"value": round(sum(gbps) / len(gbps), 4), "mpps": round(sum(live) / len(live) / 1e6, 4),
                "period_gbps": [round(x, 2) for x in gbps], "steady_spread": spread(gbps)}

    def ours_round(r):
        w, acct = sf_round(binary, tmp, opts, 65536, "bw", r)
        return {"value": round(w["goodput_gbps"], 4), "messages": w["messages"], **acct}

    def floor_round(r):
        gbps, fig = floor_run(opts.floor, tmp, opts.seconds, f"bw{r}")
        return {"value": round(sum(gbps) / len(gbps), 4), **fig,
                "period_gbps": [round(x, 2) for x in gbps], "steady_spread": spread(gbps)}

    have_floor = opts.floor and os.access(opts.floor, os.X_OK)
    if not have_floor:
        log(f"nic_write_bw: no roce_floor at {opts.floor}: the floor rounds are skipped")
    interleaved("nic_write_bw", "Gb/s", opts, ref_round, ours_round,
                f"dpdk-testpmd txonly->rxonly memif {frame} B (payload Gb/s)", with_ceiling=True,
                floor_round=floor_round if have_floor else None)


def mrc_write_bw(binary, tmp, opts):
    """nic_mrc_write_bw: the same write_bw (64 KiB, 4096 B MTU, one QP) with
    --transport mrc (128 EVs, SACKs, out-of-order placement tracking; its
    default window and timers) against --transport rc, rounds interleaved on
    the same memif link. Goal (issue 15 section 5): >= 0.9."""
    def ref_round(r):
        w, acct = sf_round(binary, tmp, opts, 65536, "mrcref", r)
        return {"value": round(w["goodput_gbps"], 4), "messages": w["messages"], **acct}

    def ours_round(r):
        w, acct = sf_round(binary, tmp, opts, 65536, "mrc", r, extra=["--transport", "mrc"])
        return {"value": round(w["goodput_gbps"], 4), "messages": w["messages"], **acct}

    interleaved("nic_mrc_write_bw", "Gb/s", opts, ref_round, ours_round,
                "sf-nic write_bw --transport rc, same link and flags")


def write_bw_sides(binary, tmp, opts):
    """Which side limits sf-nic's write_bw in each placement (only with --only
    nic_write_bw_sides): --rounds rounds of each of two diagnostic runs of the
    nic_write_bw workload, the probe around each. backoff: both processes
    --idle backoff, so a thread with nothing to do sleeps: its sleep share
    (1 - running - waiting for the CPU, schedstat) is its slack, and the side
    without slack is the one that sets the rate. paced: --rate-limit
    PACED_GBPS (above what either placement reaches) with the default spin:
    the sender's pace_lost share (served late: the sender busy) against its
    pace_idle share (due but blocked: its RC window waited for the
    receiver's ACKs; the memif ring holds more frames than the window, so
    a slow receiver shows here and not as a full ring). value = the paced
    runs' median goodput in the placement with the most counted rounds; no
    reference runs here (ref and ratio null); placements.P.limit: sender when
    the paced runs' median pace_lost share exceeds their pace_idle share by
    more than SLACK_MARGIN, receiver the other way round, else unclear. The
    back-off sleep shares are reported beside it: a side sleeps only after
    ~1,100 idle iterations, so small slack shows there as ~0 on both."""
    probe = Probe(opts.probe)
    rounds = []
    before = probe.sample()
    for r in range(opts.rounds):
        for mode, extra in (("backoff", ["--idle", "backoff"]), ("paced", [])):
            t = f"sd{mode[0]}{r}"
            cli_extra = ["--timeseries", os.path.join(tmp, f"{t}-cli.jsonl"), "--ts-period-ms", "250"]
            if mode == "paced":
                cli_extra += ["--rate-limit", str(PACED_GBPS)]
            rep = sf_pair(binary, tmp, "write_bw", ["-s", "65536", "-D", str(opts.seconds)] + extra + Link.sf_sched_args(), t,
                          client_extra=cli_extra,
                          server_extra=["--timeseries", os.path.join(tmp, f"{t}-srv.jsonl"), "--ts-period-ms", "250"])
            after = probe.sample()
            fig = {"mode": mode, "round": r, "value": round(rep["workloads"][0]["goodput_gbps"], 4),
                   **sf_round_account(tmp, t, paced=(mode == "paced")),
                   "before": before["placement"], "after": after["placement"],
                   "before_rtt_ns": before["rtt_ns"], "after_rtt_ns": after["rtt_ns"],
                   "counted_as": before["placement"] if before["placement"] == after["placement"] and
                   before["placement"] in PLACEMENTS else None}
            log(f"nic_write_bw_sides round {r} {mode}: {fig['value']} Gb/s, {before['placement']} -> "
                f"{after['placement']}; tx cpu/sleep {fig.get('tx_cpu')}/{fig.get('tx_sleep')}, rx "
                f"{fig.get('rx_cpu')}/{fig.get('rx_sleep')}, idle/lost {fig.get('tx_idle_share')}/{fig.get('tx_lost_share')}")
            rounds.append(fig)
            before = after
    per = {}
    for p in PLACEMENTS:
        d = {}
        for mode, keys in (("backoff", ("value", "tx_cpu", "tx_sleep", "rx_cpu", "rx_sleep")),
                           ("paced", ("value", "tx_idle_share", "tx_lost_share", "tx_cpu", "rx_cpu"))):
            xs = [x for x in rounds if x["mode"] == mode and x["counted_as"] == p]
            d[mode] = {"rounds": len(xs), **{k: (round(median([x[k] for x in xs if x.get(k) is not None]), 4)
                                                 if any(x.get(k) is not None for x in xs) else None) for k in keys}}
        pc = d["paced"]
        if pc["rounds"] and pc["tx_idle_share"] is not None and pc["tx_lost_share"] is not None:
            gap = pc["tx_lost_share"] - pc["tx_idle_share"]
            d["limit"] = "sender" if gap > SLACK_MARGIN else "receiver" if gap < -SLACK_MARGIN else "unclear"
        else:
            d["limit"] = None
            d["note"] = "no counted paced round in this placement"
        per[p] = d
    full = [p for p in PLACEMENTS if per[p]["paced"]["rounds"]]
    main_p = max(full, key=lambda p: per[p]["paced"]["rounds"]) if full else None
    emit("nic_write_bw_sides", per[main_p]["paced"]["value"] if main_p else None, "Gb/s", None, placement=main_p,
         placements=per, paced_gbps=PACED_GBPS, rounds=rounds, load1=os.getloadavg()[0])


def msg_rate(binary, tmp, opts):
    frame = 64 + ROCE_HDR + 16  # WRITE_ONLY carries a RETH

    def ref_round(r):
        live = testpmd_run(tmp, frame, opts.seconds, f"mr{r}")
        mpps = [x / 1e6 for x in live]
        return {"value": round(sum(mpps) / len(mpps), 4), "period_mpps": [round(x, 3) for x in mpps],
                "steady_spread": spread(mpps)}

    def ours_round(r):
        w, acct = sf_round(binary, tmp, opts, 64, "mr", r)
        return {"value": round(w["msg_rate_mpps"], 4), "messages": w["messages"], **acct}

    interleaved("nic_msg_rate", "Mpps", opts, ref_round, ours_round, f"dpdk-testpmd txonly->rxonly memif {frame} B")


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


def flag_value(name, default, conv=str):
    if name not in sys.argv:
        return default
    i = sys.argv.index(name)
    if i + 1 >= len(sys.argv):
        raise ValueError(f"{name} needs a value")
    try:
        return conv(sys.argv[i + 1])
    except ValueError:
        raise ValueError(f"{name}: bad value '{sys.argv[i + 1]}'")


class BenchOptions:
    """nic_write_bw / nic_msg_rate options: --rounds N (of each tool, default
    3), --probe PATH (default: bench/common/core_rtt in the build directory
    that holds SF_NIC), --floor PATH (default: bench/nic/roce_floor there; the
    floor rounds are skipped when it is missing), --mbuf-size N, --tag TAG (in every --file-prefix and
    in the socket directory's name), --prio other|nice:N (default nice:-20
    as root: both sf-nic get --sched nice:N, both testpmd their session's
    autogroup at nice N, so other load on the machine takes as little from
    one tool as from the other)."""

    def __init__(self, seconds, rounds, probe, floor=None):
        self.seconds = seconds
        self.rounds = rounds
        self.probe = probe
        self.floor = floor


def bench_options(binary, seconds):
    """Parses the options above (Link gets --mbuf-size and --tag); None after
    saying why on stderr."""
    try:
        rounds = flag_value("--rounds", 3, int)
        mbuf = flag_value("--mbuf-size", None, int)
        tag = flag_value("--tag", "sfnb")
        prio = flag_value("--prio", "nice:-20" if os.geteuid() == 0 else "other")
        build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(binary))))  # build/nic/app/sf-nic
        probe = flag_value("--probe", os.path.join(build, "bench", "common", "core_rtt"))
        floor = flag_value("--floor", os.path.join(build, "bench", "nic", "roce_floor"))
    except ValueError as e:
        log(f"nic_bench: {e}")
        return None
    if rounds < 1:
        log("nic_bench: --rounds must be >= 1")
        return None
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", tag):
        log(f"nic_bench: --tag '{tag}': letters, digits, '-' and '_' only (it goes into file names)")
        return None
    Link.tag = tag
    if prio != "other":
        m = re.fullmatch(r"nice:(-?\d+)", prio)
        if not m or not -20 <= int(m.group(1)) <= 19:
            log(f"nic_bench: --prio '{prio}': other or nice:N with N in -20..19")
            return None
        Link.nice = int(m.group(1))
    if mbuf is not None:
        if not SF_NIC_MIN_MBUF <= mbuf <= 65535:
            log(f"nic_bench: --mbuf-size {mbuf}: must be in [{SF_NIC_MIN_MBUF}, 65535] "
                f"(what sf-nic --mbuf-size takes; an mbuf's data room includes {MBUF_HEADROOM} B of headroom)")
            return None
        if not sf_nic_has_mbuf_size(binary):
            log(f"nic_bench: --mbuf-size {mbuf}: {binary} has no --mbuf-size option (its --help does not list it); "
                "build an sf-nic that has it (helper h-rxfast's flag)")
            return None
        Link.mbuf_size = mbuf
    return BenchOptions(seconds, rounds, probe, floor)


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
    opts = bench_options(binary, seconds)
    if opts is None:
        return 2
    runs = [("nic_write_bw", lambda t: write_bw(binary, t, opts)),
            ("nic_msg_rate", lambda t: msg_rate(binary, t, opts)),
            ("nic_mrc_write_bw", lambda t: mrc_write_bw(binary, t, opts)),
            ("nic_write_bw_sides", lambda t: write_bw_sides(binary, t, opts)),
            ("nic_pacing_1G", lambda t: pacing(binary, t, 1, seconds, sched, idle, window, burst)),
            ("nic_pacing_10G", lambda t: pacing(binary, t, 10, seconds, sched, idle, window, burst)),
            ("nic_pacing_40G", lambda t: pacing(binary, t, 40, seconds, sched, idle, window, burst))]
    rc = 0
    with tempfile.TemporaryDirectory(prefix=f"sf-nic-bench-{Link.tag}-") as tmp:
        for name, fn in runs:
            if (only and name != only) or (not only and name in OPT_IN):
                continue
            try:
                fn(tmp)
            except Exception as e:  # one failing figure must not hide the others
                log(f"{name}: {e}")
                rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
