"""sf-lab metrics: figures of a finished run (real or --sim) that the report
does not give, read from its results.json and sf-nic time series
(timeseries-nic-*.jsonl) and reports (docs/lab.md "Metrics"):

  sf-lab metrics OUT [--event-ms T] [--window-us W] [--flows PREFIX]

prints one JSON object:

  goodput       the fabric's goodput (bytes every nic host received, summed)
                over windows of W us: before_gbps (mean from the first byte to
                T), after_gbps (mean from T + W to the first flow's completion,
                the steady state after the event), dip_gbps / dip_pct (the
                lowest window from T on, and 1 - dip / before), below_90_us
                (how long, from T, windows stayed under 0.9 x before),
                recovered_us (T to the first window back at 0.9 x before)
  retransmits   the first sample from T on in which any host's retransmits
                (RC and MRC) rose: first_after_us (its time - T, at the
                series' resolution); MRC hosts: total, by cause, EVs retired
  flows         per selected flow: completion_s, goodput_gbps, complete, and
                latency p50 / p99 (us) where the report has it
  qp_errors     workloads whose sf-nic status is not ok (a QP in error, a
                retry limit hit, a run limit cut it), by name
  planes        bytes sent per host port index (plane), summed over hosts, with
                min / max / mean and max_over_mean (1 = perfectly even); with
                MRC hosts also mrc_data_packets (data packets per plane, no
                control frames) and its mrc_data_max/min_over_mean

Without --event-ms the event figures are null; the first event of the
run's results.json is used when there is one.
"""
import glob
import json
import os


def _nic_series(out):
    """{host: [(t_s, sample)]} from every timeseries-nic-*.jsonl of a run."""
    hosts = {}
    for fn in sorted(glob.glob(os.path.join(out, "timeseries-nic-*.jsonl"))):
        with open(fn) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                for h, v in r.get("hosts", {}).items():
                    hosts.setdefault(h, []).append((r["t_s"], v))
    return hosts


def _total(hosts, key, sub=None):
    """[(t, sum over hosts of key)] on the union of the sample times (each
    host's last value carried forward)."""
    times = sorted({t for rows in hosts.values() for t, _ in rows})
    out = []
    idx = {h: 0 for h in hosts}
    last = {h: 0 for h in hosts}
    for t in times:
        for h, rows in hosts.items():
            i = idx[h]
            while i < len(rows) and rows[i][0] <= t:
                v = rows[i][1]
                if sub:
                    v = v.get(sub) or {}
                last[h] = v.get(key, 0) or 0
                i += 1
            idx[h] = i
        out.append((t, sum(last.values())))
    return out


def _windows(series, w_s):
    """[(t_end, Gb/s)] of a cumulative byte series over windows of w_s."""
    out = []
    if not series:
        return out
    j = 0
    for i, (t, b) in enumerate(series):
        while j < i and series[j][0] < t - w_s - 1e-12:
            j += 1
        t0, b0 = series[j]
        if t - t0 >= w_s * 0.999:
            out.append((t, (b - b0) * 8 / (t - t0) / 1e9))
    return out


def goodput(hosts, t_ev, w_s, t_end):
    rx = _total(hosts, "rx_bytes")
    win = _windows(rx, w_s)
    first = next((t for t, b in rx if b > 0), None)
    res = {"window_us": w_s * 1e6, "first_rx_us": None if first is None else first * 1e6}
    if first is None:
        return res

    def mean(lo, hi):
        pts = [(t, b) for t, b in rx if lo <= t <= hi]
        if len(pts) < 2 or pts[-1][0] <= pts[0][0]:
            return None
        return (pts[-1][1] - pts[0][1]) * 8 / (pts[-1][0] - pts[0][0]) / 1e9

    end = t_end if t_end is not None else rx[-1][0]
    res["mean_gbps"] = mean(first, end)
    if t_ev is None:
        return res
    before = mean(first + w_s, t_ev)
    res["before_gbps"] = before
    res["after_gbps"] = mean(t_ev + w_s, end) if end > t_ev + 2 * w_s else None
    after = [(t, g) for t, g in win if t_ev + w_s * 0.999 <= t <= end]
    if not after or not before:
        return res
    dip_t, dip = min(after, key=lambda x: x[1])
    res["dip_gbps"] = dip
    res["dip_at_us"] = (dip_t - t_ev) * 1e6
    res["dip_pct"] = max(0.0, 100.0 * (1 - dip / before))
    below = [t for t, g in after if g < 0.9 * before]
    res["below_90_us"] = (len(below) * (after[1][0] - after[0][0]) * 1e6) if len(after) > 1 and below else 0.0
    back = next((t for t, g in after if t >= dip_t and g >= 0.9 * before), None)
    res["recovered_us"] = None if back is None else (back - t_ev) * 1e6
    return res


