"""sf-nic hosts of a lab, per the sf-nic contract (docs/lab.md "nic hosts").

All nic hosts with the same "process" run in one sf-nic process:
  sf-nic [EAL] -- --config nic.json --report FILE --timeseries FILE
                  --ts-period-ms P --run-limit S --backoff --ready-file FILE
(the contract names the bound --duration; sf-nic as merged takes --duration
only with perftest flags and bounds a --config run with --run-limit, exit 1)
A flow becomes two workloads: a write_bw client on its source host and the
matching server on its destination host, joined by an out-of-band TCP address
on 127.0.0.1. build_nic_config() makes nic.json, nic_command() the command
line, parse_nic_report() reads the --report JSON into the lab's per-flow and
per-host figures. A latency probe (topology workload "type": "probe") becomes
a latency client on its src (paced by interval_us, stop_with_others unless it
has a duration, every sample in the report) and its server on its dst;
parse_probe_report() reads its samples. No process is started here.
"""
import socket

import topology


def free_tcp_ports(n):
    """n distinct free TCP ports on 127.0.0.1 (bound and released: the OS
    does not hand them out again at once)."""
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def nic_processes(topo):
    """{process name: [host names]} in topology order."""
    out = {}
    for h in topo.nic_hosts():
        out.setdefault(h.process, []).append(h.name)
    return out


def active_processes(topo):
    """{process: [hosts]} of the processes that run a workload (a flow's or a
    probe's end on one of their hosts). The lab starts only these: sf-nic
    refuses a config without workloads, and the ports of an idle process's
    hosts stay unconnected (in real time a memif nobody opens, in sf-sim no
    link)."""
    busy = {f.src for f in topo.flows} | {f.dst for f in topo.flows} | \
        {p.src for p in topo.probes} | {p.dst for p in topo.probes}
    return {proc: hosts for proc, hosts in nic_processes(topo).items() if busy & set(hosts)}


def oob_names(topo):
    """Names that need an out-of-band TCP port: every nic flow, every probe."""
    return [f.name for f in topo.flows if topo.hosts[f.src].kind == "nic"] + [p.name for p in topo.probes]


def workload_names(flow):
    base = flow.name.replace("/", "-")
    return f"{base}.client", f"{base}.server"


def vdev_indices(topo, process):
    """{(host, port index): memif vdev number} of one sf-nic process: its
    hosts' ports in topology order, net_memif0, net_memif1, ..."""
    out = {}
    for name in nic_processes(topo).get(process, []):
        for hp in topo.hosts[name].ports:
            out[(name, hp.index)] = len(out)
    return out


