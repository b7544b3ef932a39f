"""sf-lab PNG plots (python3-matplotlib, Agg): queue depth per queue, ECN
marks / CNPs / PFC pauses over time, per-flow throughput, latency CDF.
Each function returns True when it wrote its file."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import series  # noqa: E402

COLORS = plt.rcParams["axes.prop_cycle"].by_key()["color"]


def _t0(lab, ts):
    """Switch time of the lab's start: the switch's clock began at its own
    start, a little before; align by the last sample before traffic."""
    return lab.switch_t0.get(ts, 0.0)


def _save(fig, path):
    for ax in fig.axes:
        lo, hi = ax.get_xlim()
        if lo < -0.25 and hi > 0:  # samples from before the start: show only the last moment
            ax.set_xlim(left=-0.25)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return os.path.getsize(path) > 0


def queue_depth(lab, res, path):
    fig, ax = plt.subplots(figsize=(10, 4.5))
    n = 0
    marks = [q["watermark_bytes"] for p in res["ports"] for q in p["queues"] if q["watermark_bytes"]]
    # Many ports (a 64:1 incast): leave out the queues that never held 1 % of the fullest one.
    floor = max(marks) / 100 if len(marks) > 12 else 0
    left_out = sum(1 for m in marks if m < floor)
    for sw, ts in lab.ts.items():
        t0 = _t0(lab, sw)
        for p in res["ports"]:
            if p["switch"] != sw:
                continue
            for q in p["queues"]:
                if not q["watermark_bytes"] or q["watermark_bytes"] < floor:
                    continue
                xs = [s["t_s"] - t0 for s in ts.samples if p["port"] in s["ports"]]
                ys = [s["ports"][p["port"]]["queues"][q["queue"]][series.DEPTH] / 1024 for s in ts.samples
                      if p["port"] in s["ports"]]
                ax.plot(xs, ys, lw=1.3, color=COLORS[n % len(COLORS)],
                        label=f"{sw}:{p['port']} q{q['queue']} (max {q['watermark_bytes'] / 1024:.0f} KiB)")
                n += 1
    for k, (lo, hi) in enumerate(lab.wred_lines()):
        ax.axhline(lo / 1024, color="#ff7f0e", ls="--", lw=0.9, label="Kmin" if k == 0 else None)
        ax.axhline(hi / 1024, color="#b8860b", ls=":", lw=0.9, label="Kmax" if k == 0 else None)
    ax.set_xlabel("seconds since the start")
    ax.set_ylabel("queue depth (KiB)")
    ax.set_title("egress queue depth per queue (time-series samples)" +
                 (f"; {left_out} queues that never held 1 % of the fullest not drawn" if left_out else ""),
                 loc="left", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    if n == 0:
        ax.text(0.5, 0.5, "no queue held any bytes", transform=ax.transAxes, ha="center")
    ax.legend(fontsize=7, loc="upper right")
    return _save(fig, path)


def marks_pauses(lab, res, path):
    fig, (ax_e, ax_c, ax_p) = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    n = 0
    for sw, ts in lab.ts.items():
        t0 = _t0(lab, sw)
        base = ts.samples[0] if ts.samples else None
        for p in res["ports"]:
            if p["switch"] != sw or not p["ecn_marked"]:
                continue
            xs = [s["t_s"] - t0 for s in ts.samples]
            ys = [series.marks(s, p["port"]) - series.marks(base, p["port"]) for s in ts.samples]
            ax_e.plot(xs, ys, lw=1.4, color=COLORS[n % len(COLORS)], label=f"{sw}:{p['port']}")
            n += 1
    ax_e.set_ylabel("ECN CE marks\n(cumulative)")
    ax_e.set_title("ECN marks by egress port", loc="left", fontsize=10)
    if n == 0:
        ax_e.text(0.5, 0.5, "no ECN marks", transform=ax_e.transAxes, ha="center")
    # CNPs: sf-nic's time series (pktio senders neither make nor see CNPs).
    m = 0
    for host, rows in sorted(lab.nic_series().items()):
        for key, ls in (("cnp_sent", "-"), ("cnp_received", "--")):
            if not any(v.get(key, 0) for _, v in rows):
                continue
            ax_c.plot([x for x, _ in rows], [v.get(key, 0) for _, v in rows], ls=ls, lw=1.2,
                      color=COLORS[m % len(COLORS)], label=f"{host} {key.replace('_', ' ')}")
        m += 1
    ax_c.set_ylabel("CNPs\n(cumulative)")
    ax_c.set_title("CNPs (sf-nic hosts)", loc="left", fontsize=10)
    if m == 0:
        ax_c.text(0.5, 0.5, "no CNPs: no nic hosts (pktio senders do not take part in DCQCN)",
                  transform=ax_c.transAxes, ha="center", fontsize=9)
    # PFC pause frames sent / received per port, from the lab's telemetry polls.
    k = 0
    if lab.tel:
        b0 = lab.tel[0]
        for sw in lab.t.switches:
            for port in lab.t.switches[sw].ports:
                for key, ls in (("tx_pause", "-"), ("rx_pause", "--")):
                    ys = [s["switches"].get(sw, {}).get(port, {}).get(key, 0) -
                          b0["switches"].get(sw, {}).get(port, {}).get(key, 0) for s in lab.tel]
                    if not any(ys):
                        continue
                    ax_p.plot([s["t_s"] for s in lab.tel], ys, ls=ls, lw=1.2, color=COLORS[k % len(COLORS)],
                              label=f"{sw}:{port} {'sent' if key == 'tx_pause' else 'received'}")
                    k += 1
    ax_p.set_ylabel("PFC pause frames\n(cumulative)")
    ax_p.set_title("PFC pause frames sent / received by switch ports (telemetry, every 0.2 s)", loc="left",
                   fontsize=10)
    if k == 0:
        ax_p.text(0.5, 0.5, "no PFC pause frames", transform=ax_p.transAxes, ha="center")
    ax_p.set_xlabel("seconds since the start")
    for ax in (ax_e, ax_c, ax_p):
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper left", ncol=3)
    return _save(fig, path)


def _rates(samples, port, field, t0, win_s):
    xs, ys = [], []
    j = 0
    for i, s in enumerate(samples):
        while j < i - 1 and s["t_s"] - samples[j + 1]["t_s"] >= win_s:
            j += 1
        a = samples[j]
        if i == j or s["t_s"] - a["t_s"] <= 0:
            continue
        xs.append(s["t_s"] - t0)
        ys.append(series.rate_gbps(a, s, port, field))
    return xs, ys


def flow_throughput(lab, res, path, win_s=None, rseries=None):
    """Per flow: its goodput at the receiver (pktio receivers' per-flow time
    series; solid), and the rate its sender's switch port received (thin,
    dotted: what the sender offered); receivers' ports dashed."""
    win_s = win_s or max(0.1, 2 * lab.t.ts_period_ms / 1000)
    fig, ax = plt.subplots(figsize=(10, 4.5))
    n = 0
    t = lab.t
    color = {}
    for f in t.flows:
        color[f.name] = COLORS[len(color) % len(COLORS)]
    for host, rows in (rseries or {}).items():
        for f in [f for f in t.flows if f.dst == host]:
            xs, ys = [], []
            j = 0
            for i in range(1, len(rows)):
                while j < i - 1 and rows[i][0] - rows[j + 1][0] >= win_s:
                    j += 1
                dt = rows[i][0] - rows[j][0]
                if dt <= 0:
                    continue
                b1 = rows[i][1].get(f.sport, (0, 0))[1]
                b0 = rows[j][1].get(f.sport, (0, 0))[1]
                xs.append(rows[i][0])
                ys.append((b1 - b0) * 8 / dt / 1e9)
            ax.plot(xs, ys, lw=1.4, color=color[f.name], label=f"{f.name} received")
            n += 1
    nser = lab.nic_series()
    for host in sorted(t.senders(), key=lambda x: t.hosts[x].index):
        rows = nser.get(host)
        if not rows:
            continue
        names = ", ".join(f.name for f in t.flows_from(host))
        c = color[t.flows_from(host)[0].name]
        xs, ys = [], []
        for (ta, a), (tb, b) in zip(rows, rows[1:]):
            if tb > ta:
                xs.append(tb)
                ys.append((b.get("tx_bytes", 0) - a.get("tx_bytes", 0)) * 8 / (tb - ta) / 1e9)
        ax.plot(xs, ys, lw=1.4, color=c, label=f"{names} sent ({host}, sf-nic)")
        ax.plot([x for x, _ in rows], [v.get("rate_gbps", 0) for _, v in rows], lw=0.9, ls="-.", color=c,
                label=f"{host} CC rate (first QP)")
        n += 1
    for host in sorted(t.senders(), key=lambda x: t.hosts[x].index):
        h = t.hosts[host]
        flows = t.flows_from(host)
        names = ", ".join(f.name for f in flows)
        ts = lab.ts[h.switch]
        xs, ys = _rates(ts.samples, h.port, "rx_bytes", _t0(lab, h.switch), win_s)
        ax.plot(xs, ys, lw=0.8, ls=":", color=color[flows[0].name], label=f"{names} offered ({h.switch}:{h.port} rx)")
        n += 1
    last_busy = 0.0
    for host in t.receivers():
        h = t.hosts[host]
        ts = lab.ts[h.switch]
        xs, ys = _rates(ts.samples, h.port, "tx_bytes", _t0(lab, h.switch), win_s)
        ax.plot(xs, ys, lw=1.8, ls="--", color="#000000",
                label=f"to receiver {host} ({h.switch}:{h.port} tx, line {h.speed_gbps} Gb/s)")
        busy = [x for x, y in zip(xs, ys) if y > 0]
        if busy:
            last_busy = max(last_busy, max(busy))
        n += 1
    if last_busy > 0:
        ax.set_xlim(right=last_busy + max(0.3, 0.1 * last_busy))
    ax.set_xlabel("seconds since the start")
    ax.set_ylabel("Gb/s")
    ax.set_title(f"throughput per flow ({win_s:g} s windows): at the receiver or the sf-nic sender (solid), "
                 "offered at the switch (dotted)", loc="left", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="upper right")
    return _save(fig, path)


