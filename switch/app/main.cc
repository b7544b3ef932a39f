// sf-switch: the softfabric switch on DPDK ports. Startup (STYLE G14), one
// function a step, in run() and serve() at the end of this file:
// arguments (parse_options) -> config (load_plan) -> EAL, pdump (start_eal)
// -> mempool (create_pool) -> ports (open_ports) -> switch node, one shard
// per datapath lcore (make_switch) -> telemetry -> poll loops (make_loops,
// apply_links) -> control thread (ControlThread) -> forwarding (run_loops:
// shard 0 on the main lcore, the others on EAL worker lcores) -> report
// (add_port_report, log_report) -> teardown. SIGINT/SIGTERM stop it cleanly
// and the final counters are printed (human summary on stderr, one JSON
// line on stdout).
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_pdump.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/config/config_error.h"
#include "common/app/app_args.h"
#include "common/app/metrics_server.h"
#include "common/dpdk/clock.h"
#include "common/dpdk/eal.h"
#include "common/dpdk/mempool.h"
#include "common/dpdk/poll_loop.h"
#include "common/dpdk/port.h"
#include "switch/app/switch_metrics.h"
#include "switch/app/switch_stats.h"
#include "switch/app/telemetry.h"
#include "switch/config/switch_config.h"
#include "switch/pipeline/sharded_switch.h"
#include "switch/pipeline/switch_node.h"

namespace po = boost::program_options;
using namespace sf;

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

constexpr const char* kUsage = R"(sf-switch: the softfabric shared-buffer switch on DPDK ports.

Usage: sf-switch [EAL options] -- --config FILE [options]

The config is SONiC-style JSON (docs/config-reference.md): PORT (devargs,
speed, mtu), BUFFER_POOL / BUFFER_PROFILE / BUFFER_PG / BUFFER_QUEUE, the QoS
maps and PORT_QOS_MAP, WRED_PROFILE, SCHEDULER, QUEUE, STATIC_ROUTE + NEIGH,
FDB, SRV6, CREDIT_FC. A bad config stops sf-switch before anything starts, naming the
JSON path. Each port's `speed` is its line rate: the driver shapes transmit to
it, so a memif port behaves as a port of that speed.

EAL options come before `--`; sf-switch adds a unique --file-prefix (give your
own to attach dpdk-telemetry.py or dpdk-dumpcap) and falls back to --no-huge.

Datapath lcores: one by default (the main lcore polls every port). With
--shards N the ports are split over N lcores (contiguous groups in config
order, or --shard-map), each polling only its own ports; give EAL at least N
lcores (-l 0-1 for 2). Only the buffer pool counters and the FDB are shared.

While it runs:
  dpdk-telemetry.py -f PREFIX   then /softfabric/switch/ports, /softfabric/switch/port,0,
                                /softfabric/switch/buffer, /softfabric/switch/fdb,
                                /softfabric/switch/credit,0 (CREDIT_FC ports),
                                /softfabric/switch/port_admin,Ethernet0,down (or up),
                                /softfabric/switch/port_blackhole,Ethernet0,on (or off),
                                /softfabric/switch/port_loss,Ethernet0,0.01, /softfabric/switch/reset
Port state: PORT.admin_status "down" starts a port down; a port whose link is
down (memif peer not connected) or admin down gets no flooded or ECMP copies
and its queues are flushed (drop cause link_down) when it goes down.
  dpdk-dumpcap --file-prefix PREFIX -i 0 -w cap.pcapng   (start sf-switch with --capture;
                                needs huge pages)

Examples:
  sf-switch --file-prefix sw -- --config config/switch/seed000-static-lossless.json
  sf-switch -- --config sw.json --port Ethernet0=net_ring0 --port Ethernet4=net_ring1 --stats-interval 1
  sf-switch -l 0-1 -- --config sw.json --shards 2     (Ethernet0/4 on lcore 0, Ethernet8/12 on lcore 1)

Options)";

struct Options {
  std::string config;
  std::vector<std::string> port_overrides;
  bool unshaped = false;
  bool backoff = false;
  bool capture = false;
  double stats_interval_s = 0;
  std::string timeseries;
  uint32_t ts_period_ms = 100;
  double shaper_burst_us = 0;
  double duration_s = 0;
  double link_wait_s = 0;
  uint16_t rx_desc = 1024, tx_desc = 1024;
  uint16_t burst = dpdk::kMaxBurst;
  std::string ready_file;
  std::string report;
  std::string log_level = "info";
  uint16_t shards = 1;
  std::string shard_map;
  uint16_t metrics_port = 0;
  std::string metrics_addr;  // empty: 127.0.0.1
};

