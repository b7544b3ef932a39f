// sf-sim: a lab (switch configs, nic.json files, links) in virtual time. The
// same configs that sf-switch and sf-nic run in real time, here as nodes of
// the deterministic simulator at any link speed (400G for the seed
// scenarios); writes the files the real processes write, so tools/lab makes
// the same report. Exit 0: every workload finished; 1: a workload failed or
// the run limit came first; 2: a bad plan or config (the message names it).
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cstdio>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/config/config_error.h"
#include "common/dpdk/eal.h"
#include "nic/app/sf_nic_config.h"
#include "switch/config/switch_config.h"
#include "switch/fwd/route_table.h"
#include "switch/pipeline/switch_node.h"
#include "tools/sf-sim/sim_lab.h"

namespace {

constexpr const char* kUsage =
    "usage: sf-sim PLAN.json --out DIR [--mbufs N] [--icrc check|trust] [--threads N] [--timing]\n"
    "  PLAN.json: {\"seed\", \"run_limit_s\", \"ts_period_us\", \"switches\": {name: switch.json},\n"
    "              \"nics\": {process: nic.json}, \"links\": [{\"a\", \"b\", \"speed_gbps\", \"delay_ns\"}]}\n"
    "  --mbufs N: the mbuf pool's size instead of the one sized from the plan\n"
    "  --icrc trust: receivers do not verify the ICRC (senders still write it); refused for a plan\n"
    "            with inject events (default check: every received frame's ICRC verified)\n"
    "  --threads N: the partitioned engine on N threads (1..256): the same run whatever N, the\n"
    "            nodes spread over N partitions run in windows of the shortest link between them\n"
    "  --timing: one more JSON line on stderr: setup_s, run_s (run_split_s: events, samples, reports),\n"
    "            peak_rss_mb (wall clock), events_cpu_s (the event loop's CPU time)\n"
    "  (docs/sf-sim.md)\n";

// ---- Memory in proportion to the plan (docs/sf-sim.md "Cost").
//
// The mbuf pool holds every frame alive at once: on links, in switch
// buffers, in NIC receive rings. Its size in mbufs:
//   fm      = mbufs of one MTU frame = ceil((MTU + 96) / 2048)  (2 KiB data room)
//   traffic = sum over client workloads of qps x outstanding x pkts x (fm + 2)
//             (outstanding = min(tx_depth, iterations) for bandwidth tests, 2 for
//             latency ones; pkts = ceil(size / MTU); + 2: an ACK and a CNP per packet)
//   fabric  = sum over switches of ceil(buffer bytes / bytes per mbuf of an MTU frame)
//           + sum over links, both directions, of (ceil(BDP / MTU frame) + 1) x (fm + 2)
//   fixed   = 1024 + 8 per port (PFC, control frames) + every receive ring (rx_drain hosts)
//   inject  = injected frames ("inject" events: a rogue host's frames are no
//             work request's): min(sum over events of count x mbufs of its
//             longest frame, sum over switches of buffer bytes / 64 + 4096)
//   pool    = min(traffic, fabric) + fixed + inject
// A frame can only be in flight if a work request is outstanding (traffic),
// and only where the fabric has room for it (fabric), so the smaller bound
// holds both. If the pool still runs dry (a plan the bound misses), every
// failed allocation is counted (the node retries it, as on a real NIC out of
// buffers), sf-sim says so on stderr and exits 1: --mbufs N sets the size.
//
// EAL memory (-m, --no-huge: a mapping only the touched part of which costs
// RAM, but whose page table EAL sets up in full): each switch's DPDK tables
// (FDB hash; rte_lpm6 only where the switch has IPv6 routes: IPv4 routes are
// on the heap, route_table.h), sharded switches' rings, and a base. The
// mbufs are not in it (map_chunk).
constexpr uint64_t kSegBytes = 2048;        // RTE_MBUF_DEFAULT_DATAROOM
constexpr uint64_t kFrameOverhead = 96;     // Ethernet + IP + UDP + BTH + RETH + ICRC, rounded up
constexpr uint64_t kFdbEntryBytes = 160;    // rte_hash bucket, key and extendable table share per entry
constexpr uint64_t kBaseEalMb = 96;         // EAL's own structures, memzones, the pool header

struct PoolPlan {
  uint64_t mbufs = 0;    // the pool
  uint64_t traffic = 0;  // the bounds above
  uint64_t fabric = 0;
  uint64_t fixed = 0;
  uint64_t inject = 0;
  uint64_t table_bytes = 0;
  bool from_plan = false;  // false: the plan could not be read (SimLab reports why)
};

std::string resolve(const std::string& base_dir, const std::string& p) {
  return std::filesystem::path(p).is_absolute() ? p : (std::filesystem::path(base_dir) / p).string();
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

PoolPlan plan_pool(const std::string& plan) {
  PoolPlan pp;
  try {
    const sf::config::Json& doc = sf::simlab::cached_json(plan);  // parsed once (SimLab reads it too)
    const std::string dir = std::filesystem::path(plan).parent_path().string();
    std::vector<const sf::nic::app::AppConfig*> nics;
    if (const auto it = doc.find("nics"); it != doc.end() && it->is_object()) {
      for (const auto& [name, path] : it->items()) nics.push_back(&sf::simlab::cached_app_config(resolve(dir, path.get<std::string>())));
    }
    uint64_t mtu = 0;
    uint64_t nic_ports = 0;
    for (const auto* c : nics) {
      for (const auto& h : c->hosts) {
        mtu = std::max<uint64_t>(mtu, h.mtu_bytes);
        nic_ports += h.num_ports();
      }
    }
    if (mtu == 0) mtu = 4096;
    const uint64_t fm = ceil_div(mtu + kFrameOverhead, kSegBytes);
    const uint64_t frame = mtu + kFrameOverhead;
    for (const auto* c : nics) {
      for (const auto& w : c->workloads) {
        const uint64_t pkts = std::max<uint64_t>(1, ceil_div(w.size_bytes, mtu));
        uint64_t out = 0;
        if (sf::nic::app::is_latency(w.type)) {
          out = 2;  // a request and its reply
        } else if (w.role == sf::nic::app::Role::kClient) {
          out = w.iterations == 0 ? w.tx_depth : std::min<uint64_t>(w.tx_depth, w.iterations);
        }
        pp.traffic += uint64_t{w.qps} * out * pkts * (fm + 2);
      }
      const sf::nic::NicConfig nc = sf::nic::app::nic_config_of(*c);
      for (const auto& p : nc.ports) {
        if (p.rx_drain_rate.bps() > 0) pp.fixed += uint64_t{p.rx_ring_pkts} * fm;
      }
    }
    uint64_t sw_ports = 0;
    uint64_t buffer_small_frames = 4096;  // the inject bound's cap: switch buffers full of 64 B frames
    if (const auto it = doc.find("switches"); it != doc.end() && it->is_object()) {
      for (const auto& [name, v] : it->items()) {
        const std::string path = v.is_object() ? v.at("config").get<std::string>() : v.get<std::string>();
        const sf::sw::SwitchConfig& cfg = sf::simlab::cached_switch_config(resolve(dir, path));
        pp.fabric += ceil_div(cfg.mmu.total_bytes * fm, frame);
        buffer_small_frames += cfg.mmu.total_bytes / 64;
        sw_ports += cfg.ports.ports.size();
        // IPv4 routes and SRv6 uSIDs live on the heap; IPv6 in rte_lpm6 (64 MiB + its tbl8s).
        pp.table_bytes += uint64_t{cfg.fdb_capacity} * kFdbEntryBytes +
                          sf::sw::route_table_dpdk_bytes(sf::sw::SwitchNode::route_limits(cfg));
      }
    }
    if (const auto it = doc.find("links"); it != doc.end() && it->is_array()) {
      for (const auto& l : *it) {
        const double gbps = l.value("speed_gbps", 0.0);
        const double delay_ns = l.value("delay_ns", 1000.0);
        const auto bdp = static_cast<uint64_t>(gbps * delay_ns / 8.0);  // bytes on the wire
        pp.fabric += 2 * (ceil_div(bdp, frame + 20) + 1) * (fm + 2);
      }
    }
    pp.fixed += 1024 + 8 * (sw_ports + nic_ports);
    if (const auto it = doc.find("events"); it != doc.end() && it->is_array()) {
      std::map<std::string, uint64_t> segs;  // pcap -> mbufs of its longest frame
      for (const auto& e : *it) {
        if (e.value("kind", "") != "inject" || !e.contains("pcap")) continue;
        const std::string path = resolve(dir, e.at("pcap").get<std::string>());
        auto [s, fresh] = segs.try_emplace(path, 1);
        uint64_t frames = 1;
        if (fresh) {
          const sf::simlab::Frames fr = sf::simlab::read_pcap_frames(path);
          for (const auto& f : fr) s->second = std::max<uint64_t>(s->second, ceil_div(f.size(), kSegBytes));
          frames = fr.size();
        }
        pp.inject += e.value("count", frames) * s->second;
      }
      pp.inject = std::min(pp.inject, buffer_small_frames);
    }
    pp.mbufs = std::min(pp.traffic, pp.fabric) + pp.fixed + pp.inject;
    pp.from_plan = true;
  } catch (const std::exception&) {
    pp = PoolPlan{};
    pp.mbufs = 8191;  // enough for SimLab to report what is wrong with the plan
  }
  return pp;
}

// The pool's backend: a LIFO stack of free mbufs with its allocations
// counted: the peak in use and the failures (a dry pool). One thread: no
// lock, no per-lcore cache, so every get reaches dequeue. With --threads
// (the partitioned engine, several threads) a mutex guards the stack and
// each thread has a per-lcore cache of free mbufs in front of it (the
// simulator registers its threads as lcores), so the counts then include
// the mbufs in those caches (docs/sf-sim.md "Threads").
// LIFO, not DPDK's FIFO ring: the mbuf freed last (a frame just received,
// its lines still in cache) is the next one handed out, so a run reuses a
// small warm set of mbufs instead of cycling through every mbuf it has
// populated (a 1,024-host fabric holds ~185,000 at its peak: ~450 MB that no
// cache holds). Which mbuf a frame gets changes nothing a node sees.
// It grows as it is used: created for the planned size but populated
// (memory touched, mbufs initialised) a chunk at a time, a new chunk (a
// quarter of what it has, at least kGrowMbufs) when the mbufs it has run
// out, so a run pays in memory and setup for the frames it really holds.
constexpr uint64_t kGrowMbufs = 4096;
constexpr uint64_t kThreadCacheMbufs = 256;  // per thread, with --threads > 1

struct PoolUse {
  rte_mempool* mp = nullptr;
  uint64_t in_use = 0;
  uint64_t peak = 0;
  uint64_t failures = 0;
  bool populating = false;
  std::vector<void*> chunks;  // the mappings behind the mbufs
  bool locked = false;         // several threads (--threads > 1): ops under `lock`
  std::recursive_mutex lock;  // recursive: a dequeue that grows the pool enqueues the new mbufs
};
PoolUse g_use;
rte_mempool_ops g_lifo_ops;

// The free mbufs: stack[0, top); the array is calloc'd for the pool's
// size (zero pages: memory only as deep as the pool is populated).
struct FreeStack {
  void** slots = nullptr;
  uint32_t top = 0;
  uint32_t size = 0;
};

int lifo_alloc(rte_mempool* mp) {
  auto* st = static_cast<FreeStack*>(std::calloc(1, sizeof(FreeStack)));
  if (st == nullptr) return -ENOMEM;
  st->slots = static_cast<void**>(std::calloc(mp->size + 1, sizeof(void*)));
  if (st->slots == nullptr) {
    std::free(st);
    return -ENOMEM;
  }
  st->size = mp->size + 1;
  mp->pool_data = st;
  return 0;
}

void lifo_free(rte_mempool* mp) {
  auto* st = static_cast<FreeStack*>(mp->pool_data);
  if (st == nullptr) return;
  std::free(st->slots);
  std::free(st);
  mp->pool_data = nullptr;
}

unsigned lifo_count(const rte_mempool* mp) { return static_cast<const FreeStack*>(mp->pool_data)->top; }

// `len` bytes of private anonymous memory (zero pages until touched);
// nullptr when out of memory. Not EAL memory: a mapping outside it keeps
// the pool out of EAL's -m and its page table (the sim does no DMA: the
// pool has no IOVAs). Transparent huge pages for it (MADV_HUGEPAGE, 2 MiB
// aligned; EAL's --no-huge memory is shmem and gets none here) were
// measured and left out: on a 1,024-host fabric they saved ~5 % of user
// time and cost as much in system time (2 MiB faults with compaction).
void* map_chunk(size_t len) {
  void* mem = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return mem == MAP_FAILED ? nullptr : mem;
}

// Populates up to `n` more mbufs; false when the pool is full or memory ran out.
bool grow(uint64_t n) {
  rte_mempool* mp = g_use.mp;
  if (mp->populated_size >= mp->size) return false;
  n = std::min<uint64_t>(n, mp->size - mp->populated_size);
  const uint64_t obj = rte_mempool_calc_obj_size(mp->elt_size, mp->flags, nullptr);  // header, element, trailer, padding
  const size_t len = n * obj;
  void* mem = map_chunk(len);
  if (mem == nullptr) return false;
  const unsigned before = mp->populated_size;
  g_use.populating = true;
  const int rc = rte_mempool_populate_iova(mp, static_cast<char*>(mem), RTE_BAD_IOVA, len, nullptr, nullptr);
  g_use.populating = false;
  if (rc <= 0) {
    munmap(mem, len);
    return false;
  }
  g_use.chunks.push_back(mem);
  // rte_pktmbuf_init for the new mbufs only (those in this chunk).
  struct Range {
    const char* lo;
    const char* hi;
  } range{static_cast<const char*>(mem), static_cast<const char*>(mem) + len};
  rte_mempool_obj_iter(
      mp,
      [](rte_mempool* m, void* arg, void* o, unsigned idx) {
        const auto* r = static_cast<const Range*>(arg);
        if (static_cast<const char*>(o) >= r->lo && static_cast<const char*>(o) < r->hi) rte_pktmbuf_init(m, nullptr, o, idx);
      },
      &range);
  return mp->populated_size > before;
}

// The stack's mutex, taken only with several threads.
struct MaybeLock {
  explicit MaybeLock(PoolUse& u) : u_(u) {
    if (u_.locked) u_.lock.lock();
  }
  ~MaybeLock() {
    if (u_.locked) u_.lock.unlock();
  }
  MaybeLock(const MaybeLock&) = delete;
  MaybeLock& operator=(const MaybeLock&) = delete;
  PoolUse& u_;
};

// All `n` or none (-ENOBUFS), the most recently freed first.
int lifo_dequeue(rte_mempool* mp, void** objs, unsigned n) {
  const MaybeLock guard(g_use);
  auto* st = static_cast<FreeStack*>(mp->pool_data);
  while (st->top < n && g_use.mp == mp && grow(std::max<uint64_t>(kGrowMbufs, mp->populated_size / 4))) {
  }
  if (st->top < n) {
    ++g_use.failures;
    return -ENOBUFS;
  }
  void** src = st->slots + st->top;
  for (unsigned i = 0; i < n; ++i) objs[i] = *--src;
  st->top -= n;
  g_use.in_use += n;
  g_use.peak = std::max(g_use.peak, g_use.in_use);
  return 0;
}

int lifo_enqueue(rte_mempool* mp, void* const* objs, unsigned n) {
  const MaybeLock guard(g_use);
  auto* st = static_cast<FreeStack*>(mp->pool_data);
  if (st->top + n > st->size) return -ENOBUFS;  // more frees than mbufs: a double free
  if (!g_use.populating) g_use.in_use -= std::min<uint64_t>(n, g_use.in_use);
  void** dst = st->slots + st->top;
  for (unsigned i = 0; i < n; ++i) dst[i] = objs[i];
  st->top += n;
  return 0;
}

const char* register_lifo_ops() {
  g_lifo_ops = rte_mempool_ops{};
  std::snprintf(g_lifo_ops.name, sizeof(g_lifo_ops.name), "%s", "sf_sim_lifo");
  g_lifo_ops.alloc = lifo_alloc;
  g_lifo_ops.free = lifo_free;
  g_lifo_ops.enqueue = lifo_enqueue;
  g_lifo_ops.dequeue = lifo_dequeue;
  g_lifo_ops.get_count = lifo_count;
  if (rte_mempool_register_ops(&g_lifo_ops) < 0) return nullptr;
  return g_lifo_ops.name;
}

// An empty pktmbuf pool of `n` mbufs at most (2 KiB data room) on the
// counting ops, with its first chunk populated; nullptr on failure (rte_errno).
// threads > 1: thread-safe ops and a per-lcore cache.
rte_mempool* create_pool(uint64_t n, const char* ops, uint32_t threads) {
  const unsigned cache = threads > 1 ? static_cast<unsigned>(std::min<uint64_t>(kThreadCacheMbufs, n / 8)) : 0;
  rte_mempool* mp = rte_mempool_create_empty("sf_sim", static_cast<unsigned>(n),
                                             sizeof(rte_mbuf) + RTE_MBUF_DEFAULT_BUF_SIZE, cache,
                                             sizeof(rte_pktmbuf_pool_private), SOCKET_ID_ANY,
                                             RTE_MEMPOOL_F_NO_IOVA_CONTIG);  // no DMA: objects may cross pages
  if (mp == nullptr) return nullptr;
  if (rte_mempool_set_ops_byname(mp, ops, nullptr) != 0) {
    rte_mempool_free(mp);
    return nullptr;
  }
  rte_pktmbuf_pool_private priv{};
  priv.mbuf_data_room_size = RTE_MBUF_DEFAULT_BUF_SIZE;
  priv.mbuf_priv_size = 0;
  rte_pktmbuf_pool_init(mp, &priv);
  g_use.mp = mp;
  g_use.locked = threads > 1;
  if (!grow(std::min<uint64_t>(n, kGrowMbufs))) {
    rte_mempool_free(mp);
    g_use.mp = nullptr;
    rte_errno = ENOMEM;
    return nullptr;
  }
  return mp;
}


// ---- 1. Arguments --------------------------------------------------------------
struct Options {
  std::string prog;  // argv[0], EAL's program name
  std::string plan;
  std::string out;
  uint64_t mbufs = 0;  // 0: sized from the plan
  bool timing = false;
  bool icrc_check = true;
  uint32_t threads = 0;  // 0: the default engine; else the partitioned one (--threads)
};

// nullopt: go on; else the exit code (0 after --help, 2 after saying why).
std::optional<int> parse_options(int argc, char** argv, Options& o) {
  o.prog = argv[0];
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--out" && i + 1 < argc) {
      if (!o.out.empty()) {
        std::cerr << "sf-sim: --out given twice\n" << kUsage;
        return 2;
      }
      o.out = argv[++i];
    } else if (a == "--timing") {
      o.timing = true;
    } else if (a == "--icrc" && i + 1 < argc) {
      const std::string v = argv[++i];
      if (v != "check" && v != "trust") {
        std::cerr << "sf-sim: --icrc " << v << ": must be check or trust\n";
        return 2;
      }
      o.icrc_check = v == "check";
    } else if (a == "--threads" && i + 1 < argc) {
      const std::string v = argv[++i];
      char* end = nullptr;
      const unsigned long n = std::strtoul(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || v[0] == '-' || n < 1 || n > 256) {
        std::cerr << "sf-sim: --threads " << v << ": must be an integer within [1, 256]\n";
        return 2;
      }
      o.threads = static_cast<uint32_t>(n);
    } else if (a == "--mbufs" && i + 1 < argc) {
      const std::string v = argv[++i];
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || v[0] == '-' || n < 64 || n > (1ull << 30)) {
        std::cerr << "sf-sim: --mbufs " << v << ": must be an integer within [64, 2^30]\n";
        return 2;
      }
      o.mbufs = n;
    } else if (o.plan.empty() && a.rfind("--", 0) != 0) {
      o.plan = a;
    } else {
      std::cerr << "sf-sim: unexpected argument " << a << "\n" << kUsage;
      return 2;
    }
  }
  if (o.plan.empty() || o.out.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  return std::nullopt;
}