def retransmits(hosts, t_ev):
    res = {"total": _total(hosts, "retransmits")[-1][1] if hosts else 0}
    mrc_hosts = {h: rows for h, rows in hosts.items() if any("mrc" in v for _, v in rows)}
    if mrc_hosts:
        last = {h: rows[-1][1]["mrc"] for h, rows in mrc_hosts.items()}
        for k in ("retransmits", "rtx_sack", "rtx_nack", "rtx_timeout", "timeouts", "retire_refused",
                  "evs_assumed_bad", "no_usable_ev", "port_status_sent"):
            res[f"mrc_{k}"] = sum(m.get(k, 0) for m in last.values())
        res["mrc_evs_retired"] = sum(sum(m.get("evs", {}).get("retired", [])) for m in last.values())
    if t_ev is not None:
        tot = _total(hosts, "retransmits")
        base = next((b for t, b in reversed(tot) if t < t_ev), 0)
        first = next((t for t, b in tot if t >= t_ev and b > base), None)
        res["first_after_us"] = None if first is None else (first - t_ev) * 1e6
        if mrc_hosts:
            ret = _total(mrc_hosts, "retransmits", sub="mrc")
            rbase = next((b for t, b in reversed(ret) if t < t_ev), 0)
            res["mrc_before_event"] = rbase
    return res


def planes(hosts):
    """Bytes sent per host port index over all hosts (last sample)."""
    per = {}
    for h, rows in hosts.items():
        v = rows[-1][1]
        ports = v.get("ports")
        if ports:
            for p in ports:
                per[p["port"]] = per.get(p["port"], 0) + p.get("tx_bytes", 0)
        else:
            per[1] = per.get(1, 0) + v.get("tx_bytes", 0)
    if not per:
        return None
    vals = [per[k] for k in sorted(per)]
    mean = sum(vals) / len(vals)
    res = {"tx_bytes": vals, "min": min(vals), "max": max(vals), "mean": mean,
           "max_over_mean": max(vals) / mean if mean else None,
           "min_over_mean": min(vals) / mean if mean else None}
    # MRC data packets per plane (the hosts' mrc plane_packets: first
    # transmissions and retransmissions, no control frames: tx_bytes above
    # also counts the SACKs, which all leave on the control plane 1).
    data = []
    for h, rows in hosts.items():
        pp = (rows[-1][1].get("mrc") or {}).get("plane_packets") or []
        data += [0] * (len(pp) - len(data))
        for i, n in enumerate(pp):
            data[i] += n
    if len(data) > 1 and sum(data):
        dm = sum(data) / len(data)
        res["mrc_data_packets"] = data
        res["mrc_data_max_over_mean"] = max(data) / dm
        res["mrc_data_min_over_mean"] = min(data) / dm
    return res


def qp_errors(out):
    bad = {}
    for fn in sorted(glob.glob(os.path.join(out, "nic-*-report.json"))):
        with open(fn) as f:
            rep = json.load(f)
        for w in rep.get("workloads", []):
            st = w.get("status", "ok")
            if st != "ok":
                bad[w.get("name", "?")] = st
    return bad


def compute(out, event_ms=None, window_us=10.0, flows_prefix=""):
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    if event_ms is None:
        evs = (res.get("events") or {}).get("planned") or []
        if evs:
            event_ms = evs[0].get("at_ms")
    t_ev = None if event_ms is None else event_ms / 1000.0
    hosts = _nic_series(out)
    fl = [f for f in res.get("flows", []) if f["name"].startswith(flows_prefix)]
    done = [f["completion_s"] for f in fl if f.get("completion_s")]
    starts = {f["name"]: f.get("start_s", 0) or 0 for f in fl}
    t_end = min(done) if done else None
    flows = {}
    for f in fl:
        lat = f.get("latency_us") or {}
        flows[f["name"]] = {"completion_s": f.get("completion_s"), "goodput_gbps": f.get("goodput_gbps"),
                            "complete": f.get("complete"), "bytes_received": f.get("bytes_received"),
                            "latency_p50_us": lat.get("p50"), "latency_p99_us": lat.get("p99")}
    del starts
    gp = goodput(hosts, t_ev, window_us / 1e6, t_end) if hosts else None
    return {"out": out, "event_ms": event_ms, "goodput": gp, "retransmits": retransmits(hosts, t_ev) if hosts else None,
            "flows_complete": sum(1 for f in fl if f.get("complete")), "flows": len(fl),
            "last_completion_s": max(done) if len(done) == len(fl) and done else None,
            "first_completion_s": t_end, "qp_errors": qp_errors(out), "planes": planes(hosts) if hosts else None,
            "flow": flows}
