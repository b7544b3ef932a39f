#!/usr/bin/python3
"""sf-lab gen / check and multi-port, routed topologies (tools/lab/gen.py, topology.py,
nic.py, sim.py; docs/lab.md "Generated fabrics").

Cases:
  unit   1. Counts: a 2-tier fabric at radix 8 (defaults: 4 hosts + 4 uplinks a leaf, 4 spines,
            8 leaves): 12 switches, 32 hosts, 32 host + 32 leaf-spine links, every port used;
            --oversub 3: 6 hosts + 2 uplinks a leaf; --spines 2 with 4 uplinks: 2 parallel
            links per leaf-spine pair; a 3-tier k=4 fat tree: 20 switches, 16 hosts, 48 links,
            5 switch hops; 8 planes: 8 x the switches, hosts with 8 ports, 3 switch hops.
         2. Routing: a leaf routes each host /32 on its port (NEIGH = the host port's MAC) and
            the plane's /12 as one ECMP group over all its uplinks (nexthop and ifname lists of
            equal length, each nexthop a NEIGH of the peer switch port's MAC); a spine routes
            each leaf's subnet; every flow of every generated topology reaches its destination
            over every ECMP member (topology.Router), and a broken table is caught with the
            switch and route named.
         3. SRv6: every switch has locator fcbb:bbbb::/32, a unique uSID (1 + its number), and a
            next entry for every neighbour switch (its uSID -> the port toward it, the peer
            port's MAC) and every host port on it (0x8000 + host -> host port and MAC); a path
            named by uSIDs (leaf0, spine k, leaf7, h31; one on plane 3) walked through the
            tables as sf-switch shifts and forwards reaches the host over exactly that spine.
         4. Multi-plane addresses: host h's port p is in plane p's 10.(16p).0.0/12, in its leaf's
            subnet, unique; the same port index joins the same plane; MACs unique.
         5. Determinism: the same parameters render byte-identical files; the CLI writes
            identical trees twice; the shipped examples (config/topologies/leaf-spine-2x2,
            two-plane-2x2) are byte for byte what the command in their description writes.
         6. Bad parameters: exit 2 with the option named, nothing written (the --out directory
            not created).
         7. Multi-port hosts in hand-written topologies: default per-port MAC / IP
            (02:1b:KK:.., 10.(128+k)..) distinct from one-port defaults, explicit port_macs /
            port_ips, errors naming the path ("h0" for a 4-port host, "h0:p4", mac with ports,
            a workload port beyond a host's ports, a routed switch port without a mac);
            nic.json "ports" [{devargs, mac, ip, speed_gbps, gateway_mac}] with a vdev per port,
            workload "port" (1-based) on multi-port hosts only, host-level "gateway_mac" for a
            routed one-port host; sf-sim plan ends {"nic", "host", "port"} and link delay_ns.
  check  8. sf-lab check on generated fabrics prints switches, hosts, ports, links, planes,
            routing, hops and bisection with the expected figures (full bisection 2-tier,
            half with --oversub 2, 8 planes).
  parse  9. Every kind of generated switch config (both profiles, 2 and 3 tiers, a multi-plane
            leaf and spine) is accepted by sf-switch's parser (an sf-sim plan of those switches:
            exit 0); a config with a route over a port without NEIGH is refused (exit 2, named).
  sim   10. A generated leaf-spine (2 leaves, 2 spines, 2 hosts per leaf, nic hosts, every host
            writing 1 MiB on 4 QPs to the host on the other leaf) under sf-lab run --sim: every
            flow complete, both spines carry a share of the traffic (ECMP over the UDP source
            port), the leaves routed every frame; a 2-plane fabric likewise (every plane's
            spines carry traffic); a 3-tier fabric of 2 pods: h0 -> h7 on 4 QPs complete over
            at least two cores, the two racks without workloads left out of the sf-sim plan.
            MRC on 2 planes (one QP spraying over both ports and both spines of each plane),
            and the same in SRv6 mode (--ev-mode srv6): every spine's frames toward leaf1 are
            exactly h0's packets on the EVs whose uSID path names it.
            Skipped (77) while sf-nic lacks gateway_mac / ports.

Usage: lab_gen_test.py --build BUILD_DIR --source SOURCE_DIR CASE
"""
import argparse
import copy
import ipaddress
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


class Ctx:
    def __init__(self, src, build):
        self.src, self.build = src, build
        sys.path.insert(0, os.path.join(src, "tools", "lab"))
        sys.path.insert(0, os.path.join(src, "tools", "demo"))
        import gen
        import topology
        self.gen, self.tp = gen, topology

    def fabric(self, **kw):
        return self.gen.plan(self.gen.Params(**kw))

    def write(self, d, **kw):
        """Renders and writes a fabric under d; returns (fabric, topology path)."""
        f = self.fabric(**kw)
        path = self.gen.write(self.gen.render(f), d)
        return f, path

    def lab(self, *args, timeout=300):
        return subprocess.run([sys.executable, os.path.join(self.src, "tools", "sf-lab")] + list(args),
                              capture_output=True, text=True, timeout=timeout)


def cfg_of(d, sw):
    with open(os.path.join(d, "switch", f"{sw}.json")) as f:
        return json.load(f)


# ---- unit ------------------------------------------------------------------------------

