// libsfverbs' datapath runtime. See runtime.h; docs/ibverbs.md "Threading".
#include "nic/ibverbs/runtime.h"

#include <linux/futex.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <rte_cycles.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>

#include "common/dpdk/clock.h"
#include "common/dpdk/eal.h"
#include "common/dpdk/idle_backoff.h"
#include "common/dpdk/mempool.h"
#include "common/dpdk/poll_loop.h"
#include "common/dpdk/port.h"
#include "nic/app/perftest_engine.h"
#include "nic/app/thread_sched.h"

namespace sf::nic::ibverbs {

struct Runtime::Dpdk {
  rte_mempool* pool = nullptr;
  dpdk::Port port;
  std::unique_ptr<dpdk::TscClock> clock;
  std::unique_ptr<dpdk::PollLoop<dpdk::Port, dpdk::TscClock>> loop;
};

namespace {

std::once_flag g_once;
Runtime* g_runtime = nullptr;
std::string g_err;
bool g_configured = false;

void at_exit() {
  if (g_runtime != nullptr) g_runtime->shutdown();
}

// "0@(a,b,...)": EAL's lcore 0 may run on every CPU the process may use, so
// rte_eal_init pins the progress thread to nothing narrower than the app's.
std::string lcores_arg() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::string cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (!CPU_ISSET(c, &set)) continue;
      if (!cpus.empty()) cpus += ",";
      cpus += std::to_string(c);
    }
  }
  if (cpus.empty()) cpus = "0";
  return "--lcores=0@(" + cpus + ")";
}

uint64_t random_seed() {
  uint64_t s = 0;
  if (getrandom(&s, sizeof s, 0) != static_cast<ssize_t>(sizeof s)) {
    s = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (static_cast<uint64_t>(getpid()) << 32);
  }
  s = rc::mix64(s);
  return s == 0 ? 1 : s;
}

}  // namespace

Runtime* Runtime::get(std::string* err, bool* configured) {
  std::call_once(g_once, [] {
    SfVerbsConfig cfg;
    g_err = parse_config([](const char* n) { return static_cast<const char*>(std::getenv(n)); }, &cfg, &g_configured);
    if (!g_err.empty()) return;
    std::string serr;
    const auto sched = app::parse_thread_sched(cfg.progress_sched, &serr);
    if (!sched) {
      g_err = "SFVERBS_PROGRESS_SCHED: " + serr;
      g_configured = false;
      return;
    }
    if (const std::string e = app::check_thread_sched(*sched); g_configured && !e.empty()) {
      g_err = "SFVERBS_PROGRESS_SCHED " + cfg.progress_sched + ": " + e;
      g_configured = false;
      return;
    }
    if (cfg.log_level == "debug") spdlog::set_level(spdlog::level::debug);
    else if (cfg.log_level == "info") spdlog::set_level(spdlog::level::info);
    else if (cfg.log_level == "error") spdlog::set_level(spdlog::level::err);
    else spdlog::set_level(spdlog::level::warn);
    const auto cc = cc_choice_from_string(cfg.cc, CcEvents::kAckDriven);
    if (g_configured && !cc) {
      g_err = "SFVERBS_CC: '" + cfg.cc + "' is not one of " + std::string(kCcChoiceNamesAckDriven);
      g_configured = false;
      return;
    }
    if (g_configured && cc_refusal(cc->algorithm, cfg.mrc) != nullptr) {
      g_err = "SFVERBS_CC: " + cfg.cc + ": " + cc_refusal(cc->algorithm, cfg.mrc);
      g_configured = false;
      return;
    }
    g_runtime = new Runtime();  // lives until exit: applications may call verbs from atexit handlers
    // SFVERBS_POLL_YIELD=auto decided once, from the CPUs this process may use.
    cpu_set_t set;
    const unsigned cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? static_cast<unsigned>(CPU_COUNT(&set)) : 1;
    cfg.poll_yield = effective_poll_yield(cfg, cpus);
    g_runtime->cfg_ = cfg;
    if (cc) g_runtime->cc_ = *cc;
  });
  *err = g_err;
  *configured = g_configured;
  return g_runtime;
}

