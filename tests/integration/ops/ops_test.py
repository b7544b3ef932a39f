#!/usr/bin/python3
"""Operations tests (docs/ops.md): sf-cli against real sf-switch and sf-nic
processes, their Prometheus endpoint checked by promtool, and a real
Prometheus server scraping sf-switch during an incast.

Usage: ops_test.py --build BUILD_DIR --source SRC_DIR CASE
CASE: cli_switch, cli_errors, cli_nic, metrics_format, prometheus_incast.
Exit 0 = pass, 77 = skipped (meson), else fail.

Same rules as the switch tests (harness.py): --no-pci, own --file-prefix,
--backoff, only PIDs started here are signalled (Prometheus too), temp dirs
removed, bounded polls. sf-cli's `clear counters` baseline goes to the
test's temp dir (SF_CLI_CACHE); process discovery is tested on a --run-dir
of links to our own processes' runtime dirs, never on other tests' processes.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "switch"))
import harness  # noqa: E402
from harness import check, port_by_name, wait_until  # noqa: E402
import switch_test as st  # noqa: E402  (the incast_ecn setup: pcaps, WRED, thresholds)

SRC = None  # --source
SERVER_MAC, CLIENT_MAC = "02:4e:00:00:00:01", "02:4e:00:00:00:02"
SERVER_IP, CLIENT_IP = "10.7.0.1", "10.7.0.2"
GEN_DST, GEN_SRC = st.GEN_DST, st.GEN_SRC


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sf_cli_path():
    return os.path.join(SRC, "tools", "sf-cli", "sf-cli")


def cli(h, *words, prefix=None, run_dir=None, ok=True, timeout_s=20):
    """Runs sf-cli; returns (rc, stdout, stderr). ok=True: exit 0 required."""
    cmd = ["/usr/bin/python3", sf_cli_path()]
    if prefix:
        cmd += ["--prefix", prefix]
    if run_dir:
        cmd += ["--run-dir", run_dir]
    cmd += [str(w) for w in words]
    env = dict(os.environ, SF_CLI_CACHE=h.path("sf-cli-cache"))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env)
    if ok:
        check(p.returncode == 0, f"sf-cli {' '.join(map(str, words))} exit {p.returncode}: {p.stderr}{p.stdout[-1500:]}")
    return p.returncode, p.stdout, p.stderr


def cli_json(h, *words, prefix=None):
    _, out, _ = cli(h, "--json", *words, prefix=prefix)
    return json.loads(out)


def rows_of(text):
    """A table's rows (after the dashes line) split on runs of 2+ spaces."""
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        if ln.startswith("---"):
            return [re.split(r"\s{2,}", x.strip()) for x in lines[i + 1:] if x.strip()]
    return []


def header_of(text):
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        if ln.startswith("---"):
            return re.split(r"\s{2,}", lines[i - 1].strip())
    return []


def memif_ports(h, names, speeds=None):
    return st.memif_ports(h, names, speeds)


def http_get(url, timeout_s=5):
    with urllib.request.urlopen(url, timeout=timeout_s) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()


def promtool_check(text, what):
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, f"promtool check metrics rejects {what}: {p.stdout}{p.stderr}")


def parse_metrics(text):
    """{(name, frozenset(labels)): value}, plus the families' TYPE lines."""
    samples, types = {}, {}
    for ln in text.splitlines():
        if ln.startswith("# TYPE "):
            _, _, name, kind = ln.split()
            types[name] = kind
            continue
        if not ln or ln.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', ln)
        check(m is not None, f"bad sample line: {ln!r}")
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        samples[(m.group(1), labels)] = float(m.group(4))
    return samples, types