def case_unit(c):
    g, tp = c.gen, c.tp
    with tempfile.TemporaryDirectory() as d:
        # 1. counts
        f, path = c.write(os.path.join(d, "a"), radix=8, traffic="shift")
        check((f.H, f.U) == (4, 4), f"radix 8 defaults: {f.H} hosts, {f.U} uplinks a leaf")
        tiers = [sw.tier for sw in f.switches.values()]
        check(tiers.count(0) == 8 and tiers.count(1) == 4, f"leaves / spines {tiers.count(0)}/{tiers.count(1)}")
        check(len(f.hosts) == 32 and len(f.links) == 64, f"{len(f.hosts)} hosts, {len(f.links)} links")
        check(all(len(sw.ports) == 8 for sw in f.switches.values()), "every port of every switch used")
        t = tp.load(path)
        check(len(t.switches) == 12 and len(t.hosts) == 32 and len(t.links) == 64, "loaded topology counts")
        check(len(t.flows) == 32, f"shift: one flow per host, got {len(t.flows)}")
        f3 = c.fabric(radix=8, oversub=[3])
        check((f3.H, f3.U) == (6, 2), f"--oversub 3: {f3.H} hosts + {f3.U} uplinks")
        fp = c.fabric(radix=8, spines=2, leaves=4)
        sp = fp.switches["spine0"]
        check(len(sp.ports) == 8 and [peer[1] for _, peer in sp.ports].count("leaf0") == 2,
              "--spines 2: two parallel links from each leaf to each spine")
        ft, ftp = c.write(os.path.join(d, "ft"), tiers=3, radix=4, traffic="shift")
        tiers = [sw.tier for sw in ft.switches.values()]
        check((tiers.count(0), tiers.count(1), tiers.count(2)) == (8, 8, 4), f"k=4 fat tree tiers {tiers}")
        check(len(ft.hosts) == 16 and len(ft.links) == 48, f"k=4: {len(ft.hosts)} hosts, {len(ft.links)} links")
        t3 = tp.load(ftp)
        hops, _ = g._max_switch_hops(t3, tp.switch_graph(t3))
        check(hops == 5, f"3 tiers: {hops} switch hops")
        fm, fmp = c.write(os.path.join(d, "mp"), radix=8, planes=8, leaves=2, traffic="shift")
        check(len(fm.switches) == 8 * 6 and len(fm.hosts) == 8, f"8 planes: {len(fm.switches)} switches")
        tm = tp.load(fmp)
        check(all(len(h.ports) == 8 and h.multi for h in tm.hosts.values()), "8 ports per host")
        hops, _ = g._max_switch_hops(tm, tp.switch_graph(tm))
        check(hops == 3, f"multi-plane: {hops} switch hops (seed 002: at most 3)")
        check({f.port for f in tm.flows} == set(range(1, 9)), "a flow per plane (port 1..8)")

        # 1b. random permutation traffic (seeded), one flow per host, spread over the planes
        perm = g.permutation(1024, 7)
        check(sorted(perm) == list(range(1024)), "permutation: every host once")
        check(all(perm[i] != i for i in range(1024)), "permutation: no host sends to itself")
        check(perm == g.permutation(1024, 7) and perm != g.permutation(1024, 8),
              "permutation: a function of the seed (same seed same flows, another seed others)")
        check(perm[:8] == [552, 637, 178, 241, 460, 701, 454, 445],
              f"permutation: the draw is fixed across machines and versions, got {perm[:8]}")
        fq, fqp = c.write(os.path.join(d, "perm"), radix=8, planes=4, traffic="permutation", seed=3)
        tq = tp.load(fqp)
        check(len(tq.flows) == 32, f"permutation: one flow per host, got {len(tq.flows)}")
        check(sorted(f.src for f in tq.flows) == sorted(tq.hosts) and sorted(f.dst for f in tq.flows) ==
              sorted(tq.hosts), "permutation: every host sends one flow and receives one")
        per_port = [sum(1 for f in tq.flows if f.port == k) for k in range(1, 5)]
        check(per_port == [8, 8, 8, 8], f"permutation: flows spread evenly over the planes, got {per_port}")
        check(all(f.port == int(f.src[1:]) % 4 + 1 for f in tq.flows), "permutation: host i's flow on plane i mod P")
        check(f"--seed 3" in tq.description and "--traffic permutation" in tq.description,
              f"permutation: the description names the seed: {tq.description}")
        big = c.fabric(hosts=1024, planes=8, speeds=[400], traffic="permutation")
        check(len(big.hosts) == 1024 and len(g._workloads(big)) == 1024,
              "1,024 hosts x 8 planes with permutation traffic: accepted, 1,024 flows")
        wide = c.fabric(radix=64, planes=2, traffic="shift")
        check(len(g._workloads(wide)) == 4096, "shift over 2 planes of 2,048 hosts: 4,096 flows (past the old cap)")

        # 1c. the FDB is sized from the switch's ports (a routed switch learns one MAC per port)
        check([g.fdb_capacity(n) for n in (1, 16, 17, 64, 65)] == [64, 64, 128, 256, 512], "fdb_capacity sizes")
        check(cfg_of(os.path.join(d, "a"), "leaf0")["DEVICE_METADATA"]["localhost"]["fdb_capacity"] == 64,
              "a radix-8 leaf's config asks for a 64-entry FDB")

        # 2. routing
        da = os.path.join(d, "a")
        leaf = cfg_of(da, "leaf0")
        nb = leaf["NEIGH"]
        for h in range(4):
            hip, hmac = f.hosts[h]["ips"][0], f.hosts[h]["macs"][0]
            r = leaf["STATIC_ROUTE"].get(f"{hip}/32")
            check(r == {"nexthop": hip, "ifname": f"Ethernet{4 * h}"}, f"leaf0 host route {hip}: {r}")
            check(nb[f"Ethernet{4 * h}|{hip}"]["neigh"] == hmac, f"NEIGH of {hip}")
        up = leaf["STATIC_ROUTE"]["10.0.0.0/12"]
        hops_, ifs = up["nexthop"].split(","), up["ifname"].split(",")
        check(len(hops_) == 4 and ifs == ["Ethernet16", "Ethernet20", "Ethernet24", "Ethernet28"],
              f"leaf0 ECMP group over its 4 uplinks: {up}")
        for hop, ifn in zip(hops_, ifs):
            peer = next(p for q, p in f.switches["leaf0"].ports if q == ifn)
            want = f.switches[peer[1]].mac(g._port_index(f.switches[peer[1]], peer[2]))
            check(nb[f"{ifn}|{hop}"]["neigh"] == want, f"NEIGH {ifn}|{hop} is the spine port's MAC {want}")
        spine = cfg_of(da, "spine0")
        check(len(spine["STATIC_ROUTE"]) == 8 and all(k.endswith("/29") for k in spine["STATIC_ROUTE"]),
              f"spine0 routes a /29 per leaf: {list(spine['STATIC_ROUTE'])}")
        check(list(spine["STATIC_ROUTE"]) == sorted(spine["STATIC_ROUTE"], key=g._route_key), "routes sorted")
        # a broken table is caught, naming the switch
        bad = copy.deepcopy(spine)
        del bad["STATIC_ROUTE"]["10.0.0.8/29"]
        with open(os.path.join(da, "switch", "spine0.json"), "w") as fh:
            json.dump(bad, fh)
        try:
            tp.load(path)
            fail("a spine without a route to leaf1 passed the reachability check")
        except tp.TopologyError as e:
            check("spine0 has no route to 10.0.0.9" in str(e) and "workloads[" in str(e), f"message: {e}")
        bad = copy.deepcopy(spine)
        bad["NEIGH"][next(iter(bad["NEIGH"]))]["neigh"] = "02:00:00:00:00:99"
        with open(os.path.join(da, "switch", "spine0.json"), "w") as fh:
            json.dump(bad, fh)
        try:
            tp.load(path)
            fail("a wrong NEIGH MAC passed the reachability check")
        except tp.TopologyError as e:
            check("NEIGH" in str(e) and "spine0" in str(e), f"message: {e}")
        with open(os.path.join(da, "switch", "spine0.json"), "w") as fh:
            json.dump(spine, fh)
        tp.load(path)
        spine3 = cfg_of(os.path.join(d, "ft"), "spine0")
        up3 = spine3["STATIC_ROUTE"]["10.0.0.0/12"]
        check(len(up3["ifname"].split(",")) == 2, f"3-tier spine: ECMP over 2 core uplinks: {up3}")
        core = cfg_of(os.path.join(d, "ft"), "core0")
        check(len(core["STATIC_ROUTE"]) == 4 and all(k.endswith("/29") for k in core["STATIC_ROUTE"]),
              f"core0 routes a /29 per pod: {list(core['STATIC_ROUTE'])}")

        # 3. SRv6
        for dd, fab in ((da, f), (os.path.join(d, "ft"), ft), (os.path.join(d, "mp"), fm)):
            usids = set()
            for sw in fab.switches.values():
                s6 = cfg_of(dd, sw.name)["SRV6"]
                check(s6["locator_block"] == "fcbb:bbbb::/32", "locator block")
                check(int(s6["usid"], 16) == sw.index + 1 and s6["usid"] not in usids, f"{sw.name} uSID")
                usids.add(s6["usid"])
                check(len(s6["next"]) == len({peer[1] for _, peer in sw.ports}), f"{sw.name}: one entry a neighbour")
                for q, peer in sw.ports:
                    if peer[0] == "host":
                        e = s6["next"][f"{0x8000 + peer[1]:x}"]
                        check(e == {"port": q, "mac": fab.hosts[peer[1]]["macs"][sw.plane]}, f"{sw.name} host uSID")
                    else:
                        o = fab.switches[peer[1]]
                        e = s6["next"][f"{o.usid:x}"]
                        check(next(pp for qq, pp in sw.ports if qq == e["port"])[1] == o.name and
                              e["mac"] == o.mac(g._port_index(o, peer[2])) or
                              e["port"] != q, f"{sw.name} -> {o.name} uSID entry {e}")

        # 3b. a source pins a path: uSIDs leaf0, spine<k>, leaf7, h31 walked through the SRV6 tables
        for k in range(4):
            usids = [f.switches["leaf0"].usid, f.switches[f"spine{k}"].usid, f.switches["leaf7"].usid, 0x8000 + 31]
            hops = srv6_walk(t, "leaf0", usids)
            check(hops == ["leaf0", f"spine{k}", "leaf7", "h31"], f"SRv6 path via spine{k}: {hops}")
        hops = srv6_walk(tm, "p3-leaf0", [fm.switches["p3-leaf0"].usid, fm.switches["p3-spine1"].usid,
                                          fm.switches["p3-leaf1"].usid, 0x8000 + 5])
        check(hops == ["p3-leaf0", "p3-spine1", "p3-leaf1", "h5"], f"SRv6 path on plane 3: {hops}")

        # 3c. --transport mrc --ev-mode srv6: IPv6 host addresses, each side's uSID template
        # derived from the SRV6 tables; every (plane, uplink) of it walks to the peer over
        # that uplink, and the server's back to the client.
        srv6_templates(c, d)

        # 4. multi-plane addresses
        ips, macs = set(), set()
        for h, host in enumerate(fm.hosts):
            for pl in range(8):
                ip = ipaddress.ip_address(host["ips"][pl])
                check(ip in ipaddress.ip_network(f"10.{16 * pl}.0.0/12"), f"h{h}:p{pl} {ip} in plane {pl}")
                leaf = fm.switches[host["leaf"][pl]]
                check(leaf.plane == pl, f"h{h}:p{pl} on plane {pl}'s leaf")
                check(ip in ipaddress.ip_network(g._leaf_prefix(fm, leaf)), f"{ip} in its leaf's subnet")
                ips.add(ip)
                macs.add(host["macs"][pl])
        check(len(ips) == 64 and len(macs) == 64, "per-port addresses unique")
        th0 = tm.hosts["h0"]
        check([hp.switch for hp in th0.ports] == [f"p{pl}-leaf0" for pl in range(8)], "port k on plane k")
        check(all(hp.gateway_mac == tm.switches[hp.switch].config["PORT"][hp.port]["mac"] for hp in th0.ports),
              "gateway = the leaf port's MAC")

        # 5. determinism
        r1 = g.render(c.fabric(radix=8, planes=2, profile="mrc-trim", traffic="shift"))
        r2 = g.render(c.fabric(radix=8, planes=2, profile="mrc-trim", traffic="shift"))
        check(r1 == r2, "same parameters, same files")
        outs = []
        for k in range(2):
            o = os.path.join(d, f"det{k}")
            r = c.lab("gen", "--out", o, "--radix", "8", "--planes", "2", "--leaves", "4", "--tiers", "2",
                      "--profile", "mrc-trim", "--traffic", "shift", "--speed-gbps", "100,400")
            check(r.returncode == 0, f"gen: {r.stderr}")
            files = {}
            for root, _, names in os.walk(o):
                for n in names:
                    with open(os.path.join(root, n), "rb") as fh:
                        files[os.path.relpath(os.path.join(root, n), o)] = fh.read()
            outs.append(files)
        check(outs[0] == outs[1] and len(outs[0]) == 1 + 2 * (4 + 1), f"byte-identical trees ({len(outs[0])} files)")
        r = c.lab("gen", "--out", os.path.join(d, "det0"), "--radix", "8")
        check(r.returncode == 2 and "not empty" in r.stderr, f"non-empty --out refused: {r.stderr}")
        # The shipped examples are what their description's command makes today.
        for ex in ("leaf-spine-2x2", "two-plane-2x2"):
            shipped = os.path.join(c.src, "config", "topologies", ex)
            with open(os.path.join(shipped, f"{ex}.json")) as fh:
                cmd = json.load(fh)["description"].split("generated by: sf-lab gen ", 1)[1].split()
            o = os.path.join(d, f"ex-{ex}")
            r = c.lab("gen", "--out", o, *cmd)
            check(r.returncode == 0, f"{ex}: {r.stderr}")
            for root, _, names in os.walk(shipped):
                for n in names:
                    rel = os.path.relpath(os.path.join(root, n), shipped)
                    with open(os.path.join(root, n), "rb") as a, open(os.path.join(o, rel), "rb") as b:
                        check(a.read() == b.read(), f"config/topologies/{ex}/{rel} differs from what "
                                                    f"'sf-lab gen {' '.join(cmd)}' writes: regenerate it")
            check(sum(len(n) for _, _, n in os.walk(o)) == sum(len(n) for _, _, n in os.walk(shipped)),
                  f"{ex}: file count")

        # 6. bad parameters
        bad_cases = [
            (["--radix", "1"], "--radix 1"),
            (["--tiers", "4"], "--tiers 4"),
            (["--radix", "8", "--hosts-per-leaf", "8"], "needs at least one uplink"),
            (["--radix", "8", "--hosts-per-leaf", "5", "--oversub", "2"], "2.5 uplinks"),
            (["--radix", "8", "--hosts-per-leaf", "6"], "exceed --radix 8"),
            (["--radix", "8", "--spines", "3"], "--spines 3"),
            (["--radix", "8", "--leaves", "9"], "exceed a spine's radix 8"),
            (["--radix", "8", "--hosts", "30"], "--hosts 30"),
            (["--planes", "17"], "--planes 17"),
            (["--planes", "2", "--host-kind", "pktio"], "a pktio host has one port"),
            (["--speed-gbps", "100,900"], "--speed-gbps 900"),
            (["--speed-gbps", "100,100,100"], "--speed-gbps: give 1 to 2 values"),
            (["--delay-ns", "-1"], "--delay-ns -1"),
            (["--oversub", "0.5"], "--oversub 0.5"),
            (["--radix", "8", "--leaves", "1", "--traffic", "shift"], "no flow crosses a spine"),
            (["--radix", "64", "--traffic", "shift", "--planes", "9"], "exceed the lab's 16384"),
            (["--traffic", "permutation", "--seed", "-1"], "--seed -1"),
            (["--traffic", "permutation", "--host-kind", "pktio"], "--traffic permutation with --host-kind pktio"),
            (["--profile", "nope"], "invalid choice"),
            (["--size", "lots"], "--size"),
            (["--tiers", "3", "--radix", "4", "--pods", "5"], "--pods 5"),
            (["--pods", "2"], "3 tiers only"),
            (["--name", "9x"], "--name '9x'"),
            (["--ev-mode", "srv6"], "--ev-mode srv6: MRC flows only"),
            (["--ev-mode", "srv6", "--transport", "mrc", "--tiers", "3", "--radix", "4"], "2 tiers only"),
            (["--ev-mode", "ecmp", "--transport", "mrc"], "--ev-mode 'ecmp'"),
        ]
        for args, want in bad_cases:
            o = os.path.join(d, "bad")
            r = c.lab("gen", "--out", o, *args)
            check(r.returncode == 2, f"gen {args}: exit {r.returncode} {r.stdout} {r.stderr}")
            check(want in r.stderr, f"gen {args}: want '{want}' in: {r.stderr.strip()}")
            check(not os.path.exists(o), f"gen {args}: wrote {o}")
            print(f"  refused {' '.join(args)}: {r.stderr.strip()}")

        # 7. hand-written multi-port hosts
        multiport_topologies(c, d)
    print("unit: ok")


