// sf-nic: the softfabric RoCEv2 NIC on DPDK ports, running perftest-style
// workloads. Startup (STYLE G14): arguments -> config -> EAL -> mempool ->
// ports -> NIC node -> workloads (verbs objects) -> out-of-band exchange ->
// QPs to RTS -> sync -> poll loop; SIGINT/SIGTERM stop it; perftest's report
// on stdout, JSON report and time series on request.
#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <unistd.h>
#include <vector>

#include "common/app/app_args.h"
#include "common/app/metrics_server.h"
#include "common/config/config_error.h"
#include "common/dpdk/clock.h"
#include "common/dpdk/eal.h"
#include "common/dpdk/mempool.h"
#include "common/dpdk/poll_loop.h"
#include "common/dpdk/port.h"
#include "nic/app/nic_ops.h"
#include "nic/app/oob_exchange.h"
#include "nic/app/oob_session.h"
#include "nic/app/perftest_engine.h"
#include "nic/app/sample_schedule.h"
#include "nic/app/sf_nic_config.h"
#include "common/dpdk/flow_isolate.h"
#include "nic/app/early_report.h"
#include "nic/app/sf_nic_report.h"
#include "nic/app/thread_sched.h"
#include "nic/app/tsc_calibration.h"
#include "nic/host/nic_node.h"

namespace po = boost::program_options;
using namespace sf;
using namespace sf::nic::app;

