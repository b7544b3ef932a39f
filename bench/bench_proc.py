"""Process helpers the benchmark scripts share (bench/*/ *_bench.py import it
after putting bench/ on sys.path)."""
import signal
import subprocess


def interrupt(p, timeout_s=30):
    """Stops a DPDK tool that runs until SIGINT (dpdk-testpmd --stats-period,
    sf-switch) and returns its stdout; kills it if it has not exited within
    `timeout_s`."""
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    return out