def srv6_templates(c, d):
    tp = c.tp
    sys.path.insert(0, os.path.join(c.src, "tools", "lab"))
    import nic
    for planes in (1, 2):
        o = os.path.join(d, f"srv6-{planes}")
        fab, path = c.write(o, radix=4, leaves=2, hosts_per_leaf=2, planes=planes, traffic="pair", transport="mrc",
                            ev_mode="srv6", profile="mrc-trim")
        t = tp.load(path)
        (fl,) = t.flows
        check(fl.mrc == {"ev_mode": "srv6"} and fl.srv6, f"srv6 flow {fl}")
        v6 = [hp.ipv6 for h in t.hosts.values() for hp in h.ports]
        check(all(v6) and len(set(v6)) == len(v6), f"IPv6 addresses unique and on every port: {v6}")
        for side, (a, b) in enumerate(((fl.src, fl.dst), (fl.dst, fl.src))):
            tmpl = fl.srv6[side]
            check(tmpl["block"] == "fcbb:bbbb::/32" and len(tmpl["planes"]) == planes, f"template {tmpl}")
            for pl, e in enumerate(tmpl["planes"]):
                pre = f"p{pl}-" if planes > 1 else ""
                check(len(e["uplinks"]) == 2, f"plane {pl}: both spines are uplinks: {e}")
                for k, up in enumerate(e["uplinks"]):
                    usids = [int(u, 16) for u in e.get("before", []) + [up] + e["after"]]
                    hops = srv6_walk(t, t.hosts[a].ports[pl].switch, usids)
                    want = [t.hosts[a].ports[pl].switch, f"{pre}spine{k}", t.hosts[b].ports[pl].switch, b]
                    check(hops == want, f"{a} -> {b} plane {pl} uplink {k}: {hops}, want {want}")
        cfg = nic.build_nic_config(t, "rack0", lambda h, i=0: "net_memif", lambda f: 1)
        (w,) = [w for w in cfg["workloads"] if w["host"] == "h0"]
        check(w["mrc"] == {"ev_mode": "srv6", "srv6": fl.srv6[0]}, f"client workload mrc {w['mrc']}")
        cfg1 = nic.build_nic_config(t, "rack1", lambda h, i=0: "net_memif", lambda f: 1)
        (w1,) = [w for w in cfg1["workloads"] if w["host"] == "h3"]
        check(w1["mrc"]["srv6"] == fl.srv6[1], f"server workload mrc {w1['mrc']}")
        hp0 = cfg["hosts"]["h0"]["ports"][0] if planes > 1 else cfg["hosts"]["h0"]
        check(hp0["ipv6"] == t.hosts["h0"].ports[0].ipv6 and hp0["ip"] == t.hosts["h0"].ports[0].ip,
              f"nic.json dual-stack port {hp0}")
        print(f"  srv6 {planes} plane(s): h0 -> h3 {fl.srv6[0]['planes']}, back {fl.srv6[1]['planes']}")
    # Hand-written: a one-leaf pair goes leaf -> host; a port without IPv6, or an MRC srv6
    # flow on a fabric without SRV6 tables, is refused naming the node / flow.
    with open(path) as fh:
        raw = json.load(fh)
    raw["workloads"][0]["dst"] = "h1"
    one = os.path.join(o, "one-leaf.json")
    with open(one, "w") as fh:
        json.dump(raw, fh)
    t = tp.load(one)
    check(t.flows[0].srv6[0]["planes"][0] == {"uplinks": ["1"], "after": ["8001"]},
          f"same leaf: {t.flows[0].srv6[0]}")
    del raw["nodes"]["h1"]["port_ipv6s"]
    with open(one, "w") as fh:
        json.dump(raw, fh)
    try:
        tp.load(one)
        fail("a port without IPv6 accepted for ev_mode srv6")
    except tp.TopologyError as e:
        check("nodes.h1" in str(e) and "IPv6" in str(e), f"no IPv6: {e}")
        print(f"  refused: {e}")
    raw["nodes"]["h1"]["port_ipv6s"] = ["fd00::1", "fd00::9"]
    with open(one, "w") as fh:
        json.dump(raw, fh)
    try:
        tp.load(one)
        fail("a duplicate IPv6 address accepted")
    except tp.TopologyError as e:
        check("fd00::1 is also h0" in str(e), f"duplicate IPv6: {e}")
        print(f"  refused: {e}")


