#!/usr/bin/python3
"""The demo under a signal sent to its own PID (issue 17: `kill -TERM` to
tools/demo.py made it exit at once with no report, sf-lab and sf-switch
orphaned, runtime dirs left behind).

Usage: demo_signal_test.py --build BUILD_DIR {TERM|INT}
Runs `tools/demo.py --quick --no-console`, waits (bounded poll on the run's
files) until the incast crosses the switch, sends the signal to the demo's
PID only (not its process group), and expects: the demo exits 130 after
sf-lab finished (report written, run marked interrupted, the summary
printed), and no process, runtime dir, huge page file or memif socket of the
run is left. Exit 0 = pass, 77 = skipped, else fail.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
from lab_test import TestFailure, check, check_nothing_left  # noqa: E402

SKIP = 77


def traffic_seen(out):
    """True once the switch's time series shows the incast's bytes."""
    try:
        with open(os.path.join(out, "timeseries-sw0.jsonl")) as f:
            lines = f.read().strip().splitlines()[-2:-1]  # the last complete line
        return bool(lines) and sum(p["rx_bytes"] for p in json.loads(lines[0])["ports"].values()) > 1_000_000
    except (OSError, ValueError, KeyError):
        return False


def run(build, sig):
    d = tempfile.mkdtemp(prefix="sf-demo-sig-")
    try:
        out = os.path.join(d, "out")
        p = subprocess.Popen([sys.executable, os.path.join(ROOT, "tools", "demo.py"), "--build", build, "--quick",
                              "--no-console", "--out", out],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 40
        while not traffic_seen(out):
            if p.poll() is not None:
                raise TestFailure(f"demo exited early ({p.returncode}): {p.communicate()[1][-2000:]}")
            if time.monotonic() >= deadline:
                p.send_signal(signal.SIGINT)
                p.communicate(timeout=30)
                raise TestFailure("no traffic across the switch within 40 s")
            time.sleep(0.05)
        os.kill(p.pid, sig)  # the demo's own PID: sf-lab must learn of it from the demo
        so, se = p.communicate(timeout=40)
        print(so[-1500:])
        check(p.returncode == 130, f"demo exited {p.returncode} after {signal.Signals(sig).name}, want 130:\n"
                                   f"{se[-2000:]}")
        res = json.load(open(os.path.join(out, "results.json")))
        check(res["run"]["interrupted"], "results.json does not say interrupted")
        check("every flow complete:" in so and "report:" in so, "the demo printed no summary")
        lab_pid = int(res["processes"]["prefixes"][0].split("-")[0].removeprefix("sflab"))
        check_nothing_left(res, lab_pid)
        check(not os.path.exists(f"/proc/{lab_pid}"), f"sf-lab (pid {lab_pid}) still running")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("signal", choices=("TERM", "INT"))
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if os.geteuid() != 0:
        print("SKIP: needs root (huge pages, memif)")
        return SKIP
    for b in ("switch/app/sf-switch", "nic/app/sf-nic"):
        if not os.access(os.path.join(build, b), os.X_OK):
            print(f"SKIP: {b} is not built in {build}")
            return SKIP
    run(build, signal.SIGTERM if a.signal == "TERM" else signal.SIGINT)
    print(f"PASS demo SIG{a.signal}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except TestFailure as e:
        print(f"FAIL: {e}")
        sys.exit(1)
