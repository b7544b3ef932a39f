"""sf-lab report: results.json (per flow, per port and queue, latency,
conservation), the merged time series and report.md. See docs/lab.md
"Reading the report"."""
import datetime
import json
import os

import nic
import series
import topology as tp


def pct(values, q):
    if not values:
        return None
    v = sorted(values)
    k = min(len(v) - 1, max(0, int(round(q / 100 * (len(v) - 1)))))
    return v[k]


def _pfc_sums(port):
    pfc = port.get("pfc") or {}
    sent = sum(v for k, v in pfc.items() if k.startswith("tx_prio") and k.endswith("_pause"))
    recv = sum(v for k, v in pfc.items() if k.startswith("rx_prio") and k.endswith("_pause")) + \
        pfc.get("rx_global_pause", 0)
    return sent, recv


def port_peers(topo):
    peers = {}
    for l in topo.links:
        for ep, other in ((l.a, l.b), (l.b, l.a)):
            if ep[1]:
                peers[(ep[0], ep[1])] = (other[0] if other[1] is None else f"{other[0]}:{other[1]}", l.speed_gbps)
    return peers


def build_results(lab, raw, clean):
    t = lab.t
    t0 = lab.t0_ns
    peers = port_peers(t)
    res = {"topology": {"name": t.name, "path": t.path, "description": t.description},
           "run": {"started_utc": lab.started_utc, "duration_s": t.duration_s,
                   "traffic_s": (lab.t_end_ns - t0) / 1e9 if t0 else 0, "stop_reason": lab.stop_reason,
                   "drained": getattr(lab, "drained", False), "interrupted": lab.interrupted,
                   "error": getattr(lab, "error", None)}}
    # ---- ports --------------------------------------------------------------
    ports = []
    port_rep = {}
    for sw, rep in raw["switches"].items():
        if not rep:
            continue
        for p in rep["ports"]:
            key = (sw, p["name"])
            if key not in peers:
                continue
            port_rep[key] = p
            sent, recv = _pfc_sums(p)
            qs = [{"queue": q["queue"], "tx_packets": q["tx_packets"], "tx_bytes": q["tx_bytes"],
                   "ecn_marked": q["ecn_marked"], "dropped": q["dropped"], "watermark_bytes": q["watermark_bytes"],
                   "depth_packets_at_stop": q["depth_packets"]}
                  for q in p["queues"] if q["tx_packets"] or q["dropped"] or q["watermark_bytes"]]
            ports.append({"switch": sw, "port": p["name"], "peer": peers[key][0], "speed_gbps": peers[key][1],
                          "rx_packets": p["rx_packets"], "rx_bytes": p["rx_bytes"], "tx_packets": p["tx_packets"],
                          "tx_bytes": p["tx_bytes"], "dropped": p["dropped"], "drops": p["drops"],
                          "ecn_marked": sum(q["ecn_marked"] for q in p["queues"]),
                          "pfc_pause_sent": sent, "pfc_pause_received": recv, "tx_pfc_frames": p.get("tx_pfc_frames", 0),
                          "pfc": p.get("pfc", {}),
                          "watermark_bytes": max((q["watermark_bytes"] for q in p["queues"]), default=0),
                          "queues": qs})
    res["ports"] = ports
    # ---- flows -----------------------------------------------------------------
    nic_flows, nic_hosts = nic.parse_nic_report([r for r in raw["nics"].values() if r], t) if raw["nics"] else ({}, {})
    flows = []
    sent_by_flow = {}
    for host, s in lab.plan.senders.items():
        j = raw["senders"].get(host)
        if not j:
            continue
        m = j["ports"][1]
        per = tp_cycle(s, m["tx_pkts"])
        for f, n in zip(s["flows"], per):
            sent_by_flow[f.name] = n
    rx_by_sport = {}
    for host, j in raw["receivers"].items():
        if not j:
            continue
        zero = j.get("clock_zero_mono_ns", 0)
        for fl in j.get("flows", []):
            rx_by_sport[fl["sport"]] = dict(fl, first_mono=zero + fl["first_rx_ns"], last_mono=zero + fl["last_rx_ns"])
    for f in t.flows:
        hs = t.hosts[f.src]
        d = {"name": f.name, "workload": f.workload, "type": f.type, "kind": hs.kind, "src": f.src, "dst": f.dst,
             "dscp": f.dscp, "size_bytes": f.size_bytes, "duration_s": f.duration_s, "rate_gbps": f.rate_gbps,
             "start_ms": f.start_ms}
        if hs.kind == "pktio":
            fb = tp.pktio_frame_bytes(hs)
            n_sent = sent_by_flow.get(f.name, 0)
            r = rx_by_sport.get(f.sport, {})
            n_rx = r.get("pkts", 0)
            start_mono = t0 + f.start_ms * 1_000_000
            first = (r["first_mono"] - t0) / 1e9 if r else None
            last = (r["last_mono"] - t0) / 1e9 if r else None
            want = tp.pktio_flow_frames(f, hs) if f.size_bytes else None
            complete = want is not None and n_rx == want
            # Sized flows: from the scheduled start to the last frame received (lost
            # frames are never resent by a pktio sender: "complete" says whether all came).
            completion = (r["last_mono"] - start_mono) / 1e9 if (r and want is not None) else None
            span = completion if completion else ((r["last_mono"] - r["first_mono"]) / 1e9 if r else 0)
            payload = n_rx * hs.ib_mtu
            d.update({"sport": f.sport, "frame_bytes": fb, "frames_sent": n_sent, "bytes_sent": n_sent * fb,
                      "frames_received": n_rx, "bytes_received": r.get("bytes", 0), "payload_bytes_received": payload,
                      "frames_lost": n_sent - n_rx, "first_rx_s": first, "last_rx_s": last,
                      "completion_s": completion, "complete": complete if want is not None else None,
                      "goodput_gbps": payload * 8 / span / 1e9 if span else 0.0, "latency_us": None})
        else:
            n = nic_flows.get(f.name, {})
            d.update({"bytes_sent": n.get("bytes", 0), "messages": n.get("messages"),
                      "bytes_received": n.get("bytes", 0) if n.get("status") == "ok" else n.get("server_bytes"),
                      "goodput_gbps": n.get("goodput_gbps"),
                      "completion_s": n.get("completion_s"), "latency_us": n.get("latency_us"),
                      "status": n.get("status", "no sf-nic report"),
                      # A run limit can end a client whose status is still "ok": complete
                      # only when every QP's size_bytes arrived (sized flows).
                      "complete": bool(n) and n.get("status") == "ok" and
                                  (not f.size_bytes or (n.get("bytes") or 0) >= f.size_bytes * f.qps)})
        flows.append(d)
    res["flows"] = flows
    # ---- probes: measured latency -------------------------------------------
    probe_raw, windows = nic.parse_probe_report([r for r in raw["nics"].values() if r], t) \
        if raw["nics"] and t.probes else ({}, {})
    res["probes"] = probes(t, probe_raw, windows)
    # ---- hosts -------------------------------------------------------------------
    hosts = {}
    for h in t.hosts.values():
        e = {"kind": h.kind, "switch": h.switch, "port": h.port, "speed_gbps": h.speed_gbps, "mac": h.mac, "ip": h.ip}
        if h.name in raw["senders"] and raw["senders"][h.name]:
            j = raw["senders"][h.name]
            m = j["ports"][1]
            e.update({"role": "sender", "tx_packets": m["tx_pkts"], "tx_bytes": m["tx_bytes"],
                      "tx_gbps": m["tx_gbps"], "tx_drops": m["tx_drops_stalled"] + m["tx_drops_at_stop"],
                      "rx_packets": m["rx_pkts"], "read_from_pcap": j.get("fwd", {}).get("read"),
                      "queue_drops": j.get("fwd", {}).get("queue_drops"),
                      "rate_gbps_cfg": j.get("rate_gbps_cfg")})
        if h.name in raw["receivers"] and raw["receivers"][h.name]:
            j = raw["receivers"][h.name]
            e.update({"role": "receiver", "rx_packets": j["sink"]["rx_pkts"], "rx_bytes": j["ports"][0]["rx_bytes"],
                      "rx_gbps": j["sink"]["rx_gbps"], "other_frames": j.get("flow_other_pkts", 0)})
        if h.name in nic_hosts:
            e.update(nic_hosts[h.name])
        e.setdefault("cnp_sent", nic_hosts.get(h.name, {}).get("cnp_sent", 0))
        e.setdefault("cnp_received", nic_hosts.get(h.name, {}).get("cnp_received", 0))
        hosts[h.name] = e
    res["hosts"] = hosts
    # ---- latency -------------------------------------------------------------------
    res["latency"] = latency(lab, peers)
    res["latency"]["source"] = "probe " + ", ".join(sorted({p.test for p in t.probes})) if t.probes \
        else "queueing-delay estimate"
    keys = ("test", "src", "dst", "rtt_us", "one_way_us", "during_flows", "idle", "per_workload")
    res["latency"]["probes"] = {p["name"]: {k: p[k] for k in keys} for p in res["probes"]}
    flow_latency(t, flows, res["probes"], res["latency"]["ports"], windows)
    lab.probe_samples = {p["name"]: p.pop("_rtt_all") for p in res["probes"]}  # for the CDF plot
    # ---- totals and conservation -------------------------------------------------
    res["totals"] = {"ecn_marked": sum(p["ecn_marked"] for p in ports),
                     "pfc_pause_sent": sum(p["pfc_pause_sent"] for p in ports),
                     "pfc_pause_received": sum(p["pfc_pause_received"] for p in ports),
                     "dropped": sum(p["dropped"] for p in ports),
                     "cnp_sent": sum(h.get("cnp_sent", 0) for h in hosts.values()),
                     "cnp_received": sum(h.get("cnp_received", 0) for h in hosts.values())}
    res["conservation"] = conservation(lab, raw, port_rep)
    # ---- events (failure injection, tools/lab/events.py) -----------------------------
    if t.events:
        fd = getattr(lab, "faults", None)
        res["events"] = {"planned": [ev.to_json(t) for ev in t.events],
                         "sent": fd.sent if fd else [],  # real time: telemetry commands, as sent
                         "virtual_time": getattr(lab, "sim", None) is not None}
    res["processes"] = clean
    return res


