#!/usr/bin/python3
"""sf-switch port state with real processes over memif (docs/switch.md "Port
state"): PORT.admin_status and the telemetry command port_admin, the
port_blackhole knob, and memif peers that never connect, connect late and
leave (issue 17: a link-down port must get no flooded copies and hold
nothing).

Usage: port_state_test.py --build BUILD_DIR CASE
CASE: port_admin_down, port_blackhole, memif_peer_link_state.
Exit 0 = pass, 77 = skipped (meson), else fail.

Every DPDK process gets --no-pci, its own --file-prefix and --backoff; only
PIDs started here are signalled; waits are bounded polls on processes,
files and the switch's telemetry.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, port_by_name, wait_until  # noqa: E402
from switch_test import client, memif_ports, telemetry  # noqa: E402

GEN_ARGS = ["--size", 1500, "--rate-gbps", 1, "--link-wait-s", 15, "--linger-ms", 1000]


def flood(h, sw, cfg, name, count, sinks):
    """A generator on Ethernet0 floods `count` frames (unknown destination);
    a sink on each port of `sinks` expects them all. Returns the sinks' rx."""
    sps = {}
    for port in sinks:
        sps[port] = h.pktio(f"{name}-sink-{port}", "sink", [client(cfg, port)],
                            ["--expect", count, "--duration", 40, "--idle-exit-ms", 3000, "--link-wait-s", 15],
                            ready=True)
    for port in sinks:  # the switch polls links every 10 ms: floods include the port once it saw the peer
        wait_until(lambda: port_tel(sw, port).get("link_status") == "up", 10, f"{port} link up", procs=[sw])
    gen = h.pktio(f"{name}-gen", "gen", [client(cfg, "Ethernet0")], GEN_ARGS + ["--count", count])
    g = h.finish(gen, 40)
    check(g["ports"][0]["tx_pkts"] == count, f"{name}: gen sent {g['ports'][0]['tx_pkts']} of {count}")
    return {port: h.finish(p, 40)["sink"]["rx_pkts"] for port, p in sps.items()}


def port_tel(sw, port):
    return telemetry(sw.prefix, f"/softfabric/switch/port,{port}")


def wait_state(sw, port, key, value, what):
    wait_until(lambda: port_tel(sw, port).get(key) == value, 10, f"{port} {key} {value} ({what})", procs=[sw])


def base_cfg(h, names, **port_extra):
    cfg = {"DEVICE_METADATA": {"localhost": {"mmu_size": "16MiB"}}, "PORT": memif_ports(h, names)}
    for port, extra in port_extra.items():
        cfg["PORT"][port].update(extra)
    return cfg