def srv6_walk(t, first, usids):
    """Follows a uN path (uSIDs, the first switch's own first) through the
    switches' SRV6 tables as sf-switch forwards it: a switch whose uSID is
    active shifts it off, then the next uSID picks the port; the frame goes
    to the peer on that port (its MAC must be the entry's). Returns the nodes
    visited (a host last), or fails."""
    peer = {}
    for link in t.links:
        for ep, other in ((link.a, link.b), (link.b, link.a)):
            if ep[1]:
                peer[ep] = other if other[1] else (other[0], link.host_port)
    node, path, left = first, [first], list(usids)
    while node in t.switches:
        s6 = t.switches[node].config["SRV6"]
        if left and left[0] == int(s6["usid"], 16):
            left.pop(0)
        check(left, f"path ends at switch {node}")
        e = s6["next"].get(f"{left[0]:x}")
        check(e is not None, f"{node}: no SRV6 entry for uSID {left[0]:x}")
        nxt = peer[(node, e["port"])]
        if nxt[0] in t.hosts:
            check(e["mac"] == t.hosts[nxt[0]].ports[nxt[1]].mac, f"{node}: entry MAC {e['mac']} is not the host's")
            left.pop(0)
            check(not left, f"uSIDs left at the host: {left}")
        else:
            check(e["mac"] == t.switches[nxt[0]].config["PORT"][nxt[1]]["mac"], f"{node}: entry MAC of {nxt}")
        node = nxt[0]
        path.append(node)
        check(len(path) < 10, f"SRv6 loop {path}")
    return path


