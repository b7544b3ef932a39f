// sf-pktio: runs the real-time driver (common/dpdk PollLoop) with a simple
// node over 1-2 ports: gen | sink | fwd | echo. The integration smoke target.
// Startup order (STYLE G14), one function a step (run() and serve() at the
// end of this file): parse_options -> EAL -> create_pool -> open_ports (and
// the link wait) -> make_node -> loop (Session: when to stop) -> report ->
// teardown.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <boost/program_options.hpp>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <sys/stat.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/app/app_args.h"
#include "common/dpdk/clock.h"
#include "common/dpdk/eal.h"
#include "common/dpdk/mempool.h"
#include "common/dpdk/poll_loop.h"
#include "common/dpdk/port.h"
#include "tools/sf-pktio/pktio_nodes.h"

namespace po = boost::program_options;
namespace app = sf::app;
using sf::TimeNs;
using namespace sf::dpdk;

namespace {

std::atomic<bool> g_stop{false};
constexpr int kInterruptedExit = 130;  // a signal before the loop ran (128 + SIGINT, as sf-lab)
extern "C" void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

constexpr const char* kUsage = R"(sf-pktio: packet I/O smoke tool for the softfabric real-time driver.

Usage: sf-pktio [EAL options] -- --mode MODE [--port DEVARGS]... [options]

EAL options come before `--` (DPDK custom); sf-pktio adds a unique
--file-prefix and falls back to --no-huge when no huge pages are free.
Ports are opened from devargs (hotplugged), or, without --port, every port
created by --vdev / -a is used.

Modes:
  gen    send frames of --size bytes carrying a sequence number and a
         checksummed payload, at --rate-gbps (0 = as fast as possible),
         --count frames per port (0 = until --duration / SIGINT)
  sink   count and verify gen frames (sequence, length, payload, multi-seg)
  fwd    forward port 0 <-> port 1 (or back out of the only port)
  echo   like fwd on one port, swapping MAC addresses
fwd reads a port only while its queue toward the other port has room (a
replayed pcap is paced by the shaper, never dropped in sf-pktio's queue) and
reads at most --count frames. On exit (end of count/duration, --expect
reached, --idle-exit-ms, SIGINT or SIGTERM) one JSON line with the results is
printed on stdout; a sink first keeps reading until its ports were idle for
--stop-drain-ms, so frames already in a memif ring are counted, not lost.
Its "mempool" {size, in_use_at_ready, in_use_at_stop} is the packet pool's
use when the loop started and after the drain: equal unless an mbuf leaked.

Examples:
  # 10G-shaped generator into a memif server sink in another process:
  sf-pktio --vdev=net_memif0,role=server,socket=/tmp/m.sock -- --mode sink --expect 100000 --backoff
  sf-pktio --vdev=net_memif0,role=client,socket=/tmp/m.sock -- --mode gen --size 1500 --rate-gbps 10 --count 100000
  # replay a pcap and capture what comes back:
  sf-pktio -- --mode fwd --port net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap --idle-exit-ms 200
  # forward between two AF_XDP ports:
  sf-pktio -- --mode fwd --port net_af_xdp0,iface=veth0 --port net_af_xdp1,iface=veth1

Options)";

struct Options {
  std::string mode;
  std::vector<std::string> ports;
  uint32_t size = 60;
  double rate_gbps = 0;
  uint64_t burst_bytes = 0;
  uint64_t count = 0;
  double duration_s = 0;
  uint64_t expect = 0;
  uint32_t idle_exit_ms = 0;
  double link_wait_s = 5;
  uint32_t linger_ms = 200;
  uint16_t rx_desc = 1024, tx_desc = 1024, mtu = 0;
  bool backoff = false;
  bool tx_only = false;
  std::string log_level = "info";
  std::string ready_file;
  std::string start_file;
  uint32_t stop_drain_ms = 100;
  uint16_t flow_sport_base = 0;
  std::string timeseries;
  uint32_t ts_period_ms = 100;
};

// A port as the loop sees it. fwd gates rx: a port is read only while the
// queue toward its output has room and the --count budget is not spent, so a
// pcap (even an endless one) is paced by the shaper instead of overflowing.
struct RxGate {
  const sf::pktio::FwdNode* fwd = nullptr;
  uint64_t limit = 0;  // frames to read from the budgeted port (0 = no limit)
  uint64_t taken = 0;
  bool closed = false;  // stopping: read nothing more, send what is queued
};

class LoopIo {
 public:
  // budgeted: reads of this port count against gate->limit (fwd: port 0, the input).
  LoopIo(Port& port, RxGate* gate, sf::PortId out, bool budgeted)
      : port_(&port), gate_(gate), out_(out), budgeted_(budgeted) {}
  uint16_t rx_burst(std::span<rte_mbuf*> pkts) {
    size_t n = pkts.size();
    if (gate_ != nullptr && gate_->fwd != nullptr) {
      if (gate_->closed) return 0;
      n = std::min<size_t>(n, gate_->fwd->room(out_));
      if (budgeted_ && gate_->limit > 0) n = std::min<uint64_t>(n, gate_->limit - gate_->taken);
      if (n == 0) return 0;
    }
    const uint16_t got = port_->rx_burst(pkts.first(n));
    if (budgeted_ && gate_ != nullptr) gate_->taken += got;
    return got;
  }
  uint16_t tx_burst(std::span<rte_mbuf*> pkts) { return port_->tx_burst(pkts); }

