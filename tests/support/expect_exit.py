#!/usr/bin/python3
"""Runs a command that must refuse its input: exit with exactly STATUS and
say MESSAGE on stderr (a crash, a signal or another message fails the test;
meson's should_fail accepted any non-zero exit, a crash included).

Usage: expect_exit.py STATUS MESSAGE -- COMMAND [ARG ...]
"""
import subprocess
import sys


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    want_rc, want_msg, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[4:]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    print(f"exit {p.returncode}; stderr: {p.stderr.strip()[-500:]}")
    if p.returncode != want_rc:
        print(f"FAIL: exit {p.returncode}, want {want_rc}")
        return 1
    if want_msg not in p.stderr:
        print(f"FAIL: stderr does not say {want_msg!r}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
