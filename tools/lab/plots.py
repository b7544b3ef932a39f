"""sf-lab PNG plots (python3-matplotlib, Agg): queue depth per queue, ECN
marks / CNPs / PFC pauses over time, per-flow throughput, latency CDF, and
for MRC senders per-plane / per-EV load and retransmissions over time.
Each function returns True when it wrote its file."""
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import events  # noqa: E402  (tools/lab/events.py)
import series  # noqa: E402

COLORS = plt.rcParams["axes.prop_cycle"].by_key()["color"]


def _t0(lab, ts):
    """Switch time of the lab's start: the switch's clock began at its own
    start, a little before; align by the last sample before traffic."""
    return lab.switch_t0.get(ts, 0.0)


def mark_events(lab, axes):
    """A labelled vertical line at every topology event (start and end) on
    each time axis; the label on the first axis only."""
    t = getattr(lab, "t", None)
    if not t or not getattr(t, "events", None):
        return
    for k, ax in enumerate(axes):
        for x, label in events.markers(t, t.events):
            ax.axvline(x, color="#d62728", ls="-.", lw=0.9, alpha=0.8)
            if k == 0:
                ax.annotate(label, xy=(x, 1), xycoords=("data", "axes fraction"), xytext=(2, -2),
                            textcoords="offset points", rotation=90, va="top", ha="left", fontsize=7,
                            color="#d62728")


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
    mark_events(lab, [ax])
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
    ax_p.set_title("PFC pause frames sent / received by switch ports " +
                   ("(switch time series, virtual time)" if getattr(lab, "sim", None) is not None
                    else "(telemetry, every 0.2 s)"), loc="left", fontsize=10)
    if k == 0:
        ax_p.text(0.5, 0.5, "no PFC pause frames", transform=ax_p.transAxes, ha="center")
    ax_p.set_xlabel("seconds since the start")
    mark_events(lab, [ax_e, ax_c, ax_p])
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
    mark_events(lab, [ax])
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


def mrc_paths(lab, res, path):
    """MRC senders (sf-nic hosts whose time series carry "mrc"): packets per
    plane over time, retransmissions by cause and EVs retired over time, and
    the load of every EV (a heat map, EV index x time) of the busiest sender.
    Nothing is written when no host ran MRC QPs."""
    nser = lab.nic_series()
    mrc = {h: [(t, v["mrc"]) for t, v in rows if "mrc" in v] for h, rows in nser.items()}
    mrc = {h: rows for h, rows in mrc.items() if len(rows) >= 2 and rows[-1][1].get("tx_data_packets", 0) > 0}
    if not mrc:
        return False
    fig, (a1, a2, a3) = plt.subplots(3, 1, figsize=(10, 10))

    def rate(rows, get):
        xs, ys = [], []
        for (ta, a), (tb, b) in zip(rows, rows[1:]):
            if tb > ta:
                xs.append(tb)
                ys.append((get(b) - get(a)) / (tb - ta))
        return xs, ys

    k = 0
    for host in sorted(mrc):
        rows = mrc[host]
        planes = len(rows[-1][1].get("plane_packets", []))
        for p in range(planes):
            xs, ys = rate(rows, lambda v, p=p: v["plane_packets"][p] if p < len(v["plane_packets"]) else 0)
            a1.plot(xs, [y / 1e6 for y in ys], lw=1.2, color=COLORS[k % len(COLORS)], ls=("-", "--", ":", "-.")[p % 4],
                    label=f"{host} plane {p}")
        for cause, ls in (("rtx_sack", "-"), ("rtx_nack", "--"), ("rtx_timeout", ":")):
            xs, ys = rate(rows, lambda v, c=cause: v.get(c, 0))
            if any(ys):
                a2.plot(xs, [y / 1e3 for y in ys], lw=1.2, ls=ls, color=COLORS[k % len(COLORS)],
                        label=f"{host} {cause} (k/s)")
        a2.plot([t for t, _ in rows], [v.get("evs_assumed_bad", 0) for _, v in rows], lw=0.9, ls="-.",
                color=COLORS[k % len(COLORS)], label=f"{host} EVs retired now")
        k += 1
    busiest = max(mrc, key=lambda h: mrc[h][-1][1].get("tx_data_packets", 0))
    rows = mrc[busiest]
    evs = [v["evs"]["sent"] for _, v in rows if "evs" in v]
    if len(evs) >= 2:
        n = max(len(e) for e in evs)
        grid = [[(b[i] if i < len(b) else 0) - (a[i] if i < len(a) else 0) for i in range(n)]
                for a, b in zip(evs, evs[1:])]
        ts = [t for t, v in rows if "evs" in v]
        im = a3.imshow(list(map(list, zip(*grid))), aspect="auto", origin="lower", interpolation="nearest",
                       extent=(ts[0], ts[-1], -0.5, n - 0.5), cmap="viridis")
        fig.colorbar(im, ax=a3, label="packets per sample")
        a3.set_ylabel("EV index")
        a3.set_title(f"{busiest}: packets per EV and sample (first transmissions and probes)", loc="left",
                     fontsize=10)
    a1.set_title("MRC packets per plane (first transmissions, retransmissions, probes)", loc="left", fontsize=10)
    a1.set_ylabel("Mpkt/s")
    a2.set_title("MRC retransmissions by cause and EVs retired", loc="left", fontsize=10)
    for ax in (a1, a2):
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, loc="upper right")
    for ax in (a1, a2, a3):
        ax.set_xlabel("seconds since the start")
    mark_events(lab, [a1, a2])
    return _save(fig, path)


