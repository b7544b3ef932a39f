#!/usr/bin/python3
"""Trace hash of the scenario suite: one fingerprint of every outcome it records.

Runs each scenario test binary (tests/scenario/scenario_*_test of a build
dir, or of --bin-dir: e.g. binaries of a base commit kept aside) with its own
empty SF_SCENARIO_OUT, then hashes what the suite records:
  - every result file the binary writes there (scenario_*.json: counters,
    time series, the simulator's trace_hash of every event, the sink's CE
    pattern hash), with the keys that hold wall-clock figures left out;
  - what each binary prints of its results on stdout (virtual-time figures:
    marks, drops, trace hashes, delivered bytes), less gtest's own lines,
    EAL's log lines and anything naming wall-clock time;
  - the verdict of each gtest case (name and passed / failed / skipped, from
    --gtest_output=json; durations left out).
Prints one JSON line per binary ({"binary", "hash", "files", "cases",
"failed"}) and a last line {"scenario_trace_hash": ..., "binaries": N}.
Two builds (before / after a change that must not change behaviour) are
compared by running this on each and comparing the lines: equal hashes,
equal outcomes. A binary whose hash differs between two runs of the same
build would be non-deterministic; --repeat 2 checks that (exit 3 if so).

Usage: tests/scenario/trace_hash.py [BUILD_DIR] [--bin-dir DIR] [--only NAME,..]
                                    [--repeat N] [--keep DIR] [--timeout S]
"""
import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Keys whose values are wall-clock measurements (not outcomes): dropped
# wherever they appear in a result file.
WALL_KEYS = {"wall_s", "wall_ms", "wall_ns", "elapsed_s", "elapsed_ms", "runtime_s", "time", "timestamp",
             "events_per_s", "sim_speed", "host", "load1"}


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in sorted(v.items()) if k not in WALL_KEYS}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def canon_file(path):
    """Canonical bytes of a result file: JSON (one document or JSON lines)
    re-serialised with sorted keys and wall-clock keys removed; other files as
    they are."""
    raw = open(path, "rb").read()
    try:
        return json.dumps(strip(json.loads(raw)), sort_keys=True).encode()
    except ValueError:
        pass
    try:
        lines = [json.dumps(strip(json.loads(ln)), sort_keys=True) for ln in raw.decode().splitlines() if ln.strip()]
        return "\n".join(lines).encode()
    except ValueError:
        return raw


# stdout lines that are not outcomes: gtest's progress lines (they carry
# durations), EAL / DPDK log lines, and lines that name wall-clock time.
NOISE = re.compile(r"^\[ *(RUN|OK|PASSED|FAILED|SKIPPED|DISABLED|-+|=+) *\]|^(EAL|TELEMETRY|USER1|MEMPOOL|LPM|HASH)[:\s]|"
                   r"wall|elapsed|real time|ms total|events/s|Mevents", re.I)


def canon_stdout(text, out_dir):
    """The outcome lines of a binary's stdout; the result directory (it names
    the files it wrote) reads OUT, so runs into different directories compare."""
    text = text.replace(out_dir, "OUT")
    return "\n".join(ln for ln in text.splitlines() if ln.strip() and not NOISE.search(ln)).encode()


def verdicts(gtest_json):
    """[(suite.case, status)] from gtest's JSON report, durations left out."""
    out = []
    try:
        doc = json.load(open(gtest_json))
    except (OSError, ValueError):
        return out
    for suite in doc.get("testsuites", []):
        for case in suite.get("testsuite", []):
            name = f"{suite.get('name')}.{case.get('name')}"
            if case.get("result") == "SKIPPED" or case.get("status") == "NOTRUN":
                status = "skipped"
            elif case.get("failures"):
                status = "failed"
            else:
                status = "passed"
            out.append((name, status))
    return sorted(out)


def run_binary(binary, source_root, out_dir, timeout):
    os.makedirs(out_dir, exist_ok=True)
    report = os.path.join(out_dir, ".gtest.json")
    env = dict(os.environ, SF_SOURCE_ROOT=source_root, SF_SCENARIO_OUT=out_dir, SF_TEST_EAL_MB="1536")
    try:
        p = subprocess.run([binary, f"--gtest_output=json:{report}"], env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=timeout)
        rc = p.returncode
        out = canon_stdout(p.stdout.decode(errors="replace"), out_dir)
    except subprocess.TimeoutExpired:
        rc, out = "timeout", b""
    with open(os.path.join(out_dir, ".stdout"), "wb") as f:
        f.write(out)
    cases = verdicts(report)
    h = hashlib.sha256()
    files = []
    for path in sorted(glob.glob(os.path.join(out_dir, "*"))):
        name = os.path.basename(path)
        if name.startswith(".") or not os.path.isfile(path):
            continue
        data = canon_file(path)
        files.append(name)
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    h.update(b"stdout\0" + hashlib.sha256(out).digest())
    for name, status in cases:
        h.update(f"case {name} {status}\n".encode())
    h.update(f"rc {rc}\n".encode())
    return {"binary": os.path.basename(binary), "hash": h.hexdigest()[:16], "files": files,
            "stdout_lines": out.count(b"\n") + (1 if out else 0),
            "cases": len(cases), "failed": [n for n, s in cases if s == "failed"], "rc": rc}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--bin-dir", help="where the scenario_*_test binaries are (default BUILD/tests/scenario)")
    ap.add_argument("--source-root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    help="SF_SOURCE_ROOT (configs); default: this checkout")
    ap.add_argument("--only", help="comma-separated binary names (scenario_x_test) to run")
    ap.add_argument("--repeat", type=int, default=1, help="runs per binary; exit 3 if a binary's hash varies")
    ap.add_argument("--keep", help="keep the result files in this directory")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    bin_dir = args.bin_dir or os.path.join(args.build, "tests", "scenario")
    binaries = sorted(b for b in glob.glob(os.path.join(bin_dir, "scenario_*_test")) if os.access(b, os.X_OK))
    if args.only:
        want = set(args.only.split(","))
        binaries = [b for b in binaries if os.path.basename(b) in want]
    if not binaries:
        print(f"trace_hash: no scenario_*_test binaries in {bin_dir}", file=sys.stderr)
        return 2
    work = args.keep or tempfile.mkdtemp(prefix="sf-trace-hash-")
    total = hashlib.sha256()
    unstable = False
    try:
        for b in binaries:
            results = [run_binary(os.path.abspath(b), args.source_root,
                                  os.path.join(work, f"{os.path.basename(b)}.{i}"), args.timeout)
                       for i in range(args.repeat)]
            r = results[0]
            if len({x["hash"] for x in results}) > 1:
                r["unstable"] = [x["hash"] for x in results]
                unstable = True
            print(json.dumps(r), flush=True)
            total.update(f"{r['binary']} {r['hash']}\n".encode())
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"scenario_trace_hash": total.hexdigest()[:16], "binaries": len(binaries)}), flush=True)
    return 3 if unstable else 0


if __name__ == "__main__":
    sys.exit(main())
