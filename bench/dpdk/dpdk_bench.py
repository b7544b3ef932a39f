#!/usr/bin/python3
"""Real-time driver benchmarks. Prints JSON lines
{"bench":..., "value":..., "unit":..., "ref":..., "ratio":...}.

(a) shaper_1g / shaper_10g: sf-pktio gen on net_null (tx only, 1500 B frames)
    shaped at 1 and 10 Gb/s for --seconds; value = achieved wire rate.
(b) fwd_64B: sf-pktio fwd between two net_null ports vs dpdk-testpmd io fwd
    on the same vdevs, run back to back in this script; value = forwarded
    Mpps (both directions), ref = testpmd's.
Usage: dpdk_bench.py SF_PKTIO [--seconds S]
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bench_proc  # noqa: E402  (bench/bench_proc.py)

EAL = ["--no-pci", "--log-level", "*:warning", "--no-telemetry"]


def emit(bench, value, unit, ref, **extra):
    d = {"bench": bench, "value": round(value, 4), "unit": unit, "ref": round(ref, 4),
         "ratio": round(value / ref, 4) if ref else None}
    d.update(extra)
    print(json.dumps(d), flush=True)


def pktio(binary, eal, app, timeout):
    p = subprocess.run([binary] + EAL + eal + ["--"] + app + ["--log-level", "warn"],
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    return json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])


def shaper(binary, seconds):
    for rate, name in ((1, "shaper_1g"), (10, "shaper_10g")):
        j = pktio(binary, ["--vdev", "net_null0"], ["--mode", "gen", "--size", "1500", "--rate-gbps", str(rate),
                                                    "--duration", str(seconds), "--tx-only"], seconds + 30)
        p = j["ports"][0]
        emit(name, p["tx_gbps"], "Gb/s", rate, mpps=round(p["tx_mpps"], 4),
             shaper_held_ms=round(p["shaper_held_ms"], 1), load1=os.getloadavg()[0])


def testpmd_mpps(seconds):
    prefix = f"sf-bench-tp-{os.getpid()}"
    cmd = ["dpdk-testpmd"] + EAL + ["--file-prefix", prefix, "-l", "0-1", "--vdev", "net_null0",
                                    "--vdev", "net_null1", "--", "--forward-mode=io", "--stats-period", "1",
                                    "--total-num-mbufs", "8192"]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(seconds + 1.5)  # with --stats-period testpmd forwards until SIGINT; stats every 1 s
    out = bench_proc.interrupt(p)
    pps = [int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", out)]
    periods = [pps[i] + pps[i + 1] for i in range(0, len(pps) - 1, 2)][1:]  # both ports; skip warm-up
    if not periods:
        raise RuntimeError("no testpmd stats:\n" + out[-2000:])
    return sum(periods) / len(periods) / 1e6


def fwd(binary, seconds):
    ref = testpmd_mpps(seconds)
    j = pktio(binary, ["--vdev", "net_null0", "--vdev", "net_null1"],
              ["--mode", "fwd", "--duration", str(seconds)], seconds + 30)
    ours = sum(p["tx_mpps"] for p in j["ports"])
    emit("fwd_64B", ours, "Mpps", ref, ref_tool="dpdk-testpmd io fwd, net_null x2",
         load1=os.getloadavg()[0])


def main():
    binary = sys.argv[1]
    seconds = 1.0
    if "--seconds" in sys.argv:
        seconds = float(sys.argv[sys.argv.index("--seconds") + 1])
    shaper(binary, seconds)
    fwd(binary, max(seconds, 2.0))


if __name__ == "__main__":
    main()