def tp_cycle(s, n):
    import frames
    return frames.cycle_sent(s["counts"], n)


def stats(values):
    """{samples, min, p50, p99, max, avg} of a list (None when empty)."""
    if not values:
        return None
    return {"samples": len(values), "min": min(values), "p50": pct(values, 50), "p99": pct(values, 99),
            "max": max(values), "avg": sum(values) / len(values)}


def _inside(t_s, wins):
    return any(a <= t_s <= b for a, b in wins)


def probes(t, probe_raw, windows):
    """Per probe: its round trips (sf-nic's samples; write/send_lat report half
    the round trip, as perftest does, read_lat all of it), over the whole probe,
    while a flow toward the probe's dst ran (its client's first post to last
    completion), and while no nic flow ran (idle). Times are since each
    workload's connect, the common start of the sf-nic processes."""
    out = []
    for pr in t.probes:
        r = probe_raw.get(pr.name, {"status": "no sf-nic report", "samples_t_s": [], "samples_us": []})
        f = 1 if pr.test == "read_lat" else 2  # sample -> round trip
        rtt = [u * f for u in r["samples_us"]]
        ts = r["samples_t_s"]
        busy = [windows[fl.name] for fl in t.flows if fl.dst == pr.dst and fl.name in windows]
        every = list(windows.values())
        loaded = [v for x, v in zip(ts, rtt) if _inside(x, busy)]
        idle = [v for x, v in zip(ts, rtt) if not _inside(x, every)]
        one = stats([v / 2 for v in rtt])
        per_wl = {}
        for fl in t.flows:
            if fl.dst == pr.dst and fl.name in windows:
                per_wl.setdefault(fl.workload, []).append(windows[fl.name])
        per_wl = {w: stats([v for x, v in zip(ts, rtt) if _inside(x, wins)]) for w, wins in per_wl.items()}
        out.append({"name": pr.name, "test": pr.test, "src": pr.src, "dst": pr.dst, "dscp": pr.dscp,
                    "size_bytes": pr.size_bytes, "interval_us": tp.probe_interval_us(t, pr),
                    "status": r.get("status"), "round_trips": len(rtt),
                    "rtt_us": stats(rtt), "one_way_us": one, "during_flows": stats(loaded), "idle": stats(idle),
                    "per_workload": per_wl,
                    "_rtt_all": rtt, "_ts": ts})
    return out