PLOTS = [("queue_depth.png", "Queue depth per queue", queue_depth),
         ("marks_pauses.png", "ECN marks, CNPs and PFC pauses", marks_pauses),
         ("flow_throughput.png", "Throughput per flow", flow_throughput),
         ("latency_cdf.png", "Latency CDF", latency_cdf),
         ("mrc_paths.png", "MRC: packets per plane and EV, retransmissions", mrc_paths)]


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


# ---- sf-lab compare: two report directories side by side ------------------------------------

_read_jsonl = series.read_jsonl


def load_report(d):
    """What compare() reads from a report directory (sf-lab run, real or
    --sim): results.json, the switches' samples of timeseries.jsonl (lab_t_s),
    the sf-nic time series, the WRED thresholds of run/switch-*.json."""
    with open(os.path.join(d, "results.json")) as f:
        res = json.load(f)
    sw = {}
    for r in _read_jsonl(os.path.join(d, "timeseries.jsonl")):
        src = r.get("source", "")
        if src.startswith("switch:"):
            sw.setdefault(src[len("switch:"):], []).append(r)
    nic = {}
    for name in sorted(os.listdir(d)):
        if name.startswith("timeseries-nic-") and name.endswith(".jsonl"):
            for r in _read_jsonl(os.path.join(d, name)):
                for host, v in r.get("hosts", {}).items():
                    nic.setdefault(host, []).append((r["t_s"], v))
    wred = set()
    run = os.path.join(d, "run")
    for name in sorted(os.listdir(run)) if os.path.isdir(run) else []:
        if name.startswith("switch-") and name.endswith(".json"):
            with open(os.path.join(run, name)) as f:
                cfg = json.load(f)
            for w in cfg.get("WRED_PROFILE", {}).values():
                try:
                    wred.add((int(w["green_min_threshold"]), int(w["green_max_threshold"])))
                except (TypeError, KeyError, ValueError):
                    pass
    return {"dir": d, "res": res, "sw": sw, "nic": nic, "wred": sorted(wred),
            "name": res.get("topology", {}).get("name") if isinstance(res.get("topology"), dict) else None}


def _hot_port(rep):
    """(switch, port) of the deepest egress queue of the run."""
    best = max(rep["res"]["ports"], key=lambda p: p.get("watermark_bytes", 0), default=None)
    return (best["switch"], best["port"]) if best else (None, None)


def _time_scale(reps):
    end = max((rows[-1]["lab_t_s"] for r in reps for rows in r["sw"].values() if rows), default=1.0)
    return (1e3, "ms") if end < 1 else (1.0, "s")


