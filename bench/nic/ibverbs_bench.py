#!/usr/bin/python3
"""libsfverbs against sf-nic on the same memif link, in the same run
(docs/ibverbs.md): rounds interleaved (sf-nic, perftest, sf-nic, ...).

  ibverbs_write_bw   Debian's ib_write_bw under LD_PRELOAD=libsfverbs.so,
                     64 KiB messages for --seconds, its "BW average" (Gb/s);
                     ref = sf-nic write_bw with the same size and time
                     (goodput from its --report). Goal: ratio >= 0.9.
  ibverbs_write_bw_inline  the same ib_write_bw with SFVERBS_INLINE_PROGRESS=1
                     and SFVERBS_STAND_BACK_US=--stand-back-us (1000) on both
                     sides (the client's polling thread drives its datapath,
                     its progress thread sleeps meanwhile), same ref, same rounds.
  ibverbs_write_lat  ib_write_lat -s 64: perftest's t_typical (the median),
                     in us; ref = sf-nic write_lat's t_typical.

  ibverbs_write_bw_cm  (with --rdmacm LIBSFRDMACM) ib_write_bw -R (every QP
                     and perftest's sync through libsfrdmacm; its server spins
                     on ibv_poll_cq for the end message) -s 65536 -n --iters,
                     "BW average"; ref = the same ib_write_bw without -R
                     (its server waits in a TCP read).

Both sides idle-back-off (sf-nic --backoff, libsfverbs' default), 100 Gb/s
ports, 4096 B MTU. Value and ref are medians over --rounds rounds.
Usage: ibverbs_bench.py SF_NIC LIBSFVERBS [--rounds N] [--seconds S]
         [--rdmacm LIBSFRDMACM [--iters N]] [--lines bw,bwinline,lat,cm] [--stand-back-us N]
"""
import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

EAL = ["--no-pci", "--lcores=0@(0,1)", "--log-level=*:error", "--no-telemetry"]
IPS = ("10.9.0.1", "10.9.0.2")
MACS = ("02:00:0a:09:00:01", "02:00:0a:09:00:02")  # the MACs libsfverbs derives from IPS


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(f) as t:
            for ln in t.readlines()[1:]:
                x = ln.split()
                if x[1].endswith(":%04X" % port) and x[3] == "0A":
                    return True
    return False


def memif_up(path):
    if os.path.exists(path):
        return True
    with open("/proc/net/unix") as t:
        return any(ln.rstrip().endswith("@" + path) for ln in t)