// ---- 2. Config, 3. EAL, 4. pool ------------------------------------------------
using Clock = std::chrono::steady_clock;

// What bring-up decided and when each step ended (--timing).
struct Setup {
  PoolPlan pp;
  sf::dpdk::EalOptions eo;
  rte_mempool* pool = nullptr;
  Clock::time_point t0, t_plan, t_eal, t_pool;
};

// The pool sized from the plan (or --mbufs), EAL sized for the plan's tables,
// the pool. nullopt: go on, EAL up; else the exit code.
std::optional<int> bring_up(const Options& o, Setup& s) {
  s.t0 = Clock::now();
  s.pp = plan_pool(o.plan);
  if (o.mbufs != 0) s.pp.mbufs = o.mbufs;
  const uint64_t ring_bytes = sf::simlab::SimLab::shard_ring_bytes(o.plan);
  s.eo.no_huge_mem_mb = static_cast<uint32_t>(
      kBaseEalMb + ((s.pp.table_bytes + ring_bytes + (1u << 20) - 1) >> 20));  // the mbufs are not EAL memory (map_chunk)
  s.t_plan = Clock::now();
  auto eal = sf::dpdk::init_eal({o.prog, "--no-huge", "--no-pci", "--log-level", "*:error", "--no-telemetry"}, s.eo);
  if (!eal) {
    std::cerr << "sf-sim: " << eal.error() << "\n";
    return 1;
  }
  const char* ops = register_lifo_ops();
  if (ops == nullptr) {
    std::cerr << "sf-sim: cannot register the mbuf pool's ops (the mempool ops table is full)\n";
    return 1;
  }
  s.t_eal = Clock::now();
  s.pool = create_pool(s.pp.mbufs, ops, o.threads);
  s.t_pool = Clock::now();
  if (s.pool == nullptr) {
    std::cerr << "sf-sim: cannot create the mbuf pool (" << s.pp.mbufs << " mbufs in " << s.eo.no_huge_mem_mb
              << " MiB): " << rte_strerror(rte_errno) << "\n";
    return 1;
  }
  return std::nullopt;
}