def latency_cdf(lab, res, path):
    fig, ax = plt.subplots(figsize=(8, 4.5))
    n = 0
    for k, v in res["latency"]["ports"].items():
        vals = sorted(v["values_us"])
        if not vals or max(vals) == 0:
            continue
        ys = [(i + 1) / len(vals) for i in range(len(vals))]
        ax.step(vals, ys, where="post", lw=1.4, color=COLORS[n % len(COLORS)],
                label=f"{k} queueing-delay estimate: p50 {v['p50_us']:.0f} us, p99 {v['p99_us']:.0f} us")
        n += 1
    # Measured: each probe's round trips (docs/lab.md "Latency probes").
    for name, vals in sorted(getattr(lab, "probe_samples", {}).items()):
        vals = sorted(vals)
        if not vals:
            continue
        ys = [(i + 1) / len(vals) for i in range(len(vals))]
        ax.step(vals, ys, where="post", lw=2.0, color=COLORS[n % len(COLORS)],
                label=f"probe '{name}' round trip (measured): p50 {vals[len(vals) // 2]:.0f} us, "
                      f"p99 {vals[min(len(vals) - 1, int(0.99 * len(vals)))]:.0f} us")
        n += 1
    for f in res["flows"]:
        lat = f.get("latency_us")
        if f.get("latency_source") == "sf-nic latency test" and isinstance(lat, dict) and lat.get("p50") is not None:
            ax.plot([lat["p50"], lat["p99"], lat["max"]], [0.5, 0.99, 1.0], "o-", ms=4,
                    label=f"{f['name']} (sf-nic: p50 / p99 / max)")
            n += 1
    ax.set_xlabel("microseconds")
    ax.set_ylabel("fraction")
    ax.set_title(("latency CDF: probe round trips (measured); " if getattr(lab, "probe_samples", None) else
                  "latency CDF: ") + "egress queueing-delay estimate (depth x 8 / line rate) per sample",
                 loc="left", fontsize=9)
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    if n == 0:
        ax.text(0.5, 0.5, "no queueing: every sampled egress queue was empty", transform=ax.transAxes, ha="center")
    else:
        ax.legend(fontsize=7, loc="lower right")
    return _save(fig, path)


PLOTS = [("queue_depth.png", "Queue depth per queue", queue_depth),
         ("marks_pauses.png", "ECN marks, CNPs and PFC pauses", marks_pauses),
         ("flow_throughput.png", "Throughput per flow", flow_throughput),
         ("latency_cdf.png", "Latency CDF", latency_cdf)]


def make_all(lab, res, out, raw=None):
    done = []
    rseries = lab.receiver_series(raw)
    for name, title, fn in PLOTS:
        ok = fn(lab, res, os.path.join(out, name), rseries=rseries,
                win_s=getattr(lab, "plot_window_s", None)) if fn is flow_throughput else \
            fn(lab, res, os.path.join(out, name))
        if ok:
            done.append((name, title))
    return done
