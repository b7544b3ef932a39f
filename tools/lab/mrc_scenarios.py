"""The MRC scenarios of seed 002 (docs/scenarios.md "MRC (seed 002)"):
config/scenarios/mrc-*.json and their fabrics under config/scenarios/mrc-fabric/,
made here so that the shipped files and the scaled-down copies the test runs
(tests/tools/mrc_scenarios_test.py) come from one description.

  python3 tools/lab/mrc_scenarios.py                 # rewrite config/scenarios/mrc-* (full size)
  python3 tools/lab/mrc_scenarios.py --check         # exit 1 if the shipped files differ
  python3 tools/lab/mrc_scenarios.py --scale test --out DIR   # the test's copies

Every pair differs in one setting, the stack:
  rc:  RoCE RC + DCQCN (dcqcn-nvidia) on the lossless profile (PFC on priority 3,
       seed-000 static pools): what a RoCE fabric deploys;
  mrc: MRC + NSCC (hosts' `mrc_cc: nscc`, QPs with a 30 us reordering
       tolerance: OOO_TOLERANCE_NS) on the lossy trimming profile
       (`sf-lab gen --profile mrc-trim`): seed 002's deployment.
Fabric, traffic, sizes and events are the same on both sides. Scenario b's
message size is a second axis (two pairs). Scenario a also ships MRC with a
fixed window (`mrc_cc: none`, mrc-a-{victim,solo}-mrc-fixed.json): what MRC
does without congestion control.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KIB, MIB = 1 << 10, 1 << 20
PROFILE = {"rc": "lossless", "mrc": "mrc-trim"}


TRIM_DYNAMIC_TH = "-6"

# Every MRC QP's reordering tolerance (MrcQpAttr ooo_tolerance_ns; the lab's
# virtual-time default is 30 us too since issue 15, tools/lab/sim.py
# MRC_HW_TIMERS; verbs' own default is 15 us; the scenarios pin it so that
# they do not move with the lab's default). With NSCC the
# window grows to its 1.5 BDP cap (ECN marks from Kmin 120 KB, ~10 us of queue
# per hop, rarely fire when sprayed load spreads over the queues), paths then
# differ by more than 15 us of queueing (RTT up to 37 us on an 8 us base in b),
# a SACK hole that is only reordering is taken as a loss, and every "loss"
# retires its EV: b's 16 KiB pair resent 2,501 packets for ~45 real losses
# (448 of 512 EVs retired, 2,025 refused by the floor), e's 27,571. 30 us (still
# "tens of microseconds") covers the spread: b 41-42, e 50 (docs/scenarios.md).
OOO_TOLERANCE_NS = 30_000


def shallow_trim(cfg):
    """gen's mrc-trim profile trims a data queue at the dynamic limit
    alpha = 2^-1 of the free egress pool (~12 MiB of 24 MiB free): a queue of
    ~1 ms at 100G, past MRC's 100 us RTO, so an incast meets spurious
    timeouts long before a trim. Seed 002's switches trim a shallow queue:
    alpha = 2^-6 (~380 KiB, ~30 us at 100G with the pool free)."""
    cfg["BUFFER_PROFILE"]["egress_trim_profile"]["dynamic_th"] = TRIM_DYNAMIC_TH


def _fabric(name, scale, **kw):
    p = gen.Params(name=name, **kw)
    return gen.plan(p)


def fabrics(scale, g_hosts=0):
    """{fabric name: gen.Params kwargs} (the profile is added per stack)."""
    f = {
        # a: 2 leaves x 8 hosts, 2 spines (4 parallel links from each leaf): a 7->1 incast and a victim
        "a": dict(radix=16, leaves=2, hosts_per_leaf=8, spines=2),
        # b: 2 leaves x 2 hosts, 2 spines: every host writes across the spines
        "b": dict(radix=4, leaves=2, hosts_per_leaf=2, spines=2),
        # c, d, f: 2 leaves x 4 hosts, 2 spines (2 parallel links from each leaf): an all-to-all
        "c": dict(radix=8, leaves=2, hosts_per_leaf=4, spines=2),
        # e: 8 planes, each 2 leaves x 2 hosts and one spine
        "e": dict(radix=4, leaves=2, hosts_per_leaf=2, spines=1, planes=8),
    }
    # g: 8 planes of leaf-spines; seed 002's size is --g-hosts 1024 (radix 64: 512 switches,
    # 19 MB of configs: made on demand, not shipped); shipped 32 hosts, the test 16 (radix 8)
    n = g_hosts or (32 if scale == "full" else 16)
    f["g"] = dict(radix=64 if n > 64 else 8, hosts=n, planes=8, mmu_bytes=4 * MIB)
    return f


def _hosts(fab):
    return [h["name"] for h in fab.hosts]


def _flow(name, src, dst, size, stack, msg=None, mrc=None, **extra):
    w = {"name": name, "type": extra.pop("type", "background"), "src": src, "dst": dst, "size_bytes": size,
         "dscp": 26}
    if msg:
        w["message_bytes"] = msg
    if stack == "mrc":
        w["transport"] = "mrc"
        w["mrc"] = dict({"ooo_tolerance_ns": OOO_TOLERANCE_NS}, **(mrc or {}))
    w.update(extra)
    return w


def _topology(name, desc, fab, fab_dir, stack, workloads, events=(), sim=None, duration_s=1, mrc_cc="nscc"):
    """A topology on a generated fabric: gen's nodes and links, our workloads;
    switch configs in mrc-fabric/<fab_dir>/. The MRC side's hosts run `mrc_cc`
    (nscc; none for the fixed-window variant of a)."""
    t = gen.topology(fab)
    for n, node in t["nodes"].items():
        if node["kind"] == "switch":
            node["config"] = f"mrc-fabric/{fab_dir}/{n}.json"
        else:
            node["cc"] = "dcqcn-nvidia" if stack == "rc" else "none"
            if stack == "mrc":  # the trimming switches mark trimmed frames DSCP 48 (SWITCH_TRIMMING.dscp_value)
                node["mrc_cc"] = mrc_cc
                node["trim_dscp"] = 48
    used = set()
    for w in workloads:
        used.update(x for x in (w.get("src"), w.get("dst"), w.get("receiver")) if x)
        used.update(w.get("senders", []))
    out = {"name": name, "description": desc, "duration_s": duration_s, "drain_s": 1}
    out["sim"] = dict(sim or {})
    out["nodes"] = t["nodes"]
    out["links"] = t["links"]
    out["workloads"] = workloads
    if events:
        out["events"] = list(events)
    return out


def build(scale="full", g_hosts=0):
    """{path relative to config/scenarios: text}."""
    test = scale == "test"
    files = {}
    fabs = {}
    for fname, kw in fabrics(scale, g_hosts).items():
        for stack in ("rc", "mrc"):
            prof = PROFILE[stack]
            fab = _fabric(f"mrc-{fname}", scale, profile=prof, **kw)
            fab_dir = f"{fname}-{'lossless' if stack == 'rc' else 'trim'}"
            fabs[(fname, stack)] = (fab, fab_dir)
            for sw in fab.switches.values():
                cfg = gen.switch_config(fab, sw)
                if stack == "mrc":
                    shallow_trim(cfg)
                files[f"mrc-fabric/{fab_dir}/{sw.name}.json"] = json.dumps(cfg, indent=2) + "\n"

    def emit(name, desc, fname, stack, workloads, **kw):
        fab, fab_dir = fabs[(fname, stack)]
        t = _topology(name, desc, fab, fab_dir, stack, workloads, **kw)
        files[f"{name}.json"] = json.dumps(t, indent=2) + "\n"

    for stack in ("rc", "mrc"):
        other = "MRC + NSCC on the lossy trimming profile" if stack == "mrc" else "RoCE RC + DCQCN + PFC (lossless profile)"
        # ---- a: 7 -> 1 incast + victim --------------------------------------------------------------
        fab, _ = fabs[("a", stack)]
        h = _hosts(fab)  # h0..h7 on leaf0, h8..h15 on leaf1
        # full size in the test too: the victim must meet the PFC spreading (from ~1.25 ms;
        # a 2 MiB victim was done before it and kept 0.94 of its solo goodput)
        inc = 4 * MIB
        vic = 4 * MIB
        vstart = 1  # ms (whole ms: the lab's start_ms); the incast is then in full swing
        mrc_only = {"transport": "mrc", "mrc": {"ooo_tolerance_ns": OOO_TOLERANCE_NS}} if stack == "mrc" else {}
        victim = [_flow("victim", h[0], h[9], vic, stack, type="victim", start_ms=vstart),
                  dict({"name": "probe", "type": "probe", "src": h[0], "dst": h[9], "test": "write_lat",
                        "size_bytes": 64, "interval_us": 5, "start_ms": vstart},
                       **mrc_only)]
        incast = dict({"name": "incast", "type": "incast", "senders": h[1:8], "receiver": h[8],
                       "size_bytes": inc, "dscp": 26}, **mrc_only)
        sim_a = {"speed_gbps": 100, "ts_period_us": 5, "run_limit_s": 0.02}
        emit(f"mrc-a-victim-{stack}",
             f"Seed 002 scenario a ({other}): a 7->1 incast (h1..h7 on leaf0 -> h8 on leaf1, {inc >> 20} MiB each) "
             f"and a victim flow h0 -> h9 ({vic >> 20} MiB from {vstart} ms, with a write_lat probe h0 -> h9) "
             "sharing leaf0's uplinks, the spines and leaf1's downlinks; h9's port is idle. Pair: "
             "mrc-a-victim-rc.json / mrc-a-victim-mrc.json; solo runs: mrc-a-solo-*.json.",
             "a", stack, [incast] + victim, sim=sim_a)
        emit(f"mrc-a-solo-{stack}",
             f"Seed 002 scenario a, the victim alone ({other}): mrc-a-victim-{stack}.json without the incast.",
             "a", stack, victim, sim=sim_a)
        if stack == "mrc":  # the extra variant: MRC without congestion control (a fixed window of one BDP)
            fixed = "MRC with a fixed window (mrc_cc none) on the lossy trimming profile"
            emit("mrc-a-victim-mrc-fixed",
                 f"Seed 002 scenario a ({fixed}): mrc-a-victim-mrc.json without NSCC: what MRC's victim gets "
                 "when nothing follows the queue. Solo run: mrc-a-solo-mrc-fixed.json.",
                 "a", stack, [incast] + victim, sim=sim_a, mrc_cc="none")
            emit("mrc-a-solo-mrc-fixed",
                 f"Seed 002 scenario a, the victim alone ({fixed}): mrc-a-victim-mrc-fixed.json without the incast.",
                 "a", stack, victim, sim=sim_a, mrc_cc="none")
        # ---- b: 0.1 % loss on every fabric link -----------------------------------------------------
        fab, _ = fabs[("b", stack)]
        h = _hosts(fab)
        loss = [{"kind": "loss", "link": f"leaf{l}:{p}", "rate": 0.001}
                for l in range(2) for p in ("Ethernet8", "Ethernet12")]
        size_b = 4 * MIB if test else 16 * MIB
        for tag, msg in (("small", 16 * KIB), ("large", 4 * MIB)):
            wl = [_flow(f"shift-{h[i]}-{h[(i + 2) % 4]}", h[i], h[(i + 2) % 4],
                        max(size_b, msg), stack, msg=msg) for i in range(4)]
            emit(f"mrc-b-loss-{tag}-{stack}",
                 f"Seed 002 scenario b ({other}): 0.1 % random loss on each of the 4 leaf-spine links; every host "
                 f"writes {max(size_b, msg) >> 20} MiB across the spines in {msg >> 10} KiB messages. "
                 f"Pair: mrc-b-loss-{tag}-rc.json / mrc-b-loss-{tag}-mrc.json.",
                 "b", stack, wl, events=loss, sim={"speed_gbps": 100, "ts_period_us": 10, "run_limit_s": 0.1})
        # ---- c, d, f: all-to-all on fabric c ------------------------------------------------------------
        fab, _ = fabs[("c", stack)]
        h = _hosts(fab)  # h0..h3 leaf0, h4..h7 leaf1; leaf uplinks Ethernet16..28
        a2a_size = 256 * KIB if test else 1 * MIB
        a2a = [_flow(f"a2a-{s}-{d}", s, d, a2a_size, stack) for s in h for d in h if s != d]
        sim_c = {"speed_gbps": 100, "ts_period_us": 2, "run_limit_s": 0.002 if test else 0.02}
        t_ev = 0.05 if test else 0.2
        emit(f"mrc-c-linkdown-{stack}",
             f"Seed 002 scenario c ({other}): an all-to-all (8 hosts, {a2a_size >> 10} KiB per pair) while the "
             f"leaf0-spine0 link leaf0:Ethernet16 goes down at {t_ev} ms (one of leaf0's 4 uplinks). "
             "Pair: mrc-c-linkdown-rc.json / mrc-c-linkdown-mrc.json.",
             "c", stack, a2a, events=[{"kind": "link_down", "link": "leaf0:Ethernet16", "at_ms": t_ev}], sim=sim_c)
        emit(f"mrc-d-blackhole-{stack}",
             f"Seed 002 scenario d ({other}): the all-to-all of scenario c while spine0 silently drops every frame "
             f"from {t_ev} ms on (blackhole, links up, nobody told): half of the fabric's paths. "
             "Pair: mrc-d-blackhole-rc.json / mrc-d-blackhole-mrc.json.",
             "c", stack, a2a, events=[{"kind": "blackhole", "switch": "spine0", "at_ms": t_ev}], sim=sim_c)
        f_until = 1.0 if test else 3.0
        emit(f"mrc-f-flap-{stack}",
             f"Seed 002 scenario f ({other}): the all-to-all of scenario c while leaf0:Ethernet16 (leaf0-spine0) "
             f"flaps from {t_ev} ms: down 10 us of every 50 us. "
             "Pair: mrc-f-flap-rc.json / mrc-f-flap-mrc.json.",
             "c", stack, a2a, events=[{"kind": "flap", "link": "leaf0:Ethernet16", "from_ms": t_ev,
                                       "until_ms": f_until, "period_ms": 0.05, "down_ms": 0.01}], sim=sim_c)
        # ---- e: a whole plane fails -------------------------------------------------------------------
        fab, _ = fabs[("e", stack)]
        h = _hosts(fab)
        per = 8 * MIB if test else 64 * MIB
        wl = []
        for i in range(4):
            s, d = h[i], h[(i + 2) % 4]
            if stack == "mrc":
                wl.append(_flow(f"shift-{s}-{d}", s, d, per, stack, qps=4, mrc={"window_bytes": 512 * KIB}))
            else:
                wl += [_flow(f"shift-{s}-{d}-p{p}", s, d, per // 8, stack, port=p + 1) for p in range(8)]
        t_e = 0.05 if test else 0.2
        emit(f"mrc-e-plane-{stack}",
             f"Seed 002 scenario e ({other}): 8 planes, every host writing {per >> 20} MiB to the host on the other "
             f"leaf (MRC: one flow of 4 QPs spraying over the 8 planes; RC: one flow per plane), while plane 3 "
             f"fails at {t_e} ms (every host's port 3 down: the hosts are told). "
             "Pair: mrc-e-plane-rc.json / mrc-e-plane-mrc.json.",
             "e", stack, wl, events=[{"kind": "plane_down", "plane": 3, "at_ms": t_e}],
             sim={"speed_gbps": 100, "ts_period_us": 5, "run_limit_s": 0.002 if test else 0.02})
        # ---- g: permutation on the 8-plane fabric -----------------------------------------------------
        fab, _ = fabs[("g", stack)]
        h = _hosts(fab)
        perm = gen.permutation(len(h), 1)
        size_g = (4 if test else 8) * MIB
        wl = []
        for i, s in enumerate(h):
            d = h[perm[i]]
            if stack == "mrc":
                wl.append(_flow(f"perm-{s}-{d}", s, d, size_g, stack, qps=2, mrc={"window_bytes": 512 * KIB}))
            else:
                wl += [_flow(f"perm-{s}-{d}-p{p}", s, d, size_g // 8, stack, port=p + 1) for p in range(8)]
        emit(f"mrc-g-perm-{stack}",
             f"Seed 002 scenario g ({other}): {len(h)} hosts x 8 planes, a random permutation (seed 1: host i -> "
             f"perm(i)), {size_g >> 20} MiB per host (MRC: one flow of 2 QPs spraying over the planes; RC: one flow "
             "per plane, each ECMP-hashed onto one path). Pair: mrc-g-perm-rc.json / mrc-g-perm-mrc.json.",
             "g", stack, wl, sim={"speed_gbps": 100, "ts_period_us": 10, "run_limit_s": 0.05})
    return files


def write(out_dir, files):
    for rel, text in sorted(files.items()):
        path = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "config", "scenarios"))
    ap.add_argument("--scale", choices=("full", "test"), default="full")
    ap.add_argument("--check", action="store_true", help="compare with --out instead of writing")
    ap.add_argument("--g-hosts", type=int, default=0, metavar="N",
                    help="scenario g's hosts (1024: seed 002's fabric, radix 64; with --only mrc-g)")
    ap.add_argument("--only", default="", help="comma-separated name prefixes (e.g. mrc-a,mrc-fabric/a-)")
    a = ap.parse_args(argv)
    files = build(a.scale, a.g_hosts)
    if a.only:
        pre = a.only.split(",")
        files = {k: v for k, v in files.items() if any(k.startswith(p) for p in pre)}
    if a.check:
        bad = [rel for rel, text in sorted(files.items())
               if not os.path.exists(os.path.join(a.out, rel)) or open(os.path.join(a.out, rel)).read() != text]
        for rel in bad:
            print(f"differs: {rel}")
        return 1 if bad else 0
    write(a.out, files)
    print(f"{len(files)} files -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