po::options_description describe(Options& o) {
  po::options_description d(kUsage);
  d.add_options()
    ("help,h", "this help")
    ("config", po::value(&o.config)->required(), "switch config (JSON)")
    ("port", po::value(&o.port_overrides), "NAME=DEVARGS: open port NAME on these devargs instead of PORT.NAME.devargs (repeatable)")
    ("shaper-burst-us", po::value(&o.shaper_burst_us)->default_value(0), "shaper bucket per port in microseconds of its rate (0 = max(16 KiB, 20 us)); raise it on shared cores so a descheduled switch can catch up")
    ("unshaped", po::bool_switch(&o.unshaped), "do not shape transmit to the ports' speeds (benchmarks)")
    ("capture", po::bool_switch(&o.capture), "let dpdk-dumpcap / dpdk-pdump attach (pdump server; keeps huge page files while running)")
    ("backoff", po::bool_switch(&o.backoff), "idle back-off (pause, then sleep up to 200 us) to share cores with other processes")
    ("stats-interval", po::value(&o.stats_interval_s)->default_value(0), "print per-port rates, queue depth, marks and drops every N seconds (0 = off)")
    ("timeseries", po::value(&o.timeseries), "append one JSON line per sample (queue depth, marks, drops, bytes) to this file")
    ("ts-period-ms", po::value(&o.ts_period_ms)->default_value(100), "time-series sample period")
    ("duration", po::value(&o.duration_s)->default_value(0), "stop after this many seconds (0 = until SIGINT/SIGTERM)")
    ("link-wait-s", po::value(&o.link_wait_s)->default_value(0), "wait up to this long for every link (memif peer, NIC) before forwarding (0 = forward at once)")
    ("rx-desc", po::value(&o.rx_desc)->default_value(1024), "rx descriptors per port")
    ("tx-desc", po::value(&o.tx_desc)->default_value(1024), "tx descriptors per port")
    ("burst", po::value(&o.burst)->default_value(dpdk::kMaxBurst), "packets per rx burst and most packets sent per port per loop iteration, 1-64 (DPDK apps' custom: 32)")
    ("ready-file", po::value(&o.ready_file), "create this file once the ports are up (for orchestration)")
    ("report", po::value(&o.report), "also write the final counters (JSON) to this file")
    ("log-level", po::value(&o.log_level)->default_value("info"), "debug | info | warn | error")
    ("shards", po::value(&o.shards)->default_value(1), "datapath lcores (shards): ports split into N contiguous groups in config order, one poll loop per EAL lcore (EAL -l needs N lcores); 1 = one lcore polls every port")
    ("shard-map", po::value(&o.shard_map), "the shard of each port in config order, e.g. 0,1,0,1 (sets the number of shards)")
    ("metrics-port", po::value(&o.metrics_port)->default_value(0), "serve Prometheus metrics on this TCP port at /metrics (0 = off; docs/ops.md)")
    ("metrics-addr", po::value(&o.metrics_addr), "IPv4 or IPv6 address the metrics endpoint listens on (default 127.0.0.1; needs --metrics-port)");
  return d;
}