def multiport_topologies(c, d):
    tp = c.tp
    sw_cfg = os.path.join(c.src, "config", "switch", "seed000-static-lossless.json")

    def topo(nodes, links, wl, name="t"):
        path = os.path.join(d, f"{name}.json")
        with open(path, "w") as fh:
            json.dump({"nodes": dict({"sw0": {"kind": "switch", "config": sw_cfg},
                                      "sw1": {"kind": "switch", "config": sw_cfg}}, **nodes),
                       "links": links, "workloads": wl}, fh)
        return path

    nodes = {"a": {"kind": "nic", "ports": 2}, "b": {"kind": "nic", "ports": 2, "process": "rx"}, "c": {"kind": "nic"}}
    links = [{"a": "a:p0", "b": "sw0:Ethernet0"}, {"a": "a:p1", "b": "sw1:Ethernet0"},
             {"a": "b:p0", "b": "sw0:Ethernet4"}, {"a": "b:p1", "b": "sw1:Ethernet4", "delay_ns": 250},
             {"a": "c", "b": "sw0:Ethernet8"}]
    wl = [{"name": "w1", "type": "background", "src": "a", "dst": "b", "size_bytes": 65536, "port": 2},
          {"name": "w0", "type": "background", "src": "a", "dst": "b", "size_bytes": 65536},
          {"name": "wc", "type": "background", "src": "c", "dst": "a", "size_bytes": 65536}]
    t = tp.load(topo(nodes, links, wl))
    a, b, cc = t.hosts["a"], t.hosts["b"], t.hosts["c"]
    check([hp.mac for hp in a.ports] == ["02:1b:00:00:00:01", "02:1b:01:00:00:01"], f"a MACs {a.ports}")
    check([hp.ip for hp in a.ports] == ["10.128.0.1", "10.129.0.1"], "a IPs")
    check((cc.mac, cc.ip) == ("02:1a:00:00:00:03", "10.0.0.3"), f"one-port default {cc.mac} {cc.ip}")
    check([(hp.switch, hp.port) for hp in b.ports] == [("sw0", "Ethernet4"), ("sw1", "Ethernet4")], "b links")
    check(t.flows[0].port == 2 and t.flows[1].port == 1, "workload ports")
    routes = tp.fdb_routes(t)
    check(routes["sw1"][b.ports[1].mac] == "Ethernet4" and b.ports[1].mac not in routes["sw0"],
          "FDB per host port, each plane its own")
    # explicit per-port addresses
    n2 = copy.deepcopy(nodes)
    n2["a"]["port_macs"] = ["02:00:00:00:0a:00", "02:00:00:00:0a:01"]
    n2["a"]["port_ips"] = ["192.168.0.1", "192.168.1.1"]
    t2 = tp.load(topo(n2, links, wl))
    check([hp.ip for hp in t2.hosts["a"].ports] == ["192.168.0.1", "192.168.1.1"], "explicit port_ips")
    errors = [
        (nodes, [dict(links[0], a="a")] + links[1:], wl, "links[0].a: 'a' has 2 ports: name one"),
        (nodes, [dict(links[0], a="a:p2")] + links[1:], wl, "links[0].a: host a has ports p0 .. p1, not 'p2'"),
        (nodes, [dict(links[4], a="c:p1")] + links[:4], wl, "'c' is a host (one port)"),
        (dict(nodes, a={"kind": "nic", "ports": 2, "mac": "02:00:00:00:00:01"}), links, wl,
         "nodes.a.mac: a host with \"ports\" gives its addresses per port"),
        (dict(nodes, a={"kind": "nic", "ports": 2, "port_ips": ["10.9.9.9"]}), links, wl,
         "nodes.a.port_ips: want an array of 2"),
        (dict(nodes, a={"kind": "nic", "ports": 65}), links, wl, "nodes.a.ports: 65 is out of range"),
        (nodes, links[:1] + links[2:], wl, "not connected: no link names a:p1"),
        (nodes, links, [dict(wl[2], port=2)], "workloads[0].port: 2: c has 1 port(s)"),
        (dict(nodes, b={"kind": "nic", "ports": 2, "port_ips": ["10.128.0.1", "10.0.0.9"]}), links, wl,
         "is also a:p0's"),
        (nodes, [dict(links[3], a="a:p1")] + links, wl, "a:p1 is used twice"),
    ]
    for nd, ln, w, want in errors:
        try:
            tp.load(topo(nd, ln, w, "bad"))
            fail(f"accepted: want '{want}'")
        except tp.TopologyError as e:
            check(want in str(e), f"want '{want}' in: {e}")
    # nic.json and the sf-sim plan
    import nic
    import sim
    vd = nic.vdev_indices(t, "nic")
    check(vd == {("a", 0): 0, ("a", 1): 1, ("c", 0): 2}, f"vdevs {vd}")
    cfg = nic.build_nic_config(t, "nic", lambda h, k=0: f"dev-{h.name}-{k}-{vd[(h.name, k)]}", lambda f: 1)
    ha = cfg["hosts"]["a"]
    check(set(ha) == {"ports", "mtu", "dscp", "pfc_enable", "cnp_dscp"}, f"multi-port host keys {sorted(ha)}")
    check(ha["ports"] == [{"devargs": "dev-a-0-0", "mac": "02:1b:00:00:00:01", "ip": "10.128.0.1", "speed_gbps": 100},
                          {"devargs": "dev-a-1-1", "mac": "02:1b:01:00:00:01", "ip": "10.129.0.1",
                           "speed_gbps": 100}], f"ports {ha['ports']}")
    check("devargs" in cfg["hosts"]["c"] and "ports" not in cfg["hosts"]["c"] and
          "gateway_mac" not in cfg["hosts"]["c"], "one-port host as before")
    wls = {w["name"]: w for w in cfg["workloads"]}
    check(wls["w1.client"]["port"] == 2 and wls["w0.client"]["port"] == 1 and "port" not in wls["wc.client"],
          f"workload ports {[(n, w.get('port')) for n, w in wls.items()]}")
    rx = nic.build_nic_config(t, "rx", lambda h, k=0: f"d{k}", lambda f: 1)
    check({w["name"]: w.get("port") for w in rx["workloads"]} == {"w1.server": 2, "w0.server": 1},
          f"server ports {rx['workloads']}")
    with tempfile.TemporaryDirectory() as out:
        lab = sim.SimLab(t, out, c.build, 1, 10, 0.01)
        lab.plan.write()
        plan = lab.sim_plan()
    ends = [(l["a"], l["delay_ns"]) for l in plan["links"]]
    check(ends[1] == ({"nic": "nic", "host": "a", "port": 2}, 1000) and
          ends[3] == ({"nic": "rx", "host": "b", "port": 2}, 250) and ends[4][0] == {"nic": "nic", "host": "c"},
          f"plan link ends {ends}")
    # a routed one-port host gets its gateway; a routed port without a MAC is refused
    with open(sw_cfg) as fh:
        routed = json.load(fh)
    routed["PORT"]["Ethernet0"]["mac"] = "02:5f:00:00:00:01"
    routed["NEIGH"] = {"Ethernet0|10.0.0.1": {"neigh": "02:1a:00:00:00:01"},
                       "Ethernet4|10.0.0.2": {"neigh": "02:1a:00:00:00:02"}}
    routed["STATIC_ROUTE"] = {"10.0.0.1/32": {"nexthop": "10.0.0.1", "ifname": "Ethernet0"},
                              "10.0.0.2/32": {"nexthop": "10.0.0.2", "ifname": "Ethernet4"}}
    rpath = os.path.join(d, "routed.json")
    with open(rpath, "w") as fh:
        json.dump(routed, fh)
    rt = {"nodes": {"r": {"kind": "switch", "config": rpath}, "x": {"kind": "nic"}, "y": {"kind": "nic"}},
          "links": [{"a": "x", "b": "r:Ethernet0"}, {"a": "y", "b": "r:Ethernet4"}],
          "workloads": [{"type": "background", "src": "x", "dst": "y", "size_bytes": 4096}]}
    p = os.path.join(d, "rt.json")
    with open(p, "w") as fh:
        json.dump(rt, fh)
    try:
        tp.load(p)
        fail("a routed port without a mac accepted")
    except tp.TopologyError as e:
        check("links[1]: r routes (its config has STATIC_ROUTE) but PORT.Ethernet4 has no mac" in str(e), str(e))
    routed["PORT"]["Ethernet4"]["mac"] = "02:5f:00:00:00:02"
    with open(rpath, "w") as fh:
        json.dump(routed, fh)
    tr = tp.load(p)
    cfg = nic.build_nic_config(tr, "nic", lambda h, k=0: "dev", lambda f: 1)
    check(cfg["hosts"]["x"]["gateway_mac"] == "02:5f:00:00:00:01", f"gateway_mac {cfg['hosts']['x']}")


