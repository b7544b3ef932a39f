"""Child DPDK processes of the demo: start, wait for ready files, stop.

Only processes started here are ever signalled (by PID). Each child:
- runs in its own process group, so a Ctrl-C in the terminal reaches only the
  demo, which then stops the children in order (hosts, switch, receiver);
- gets SIGTERM from the kernel if the demo itself dies (PR_SET_PDEATHSIG);
- writes stdout and stderr to files (no pipe can fill up and block it).
DPDK file prefixes are left to the tools (sf-<pid>) unless the caller names
one (Child(prefix=...), which must then also be on the command line); after a
child exits its runtime directory and huge page files are checked (and
removed if a killed child left them). tools/lab (sf-lab) uses this module too.
"""
import ctypes
import glob
import json
import os
import shutil
import signal
import subprocess
import time

PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


class StartError(RuntimeError):
    pass


def tail(path, lines=25):
    try:
        with open(path, errors="replace") as f:
            text = f.read().rstrip("\n").splitlines()
    except OSError:
        return "(no output)"
    return "\n".join(text[-lines:]) or "(no output)"


def hugetlbfs_mounts():
    out = []
    try:
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[2] == "hugetlbfs":
                    out.append(parts[1])
    except OSError:
        pass
    return out or ["/dev/hugepages"]


class Child:
    def __init__(self, name, argv, log_dir, nice=0, prefix=None):
        self.name = name
        self._prefix = prefix
        self.argv = argv
        self.stdout_path = os.path.join(log_dir, f"{name}.stdout")
        self.stderr_path = os.path.join(log_dir, f"{name}.stderr")
        self.nice = nice
        self.popen = None
        self.signals = []  # what stop() had to send

    @property
    def pid(self):
        return self.popen.pid if self.popen else None

    @property
    def prefix(self):
        return self._prefix or f"sf-{self.pid}"  # else the tools' default --file-prefix

    def start(self):
        nice = self.nice

        def setup():  # in the child, before exec
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
            # The parent may block these around start() (sf-lab does); the child must get them.
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
            if nice:
                os.nice(nice)

        with open(self.stdout_path, "w") as out, open(self.stderr_path, "w") as err:
            self.popen = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                          preexec_fn=setup, process_group=0, close_fds=True)
        return self

    def running(self):
        return self.popen is not None and self.popen.poll() is None

    def fail_text(self, what):
        rc = self.popen.poll() if self.popen else None
        text = (f"{self.name} {what} (pid {self.pid}, exit status {rc})\n"
                f"  command: {' '.join(self.argv)}\n"
                f"  --- last lines of its stderr ({self.stderr_path}) ---\n"
                + "\n".join("  " + line for line in tail(self.stderr_path).splitlines()))
        out = tail(self.stdout_path)  # sf-nic and sf-switch log their errors (spdlog) on stdout
        if out != "(no output)":
            text += f"\n  --- last lines of its stdout ({self.stdout_path}) ---\n" + \
                "\n".join("  " + line for line in out.splitlines())
        return text

    def wait_ready(self, ready_file, timeout_s):
        deadline = time.monotonic() + timeout_s
        while not os.path.exists(ready_file):
            if not self.running():
                raise StartError(self.fail_text("exited during start-up"))
            if time.monotonic() >= deadline:
                raise StartError(self.fail_text(f"was not ready after {timeout_s:.0f} s"))
            time.sleep(0.05)

    def interrupt(self):
        """Sends SIGINT (the tools' clean stop) without waiting."""
        if self.running():
            try:
                os.kill(self.popen.pid, signal.SIGINT)  # our own child, by PID
                self.signals.append("SIGINT")
            except ProcessLookupError:
                pass

    def stop(self, int_timeout_s=5.0, term_timeout_s=2.0, kill_timeout_s=2.0):
        """SIGINT (unless interrupt() sent it), then SIGTERM, then SIGKILL, each
        with a timeout. Returns the exit status."""
        if self.popen is None:
            return None
        for sig, timeout in ((signal.SIGINT, int_timeout_s), (signal.SIGTERM, term_timeout_s),
                             (signal.SIGKILL, kill_timeout_s)):
            if self.popen.poll() is not None:
                break
            if not (sig == signal.SIGINT and "SIGINT" in self.signals):
                try:
                    os.kill(self.popen.pid, sig)  # our own child, by PID
                    self.signals.append(signal.Signals(sig).name)
                except ProcessLookupError:
                    break
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                continue
        return self.popen.poll()

    def last_json(self):
        try:
            with open(self.stdout_path, errors="replace") as f:
                lines = f.read().strip().splitlines()
        except OSError:
            return None
        for line in reversed(lines):
            if line.startswith("{"):
                try:
                    return json.loads(line)
                except ValueError:
                    return None
        return None

    def dpdk_leftovers(self, remove=True):
        """Huge page files and the runtime directory of this child's prefix.
        Returns what was found (removed when `remove`, the child being gone)."""
        if self.popen is None or self.popen.poll() is None:
            return []
        found = []
        for mnt in hugetlbfs_mounts():
            found += glob.glob(os.path.join(mnt, self.prefix + "map_*"))
        for run in ("/var/run/dpdk", "/run/dpdk"):
            d = os.path.join(run, self.prefix)
            if os.path.isdir(d) and d not in found and os.path.realpath(d) not in map(os.path.realpath, found):
                found.append(d)
        if remove:
            for p in found:
                if os.path.isdir(p):
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    try:
                        os.unlink(p)
                    except OSError:
                        pass
        return found