// Console line per port: rates since the last print, instantaneous depth.
void print_stats(const sw::SwitchView& v, const sw::SwitchConfig& cfg, std::vector<sw::PortCounters>& last,
                 double dt_s, double t_s) {
  std::string line = fmt::format("t={:6.1f}s", t_s);
  for (PortId p = 0; p < v.num_ports(); ++p) {
    const sw::SwitchNode& node = v.owner(p);
    const sw::PortCounters c = v.counters(p);
    const sw::PortCounters& l = last[p];
    uint64_t depth = 0, marks = 0;
    for (uint8_t q = 0; q < sw::kNumQueues; ++q) {
      depth += node.queue_bytes(p, q);
      marks += c.queues[q].ecn_marked - l.queues[q].ecn_marked;
    }
    line += fmt::format(" | {}{} rx {:6.2f} tx {:6.2f} Gb/s q {:7.1f} KB mark {:5} drop {:5}", cfg.ports.ports[p].name,
                        v.num_shards() > 1 ? fmt::format(" (shard {})", v.shard_of(p)) : "",
                        static_cast<double>(c.rx_bytes - l.rx_bytes) * 8 / dt_s / 1e9,
                        static_cast<double>(c.tx_bytes - l.tx_bytes) * 8 / dt_s / 1e9,
                        static_cast<double>(depth) / 1e3, marks, c.dropped - l.dropped);
    last[p] = c;
  }
  if (v.sharded() != nullptr && v.num_shards() > 1) {
    for (uint16_t s = 0; s < v.num_shards(); ++s) {
      const sw::ShardCounters& sc = v.sharded()->shard_counters(s);
      line += fmt::format(" | shard {} to/from other shards {}/{} pkts", s, sc.forwarded, sc.received);
    }
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

// One shard's poll loop on an EAL worker lcore.
using Loop = dpdk::PollLoop<dpdk::Port, dpdk::TscClock>;
struct WorkerArgs {
  Loop* loop = nullptr;
  TimeNs duration = TimeNs::max();
};
int worker_main(void* arg) {
  auto* w = static_cast<WorkerArgs*>(arg);
  w->loop->run([&](TimeNs now) { return g_stop.load(std::memory_order_relaxed) || now >= w->duration; });
  return 0;
}

// ---- 1. Arguments ----------------------------------------------------------
// Parses and checks the flags (a flag another one would silently override is
// refused: "honoured or refused") and binds the metrics port, so that a busy
// one stops sf-switch before EAL. nullopt: go on; else the exit code.
std::optional<int> parse_options(int argc, char** argv, const dpdk::SplitArgs& args, Options& o,
                                 app::MetricsServer& metrics) {
  const po::options_description desc = describe(o);
  po::variables_map vm;
  if (auto rc = app::parse_app_args(argc, argv, args.app, desc, "sf-switch", &vm)) return *rc;
  if (!app::first_given(vm, {"shards"}).empty() && !app::first_given(vm, {"shard-map"}).empty()) {
    std::cerr << "sf-switch: give --shards or --shard-map, not both (--shard-map sets the number of shards)\n";
    return 2;
  }
  if (o.unshaped && !app::first_given(vm, {"shaper-burst-us"}).empty()) {
    std::cerr << "sf-switch: --shaper-burst-us does not apply with --unshaped (no shaper)\n";
    return 2;
  }
  if (o.timeseries.empty() && !app::first_given(vm, {"ts-period-ms"}).empty()) {
    std::cerr << "sf-switch: --ts-period-ms needs --timeseries\n";
    return 2;
  }
  if (o.burst == 0 || o.burst > dpdk::kMaxBurst) {
    std::cerr << "sf-switch: --burst must be 1-" << dpdk::kMaxBurst << " (got " << o.burst << ")\n";
    return 2;
  }
  if (o.ts_period_ms == 0 || o.stats_interval_s < 0 || o.duration_s < 0 || o.shaper_burst_us < 0) {
    std::cerr << "sf-switch: --ts-period-ms must be > 0; --stats-interval, --duration, --shaper-burst-us >= 0\n";
    return 2;
  }
  if (!app::set_log_level(o.log_level, "sf-switch")) return 2;
  if (o.metrics_port != 0) {
    if (o.metrics_addr.empty()) o.metrics_addr = "127.0.0.1";
    if (const std::string err = metrics.listen(o.metrics_addr, o.metrics_port); !err.empty()) {
      std::cerr << "sf-switch: --metrics-port: cannot listen on " << err << "\n";
      return 2;
    }
  } else if (!o.metrics_addr.empty()) {
    std::cerr << "sf-switch: --metrics-addr needs --metrics-port\n";
    return 2;
  }
  return std::nullopt;
}

// ---- 2. Config ---------------------------------------------------------------
// What the config and the flags decide before anything starts.
struct Plan {
  sw::SwitchConfig cfg;
  std::vector<std::string> devargs;     // per port, --port overrides applied
  std::vector<uint16_t> shard_of_port;  // which datapath lcore polls each port
  uint16_t nshards = 1;
  uint32_t nports() const { return static_cast<uint32_t>(cfg.ports.ports.size()); }
};

// Which shard polls each port (--shard-map, or --shards contiguous groups);
// nullopt after a message on stderr when the flags are refused.
std::optional<std::vector<uint16_t>> plan_shards(const Options& o, uint16_t nports) {
  if (!o.shard_map.empty()) {
    std::string err;
    std::vector<uint16_t> map = sw::ShardedSwitch::parse_map(o.shard_map, nports, &err);
    if (map.empty()) {
      std::cerr << "sf-switch: --shard-map: " << err << "\n";
      return std::nullopt;
    }
    return map;
  }
  if (o.shards < 1 || (o.shards > 1 && o.shards > std::min<uint16_t>(nports, sw::kMaxShards))) {
    std::cerr << "sf-switch: --shards " << o.shards << ": want 1.." << std::min<uint16_t>(nports, sw::kMaxShards)
              << " (at most one shard per port, at most " << sw::kMaxShards << ")\n";
    return std::nullopt;
  }
  return sw::ShardedSwitch::even_split(nports, o.shards);
}

// The config, validated, and what the flags make of it. nullopt: go on.
std::optional<int> load_plan(const Options& o, Plan& plan) {
  try {
    plan.cfg = sw::load_switch_config(o.config);
  } catch (const config::ConfigError& e) {
    // File-level errors already name the file; schema errors name the JSON path.
    const bool names_file = e.path().rfind(o.config, 0) == 0;
    std::cerr << "sf-switch: " << (names_file ? "" : o.config + ": ") << e.what() << "\n";
    return 2;
  }
  for (const auto& p : plan.cfg.ports.ports) plan.devargs.push_back(p.devargs);
  for (const std::string& ov : o.port_overrides) {
    const size_t eq = ov.find('=');
    const int idx = eq == std::string::npos ? -1 : plan.cfg.ports.find(ov.substr(0, eq));
    if (idx < 0) {
      std::cerr << "sf-switch: --port " << ov << ": want NAME=DEVARGS with NAME a port of the config\n";
      return 2;
    }
    plan.devargs[static_cast<size_t>(idx)] = ov.substr(eq + 1);
  }
  auto shards = plan_shards(o, static_cast<uint16_t>(plan.nports()));
  if (!shards) return 2;
  plan.shard_of_port = std::move(*shards);
  const std::vector<uint16_t>& map = plan.shard_of_port;
  plan.nshards = map.empty() ? 1 : *std::max_element(map.begin(), map.end()) + 1;
  for (uint16_t s = 0; s < plan.nshards; ++s) {
    if (static_cast<size_t>(std::count(map.begin(), map.end(), s)) > Loop::kMaxPorts) {
      std::cerr << "sf-switch: at most " << Loop::kMaxPorts << " ports per lcore (shard " << s << ")\n";
      return 2;
    }
  }
  return std::nullopt;
}
// ---- 3. EAL ------------------------------------------------------------------
// EAL, then pdump so dpdk-dumpcap can attach; refuses too few lcores for the
// shards. nullopt: go on (`eal` set).
std::optional<int> start_eal(const dpdk::SplitArgs& args, const Options& o, uint16_t nshards,
                             std::optional<dpdk::EalInfo>& eal, bool& pdump) {
  dpdk::EalOptions eal_opts;
  eal_opts.huge_unlink = !o.capture;  // secondary processes map the primary's huge page files
  auto r = dpdk::init_eal(args.eal, eal_opts);
  if (!r) {
    spdlog::error("{}", r.error());
    return 1;
  }
  eal = std::move(*r);
  spdlog::info("EAL up: file prefix {} ({})", eal->file_prefix, eal->no_huge ? "no huge pages" : "huge pages");
  pdump = o.capture && !eal->no_huge;
  if (o.capture && eal->no_huge) spdlog::warn("capture: needs huge pages; dpdk-dumpcap cannot attach to --no-huge");
  if (pdump && rte_pdump_init() != 0) spdlog::warn("pdump: rte_pdump_init failed; capture unavailable");
  if (rte_lcore_count() < nshards) {
    std::cerr << "sf-switch: " << nshards << " shards need " << nshards << " EAL lcores, EAL has "
              << rte_lcore_count() << ": give EAL -l with " << nshards << " lcores (e.g. -l 0-" << nshards - 1
              << ")\n";
    return 2;
  }
  return std::nullopt;
}

// ---- 4. Mempool and 5. ports -------------------------------------------------
// Descriptors, caches, loop buffers, and what the switch can hold (one mbuf
// per buffered packet, at most one per cell).
dpdk::Result<rte_mempool*> create_pool(const Options& o, const Plan& plan) {
  dpdk::MempoolSizing sz;
  sz.ports = plan.nports();
  sz.rx_desc = o.rx_desc;
  sz.tx_desc = o.tx_desc;
  sz.extra = static_cast<uint32_t>(std::min<uint64_t>(plan.cfg.mmu.total_bytes / plan.cfg.mmu.cell_bytes, 65536));
  return dpdk::create_pktmbuf_pool("sf_switch", sz, RTE_MBUF_DEFAULT_BUF_SIZE);
}

// The ports in config order (PortId i = PORT entry i); false when one fails
// to open (those opened so far stay in `ports`, closed by the teardown).
bool open_ports(const Options& o, const Plan& plan, rte_mempool* pool, std::vector<dpdk::Port>& ports) {
  for (uint32_t i = 0; i < plan.nports(); ++i) {
    dpdk::PortConfig pc;
    pc.devargs = plan.devargs[i];
    pc.rx_desc = o.rx_desc;
    pc.tx_desc = o.tx_desc;
    pc.mtu = static_cast<uint16_t>(plan.cfg.ports.ports[i].mtu_bytes);
    pc.mtu_best_effort = true;
    pc.link_wait = dpdk::LinkWait::kSkip;
    auto p = dpdk::Port::open(pc, pool);
    if (!p) {
      spdlog::error("{}: {}", plan.cfg.ports.ports[i].name, p.error());
      return false;
    }
    if (!p->mtu_note().empty()) spdlog::warn("{}: {}", plan.cfg.ports.ports[i].name, p->mtu_note());
    ports.push_back(std::move(*p));
  }
  return true;
}

// ---- 6. Switch node and poll loops -------------------------------------------
// The switch (its shards), one poll loop per shard and which lcore runs it.
struct Datapath {
  std::unique_ptr<sw::ShardedSwitch> node;  // one shard: exactly the one-lcore SwitchNode
  dpdk::TscClock clock;                     // one time base for every shard (now() reads only)
  std::vector<std::unique_ptr<Loop>> loops;
  std::vector<size_t> loop_index;       // port -> its index in its shard's loop
  std::vector<unsigned> lcore_of_shard;
  std::vector<uint8_t> link_seen;       // link state last applied, per port (the control thread's)
};

// The switch node; router MACs from the config or the device. nullptr after a logged error.
std::unique_ptr<sw::ShardedSwitch> make_switch(const Plan& plan, const std::vector<dpdk::Port>& ports,
                                               rte_mempool* pool) {
  std::vector<std::array<uint8_t, 6>> macs;
  for (uint32_t i = 0; i < plan.nports(); ++i) {
    macs.push_back(plan.cfg.ports.ports[i].mac ? plan.cfg.ports.ports[i].mac->bytes : ports[i].mac());
  }
  try {
    return std::make_unique<sw::ShardedSwitch>(plan.cfg, macs, pool, plan.shard_of_port);
  } catch (const std::exception& e) {
    spdlog::error("switch setup: {}", e.what());
    return nullptr;
  }
}

// One loop per shard (shard 0 on the main lcore, the others on EAL workers),
// each port added to its shard's loop with its shaper.
void make_loops(const Options& o, const Plan& plan, std::vector<dpdk::Port>& ports, Datapath& dp) {
  dpdk::LoopOptions lo;
  lo.backoff.enabled = o.backoff;
  lo.burst = o.burst;
  lo.byte_counters = false;  // the switch node counts bytes per port and queue (its reports read those)
  for (uint16_t s = 0; s < plan.nshards; ++s) dp.loops.push_back(std::make_unique<Loop>(dp.clock, lo));
  dp.loop_index.assign(plan.nports(), 0);
  dp.lcore_of_shard.assign(plan.nshards, rte_get_main_lcore());
  unsigned lc = 0;
  uint16_t next = 1;
  RTE_LCORE_FOREACH_WORKER(lc) {
    if (next < plan.nshards) dp.lcore_of_shard[next++] = lc;
  }
  for (uint32_t i = 0; i < plan.nports(); ++i) {
    const auto& pcfg = plan.cfg.ports.ports[i];
    dpdk::LoopPortOptions lpo;
    lpo.rate = o.unshaped ? BitRate(0) : pcfg.speed;
    if (o.shaper_burst_us > 0) {
      lpo.burst_bytes = lpo.rate.bytes_in(TimeNs(static_cast<int64_t>(o.shaper_burst_us * 1e3)));
    }
    const uint16_t s = plan.shard_of_port[i];
    if (auto r = dp.loops[s]->add_port(ports[i], dp.node->shard_node(s), static_cast<PortId>(i), lpo); !r) {
      spdlog::error("{}", r.error());
    } else {
      dp.loop_index[i] = *r;
    }
    spdlog::info("port {} = {} ({}), {} Gb/s{}, mtu {}{}", i, pcfg.name, ports[i].driver(), pcfg.speed_gbps,
                 o.unshaped ? " unshaped" : "", ports[i].mtu(),
                 plan.nshards > 1 ? fmt::format(", shard {} (lcore {})", s, dp.lcore_of_shard[s]) : "");
  }
}

// Link state as the driver reports it now (PORT admin_status is the node's
// from its config); afterwards the control thread polls it.
void apply_links(const Plan& plan, std::vector<dpdk::Port>& ports, Datapath& dp) {
  dp.link_seen.assign(plan.nports(), 0);
  for (uint16_t s = 0; s < plan.nshards; ++s) {
    dp.node->shard(s).set_link_probe(
        [](void* ctx, PortId p) { return (*static_cast<std::vector<dpdk::Port>*>(ctx))[p].link_up(); }, &ports);
  }
  for (uint32_t i = 0; i < plan.nports(); ++i) {
    dp.link_seen[i] = ports[i].link_up() ? 1 : 0;
    dp.node->shard(plan.shard_of_port[i]).set_port_link(static_cast<PortId>(i), dp.link_seen[i] != 0, dp.clock.now());
    if (!plan.cfg.ports.ports[i].admin_up) spdlog::info("{}: admin_status down", plan.cfg.ports.ports[i].name);
  }
}

// ---- 7. Control thread -------------------------------------------------------
// Console and time series (reads counters only), link state every 10 ms
// (rte_eth_link_get_nowait) posted to the port's shard as a request (applied
// on its lcore), PFC watchdog events as they happen.
class ControlThread {
 public:
  ControlThread(const Options& o, const Plan& plan, std::vector<dpdk::Port>& ports, Datapath& dp,
                const sw::SwitchView& view)
      : o_(o), plan_(plan), ports_(ports), dp_(dp), view_(view), thread_([this] { loop(); }) {}
  ~ControlThread() { stop(); }
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

 private:
  void loop();
  void poll_links();
  void report_watchdog(uint64_t& seen);
  const Options& o_;
  const Plan& plan_;
  std::vector<dpdk::Port>& ports_;
  Datapath& dp_;
  const sw::SwitchView& view_;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts once the members above are set
};

void ControlThread::loop() {
  constexpr uint32_t kLinkPollMs = 10;
  std::ofstream ts;
  if (!o_.timeseries.empty()) ts.open(o_.timeseries, std::ios::app);
  std::vector<sw::PortCounters> last(plan_.nports());
  const auto start = std::chrono::steady_clock::now();
  auto next_ts = start;
  auto next_stats = start + std::chrono::duration<double>(o_.stats_interval_s);
  auto last_stats = start;
  uint64_t wd_seen = 0;
  while (!stop_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<uint32_t>(o_.ts_period_ms, kLinkPollMs)));
    const auto now = std::chrono::steady_clock::now();
    poll_links();
    const double t = std::chrono::duration<double>(now - start).count();
    if (ts.is_open() && now >= next_ts) {
      ts << sw::timeseries_sample(view_, plan_.cfg, t).dump() << "\n";
      ts.flush();
      next_ts += std::chrono::milliseconds(o_.ts_period_ms);
    }
    report_watchdog(wd_seen);
    if (o_.stats_interval_s > 0 && now >= next_stats) {
      print_stats(view_, plan_.cfg, last, std::chrono::duration<double>(now - last_stats).count(), t);
      last_stats = now;
      next_stats += std::chrono::duration<double>(o_.stats_interval_s);
    }
  }
}