# ---- check -----------------------------------------------------------------------------

def case_check(c):
    with tempfile.TemporaryDirectory() as d:
        runs = [
            (["--radix", "8"], ["switches   12 (8 with hosts, 4 without)", "hosts      32 (32 nic), 32 host port(s)",
                                "ports      96 switch ports configured, 96 linked",
                                "links      64 (32 host, 32 switch-switch; 64 at 100 Gb/s)", "planes     1",
                                "routing    12 routed switch(es) (STATIC_ROUTE, 8 ECMP group(s)), 12 SRv6 node(s)",
                                "hops       at most 3 switch(es)", "bisection  1,600 Gb/s"]),
            (["--radix", "6", "--oversub", "2"], ["switches   8 (6 with hosts, 2 without)", "bisection  600 Gb/s",
                                                  "of host ports per half"]),
            (["--radix", "6", "--planes", "8", "--leaves", "2", "--speed-gbps", "100,200"],
             ["switches   32 (16 with hosts, 16 without)", "hosts      8 (8 nic), 64 host port(s)", "planes     8",
              "links      96 (64 host, 32 switch-switch; 64 at 100 Gb/s, 32 at 200 Gb/s)",
              "routing    32 routed switch(es) (STATIC_ROUTE, 16 ECMP group(s)), 32 SRv6 node(s)",
              "hops       at most 3 switch(es)", "bisection  3,200 Gb/s"]),
            (["--tiers", "3", "--radix", "4"], ["switches   20 (8 with hosts, 12 without)",
                                                "hops       at most 5 switch(es)", "bisection  800 Gb/s"]),
        ]
        for k, (args, wants) in enumerate(runs):
            o = os.path.join(d, f"c{k}")
            r = c.lab("gen", "--out", o, *args)
            check(r.returncode == 0, f"gen {args}: {r.stderr}")
            r = c.lab("check", os.path.join(o, "fabric.json"))
            check(r.returncode == 0, f"check {args}: {r.stderr}")
            print(r.stdout)
            for w in wants:
                check(w in r.stdout, f"check {args}: want '{w}' in the output")
    print("check: ok")