// ---- 5. Report -------------------------------------------------------------------
// --timing: wall-clock figures (not deterministic: stderr, not the summary line).
void print_timing(const Setup& s, double setup_s, const sf::simlab::SimResult& r) {
  const double total_s = std::chrono::duration<double>(Clock::now() - s.t0).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::cerr << nlohmann::json{{"setup_s", setup_s}, {"run_s", total_s - setup_s},
                              {"run_split_s", {{"events", r.loop_s}, {"samples", r.samples_s}, {"reports", r.reports_s}}},
                              {"events_cpu_s", r.loop_cpu_s},
                              {"setup_split_s", {{"plan", secs(s.t0, s.t_plan)}, {"eal", secs(s.t_plan, s.t_eal)},
                                                 {"pool", secs(s.t_eal, s.t_pool)},
                                                 {"nodes", setup_s - secs(s.t0, s.t_pool)}}},
                              {"peak_rss_mb", static_cast<double>(ru.ru_maxrss) / 1024.0},
                              {"threads", r.threads},
                              {"lookahead_ns", r.lookahead == sf::TimeNs::max() ? nlohmann::json() : nlohmann::json(r.lookahead.ns())},
                              {"windows", r.windows}}
                   .dump()
            << std::endl;
}

// The summary line on stdout.
nlohmann::json summary(const Options& o, const Setup& s, const sf::simlab::SimLab& lab, const sf::simlab::SimResult& r) {
  nlohmann::json j = {{"finished", r.finished},      {"end_s", r.end.sec()},
                      {"events", r.events},          {"trace_hash", r.trace_hash},
                      {"failed_workloads", r.failed_workloads}, {"seed", lab.seed()},
                      {"mbufs", {{"pool", s.pp.mbufs}, {"populated", s.pool->populated_size}, {"peak_in_use", g_use.peak},
                                 {"in_use_at_end", g_use.in_use},
                                 {"alloc_failures", g_use.failures}, {"from_plan", s.pp.from_plan},
                                 {"traffic_bound", s.pp.traffic}, {"fabric_bound", s.pp.fabric}}},
                      {"eal_mb", s.eo.no_huge_mem_mb}, {"icrc", o.icrc_check ? "check" : "trust"}};
  if (o.threads != 0) j["threads"] = o.threads;  // the partitioned engine's trace (docs/sf-sim.md "Threads")
  if (r.has_inject) {
    j["inject"] = {{"bursts", r.inject_bursts},       {"sent", r.inject_sent},
                   {"sent_bytes", r.inject_sent_bytes}, {"delivered", r.inject_delivered},
                   {"received", r.inject_received},   {"done", r.inject_done}};
  }
  return j;
}