void ControlThread::poll_links() {
  for (uint32_t i = 0; i < plan_.nports(); ++i) {
    const uint8_t up = ports_[i].link_up() ? 1 : 0;
    if (up == dp_.link_seen[i]) continue;
    dp_.link_seen[i] = up;
    spdlog::info("{}: link {}", plan_.cfg.ports.ports[i].name, up != 0 ? "up" : "down");
    dp_.node->owner(static_cast<PortId>(i)).port_requests().request(static_cast<PortId>(i),
                                                                    sw::PortStates::Field::kLink, up != 0);
  }
}

// Storms and restorations as they happen (counters only; the event log
// itself is printed after the datapath stopped).
void ControlThread::report_watchdog(uint64_t& seen) {
  const uint64_t ev = dp_.node->pfc_wd_events();
  if (ev == seen) return;
  std::string stormed;
  for (uint32_t i = 0; i < plan_.nports(); ++i) {
    const sw::PfcWatchdog* wd = dp_.node->owner(static_cast<PortId>(i)).pfc_wd(static_cast<PortId>(i));
    if (wd != nullptr && wd->stormed() != 0) {
      stormed += " " + plan_.cfg.ports.ports[i].name + " queues 0x" + fmt::format("{:02x}", wd->stormed());
    }
  }
  spdlog::warn("PFC watchdog: {} storm/restore event(s) so far; stormed now:{}", ev, stormed.empty() ? " none" : stormed);
  seen = ev;
}

