"""sf-lab live console: every second, per switch port with a link, the rx/tx
rates (Gb/s), the deepest queue now and its largest sample in the second
(KiB), ECN marks, PFC pause frames sent / received and drops per second, CNPs
(nic hosts), and a progress bar for the run's duration. On a terminal the
block is redrawn in place; otherwise (a log, CI) one block per second."""
import json
import os
import sys


def bar(frac, width=24):
    frac = min(max(frac, 0.0), 1.0)
    n = int(round(frac * width))
    return "[" + "#" * n + "." * (width - n) + "]"


class Console:
    def __init__(self, stream=None, redraw=None):
        self.out = stream or sys.stdout
        self.redraw = self.out.isatty() if redraw is None else redraw
        self.lines_drawn = 0
        self.history = []  # every block printed, for report.md
        self.prev = {}
        self.prev_tel = None

    def begin(self, lab):
        self.rows = []  # (switch, port, peer label)
        for l in lab.t.links:
            for ep, other in ((l.a, l.b), (l.b, l.a)):
                if ep[1]:
                    peer = other[0] if other[1] is None else f"{other[0]}:{other[1]}"
                    self.rows.append((ep[0], ep[1], peer, l.speed_gbps))
        self.prev = {name: ts.last() for name, ts in lab.ts.items()}
        self.prev_tel = lab.tel[-1] if lab.tel else None

    def _fmt_block(self, lab, t_s):
        dur = lab.t.duration_s
        head = f"{t_s:6.1f}s {bar(t_s / dur)} {min(t_s / dur, 1) * 100:3.0f}% of {dur:g} s"
        cnp = self._cnps(lab)
        if cnp is not None:
            head += f"   CNPs sent {cnp[0]:,} received {cnp[1]:,}"
        lines = [head,
                 f"  {'port':<18} {'peer':<14} {'Gb/s':>5} {'rx':>6} {'tx':>6} | {'queue KiB':^15} | "
                 f"{'ECN/s':>7} {'PFC tx/s':>8} {'rx/s':>6} {'drop/s':>7}",
                 f"  {'':<18} {'':<14} {'line':>5} {'':>6} {'':>6} | {'now':>7} {'max':>7} |"]
        tel = lab.tel[-1] if lab.tel else None
        for sw, port, peer, speed in self.rows:
            ts = lab.ts[sw]
            a, b = self.prev.get(sw), ts.last()
            if a is None or b is None or port not in b["ports"] or b["t_s"] <= a["t_s"]:
                lines.append(f"  {sw + ':' + port:<18} {peer:<14} {speed:5d}   (no sample yet)")
                continue
            dt = b["t_s"] - a["t_s"]
            rx = series.rate_gbps(a, b, port, "rx_bytes")
            tx = series.rate_gbps(a, b, port, "tx_bytes")
            window = [s for s in ts.samples if a["t_s"] < s["t_s"] <= b["t_s"]]
            dnow = max(q[series.DEPTH] for q in b["ports"][port]["queues"])
            dmax = max([dnow] + [max(q[series.DEPTH] for q in s["ports"][port]["queues"]) for s in window])
            mk = (series.marks(b, port) - series.marks(a, port)) / dt
            dr = (b["ports"][port]["dropped"] - a["ports"][port]["dropped"]) / dt
            ptx = prx = 0.0
            if tel and self.prev_tel and tel["t_s"] > self.prev_tel["t_s"]:
                cur = tel["switches"].get(sw, {}).get(port)
                old = self.prev_tel["switches"].get(sw, {}).get(port)
                if cur and old:
                    tdt = tel["t_s"] - self.prev_tel["t_s"]
                    ptx = (cur["tx_pause"] - old["tx_pause"]) / tdt
                    prx = (cur["rx_pause"] - old["rx_pause"]) / tdt
            lines.append(f"  {sw + ':' + port:<18} {peer:<14} {speed:5d} {rx:6.2f} {tx:6.2f} | "
                         f"{dnow / 1024:7.1f} {dmax / 1024:7.1f} | {mk:7.0f} {ptx:8.0f} {prx:6.0f} {dr:7.0f}")
        return lines

    def _cnps(self, lab):
        tot = None
        for proc in lab.nics:
            path = lab.nic_ts(proc)
            try:
                with open(path, "rb") as f:
                    f.seek(max(0, os.path.getsize(path) - 65536))
                    last = f.read().decode(errors="replace").strip().splitlines()[-1:]
            except OSError:
                continue
            if not last:
                continue
            try:
                s = json.loads(last[0])
            except ValueError:
                continue
            sent = sum(h.get("cnp_sent", 0) for h in s.get("hosts", {}).values())
            recv = sum(h.get("cnp_received", 0) for h in s.get("hosts", {}).values())
            tot = (sent + (tot or (0, 0))[0], recv + (tot or (0, 0))[1])
        return tot

    def tick(self, lab, t_s):
        lines = self._fmt_block(lab, t_s)
        self.history.append(lines)
        if self.redraw and self.lines_drawn:
            self.out.write(f"\x1b[{self.lines_drawn}F\x1b[J")
        self.out.write("\n".join(lines) + "\n")
        if not self.redraw:
            self.out.write("\n")
        self.out.flush()
        self.lines_drawn = len(lines)
        self.prev = {name: ts.last() for name, ts in lab.ts.items()}
        self.prev_tel = lab.tel[-1] if lab.tel else None


import series  # noqa: E402  (tools/demo/series.py, on the path via launch)