# ---- parse -----------------------------------------------------------------------------

def sim_bin(c):
    b = os.path.join(c.build, "tools", "sf-sim", "sf-sim")
    if not os.access(b, os.X_OK):
        print(f"SKIP: {b} not built")
        sys.exit(SKIP)
    return b


def parse_with_sf_sim(c, configs, d):
    """An sf-sim plan of just these switch configs: sf-sim parses them as
    sf-switch does (load_switch_config) and builds the switches."""
    plan = {"seed": 1, "run_limit_s": 0.0001, "ts_period_us": 10,
            "switches": {f"s{i}": p for i, p in enumerate(configs)}, "links": []}
    pp = os.path.join(d, "plan.json")
    with open(pp, "w") as fh:
        json.dump(plan, fh)
    out = os.path.join(d, "simout")
    return subprocess.run([sim_bin(c), pp, "--out", out], capture_output=True, text=True, timeout=120)


def case_parse(c):
    sim_bin(c)
    with tempfile.TemporaryDirectory() as d:
        picks = []
        for k, (args, sws) in enumerate([
                (dict(radix=8), ["leaf0", "spine3"]),
                (dict(radix=8, profile="mrc-trim"), ["leaf0", "spine0"]),
                (dict(tiers=3, radix=4, profile="mrc-trim"), ["leaf7", "core3"]),
                (dict(tiers=3, radix=4), ["spine5", "core0"]),
                (dict(radix=8, planes=8, leaves=2, profile="mrc-trim", traffic="shift"), ["p7-leaf1", "p7-spine3"])]):
            o = os.path.join(d, f"f{k}")
            c.write(o, **args)
            picks.append([os.path.join(o, "switch", f"{s}.json") for s in sws])
        cfgs = [x for pick in picks for x in pick]  # one sf-sim (its EAL start is most of the time)
        r = parse_with_sf_sim(c, cfgs, d)
        check(r.returncode in (0, 1) and "error" not in r.stderr.lower(),
              f"sf-sim refused {cfgs}: exit {r.returncode}\n{r.stderr}")
        print(f"  accepted {', '.join(os.path.relpath(x, d) for x in cfgs)}")
        bad = cfg_of(os.path.join(d, "f0"), "leaf0")
        bad["NEIGH"].pop("Ethernet16|172.16.0.1")
        bp = os.path.join(d, "bad.json")
        with open(bp, "w") as fh:
            json.dump(bad, fh)
        r = parse_with_sf_sim(c, [bp], d)
        check(r.returncode == 2 and "STATIC_ROUTE" in r.stderr and "no NEIGH entry for 172.16.0.1" in r.stderr,
              f"a route without NEIGH: exit {r.returncode} {r.stderr}")
        print(f"  refused: {r.stderr.strip()}")
    print("parse: ok")


# ---- sim -------------------------------------------------------------------------------

def spine_tx(out, sw):
    with open(os.path.join(out, f"switch-{sw}-report.json")) as fh:
        rep = json.load(fh)
    return sum(p.get("tx_bytes", 0) for p in rep["ports"]), rep