// ---- 8. Poll loops -----------------------------------------------------------
// Ready once the ports exist (memif clients can connect); links come up as
// peers arrive, and forwarding does not wait for them unless --link-wait-s.
void signal_ready(const Options& o, std::vector<dpdk::Port>& ports) {
  if (!o.ready_file.empty()) {
    if (FILE* f = std::fopen(o.ready_file.c_str(), "w"); f != nullptr) std::fclose(f);
  }
  if (o.link_wait_s > 0) {
    for (auto& p : ports) {
      if (auto st = p.wait_link_up(TimeNs(static_cast<int64_t>(o.link_wait_s * 1e9))); !st) spdlog::warn("{}", st.error());
    }
  }
}

// Shard 0's loop on this lcore, the others on their workers, until
// SIGINT/SIGTERM or --duration; then every loop drained and released.
// Returns the packets still queued for transmit when the drain gave up.
uint32_t run_loops(const Options& o, const Plan& plan, Datapath& dp) {
  spdlog::info("forwarding on {} port(s), {} datapath lcore(s); SIGINT/SIGTERM to stop", plan.nports(), plan.nshards);
  const TimeNs duration = o.duration_s > 0 ? TimeNs(static_cast<int64_t>(o.duration_s * 1e9)) : TimeNs::max();
  std::vector<WorkerArgs> workers(plan.nshards);
  for (uint16_t s = 1; s < plan.nshards; ++s) {
    workers[s] = WorkerArgs{dp.loops[s].get(), duration};
    if (rte_eal_remote_launch(worker_main, &workers[s], dp.lcore_of_shard[s]) != 0) {
      spdlog::error("shard {}: cannot launch on lcore {}; stopping", s, dp.lcore_of_shard[s]);
      g_stop.store(true);
    }
  }
  dp.loops[0]->run([&](TimeNs now) { return g_stop.load(std::memory_order_relaxed) || now >= duration; });
  g_stop.store(true);  // the other shards stop with the main one
  for (uint16_t s = 1; s < plan.nshards; ++s) rte_eal_wait_lcore(dp.lcore_of_shard[s]);
  uint32_t left = 0;
  for (auto& l : dp.loops) {
    left += l->drain(TimeNs::from_ms(100));
    l->release();
  }
  return left;
}

