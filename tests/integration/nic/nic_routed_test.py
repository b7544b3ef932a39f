#!/usr/bin/python3
"""Routed fabric through sf-switch in L3 mode: two sf-nic hosts in different
subnets, each with only an address/prefix and a gateway, over memif to one
sf-switch whose ports are router interfaces (INTERFACE table) with LPM
routes to next hops it resolves itself (no NEIGH entries). The hosts resolve
their gateway by ARP / ND (the switch answers with the port's router MAC),
the switch learns the hosts from those frames (docs/switch.md "Router
interfaces"), and a perftest-style write_bw --verify lands in full. A wrong
or missing gateway stops the client at connect with the reason (exit 1), and
its --report says so.

Usage: nic_routed_test.py --build BUILD_DIR CASE
CASE: switch_l3_ipv4, switch_l3_ipv6, switch_l3_ipv4_sharded, switch_l3_bad_gateway. Exit 0 = pass, 77 = skipped, else fail.
"""
import json
import os
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "switch"))
import harness  # noqa: E402
from harness import check, port_by_name  # noqa: E402
from nic_test import check_clean, finish_nic, free_port, sf_nic, start_nic_config  # noqa: E402
from switch_test import telemetry  # noqa: E402

PORTS = ["Ethernet0", "Ethernet4"]  # server side, client side
SF_CLI = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "tools", "sf-cli", "sf-cli")
ROUTER_MAC = {"Ethernet0": "02:53:00:00:00:00", "Ethernet4": "02:53:00:00:00:04"}
HOST_MAC = {1: "02:4e:00:08:01:01", 2: "02:4e:00:08:02:02"}
FAM = {
    4: {"host": ["10.8.1.1", "10.8.2.2"], "gw": ["10.8.1.254", "10.8.2.254"], "len": 24,
        "net": ["10.8.1.0/24", "10.8.2.0/24"]},
    6: {"host": ["fd08:1::1", "fd08:2::2"], "gw": ["fd08:1::fe", "fd08:2::fe"], "len": 64,
        "net": ["fd08:1::/64", "fd08:2::/64"]},
}


