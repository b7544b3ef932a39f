"""Running sf-sim from a test: the plan, its exit status and its summary line.

Imported by the Python sf-sim tests (tests/tools/sf_sim_test.py,
tests/scenario/multiport_sim_test.py) after they put tests/support on sys.path.
"""
import json
import subprocess
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(binary, plan, out, *extra):
    """sf-sim PLAN --out OUT [EXTRA...]: (exit status, stdout, stderr)."""
    r = subprocess.run([binary, plan, "--out", out, *extra], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def run_finished(binary, plan, out, *extra):
    """Runs the plan and fails the test unless sf-sim exits 0 with every
    workload finished; returns the summary (its last stdout line)."""
    rc, stdout, err = run(binary, plan, out, *extra)
    if rc != 0:
        fail(f"sf-sim exited {rc}: {err}")
    summary = json.loads(stdout.strip().splitlines()[-1])
    if not summary["finished"] or summary["failed_workloads"]:
        fail(f"summary {summary}")
    return summary