// ---- 9. Report ---------------------------------------------------------------
// The final counters: one JSON line on stdout (and --report), the human
// summary on stderr. `report` is switch_snapshot() plus what the app adds.
void add_port_report(nlohmann::json& report, const Plan& plan, std::vector<dpdk::Port>& ports, const Datapath& dp) {
  for (uint32_t i = 0; i < plan.nports(); ++i) {
    nlohmann::json& rp = report["ports"][i];
    rp["driver_tx_drops"] = dp.loops[plan.shard_of_port[i]]->counters(dp.loop_index[i]).tx_drops();
    // memif bursts abandoned when the peer left inside them (burst_guard.h), and the
    // tx packets lost with them (within tx_packets, like driver_tx_drops).
    rp["burst_faults"] = ports[i].burst_faults();
    rp["burst_fault_pkts"] = ports[i].burst_fault_pkts();
    rp["burst_fault_leaked_mbufs"] = ports[i].burst_fault_leaked_mbufs();
    rp["burst_fault_inexact"] = ports[i].burst_fault_inexact();
    // What the device lost before the switch saw it (rx ring overflow, no mbuf).
    if (auto st = ports[i].stats(); st) {
      rp["device"] = {{"rx_missed", st->rx_missed}, {"rx_errors", st->rx_errors},
                      {"rx_nombuf", st->rx_nombuf}, {"tx_errors", st->tx_errors}};
    }
  }
}