def port_admin_down(h):
    """Ethernet8 starts admin down (PORT.admin_status): a flood from
    Ethernet0 reaches the sink on Ethernet4 only, Ethernet8 (its peer
    connected) sends nothing and holds nothing. port_admin up (telemetry):
    the next flood reaches both. port_admin down again while a sink listens:
    the third flood reaches Ethernet4 only; the report says admin down."""
    names = ["Ethernet0", "Ethernet4", "Ethernet8"]
    cfg = base_cfg(h, names, Ethernet8={"admin_status": "down"})
    sw = h.start_switch(cfg, telemetry=True)
    t = port_tel(sw, "Ethernet8")
    check(t["admin_status"] == "down" and t["oper_status"] == "down", f"Ethernet8 at start: {t}")
    n = 2000
    # Phase 1: a sink on Ethernet8 too (its link up): it must get nothing.
    dead = h.pktio("sink-e8-down", "sink", [client(cfg, "Ethernet8")], ["--duration", 40, "--link-wait-s", 15],
                   ready=True)
    wait_state(sw, "Ethernet8", "link_status", "up", "sink connected")
    got = flood(h, sw, cfg, "down", n, ["Ethernet4"])
    check(got["Ethernet4"] == n, f"phase 1: Ethernet4 sink got {got['Ethernet4']} of {n}")
    e8 = port_tel(sw, "Ethernet8")
    check(e8["tx_packets"] == 0 and sum(e8["queue_depth_bytes"]) == 0, f"phase 1: admin-down Ethernet8 {e8}")
    dead.stop(15)
    check(dead.json()["sink"]["rx_pkts"] == 0, "admin-down port delivered frames")
    # Phase 2: admin up through telemetry.
    r = telemetry(sw.prefix, "/softfabric/switch/port_admin,Ethernet8,up")
    check(r is not None and r.get("requested") == "up", f"port_admin reply {r}")
    wait_state(sw, "Ethernet8", "admin_status", "up", "after port_admin up")
    got = flood(h, sw, cfg, "up", n, ["Ethernet4", "Ethernet8"])
    check(got == {"Ethernet4": n, "Ethernet8": n}, f"phase 2: sinks got {got}")
    # Phase 3: admin down again (bad requests refused first).
    check(telemetry(sw.prefix, "/softfabric/switch/port_admin,Ethernet8,sideways") is None, "bad value accepted")
    check(telemetry(sw.prefix, "/softfabric/switch/port_admin,Ethernet99,down") is None, "bad port accepted")
    telemetry(sw.prefix, "/softfabric/switch/port_admin,Ethernet8,down")
    wait_state(sw, "Ethernet8", "oper_status", "down", "after port_admin down")
    got = flood(h, sw, cfg, "down-again", n, ["Ethernet4"])
    check(got["Ethernet4"] == n, f"phase 3: Ethernet4 sink got {got['Ethernet4']} of {n}")
    rep = h.stop_switch(sw)
    p0, p4, p8 = (port_by_name(rep, x) for x in names)
    print("switch:", json.dumps({p["name"]: {k: p.get(k) for k in ("rx_packets", "tx_packets", "flooded", "dropped",
                                                                      "drops", "admin_status", "oper_status",
                                                                      "down_events")} for p in rep["ports"]}))
    check(p8["admin_status"] == "down" and p8["oper_status"] == "down", f"report Ethernet8 {p8}")
    check(p8["tx_packets"] == n and p8["down_events"] >= 1, f"Ethernet8 tx {p8['tx_packets']}, want {n} (phase 2)")
    check(p4["tx_packets"] == 3 * n and p0["flooded"] == 3 * n, f"Ethernet4 tx {p4['tx_packets']}, flooded {p0['flooded']}")
    check(p0["dropped"] == 0, f"drops {p0['drops']}")
    harness.check_drop_causes(rep)


def port_blackhole(h):
    """port_blackhole on Ethernet4 (link up, still flooded to): every copy
    for it is a counted blackhole drop and its sink gets nothing; off again:
    the next flood arrives whole."""
    names = ["Ethernet0", "Ethernet4"]
    cfg = base_cfg(h, names)
    sw = h.start_switch(cfg, telemetry=True)
    r = telemetry(sw.prefix, "/softfabric/switch/port_blackhole,Ethernet4,on")
    check(r is not None, "port_blackhole refused")
    wait_state(sw, "Ethernet4", "blackhole", "on", "after port_blackhole on")
    n = 2000
    sink = h.pktio("sink-bh", "sink", [client(cfg, "Ethernet4")], ["--duration", 40, "--link-wait-s", 15], ready=True)
    gen = h.pktio("gen-bh", "gen", [client(cfg, "Ethernet0")], GEN_ARGS + ["--count", n])
    h.finish(gen, 40)
    wait_until(lambda: port_tel(sw, "Ethernet0").get("drop_blackhole") == n, 10, "every copy counted as blackhole",
               procs=[sw])
    t4 = port_tel(sw, "Ethernet4")
    check(t4["oper_status"] == "up" and t4["tx_packets"] == 0, f"blackholed Ethernet4 {t4}")
    sink.stop(15)
    check(sink.json()["sink"]["rx_pkts"] == 0, "a blackholed port delivered")
    telemetry(sw.prefix, "/softfabric/switch/port_blackhole,Ethernet4,off")
    wait_state(sw, "Ethernet4", "blackhole", "off", "after port_blackhole off")
    got = flood(h, sw, cfg, "clear", n, ["Ethernet4"])
    check(got["Ethernet4"] == n, f"after off: sink got {got['Ethernet4']} of {n}")
    rep = h.stop_switch(sw)
    p0 = port_by_name(rep, "Ethernet0")
    print("switch:", json.dumps({p["name"]: {k: p.get(k) for k in ("rx_packets", "tx_packets", "dropped", "drops")}
                                 for p in rep["ports"]}))
    check(p0["drops"] == {"blackhole": n}, f"Ethernet0 drops {p0['drops']}, want blackhole {n}")
    harness.check_drop_causes(rep)
    harness.check_conservation(rep)