def build_nic_config(topo, process, devargs_of, oob_port_of):
    """nic.json of one sf-nic process.
    devargs_of(host) -> memif client devargs toward its switch port (a host
    declared with "ports": devargs_of(host, port index) for each port);
    oob_port_of(flow) -> TCP port of the flow's out-of-band exchange.
    A flow whose client or server host runs in this process contributes that
    side's workload. A multi-port host gets "ports": [{devargs, mac, ip,
    speed_gbps, gateway_mac}] and its workloads "port": k (1-based); a
    one-port host behind a routed switch gets "gateway_mac"."""
    hosts = {}
    members = set(nic_processes(topo).get(process, []))
    for name in sorted(members, key=lambda n: topo.hosts[n].index):
        h = topo.hosts[name]
        if h.multi:
            ports = []
            for hp in h.ports:
                e = {"devargs": devargs_of(h, hp.index), "mac": hp.mac, "ip": hp.ip, "speed_gbps": hp.speed_gbps}
                if hp.ipv6:
                    e["ipv6"] = hp.ipv6
                if hp.gateway_mac:
                    e["gateway_mac"] = hp.gateway_mac
                ports.append(e)
            hosts[name] = {"ports": ports, "mtu": h.mtu, "dscp": h.dscp, "pfc_enable": h.pfc_enable,
                           "cnp_dscp": h.cnp_dscp}
        else:
            hosts[name] = {"devargs": devargs_of(h), "mac": h.mac, "ip": h.ip, "speed": h.speed_gbps, "mtu": h.mtu,
                           "dscp": h.dscp, "pfc_enable": h.pfc_enable, "cnp_dscp": h.cnp_dscp}
            if h.gateway_mac:
                hosts[name]["gateway_mac"] = h.gateway_mac
            if h.ports[0].ipv6:
                hosts[name]["ipv6"] = h.ports[0].ipv6
        if h.trim_dscp >= 0:  # MRC data frames with this DSCP were trimmed by a switch (docs/nic-app.md)
            hosts[name]["mrc_trim_dscp"] = h.trim_dscp
        if h.rx_drain_gbps:  # a slow receiver that pauses its switch port (docs/nic-app.md)
            hosts[name]["rx_drain_rate"] = h.rx_drain_gbps
            for k in ("pfc_generate", "pfc_xoff", "pfc_xon"):
                if getattr(h, k):
                    hosts[name][k] = getattr(h, k)
    workloads = []
    for f in topo.flows:
        if topo.hosts[f.src].kind != "nic":
            continue
        cname, sname = workload_names(f)
        msg = min(f.message_bytes, f.size_bytes) if f.size_bytes else f.message_bytes
        iters = -(-f.size_bytes // msg) if f.size_bytes else 0
        common = {"type": "write_bw", "oob": f"127.0.0.1:{oob_port_of(f)}", "size": msg, "iterations": iters,
                  "duration_s": f.duration_s, "qps": f.qps, "cc": topo.hosts[f.src].cc, "verify": f.verify,
                  "dscp": f.dscp}
        if topo.hosts[f.src].cc_params is not None:
            common["cc_params"] = topo.hosts[f.src].cc_params
        if f.rate_gbps:
            common["rate_limit"] = f.rate_gbps  # QP pacing, Gb/s (sf-nic nic.json "rate_limit")
        _mrc(common, f, topo)
        if f.dst in members:
            workloads.append(dict({"name": sname, "host": f.dst, "role": "server"}, **_srv6(common, f, 1), start_ms=0,
                                  **_port(topo, f.dst, f.port)))
        if f.src in members:
            workloads.append(dict({"name": cname, "host": f.src, "role": "client"}, **_srv6(common, f, 0),
                                  start_ms=f.start_ms, **_port(topo, f.src, f.port)))
    for pr in topo.probes:
        cname, sname = workload_names(pr)
        common = {"type": pr.test, "oob": f"127.0.0.1:{oob_port_of(pr)}", "size": pr.size_bytes, "iterations": 0,
                  "duration_s": pr.duration_s or topo.duration_s, "qps": 1, "cc": topo.hosts[pr.src].cc,
                  "verify": False, "dscp": pr.dscp}
        if topo.hosts[pr.src].cc_params is not None:
            common["cc_params"] = topo.hosts[pr.src].cc_params
        _mrc(common, pr, topo)
        if pr.dst in members:
            workloads.append(dict({"name": sname, "host": pr.dst, "role": "server"}, **_srv6(common, pr, 1),
                                  start_ms=0, **_port(topo, pr.dst, pr.port)))
        if pr.src in members:
            workloads.append(dict({"name": cname, "host": pr.src, "role": "client"}, **_srv6(common, pr, 0),
                                  start_ms=pr.start_ms,
                                  interval_us=topology.probe_interval_us(topo, pr), samples=True,
                                  stop_with_others=not pr.duration_s, **_port(topo, pr.src, pr.port)))
    # A workload takes one PD, one MR, two CQs and qps QPs (docs/nic-app.md
    # "max_qps"): a host with more than the defaults hold (64 workloads, a
    # 64:1 receiver with a probe or repeated incast rounds) gets the limits.
    for name in hosts:
        mine = [w for w in workloads if w["host"] == name]
        n, qps = len(mine), sum(w["qps"] for w in mine)
        if n > 64 or qps > 64:
            hosts[name].update(max_pds=n, max_mrs=n, max_cqs=2 * n, max_qps=max(qps, 64))
    return {"hosts": hosts, "workloads": workloads}


def _port(topo, host, port):
    """A workload's "port" (1-based) on a multi-port host; nothing on a one-port host."""
    return {"port": port} if topo.hosts[host].multi else {}


def _mrc(common, f, topo):
    """An MRC flow's or probe's workload keys: its QPs spray over every port
    of the host and run the sender's `mrc_cc` (none or nscc; its `cc` applies
    to its RC flows; docs/lab.md)."""
    if f.transport == "mrc":
        common["transport"] = "mrc"
        common["cc"] = topo.hosts[f.src].mrc_cc
        if f.mrc:
            common["mrc"] = f.mrc


def _srv6(common, f, side):
    """One side's workload keys: an MRC flow in ev_mode srv6 without its own
    template gets that side's, derived from the switches' SRV6 tables
    (topology.srv6_template: the client's toward the server, the server's
    back, so SACKs take the spine the data came over)."""
    if not f.srv6:
        return common
    return dict(common, mrc=dict(common["mrc"], srv6=f.srv6[side]))


def nic_command(binary, eal, cfg_path, report, timeseries, ts_period_ms, limit_s, ready):
    return [binary] + list(eal) + ["--", "--config", cfg_path, "--report", report, "--timeseries", timeseries,
                                   "--ts-period-ms", str(ts_period_ms), "--run-limit", f"{limit_s:g}",
                                   "--backoff", "--ready-file", ready, "--log-level", "warn",
                                   # the simulator's QPNs/PSNs: a real run's QPs hash onto the ECMP paths of its --sim twin
                                   "--id-seed", "0"]


def parse_nic_report(rep, topo):
    """The --report JSON of one or more sf-nic processes (a list of reports)
    -> (flows, hosts): flows {flow name: {bytes, goodput_gbps, completion_s,
    latency_us, status, messages}}, hosts {host: counters incl. pfc pauses}.
    The client workload carries the flow's figures."""
    by_wl = {}
    hosts = {}
    for r in rep:
        for w in r.get("workloads", []):
            by_wl[w["name"]] = w
        for h in r.get("hosts", []):
            pfc_tx = sum(v for k, v in h.items() if k.startswith("tx_prio") and k.endswith("_pause"))
            pfc_rx = sum(v for k, v in h.items() if k.startswith("rx_prio") and k.endswith("_pause"))
            hosts[h["name"]] = dict(h, pfc_pause_sent=pfc_tx, pfc_pause_received=pfc_rx,
                                    dropped=sum((h.get("drops") or {}).values()))
    flows = {}
    for f in topo.flows:
        if topo.hosts[f.src].kind != "nic":
            continue
        cname, sname = workload_names(f)
        c, s = by_wl.get(cname), by_wl.get(sname)
        if c is None:
            flows[f.name] = {"status": "missing from the sf-nic report", "bytes": 0}
            continue
        flows[f.name] = {"bytes": c.get("bytes", 0), "messages": c.get("messages", 0),
                         "goodput_gbps": c.get("goodput_gbps"), "completion_s": c.get("completion_s"),
                         "latency_us": c.get("latency_us"), "status": c.get("status"),
                         "server_status": s.get("status") if s else None,
                         "server_bytes": s.get("bytes") if s else None}
    return flows, hosts


def parse_probe_report(rep, topo):
    """{probe name: {status, samples_t_s, samples_us, latency_us (sf-nic's
    summary)}} from the client workloads of the probes, and each nic flow's
    client window {flow name: (start_s, end_s)}; both in seconds since the
    workload's connect (the common start of its sf-nic process, virtual 0 in
    sf-sim)."""
    by_wl = {}
    for r in rep:
        for w in r.get("workloads", []):
            by_wl[w["name"]] = w
    probes = {}
    for pr in topo.probes:
        c = by_wl.get(workload_names(pr)[0])
        if c is None:
            probes[pr.name] = {"status": "missing from the sf-nic report", "samples_t_s": [], "samples_us": []}
            continue
        s = c.get("latency_samples") or {}
        probes[pr.name] = {"status": c.get("status"), "round_trips": c.get("messages", 0),
                           "latency_us": c.get("latency_us"),
                           "samples_t_s": list(s.get("t_s", [])), "samples_us": list(s.get("us", []))}
    windows = {}
    for f in topo.flows:
        c = by_wl.get(workload_names(f)[0])
        if c is not None and topo.hosts[f.src].kind == "nic" and "start_s" in c:
            windows[f.name] = (c["start_s"], c["end_s"])
    return probes, windows