void log_report(const nlohmann::json& report, const Plan& plan, const Datapath& dp) {
  for (uint16_t s = 0; s < plan.nshards; ++s) {
    for (const sw::SwitchNode::PfcWdLogEntry& e : dp.node->shard(s).pfc_wd_log()) {
      spdlog::warn("PFC watchdog: {} {} queue {} at {:.3f} ms", e.storm ? "storm on" : "restored",
                   plan.cfg.ports.ports[e.port].name, e.queue, static_cast<double>(e.at.ns()) / 1e6);
    }
  }
  if (plan.nshards > 1) {
    for (const auto& sh : report["shards"]) {
      spdlog::info("shard {} (lcore {}, {}): {} packets to other shards, {} from them, {} / {} release notes "
                   "sent / received (of them {} / {} CREDIT_FC slot notes), {} ring-full drops, {} notes refused",
                   sh["shard"].get<int>(), dp.lcore_of_shard[sh["shard"].get<size_t>()], sh["ports"].dump(),
                   sh["forwarded"].get<uint64_t>(), sh["received"].get<uint64_t>(),
                   sh["releases_sent"].get<uint64_t>(), sh["releases_received"].get<uint64_t>(),
                   sh["credit_notes_sent"].get<uint64_t>(), sh["credit_notes_received"].get<uint64_t>(),
                   sh["ring_full"].get<uint64_t>(), sh["release_ring_full"].get<uint64_t>());
    }
  }
  for (const auto& p : report["ports"]) {
    spdlog::info("{}: rx {} pkts, tx {} pkts, dropped {} {}", p["name"].get<std::string>(),
                 p["rx_packets"].get<uint64_t>(), p["tx_packets"].get<uint64_t>(), p["dropped"].get<uint64_t>(),
                 p["drops"].dump());
  }
}

