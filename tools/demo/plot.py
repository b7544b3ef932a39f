"""The demo's PNG: the congested queue, ECN marks and drops, per-port throughput."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

import series  # noqa: E402

COLORS = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"]


def _windowed_rates(samples, t0, port, field, win_s):
    """(t, Gb/s) of a cumulative byte counter over a sliding window."""
    xs, ys = [], []
    j = 0
    for i, s in enumerate(samples):
        while j < i and s["t_s"] - samples[j + 1]["t_s"] >= win_s:
            j += 1
        a = samples[j]
        if s["t_s"] - a["t_s"] < win_s * 0.5:
            continue
        xs.append((s["t_s"] + a["t_s"]) / 2 - t0)
        ys.append(series.rate_gbps(a, s, port, field))
    return xs, ys


def _thousands(x, _pos):
    if abs(x) >= 1e6:
        return f"{x / 1e6:.1f}M"
    if abs(x) >= 1e3:
        return f"{x / 1e3:.0f}k"
    return f"{x:.0f}"


def make_plot(path, samples, *, t0, t1, hosts, egress, queue, lossy_queue, kmin, kmax, egress_gbps, title,
              win_s=0.5):
    """hosts: [(label, port name)]; egress: port name; t0/t1: traffic start/stop (switch time)."""
    if len(samples) < 2:
        return False
    t = [s["t_s"] - t0 for s in samples]
    fig, (ax_q, ax_m, ax_r) = plt.subplots(3, 1, figsize=(11, 9.5), sharex=True,
                                          gridspec_kw={"height_ratios": [1.2, 1, 1.1]})
    fig.suptitle(title, fontsize=12, fontweight="bold")
    for ax in (ax_q, ax_m, ax_r):
        ax.axvspan(0, t1 - t0, color="#f2f2f2", zorder=0)
        ax.grid(True, alpha=0.35)

    # 1. Queue depth of the congested (lossless) queue and the lossy one.
    dq = [series.depth(s, egress, queue) / 1024 for s in samples]
    dl = [series.depth(s, egress, lossy_queue) / 1024 for s in samples]
    ax_q.plot(t, dq, color="#d62728", lw=1.6, label=f"{egress} queue {queue} (RoCE, lossless)")
    ax_q.plot(t, dl, color="#7f7f7f", lw=1.0, label=f"{egress} queue {lossy_queue} (background, lossy)")
    ax_q.axhline(kmin / 1024, color="#ff7f0e", ls="--", lw=1.1, label=f"Kmin {kmin / 1024:.0f} KiB: ECN marking starts")
    ax_q.axhline(kmax / 1024, color="#b8860b", ls="--", lw=1.1,
                 label=f"Kmax {kmax / 1024:.0f} KiB: every ECT packet marked above")
    ax_q.axhspan(kmin / 1024, kmax / 1024, color="#ffdd99", alpha=0.35, zorder=0)
    ax_q.set_ylabel("queue depth (KiB)")
    ax_q.set_ylim(bottom=0, top=max(max(dq + dl), kmax / 1024) * 1.3)
    ax_q.legend(loc="upper left", fontsize=8, framealpha=0.9, ncol=2)
    ax_q.set_title("egress queue depth (ECN marks between Kmin and Kmax with P up to Pmax, all above Kmax)",
                   fontsize=9, loc="left")

    # 2. Cumulative ECN marks and drops.
    base = samples[0]
    m = [series.marks(s, egress) - series.marks(base, egress) for s in samples]
    d = [series.total_drops(s) - series.total_drops(base) for s in samples]
    # When each began (ECN is meant to fire long before the buffer runs out).
    first_m = next((x for x, y in zip(t, m) if y > 0), None)
    first_d = next((x for x, y in zip(t, d) if y > 0), None)
    lm = f"ECN CE marks ({egress})" + (f", first at {first_m:.2f} s" if first_m is not None else ", none")
    ld = "drops (all ports, all causes)" + (f", first at {first_d:.2f} s" if first_d is not None else ", none")
    ax_m.plot(t, m, color="#ff7f0e", lw=1.8, label=lm)
    ax_m.plot(t, d, color="#000000", lw=1.4, ls="-.", label=ld)
    for x, color in ((first_m, "#ff7f0e"), (first_d, "#000000")):
        if x is not None:
            ax_m.axvline(x, color=color, lw=0.8, ls=":")
    ax_m.yaxis.set_major_formatter(FuncFormatter(_thousands))
    ax_m.set_ylabel("packets (cumulative)")
    ax_m.set_ylim(bottom=0)
    ax_m.legend(loc="upper left", fontsize=8, framealpha=0.9)
    ax_m.set_title("cumulative ECN marks and drops", fontsize=9, loc="left")

    # 3. Per-port throughput.
    total_x, total_y = None, None
    for k, (label, port) in enumerate(hosts):
        x, y = _windowed_rates(samples, t0, port, "rx_bytes", win_s)
        ax_r.plot(x, y, color=COLORS[k % len(COLORS)], lw=1.0, alpha=0.85, label=f"{label} -> {port} (rx)")
        if total_y is None:
            total_x, total_y = x, list(y)
        else:
            total_y = [a + b for a, b in zip(total_y, y)]
    if total_y:
        ax_r.plot(total_x, total_y, color="#17becf", lw=1.8, label="offered (sum of rx)")
    x, y = _windowed_rates(samples, t0, egress, "tx_bytes", win_s)
    ax_r.plot(x, y, color="#d62728", lw=2.0, label=f"{egress} -> receiver (tx)")
    ax_r.axhline(egress_gbps, color="#d62728", ls=":", lw=1.1)
    ax_r.text(0.995, egress_gbps, f"egress line rate {egress_gbps:g} Gb/s ", transform=ax_r.get_yaxis_transform(),
              ha="right", va="bottom", fontsize=8, color="#d62728")
    ax_r.set_ylabel("Gb/s")
    top = max([egress_gbps] + y + (total_y or []))
    ax_r.set_ylim(0, top * 1.5)
    ax_r.legend(loc="upper left", fontsize=8, ncol=3, framealpha=0.9)
    ax_r.set_title(f"throughput per port ({win_s:g} s windows; shaded = traffic on)", fontsize=9, loc="left")
    ax_r.set_xlabel("seconds since the hosts started")
    ax_r.set_xlim(min(t), max(t))

    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