def sample(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


# ---- switch with traffic ----------------------------------------------------------

def lab_switch(h, extra_app=()):
    """sf-switch (telemetry on) with 3 memif ports, a static route, a WRED/ECN
    queue, a PFC watchdog and a static FDB entry; sf-pktio gen -> Ethernet0,
    sink on Ethernet4 (GEN_DST is static there; GEN_SRC is learned on
    Ethernet0). Returns (sw, cfg, gen, sink) once traffic has been seen."""
    names = ["Ethernet0", "Ethernet4", "Ethernet8"]
    cfg = {
        "PORT": memif_ports(h, names),
        "FDB": {GEN_DST: {"port": "Ethernet4"}},
        "WRED_PROFILE": {"ECN_Q3": {"ecn": "ecn_all", "wred_green_enable": "false",
                                    "green_min_threshold": "20000", "green_max_threshold": "120000",
                                    "green_drop_probability": "20"}},
        "QUEUE": {"Ethernet8|3": {"wred_profile": "ECN_Q3"}},
        "PORT_QOS_MAP": {"Ethernet8": {"pfc_enable": "3"}},
        "PFC_WD": {"Ethernet8": {"action": "drop", "detection_time": "150", "restoration_time": "300"}},
        "STATIC_ROUTE": {"10.9.0.0/24": {"nexthop": "10.0.0.8,10.0.0.9", "ifname": "Ethernet8,Ethernet4"}},
        "NEIGH": {"Ethernet8|10.0.0.8": {"neigh": "02:00:00:00:00:88"},
                  "Ethernet4|10.0.0.9": {"neigh": "02:00:00:00:00:99"}},
    }
    sw = h.start_switch(cfg, telemetry=True, app=list(extra_app))
    sink = h.pktio("sink", "sink", [st.client(cfg, "Ethernet4")], ["--duration", 60, "--link-wait-s", 15], ready=True)
    gen = h.pktio("gen", "gen", [st.client(cfg, "Ethernet0")],
                  ["--size", 1000, "--rate-gbps", 0.1, "--duration", 60, "--link-wait-s", 15])
    wait_until(lambda: harness_port(sw, "Ethernet4")["tx_packets"] > 0, 20, "traffic through the switch",
               poll_s=0.1, procs=[sw, gen])
    return sw, cfg, gen, sink


def harness_port(sw, name):
    return st.telemetry(sw.prefix, f"/softfabric/switch/port,{name}")


def stop_traffic(h, gen, sink):
    gen.stop(15)
    sink.stop(15)


# ---- cases ------------------------------------------------------------------------

def cli_switch(h):
    """Every sf-switch show command against a running switch with traffic:
    the table's header and rows and --json, cross-checked with the switch's
    telemetry; clear counters makes later shows count from then; --watch
    --count 2 refreshes twice; show qp is refused on a switch."""
    sw, cfg, gen, sink = lab_switch(h)
    pre = sw.prefix

    # show interfaces counters: a row per port, rates over --period.
    _, out, _ = cli(h, "show", "interfaces", "counters", "--period", 0.5, prefix=pre)
    print(out)
    check(header_of(out)[:4] == ["IFACE", "STATE", "RX_OK", "RX_BPS"], f"header: {header_of(out)}")
    rows = {r[0]: r for r in rows_of(out)}
    check(set(rows) == {"Ethernet0", "Ethernet4", "Ethernet8"}, f"rows: {list(rows)}")
    check(rows["Ethernet0"][1] == "U" and int(rows["Ethernet0"][2].replace(",", "")) > 0, f"Ethernet0: {rows}")
    j = {r["iface"]: r for r in cli_json(h, "show", "interfaces", "counters", "--period", 1, prefix=pre)}
    # gen sends 0.1 Gb/s of 1000 B frames into Ethernet0: 12.5 MB/s, measured over 1 s on a loaded VM.
    check(1e6 < j["Ethernet0"]["rx_bps"] < 25e6, f"Ethernet0 rx rate {j['Ethernet0']['rx_bps']} B/s, want ~12.5e6")
    check(abs(j["Ethernet0"]["rx_util"] - j["Ethernet0"]["rx_bps"] * 8 / 10e9 * 100) < 1e-6, "RX_UTIL of 10 Gb/s")
    check(j["Ethernet4"]["tx_ok"] > 0 and j["Ethernet8"]["tx_ok"] == 0, f"json: {j}")
    # errors / drops tables
    _, out, _ = cli(h, "show", "interfaces", "counters", "errors", prefix=pre)
    check(header_of(out) == ["IFACE", "STATE", "RX_ERR", "RX_CTRL_ERR", "RX_DRP", "TX_DRP"], out)
    d = {r["iface"]: r for r in cli_json(h, "show", "interfaces", "counters", "drops", prefix=pre)}
    check("link_down" in d["Ethernet0"] and "wred" in d["Ethernet0"], f"drops json lacks causes: {d['Ethernet0']}")

    # show queue counters PORT: 8 rows, queue 0 carries the traffic (DSCP 0).
    t = harness_port(sw, "Ethernet4")
    _, out, _ = cli(h, "show", "queue", "counters", "Ethernet4", prefix=pre)
    print(out)
    rows = rows_of(out)
    check(header_of(out) == ["Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes",
                             "EcnMarked/pkts"], out)
    check(len(rows) == 8 and rows[0][:2] == ["Ethernet4", "UC0"], f"rows: {rows}")
    q0 = int(rows[0][2].replace(",", ""))
    check(q0 >= t["queue_tx_packets"][0] > 0, f"UC0 {q0} < telemetry's earlier {t['queue_tx_packets'][0]}")
    qj = cli_json(h, "show", "queue", "counters", "Ethernet4", prefix=pre)
    check(len(qj) == 8 and qj[0]["bytes"] >= 1000 * qj[0]["packets"] > 0, f"queue json: {qj[0]}")
    _, out, _ = cli(h, "show", "queue", "counters", prefix=pre)
    check(len(rows_of(out)) == 24, "show queue counters without PORT: want 3 x 8 rows")
    rc, _, err = cli(h, "show", "queue", "counters", "Ethernet99", prefix=pre, ok=False)
    check(rc == 1 and "Ethernet99" in err and "Ethernet0" in err, f"bad port: rc {rc} {err}")

    # watermarks
    _, out, _ = cli(h, "show", "queue", "watermark", prefix=pre)
    check(out.startswith("Egress shared pool occupancy per unicast queue:") and
          header_of(out) == ["Port"] + [f"UC{i}" for i in range(8)] and len(rows_of(out)) == 3, out)
    wj = cli_json(h, "show", "queue", "watermark", prefix=pre)
    check([r["port"] for r in wj] == ["Ethernet0", "Ethernet4", "Ethernet8"] and
          all(len(r["watermark_bytes"]) == 8 for r in wj), f"{wj}")
    _, out, _ = cli(h, "show", "priority-group", "watermark", prefix=pre)
    check("Ingress shared pool occupancy per PG:" in out and "Ingress headroom in use per PG (now):" in out, out)
    pj = cli_json(h, "show", "priority-group", "watermark", prefix=pre)
    check(len(pj) == 3 and len(pj[0]["shared_watermark_bytes"]) == 8, f"{pj}")

    # PFC counters: Rx and Tx tables, a row per port, 8 priorities.
    _, out, _ = cli(h, "show", "pfc", "counters", prefix=pre)
    check("Port Rx" in out and "Port Tx" in out and out.count("Ethernet8") == 2, out)
    fj = cli_json(h, "show", "pfc", "counters", prefix=pre)
    check(len(fj) == 3 and all(len(r["rx"]) == 8 for r in fj), f"{fj}")

    # PFC watchdog: guarded queue 3 of Ethernet8 (pfc_enable 3).
    _, out, _ = cli(h, "show", "pfcwd", "config", prefix=pre)
    print(out)
    check(rows_of(out) == [["Ethernet8", "drop", "150", "300", "3"]], f"pfcwd config: {rows_of(out)}")
    _, out, _ = cli(h, "show", "pfcwd", "stats", prefix=pre)
    check(rows_of(out) == [["Ethernet8:3", "operational", "0/0", "0/0", "N/A/0"]], f"pfcwd stats: {out}")
    check(cli_json(h, "show", "pfcwd", "stats", prefix=pre)[0]["status"] == "operational", "pfcwd json")

    # buffer pools, ECN, MAC, routes, credit
    _, out, _ = cli(h, "show", "buffer", "pool", prefix=pre)
    check(out.startswith("Shared buffer: 33,554,432 bytes") and len(rows_of(out)) >= 1, out)
    bj = cli_json(h, "show", "buffer", "pool", prefix=pre)
    check(bj["total_bytes"] == 32 << 20 and bj["pools"], f"{bj}")
    _, out, _ = cli(h, "show", "ecn", prefix=pre)
    print(out)
    check(rows_of(out) == [["Ethernet8", "3", "on", "off", "20,000", "120,000", "20", "0"]], f"ecn: {rows_of(out)}")
    mj = cli_json(h, "show", "mac", prefix=pre)
    want = {(GEN_DST.upper(), "Ethernet4", "Static"), (GEN_SRC.upper(), "Ethernet0", "Dynamic")}
    check({(r["mac"], r["port"], r["type"]) for r in mj} == want, f"mac: {mj}")
    _, out, _ = cli(h, "show", "mac", prefix=pre)
    check(out.rstrip().endswith("Total number of entries 2") and header_of(out) ==
          ["No.", "Vlan", "MacAddress", "Port", "Type"], out)
    _, out, _ = cli(h, "show", "ip", "route", prefix=pre)
    print(out)
    check("S>* 10.9.0.0/24 via 02:00:00:00:00:88, Ethernet8" in out and
          re.search(r"^\s+\* +via 02:00:00:00:00:99, Ethernet4$", out, re.M), f"route: {out}")
    rj = cli_json(h, "show", "ip", "route", prefix=pre)
    check(rj == [{"prefix": "10.9.0.0/24", "nexthops": [{"port": "Ethernet8", "neighbor_mac": "02:00:00:00:00:88"},
                                                        {"port": "Ethernet4", "neighbor_mac": "02:00:00:00:00:99"}]}],
          f"route json: {rj}")
    _, out, _ = cli(h, "show", "credit", prefix=pre)
    check(out.strip() == "No CREDIT_FC port." and cli_json(h, "show", "credit", prefix=pre) == [], out)
    rc, _, err = cli(h, "show", "qp", prefix=pre, ok=False)
    check(rc == 1 and "sf-nic command" in err, f"show qp on a switch: rc {rc} {err}")

    # clear counters: later shows count from the baseline (the process still counts from start).
    before = harness_port(sw, "Ethernet0")["rx_packets"]
    _, out, _ = cli(h, "clear", "counters", prefix=pre)
    check(out.startswith("Cleared counters"), out)
    after = {r["iface"]: r for r in cli_json(h, "show", "interfaces", "counters", "--period", 0.2, prefix=pre)}
    raw = harness_port(sw, "Ethernet0")["rx_packets"]
    check(after["Ethernet0"]["rx_ok"] <= raw - before, f"after clear: rx_ok {after['Ethernet0']['rx_ok']}, "
          f"raw {raw}, {before} before the clear")
    qa = cli_json(h, "show", "queue", "counters", "Ethernet4", prefix=pre)[0]["packets"]
    check(qa < q0, f"queue counter after clear {qa} not below {q0}")

    # --watch --count 2: two refreshes (a title line each); --json --watch: one JSON line each.
    _, out, _ = cli(h, "-w", "--count", 2, "--period", 0.2, "show", "queue", "watermark", prefix=pre)
    check(out.count("Every 0.2s: sf-cli show queue watermark") == 2, out)
    _, out, _ = cli(h, "-w", "--count", 2, "--period", 0.2, "--json", "show", "mac", prefix=pre)
    lines = [json.loads(x) for x in out.splitlines()]
    check(len(lines) == 2 and all(len(x) == 2 for x in lines), out)
    stop_traffic(h, gen, sink)
    h.stop_switch(sw)


class FakeTelemetry:
    """A DPDK telemetry v2 socket that is not ours (no /softfabric commands)."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.bind(path)
        self.s.listen(4)
        self.s.settimeout(0.2)
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            try:
                c, _ = self.s.accept()
            except OSError:
                continue
            with c:
                c.send(json.dumps({"version": "DPDK 22.11", "pid": os.getpid(), "max_output_len": 16384}).encode())
                try:
                    while True:
                        cmd = c.recv(1024).decode()
                        if not cmd:
                            break
                        c.send(json.dumps({cmd.split(",")[0]: ["/", "/info", "/ethdev/list"]}).encode())
                except OSError:
                    pass

    def close(self):
        self.stop = True
        self.t.join(5)
        self.s.close()


def cli_errors(h):
    """Clear errors: no process, a wrong prefix, several processes and none
    chosen, a telemetry socket that is not ours, a bad command line; and
    the only process found without --prefix."""
    names = ["Ethernet0", "Ethernet4"]
    cfg = {"PORT": memif_ports(h, names)}
    sw = h.start_switch(cfg, telemetry=True)
    sw2 = h.start_switch(cfg | {"PORT": memif_ports(h, ["Ethernet12", "Ethernet16"])}, telemetry=True,
                         name="sf-switch-2")
    runs = h.path("run")
    os.makedirs(runs)
    # An empty run dir: nothing is running.
    rc, _, err = cli(h, "show", "mac", run_dir=runs, ok=False)
    check(rc == 1 and "no sf-switch or sf-nic is running" in err, f"empty run dir: rc {rc} {err}")
    # A wrong prefix.
    rc, _, err = cli(h, "show", "mac", prefix="sf-cli-no-such-prefix", ok=False)
    check(rc == 1 and "no DPDK process with file prefix 'sf-cli-no-such-prefix'" in err, f"bad prefix: {err}")
    # One process under the run dir: found without --prefix.
    os.symlink(os.path.join("/var/run/dpdk", sw.prefix), os.path.join(runs, sw.prefix))
    _, out, _ = cli(h, "show", "buffer", "pool", run_dir=runs)
    check(out.startswith("Shared buffer:"), out)
    # A stale runtime dir (a process that is gone) is skipped.
    os.makedirs(os.path.join(runs, "gone"))
    socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(os.path.join(runs, "gone", "dpdk_telemetry.v2"))
    cli(h, "show", "buffer", "pool", run_dir=runs)
    # Two: refused, naming both; --prefix picks one.
    os.symlink(os.path.join("/var/run/dpdk", sw2.prefix), os.path.join(runs, sw2.prefix))
    rc, _, err = cli(h, "show", "mac", run_dir=runs, ok=False)
    check(rc == 1 and "2 processes are running" in err and sw.prefix in err and sw2.prefix in err and
          "--prefix" in err, f"two processes: rc {rc} {err}")
    _, out, _ = cli(h, "--json", "show", "interfaces", "counters", "--period", 0.1, run_dir=runs, prefix=sw2.prefix)
    check([r["iface"] for r in json.loads(out)] == ["Ethernet12", "Ethernet16"], out)
    # A DPDK telemetry socket that is not sf-switch / sf-nic.
    os.makedirs(os.path.join(runs, "other"))
    fake = FakeTelemetry(os.path.join(runs, "other", "dpdk_telemetry.v2"))
    try:
        rc, _, err = cli(h, "show", "mac", run_dir=runs, prefix="other", ok=False)
        check(rc == 1 and "not sf-switch or sf-nic" in err, f"foreign socket: rc {rc} {err}")
    finally:
        fake.close()
    # Bad command lines: exit 2 before connecting.
    for words, want in ((["show", "nothing"], "unknown command 'show nothing'"),
                        (["show", "mac", "extra"], "takes no argument"),
                        (["--count", "2", "show", "mac"], "--count applies to --watch only"),
                        ([], "no command given")):
        rc, _, err = cli(h, *words, ok=False)
        check(rc == 2 and want in err, f"sf-cli {words}: rc {rc} {err}")
    # The manual.
    _, out, _ = cli(h, "--help")
    for sect in ("NAME", "SYNOPSIS", "COMMANDS (sf-switch)", "COMMANDS (sf-nic)", "OPTIONS", "FILES", "EXIT STATUS"):
        check(f"\n{sect}" in "\n" + out, f"--help lacks {sect}")
    h.stop_switch(sw)
    h.stop_switch(sw2)


def start_nic(h, name, devargs, mac, ip, args, server_addr=None):
    """sf-nic (perftest mode, telemetry on) on `devargs`; waits for its ready file."""
    prefix = h.prefix("nic")
    ready = h.path(f"{prefix}.ready")
    b = os.path.join(h.build, "nic", "app", "sf-nic")
    cmd = [b] + harness.EAL_COMMON + [f"--file-prefix={prefix}", "--", "write_bw", "--port", devargs, "--mac", mac,
                                      "--ip", ip, "--backoff", "--ready-file", ready, "--log-level", "warn"]
    cmd += [str(a) for a in args] + ([server_addr] if server_addr else [])
    p = h.start(name, cmd)
    p.prefix = prefix
    wait_until(lambda: os.path.exists(ready), 30, f"{name} ready file", procs=[p])
    return p


def nic_pair(h, seconds, client_extra=()):
    sock = h.path("link.sock")
    oob = free_port()
    common = ["-s", 65536, "-D", seconds, "--speed", 10, "--rate-limit", 0.2, "--cc", "dcqcn", "-p", oob]
    srv = start_nic(h, "server", f"net_memif0,role=server,socket={sock}", SERVER_MAC, SERVER_IP, common)
    cl = start_nic(h, "client", f"net_memif0,role=client,socket={sock}", CLIENT_MAC, CLIENT_IP,
                   common + list(client_extra), server_addr="127.0.0.1")
    return srv, cl


def stop_pair(srv, cl):
    """SIGINT to the server, then (its report written) to the client, as a
    user ends a -D run early: both exit 0 with a report of what they did."""
    srv.popen.send_signal(signal.SIGINT)
    rc = srv.wait(60)
    check(rc == 0, f"server exit {rc} after SIGINT: {srv.out()[-1500:]}\n{srv.err_tail()}")
    cl.popen.send_signal(signal.SIGINT)
    rc = cl.wait(60)
    check(rc == 0, f"client exit {rc} after SIGINT: {cl.out()[-1500:]}\n{cl.err_tail()}")


def cli_nic(h):
    """sf-nic pair (write_bw -D, DCQCN, paced at 0.2 Gb/s) over memif: show
    qp on both sides (state RTS, PSNs moving, peer QPNs crossing, CC dcqcn at
    the paced rate), show interfaces counters (per host) and drops, --json,
    clear counters; switch-only commands refused."""
    # -D 60 at most: the pair is stopped by SIGINT once the checks are done (stop_pair).
    srv, cl = nic_pair(h, 60)
    qps = {}

    def connected():
        for side, p in (("server", srv), ("client", cl)):
            rc, out, _ = cli(h, "--json", "show", "qp", prefix=p.prefix, ok=False)
            if rc != 0 or not json.loads(out):
                return False
            qps[side] = json.loads(out)
        return qps["client"][0]["tx_data_packets"] > 0

    wait_until(connected, 40, "QPs connected and sending", poll_s=0.3, procs=[srv, cl])
    c, s = qps["client"][0], qps["server"][0]
    print("client qp:", c)
    print("server qp:", s)
    check(c["state"] == "RTS" and s["state"] == "RTS", f"states {c['state']} {s['state']}")
    check(c["dest_qpn"] == s["qpn"] and s["dest_qpn"] == c["qpn"], "peer QPNs do not cross")
    check(c["cc"] == "dcqcn" and "cc_stage" in c and 0 < c["rate_bps"] <= 0.2e9 + 1, f"client CC: {c}")
    check(c["host"] == "h0" and c["tx_data_packets"] >= c["retransmitted_packets"], f"client: {c}")
    # The window in use never exceeds --max-unacked-psns (default 128).
    check(0 <= c["unacked_psns"] <= 128 and s["unacked_psns"] == 0, f"unacked PSNs {c['unacked_psns']}")
    _, out, _ = cli(h, "show", "qp", prefix=cl.prefix)
    print(out)
    check(header_of(out)[:5] == ["Host", "QPN", "Peer QPN", "State", "SQ PSN"], out)
    row = rows_of(out)[0]
    check(row[0] == "h0" and row[1] == str(c["qpn"]) and row[3] == "RTS" and row[12] == "dcqcn", f"row: {row}")
    # PSNs move while it sends.
    c2 = cli_json(h, "show", "qp", prefix=cl.prefix)[0]
    check(c2["tx_data_packets"] > c["tx_data_packets"], f"tx_data_packets {c['tx_data_packets']} -> "
          f"{c2['tx_data_packets']}")
    # Per host counters.
    _, out, _ = cli(h, "show", "interfaces", "counters", "--period", 0.5, prefix=cl.prefix)
    print(out)
    check(header_of(out) == ["HOST", "STATE", "RX_OK", "RX_BPS", "RX_DRP", "TX_OK", "TX_BPS", "RX_PFC", "TX_PFC"], out)
    ij = cli_json(h, "show", "interfaces", "counters", "--period", 0.5, prefix=cl.prefix)
    # Paced at 0.2 Gb/s = 25 MB/s (less on a loaded VM: the window, retransmissions).
    check(ij[0]["iface"] == "h0" and ij[0]["tx_ok"] > 0 and 0 < ij[0]["tx_bps"] < 30e6, f"client rate: {ij}")
    dj = cli_json(h, "show", "interfaces", "counters", "drops", prefix=srv.prefix)
    check(dj[0]["iface"] == "h0" and "malformed" in dj[0], f"drops: {dj}")
    # clear counters: the QP's counters restart, its PSNs do not. (Compared with
    # a read just before the clear: the pair keeps sending between the reads.)
    c_pre = cli_json(h, "show", "qp", prefix=cl.prefix)[0]
    cli(h, "clear", "counters", prefix=cl.prefix)
    c3 = cli_json(h, "show", "qp", prefix=cl.prefix)[0]
    check(c3["tx_data_packets"] < c_pre["tx_data_packets"] and (c3["next_psn"] - c_pre["next_psn"]) % (1 << 24) < (1 << 23),
          f"before clear: {c_pre}\nafter clear: {c3}")
    rc, _, err = cli(h, "show", "mac", prefix=cl.prefix, ok=False)
    check(rc == 1 and "sf-switch command" in err, err)
    stop_pair(srv, cl)


def metrics_format(h):
    """/metrics of sf-switch (traffic flowing) and sf-nic (a connected pair)
    passes promtool's exposition-format check; families have units and the
    counters match telemetry; other paths 404; a busy --metrics-port is
    refused before EAL (exit 2 naming the address)."""
    mport = free_port()
    sw, cfg, gen, sink = lab_switch(h, extra_app=["--metrics-port", mport])
    status, ctype, text = http_get(f"http://127.0.0.1:{mport}/metrics")
    check(status == 200 and ctype.startswith("text/plain; version=0.0.4"), f"{status} {ctype}")
    promtool_check(text, "sf-switch's /metrics")
    samples, types = parse_metrics(text)
    for fam, kind in (("softfabric_port_rx_bytes_total", "counter"), ("softfabric_port_dropped_packets_total", "counter"),
                      ("softfabric_queue_ecn_marked_total", "counter"), ("softfabric_queue_watermark_bytes", "gauge"),
                      ("softfabric_pg_watermark_bytes", "gauge"), ("softfabric_pfc_rx_pause_frames_total", "counter"),
                      ("softfabric_pfc_tx_pause_seconds_total", "counter"), ("softfabric_pfcwd_storms_total", "counter"),
                      ("softfabric_buffer_pool_watermark_bytes", "gauge"), ("softfabric_fdb_entries", "gauge")):
        check(types.get(fam) == kind, f"{fam}: TYPE {types.get(fam)}, want {kind}")
    check(sample(samples, "softfabric_port_dropped_packets_total", port="Ethernet0", cause="wred") == 0,
          "no drops{cause=wred} sample")
    check(sample(samples, "softfabric_pfcwd_storms_total", port="Ethernet8", queue="3") == 0, "no pfcwd sample")
    check(sample(samples, "softfabric_pfcwd_storms_total", port="Ethernet0", queue="3") is None,
          "pfcwd sample on a port without a watchdog")
    t = harness_port(sw, "Ethernet4")
    _, _, text2 = http_get(f"http://127.0.0.1:{mport}/metrics")
    s2, _ = parse_metrics(text2)
    tx = sample(s2, "softfabric_port_tx_packets_total", port="Ethernet4")
    check(tx >= t["tx_packets"] > 0, f"metrics tx {tx} below telemetry's earlier {t['tx_packets']}")
    try:
        http_get(f"http://127.0.0.1:{mport}/")
        check(False, "GET / should be 404")
    except urllib.error.HTTPError as e:
        check(e.code == 404, f"GET / answered {e.code}")
    # A busy port: a second switch refuses to start.
    p = subprocess.run([h.sf_switch, "--no-pci", "--file-prefix", h.prefix("busy"), "--", "--config", sw.config,
                        "--metrics-port", str(mport)], capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and f"--metrics-port: cannot listen on 127.0.0.1:{mport}: Address already in use"
          in p.stderr, f"busy port: exit {p.returncode}: {p.stderr[-800:]}")
    stop_traffic(h, gen, sink)
    h.stop_switch(sw)

    # sf-nic: per QP once connected.
    nport = free_port()
    srv, cl = nic_pair(h, 60, client_extra=["--metrics-port", nport])
    got = {}

    def qp_metrics():
        _, _, txt = http_get(f"http://127.0.0.1:{nport}/metrics")
        got["text"] = txt
        s, _ = parse_metrics(txt)
        return any(k[0] == "softfabric_qp_tx_data_packets_total" and v > 0 for k, v in s.items())

    wait_until(qp_metrics, 40, "sf-nic QP metrics", poll_s=0.3, procs=[srv, cl])
    promtool_check(got["text"], "sf-nic's /metrics")
    s, types = parse_metrics(got["text"])
    for fam in ("softfabric_qp_rate_bytes_per_second", "softfabric_qp_retransmitted_packets_total",
                "softfabric_qp_unacked_psns", "softfabric_qp_dcqcn_alpha", "softfabric_nic_tx_bytes_total",
                "softfabric_nic_rx_dropped_packets_total"):
        check(fam in types, f"sf-nic metrics lack {fam}")
    rate = [v for k, v in s.items() if k[0] == "softfabric_qp_rate_bytes_per_second"]
    check(len(rate) == 1 and 0 < rate[0] <= 0.2e9 / 8 + 1, f"QP rate {rate}, want <= 0.2 Gb/s in bytes")
    stop_pair(srv, cl)


def prometheus_incast(h):
    """A real Prometheus (Debian's, started here on its own port with a
    generated config, 1 s scrapes, its TSDB in the temp dir) scrapes
    sf-switch during the incast of switch_test.py's incast_ecn: the PromQL
    query softfabric_queue_ecn_marked_total returns a non-zero series for
    Ethernet8 queue 3 (the WRED queue) equal to the switch's final count,
    and zero for queue 1; rate(...[5s]) was non-zero during the incast."""
    prom = "/usr/bin/prometheus"
    if not os.access(prom, os.X_OK):
        print("SKIP: /usr/bin/prometheus not installed (apt-get install prometheus)")
        return harness.SKIP
    mport, pport = free_port(), free_port()
    pcfg = h.path("prometheus.yml")
    with open(pcfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: sf-switch\n    static_configs:\n"
                f"      - targets: ['127.0.0.1:{mport}']\n")
    tsdb = h.path("tsdb")
    pp = h.start("prometheus", [prom, f"--config.file={pcfg}", f"--storage.tsdb.path={tsdb}",
                                f"--web.listen-address=127.0.0.1:{pport}", "--log.level=warn"])
    api = f"http://127.0.0.1:{pport}/api/v1"

    def query(q):
        url = f"{api}/query?" + urllib.parse.urlencode({"query": q})
        with urllib.request.urlopen(url, timeout=5) as r:
            j = json.load(r)
        check(j["status"] == "success", f"query {q}: {j}")
        return {(m["metric"].get("port"), m["metric"].get("queue")): float(m["value"][1]) for m in j["data"]["result"]}

    try:
        names = ["Ethernet0", "Ethernet4", "Ethernet8"]
        cfg = {
            "DEVICE_METADATA": {"localhost": {"mmu_size": "4MiB"}},
            "PORT": memif_ports(h, names, speeds={"Ethernet0": 2, "Ethernet4": 2, "Ethernet8": 1}),
            "WRED_PROFILE": {"ECN_Q3": {"ecn": "ecn_all", "wred_green_enable": "false",
                                        "green_min_threshold": str(st.KMIN), "green_max_threshold": str(st.KMAX),
                                        "green_drop_probability": "20"}},
            "QUEUE": {"Ethernet8|3": {"wred_profile": "ECN_Q3"}},
            "FDB": {st.RECEIVER: {"port": "Ethernet8"}},
        }
        a_pcap, b_pcap, out_pcap = h.path("a.pcap"), h.path("b.pcap"), h.path("out.pcap")
        st.ecn_pcap(a_pcap, st.SENDER_A, 26, 64, not_ect_every=4)
        st.ecn_pcap(b_pcap, st.SENDER_B, 10, 64)
        sw = h.start_switch(cfg, app=["--metrics-port", mport], telemetry=True)

        def target_up():
            try:
                with urllib.request.urlopen(f"{api}/targets", timeout=5) as r:
                    t = json.load(r)["data"]["activeTargets"]
            except OSError:
                return False
            return len(t) == 1 and t[0]["health"] == "up"

        wait_until(target_up, 40, "Prometheus scraping sf-switch (target up)", poll_s=0.5, procs=[pp, sw])
        cap = h.pktio("capture", "fwd", [st.client(cfg, "Ethernet8"), f"net_pcap1,tx_pcap={out_pcap}"],
                      ["--idle-exit-ms", 1500, "--duration", 40, "--link-wait-s", 15], ready=True)
        senders = []
        # A longer incast than incast_ecn's (60000 frames, about 0.7 s at 2 Gb/s per
        # sender): several 1 s scrapes see the counter rise.
        for name, port, pc in (("sender-a", "Ethernet0", a_pcap), ("sender-b", "Ethernet4", b_pcap)):
            senders.append(h.pktio(name, "fwd", [f"net_pcap0,rx_pcap={pc},infinite_rx=1", st.client(cfg, port)],
                                   ["--rate-gbps", 2, "--count", 60000, "--duration", 30, "--link-wait-s", 15],
                                   nice=5))
        rate_seen = {}

        def rate_nonzero():
            r = query('rate(softfabric_queue_ecn_marked_total{port="Ethernet8"}[5s])')
            rate_seen.update({k: v for k, v in r.items() if v > 0})
            return ("Ethernet8", "3") in rate_seen or all(p.poll() is not None for p in senders)

        wait_until(rate_nonzero, 40, "rate() of ECN marks", poll_s=0.5, procs=[pp, sw])
        for p in senders:
            h.finish(p, 40)
        h.finish(cap, 40)
        # The switch still runs: its counters are final; wait until a scrape has them.
        final = harness_port(sw, "Ethernet8")["queue_ecn_marked"]
        got = {}

        def scraped_final():
            got.update(query('softfabric_queue_ecn_marked_total{port="Ethernet8"}'))
            return got.get(("Ethernet8", "3")) == final[3]

        wait_until(scraped_final, 20, f"Prometheus to show the final mark count {final[3]}", poll_s=0.5,
                   procs=[pp, sw])
        print(f"PromQL: softfabric_queue_ecn_marked_total Ethernet8 q3 = {got[('Ethernet8', '3')]:.0f}, "
              f"q1 = {got.get(('Ethernet8', '1'))}; rate()[5s] seen {rate_seen}")
        check(final[3] > 0, "no ECN marks on the WRED queue")
        check(got.get(("Ethernet8", "1")) == 0, f"marks on queue 1: {got}")
        check(set(got) == {("Ethernet8", str(q)) for q in range(8)}, f"series: {sorted(got)}")
        check(rate_seen.get(("Ethernet8", "3"), 0) > 0 and set(rate_seen) == {("Ethernet8", "3")},
              f"rate() over 5 s never non-zero for Ethernet8 queue 3 during the incast: {rate_seen}")
        rep = h.stop_switch(sw)
        check(port_by_name(rep, "Ethernet8")["queues"][3]["ecn_marked"] == final[3], "final report differs")
    finally:
        if pp.poll() is None:
            pp.popen.send_signal(signal.SIGTERM)
            try:
                pp.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pp.popen.kill()
                pp.popen.wait()


CASES = {
    "cli_switch": cli_switch,
    "cli_errors": cli_errors,
    "cli_nic": cli_nic,
    "metrics_format": metrics_format,
    "prometheus_incast": prometheus_incast,
}


if __name__ == "__main__":
    if "--source" in sys.argv:
        i = sys.argv.index("--source")
        SRC = os.path.abspath(sys.argv[i + 1])
        del sys.argv[i:i + 2]
    else:
        SRC = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    sys.exit(harness.run_main(CASES))