def run_pair(srv_cmd, cli_cmd, srv_env, cli_env, sock, port, timeout_s):
    srv = subprocess.Popen(srv_cmd, env=srv_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    end = time.monotonic() + 30
    while not (memif_up(sock) and (port is None or listening(port))):
        if srv.poll() is not None or time.monotonic() > end:
            srv.kill()
            raise RuntimeError(f"server not ready: {srv.communicate()[0][-2000:]}")
        time.sleep(0.02)
    cli = subprocess.run(cli_cmd, env=cli_env, capture_output=True, text=True, timeout=timeout_s)
    try:
        sout = srv.communicate(timeout=20)[0]
    except subprocess.TimeoutExpired:
        srv.kill()
        sout = srv.communicate()[0]
    if cli.returncode != 0 or srv.returncode != 0:
        raise RuntimeError(f"exit {cli.returncode}/{srv.returncode}:\n{cli.stdout[-2000:]}{cli.stderr[-2000:]}\n{sout[-2000:]}")
    return cli.stdout


def sf_nic_round(binary, tmp, test, args, tag):
    sock = f"{tmp}/{tag}.sock"
    port = free_port()
    cmds = []
    for i, role in enumerate(("server", "client")):
        c = [binary] + EAL + [f"--file-prefix=sfvb-{tag}-{role}", "--", test,
                              "--port", f"net_memif0,role={role},socket={sock}", "--mac", MACS[i], "--ip", IPS[i],
                              "--backoff", "--report", f"{tmp}/{tag}.{role}.json", "-p", str(port)] + args
        if role == "client":
            c.append("127.0.0.1")
        cmds.append(c)
    out = run_pair(cmds[0], cmds[1], None, None, sock, None, 120)
    with open(f"{tmp}/{tag}.client.json") as f:
        rep = json.load(f)
    return out, rep


def perftest_round(lib, tmp, tool, args, tag, cmlib=None, extra_env=None):
    """cmlib: perftest -R with libsfrdmacm beside libsfverbs (the client
    given the server's RDMA address, its CM reached over loopback);
    extra_env: more SFVERBS_* variables for both sides."""
    sock = f"{tmp}/{tag}.sock"
    port = free_port()
    envs = []
    for i, role in enumerate(("server", "client")):
        e = dict(os.environ, LD_PRELOAD=lib, SFVERBS_PORT=f"net_memif0,role={role},socket={sock}", SFVERBS_IP=IPS[i],
                 SFVERBS_EAL="--log-level=*:error")
        if cmlib:
            e.update(LD_PRELOAD=f"{lib} {cmlib}", SFVERBS_CM_HOSTS=f"{IPS[0]}=127.0.0.1")
        if extra_env:
            e.update(extra_env)
        envs.append(e)
    base = [tool, "-x", "0", "-p", str(port)] + (["-R"] if cmlib else []) + args
    return run_pair(base, base + [IPS[0] if cmlib else "127.0.0.1"], envs[0], envs[1], sock, port, 120)


def row_after(out, header_word):
    lines = out.splitlines()
    for i, ln in enumerate(lines):
        if header_word in ln and i + 1 < len(lines):
            return lines[i + 1].split()
    raise RuntimeError(f"no row after {header_word!r}:\n{out}")


def emit(name, value, unit, ref, **extra):
    d = {"bench": name, "value": round(value, 3), "unit": unit, "ref": round(ref, 3),
         "ratio": round(value / ref, 3) if ref else None}
    d.update(extra)
    print(json.dumps(d), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sf_nic")
    ap.add_argument("lib")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--rdmacm", help="libsfrdmacm.so: adds the ibverbs_write_bw_cm line")
    ap.add_argument("--iters", type=int, default=2000, help="-n of the ibverbs_write_bw_cm line")
    ap.add_argument("--lines", default="bw,bwinline,lat,cm",
                    help="which lines: bw, bwinline, lat, cm (comma separated)")
    ap.add_argument("--stand-back-us", type=int, default=1000,
                    help="SFVERBS_STAND_BACK_US of the ibverbs_write_bw_inline line")
    a = ap.parse_args()
    lines = set(a.lines.split(","))
    if shutil.which("ib_write_bw") is None:
        log("skip: perftest not installed")
        return 0
    tmp = tempfile.mkdtemp(prefix="sfverbs-bench-")
    try:
        ours, inl, ref = [], [], []
        bw_args = ["-s", "65536", "-D", str(a.seconds), "--report_gbits"]
        inline_env = {"SFVERBS_INLINE_PROGRESS": "1", "SFVERBS_STAND_BACK_US": str(a.stand_back_us)}
        for r in range(a.rounds if ("bw" in lines or "bwinline" in lines) else 0):
            _, rep = sf_nic_round(a.sf_nic, tmp, "write_bw", ["-s", "65536", "-D", str(a.seconds)], f"nb{r}")
            ref.append(rep["workloads"][0]["goodput_gbps"])
            if "bw" in lines:
                out = perftest_round(a.lib, tmp, "ib_write_bw", bw_args, f"pb{r}")
                ours.append(float(row_after(out, "BW average")[3]))
            if "bwinline" in lines:
                out = perftest_round(a.lib, tmp, "ib_write_bw", bw_args, f"pi{r}", extra_env=inline_env)
                inl.append(float(row_after(out, "BW average")[3]))
            log(f"round {r}: sf-nic {ref[-1]:.2f} Gb/s, ib_write_bw {ours[-1] if ours else 0:.2f} Gb/s, "
                f"inline + stand-back {inl[-1] if inl else 0:.2f} Gb/s")
        if ours:
            emit("ibverbs_write_bw", statistics.median(ours), "Gb/s", statistics.median(ref), rounds=a.rounds,
                 seconds=a.seconds, ours_rounds=ours, ref_rounds=ref, goal=0.9)
        if inl:
            emit("ibverbs_write_bw_inline", statistics.median(inl), "Gb/s", statistics.median(ref), rounds=a.rounds,
                 seconds=a.seconds, ours_rounds=inl, ref_rounds=ref, goal=0.9,
                 note=f"SFVERBS_INLINE_PROGRESS=1 SFVERBS_STAND_BACK_US={a.stand_back_us} on both sides")
        ours, ref = [], []
        for r in range(a.rounds if "lat" in lines else 0):
            out, _ = sf_nic_round(a.sf_nic, tmp, "write_lat", ["-s", "64", "-n", "2000"], f"nl{r}")
            ref.append(float(row_after(out, "t_typical")[4]))
            out = perftest_round(a.lib, tmp, "ib_write_lat", ["-s", "64", "-n", "2000"], f"pl{r}")
            ours.append(float(row_after(out, "t_typical")[4]))
            log(f"round {r}: sf-nic t_typical {ref[-1]:.2f} us, ib_write_lat {ours[-1]:.2f} us")
        if ours:
            emit("ibverbs_write_lat", statistics.median(ours), "us", statistics.median(ref), rounds=a.rounds,
                 ours_rounds=ours, ref_rounds=ref, note="t_typical (perftest's median); lower is better")
        ours, ref = [], []
        args = ["-s", "65536", "-n", str(a.iters), "--report_gbits"]
        for r in range(a.rounds if "cm" in lines and a.rdmacm else 0):
            out = perftest_round(a.lib, tmp, "ib_write_bw", args, f"pp{r}")
            ref.append(float(row_after(out, "BW average")[3]))
            out = perftest_round(a.lib, tmp, "ib_write_bw", args, f"pr{r}", cmlib=a.rdmacm)
            ours.append(float(row_after(out, "BW average")[3]))
            log(f"round {r}: ib_write_bw {ref[-1]:.2f} Gb/s, ib_write_bw -R {ours[-1]:.2f} Gb/s, "
                f"load {os.getloadavg()[0]:.1f}")
        if ours:
            emit("ibverbs_write_bw_cm", statistics.median(ours), "Gb/s", statistics.median(ref), rounds=a.rounds,
                 iters=a.iters, ours_rounds=ours, ref_rounds=ref, note="ref: the same ib_write_bw without -R")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