namespace {

std::atomic<bool> g_stop{false};
// --max-unacked-psns bound: far inside the 2^23 PSN space's half window.
constexpr uint32_t kMaxUnackedPsns = 65536;
extern "C" void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

// A per-process seed for host `i`'s identifiers (rc::RcConfig::seed): from
// getrandom(), falling back to the clock and PID if it fails. Never 0 (0
// is the deterministic layout of tests and sf-sim).
uint64_t random_seed(size_t i) {
  uint64_t s = 0;
  if (getrandom(&s, sizeof s, 0) != static_cast<ssize_t>(sizeof s)) {
    s = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (static_cast<uint64_t>(getpid()) << 32);
  }
  s = nic::rc::mix64(s + i);
  return s == 0 ? 1 : s;
}

constexpr const char* kUsage = R"(sf-nic: the softfabric RoCEv2 NIC on DPDK ports, with perftest's workloads.

Usage:
  sf-nic [EAL options] -- TEST --port DEVARGS --mac MAC --ip IP [options] [SERVER]
  sf-nic [EAL options] -- --config nic.json [options]

TEST is one of write_bw, write_lat, read_bw, read_lat, send_bw, send_lat (or
perftest's names ib_write_bw ...). Without SERVER sf-nic is the server: it
listens for the out-of-band TCP exchange (QPN, PSN, rkey, VA, GID) on
--oob-port; with SERVER (an address of the server's machine) it is the client
and drives the test. Both sides print perftest's tables.

--config runs many hosts (each on its own port, or on several: a multi-port
host, one address per port) and workloads in one process, e.g. 8 incast
senders (docs/nic-app.md has the nic.json schema). The flags describe one
single-port host: --port, --mac and --ip are given once (a multi-port host
needs --config).

Each port's --speed is its line rate: the driver shapes transmit to it, so a
memif link behaves like a NIC of that speed. EAL options come before `--`;
sf-nic adds a unique --file-prefix and falls back to --no-huge.

Examples:
  server: sf-nic --vdev=net_memif0,role=server,socket=/tmp/m.sock -- write_bw \
            --port net_memif0 --mac 02:00:00:00:00:01 --ip 10.0.0.1 -s 65536 -n 1000
  client: sf-nic --vdev=net_memif0,socket=/tmp/m.sock -- write_bw \
            --port net_memif0 --mac 02:00:00:00:00:02 --ip 10.0.0.2 -s 65536 -n 1000 127.0.0.1

Options)";

struct Options {
  std::string config;
  std::string test;
  std::string server;
  std::string port;
  std::string mac;
  std::string ip;
  uint32_t speed_gbps = 100;
  uint32_t mtu = 4096;
  uint32_t dscp = 26;
  std::string pfc_enable;
  uint64_t size = 65536;
  uint64_t iters = 1000;
  double duration_s = 0;
  uint32_t qps = 1;
  uint32_t tx_depth = 128;
  std::string cc = "none";
  double rate_limit_gbps = 0;
  std::string burst_size = "0";
  uint16_t oob_port = 18515;
  std::string oob_format = "sf";
  std::string gateway_mac;
  bool verify = false;
  bool all_sizes = false;      // perftest's -a (docs/perftest.md "-a and -b")
  bool bidirectional = false;  // perftest's -b: refused
  std::string report;
  std::string timeseries;
  uint32_t ts_period_ms = 100;
  double run_limit_s = 0;
  uint32_t link_wait_s = 30;
  uint32_t oob_wait_s = 120;
  bool backoff = false;
  bool flow_isolate = false;
  std::string sched = "other";
  std::string idle = "spin";
  uint32_t max_unacked_psns = 128;
  std::string id_seed = "random";
  std::string transport = "rc";
  std::optional<uint64_t> id_seed_value;  // parsed --id-seed; none = random
  bool oob_wait_defaulted = true;         // --oob-wait-s not given
  std::string ready_file;
  std::string log_level = "warn";
  uint32_t mbuf_size = RTE_MBUF_DEFAULT_BUF_SIZE;
  uint16_t metrics_port = 0;
  std::string metrics_addr;  // empty: 127.0.0.1
};

// perftest's -a runs sizes 2^1..2^23; its client's report (and the region a
// server must offer) is the last one's.
constexpr uint64_t kPerftestAllSizesMax = uint64_t{1} << 23;

// --mbuf-size bounds: the data room (headroom included) must hold the
// headroom plus the largest header set and control frame the NIC builds in
// one mbuf; rte_mempool's data room is 16 bits.
constexpr uint32_t kMinMbufDataBytes = 512;
constexpr uint32_t kMaxMbufSize = UINT16_MAX;

po::options_description describe(Options& o) {
  po::options_description d(kUsage);
  d.add_options()
    ("help,h", "this help")
    ("config", po::value(&o.config), "hosts and workloads (JSON, docs/nic-app.md); replaces TEST and its flags")
    ("test", po::value(&o.test), "TEST (positional)")
    ("server", po::value(&o.server), "SERVER (positional): client mode, connect to this address")
    ("port", po::value(&o.port), "DEVARGS of the host's port (a --vdev name, a PCI address)")
    ("mac", po::value(&o.mac), "the host's MAC")
    ("ip", po::value(&o.ip), "the host's IPv4 or IPv6 address (its GID)")
    ("speed", po::value(&o.speed_gbps)->default_value(100), "line rate in Gb/s (the driver shapes to it)")
    ("mtu,m", po::value(&o.mtu)->default_value(4096), "RoCE path MTU: 256 512 1024 2048 4096")
    ("dscp", po::value(&o.dscp)->default_value(26), "DSCP of data frames (priority = DSCP >> 3)")
    ("pfc-enable", po::value(&o.pfc_enable), "priorities whose received PFC pauses us, e.g. 3 or 3,4")
    ("size,s", po::value(&o.size)->default_value(65536), "message size in bytes")
    ("iters,n", po::value(&o.iters)->default_value(1000), "messages per QP")
    ("duration,D", po::value(&o.duration_s)->default_value(0), "run for this many seconds instead of -n")
    ("qp,q", po::value(&o.qps)->default_value(1), "QPs (bandwidth tests)")
    ("tx-depth,t", po::value(&o.tx_depth)->default_value(128), "outstanding work requests per QP")
    ("cc", po::value(&o.cc)->default_value("none"),
     "congestion control: none, dcqcn, dcqcn-nvidia, dcqcn-paper, swift, bbr, hpcc on RC; none, nscc on MRC "
     "(parameters: nic.json cc_params)")
    ("transport", po::value(&o.transport)->default_value("rc"),
     "QP transport: rc (RoCEv2 RC) or mrc (sprayed over 128 entropy values, SACK, out-of-order placement; "
     "write_bw and write_lat; both sides must agree; docs/mrc.md)")
    ("rate-limit", po::value(&o.rate_limit_gbps)->default_value(0), "pace every QP at this many Gb/s (0 = line rate)")
    ("burst-size", po::value(&o.burst_size)->default_value("0"),
     "the pacer's burst bucket (ibv_modify_qp_rate_limit max_burst_sz), bytes or e.g. 64KiB: a QP served late "
     "or idle may send up to this many bytes back to back to make up time; 0 = strict pacing; needs --rate-limit")
    ("oob-port,p", po::value(&o.oob_port)->default_value(18515), "TCP port of the out-of-band exchange")
    ("oob-format", po::value(&o.oob_format)->default_value("sf"),
     "the out-of-band exchange: sf (sf-nic's own) or perftest (an unmodified perftest peer: ib_write_bw, "
     "ib_read_bw, ib_send_bw, ib_read_lat, ib_send_lat; needs --gateway-mac, docs/nic-app.md \"Interop with perftest\")")
    ("gateway-mac", po::value(&o.gateway_mac),
     "the destination MAC of every frame the host sends (a routed fabric's next hop; on one L2 segment with "
     "--oob-format perftest, the peer's MAC)")
    ("verify", po::bool_switch(&o.verify), "check every byte at the receiver")
    ("all,a", po::bool_switch(&o.all_sizes),
     "perftest's -a (every size 2 B..8 MiB): a write_bw or read_bw server with --oob-format perftest serves it "
     "(an 8 MiB region; it prints the client's last row); refused elsewhere (docs/perftest.md \"-a and -b\")")
    ("bidirectional,b", po::bool_switch(&o.bidirectional),
     "perftest's -b (both sides send): refused, a workload sends one way (docs/perftest.md \"-a and -b\")")
    ("report", po::value(&o.report), "write the results (JSON) to this file at exit")
    ("timeseries", po::value(&o.timeseries), "append one JSON line of host counters per sample")
    ("ts-period-ms", po::value(&o.ts_period_ms)->default_value(100), "time-series sample period")
    ("run-limit", po::value(&o.run_limit_s)->default_value(0), "give up after this many seconds of traffic (0 = none)")
    ("link-wait-s", po::value(&o.link_wait_s)->default_value(30), "wait up to this long for every link to come up")
    ("oob-wait-s", po::value(&o.oob_wait_s)->default_value(120), "give up (exit 1) when the out-of-band peer has not come within this long: a server's client (default 120), a client's server (default 60) (1..86400)")
    ("backoff", po::bool_switch(&o.backoff), "idle back-off to share cores with other processes")
    ("flow-isolate", po::bool_switch(&o.flow_isolate),
     "rte_flow isolated mode on every port, with rules for UDP 4791 only: the rest stays with the kernel (mlx5, net_tap remote=IF; docs/guide.md)")
    ("sched", po::value(&o.sched)->default_value("other"),
     "scheduling of the data-path thread: other, nice:N (-20..19), fifo:N or rr:N (1..99, needs --idle "
     "until-due or backoff); e.g. nice:-20 so a shared core's other tasks take less of the pacer's time "
     "(docs/nic-app.md \"Scheduling\")")
    ("id-seed", po::value(&o.id_seed)->default_value("random"),
     "QPNs, initial PSNs and MR keys: random (drawn per process from getrandom) or a seed N in "
     "0..2^64-1, the same for every host of the process (0 = the simulator's: QPNs from 0x11; sf-lab "
     "passes 0 so a real run takes the paths of its --sim twin)")
    ("max-unacked-psns", po::value(&o.max_unacked_psns)->default_value(128),
     "requester window: data PSNs a QP may have unacknowledged (1..65536; rxe's 128 = 512 KiB at 4096 B MTU)")
    ("idle", po::value(&o.idle)->default_value("spin"),
     "what the data path does when idle: spin, backoff (= --backoff), until-due[:US] (sleep until US "
     "microseconds, default 10, before the next departure or timer, at most 50 us, then spin)")
    ("ready-file", po::value(&o.ready_file), "create this file once the ports are up and the OOB servers listen")
    ("log-level", po::value(&o.log_level)->default_value("warn"), "debug | info | warn | error")
    ("mbuf-size", po::value(&o.mbuf_size)->default_value(RTE_MBUF_DEFAULT_BUF_SIZE),
     "data room of the port's mbufs in bytes, headroom included (a memif frame larger than it arrives "
     "chained; e.g. 8320 with bsize=8192 makes a 4 KiB-MTU frame one segment)")
    ("metrics-port", po::value(&o.metrics_port)->default_value(0), "serve Prometheus metrics on this TCP port at /metrics (0 = off; docs/ops.md)")
    ("metrics-addr", po::value(&o.metrics_addr), "IPv4 or IPv6 address the metrics endpoint listens on (default 127.0.0.1; needs --metrics-port)");
  return d;
}

// perftest-style flags -> the one-host, one-workload AppConfig.
AppConfig config_from_flags(const Options& o) {
  config::Json doc;
  doc["hosts"]["h0"] = {{"devargs", o.port}, {"mac", o.mac}, {"ip", o.ip}, {"speed", o.speed_gbps},
                        {"mtu", o.mtu}, {"dscp", o.dscp}};
  if (!o.pfc_enable.empty()) doc["hosts"]["h0"]["pfc_enable"] = o.pfc_enable;
  if (!o.gateway_mac.empty()) doc["hosts"]["h0"]["gateway_mac"] = o.gateway_mac;
  std::string test = o.test;
  if (test.rfind("ib_", 0) == 0) test = test.substr(3);
  const bool client = !o.server.empty();
  config::Json w = {{"name", test}, {"host", "h0"}, {"type", test}, {"role", client ? "client" : "server"},
                    {"oob", (client ? o.server : std::string("0.0.0.0")) + ":" + std::to_string(o.oob_port)},
                    {"size", o.all_sizes ? kPerftestAllSizesMax : o.size},
                    {"iterations", o.duration_s > 0 ? 0 : o.iters}, {"duration_s", o.duration_s},
                    {"qps", o.qps}, {"tx_depth", o.tx_depth}, {"cc", o.cc}, {"verify", o.verify},
                    {"transport", o.transport}, {"oob_format", o.oob_format}};
  if (o.rate_limit_gbps > 0) w["rate_limit"] = o.rate_limit_gbps;
  if (o.burst_size != "0") w["burst_size"] = o.burst_size;
  doc["workloads"] = config::Json::array({w});
  return parse_app_config(doc);
}

// TEST-mode flags and the nic.json path config_from_flags() writes each
// into: with --config they would be ignored, so they are refused (naming
// where they go in the file); in TEST mode a config error at a path is
// reported as the flag's.
struct FlagPath {
  const char* flag;       // long name
  const char* shown;      // as the user may have typed it
  const char* json_path;  // in config_from_flags()'s document
};
constexpr FlagPath kFlagPaths[] = {
    {"port", "--port", "hosts.h0.devargs"},       {"mac", "--mac", "hosts.h0.mac"},
    {"ip", "--ip", "hosts.h0.ip"},                {"speed", "--speed", "hosts.h0.speed"},
    {"mtu", "-m/--mtu", "hosts.h0.mtu"},          {"dscp", "--dscp", "hosts.h0.dscp"},
    {"pfc-enable", "--pfc-enable", "hosts.h0.pfc_enable"},
    {"size", "-s/--size", "workloads[0].size"},   {"iters", "-n/--iters", "workloads[0].iterations"},
    {"duration", "-D/--duration", "workloads[0].duration_s"},
    {"qp", "-q/--qp", "workloads[0].qps"},        {"tx-depth", "-t/--tx-depth", "workloads[0].tx_depth"},
    {"cc", "--cc", "workloads[0].cc"},            {"server", "SERVER or -p/--oob-port", "workloads[0].oob"},
    {"oob-port", "-p/--oob-port", "workloads[0].oob"}, {"verify", "--verify", "workloads[0].verify"},
    {"rate-limit", "--rate-limit", "workloads[0].rate_limit"},
    {"burst-size", "--burst-size", "workloads[0].burst_size"},
    {"transport", "--transport", "workloads[0].transport"},
    {"oob-format", "--oob-format", "workloads[0].oob_format"},
    {"gateway-mac", "--gateway-mac", "hosts.h0.gateway_mac"},
    {"test", "TEST", "workloads[0].type"},  // with --config refused before (either --config or TEST)
};

std::optional<int> refuse_flags_with_config(const po::variables_map& vm) {
  for (const FlagPath& f : kFlagPaths) {
    if (app::first_given(vm, {f.flag}).empty()) continue;
    std::string where = f.json_path;  // hosts.h0.x -> hosts.NAME.x, workloads[0].x -> workloads[i].x
    if (where.rfind("hosts.h0.", 0) == 0) where = "hosts.NAME." + where.substr(9);
    if (where.rfind("workloads[0].", 0) == 0) where = "workloads[i]." + where.substr(13);
    std::cerr << "sf-nic: " << f.shown << " describes the TEST-mode host or workload; with --config give it in "
              << "the file (" << where << ", docs/nic-app.md)\n";
    return 2;
  }
  return std::nullopt;
}

// "hosts.h0.mtu: 1500 is not ..." -> "-m/--mtu: 1500 is not ...".
std::string flag_named(std::string_view what) {
  for (const FlagPath& f : kFlagPaths) {
    const std::string_view path = f.json_path;
    if (what.substr(0, path.size()) == path && (what.size() == path.size() || what[path.size()] == ':')) {
      return std::string(f.shown) + std::string(what.substr(path.size()));
    }
  }
  return std::string(what);
}

// ---- 1. Arguments ------------------------------------------------------------
// A perftest server waits for its client: a refused sf-nic client connects
// and hangs up, so the server's exchange ends (EOF) instead of waiting.
void hang_up_on_perftest_server(const Options& o) {
  if (o.server.empty() || o.oob_format != "perftest") return;
  nic::OobOptions oo;
  oo.host = o.server;
  oo.port = o.oob_port;
  oo.connect_attempts = 1;
  oo.io_timeout = std::chrono::milliseconds(1000);
  try {
    (void)nic::OobConnection::connect(oo);
  } catch (const nic::OobError&) {
    // No server to tell.
  }
}

// perftest's -a and -b (docs/perftest.md "-a and -b"): -a is spoken by a
// write_bw / read_bw server with perftest's exchange (perftest's client runs
// the sizes with no step between them; the server offers the largest size's
// region and prints the client's last row); every other -a, and every -b,
// is refused in one line naming the flag. nullopt: go on.
std::optional<int> refuse_perftest_modes(const Options& o, const po::variables_map& vm) {
  if (o.bidirectional) {
    std::cerr << "sf-nic: -b (bidirectional) is not supported: a workload sends one way (run a second sf-nic "
              << "workload the other way; docs/perftest.md \"-a and -b\")\n";
  } else if (o.all_sizes) {
    const std::string test = o.test.rfind("ib_", 0) == 0 ? o.test.substr(3) : o.test;
    const bool served = o.config.empty() && o.server.empty() && o.oob_format == "perftest" &&
                        (test == "write_bw" || test == "read_bw");
    if (served && app::first_given(vm, {"size"}).empty()) return std::nullopt;
    std::cerr << "sf-nic: -a (every message size) "
              << (served ? "sets the size: give -a or -s, not both"
                         : "is served only by a TEST-mode write_bw or read_bw server with --oob-format perftest; this side "
                           "runs one size: give -s (docs/perftest.md \"-a and -b\")")
              << "\n";
  } else {
    return std::nullopt;
  }
  hang_up_on_perftest_server(o);
  return 2;
}


// Parses the flags (TEST and SERVER positional). nullopt: go on; else the exit
// code (0 after --help, 2 after saying what is wrong).
std::optional<int> parse_options(int argc, char** argv, const dpdk::SplitArgs& args, Options& o,
                                 po::variables_map& vm) {
  po::options_description desc = describe(o);
  po::positional_options_description pos;
  pos.add("test", 1).add("server", 1);
  std::vector<const char*> av;
  for (const auto& a : args.app) av.push_back(a.c_str());
  try {
    po::store(po::command_line_parser(static_cast<int>(av.size()), av.data()).options(desc).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << desc << "\n";
      return 0;
    }
    po::notify(vm);
  } catch (const po::multiple_occurrences& e) {
    const std::string opt = e.get_option_name();
    std::cerr << "sf-nic: " << e.what();
    if (opt == "--port" || opt == "--mac" || opt == "--ip") {
      // The flags are one single-port host.
      std::cerr << ": the flags describe one host with one port; a host with several ports needs --config "
                << "nic.json (\"ports\", docs/nic-app.md \"Multi-port hosts\")\n";
    } else {
      std::cerr << " (sf-nic -- --help)\n";
    }
    return 2;
  } catch (const po::error& e) {
    std::cerr << "sf-nic: " << e.what() << " (sf-nic -- --help)\n";
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::cout << desc << "\n";
      return 0;
    }
  }
  o.oob_wait_defaulted = vm["oob-wait-s"].defaulted();
  return std::nullopt;
}

// What the flags decide about the data-path thread.
struct Modes {
  ThreadSched sched;
  dpdk::IdleBackoffOptions idle;
};

// --id-seed: random, or the seed every host of the process uses.
bool parse_id_seed(Options& o) {
  if (o.id_seed == "random") return true;
  uint64_t v = 0;
  const char* b = o.id_seed.data();
  const auto [ptr, ec] = std::from_chars(b, b + o.id_seed.size(), v);
  if (ec != std::errc{} || ptr != b + o.id_seed.size()) {
    std::cerr << "sf-nic: --id-seed " << o.id_seed << ": want random or an integer 0..2^64-1\n";
    return false;
  }
  o.id_seed_value = v;
  return true;
}

// The flags' values and combinations, checked before anything starts.
std::optional<int> check_options(Options& o, Modes& m) {
  if (!app::set_log_level(o.log_level, "sf-nic")) return 2;
  if (o.ts_period_ms == 0) {
    std::cerr << "sf-nic: --ts-period-ms must be > 0\n";
    return 2;
  }
  std::string error;
  const std::optional<ThreadSched> sched = parse_thread_sched(o.sched, &error);
  if (!sched) {
    std::cerr << "sf-nic: " << error << "\n";
    return 2;
  }
  const std::optional<dpdk::IdleBackoffOptions> idle = parse_idle_mode(o.idle, &error);
  if (!idle) {
    std::cerr << "sf-nic: " << error << "\n";
    return 2;
  }
  m = Modes{*sched, *idle};
  if (!parse_id_seed(o)) return 2;
  if (o.oob_wait_s == 0 || o.oob_wait_s > 86400) {
    std::cerr << "sf-nic: --oob-wait-s must be 1..86400\n";
    return 2;
  }
  if (o.max_unacked_psns == 0 || o.max_unacked_psns > kMaxUnackedPsns) {
    std::cerr << "sf-nic: --max-unacked-psns must be 1.." << kMaxUnackedPsns << "\n";
    return 2;
  }
  if (o.mbuf_size < RTE_PKTMBUF_HEADROOM + kMinMbufDataBytes || o.mbuf_size > kMaxMbufSize) {
    std::cerr << "sf-nic: --mbuf-size must be " << RTE_PKTMBUF_HEADROOM + kMinMbufDataBytes << ".." << kMaxMbufSize
              << " (headroom " << RTE_PKTMBUF_HEADROOM << " B + at least " << kMinMbufDataBytes << " B of data)\n";
    return 2;
  }
  if (o.backoff) {
    if (o.idle != "spin" && o.idle != "backoff") {
      std::cerr << "sf-nic: give --backoff or --idle " << o.idle << ", not both\n";
      return 2;
    }
    m.idle.enabled = true;
  }
  if ((m.sched.policy == SchedPolicy::kFifo || m.sched.policy == SchedPolicy::kRr) && !m.idle.enabled &&
      !m.idle.until_due) {
    std::cerr << "sf-nic: --sched " << o.sched << " needs --idle until-due or backoff: a busy-polling "
              << "real-time thread starves every other task of its core\n";
    return 2;
  }
  return std::nullopt;
}

// ---- 2. Config ---------------------------------------------------------------
// nic.json (--config) or the TEST-mode flags -> `cfg`, validated. nullopt: go on.
std::optional<int> load_config(const Options& o, const po::variables_map& vm, AppConfig& cfg) {
  try {
    if (!o.config.empty()) {
      if (!o.test.empty()) {
        std::cerr << "sf-nic: give either --config or TEST, not both\n";
        return 2;
      }
      if (o.rate_limit_gbps > 0 || o.burst_size != "0") {
        std::cerr << "sf-nic: with --config, pacing is per workload (workloads[i].rate_limit, "
                  << "workloads[i].burst_size), not --rate-limit / --burst-size\n";
        return 2;
      }
      if (auto rc = refuse_flags_with_config(vm)) return *rc;
      cfg = load_app_config(o.config);
    } else {
      if (o.test.empty() || o.port.empty() || o.mac.empty() || o.ip.empty()) {
        std::cerr << "sf-nic: need TEST, --port, --mac and --ip (or --config); sf-nic -- --help\n";
        return 2;
      }
      if (o.burst_size != "0" && o.rate_limit_gbps <= 0) {
        std::cerr << "sf-nic: --burst-size needs --rate-limit (a burst bucket of an unpaced QP)\n";
        return 2;
      }
      if (!app::first_given(vm, {"iters"}).empty() && !app::first_given(vm, {"duration"}).empty()) {
        std::cerr << "sf-nic: give -n (messages) or -D (seconds), not both\n";
        return 2;
      }
      cfg = config_from_flags(o);
    }
    if (o.timeseries.empty() && !app::first_given(vm, {"ts-period-ms"}).empty()) {
      std::cerr << "sf-nic: --ts-period-ms needs --timeseries\n";
      return 2;
    }
  } catch (const config::ConfigError& e) {
    // A flag's value checked by the config: name the flag, not the JSON path.
    const std::string what = o.config.empty() ? flag_named(e.what()) : o.config + ": " + e.what();
    std::cerr << "sf-nic: " << what << "\n";
    return 2;
  }
  return std::nullopt;
}

// ---- 3. EAL ------------------------------------------------------------------
// EAL; then the data-path thread's scheduling is checked (it is applied just
// before the loop runs: the control threads started before it keep the
// default). nullopt: go on, EAL up; else the exit code, EAL down.
std::optional<int> start_eal(const dpdk::SplitArgs& args, const Options& o, const ThreadSched& sched) {
  auto eal = dpdk::init_eal(args.eal);
  if (!eal) {
    spdlog::error("{}", eal.error());
    return 1;
  }
  if (const std::string err = check_thread_sched(sched); !err.empty()) {
    spdlog::error("--sched {}: {}", to_string(sched), err);
    dpdk::cleanup_eal();
    return 1;
  }
  if (const std::string warn = apply_session_nice(sched); !warn.empty()) spdlog::warn("--sched {}: {}", o.sched, warn);
  return std::nullopt;
}

// ---- 4. Mempool --------------------------------------------------------------
// Descriptors and loop buffers per port; the NIC builds frames as it sends
// them and holds none beyond the receive ring.
dpdk::Result<rte_mempool*> create_pool(const Options& o, size_t nports) {
  dpdk::MempoolSizing sz;
  sz.ports = static_cast<uint32_t>(nports);
  sz.extra = 4096;
  return dpdk::create_pktmbuf_pool("sf_nic", sz, static_cast<uint16_t>(o.mbuf_size));
}

// ---- 5. Ports ----------------------------------------------------------------
// --flow-isolate's rules of one port.
struct Isolated {
  uint16_t port_id = 0;
  std::vector<rte_flow*> flows;
  Isolated() = default;
  Isolated(Isolated&& o) noexcept : port_id(o.port_id), flows(std::move(o.flows)) {}
  Isolated(const Isolated&) = delete;
  ~Isolated() { dpdk::flow_isolate_remove(port_id, &flows); }
};

// One DPDK port per node port: each host's ports in port_num order, host
// after host (node port i on DPDK port i).
struct NicPorts {
  explicit NicPorts(const AppConfig& c) : cfg(c), node_ports(node_ports_of(c)) {}
  const AppConfig& cfg;
  const std::vector<std::pair<size_t, uint8_t>> node_ports;  // (host index, port_num)
  std::vector<dpdk::Port> ports;
  std::vector<Isolated> isolated;