// ---- The sequence (STYLE G14) --------------------------------------------------
// Switch node, telemetry, loops, control thread, forwarding, report: what runs
// between the ports' opening and their closing. Returns the exit code.
int serve(const Options& o, const Plan& plan, const dpdk::EalInfo& eal, rte_mempool* pool,
          std::vector<dpdk::Port>& ports, app::MetricsServer& metrics) {
  Datapath dp;
  dp.node = make_switch(plan, ports, pool);
  if (!dp.node) return 1;
  const sw::SwitchView view(*dp.node);
  if (!register_switch_telemetry(view, plan.cfg)) spdlog::warn("telemetry: commands not registered");
  if (metrics.listening()) {
    metrics.serve([&view, &plan] { return sw::switch_metrics(view, plan.cfg); });
    spdlog::info("metrics: http://{}:{}/metrics", o.metrics_addr, metrics.port());
  }
  make_loops(o, plan, ports, dp);
  apply_links(plan, ports, dp);
  ControlThread ctl(o, plan, ports, dp, view);
  // The packet pool's use with the ports open and nothing received: the
  // final report compares the use after the drain with it (a leak shows).
  const unsigned pool_in_use_at_ready = rte_mempool_in_use_count(pool);
  signal_ready(o, ports);
  const uint32_t left = run_loops(o, plan, dp);
  ctl.stop();
  metrics.stop();

  nlohmann::json report = sw::switch_snapshot(view, plan.cfg);
  report["tx_left_at_stop"] = left;
  report["no_huge"] = eal.no_huge;
  // After the drain and release every packet is back unless one leaked
  // (the memif PMD holds no mbufs between bursts).
  report["mempool"] = {{"size", pool->size},
                       {"in_use_at_ready", pool_in_use_at_ready},
                       {"in_use_at_stop", rte_mempool_in_use_count(pool)}};
  add_port_report(report, plan, ports, dp);
  log_report(report, plan, dp);
  std::cout << report.dump() << std::endl;
  if (!o.report.empty()) std::ofstream(o.report) << report.dump(2) << "\n";
  dp.node.reset();
  return 0;
}

// arguments -> config -> EAL -> mempool -> ports -> serve() -> teardown.
int run(int argc, char** argv) {
  const dpdk::SplitArgs args = dpdk::split_args(argc, argv);
  Options o;
  app::MetricsServer metrics;
  if (auto rc = parse_options(argc, argv, args, o, metrics)) return *rc;
  Plan plan;
  if (auto rc = load_plan(o, plan)) return *rc;
  std::optional<dpdk::EalInfo> eal;
  bool pdump = false;
  if (auto rc = start_eal(args, o, plan.nshards, eal, pdump)) {
    if (eal) dpdk::cleanup_eal();
    return *rc;
  }
  int rc = 0;
  {
    auto pool = create_pool(o, plan);
    if (!pool) {
      spdlog::error("{}", pool.error());
      dpdk::cleanup_eal();
      return 1;
    }
    std::vector<dpdk::Port> ports;
    if (!open_ports(o, plan, *pool, ports)) rc = 1;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    if (rc == 0) rc = serve(o, plan, *eal, *pool, ports, metrics);
    // Teardown. Stop capture before the ports go; Port::close() waits for
    // the PMD work it leaves on EAL's interrupt thread (memif's deferred
    // socket cleanup) before EAL unmaps the memory it uses.
    if (pdump) rte_pdump_uninit();
    for (auto& p : ports) p.close();
    rte_mempool_free(*pool);
  }
  // After dpdk-dumpcap attached, DPDK 22.11's teardown (rte_eal_cleanup and
  // the drivers' exit-time destructors) can crash racing EAL's interrupt
  // thread: with --capture, remove our files and leave without running them.
  dpdk::cleanup_eal(!pdump);
  if (pdump) {
    std::fflush(nullptr);
    std::_Exit(rc);
  }
  return rc;
}
}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