std::string Runtime::start() {
  std::lock_guard<DeviceLock> g(lock_);
  if (start_done_) return start_err_;
  start_done_ = true;
  std::promise<std::string> up;
  std::future<std::string> f = up.get_future();
  // EAL starts on a thread of its own, which then ends: EAL's affinity is
  // applied to it, not to the application's threads. The progress thread
  // registers with EAL when it is the loop's only runner (progress_main);
  // with inline progress every runner (it, application threads) is an equal
  // non-EAL thread (lcore id LCORE_ID_ANY), so the loop's single-owner check
  // holds and the owner is whoever holds the DeviceLock.
  std::thread([this, p = std::move(up)]() mutable {
    std::string e = bring_up();
    // A failure after EAL started (a memif client without its server, a bad
    // devargs) leaves no runtime directory behind; EAL itself stays up (it
    // cannot be started twice in a process).
    if (!e.empty() && eal_up_) dpdk::cleanup_eal(false);
    p.set_value(std::move(e));
  }).join();
  start_err_ = f.get();
  if (!start_err_.empty()) return start_err_;
  thread_ = std::thread([this] { progress_main(); });
  std::atexit(at_exit);
  return {};
}

std::string Runtime::bring_up() {
  std::vector<std::string> eal = {"sfverbs", lcores_arg(), "--log-level=*:warning"};
  const bool pci = cfg_.devargs.rfind("net_", 0) != 0;
  if (!pci) eal.push_back("--no-pci");
  for (const std::string& a : cfg_.eal_extra) eal.push_back(a);
  dpdk::EalOptions eo;
  eo.no_telemetry = true;
  auto info = dpdk::init_eal(eal, eo);
  if (!info) return "EAL: " + info.error();
  eal_up_ = true;
  auto d = std::make_unique<Dpdk>();
  dpdk::MempoolSizing sz;
  sz.ports = 1;
  sz.extra = 4096;
  auto pool = dpdk::create_pktmbuf_pool("sfverbs", sz);
  if (!pool) return "mempool: " + pool.error();
  d->pool = *pool;
  dpdk::PortConfig pc;
  pc.mtu = static_cast<uint16_t>(cfg_.mtu_bytes + 128);  // RoCE headers on top of the path MTU
  pc.devargs = dpdk::memif_devargs_for_link(cfg_.devargs, pc.mtu);
  pc.mtu_best_effort = true;
  pc.link_wait = dpdk::LinkWait::kSkip;  // a memif peer connects whenever it starts
  auto port = dpdk::Port::open(pc, d->pool);
  if (!port) return "port " + cfg_.devargs + ": " + port.error();
  d->port = std::move(*port);

  NicConfig nc;
  HostConfig h;
  h.name = cfg_.device_name;
  h.mac = cfg_.mac;
  h.ipv4 = cfg_.ipv4;
  h.ipv6 = cfg_.ipv6;
  h.gateway_mac = cfg_.gateway_mac;
  h.ports = {0};
  h.max_qps = 256;
  h.max_mrs = 1024;  // the application's and one bounce region per QP with inline data
  h.max_cqs = 512;
  h.max_pds = 64;
  h.rc.seed = random_seed();
  // Zero-copy transmit where the driver copies with the CPU at tx_burst
  // (memif in copy mode, tap, pcap, null): payload segments point into the
  // application's MR; ibv_dereg_mr waits for them to leave (nic_node.h).
  h.tx_zero_copy = app::copies_with_cpu(cfg_.devargs);
  nc.hosts.push_back(h);
  NicPortConfig npc;
  npc.line_rate = BitRate::gbps(cfg_.speed_gbps);
  npc.mtu_bytes = cfg_.mtu_bytes;
  nc.ports.push_back(npc);
  try {
    node_ = std::make_unique<NicNode>(nc, d->pool);
  } catch (const std::exception& e) {
    return std::string("NIC: ") + e.what();
  }
  d->clock = std::make_unique<dpdk::TscClock>();
  dpdk::LoopOptions lo;  // idle handling is ours (progress_main): the loop never sleeps
  d->loop = std::make_unique<dpdk::PollLoop<dpdk::Port, dpdk::TscClock>>(*d->clock, lo);
  dpdk::LoopPortOptions lpo;
  lpo.rate = BitRate::gbps(cfg_.speed_gbps);
  if (auto r = d->loop->add_port(d->port, *node_, 0, lpo); !r) return "poll loop: " + r.error();
  dpdk_ = std::move(d);
  return {};
}