  const AppHost& host(size_t i) const { return cfg.hosts[node_ports[i].first]; }
  AppPort port_config(size_t i) const { return host(i).port(node_ports[i].second); }
  std::string name(size_t i) const {
    const AppHost& h = host(i);
    return "host " + h.name + (h.num_ports() > 1 ? " port " + std::to_string(node_ports[i].second) : "");
  }
  // False when one fails to open (those opened so far stay, closed by close()).
  bool open(const Options& o, rte_mempool* pool);
  bool isolate(size_t i);
  // Every link up (a memif peer connects asynchronously) within --link-wait-s.
  bool wait_links_up(const Options& o) {
    for (size_t i = 0; i < ports.size(); ++i) {
      if (auto st = ports[i].wait_link_up(TimeNs::from_s(o.link_wait_s)); !st) {
        spdlog::error("{}: {}", name(i), st.error());
        return false;
      }
    }
    return true;
  }
  void close() {
    for (auto& p : ports) p.close();
  }
};

bool NicPorts::open(const Options& o, rte_mempool* pool) {
  for (size_t i = 0; i < node_ports.size(); ++i) {
    dpdk::PortConfig pc;
    pc.mtu = static_cast<uint16_t>(host(i).mtu_bytes + 128);  // RoCE headers on top of the path MTU
    pc.devargs = dpdk::memif_devargs_for_link(port_config(i).devargs, pc.mtu);  // flooded jumbo frames
    pc.mtu_best_effort = true;
    pc.link_wait = dpdk::LinkWait::kSkip;
    if (o.flow_isolate) {  // before the port is configured (mlx5 wants it so)
      if (const std::string err = dpdk::flow_isolate_prepare(pc.devargs); !err.empty()) {
        spdlog::error("{}: {}", name(i), err);
        return false;
      }
    }
    auto p = dpdk::Port::open(pc, pool);
    if (!p) {
      spdlog::error("{}: {}", name(i), p.error());
      return false;
    }
    ports.push_back(std::move(*p));
    if (o.flow_isolate && !isolate(i)) return false;
  }
  return true;
}

// --flow-isolate: UDP 4791 to sf-nic, the rest to the kernel.
bool NicPorts::isolate(size_t i) {
  isolated.emplace_back();
  isolated.back().port_id = ports.back().port_id();
  if (const std::string err = dpdk::flow_isolate_rules(ports.back().port_id(), name(i), &isolated.back().flows);
      !err.empty()) {
    spdlog::error("{}: {}", name(i), err);
    return false;
  }
  spdlog::info("{}: flow isolation on, UDP 4791 (IPv4, IPv6) to sf-nic, the rest to the kernel", name(i));
  return true;
}

// ---- 6. NIC node and workloads -----------------------------------------------
nic::NicConfig make_nic_config(const Options& o, const AppConfig& cfg) {
  nic::NicConfig nc = nic_config_of(cfg);
  // Zero-copy transmit where the driver copies with the CPU (every port of
  // the host); the loop's buffered frames are released before the workloads
  // (and their MRs) go.
  for (size_t i = 0; i < nc.hosts.size(); ++i) {
    bool cpu_copy = true;
    for (uint8_t k = 1; k <= cfg.hosts[i].num_ports(); ++k) {
      cpu_copy = cpu_copy && copies_with_cpu(cfg.hosts[i].port(k).devargs);
    }
    nc.hosts[i].tx_zero_copy = cpu_copy;
    nc.hosts[i].rc.max_unacked_psns = o.max_unacked_psns;
    // Unpredictable QPNs, PSNs and MR keys per process unless --id-seed
    // names the seed (docs/nic.md "Identifiers").
    nc.hosts[i].rc.seed = o.id_seed_value ? *o.id_seed_value : random_seed(i);
  }
  return nc;
}

// The node and its workloads (verbs objects). The workloads go before the
// node: a Workload's destructor destroys its QPs, CQs, MR and PD on it.
struct Nic {
  std::unique_ptr<nic::NicNode> node;
  std::vector<std::unique_ptr<Workload>> workloads;
  std::vector<Workload*> wl;
  bool make(const Options& o, const AppConfig& cfg, rte_mempool* pool) {
    try {
      node = std::make_unique<nic::NicNode>(make_nic_config(o, cfg), pool);
      for (const AppWorkload& w : cfg.workloads) {
        workloads.push_back(std::make_unique<Workload>(w, cfg.hosts[w.host], *node, w.host));
        wl.push_back(workloads.back().get());
      }
    } catch (const std::exception& e) {
      spdlog::error("setup: {}", e.what());
      return false;
    }
    return true;
  }
  ~Nic() {
    workloads.clear();
    node.reset();
  }
};

// Telemetry and metrics (nic_ops.h): port counters from now, QPs once
// connected. Static: telemetry callbacks may run until EAL is gone.
std::optional<NicOps> g_ops;

void start_ops(nic::NicNode& node, app::MetricsServer& metrics) {
  g_ops.emplace(node);
  if (!g_ops->register_telemetry()) spdlog::info("telemetry: sf-nic commands not registered");
  if (metrics.listening()) metrics.serve([] { return g_ops->metrics(); });
}

// ---- 7. Loop -----------------------------------------------------------------
// The loop's clock at the TSC's measured rate (tsc_calibration.h): paced
// rates are then exact against the wall clock.
dpdk::TscClock calibrated_clock() {
  const uint64_t nominal_hz = rte_get_tsc_hz();
  const uint64_t measured_hz = measure_tsc_hz(100000000);
  const bool use_measured = use_measured_tsc_hz(nominal_hz, measured_hz);
  if (use_measured) {
    spdlog::info("TSC: rte_get_tsc_hz() {} Hz, measured {} Hz against CLOCK_MONOTONIC ({:+.1f} ppm); using the measured rate",
                 nominal_hz, measured_hz, (static_cast<double>(measured_hz) / nominal_hz - 1) * 1e6);
  }
  return dpdk::TscClock(use_measured ? measured_hz : nominal_hz);
}

using Loop = dpdk::PollLoop<dpdk::Port, dpdk::TscClock>;

// What runs between the node's creation and the workloads' end: the engine
// on the node, the loop over the ports, one out-of-band session per workload.
struct Datapath {
  Datapath(const Options& opt, const Modes& m, NicPorts& p, Nic& n)
      : o(opt), modes(m), ports(p), node(*n.node), wl(n.wl), clock(calibrated_clock()), loop(clock, loop_options(m)) {
    for (Workload* w : wl) engine.add(w);
    node.set_app(&engine);
    for (size_t i = 0; i < ports.ports.size(); ++i) {
      dpdk::LoopPortOptions lpo;
      lpo.rate = BitRate::gbps(ports.port_config(i).speed_gbps);
      if (auto r = loop.add_port(ports.ports[i], node, static_cast<PortId>(i), lpo); !r) spdlog::error("{}", r.error());
    }
  }
  ~Datapath() {
    for (auto& s : sessions) s->release();
    node.set_app(nullptr);
  }
  static dpdk::LoopOptions loop_options(const Modes& m) {
    dpdk::LoopOptions lo;
    lo.backoff = m.idle;
    return lo;
  }
  bool stopped() const { return g_stop.load(std::memory_order_relaxed); }