def compare(dirs, path, labels=None):
    """One PNG, one column per report directory, shared axes per row:
    1. the hot egress port's queues (depth, KiB) with Kmin / Kmax and the
       switch's whole buffer in use; ECN marks (cumulative, right axis);
    2. PFC pause frames sent and received by each switch port (cumulative);
    3. goodput received per nic host (Gb/s, from the sf-nic time series).
    Returns a dict of the figures each column's title shows."""
    reps = [load_report(d) for d in dirs]
    labels = labels or [r["name"] or os.path.basename(os.path.normpath(r["dir"])) for r in reps]
    k, unit = _time_scale(reps)
    fig, axes = plt.subplots(3, len(reps), figsize=(6.5 * len(reps), 9), sharex=True, sharey="row", squeeze=False)
    summary = []
    for c, rep in enumerate(reps):
        ax_q, ax_p, ax_t = axes[0][c], axes[1][c], axes[2][c]
        sw, port = _hot_port(rep)
        rows = rep["sw"].get(sw, [])
        xs = [r["lab_t_s"] * k for r in rows]
        qs = {}
        for r in rows:
            for q, v in enumerate(r["ports"].get(port, {}).get("queues", [])):
                qs.setdefault(q, []).append(v[0] / 1024)
        for n, (q, ys) in enumerate([(q, ys) for q, ys in sorted(qs.items()) if any(ys)]):
            ax_q.plot(xs, ys, lw=1.3, color=COLORS[n % len(COLORS)], label=f"{sw}:{port} q{q} depth")
        ax_q.plot(xs, [r.get("buffer_used_bytes", 0) / 1024 for r in rows], lw=0.9, ls=":", color="#555555",
                  label=f"{sw} buffer in use")
        for i, (lo, hi) in enumerate(rep["wred"]):
            ax_q.axhline(lo / 1024, color="#ff7f0e", ls="--", lw=0.9, label=f"Kmin {lo / 1024:.0f} KiB" if i == 0 else None)
            ax_q.axhline(hi / 1024, color="#b8860b", ls=":", lw=0.9, label=f"Kmax {hi / 1024:.0f} KiB" if i == 0 else None)
        ax_m = ax_q.twinx()
        marks = [sum(v[1] for v in r["ports"].get(port, {}).get("queues", [])) for r in rows]
        ax_m.plot(xs, marks, lw=1.0, color="#d62728", label="ECN marks (right)")
        ax_m.set_ylim(bottom=0)
        if c == len(reps) - 1:
            ax_m.set_ylabel("ECN CE marks (cumulative)", color="#d62728")
        h1, l1 = ax_q.get_legend_handles_labels()
        h2, l2 = ax_m.get_legend_handles_labels()
        ax_q.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper right")
        n = 0
        for s_name, srows in sorted(rep["sw"].items()):
            for p in sorted({p for r in srows for p in r["ports"]}):
                for key, ls in (("tx_pause", "-"), ("rx_pause", "--")):
                    ys = [r["ports"].get(p, {}).get(key, 0) for r in srows]
                    if any(ys):
                        ax_p.plot([r["lab_t_s"] * k for r in srows], ys, ls=ls, lw=1.2, color=COLORS[n % len(COLORS)],
                                  label=f"{s_name}:{p} {'sent' if key == 'tx_pause' else 'received'}")
                n += 1
        if not ax_p.get_legend_handles_labels()[0]:
            ax_p.text(0.5, 0.5, "no PFC pause frames", transform=ax_p.transAxes, ha="center")
        else:
            ax_p.legend(fontsize=7, loc="upper left")
        n = 0
        got = {h: r[-1][1].get("rx_bytes", 0) - r[0][1].get("rx_bytes", 0) for h, r in rep["nic"].items() if r}
        for host, hrows in sorted(rep["nic"].items()):
            if got.get(host, 0) < 0.01 * max(got.values(), default=0) or not got.get(host):
                continue  # a sender: its receive side is ACKs and CNPs
            xs_t, ys_t = [], []
            for (ta, a), (tb, b) in zip(hrows, hrows[1:]):
                if tb > ta:
                    xs_t.append(tb * k)
                    ys_t.append((b.get("rx_bytes", 0) - a.get("rx_bytes", 0)) * 8 / (tb - ta) / 1e9)
            ax_t.plot(xs_t, ys_t, lw=1.2, color=COLORS[n % len(COLORS)], label=f"{host} received")
            n += 1
        if ax_t.get_legend_handles_labels()[0]:
            ax_t.legend(fontsize=7, loc="upper right")
        t = rep["res"]["totals"]
        fig_s = {"label": labels[c], "ecn_marked": t.get("ecn_marked", 0), "cnp_sent": t.get("cnp_sent", 0),
                 "pfc_pause_sent": t.get("pfc_pause_sent", 0), "dropped": t.get("dropped", 0),
                 "hot_queue_max_bytes": max((p.get("watermark_bytes", 0) for p in rep["res"]["ports"]), default=0)}
        summary.append(fig_s)
        ax_q.set_title(f"{labels[c]}\nECN marks {fig_s['ecn_marked']:,}, CNPs {fig_s['cnp_sent']:,}, "
                       f"PFC pauses sent {fig_s['pfc_pause_sent']:,}, drops {fig_s['dropped']:,}", fontsize=10)
        ax_p.set_title("PFC pause frames per switch port (cumulative)", loc="left", fontsize=9)
        ax_t.set_title("goodput received per host (sf-nic time series)", loc="left", fontsize=9)
        ax_t.set_xlabel(f"{unit} since the start" + (" (virtual)" if rep["res"]["run"].get("virtual_time") else ""))
        for ax in (ax_q, ax_p, ax_t):
            ax.grid(True, alpha=0.3)
        if c == 0:
            ax_q.set_ylabel("egress queue depth (KiB)")
            ax_p.set_ylabel("PFC pause frames")
            ax_t.set_ylabel("Gb/s")
    for row in axes:
        row[0].set_ylim(bottom=0)  # shared per row: after every column is drawn
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return summary