def flow_latency(t, flows, probe_res, est_ports, windows):
    """Every flow's latency_us {p50, p99, max, samples} and latency_source:
    a probe toward the flow's receiver (same egress queue), its round trips
    while the flow ran, when there is one and it has samples then; else the
    queueing-delay estimate at the receiver's egress port (pktio flows,
    topologies without probes). sf-nic latency workloads keep their own."""
    by_dst = {}
    for p in probe_res:
        by_dst.setdefault(p["dst"], p)
    for d in flows:
        if isinstance(d.get("latency_us"), dict):
            d["latency_source"] = "sf-nic latency test"
            continue
        p = by_dst.get(d["dst"])
        if p is not None and d["name"] in windows:
            a, b = windows[d["name"]]
            vals = [v for x, v in zip(p["_ts"], p["_rtt_all"]) if a <= x <= b]
            if vals:
                s = stats(vals)
                d["latency_us"] = {k: s[k] for k in ("samples", "p50", "p99", "max")}
                d["latency_source"] = (f"probe {p['test']} '{p['name']}' {p['src']} -> {p['dst']}: round trip "
                                       "while the flow ran")
                continue
        port = next((f.port for f in t.flows if f.name == d["name"]), 1)
        h = t.hosts[d["dst"]].ports[port - 1]  # the destination port the flow arrives on (multi-port hosts)
        e = est_ports.get(f"{h.switch}:{h.port}")
        if e:
            d["latency_us"] = {"samples": e["samples"], "p50": e["p50_us"], "p99": e["p99_us"], "max": e["max_us"]}
            d["latency_source"] = f"queueing-delay estimate at {h.switch}:{h.port} (egress depth x 8 / line rate)"
        else:
            d["latency_us"] = None
            d["latency_source"] = None
    for p in probe_res:
        p.pop("_ts", None)