  const Options& o;
  const Modes& modes;
  NicPorts& ports;
  nic::NicNode& node;
  const std::vector<Workload*>& wl;
  PerftestEngine engine;
  dpdk::TscClock clock;
  Loop loop;
  std::vector<std::unique_ptr<OobSession>> sessions;
};

// ---- 8. Out-of-band exchange, links, next hops, connect, sync ----------------
// One session per workload, in parallel.
void start_sessions(Datapath& dp) {
  for (Workload* w : dp.wl) {
    nic::OobOptions oo;
    oo.host = w->config().oob_host;
    oo.port = w->config().oob_port;
    // --oob-wait-s: a server's wait for its client, a client's for its server (default 60 s).
    const bool client = w->config().role == Role::kClient;
    const uint32_t wait_s = client && dp.o.oob_wait_defaulted ? 60 : dp.o.oob_wait_s;
    oo.connect_attempts = wait_s * 2;  // every 500 ms
    oo.retry_interval = std::chrono::milliseconds(500);
    oo.io_timeout = std::chrono::milliseconds(600000);
    oo.accept_timeout = std::chrono::seconds(wait_s);
    dp.sessions.push_back(std::make_unique<OobSession>(*w, oo, g_stop));
  }
}

bool exchanged(Datapath& dp) {
  for (auto& s : dp.sessions) {
    if (!s->wait_exchanged()) {
      spdlog::error("{}", dp.stopped() ? "stopped" : s->error());
      return false;
    }
  }
  return true;
}

// Next hops (routed ports, docs/nic-app.md "Routed fabrics"): the loop runs,
// without the workloads, until every gateway answered ARP / ND or gave up
// (Neighbors::kMaxProbes); a peer a port cannot reach (outside its subnet
// with no gateway, a gateway that never answered) is an error at connect,
// not a retry-exceeded later.
void settle_neighbors(Datapath& dp) {
  if (dp.node.neighbors().settled()) return;
  dp.node.set_app(nullptr);
  dp.loop.run([&](TimeNs) { return dp.stopped() || dp.node.neighbors().settled(); });
  dp.node.set_app(&dp.engine);
}

// QPs to RTS on this thread (the node's, before the loop runs). Every session
// hears whether its workload connected (`ok` false: it did not try).
bool connect_workloads(Datapath& dp, bool ok) {
  for (size_t i = 0; i < dp.wl.size(); ++i) {
    bool connected = ok;
    if (connected && dp.stopped()) connected = ok = false;
    if (connected) {
      std::string err = dp.wl[i]->route_error(dp.sessions[i]->peer_info());
      if (err.empty()) err = dp.wl[i]->connect(dp.sessions[i]->peer_info(), dp.clock.now());
      if (!err.empty()) {
        spdlog::error("workload {}: {}", dp.wl[i]->config().name, err);
        connected = ok = false;
      }
    }
    dp.sessions[i]->connected(connected);
  }
  return ok;
}

bool synced(Datapath& dp) {
  for (auto& s : dp.sessions) {
    if (!s->wait_synced()) {
      spdlog::error("{}", dp.stopped() ? "stopped" : s->error());
      return false;
    }
  }
  return true;
}

// Exchange, links, next hops, connect, sync: true when the data path may start.
bool bring_up(Datapath& dp) {
  bool ok = exchanged(dp) && dp.ports.wait_links_up(dp.o);
  if (ok) settle_neighbors(dp);
  ok = connect_workloads(dp, ok);
  return ok && synced(dp);
}

// ---- 9. Time series ----------------------------------------------------------
// The control thread's samples (--timeseries). Each also carries the data-path
// thread's CPU time and run-queue wait from /proc/self/task/TID/schedstat: on
// a shared core they tell a window the pacer lost to descheduling from one it
// lost to itself.
class Sampler {
 public:
  // Call on the data-path thread.
  Sampler(const Options& o, const Modes& m, const nic::NicNode& node)
      : o_(o), modes_(m), node_(node), schedstat_("/proc/self/task/" + std::to_string(gettid()) + "/schedstat") {
    thread_ = std::thread([this] { run(); });
  }
  ~Sampler() {
    stop_.store(true);
    thread_.join();
  }
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