def sf_cli(prefix, *words):
    """sf-cli --json WORDS against the switch; the rows it prints."""
    p = subprocess.run([SF_CLI, "--prefix", prefix, "--json", *words], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, f"sf-cli {' '.join(words)}: exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)


def switch_cfg(h, fam):
    f = FAM[fam]
    ports = {n: {"devargs": f"net_memif{i},role=server,socket={h.path(n + '.sock')}", "speed": 10, "mtu": 9100,
                 "mac": ROUTER_MAC[n]} for i, n in enumerate(PORTS)}
    intf, routes = {}, {}
    for i, n in enumerate(PORTS):
        intf[n] = {}
        intf[f"{n}|{f['gw'][i]}/{f['len']}"] = {}
        # The host itself is the next hop: on the interface subnet, no NEIGH
        # entry, so the switch resolves it (gleaned from its ARP / ND).
        routes[f["net"][i]] = {"nexthop": f["host"][i], "ifname": n}
    return {"DEVICE_METADATA": {"localhost": {"mmu_size": "64MiB"}}, "PORT": ports, "INTERFACE": intf,
            "STATIC_ROUTE": routes}


def nic_cfg(h, fam, side, oob, gateway="switch", iterations=300):
    f = FAM[fam]
    i = side - 1
    port = {"devargs": f"net_memif0,role=client,socket={h.path(PORTS[i] + '.sock')}", "mac": HOST_MAC[side],
            "ip": f"{f['host'][i]}/{f['len']}", "speed_gbps": 10}
    if gateway == "switch":
        port["gateway"] = f["gw"][i]
    elif gateway:
        port["gateway"] = gateway
    role = "server" if side == 1 else "client"
    return {"hosts": {"h": port},
            "workloads": [{"name": "w", "host": "h", "type": "write_bw", "role": role, "oob": f"127.0.0.1:{oob}",
                           "size": 65536, "iterations": iterations, "verify": True}]}


def switch_l3(h, fam, sharded=False):
    """write_bw 64 KiB x 300 --verify between 10.8.1.1/24 and 10.8.2.2/24 (or
    fd08:1::1/64 and fd08:2::2/64) through sf-switch routing. Expect: every
    message lands and is checked; each host's gateway is reachable at its
    switch port's router MAC; the switch answered each host's request
    (ARP / NS counted on that port), resolved both next hops to the hosts'
    MACs without having to ask (gleaned), routed the data and dropped
    nothing; telemetry and sf-cli (show ip interfaces, show arp / ndp) list
    the interfaces and the resolved neighbors. Sharded: each port on its own datapath lcore, so each next hop
    is gleaned on one lcore and read by the other as it routes."""
    f = FAM[fam]
    mport = free_port()
    app = ["--metrics-port", mport]
    if sharded:
        sw = h.start_switch(switch_cfg(h, fam), app=app + ["--shard-map", "0,1"], lcores="0@(0,1),1@(0,1)",
                            telemetry=True)
    else:
        sw = h.start_switch(switch_cfg(h, fam), app=app, telemetry=True)
    oob = free_port()
    srv = start_nic_config(h, "server", nic_cfg(h, fam, 1, oob))
    cli = start_nic_config(h, "client", nic_cfg(h, fam, 2, oob))
    rc_cli = finish_nic(cli, 90)
    rc_srv = finish_nic(srv, 30)
    # DPDK telemetry (sf-cli's view): interfaces, resolved next hops, routes with their MACs.
    intf = telemetry(sw.prefix, "/softfabric/switch/interfaces")["entries"]
    nbs = telemetry(sw.prefix, "/softfabric/switch/neighbors")["entries"]
    routes = telemetry(sw.prefix, "/softfabric/switch/routes")["entries"]
    print(f"telemetry: interfaces {intf} neighbors {nbs} routes {routes}")
    check(intf == [f"{n}|{f['gw'][i]}/{f['len']}" for i, n in enumerate(PORTS)], f"telemetry interfaces {intf}")
    check(sorted(nbs) == sorted(f"{f['host'][i]}|{n}|{HOST_MAC[i + 1]}|0" for i, n in enumerate(PORTS)),
          f"telemetry neighbors {nbs}")
    check(sorted(routes) == sorted(f"{f['net'][i]}|{n}|{HOST_MAC[i + 1]}" for i, n in enumerate(PORTS)),
          f"telemetry routes {routes}")
    # sf-cli's SONiC views of them: show ip / ipv6 interfaces, show arp / ndp (the other family's is empty).
    v6 = fam == 6
    cli_intf = sf_cli(sw.prefix, "show", "ipv6" if v6 else "ip", "interfaces")
    # (oper: the hosts have left, so their memif links are going down)
    check([(r["interface"], r["address"], r["admin"]) for r in cli_intf] ==
          [(n, f"{f['gw'][i]}/{f['len']}", "up") for i, n in enumerate(PORTS)] and
          all(r["oper"] in ("up", "down") for r in cli_intf), f"sf-cli interfaces {cli_intf}")
    check(sf_cli(sw.prefix, "show", "ip" if v6 else "ipv6", "interfaces") == [], "sf-cli: the other family's interfaces")
    cli_nb = sf_cli(sw.prefix, "show", "ndp" if v6 else "arp")
    check(sorted((r["address"], r["mac"], r["iface"], r["status"]) for r in cli_nb) ==
          sorted((f["host"][i], HOST_MAC[i + 1].upper(), n, "REACHABLE") for i, n in enumerate(PORTS)),
          f"sf-cli {'ndp' if v6 else 'arp'} {cli_nb}")
    check(sf_cli(sw.prefix, "show", "arp" if v6 else "ndp") == [], "sf-cli: the other family's neighbors")
    table = subprocess.run([SF_CLI, "--prefix", sw.prefix, "show", "ndp" if v6 else "arp"], capture_output=True,
                           text=True, timeout=30)
    check(table.returncode == 0 and f"Total number of entries {len(PORTS)}" in table.stdout and
          HOST_MAC[1].upper() in table.stdout, f"sf-cli table: {table.stdout} {table.stderr}")
    # Prometheus (--metrics-port): the router ports' families, valid for promtool.
    with urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=5) as r:
        text = r.read().decode()
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, f"promtool check metrics: {p.stdout}{p.stderr}")
    kind = "arp_request" if fam == 4 else "ns"
    values = {ln.rsplit(" ", 1)[0]: float(ln.rsplit(" ", 1)[1]) for ln in text.splitlines()
              if ln.startswith("softfabric_router")}
    for i, n in enumerate(PORTS):
        resolved = values.get(f'softfabric_router_neighbor_resolved{{port="{n}",ip="{f["host"][i]}"}}')
        asked = values.get(f'softfabric_router_rx_neighbor_frames_total{{port="{n}",kind="{kind}"}}', 0)
        check(resolved == 1 and asked >= 1, f"metrics of {n}: resolved {resolved}, {kind} {asked}: {values}")
    rep = h.stop_switch(sw)
    check_clean(rc_srv, "server")
    check_clean(rc_cli, "client")
    sw_w, cw = rc_srv["workloads"][0], rc_cli["workloads"][0]
    check(sw_w["messages"] == 300 and cw["bytes"] == 300 * 65536, f"server {sw_w}, client {cw}")
    key = "gateway_state" if fam == 4 else "gateway6_state"
    for side, r in ((1, rc_srv), (2, rc_cli)):
        name = PORTS[side - 1]
        hp = r["hosts"][0]["ports"][0]
        nb = hp.get("neighbors", {})
        check(hp.get("gateway_mac") == ROUTER_MAC[name] and nb.get(key) == "reachable",
              f"side {side}: gateway_mac {hp.get('gateway_mac')} (want {ROUTER_MAC[name]}), neighbors {nb}")
        s = port_by_name(rep, name)
        ri = s.get("router_if")
        check(ri is not None, f"switch {name}: no router_if in its report: {s}")
        print(f"switch {name}: router_if {json.dumps(ri)} routed {s['routed']} dropped {s['dropped']}")
        check(ri["addresses"] == [f"{f['gw'][side - 1]}/{f['len']}"], f"{name}: addresses {ri['addresses']}")
        if fam == 4:
            check(ri["rx_arp_request"] >= 1 and ri["tx_arp_reply"] == ri["rx_arp_request"], f"{name}: ARP {ri}")
        else:
            check(ri["rx_ns"] >= 1 and ri["tx_na"] == ri["rx_ns"], f"{name}: ND {ri}")
        check(ri["bad"] == 0, f"{name}: bad ARP / ND {ri['bad_by']}")
        nbs = ri["neighbors"]
        check(len(nbs) == 1 and nbs[0]["ip"] == f["host"][side - 1] and nbs[0]["state"] == "resolved" and
              nbs[0]["mac"] == HOST_MAC[side] and nbs[0]["solicits"] == 0,
              f"{name}: next hop {nbs} (want {f['host'][side - 1]} resolved to {HOST_MAC[side]} by gleaning)")
        check(s["dropped"] == 0 and s["neighbor_solicits"] == 0, f"switch {name} dropped {s['dropped']}: {s['drops']}")
        check(s["routed"] >= (300 * 16 if side == 2 else 1), f"switch {name} routed {s['routed']}")
    if sharded:
        check(len(rep.get("shards", [])) == 2, f"switch shards {rep.get('shards')}")
    print(f"routed IPv{fam} through sf-switch{' (2 shards)' if sharded else ''}: {cw['bytes']} bytes verified at "
          f"{cw['goodput_gbps']:.3f} Gb/s")