void Runtime::watch(WatchedCq* w) { watched_.push_back(w); }

void Runtime::unwatch(WatchedCq* w) { watched_.erase(std::remove(watched_.begin(), watched_.end(), w), watched_.end()); }

void Runtime::refresh() {
  for (WatchedCq* w : watched_) {
    const uint32_t d = w->cq->depth() + (w->cq->overrun() ? 1u : 0u);
    w->depth.store(d, std::memory_order_release);
    if (d > 0 && w->armed.load(std::memory_order_relaxed)) {
      w->armed.store(false, std::memory_order_relaxed);
      if (w->notify != nullptr) w->notify(w->notify_arg);
    }
  }
}

bool Runtime::inline_progress() {
  if (!lock_.try_lock()) return false;
  const bool work = dpdk_->loop->poll_once();
  if (work) refresh();
  // Under the lock: one writer at a time (no read-modify-write needed).
  inline_tsc_.store(rte_rdtsc(), std::memory_order_relaxed);
  inline_runs_.store(inline_runs_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  lock_.unlock();
  return work;
}

void Runtime::wake() {
  wakes_.fetch_add(1, std::memory_order_relaxed);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&bell_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

// The progress thread: one PollLoop iteration per turn of the lock, then, when
// idle, the back-off of IdleBackoff (spin, pause, doubling sleeps up to
// max_sleep_us, never past the node's next timer). A sleep is a futex wait on
// the doorbell, so a post ends it (ring(): what wakes it and why no wakeup
// is lost); an application polling an empty CQ does not.
void Runtime::progress_main() {
  // SFVERBS_PROGRESS_SCHED (checked at parse time): e.g. fifo:N so that on a
  // machine with fewer cores than busy threads the datapath preempts the
  // application's polling, as a kernel softirq would.
  std::string unused;
  if (const auto sched = app::parse_thread_sched(cfg_.progress_sched, &unused)) {
    if (const std::string e = app::apply_thread_sched(*sched); !e.empty()) spdlog::warn("SFVERBS_PROGRESS_SCHED: {}", e);
  }
  dpdk::IdleBackoffOptions bo;
  bo.enabled = cfg_.idle == IdleMode::kBackoff;
  bo.max_sleep = TimeNs::from_us(cfg_.max_sleep_us);
  dpdk::IdleBackoff backoff(bo);
  auto& loop = *dpdk_->loop;
  // Without inline progress this thread is the loop's only runner: as a
  // registered EAL thread it gets an lcore id and the mempool's per-lcore
  // cache. With inline progress every runner stays unregistered (equal
  // LCORE_ID_ANY threads; see start()).
  const bool registered = !cfg_.inline_progress && rte_thread_register() == 0;
  // SFVERBS_STAND_BACK_US: while an application thread drives the loop
  // (inline progress within the window), this thread sleeps the window out
  // instead of competing for the lock and a core; not marked sleeping_, so
  // posts ring no futex wake meanwhile (the application's next empty poll
  // runs the loop). When the application stops polling, the window runs out
  // and this thread drives again: a stall of one window at most.
  const uint64_t stand_back_tsc = cfg_.stand_back_us * rte_get_tsc_hz() / 1000000;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (stand_back_tsc != 0) {
      const uint64_t last = inline_tsc_.load(std::memory_order_relaxed);
      if (last != 0 && rte_rdtsc() - last < stand_back_tsc) {
        stand_backs_.store(stand_backs_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        const timespec ts{0, static_cast<long>(cfg_.stand_back_us) * 1000};
        nanosleep(&ts, nullptr);
        continue;
      }
    }
    const uint32_t bell = bell_.load(std::memory_order_seq_cst);
    bool work;
    TimeNs due;
    TimeNs now;
    {
      std::lock_guard<DeviceLock> g(lock_);
      work = loop.poll_once();
      if (work) refresh();
      due = std::min(loop.earliest_wakeup(), loop.shaper_wakeup());
      now = node_->now();
    }
    if (work || !bo.enabled) {
      backoff.on_work();
      continue;
    }
    switch (backoff.on_idle()) {
      case dpdk::IdleAction::kSpin:
        break;
      case dpdk::IdleAction::kPause:
        __builtin_ia32_pause();
        break;
      case dpdk::IdleAction::kSleep: {
        TimeNs d = backoff.sleep_time();
        if (due != TimeNs::max()) d = std::min(d, due > now ? due - now : TimeNs::zero());
        if (d < TimeNs::from_us(5)) break;
        timespec ts{static_cast<time_t>(d.ns() / 1000000000), static_cast<long>(d.ns() % 1000000000)};
        sleeping_.store(true, std::memory_order_seq_cst);
        sleeps_.fetch_add(1, std::memory_order_relaxed);
        syscall(SYS_futex, reinterpret_cast<uint32_t*>(&bell_), FUTEX_WAIT_PRIVATE, bell, &ts, nullptr, 0);
        sleeping_.store(false, std::memory_order_seq_cst);
        break;
      }
    }
  }
  // Teardown at process exit.
  loop.drain(TimeNs::from_ms(50));
  loop.release();
  {
    std::lock_guard<DeviceLock> g(lock_);
    dpdk_->loop.reset();
  }
  // The device is left as it is: the process's end closes its sockets (a
  // memif peer sees the disconnect) and releases its memory. Stopping or
  // closing a memif port here, at exit, raced the driver's own handling of
  // the peer's disconnect ("EAL: Error: Invalid memory", once a hang).
  if (registered) rte_thread_unregister();
  dpdk::cleanup_eal(false);
  finished_.store(true);
}

void log_qp_counters(const rc::Qp& q, const char* when) {
  const rc::QpCounters& c = q.counters();
  const auto rx = [&c](rc::RxAction a) { return c.rx[static_cast<int>(a)]; };
  spdlog::info("libsfverbs: QP {} {} (state {}): tx data {} retransmitted {} acks {} naks {}; rx accepted {} "
               "duplicate {} seq-NAK sent {} out-of-sequence dropped {} RNR-NAK sent {} wrong state {}; "
               "timeouts {} go-back {} RNR waits {}",
               q.qp_num(), when, static_cast<int>(q.state()), c.tx_data_pkts, c.tx_retransmit_pkts, c.tx_acks,
               c.tx_naks, rx(rc::RxAction::kAccepted), rx(rc::RxAction::kDuplicate), rx(rc::RxAction::kNakSeqSent),
               rx(rc::RxAction::kOutOfSeqDropped), rx(rc::RxAction::kRnrNakSent), rx(rc::RxAction::kWrongState),
               c.timeouts, c.go_back, c.rnr_waits);
}

void Runtime::shutdown() {
  if (!thread_.joinable()) return;
  if (spdlog::should_log(spdlog::level::info) && node_ != nullptr) {
    std::lock_guard<DeviceLock> g(lock_);
    Host& h = node_->host(0);
    for (uint32_t i = 0; i < h.qp_capacity(); ++i) {
      if (h.qp_slot(i).in_use()) log_qp_counters(h.qp_slot(i), "at exit");
    }
  }
  stop_.store(true);
  ring();
  // Bounded: the process is exiting; a progress thread that does not finish
  // within 2 s is left to the exit rather than hanging it.
  for (int i = 0; i < 2000 && !finished_.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (finished_.load()) {
    thread_.join();
  } else {
    std::fprintf(stderr, "libsfverbs: the progress thread did not stop within 2 s at exit\n");
    thread_.detach();
  }
}

}  // namespace sf::nic::ibverbs