 private:
  using Steady = std::chrono::steady_clock;
  static int64_t ns_of(Steady::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  }
  void run();
  // One sample due at `due`; `t1` is set to when its counters were read.
  nlohmann::json sample(int64_t due, int64_t& t1);

  const Options& o_;
  const Modes& modes_;
  const nic::NicNode& node_;
  const std::string schedstat_;
  std::atomic<bool> stop_{false};
  int64_t start_ns_ = 0;
  int cpu_ = -1;
  std::thread thread_;
};

void Sampler::run() {
  if (o_.timeseries.empty()) return;
  if (const std::string err = apply_thread_sched(sampler_sched(modes_.sched)); !err.empty()) {
    spdlog::warn("time-series sampler: {}", err);
  }
  std::ofstream ts(o_.timeseries, std::ios::app);
  start_ns_ = ns_of(Steady::now());
  // Samples on the grid start + k * period (windows of one period).
  SampleSchedule sched_ts(start_ns_, static_cast<int64_t>(o_.ts_period_ms) * 1000000);
  // The sampler shares the data-path thread's core (it inherits the lcore's
  // affinity): that core's steal time (a VM's vCPU held by the hypervisor) is
  // the one share of lost time no priority helps.
  cpu_ = sched_getcpu();
  while (!stop_.load()) {
    const int64_t due = sched_ts.due_ns();
    const int64_t now_ns = ns_of(Steady::now());
    if (now_ns < due) {
      // Wake on the grid point, at least every 20 ms to see a stop.
      const int64_t until = std::min(due, now_ns + 20000000);
      std::this_thread::sleep_until(Steady::time_point(std::chrono::nanoseconds(until)));
      continue;
    }
    int64_t taken_ns = 0;
    ts << sample(due, taken_ns).dump() << "\n";
    ts.flush();
    sched_ts.taken(taken_ns);
  }
}

// t_s is the middle of the sample's reads and sample_us how long they took, so
// a sampler preempted while reading shows as a long sample rather than as a
// window's rate; t_mono_s is the same instant on CLOCK_MONOTONIC
// (steady_clock), the time base two processes on one machine share.
nlohmann::json Sampler::sample(int64_t due, int64_t& t1) {
  const int64_t t0 = ns_of(Steady::now());
  uint64_t run_ns = 0;
  uint64_t wait_ns = 0;
  std::ifstream ss(schedstat_);
  const bool have_ss = static_cast<bool>(ss >> run_ns >> wait_ns);
  nlohmann::json sample = timeseries_sample(node_, 0);
  t1 = ns_of(Steady::now());
  if (cpu_ >= 0) {
    const std::string cpu_tag = "cpu" + std::to_string(cpu_) + " ";
    std::ifstream st("/proc/stat");
    for (std::string line; std::getline(st, line);) {
      if (line.rfind(cpu_tag, 0) != 0) continue;
      std::istringstream fields(line.substr(cpu_tag.size()));
      uint64_t v[8] = {};
      for (uint64_t& x : v) fields >> x;
      sample["cpu"] = cpu_;
      sample["cpu_steal_s"] = static_cast<double>(v[7]) / static_cast<double>(sysconf(_SC_CLK_TCK));
      break;
    }
  }
  const int64_t mid = t0 + (t1 - t0) / 2;
  sample["t_s"] = static_cast<double>(mid - start_ns_) / 1e9;
  sample["t_mono_s"] = static_cast<double>(mid) / 1e9;
  sample["sample_us"] = static_cast<double>(t1 - t0) / 1e3;
  sample["late_us"] = static_cast<double>(t0 - due) / 1e3;
  if (have_ss) {
    sample["loop_cpu_s"] = static_cast<double>(run_ns) / 1e9;
    sample["loop_wait_s"] = static_cast<double>(wait_ns) / 1e9;
  }
  return sample;
}

// ---- 10. The data path -------------------------------------------------------
// Until every workload is finished (its traffic done and the peer's DONE
// received), its session failed, SIGINT, or --run-limit; then drained and
// released. Returns whether --run-limit ended it.
bool run_traffic(Datapath& dp) {
  const Options& o = dp.o;
  const TimeNs limit = o.run_limit_s > 0 ? dp.clock.now() + TimeNs(static_cast<int64_t>(o.run_limit_s * 1e9))
                                         : TimeNs::max();
  bool timed_out = false;
  Sampler sampler(o, dp.modes, dp.node);
  if (const std::string err = apply_thread_sched(dp.modes.sched); !err.empty()) {
    spdlog::warn("--sched {}: {}", o.sched, err);
  }
  // Sleeps until due wake within ~1 us rather than the default 50 us slack.
  if (dp.modes.idle.until_due) prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  dp.loop.run([&](TimeNs now) {
    if (dp.stopped()) return true;
    if (now >= limit) return timed_out = true;
    for (size_t i = 0; i < dp.wl.size(); ++i) {
      const bool over = dp.wl[i]->finished() || (dp.sessions[i]->ended() && dp.wl[i]->traffic_done());
      if (!over) return false;
    }
    return true;
  });
  dp.loop.drain(TimeNs::from_ms(100));
  dp.loop.release();
  return timed_out;
}

// ---- 11. Results -------------------------------------------------------------
// perftest's tables on stdout; the exit code.
int print_results(const Datapath& dp, bool timed_out) {
  int rc = 0;
  for (size_t i = 0; i < dp.wl.size(); ++i) {
    const Workload& w = *dp.wl[i];
    std::cout << perftest_text(w);
    if (w.result().failed) rc = 1;
    if (w.result().verify_errors > 0) {
      spdlog::error("workload {}: {} verify errors, first in message {}", w.config().name, w.result().verify_errors,
                    w.result().first_bad_message);
      rc = 1;
    }
    if (!w.finished()) {
      const std::string e = dp.sessions[i]->error();
      spdlog::warn("workload {}: not finished{}{}", w.config().name, e.empty() ? "" : ": ", e);
      if (!dp.stopped()) rc = 1;
    }
  }
  if (timed_out) {
    spdlog::error("--run-limit of {} s reached", dp.o.run_limit_s);
    rc = 1;
  }
  return rc;
}

// The real-time driver's own counters for --report: how often it iterated,
// and per port how often the io refused packets (back-pressure from the
// peer) and how long the line-rate shaper held transmit.
nlohmann::json loop_report(Datapath& dp) {
  nlohmann::json lp = nlohmann::json::array();
  for (size_t i = 0; i < dp.loop.num_ports(); ++i) {
    const dpdk::LoopPortCounters& c = dp.loop.counters(i);
    dpdk::Port& port = dp.ports.ports[i];
    lp.push_back({{"host", dp.ports.host(i).name},
                  {"port", dp.ports.node_ports[i].second},
                  {"rx_packets", c.rx_pkts},
                  {"rx_segments", c.rx_segs},
                  {"tx_packets", c.tx_pkts},
                  {"tx_retries", c.tx_retries},
                  {"tx_drops", c.tx_drops()},
                  {"shaper_held_ns", c.shaper_held.ns()},
                  {"burst_faults", port.burst_faults()},
                  {"burst_fault_pkts", port.burst_fault_pkts()}});
  }
  return {{"iterations", dp.loop.iterations()}, {"idle_sleeps", dp.loop.idle_sleeps()}, {"ports", lp}};
}

// ---- The sequence (STYLE G14) --------------------------------------------------
// The --report JSON, written once the node is gone so that the packet pool's
// use after every QP released its frames can be compared with its use at
// ready (ports open, nothing sent): a leak shows.
struct Report {
  std::optional<nlohmann::json> json;
  unsigned pool_in_use_at_ready = 0;
};

// Engine, loop, sessions, bring-up, data path, results: the workloads' life
// on a made node. Returns the exit code; fills `report` when --report asks.
int run_workloads(const Options& o, const Modes& m, NicPorts& ports, Nic& nic, rte_mempool* pool, Report& report,
                  EarlyReport& early) {
  Datapath dp(o, m, ports, nic);
  start_sessions(dp);
  report.pool_in_use_at_ready = rte_mempool_in_use_count(pool);
  app::touch_ready_file(o.ready_file);
  if (!bring_up(dp)) {
    // Failed before the data path (exchange, link, next hops, connect): the
    // report says what the node saw (each port's neighbours) and why.
    if (!o.report.empty()) {
      report.json = report_json(dp.node, dp.wl);
      (*report.json)["status"] = "failed";
      (*report.json)["error"] = early.first_error();
    }
    return 1;
  }
  g_ops->qps_ready();
  const bool timed_out = run_traffic(dp);
  const int rc = print_results(dp, timed_out);
  if (!o.report.empty()) {
    report.json = report_json(dp.node, dp.wl);
    (*report.json)["loop"] = loop_report(dp);
  }
  return rc;
}

// Node, telemetry, workloads, teardown: what runs between the ports' opening
// and their closing. Returns the exit code.
int serve(const Options& o, const Modes& m, const AppConfig& cfg, NicPorts& ports, rte_mempool* pool,
          app::MetricsServer& metrics, EarlyReport& early) {
  Report report;
  int rc = 1;
  {
    Nic nic;
    if (nic.make(o, cfg, pool)) {
      start_ops(*nic.node, metrics);
      rc = run_workloads(o, m, ports, nic, pool, report, early);
    }
    if (g_ops) g_ops->closing();
    metrics.stop();
  }  // the workloads, then the node
  if (report.json) {
    (*report.json)["mempool"] = {{"size", pool->size},
                                 {"in_use_at_ready", report.pool_in_use_at_ready},
                                 {"in_use_at_stop", rte_mempool_in_use_count(pool)}};
    std::ofstream(o.report) << report.json->dump(2) << "\n";
    early.written = true;
  }
  return rc;
}

// arguments -> config -> metrics port -> EAL -> mempool -> ports -> serve()
// -> teardown; SIGINT/SIGTERM stop it from the ports' opening on.
int run(int argc, char** argv) {
  const dpdk::SplitArgs args = dpdk::split_args(argc, argv);
  Options o;
  po::variables_map vm;
  if (auto rc = parse_options(argc, argv, args, o, vm)) return *rc;
  Modes modes;
  if (auto rc = check_options(o, modes)) return *rc;
  if (auto rc = refuse_perftest_modes(o, vm)) return *rc;
  AppConfig cfg;
  if (auto rc = load_config(o, vm, cfg)) return *rc;
  app::MetricsServer metrics;
  // Bound now, so a busy metrics port stops sf-nic before EAL.
  if (auto rc = app::listen_metrics_flags(metrics, o.metrics_addr, o.metrics_port, "sf-nic")) return *rc;
  EarlyReport early(o.report);  // --report also when the run fails before its results
  if (auto rc = start_eal(args, o, modes.sched)) return *rc;
  int rc = 0;
  {
    NicPorts ports(cfg);
    auto pool = create_pool(o, ports.node_ports.size());
    if (!pool) {
      spdlog::error("{}", pool.error());
      dpdk::cleanup_eal();
      return 1;
    }
    if (!ports.open(o, *pool)) rc = 1;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    if (rc == 0) rc = serve(o, modes, cfg, ports, *pool, metrics, early);
    // Teardown: Port::close() waits for the PMD work it leaves on EAL's
    // interrupt thread (memif's deferred socket cleanup) before the pool goes.
    ports.close();
    rte_mempool_free(*pool);
  }
  dpdk::cleanup_eal();
  return rc;
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