def case_sim(c):
    sim_bin(c)
    with tempfile.TemporaryDirectory() as d:
        for planes in (1, 2):
            o = os.path.join(d, f"ls{planes}")
            f, path = c.write(o, radix=4, leaves=2, hosts_per_leaf=2, planes=planes, traffic="shift", qps=4,
                              size_bytes=1 << 20, duration_s=1)
            out = os.path.join(d, f"out{planes}")
            r = c.lab("run", "--sim", path, "--out", out, "--build", c.build, "--speed-gbps", "100")
            if r.returncode == 2 and ("gateway_mac" in r.stderr or "ports" in r.stderr):
                print(f"SKIP: sf-nic does not take gateway_mac / ports yet (h-multiport):\n{r.stderr}")
                sys.exit(SKIP)
            check(r.returncode == 0, f"{planes} plane(s): exit {r.returncode}\n{r.stdout}\n{r.stderr}")
            res = json.load(open(os.path.join(out, "results.json")))
            check(len(res["flows"]) == 4 * planes, f"{len(res['flows'])} flows")
            for fl in res["flows"]:  # 1 MiB on each of 4 QPs
                check(fl["complete"] and fl["bytes_received"] == 4 << 20, f"flow {fl['name']} incomplete: {fl}")
            for pl in range(planes):
                pre = f"p{pl}-" if planes > 1 else ""
                tx = {s: spine_tx(out, f"{pre}{s}")[0] for s in ("spine0", "spine1")}
                total = sum(tx.values())
                print(f"  plane {pl}: spine tx bytes {tx}")
                check(total > 0 and min(tx.values()) > 0.1 * total,
                      f"plane {pl}: ECMP spreads over both spines: {tx}")
                for leaf in ("leaf0", "leaf1"):
                    _, rep = spine_tx(out, f"{pre}{leaf}")
                    routed = sum(p.get("routed", 0) for p in rep["ports"])
                    check(routed > 0, f"{pre}{leaf} routed nothing: {rep['ports'][0]}")
            if planes == 2:
                # sf-lab run --sim-threads N (sf-sim's partitioned engine): 1 and 3 threads, the same
                # run (every flow, every switch report; the summary but its cache-dependent mbufs).
                got = []
                for n in (1, 3):
                    ot = os.path.join(d, f"out{planes}-t{n}")
                    r = c.lab("run", "--sim", path, "--out", ot, "--build", c.build, "--speed-gbps", "100",
                              "--sim-threads", str(n))
                    check(r.returncode == 0, f"--sim-threads {n}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
                    res_t = json.load(open(os.path.join(ot, "results.json")))
                    check(all(fl["complete"] for fl in res_t["flows"]), f"--sim-threads {n}: {res_t['flows']}")
                    reps = {f: open(os.path.join(ot, f)).read() for f in sorted(os.listdir(ot))
                            if f.startswith("switch-") and f.endswith("-report.json")}
                    got.append((res_t["flows"], reps))
                check(got[0] == got[1], "--sim-threads 1 and 3 differ")
        # 3 tiers, 2 pods: h0 -> h7 over leaf, spine, core, spine, leaf; racks 1 and 2 have no
        # workload (their processes are not simulated, their hosts' links left out of the plan).
        o = os.path.join(d, "ft")
        f, path = c.write(o, tiers=3, radix=4, pods=2, traffic="pair", qps=4, duration_s=1)
        out = os.path.join(d, "out-ft")
        r = c.lab("run", "--sim", path, "--out", out, "--build", c.build)
        check(r.returncode == 0, f"3 tiers: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        (fl,) = json.load(open(os.path.join(out, "results.json")))["flows"]
        check(fl["complete"] and fl["bytes_received"] == 4 << 20, f"3 tiers: {fl}")
        plan = json.load(open(os.path.join(out, "run", "sim-plan.json")))
        check(sorted(plan["nics"]) == ["rack0", "rack3"] and len(plan["links"]) == 24 - 4,
              f"idle racks left out: {sorted(plan['nics'])}, {len(plan['links'])} links")
        cores = {s: spine_tx(out, s)[0] for s in ("core0", "core1", "core2", "core3")}
        print(f"  3 tiers: core tx bytes {cores}")
        check(sum(1 for v in cores.values() if v) >= 2, f"h0's 4 QPs cross more than one core: {cores}")
        # MRC (--transport mrc) on 2 planes of 100G: one flow h0 -> h3, one QP
        # spraying over both of h0's ports and, by its EVs (UDP source ports),
        # over both spines of each plane; hardware timers in virtual time.
        o = os.path.join(d, "mrc")
        f, path = c.write(o, radix=4, leaves=2, hosts_per_leaf=2, planes=2, traffic="pair", transport="mrc",
                          profile="mrc-trim", size_bytes=4 << 20, duration_s=1)
        out = os.path.join(d, "out-mrc")
        r = c.lab("run", "--sim", path, "--out", out, "--build", c.build, "--speed-gbps", "100")
        check(r.returncode == 0, f"mrc: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        (fl,) = json.load(open(os.path.join(out, "results.json")))["flows"]
        check(fl["complete"] and fl["bytes_received"] == 4 << 20, f"mrc: {fl}")
        nic_rep = json.load(open(os.path.join(out, "run", "nic-rack0.json")))
        check(nic_rep["workloads"][0]["transport"] == "mrc" and nic_rep["workloads"][0]["mrc"]["rto_ns"] == 100_000,
              f"mrc workload in virtual time: {nic_rep['workloads'][0]}")
        reps = [json.load(open(os.path.join(out, fn))) for fn in sorted(os.listdir(out))
                if fn.startswith("nic-") and fn.endswith("-report.json")]
        (m,) = [h["mrc"] for rep in reps for h in rep["hosts"] if h["name"] == "h0"]
        print(f"  mrc: {fl['goodput_gbps']:.1f} Gb/s, per plane {m['plane_packets']}, retransmits {m['retransmits']}")
        check(m["tx_data_packets"] == 1024 and m["retransmits"] == 0, f"mrc h0: {m}")
        check(min(m["plane_packets"]) >= 400, f"mrc: both planes carry the flow: {m['plane_packets']}")
        check(fl["goodput_gbps"] > 150, f"mrc: {fl['goodput_gbps']:.1f} Gb/s over 2 x 100G")
        for pl in (0, 1):
            tx = {s: spine_tx(out, f"p{pl}-{s}")[0] for s in ("spine0", "spine1")}
            check(min(tx.values()) > 0, f"mrc plane {pl}: one QP's EVs cross both spines: {tx}")
        png = os.path.join(out, "mrc_paths.png")
        check(os.path.exists(png) and os.path.getsize(png) > 10_000, "mrc: no mrc_paths.png in the report")
        check(not os.path.exists(os.path.join(os.path.join(d, "out1"), "mrc_paths.png")), "mrc_paths.png without MRC")
        # The same MRC flow in SRv6 mode (--ev-mode srv6): every frame source-routed over the
        # uSID path of its EV (plane i mod 2, spine (i / 2) mod 2), the switches doing uN. Each
        # spine's frames toward leaf1 are exactly h0's packets on the EVs that name it; the SACKs
        # (control plane 0) come back over both of plane 0's spines.
        o = os.path.join(d, "mrc-srv6")
        f, path = c.write(o, radix=4, leaves=2, hosts_per_leaf=2, planes=2, traffic="pair", transport="mrc",
                          ev_mode="srv6", profile="mrc-trim", size_bytes=4 << 20, duration_s=1)
        out = os.path.join(d, "out-mrc-srv6")
        r = c.lab("run", "--sim", path, "--out", out, "--build", c.build, "--speed-gbps", "100")
        check(r.returncode == 0, f"mrc srv6: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        (fl,) = json.load(open(os.path.join(out, "results.json")))["flows"]
        check(fl["complete"] and fl["bytes_received"] == 4 << 20, f"mrc srv6: {fl}")
        reps = [json.load(open(os.path.join(out, fn))) for fn in sorted(os.listdir(out))
                if fn.startswith("nic-") and fn.endswith("-report.json")]
        (m,) = [h["mrc"] for rep in reps for h in rep["hosts"] if h["name"] == "h0"]
        sent, rtx = m["evs"]["sent"], m["evs"]["retransmitted"]
        for pl in (0, 1):
            for k in (0, 1):
                want = sum(sent[i] + rtx[i] for i in range(len(sent)) if i % 2 == pl and (i // 2) % 2 == k)
                _, rep = spine_tx(out, f"p{pl}-spine{k}")
                ports = {q["name"]: q["tx_packets"] for q in rep["ports"]}
                print(f"  mrc srv6 p{pl}-spine{k}: {ports['Ethernet4']} toward leaf1, h0's EVs naming it {want}, "
                      f"{ports['Ethernet0']} toward leaf0")
                check(ports["Ethernet4"] == want > 200, f"p{pl}-spine{k}: {ports} against {want} on its EVs")
                check((ports["Ethernet0"] > 0) == (pl == 0), f"p{pl}-spine{k}: SACKs on the control plane: {ports}")
        print(f"  mrc srv6: {fl['goodput_gbps']:.1f} Gb/s")
    print("sim: ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("case", choices=("unit", "check", "parse", "sim"))
    a = ap.parse_args()
    c = Ctx(os.path.abspath(a.source), os.path.abspath(a.build))
    {"unit": case_unit, "check": case_check, "parse": case_parse, "sim": case_sim}[a.case](c)


if __name__ == "__main__":
    main()