def switch_l3_bad_gateway(h):
    """A wrong gateway (10.8.2.253: on the subnet, nobody has it; the switch
    answers only for its own 10.8.2.254) and a missing one (the server is
    outside the client's subnet): the client stops at connect with the
    reason, exit 1, before any QP is connected, and its --report (written
    although it failed early) has status failed, the error, and the
    gateway's state (failed, 3 requests). A port that does not open: exit 1,
    the report is the status and the error."""
    sw = h.start_switch(switch_cfg(h, 4))
    for what, gw, want in (
            ("wrong", "10.8.2.253", "port 1's gateway 10.8.2.253 does not answer ARP (3 requests"),
            ("missing", None,
             "no route to 10.8.1.1: it is outside port 1's subnet 10.8.2.2/24 and the port has no gateway")):
        oob = free_port()
        srv = start_nic_config(h, f"server-{what}", nic_cfg(h, 4, 1, oob))
        cli = start_nic_config(h, f"client-{what}", nic_cfg(h, 4, 2, oob, gateway=gw))
        rc = cli.wait(60)
        out = cli.out() + cli.err()
        print(f"{what} gateway: client exit {rc}: {[ln for ln in out.splitlines() if 'workload w' in ln][:1]}")
        check(rc == 1 and want in out, f"{what} gateway: client exit {rc}, want 1 and '{want}':\n{out[-1500:]}")
        check(os.path.exists(cli.report), f"{what} gateway: the client wrote no --report")
        with open(cli.report) as fh:
            r = json.load(fh)
        check(r.get("status") == "failed" and want in r.get("error", ""), f"{what} gateway: report {r.get('error')}")
        nb = r["hosts"][0]["ports"][0].get("neighbors", {})
        if what == "wrong":
            check(nb.get("gateway_state") == "failed" and nb.get("tx_arp_requests", 0) >= 3, f"report neighbors {nb}")
        w = r["workloads"][0]
        check(w["messages"] == 0 and w.get("bytes", 0) == 0, f"{what} gateway: the client moved data: {w}")
        srv.popen.send_signal(2)
        srv.wait(30)
    rep = h.stop_switch(sw)
    # Earlier still (a port that does not open): the report is the status and the error alone.
    prefix = h.prefix("nic")
    report = h.path(f"{prefix}.early.json")
    r = subprocess.run([sf_nic(h)] + harness.EAL_COMMON + [f"--file-prefix={prefix}", "--no-telemetry", "--",
                        "write_bw", "--port", "net_bogus0", "--mac", HOST_MAC[1], "--ip", "10.8.1.1",
                        "--report", report], capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and os.path.exists(report), f"bad port: exit {r.returncode}, report written: "
                                                          f"{os.path.exists(report)}\n{r.stdout[-800:]}")
    with open(report) as fh:
        early = json.load(fh)
    check(early.get("status") == "failed" and "port net_bogus0" in early.get("error", ""), f"bad port: report {early}")
    # The client's requests for 10.8.2.253 are not the switch's: taken, not answered, not bridged.
    ri = port_by_name(rep, "Ethernet4")["router_if"]
    check(ri["not_ours"] >= 3 and ri["bad"] == 0, f"switch Ethernet4: {ri}")


CASES = {"switch_l3_ipv4": lambda h: switch_l3(h, 4), "switch_l3_ipv6": lambda h: switch_l3(h, 6),
         "switch_l3_ipv4_sharded": lambda h: switch_l3(h, 4, sharded=True),
         "switch_l3_bad_gateway": switch_l3_bad_gateway}

if __name__ == "__main__":
    sys.exit(harness.run_main(CASES, "nicr-"))