def memif_peer_link_state(h):
    """A 4-port switch whose Ethernet8 and Ethernet12 peers never connect
    (issue 17: a 20,000-frame flood used to leave ~1.8 MB in each dead port's
    queue and drop 54,444 copies as ingress_limit): the flood reaches the one
    live sink whole, the dead ports get no copy and hold nothing. A sink that
    connects late on Ethernet8 gets the next flood; after it leaves, the
    port is down again and the third flood again loses nothing."""
    names = ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"]
    cfg = base_cfg(h, names)
    sw = h.start_switch(cfg, telemetry=True)
    for p in ("Ethernet8", "Ethernet12"):
        t = port_tel(sw, p)
        check(t["link_status"] == "down" and t["oper_status"] == "down", f"{p} with no peer: {t}")
    n = 20000
    got = flood(h, sw, cfg, "never", n, ["Ethernet4"])
    check(got["Ethernet4"] == n, f"never-connected: live sink got {got['Ethernet4']} of {n}")
    for p in ("Ethernet8", "Ethernet12"):
        t = port_tel(sw, p)
        check(t["tx_packets"] == 0 and sum(t["queue_depth_bytes"]) == 0, f"{p} (no peer) holds frames: {t}")
    check(port_tel(sw, "Ethernet0")["dropped"] == 0, f"drops {port_tel(sw, 'Ethernet0')}")
    # Connects late.
    late = h.pktio("sink-late", "sink", [client(cfg, "Ethernet8")],
                   ["--expect", n, "--duration", 40, "--idle-exit-ms", 3000, "--link-wait-s", 15], ready=True)
    wait_state(sw, "Ethernet8", "oper_status", "up", "late peer connected")
    got = flood(h, sw, cfg, "late", n, ["Ethernet4"])
    late_rx = h.finish(late, 40)["sink"]["rx_pkts"]
    check(got["Ethernet4"] == n and late_rx == n, f"late peer: Ethernet4 {got['Ethernet4']}, Ethernet8 {late_rx} of {n}")
    # It left (the sink exited): down again.
    wait_state(sw, "Ethernet8", "link_status", "down", "late peer left")
    got = flood(h, sw, cfg, "left", n, ["Ethernet4"])
    check(got["Ethernet4"] == n, f"after the peer left: live sink got {got['Ethernet4']} of {n}")
    rep = h.stop_switch(sw)
    print("switch:", json.dumps({p["name"]: {k: p.get(k) for k in ("rx_packets", "tx_packets", "dropped", "drops",
                                                                      "oper_status", "down_events")}
                                 for p in rep["ports"]}))
    p0, p4, p8, p12 = (port_by_name(rep, x) for x in names)
    check(p0["dropped"] == 0, f"Ethernet0 drops {p0['drops']}")
    check(p4["tx_packets"] == 3 * n, f"Ethernet4 tx {p4['tx_packets']}")
    check(p8["tx_packets"] == n and p12["tx_packets"] == 0, f"Ethernet8 tx {p8['tx_packets']}, Ethernet12 {p12['tx_packets']}")
    check(p8["down_events"] >= 1, f"Ethernet8 down_events {p8['down_events']}")
    check(rep["buffer"]["used_bytes"] == 0, f"buffer holds {rep['buffer']['used_bytes']} bytes")
    harness.check_drop_causes(rep)


CASES = {
    "port_admin_down": port_admin_down,
    "port_blackhole": port_blackhole,
    "memif_peer_link_state": memif_peer_link_state,
}

if __name__ == "__main__":
    sys.exit(harness.run_main(CASES))
