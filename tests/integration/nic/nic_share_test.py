#!/usr/bin/python3
"""Sharing a NIC with the kernel (issue 19 section 3; docs/guide.md "Sharing
a NIC with the kernel"): sf-nic on net_af_xdp with the steering XDP program
(nic/xdp/sf_roce_steer.bpf.c) on one end of a veth pair, a peer sf-nic in a
network namespace on the other end. The kernel keeps its own traffic (ARP,
ICMP, TCP) while sf-nic receives its RoCE; without the program the AF_XDP
socket takes everything and the kernel loses it.

Usage: nic_share_test.py --build BUILD_DIR CASE
CASE: xdp_steer, tap_flow_isolate, routed_ipv4, routed_ipv6, routed_bad_gateway. Exit 0 = pass, 77 = skipped, else fail.

The test creates and deletes its own namespace and veths and signals only the
processes it started (harness.py).
"""
import json
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "switch"))
import harness  # noqa: E402
from harness import check, wait_until  # noqa: E402
from nic_test import free_port, sf_nic, start_nic_config  # noqa: E402  (this directory)

SKIP = 77


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30, **kw)


def sh(cmd):
    r = run(cmd)
    check(r.returncode == 0, f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


class Netns:
    """A network namespace the test creates; deleted at close (with the veth
    end in it)."""

    def __init__(self, h, name):
        self.name = name
        sh(["ip", "netns", "add", name])
        h.netns = getattr(h, "netns", []) + [self]

    def cmd(self, cmd):
        return ["ip", "netns", "exec", self.name] + cmd

    def close(self):
        run(["ip", "netns", "del", self.name])


def af_xdp_unavailable():
    return harness.af_xdp_unavailable(mount_bpffs=True)


def mac_of(ifname, ns=None):
    cmd = ["cat", f"/sys/class/net/{ifname}/address"]
    return sh(ns.cmd(cmd) if ns else cmd).strip()


def veth_netns(h, tag):
    """vA (root namespace, 10.9.0.1/24) <-> vB (namespace NS, 10.9.0.2/24), both up,
    IPv6 off (no ND noise in the counts). Returns (vA, vB, ns)."""
    a, b = f"sfxa{tag}", f"sfxb{tag}"
    ns = Netns(h, f"sfx{tag}")
    h.add_veth(a, b)
    sh(["ip", "link", "set", b, "netns", ns.name])
    for i, n, ip in ((a, None, "10.9.0.1/24"), (b, ns, "10.9.0.2/24")):
        def do(c):
            return sh(n.cmd(c) if n else c)
        run((n.cmd if n else list)(["sysctl", "-qw", f"net.ipv6.conf.{i}.disable_ipv6=1"]))
        run((n.cmd if n else list)(["ethtool", "-K", i, "rxvlan", "off", "txvlan", "off"]))
        do(["ip", "addr", "add", ip, "dev", i])
        do(["ip", "link", "set", i, "up"])
    sh(ns.cmd(["ip", "link", "set", "lo", "up"]))
    return a, b, ns


PING = r"""
import os, select, socket, struct, sys, time
dst, count = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
ident = os.getpid() & 0xFFFF
def csum(b):
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while t >> 16: t = (t & 0xFFFF) + (t >> 16)
    return ~t & 0xFFFF
got = 0
for seq in range(count):
    body = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + b"sf-nic-share-tst"
    body = body[:2] + struct.pack("!H", csum(body)) + body[4:]
    s.sendto(body, (dst, 0))
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        r, _, _ = select.select([s], [], [], max(0.0, end - time.monotonic()))
        if not r: break
        pkt = s.recv(2048)
        icmp = pkt[(pkt[0] & 0xF) * 4:]
        if icmp[0] == 0 and struct.unpack("!HH", icmp[4:8]) == (ident, seq):
            got += 1
            break
print(got)
sys.exit(0 if got == count else 1)
"""


def ping_ok(ns, ip, count=3):
    """ICMP echo from the namespace (a raw socket: no ping binary needed),
    one second per echo at most; True if every echo got its reply."""
    r = run(ns.cmd(["/usr/bin/python3", "-c", PING, ip, str(count)]))
    return r.returncode == 0


def tcp_ok(ns, ip):
    """A TCP connection from the namespace to a listener of this test in the
    root namespace on `ip`; a line each way. True if it went through."""
    with socket.socket() as ls:
        ls.bind((ip, 0))
        ls.listen(1)
        ls.settimeout(5)
        port = ls.getsockname()[1]
        client = ("import socket,sys\n"
                  f"s=socket.create_connection(('{ip}',{port}),timeout=3)\n"
                  "s.sendall(b'hello kernel\\n'); sys.stdout.write(s.recv(64).decode())\n")
        p = subprocess.Popen(ns.cmd(["/usr/bin/python3", "-c", client]), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            c, _ = ls.accept()
            with c:
                c.settimeout(5)
                got = c.recv(64)
                c.sendall(b"hello namespace\n")
        except OSError:
            got = b""
        out, _ = p.communicate(timeout=10)
        return got == b"hello kernel\n" and out == "hello namespace\n"


def start_nic(h, name, ns, args):
    prefix = h.prefix("nic")
    report = h.path(f"{prefix}.report.json")
    ready = h.path(f"{prefix}.ready")
    cmd = [sf_nic(h)] + harness.EAL_COMMON + [f"--file-prefix={prefix}", "--no-telemetry", "--"]
    cmd += [str(a) for a in args] + ["--backoff", "--report", report, "--ready-file", ready, "--log-level", "warn"]
    p = h.start(name, ns.cmd(cmd) if ns else cmd)
    p.report = report
    wait_until(lambda: os.path.exists(ready), 30, f"{name} ready file", procs=[p])
    return p


def report_of(p):
    with open(p.report) as f:
        return json.load(f)


def drops(rep):
    d = {}
    for hst in rep["hosts"]:
        for k, v in hst["drops"].items():
            d[k] = d.get(k, 0) + v
    return d


def xdp_steer(h):
    """sf-nic server on net_af_xdp (vA) with xdp_prog=sf_roce_steer.bpf.o, the
    kernel's IP and MAC of vA; the client sf-nic in the namespace on
    net_af_packet (vB), the namespace kernel's IP and MAC. With the program:
    ping and a TCP connection from the namespace reach the root kernel while
    the server is up, the out-of-band exchange itself is TCP over the same
    veth, and write_bw --verify (64 KiB x 200, 1 KiB MTU) lands in full; the
    server drops no frame (nothing but RoCE reached it). Without the program
    (the PMD's own, which takes the whole queue): ping and TCP fail while
    sf-nic holds the queue, and work again once it is gone."""
    why = af_xdp_unavailable()
    if why:
        print("SKIP:", why)
        return SKIP
    prog = os.path.join(h.build, "nic", "xdp", "sf_roce_steer.bpf.o")
    if not os.path.exists(prog):
        print("SKIP: nic/xdp/sf_roce_steer.bpf.o not built (no clang)")
        return SKIP
    tag = str(os.getpid() % 10000)
    a, b, ns = veth_netns(h, tag)
    check(ping_ok(ns, "10.9.0.1") and tcp_ok(ns, "10.9.0.1"), "no kernel connectivity before sf-nic started")
    mac_a, mac_b = mac_of(a), mac_of(b, ns)
    oob = 18600 + int(tag) % 1000

    # 1. With the steering program.
    common = ["-s", 65536, "-n", 200, "-m", 1024, "--verify", "--speed", 1, "-p", oob]
    srv = start_nic(h, "server", None, ["write_bw", "--port", f"net_af_xdp0,iface={a},xdp_prog={prog}",
                                        "--mac", mac_a, "--ip", "10.9.0.1"] + common)
    link = sh(["ip", "-d", "link", "show", a])
    check("prog/xdp" in link, f"no XDP program on {a} while sf-nic runs:\n{link}")
    check(ping_ok(ns, "10.9.0.1"), "with the steering program: ping from the namespace got no reply")
    check(tcp_ok(ns, "10.9.0.1"), "with the steering program: TCP from the namespace did not get through")
    cli = start_nic(h, "client", ns, ["write_bw", "--port", f"net_af_packet0,iface={b}", "--mac", mac_b,
                                      "--ip", "10.9.0.2"] + common + ["10.9.0.1"])
    rc = cli.wait(90)
    check(rc == 0, f"client exited {rc}:\n{cli.out()[-2000:]}\n{cli.err_tail()}")
    rc = srv.wait(30)
    check(rc == 0, f"server exited {rc}:\n{srv.out()[-2000:]}\n{srv.err_tail()}")
    rs, rcl = report_of(srv), report_of(cli)
    sw, cw = rs["workloads"][0], rcl["workloads"][0]
    print(f"with the program: server {sw['messages']} messages verified, drops {drops(rs)}; "
          f"client {cw['bytes']} bytes at {cw['goodput_gbps']:.3f} Gb/s, drops {drops(rcl)}")
    check(sw["status"] == "ok" and sw["messages"] == 200 and sw["verify_errors"] == 0, f"server {sw}")
    check(cw["status"] == "ok" and cw["bytes"] == 200 * 65536, f"client {cw}")
    check(sum(drops(rs).values()) == 0, f"the server got frames that are not its RoCE: {drops(rs)}")
    check(ping_ok(ns, "10.9.0.1"), "ping after the run failed")
    link = sh(["ip", "-d", "link", "show", a])
    check("prog/xdp" not in link, f"sf-nic left its XDP program on {a}:\n{link}")

    # 2. Without it (the PMD's default program takes queue 0 whole): the kernel loses its traffic.
    srv = start_nic(h, "server-noprog", None, ["write_bw", "--port", f"net_af_xdp0,iface={a}",
                                               "--mac", mac_a, "--ip", "10.9.0.1", "-p", oob + 1])
    lost_ping = not ping_ok(ns, "10.9.0.1", count=2)
    lost_tcp = not tcp_ok(ns, "10.9.0.1")
    srv.popen.send_signal(2)  # SIGINT: the server stops waiting for its client
    srv.wait(20)
    run(["ip", "link", "set", "dev", a, "xdp", "off"])
    print(f"without the program: ping {'lost' if lost_ping else 'answered'}, TCP {'lost' if lost_tcp else 'connected'}")
    check(lost_ping and lost_tcp, "without the steering program the kernel still got its traffic "
                                  "(the PMD's own program should take the whole queue)")
    check(ping_ok(ns, "10.9.0.1"), "ping after the program-less run failed")


# ---- routed fabric: ARP / ND and next hops (nic/host/neighbor.h) --------------------------

FAMILIES = {
    4: {"host": ("10.8.1.1", "10.8.2.2"), "router": ("10.8.1.254", "10.8.2.254"), "len": 24,
        "nowhere": "10.8.1.253", "asker": "10.8.1.100"},
    6: {"host": ("fd08:1::1", "fd08:2::2"), "router": ("fd08:1::fe", "fd08:2::fe"), "len": 64,
        "nowhere": "fd08:1::fd", "asker": "fd08:1::64"},
}


def router_ns(h, tag, fam):
    """A Linux router in namespace R between two veths: host side hA / hB in the
    root namespace with no address (the kernel there ignores them), router
    side rA / rB in R with the subnets' .254 / ::fe, forwarding on. Returns
    (hA, hB, rA MAC, rB MAC)."""
    f = FAMILIES[fam]
    ns = Netns(h, f"sfr{tag}")
    ends = []
    for side in ("a", "b"):
        hv, rv = f"sfh{side}{tag}", f"sfr{side}{tag}"
        h.add_veth(hv, rv)
        sh(["ip", "link", "set", rv, "netns", ns.name])
        ends.append((hv, rv))
    sh(ns.cmd(["sysctl", "-qw", "net.ipv4.ip_forward=1"]))
    sh(ns.cmd(["sysctl", "-qw", "net.ipv6.conf.all.forwarding=1"]))
    for i, (hv, rv) in enumerate(ends):
        run(["sysctl", "-qw", f"net.ipv6.conf.{hv}.disable_ipv6=1"])
        run(["ethtool", "-K", hv, "rxvlan", "off", "txvlan", "off"])
        sh(["ip", "link", "set", hv, "up"])
        if fam == 6:
            sh(ns.cmd(["ip", "-6", "addr", "add", f"{f['router'][i]}/{f['len']}", "dev", rv, "nodad"]))
        else:
            sh(ns.cmd(["sysctl", "-qw", f"net.ipv6.conf.{rv}.disable_ipv6=1"]))
            sh(ns.cmd(["ip", "addr", "add", f"{f['router'][i]}/{f['len']}", "dev", rv]))
        sh(ns.cmd(["ip", "link", "set", rv, "up"]))
    return ends[0][0], ends[1][0], mac_of(ends[0][1], ns), mac_of(ends[1][1], ns)


def srv_mac(fam):
    return "02:4e:00:08:01:01"


def routed_cfg(fam, side, dev, oob, gateway="router", prefix=True, iterations=200):
    f = FAMILIES[fam]
    i = side - 1
    port = {"devargs": f"net_af_packet{i},iface={dev}", "mac": f"02:4e:00:08:0{side}:0{side}",
            "ip": f["host"][i] + (f"/{f['len']}" if prefix else ""), "speed_gbps": 1}
    if gateway == "router":
        port["gateway"] = f["router"][i]
    elif gateway:
        port["gateway"] = gateway
    role = "server" if side == 1 else "client"
    return {"hosts": {"h": dict(port, mtu=1024)},
            "workloads": [{"name": "w", "host": "h", "type": "write_bw", "role": role, "oob": f"127.0.0.1:{oob}",
                           "size": 65536, "iterations": iterations, "verify": True}]}


# Asks for `ip` on `iface` (ARP request, or IPv6 neighbor solicitation to the
# solicited-node group) every 100 ms until an answer comes (prints the MAC
# that answered) or 60 s pass (exit 1). Prints "ready" once scapy is loaded.
ASK = r"""
import sys, time
from scapy.all import ARP, Ether, ICMPv6ND_NS, ICMPv6ND_NA, ICMPv6NDOptSrcLLAddr, IPv6, conf, get_if_hwaddr, srp1
from scapy.utils6 import in6_getnsma, in6_getnsmac
from socket import AF_INET6, inet_ntop, inet_pton
iface, ip, fam, src = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
conf.verb = 0
mac = get_if_hwaddr(iface)
if fam == "4":
    q = Ether(dst="ff:ff:ff:ff:ff:ff", src=mac) / ARP(op=1, hwsrc=mac, psrc=src, pdst=ip)
else:
    ns = in6_getnsma(inet_pton(AF_INET6, ip))
    q = (Ether(dst=in6_getnsmac(ns), src=mac) / IPv6(src=src, dst=inet_ntop(AF_INET6, ns), hlim=255) /
         ICMPv6ND_NS(tgt=ip) / ICMPv6NDOptSrcLLAddr(lladdr=mac))
print("ready", flush=True)
end = time.monotonic() + 60
while time.monotonic() < end:
    r = srp1(q, iface=iface, timeout=0.1)
    if r is not None and ((fam == "4" and ARP in r and r[ARP].op == 2 and r[ARP].psrc == ip) or
                          (fam == "6" and ICMPv6ND_NA in r and r[ICMPv6ND_NA].tgt == ip)):
        print("answered", r[Ether].src, flush=True)
        sys.exit(0)
sys.exit(1)
"""


def routed(h, fam):
    """Two sf-nic hosts in different subnets (10.8.1.1/24 and 10.8.2.2/24, or
    fd08:1::1/64 and fd08:2::2/64) on af_packet, each with only a gateway,
    through a Linux router in a namespace: each resolves its gateway by ARP /
    ND at start, the router resolves each host by ARP / ND (sf-nic answers,
    the kernel on those veths has no address), and write_bw 64 KiB x 200
    --verify (64 KiB x 1000) lands in full; a prober on the router's side
    asks for the server (ARP / NS) and gets sf-nic's answer. Each side's
    report: gateway reachable with the router port's MAC, one announcement,
    the requests it answered, no drop."""
    tag = str(os.getpid() % 10000)
    ha, hb, ma, mb = router_ns(h, tag, fam)
    f = FAMILIES[fam]
    oob = free_port()
    srv = start_nic_config(h, "server", routed_cfg(fam, 1, ha, oob, iterations=1000))
    # The router learns each host from its gateway request; a neighbour that
    # asks (the router's refresh, another host) is answered while sf-nic runs:
    # a prober on the router's side asks for the server until it answers.
    ask = h.start("ask", h.netns[0].cmd(["/usr/bin/python3", "-c", ASK, f"sfra{tag}", f["host"][0], str(fam),
                                          f["asker"]]))
    wait_until(lambda: "ready" in ask.out(), 60, "the ARP / ND prober", procs=[ask])
    cli = start_nic_config(h, "client", routed_cfg(fam, 2, hb, oob, iterations=1000))
    for p in (cli, srv):
        rc = p.wait(90)
        check(rc == 0, f"{p.name} exited {rc}:\n{p.out()[-2000:]}\n{p.err_tail()}")
    rc = ask.wait(60)
    check(rc == 0 and f"answered {srv_mac(fam)}" in ask.out(),
          f"the server did not answer the router side's {'ARP' if fam == 4 else 'ND'} request: exit {rc}\n"
          f"{ask.out()[-500:]}{ask.err_tail()}")
    rs, rcl = report_of(srv), report_of(cli)
    sw, cw = rs["workloads"][0], rcl["workloads"][0]
    check(sw["status"] == "ok" and sw["messages"] == 1000 and sw["verify_errors"] == 0, f"server {sw}")
    check(cw["status"] == "ok" and cw["bytes"] == 1000 * 65536, f"client {cw}")
    key = "gateway_state" if fam == 4 else "gateway6_state"
    for rep, mac, who in ((rs, ma, "server"), (rcl, mb, "client")):
        port = rep["hosts"][0]["ports"][0]
        nb = port.get("neighbors", {})
        print(f"{who}: gateway_mac {port.get('gateway_mac')} neighbors {nb} drops {drops(rep)}")
        check(port.get("gateway_mac") == mac, f"{who}: gateway_mac {port.get('gateway_mac')}, router port {mac}")
        check(nb.get(key) == "reachable", f"{who}: {nb}")
        check(nb["tx_announcements"] == 1, f"{who}: announcements {nb}")
        asked = 1 if who == "server" else 0  # the prober's request (answered once at least)
        if fam == 4:
            check(nb["tx_arp_requests"] >= 1 and nb["rx_arp"] >= 1 + asked and nb["tx_arp_replies"] >= asked,
                  f"{who}: ARP {nb} (want our request answered, and the prober's answered)")
        else:
            check(nb["tx_ns"] >= 1 and nb["rx_nd"] >= 1 + asked and nb["tx_na"] >= asked, f"{who}: ND {nb}")
        # IPv6: the router's own link-local chatter (MLD reports, its DAD) is
        # not ours: counted as not_roce, nothing else may be dropped.
        d = {k: v for k, v in drops(rep).items() if not (fam == 6 and k == "not_roce")}
        check(sum(d.values()) == 0, f"{who}: drops {drops(rep)}")
    print(f"routed IPv{fam}: {cw['bytes']} bytes verified at {cw['goodput_gbps']:.3f} Gb/s")


def routed_bad_gateway(h):
    """A wrong gateway (an address nobody has on the subnet) and a missing one
    (the peer is outside the port's subnet, no gateway): the client fails at
    connect with the reason, after its 3 ARP requests (wrong) or at once
    (missing), exit 1, before any QP is connected."""
    tag = str(os.getpid() % 10000)
    ha, hb, _, _ = router_ns(h, tag, 4)
    for what, cli_gw, want in (
            ("wrong", FAMILIES[4]["nowhere"].replace("10.8.1", "10.8.2"),
             "port 1's gateway 10.8.2.253 does not answer ARP (3 requests"),
            ("missing", None, "no route to 10.8.1.1: it is outside port 1's subnet 10.8.2.2/24 and the port has no gateway")):
        oob = free_port()
        srv = start_nic_config(h, f"server-{what}", routed_cfg(4, 1, ha, oob))
        cli = start_nic_config(h, f"client-{what}", routed_cfg(4, 2, hb, oob, gateway=cli_gw))
        rc = cli.wait(60)
        out = cli.out() + cli.err()
        print(f"{what} gateway: client exit {rc}: {[ln for ln in out.splitlines() if 'workload w' in ln][:1]}")
        check(rc == 1 and want in out, f"{what} gateway: client exit {rc}, want 1 and '{want}':\n{out[-1500:]}")
        srv.popen.send_signal(2)
        srv.wait(30)


# ---- --flow-isolate (rte_flow isolated mode; net_tap with remote=IF) ------------------------

def tc_flow_unavailable():
    """net_tap's rte_flow needs the kernel's multiq qdisc and flower classifier."""
    a, b = f"sfq{os.getpid() % 10000}", f"sfp{os.getpid() % 10000}"
    r = run(["ip", "link", "add", a, "type", "veth", "peer", "name", b])
    if r.returncode != 0:
        return f"cannot create a veth: {r.stderr.strip()}"
    try:
        if run(["tc", "qdisc", "add", "dev", a, "root", "handle", "1:", "multiq"]).returncode != 0:
            return "the kernel lacks the multiq qdisc (sch_multiq): net_tap has no rte_flow support"
        run(["tc", "qdisc", "add", "dev", a, "ingress"])
        r = run(["tc", "filter", "add", "dev", a, "parent", "ffff:", "protocol", "ip", "flower", "ip_proto", "udp",
                 "dst_port", "4791", "action", "drop"])
        if r.returncode != 0:
            return f"the kernel lacks the flower classifier (cls_flower): {r.stderr.strip()}"
    finally:
        run(["ip", "link", "del", a])
    return None


def tap_flow_isolate(h):
    """1. --flow-isolate on a PMD without flow isolation (memif) fails at
    start, naming the port, its driver and the driver's reason (exit 1).
    2. (Where the kernel has what net_tap's rte_flow needs: multiq, flower.)
    sf-nic on net_tap0,remote=vA --flow-isolate, the client sf-nic in a
    namespace on af_packet vB: only UDP 4791 arriving on vA is redirected to
    sf-nic, so ping and TCP from the namespace reach the root kernel, and
    write_bw --verify lands in full."""
    sock = h.path("fi.sock")
    prefix = h.prefix("nic")
    r = run([sf_nic(h)] + harness.EAL_COMMON + [f"--file-prefix={prefix}", "--no-telemetry", "--", "write_bw",
             "--port", f"net_memif0,role=server,socket={sock}", "--flow-isolate", "--mac", "02:00:00:00:00:01",
             "--ip", "10.9.1.1", "--oob-wait-s", "1"])
    out = r.stdout + r.stderr
    print(f"memif --flow-isolate: exit {r.returncode}: {[ln for ln in out.splitlines() if 'flow-isolate' in ln][:1]}")
    check(r.returncode == 1 and "--flow-isolate: port net_memif0 (driver net_memif) refuses flow isolation" in out,
          f"--flow-isolate on memif: exit {r.returncode}, want 1 and the reason:\n{out[-1500:]}")
    why = tc_flow_unavailable()
    if why:
        print("SKIP (part 2, net_tap):", why)
        return SKIP
    tag = str(os.getpid() % 10000)
    a, b, ns = veth_netns(h, tag)
    mac_a, mac_b = mac_of(a), mac_of(b, ns)
    oob = 18700 + int(tag) % 1000
    common = ["-s", 65536, "-n", 200, "-m", 1024, "--verify", "--speed", 1, "-p", oob]
    srv = start_nic(h, "server", None, ["write_bw", "--port", f"net_tap0,iface=sft{tag},remote={a}", "--flow-isolate",
                                        "--mac", mac_a, "--ip", "10.9.0.1"] + common)
    check(ping_ok(ns, "10.9.0.1") and tcp_ok(ns, "10.9.0.1"), "with --flow-isolate the kernel lost its traffic")
    cli = start_nic(h, "client", ns, ["write_bw", "--port", f"net_af_packet0,iface={b}", "--mac", mac_b,
                                      "--ip", "10.9.0.2"] + common + ["10.9.0.1"])
    for p in (cli, srv):
        rc = p.wait(90)
        check(rc == 0, f"{p.name} exited {rc}:\n{p.out()[-2000:]}\n{p.err_tail()}")
    rs, rcl = report_of(srv), report_of(cli)
    sw, cw = rs["workloads"][0], rcl["workloads"][0]
    check(sw["messages"] == 200 and sw["verify_errors"] == 0 and cw["bytes"] == 200 * 65536, f"server {sw}, client {cw}")
    check(sum(drops(rs).values()) == 0, f"the server got frames that are not its RoCE: {drops(rs)}")


CASES = {"xdp_steer": xdp_steer, "tap_flow_isolate": tap_flow_isolate, "routed_ipv4": lambda h: routed(h, 4), "routed_ipv6": lambda h: routed(h, 6),
         "routed_bad_gateway": routed_bad_gateway}


def main():
    orig_close = harness.Harness.close

    def close(self, keep_dir=False):
        leaked = orig_close(self, keep_dir)
        for n in getattr(self, "netns", []):
            n.close()
        return leaked
    harness.Harness.close = close
    return harness.run_main(CASES, "nic-share-")


if __name__ == "__main__":
    sys.exit(main())