// ---- The sequence (STYLE G14) ------------------------------------------------------
// The nodes, the run, the report. Returns the exit code.
int simulate(const Options& o, const Setup& s) {
  // Left to the OS at exit, as is the pool: DPDK zeroes every byte it frees
  // (rte_free keeps its heap clean), which for a fabric's LPM tables (64 MiB
  // each) would touch gigabytes the run never used. Kept reachable here.
  static sf::simlab::SimLab* kept = nullptr;
  kept = new sf::simlab::SimLab(o.plan, s.pool, o.threads);
  sf::simlab::SimLab& lab = *kept;
  if (!o.icrc_check) {
    try {
      lab.trust_icrc();
    } catch (const std::invalid_argument& e) {
      std::cerr << "sf-sim: " << o.plan << ": " << e.what() << "\n";
      return 2;
    }
  }
  sf::simlab::drop_file_cache();  // the nodes are built
  const double setup_s = std::chrono::duration<double>(Clock::now() - s.t0).count();
  const sf::simlab::SimResult r = lab.run(o.out);
  if (o.threads > 1) {
    // The threads are parked: their caches' free mbufs go back to the stack,
    // so in_use_at_end counts only mbufs still held.
    for (unsigned lc = 0; lc < RTE_MAX_LCORE; ++lc) rte_mempool_cache_flush(&s.pool->local_cache[lc], s.pool);
  }
  if (o.timing) print_timing(s, setup_s, r);
  std::cout << summary(o, s, lab, r).dump() << std::endl;
  int rc = r.finished && r.failed_workloads == 0 ? 0 : 1;
  if (g_use.failures != 0) {
    std::cerr << "sf-sim: the mbuf pool ran dry: " << g_use.failures << " allocations failed (pool of " << s.pp.mbufs
              << " mbufs sized from the plan, docs/sf-sim.md \"Cost\"); the nodes retried them, so timings differ "
              << "from a run with enough buffers: rerun with --mbufs " << 2 * s.pp.mbufs << "\n";
    rc = 1;
  }
  return rc;
}

}  // namespace

// arguments -> plan -> EAL -> pool -> nodes and run -> report -> teardown.
int main(int argc, char** argv) {
  // Every block of 128 KiB or more its own zero-filled mapping, for good:
  // glibc raises the threshold after the first such block is freed (a
  // parser's buffer) and then serves later ones from the heap, where calloc
  // must clear them, so a fabric's switch queue rings (calloc'd, a few
  // touched) would be written in full at setup (GBs). Adjacent mappings
  // merge into one kernel map area, so the count stays small.
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
  mallopt(M_MMAP_MAX, 1 << 30);
  Options o;
  if (auto rc = parse_options(argc, argv, o)) return *rc;
  Setup s;
  if (auto rc = bring_up(o, s)) return *rc;
  int rc = 0;
  try {
    rc = simulate(o, s);
  } catch (const sf::config::ConfigError& e) {
    std::cerr << "sf-sim: " << o.plan << ": " << e.what() << "\n";
    rc = 2;
  } catch (const std::exception& e) {
    std::cerr << "sf-sim: " << e.what() << "\n";
    rc = 1;
  }
  sf::dpdk::cleanup_eal();
  return rc;
}