 private:
  Port* port_;
  RxGate* gate_;
  sf::PortId out_;
  bool budgeted_;
};

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

po::options_description describe(Options& o) {
  po::options_description d(kUsage);
  d.add_options()
    ("help,h", "this help")
    ("mode", po::value(&o.mode)->required(), "gen | sink | fwd | echo")
    ("port", po::value(&o.ports), "port devargs (repeat for 2 ports), e.g. net_memif0,role=client,socket=/tmp/m.sock")
    ("size", po::value(&o.size)->default_value(60), "gen: frame bytes without FCS (60 = a 64 B frame on the wire); > 2 KiB frames are chained")
    ("rate-gbps", po::value(&o.rate_gbps)->default_value(0), "line rate per port in Gb/s, wire bytes incl. preamble/IFG/FCS (0 = unshaped)")
    ("burst-bytes", po::value(&o.burst_bytes)->default_value(0), "shaper bucket depth (0 = max(16 KiB, 20 us of rate))")
    ("count", po::value(&o.count)->default_value(0), "gen: frames per port (0 = unbounded); fwd/echo: read this many from port 0, forward them, then stop")
    ("duration", po::value(&o.duration_s)->default_value(0), "stop after this many seconds (0 = no limit)")
    ("expect", po::value(&o.expect)->default_value(0), "sink: stop once this many frames arrived")
    ("idle-exit-ms", po::value(&o.idle_exit_ms)->default_value(0), "sink/fwd/echo: stop when nothing arrived for this long after the first frame")
    ("link-wait-s", po::value(&o.link_wait_s)->default_value(5), "wait this long for every link to come up before starting (memif peer, NIC)")
    ("linger-ms", po::value(&o.linger_ms)->default_value(200), "gen/fwd: keep the ports open this long after the last frame left, so the peer can drain the link (memif frees its rings on disconnect); fwd also at SIGINT/--duration, after sending what it had queued")
    ("rx-desc", po::value(&o.rx_desc)->default_value(1024), "rx descriptors per queue")
    ("tx-desc", po::value(&o.tx_desc)->default_value(1024), "tx descriptors per queue")
    ("mtu", po::value(&o.mtu)->default_value(0), "port MTU (0 = device default); a memif port whose devargs have no bsize= gets one holding a 9216 B frame (the MTU's frame if larger)")
    ("tx-only", po::bool_switch(&o.tx_only), "gen: do not poll rx (e.g. net_null, whose rx invents packets)")
    ("backoff", po::bool_switch(&o.backoff), "idle back-off (pause, then sleep up to 200 us) to share cores")
    ("ready-file", po::value(&o.ready_file), "create this file once ports are up and the loop starts (for orchestration)")
    ("start-file", po::value(&o.start_file), "after the ready file, wait until this file exists before polling (several senders start together)")
    ("stop-drain-ms", po::value(&o.stop_drain_ms)->default_value(100), "sink: at SIGINT/--duration keep reading until nothing arrived for this long (at most 20x; 0 = stop at once)")
    ("flow-sport-base", po::value(&o.flow_sport_base)->default_value(0), "sink: count IPv4/UDP frames per flow, flow i = UDP source port BASE+i, i < 1024 (0 = off)")
    ("timeseries", po::value(&o.timeseries), "sink with --flow-sport-base: append one JSON line per period: {\"t_ns\", \"flows\": {SPORT: [pkts, bytes]}} (cumulative, loop time)")
    ("ts-period-ms", po::value(&o.ts_period_ms)->default_value(100), "time-series period")
    ("log-level", po::value(&o.log_level)->default_value("info"), "spdlog level: debug | info | warn | error");
  return d;
}

nlohmann::json port_json(const Port& port, const LoopPortCounters& c) {
  nlohmann::json j;
  j["name"] = port.name();
  j["driver"] = port.driver();
  j["rx_pkts"] = c.rx_pkts;
  j["rx_bytes"] = c.rx_bytes;
  j["tx_pkts"] = c.tx_pkts;
  j["tx_bytes"] = c.tx_bytes;
  j["tx_wire_bytes"] = c.tx_wire_bytes;
  j["tx_retries"] = c.tx_retries;
  j["tx_drops_stalled"] = c.tx_drops_stalled;
  j["tx_drops_at_stop"] = c.tx_drops_at_stop;
  j["shaper_held_ms"] = c.shaper_held.ns() / 1e6;
  j["first_tx_ns"] = c.first_tx == TimeNs::max() ? -1 : c.first_tx.ns();
  j["last_tx_ns"] = c.last_tx.ns();
  const double window_s = c.first_tx < c.last_tx ? (c.last_tx - c.first_tx).sec() : 0;
  j["tx_window_s"] = window_s;
  j["tx_gbps"] = window_s > 0 ? static_cast<double>(c.tx_wire_bytes) * 8 / window_s / 1e9 : 0;
  j["tx_mpps"] = window_s > 0 ? static_cast<double>(c.tx_pkts) / window_s / 1e6 : 0;
  if (auto st = port.stats(); st) {
    j["dev"] = {{"ipackets", st->rx_pkts}, {"opackets", st->tx_pkts}, {"imissed", st->rx_missed},
                {"ierrors", st->rx_errors}, {"oerrors", st->tx_errors}, {"rx_nombuf", st->rx_nombuf}};
  }
  return j;
}

// A flag this mode would ignore is refused, naming it (issue 17: honoured
// or refused, never accepted and ignored). Returns the exit status, or
// nullopt to go on.
std::optional<int> refuse_ignored_flags(const po::variables_map& vm, const Options& o) {
  std::string bad;
  const char* why = nullptr;
  auto rule = [&](bool ignored, std::initializer_list<const char*> flags, const char* reason) {
    if (!ignored || !bad.empty()) return;
    bad = app::first_given(vm, flags);
    if (!bad.empty()) why = reason;
  };
  const bool gen = o.mode == "gen";
  const bool sink = o.mode == "sink";
  rule(!gen, {"size", "tx-only"}, "applies to --mode gen only");
  rule(!sink, {"expect", "stop-drain-ms", "flow-sport-base", "timeseries"}, "applies to --mode sink only");
  rule(sink, {"count", "linger-ms"}, "does not apply to --mode sink (use --expect / --stop-drain-ms)");
  rule(o.flow_sport_base == 0, {"timeseries"}, "needs --flow-sport-base (the series counts flows)");
  rule(o.timeseries.empty(), {"ts-period-ms"}, "needs --timeseries");
  rule(o.rate_gbps <= 0, {"burst-bytes"}, "needs --rate-gbps (without a rate there is no shaper)");
  if (bad.empty()) return std::nullopt;
  std::cerr << "sf-pktio: --" << bad << " " << why << " (--mode " << o.mode << ")\n";
  return 2;
}

// ---- 1. Arguments ------------------------------------------------------------
// nullopt: go on; else the exit code.
std::optional<int> parse_options(int argc, char** argv, const SplitArgs& args, Options& o) {
  const po::options_description desc = describe(o);
  po::variables_map vm;
  if (auto rc = app::parse_app_args(argc, argv, args.app, desc, "sf-pktio", &vm)) return *rc;
  if (o.mode != "gen" && o.mode != "sink" && o.mode != "fwd" && o.mode != "echo") {
    std::cerr << "sf-pktio: --mode must be gen, sink, fwd or echo (got '" << o.mode << "')\n";
    return 2;
  }
  if (auto rc = refuse_ignored_flags(vm, o)) return *rc;
  if (o.size < sf::pktio::kMinFrameBytes || o.size > 9600) {
    std::cerr << "sf-pktio: --size must be in [60, 9600]\n";
    return 2;
  }
  if (!app::set_log_level(o.log_level, "sf-pktio")) return 2;
  return std::nullopt;
}

// A signal during start-up: it stops at the next step (exit 130, no JSON line).
bool interrupted() {
  if (!g_stop.load(std::memory_order_relaxed)) return false;
  spdlog::error("interrupted during start-up");
  return true;
}

// ---- 3. Mempool: descriptors + caches + loop buffers + the fwd queues ---------
Result<rte_mempool*> create_pool(const Options& o, uint16_t nports) {
  MempoolSizing sz;
  sz.ports = nports;
  sz.rx_desc = o.rx_desc;
  sz.tx_desc = o.tx_desc;
  sz.extra = (o.mode == "fwd" || o.mode == "echo") ? nports * sf::pktio::FwdNode::kQueuePkts : 0;
  const uint32_t room = std::max<uint32_t>(2048, o.mode == "gen" ? std::min<uint32_t>(o.size, 9600) : 2048);
  return create_pktmbuf_pool("sf_pktio", sz, static_cast<uint16_t>(room + RTE_PKTMBUF_HEADROOM));
}

// ---- 4. Ports ------------------------------------------------------------------
// Opens every port, then waits for their links (one deadline for all; a
// signal ends it). Returns 0, 1 (a port failed) or kInterruptedExit.
int open_ports(const Options& o, const std::vector<std::string>& devargs, rte_mempool* pool,
               std::vector<Port>& ports) {
  for (const auto& d : devargs) {
    if (interrupted()) return kInterruptedExit;
    PortConfig pc;
    // memif: a bsize that holds any frame of the link unless the user gave one.
    pc.devargs = memif_devargs_for_link(d, o.mtu);
    pc.rx_desc = o.rx_desc;
    pc.tx_desc = o.tx_desc;
    pc.mtu = o.mtu;
    pc.link_wait = LinkWait::kSkip;  // waited for below, all ports together
    auto p = Port::open(pc, pool);
    if (!p) {
      spdlog::error("{}", p.error());
      return 1;
    }
    spdlog::info("port {} ({}) open: id {}, mtu {}, multi-seg tx {}", p->name(), p->driver(), p->port_id(),
                 p->mtu(), p->multi_seg_tx());
    ports.push_back(std::move(*p));
  }
  const auto link_deadline = std::chrono::steady_clock::now() +
                             std::chrono::nanoseconds(static_cast<int64_t>(o.link_wait_s * 1e9));
  for (auto& p : ports) {
    while (!p.link_up()) {
      if (interrupted()) return kInterruptedExit;
      if (std::chrono::steady_clock::now() >= link_deadline) {
        spdlog::warn("port {}: link still down after {} s (peer process or link partner?)", p.name(), o.link_wait_s);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // bounded wait on the peer
    }
  }
  return 0;
}

// ---- 5. Node -------------------------------------------------------------------
// The node of --mode, and a typed pointer to it (the others null).
struct ModeNode {
  std::unique_ptr<sf::Node> node;
  sf::pktio::GenNode* gen = nullptr;
  sf::pktio::SinkNode* sink = nullptr;
  sf::pktio::FwdNode* fwd = nullptr;
};

ModeNode make_node(const Options& o, uint16_t nports, rte_mempool* pool) {
  ModeNode m;
  if (o.mode == "gen") {
    auto n = std::make_unique<sf::pktio::GenNode>(nports, pool, o.size, o.count);
    m.gen = n.get();
    m.node = std::move(n);
  } else if (o.mode == "sink") {
    auto n = std::make_unique<sf::pktio::SinkNode>(nports, o.flow_sport_base);
    m.sink = n.get();
    m.node = std::move(n);
  } else {
    auto n = std::make_unique<sf::pktio::FwdNode>(nports, o.mode == "echo");
    m.fwd = n.get();
    m.node = std::move(n);
  }
  return m;
}

// ---- The run loop ----------------------------------------------------------------
using Loop = PollLoop<LoopIo, TscClock>;

// When the loop stops (count / duration / --expect / idle / signal, with a
// fwd's queue sent and a sink's rings read), and the sink's per-flow time
// series written between bursts (a tool's control path: one line per
// period, flows that saw frames).
class Session {
 public:
  Session(const Options& o, const ModeNode& m, RxGate& gate, Loop& loop, TimeNs started)
      : o_(o), m_(m), gate_(gate), loop_(loop), started_(started), next_ts_(started) {
    duration_ = o.duration_s > 0 ? TimeNs(static_cast<int64_t>(o.duration_s * 1e9)) : TimeNs::max();
    idle_exit_ = o.idle_exit_ms > 0 ? TimeNs::from_ms(o.idle_exit_ms) : TimeNs::max();
    linger_ = TimeNs::from_ms(o.linger_ms);
    stop_drain_ = TimeNs::from_ms(o.stop_drain_ms);
    ts_period_ = TimeNs::from_ms(std::max<uint32_t>(o.ts_period_ms, 1));
    if (m.sink != nullptr && o.flow_sport_base != 0 && !o.timeseries.empty()) {
      ts_ = std::fopen(o.timeseries.c_str(), "a");
      if (ts_ == nullptr) spdlog::warn("--timeseries {}: cannot open", o.timeseries);
    }
  }
  // The loop's stop predicate: true when it is time to stop.
  bool done(TimeNs now);
  // After the loop: the last time-series line.
  void close(TimeNs now) {
    if (ts_ == nullptr) return;
    write_sample(now);
    std::fclose(ts_);
    ts_ = nullptr;
  }
  TimeNs end() const { return end_; }

 private:
  uint32_t buffered() const {
    uint32_t b = 0;
    for (size_t i = 0; i < loop_.num_ports(); ++i) b += loop_.tx_buffered(i);
    return b;
  }
  bool stopping(TimeNs now);
  void write_sample(TimeNs now);
  const Options& o_;
  const ModeNode& m_;
  RxGate& gate_;
  Loop& loop_;
  const TimeNs started_;
  TimeNs duration_, idle_exit_, linger_, stop_drain_, ts_period_;
  TimeNs last_seen_ = TimeNs::zero();
  uint64_t last_rx_ = 0;
  TimeNs end_ = TimeNs::zero();
  TimeNs finished_ = TimeNs::max();  // when gen/fwd had sent everything
  TimeNs stop_asked_ = TimeNs::max();
  FILE* ts_ = nullptr;
  TimeNs next_ts_;
};

bool Session::done(TimeNs now) {
  end_ = now;
  if (ts_ != nullptr && now >= next_ts_) {
    write_sample(now);
    while (next_ts_ <= now) next_ts_ += ts_period_;
  }
  uint64_t rx = 0;
  for (size_t i = 0; i < loop_.num_ports(); ++i) rx += loop_.counters(i).rx_pkts;
  if (rx != last_rx_) {
    last_rx_ = rx;
    last_seen_ = now;
  }
  if (g_stop.load(std::memory_order_relaxed) || now - started_ >= duration_) return stopping(now);
  if (m_.sink != nullptr && o_.expect > 0 && m_.sink->total_rx() >= o_.expect) return true;
  const bool sent_all = (m_.gen != nullptr && m_.gen->done() && buffered() == 0) ||
                        (m_.fwd != nullptr && o_.count > 0 && gate_.taken >= o_.count && m_.fwd->queued() == 0 &&
                         buffered() == 0);
  if (sent_all) {
    if (finished_ == TimeNs::max()) finished_ = now;
    if (now - finished_ >= linger_) return true;
  }
  return rx > 0 && now - last_seen_ >= idle_exit_;
}

// Asked to stop (signal or --duration).
bool Session::stopping(TimeNs now) {
  if (stop_asked_ == TimeNs::max()) stop_asked_ = now;
  if (m_.fwd != nullptr) {
    // fwd: read nothing more, send what is queued, then linger so the
    // peer reads the ring (memif frees it on close); at most 2 s + linger.
    gate_.closed = true;
    if ((m_.fwd->queued() > 0 || buffered() > 0) && now - stop_asked_ < TimeNs::from_ms(2000)) return false;
    if (finished_ == TimeNs::max()) finished_ = now;
    return now - finished_ >= linger_;
  }
  // A sink reads what is still in its rings (memif frees them on close).
  if (m_.sink == nullptr || stop_drain_ == TimeNs::zero()) return true;
  return now - last_seen_ >= stop_drain_ || now - stop_asked_ >= stop_drain_ * 20;
}

void Session::write_sample(TimeNs now) {
  std::fprintf(ts_, "{\"t_ns\":%lld,\"flows\":{", static_cast<long long>(now.ns()));
  bool first = true;
  for (uint32_t i = 0; i < sf::pktio::SinkNode::kMaxFlows; ++i) {
    const auto& f = m_.sink->flow(i);
    if (f.pkts == 0) continue;
    std::fprintf(ts_, "%s\"%u\":[%llu,%llu]", first ? "" : ",", o_.flow_sport_base + i,
                 static_cast<unsigned long long>(f.pkts), static_cast<unsigned long long>(f.bytes));
    first = false;
  }
  std::fprintf(ts_, "}}\n");
  std::fflush(ts_);
}

// ---- 6. Report ---------------------------------------------------------------------
nlohmann::json sink_json(const sf::pktio::SinkNode& sink, uint16_t nports) {
  uint64_t rx = 0, bad = 0, lost = 0, multi = 0, foreign = 0, reord = 0, wire = 0, max_segs = 0;
  TimeNs first = TimeNs::max(), last = TimeNs::zero();
  for (uint16_t p = 0; p < nports; ++p) {
    const auto& r = sink.result(p);
    rx += r.rx_pkts;
    bad += r.payload_errors;
    lost += r.lost;
    multi += r.multi_seg;
    foreign += r.foreign;
    reord += r.reordered;
    wire += r.rx_wire_bytes;
    max_segs = std::max(max_segs, r.max_segs);
    first = std::min(first, r.first_rx);
    last = std::max(last, r.last_rx);
  }
  const double win = first < last ? (last - first).sec() : 0;
  return {{"rx_pkts", rx}, {"payload_errors", bad}, {"lost", lost}, {"reordered", reord},
          {"multi_seg", multi}, {"max_segs", max_segs}, {"foreign", foreign},
          {"rx_window_s", win}, {"rx_gbps", win > 0 ? static_cast<double>(wire) * 8 / win / 1e9 : 0},
          {"rx_mpps", win > 0 ? static_cast<double>(rx) / win / 1e6 : 0}};
}

// What the node of --mode adds to the report.
void add_node_report(nlohmann::json& j, const Options& o, const ModeNode& m, const RxGate& gate, uint16_t nports) {
  if (m.gen != nullptr) {
    j["gen"] = {{"generated", m.gen->generated()}, {"alloc_failures", m.gen->alloc_failures()},
                {"rx_ignored", m.gen->rx_ignored()}};
  }
  if (m.sink != nullptr) j["sink"] = sink_json(*m.sink, nports);
  if (m.sink != nullptr && o.flow_sport_base != 0) {
    nlohmann::json flows = nlohmann::json::array();
    for (uint32_t i = 0; i < sf::pktio::SinkNode::kMaxFlows; ++i) {
      const auto& f = m.sink->flow(i);
      if (f.pkts == 0) continue;
      flows.push_back({{"sport", o.flow_sport_base + i}, {"pkts", f.pkts}, {"bytes", f.bytes},
                       {"first_rx_ns", f.first_rx.ns()}, {"last_rx_ns", f.last_rx.ns()}});
    }
    j["flows"] = flows;
    j["flow_other_pkts"] = m.sink->flow_other_pkts();
  }
  if (m.fwd != nullptr) {
    j["fwd"] = {{"forwarded", m.fwd->forwarded()}, {"queue_drops", m.fwd->queue_drops()}, {"read", gate.taken},
                {"queued_at_stop", m.fwd->queued()}};
  }
}

// ---- 5-6. Node, loop, run, report --------------------------------------------------
void serve(const Options& o, const EalInfo& eal, rte_mempool* pool, std::vector<Port>& ports) {
  const auto nports = static_cast<uint16_t>(ports.size());
  const ModeNode m = make_node(o, nports, pool);
  RxGate gate;
  gate.fwd = m.fwd;
  gate.limit = m.fwd != nullptr ? o.count : 0;
  std::vector<LoopIo> ios;
  for (uint16_t i = 0; i < nports; ++i) {
    ios.emplace_back(ports[i], &gate, static_cast<sf::PortId>(nports == 2 ? 1 - i : i), i == 0);
  }
  TscClock clock;
  const int64_t clock_zero_mono_ns = monotonic_ns() - clock.now().ns();
  LoopOptions lo;
  lo.backoff.enabled = o.backoff;
  Loop loop(clock, lo);
  for (uint16_t i = 0; i < nports; ++i) {
    LoopPortOptions lpo;
    lpo.rate = sf::BitRate::gbps(o.rate_gbps);
    lpo.burst_bytes = o.burst_bytes;
    lpo.rx = !(o.tx_only && m.gen != nullptr);
    (void)loop.add_port(ios[i], *m.node, i, lpo);
  }
  // The packet pool's use with the ports open and the node built, nothing
  // sent or received: the report compares the use after the drain with it.
  const unsigned pool_in_use_at_ready = rte_mempool_in_use_count(pool);
  if (!o.ready_file.empty()) {
    if (FILE* f = std::fopen(o.ready_file.c_str(), "w"); f != nullptr) std::fclose(f);
  }
  if (!o.start_file.empty()) {
    while (!file_exists(o.start_file) && !g_stop.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  const TimeNs started = clock.now();
  spdlog::info("running {} over {} port(s)", o.mode, nports);
  Session session(o, m, gate, loop, started);
  loop.run([&](TimeNs now) { return session.done(now); });
  const uint32_t left = loop.drain(TimeNs::from_ms(100));
  loop.release();
  session.close(clock.now());

  nlohmann::json j;
  j["mode"] = o.mode;
  j["elapsed_s"] = session.end().sec();
  j["no_huge"] = eal.no_huge;
  j["rate_gbps_cfg"] = o.rate_gbps;
  j["size"] = o.size;
  j["stopped_by_signal"] = g_stop.load();
  j["tx_left_at_stop"] = left;
  // After the drain and release every packet is back unless one leaked.
  j["mempool"] = {{"size", pool->size},
                  {"in_use_at_ready", pool_in_use_at_ready},
                  {"in_use_at_stop", rte_mempool_in_use_count(pool)}};
  j["clock_zero_mono_ns"] = clock_zero_mono_ns;  // CLOCK_MONOTONIC of loop time 0 (the *_ns fields)
  j["started_ns"] = started.ns();
  for (size_t i = 0; i < ports.size(); ++i) j["ports"].push_back(port_json(ports[i], loop.counters(i)));
  add_node_report(j, o, m, gate, nports);
  std::cout << j.dump() << std::endl;
}

// The sequence (STYLE G14): arguments -> EAL -> mempool -> ports -> serve()
// (node, loop, run, report) -> teardown.
int run(int argc, char** argv) {
  const SplitArgs args = split_args(argc, argv);
  Options o;
  if (auto rc = parse_options(argc, argv, args, o)) return *rc;
  // SIGINT/SIGTERM from here on only set the stop flag, so a signal during
  // EAL init, port start or the link wait still reaches cleanup_eal() (the
  // runtime directory /var/run/dpdk/<prefix> removed): start-up stops at the
  // next step, exit 130, no JSON line.
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  auto eal = init_eal(args.eal);
  if (!eal) {
    spdlog::error("{}", eal.error());
    return 1;
  }
  if (interrupted()) {
    cleanup_eal();
    return kInterruptedExit;
  }
  spdlog::info("EAL up: prefix {}, {}", eal->file_prefix,
               eal->no_huge ? (eal->no_huge_added ? "no huge pages free: --no-huge" : "--no-huge") : "huge pages");
  int rc = 0;
  {
    const std::vector<std::string> devargs = o.ports.empty() ? existing_port_names() : o.ports;
    if (devargs.empty() || devargs.size() > 2) {
      spdlog::error("need 1 or 2 ports (--port DEVARGS or EAL --vdev), have {}", devargs.size());
      cleanup_eal();
      return 2;
    }
    auto pool = create_pool(o, static_cast<uint16_t>(devargs.size()));
    if (!pool) {
      spdlog::error("{}", pool.error());
      cleanup_eal();
      return 1;
    }
    std::vector<Port> ports;
    rc = open_ports(o, devargs, *pool, ports);
    if (rc == 0) serve(o, *eal, *pool, ports);
    for (auto& p : ports) p.close();
    rte_mempool_free(*pool);
  }
  cleanup_eal();
  return rc;
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