def latency(lab, peers):
    """pktio frames carry no timestamps, so per-packet latency is not
    measured for them; what is given is each egress port's queueing delay
    (sum of its queues' depth x 8 / line rate) over the samples in which the
    port sent something: an estimate of the delay a packet met there. nic
    workloads report their own latency (per flow, in flows[])."""
    out = {"method": "queueing delay estimate: egress depth x 8 / line rate, per time-series sample while the "
                     "port transmits (pktio frames carry no timestamps)", "ports": {}}
    for sw, ts in lab.ts.items():
        for (s, port), (peer, speed) in peers.items():
            if s != sw:
                continue
            vals = []
            for a, b in zip(ts.samples, ts.samples[1:]):
                if port not in b["ports"]:
                    continue
                if b["ports"][port]["tx_bytes"] > a["ports"][port]["tx_bytes"]:
                    depth = sum(q[series.DEPTH] for q in b["ports"][port]["queues"])
                    vals.append(depth * 8 / (speed * 1e9) * 1e6)
            if vals:
                out["ports"][f"{sw}:{port}"] = {"samples": len(vals), "p50_us": pct(vals, 50), "p99_us": pct(vals, 99),
                                                "max_us": max(vals), "values_us": vals}
    return out


def conservation(lab, raw, port_rep):
    """pktio traffic: bytes sent = bytes received + counted losses, exactly.
    Losses: switch drops (frames x the host's uniform frame length; not the
    PAUSE / PFC frames a faulty port dropped, dropped_mac_control), frames
    left in a switch at stop, frames a link lost at a disconnect (a sender's
    tx the switch never read, a switch's tx the receiver never read)."""
    t = lab.t
    pk = [h for h in t.pktio_hosts()]
    if not pk or not lab.plan.senders:
        return {"applies": False, "why": "no pktio flows"}
    if t.nic_hosts():
        return {"applies": False, "why": "pktio and nic traffic share the switches' drop counters; the pktio "
                                         "flows' figures are in flows[]"}
    lens = {tp.pktio_frame_bytes(h) for h in pk}
    uniform = lens.pop() if len(lens) == 1 else None
    c = {"applies": True, "frame_bytes": uniform}
    sent_b = sent_f = 0
    link_lost_f = link_lost_b = 0
    per_host = {}
    for host in lab.plan.senders:
        j = raw["senders"].get(host)
        h = t.hosts[host]
        p = port_rep.get((h.switch, h.port))
        if not j or not p:
            return {"applies": True, "ok": False, "why": f"missing the final report of {host} or its switch port"}
        tx = j["ports"][1]["tx_pkts"]
        sent_f += tx
        sent_b += j["ports"][1]["tx_bytes"]
        lost = tx - p["rx_packets"]
        link_lost_f += lost
        link_lost_b += lost * tp.pktio_frame_bytes(h)
        per_host[host] = {"sent_frames": tx, "switch_rx_frames": p["rx_packets"], "lost_in_link": lost,
                          "switch_dropped": p["dropped"]}
    recv_f = recv_b = 0
    for host, j in raw["receivers"].items():
        h = t.hosts[host]
        p = port_rep.get((h.switch, h.port))
        if not j or not p:
            return {"applies": True, "ok": False, "why": f"missing the final report of {host} or its switch port"}
        got = j["sink"]["rx_pkts"]
        recv_f += got
        recv_b += j["ports"][0]["rx_bytes"]
        lost = p["tx_packets"] + p.get("tx_pfc_frames", 0) - got
        link_lost_f += lost
        link_lost_b += lost * tp.pktio_frame_bytes(h)
        per_host[host] = {"received_frames": got, "switch_tx_frames": p["tx_packets"], "lost_in_link": lost}
    drop_f = drop_b = 0
    left_f = 0
    for sw, rep in raw["switches"].items():
        if not rep:
            return {"applies": True, "ok": False, "why": f"no final report from {sw}"}
        left_f += rep.get("tx_left_at_stop", 0)
        for p in rep["ports"]:
            # A PAUSE / PFC frame a faulty port dropped is not a pktio frame.
            data_dropped = p["dropped"] - p.get("dropped_mac_control", 0)
            drop_f += data_dropped
            left_f += sum(q["depth_packets"] for q in p["queues"])
            host = next((h for h in pk if h.switch == sw and h.port == p["name"]), None)
            fb = tp.pktio_frame_bytes(host) if host else uniform
            if data_dropped and fb is None:
                c["exact"] = False
            drop_b += data_dropped * (fb or 0)
    left_b = left_f * (uniform or 0)
    c.update({"sent_frames": sent_f, "sent_bytes": sent_b, "received_frames": recv_f, "received_bytes": recv_b,
              "switch_dropped_frames": drop_f, "switch_dropped_bytes": drop_b, "left_in_switch_frames": left_f,
              "left_in_switch_bytes": left_b, "lost_in_links_frames": link_lost_f, "lost_in_links_bytes": link_lost_b,
              "per_host": per_host})
    c["ok"] = sent_f == recv_f + drop_f + left_f + link_lost_f and sent_b == recv_b + drop_b + left_b + link_lost_b
    c["equation"] = (f"sent {sent_b} B = received {recv_b} B + dropped {drop_b} B + left {left_b} B + "
                     f"lost in links {link_lost_b} B: {'holds' if c['ok'] else 'DOES NOT HOLD'}")
    return c


