"""Reading sf-switch's time series (one JSON object per line, --timeseries).

A sample (switch/app/switch_stats.cc, timeseries_sample):
  {"t_s": 1.2, "buffer_used_bytes": N,
   "ports": {"Ethernet0": {"rx_bytes", "tx_bytes", "dropped", "paused",
                           "queues": [[depth_bytes, ecn_marked, dropped, tx_bytes] x 8]}, ...}}
Counters are cumulative since the switch started; depths are instantaneous.
"""
import json

DEPTH, MARKED, QDROPPED, QTX = 0, 1, 2, 3


def read_jsonl(path):
    """Every whole JSON line of a file (a torn last line is skipped); [] when
    the file cannot be read."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    continue
    except OSError:
        pass
    return rows


class TimeSeries:
    """Follows a growing JSON-lines file (complete lines only)."""

    def __init__(self, path):
        self.path = path
        self.samples = []
        self._pos = 0
        self._partial = ""

    def poll(self):
        """Reads lines appended since the last call; returns how many samples came."""
        try:
            with open(self.path) as f:
                f.seek(self._pos)
                data = f.read()
                self._pos = f.tell()
        except OSError:
            return 0
        data = self._partial + data
        lines = data.split("\n")
        self._partial = lines.pop()  # "" when the data ended with a newline
        n = 0
        for line in lines:
            line = line.strip()
            if not line:
                continue
            try:
                self.samples.append(json.loads(line))
                n += 1
            except ValueError:
                pass
        return n

    def last(self):
        return self.samples[-1] if self.samples else None

    def at_or_before(self, t_s):
        """The latest sample with t_s <= t (or the first one)."""
        best = self.samples[0] if self.samples else None
        for s in reversed(self.samples):
            if s["t_s"] <= t_s:
                return s
        return best


def queue(sample, port, q):
    return sample["ports"][port]["queues"][q]


def port_total(sample, port, field):
    return sample["ports"][port][field]


def depth(sample, port, q):
    return queue(sample, port, q)[DEPTH]


def marks(sample, port):
    return sum(qq[MARKED] for qq in sample["ports"][port]["queues"])


def total_drops(sample):
    return sum(p["dropped"] for p in sample["ports"].values())


def rate_gbps(a, b, port, field):
    """Average rate of a cumulative byte counter between samples a and b."""
    dt = b["t_s"] - a["t_s"]
    if dt <= 0:
        return 0.0
    return (b["ports"][port][field] - a["ports"][port][field]) * 8 / dt / 1e9