def write_timeseries(lab, path, raw=None):
    """Every series in one file, one JSON line per sample tagged by "source":
    switch samples (t_s of the switch's own clock, and lab_t_s since the
    lab's start), the lab's telemetry samples (PFC counters), and the pktio
    receivers' per-flow counters (t_s since the start, flows {sport: [pkts,
    bytes]})."""
    with open(path, "w") as f:
        for sw, ts in lab.ts.items():
            t0 = lab.switch_t0.get(sw, 0.0)
            for s in ts.samples:
                f.write(json.dumps({"source": f"switch:{sw}", "lab_t_s": round(s["t_s"] - t0, 6), **s}) + "\n")
        for s in lab.tel:
            f.write(json.dumps({"source": "lab:telemetry", **s}) + "\n")
        for host, rows in lab.receiver_series(raw).items():
            for t_s, flows in rows:
                f.write(json.dumps({"source": f"receiver:{host}", "t_s": round(t_s, 6),
                                    "flows": {str(k): list(v) for k, v in flows.items()}}) + "\n")


def _fmt(v, nd=2):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def write_markdown(lab, res, plots, path, console_history):
    t = lab.t
    L = [f"# sf-lab: {t.name}", ""]
    if t.description:
        L += [t.description, ""]
    run = res["run"]
    if run.get("virtual_time"):
        L += [f"**Virtual time** (sf-sim, seed {run['seed']}): topology `{os.path.relpath(t.path)}`: "
              f"{len(t.switches)} switch(es), {len(t.hosts)} host(s), {len(t.flows)} flow(s) at "
              f"{', '.join(sorted({str(l.speed_gbps) for l in t.links}))} Gb/s; {run['traffic_s'] * 1e3:.3f} ms of "
              f"virtual traffic ({run['stop_reason']}); {run['sim']['events']:,} events, trace hash "
              f"{run['sim']['trace_hash']}. Every time here (completion, plots' x axes) is in virtual seconds; "
              "the PFC curves come from the switch time series (sf-sim has no telemetry to poll).", ""]
    else:
        L += [f"{run['started_utc']} UTC, topology `{os.path.relpath(t.path)}`: {len(t.switches)} switch(es), "
              f"{len(t.hosts)} host(s), {len(t.flows)} flow(s)"
              + (f", {len(t.probes)} latency probe(s)" if t.probes else "") + f"; {run['traffic_s']:.1f} s of traffic "
              f"({run['stop_reason']}).", ""]
    L += ["## Flows", "", "| flow | kind | src -> dst | DSCP | sent | received | lost | goodput Gb/s | completion s "
          "| latency p50 / p99 / max us | latency source |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for f in res["flows"]:
        sent = _fmt(f.get("bytes_sent")) + " B" if "bytes_sent" in f else "-"
        lat = f.get("latency_us")
        lat_s = f"{lat['p50']:,.1f} / {lat['p99']:,.1f} / {lat['max']:,.1f}" if isinstance(lat, dict) else "-"
        L.append(f"| {f['name']} | {f['kind']} | {f['src']} -> {f['dst']} | {f['dscp']} | {sent} | "
                 f"{_fmt(f.get('bytes_received'))} B | {_fmt(f.get('frames_lost'))} | {_fmt(f.get('goodput_gbps'))} | "
                 f"{_fmt(f.get('completion_s'), 3)} | {lat_s} | {f.get('latency_source') or '-'} |")
    L += ["", "## Ports", "", "| port | peer | Gb/s | rx pkts | tx pkts | ECN marks | PFC sent / rcvd | drops | "
          "watermark KiB |", "|---|---|---|---|---|---|---|---|---|"]
    for p in res["ports"]:
        drops = ", ".join(f"{k} {v:,}" for k, v in p["drops"].items()) or "0"
        L.append(f"| {p['switch']}:{p['port']} | {p['peer']} | {p['speed_gbps']} | {p['rx_packets']:,} | "
                 f"{p['tx_packets']:,} | {p['ecn_marked']:,} | {p['pfc_pause_sent']:,} / {p['pfc_pause_received']:,} | "
                 f"{drops} | {p['watermark_bytes'] / 1024:.1f} |")
    tot = res["totals"]
    L += ["", f"Totals: ECN marks {tot['ecn_marked']:,}, CNPs sent {tot['cnp_sent']:,} / received "
              f"{tot['cnp_received']:,}, PFC pauses sent {tot['pfc_pause_sent']:,} / received "
              f"{tot['pfc_pause_received']:,}, drops {tot['dropped']:,}.", ""]
    if res.get("probes"):
        L += ["## Latency probes (measured)", "", "Round trips of each probe's sf-nic latency test (one-way as "
              "perftest reports it = half the round trip for write_lat / send_lat), over the whole probe, while a "
              "flow toward its dst ran, and while no nic flow ran.", "",
              "| probe | test | src -> dst | DSCP | round trips | RTT p50 / p99 / max us | during flows p50 / p99 / max us"
              " | idle p50 / p99 / max us | status |", "|---|---|---|---|---|---|---|---|---|"]

        def trio(s):
            return f"{s['p50']:,.1f} / {s['p99']:,.1f} / {s['max']:,.1f} ({s['samples']:,})" if s else "-"
        for p in res["probes"]:
            L.append(f"| {p['name']} | {p['test']} | {p['src']} -> {p['dst']} | {p['dscp']} | {p['round_trips']:,} | "
                     f"{trio(p['rtt_us'])} | {trio(p['during_flows'])} | {trio(p['idle'])} | {p['status']} |")
        L.append("")
    lat = res["latency"]["ports"]
    if lat:
        L += ["## Latency (queueing-delay estimate)", "", res["latency"]["method"] + ".", "",
              "| egress port | p50 us | p99 us | max us |", "|---|---|---|---|"]
        for k, v in lat.items():
            L.append(f"| {k} | {v['p50_us']:.1f} | {v['p99_us']:.1f} | {v['max_us']:.1f} |")
        L.append("")
    c = res["conservation"]
    if c.get("applies"):
        L += ["## Conservation", "", c.get("equation", c.get("why", "")) + ".", ""]
    if plots:
        L += ["## Plots", ""]
        for name, title in plots:
            L += [f"### {title}", "", f"![{title}]({name})", ""]
    if console_history:
        L += ["## Console (last second)", "", "```"] + console_history[-1] + ["```", ""]
    L += ["Files: `results.json` (everything above), `timeseries.jsonl`, `switch-*-report.json`, "
          "`run/` (generated configs), `logs/`. How to read this: docs/lab.md.", ""]
    with open(path, "w") as f:
        f.write("\n".join(L))


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
