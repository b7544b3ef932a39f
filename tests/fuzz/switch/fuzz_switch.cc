// libFuzzer target over the switch receive path: arbitrary frames (any bytes,
// any length, one or many mbuf segments) arrive on the ports of a SwitchNode
// (3 ports, routes, SRv6, WRED, a lossless PG with headroom; see
// switch_fuzz_input.h for the config and the input encoding), interleaved
// with transmits, pauses and time steps. Must never crash or touch memory it
// does not own (ASan/UBSan), and after every input, once every port is
// unpaused and drained: no MMU cell is still charged, no packet is queued or
// held, every queue sent what it enqueued, and every mbuf is back in the pool.
//
// EAL and the switch are set up once per process (--no-huge, no PCI, no shared
// config). Building a SwitchNode costs ~20 ms (rte_lpm zeroes a 64 MiB tbl24),
// so one node serves every input: after each input it is drained and virtual
// time jumps past the FDB ageing, which leaves it as built except for the WRED
// random stream, the DWRR round-robin position and cumulative counters. Every
// check is per input, but a crash that depends on that carried state needs
// the preceding inputs to reproduce (run the crashing input alone first).
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "common/config/json_loader.h"
#include "switch/config/switch_config.h"
#include "switch/pipeline/switch_node.h"
#include "tests/fuzz/fuzz_eal.h"
#include "tests/fuzz/switch/switch_fuzz_input.h"
#include "tests/support/mbuf_chain.h"

namespace {

using sf::TimeNs;
using sf::sw::SwitchNode;

constexpr const char* kTarget = "fuzz_switch";
constexpr uint32_t kPoolMbufs = 8191;
constexpr uint16_t kDataRoom = 2048;  // + headroom; longer frames are chained
constexpr uint32_t kMaxBurst = 32;
constexpr TimeNs kRecordStep(50);

constexpr TimeNs kBetweenInputs = TimeNs::from_s(3);  // > fdb_ageing_time of the config

rte_mempool* g_pool = nullptr;
const sf::sw::SwitchConfig* g_cfg = nullptr;
SwitchNode* g_sw = nullptr;
std::array<rte_mbuf*, 64> g_reserve{};
bool g_verbose = false;
TimeNs g_now = TimeNs::from_us(1);

[[noreturn]] void fail(const char* what) { sf::fuzz::fail(kTarget, what); }

// An mbuf chain holding `bytes`, segments of at most `seg` bytes (0 = the data
// room). nullptr when the pool is dry (the frame is then skipped).
rte_mbuf* make_chain(std::span<const uint8_t> bytes, uint32_t seg) {
  return sf::test::make_mbuf_chain(g_pool, bytes, seg);
}

void free_all(std::span<rte_mbuf*> pkts) {
  for (rte_mbuf* m : pkts) rte_pktmbuf_free(m);
}

// Replays one input against `sw`. See switch_fuzz_input.h.
class Replay {
 public:
  Replay(SwitchNode& sw, TimeNs start) : sw_(sw), now_(start) {}
  TimeNs now() const { return now_; }

  void run(const uint8_t* data, size_t size) {
    size_t i = 0;
    while (i < size) {
      const uint8_t op = data[i++];
      const auto port = static_cast<uint16_t>(sf::fuzz::port_of(op));
      if (op < sf::fuzz::kOpTx) {
        if (i + 2 > size) break;
        const size_t want = static_cast<size_t>(data[i]) << 8 | data[i + 1];
        i += 2;
        const size_t len = std::min(want, size - i);
        last_frame_ = {data + i, len};
        last_seg_ = static_cast<uint32_t>((op >> 2) & 0x1F) * 64;
        rx(port, last_frame_, last_seg_);
        i += len;
      } else if (op < sf::fuzz::kOpCtrl) {
        flush();
        tx(port, static_cast<uint32_t>((op >> 2) & 0xF) + 1);
      } else {
        flush();
        const uint8_t kind = (op >> 2) & 0xF;
        if (kind == sf::fuzz::kCtrlPause) {
          if (i >= size) break;
          sw_.set_paused(port, data[i++]);
        } else if (kind == sf::fuzz::kCtrlTime) {
          if (i >= size) break;
          const uint8_t step = data[i++];
          now_ += step == 0xFF ? TimeNs::from_s(2) : TimeNs::from_us(step);
          if (sw_.next_wakeup(now_) <= now_) sw_.advance(now_);
        } else if (kind == sf::fuzz::kCtrlClear) {
          sw_.clear_watermarks();
        } else if (kind == sf::fuzz::kCtrlRepeat) {
          if (i >= size) break;
          const uint32_t times = uint32_t{data[i++]} + 1;
          for (uint32_t k = 0; k < times && last_frame_.data() != nullptr; ++k) rx(port, last_frame_, last_seg_);
        }
      }
      now_ += kRecordStep;
    }
    flush();
  }

  // Unpauses every port and transmits until nothing is left anywhere. Time
  // first moves past any received PFC / PAUSE (0xFFFF quanta at 1G = 33.6 ms).
  void drain() {
    now_ += TimeNs::from_s(1);
    sw_.advance(now_);
    for (uint16_t p = 0; p < sw_.num_ports(); ++p) sw_.set_paused(p, 0);
    bool any = true;
    while (any) {
      any = false;
      for (uint16_t p = 0; p < sw_.num_ports(); ++p) any |= tx(p, kMaxBurst) > 0;
    }
  }

 private:
  void rx(uint16_t port, std::span<const uint8_t> frame, uint32_t seg) {
    if (burst_n_ > 0 && (burst_port_ != port || burst_n_ == kMaxBurst)) flush();
    rte_mbuf* m = make_chain(frame, seg);
    if (m == nullptr) return;
    burst_port_ = port;
    burst_[burst_n_++] = m;
  }
  void flush() {
    if (burst_n_ == 0) return;
    sw_.receive(burst_port_, std::span<rte_mbuf*>(burst_.data(), burst_n_), now_);
    burst_n_ = 0;
  }
  uint16_t tx(uint16_t port, uint32_t room) {
    std::array<rte_mbuf*, kMaxBurst> out{};
    const uint16_t n = sw_.transmit(port, std::span<rte_mbuf*>(out.data(), room), now_);
    if (n > room) fail("transmit returned more packets than the room it was given");
    for (uint16_t k = 0; k < n; ++k) {
      if (out[k] == nullptr) fail("transmit returned a null mbuf");
    }
    free_all({out.data(), n});
    return n;
  }

  SwitchNode& sw_;
  TimeNs now_;
  std::span<const uint8_t> last_frame_;  // into the input, for kCtrlRepeat
  uint32_t last_seg_ = 0;
  std::array<rte_mbuf*, kMaxBurst> burst_{};
  uint32_t burst_n_ = 0;
  uint16_t burst_port_ = 0;
};

// SF_FUZZ_SWITCH_VERBOSE=1: what each input did, per port (counters are
// cumulative over the process, so the input's share is after - before).
void print_counters(const SwitchNode& sw, const std::vector<sf::sw::PortCounters>& before) {
  for (uint16_t p = 0; p < sw.num_ports(); ++p) {
    const sf::sw::PortCounters& c = sw.counters(p);
    const sf::sw::PortCounters& b = before[p];
    std::fprintf(stderr, "port %u: rx %lu tx %lu flooded %lu routed %lu held %lu mac_control %lu dropped %lu", p,
                 c.rx_packets - b.rx_packets, c.tx_packets - b.tx_packets, c.flooded - b.flooded,
                 c.routed - b.routed, c.held - b.held, c.rx_mac_control - b.rx_mac_control, c.dropped - b.dropped);
    for (size_t k = 0; k < c.drops.size(); ++k) {
      if (c.drops[k] != b.drops[k]) {
        std::fprintf(stderr, " %s=%lu", std::string(sf::sw::to_string(static_cast<sf::sw::DropCause>(k))).c_str(),
                     c.drops[k] - b.drops[k]);
      }
    }
    uint64_t marked = 0;
    for (size_t q = 0; q < c.queues.size(); ++q) marked += c.queues[q].ecn_marked - b.queues[q].ecn_marked;
    std::fprintf(stderr, " ecn_marked %lu\n", marked);
  }
}

void check_empty(const SwitchNode& sw) {
  const sf::sw::Mmu& mmu = sw.mmu();
  if (mmu.total_used() != 0) {
    std::fprintf(stderr, "fuzz_switch: MMU total_used = %u cells after draining\n", mmu.total_used());
    for (uint16_t p = 0; p < sw.num_ports(); ++p) {
      for (uint8_t i = 0; i < sf::sw::kNumQueues; ++i) {
        const sf::sw::BufferUse& pg = mmu.pg_use(p, i);
        const sf::sw::BufferUse& q = mmu.queue_use(p, i);
        if (pg.used != 0 || q.used != 0 || sw.held_packets(p, i) != 0 || sw.queue_packets(p, i) != 0) {
          std::fprintf(stderr, "  port %u #%u: PG used %u (shared %u, headroom %u), held %u; queue used %u (shared %u), %u packets\n",
                       p, i, pg.used, pg.shared, pg.hdrm, sw.held_packets(p, i), q.used, q.shared, sw.queue_packets(p, i));
        }
      }
    }
    std::abort();
  }
  for (uint16_t pool = 0; pool < g_cfg->mmu.pools.size(); ++pool) {
    if (mmu.pool_shared_used(pool) != 0 || mmu.hdrm_pool_used(pool) != 0) fail("pool shared/headroom cells leaked");
  }
  for (uint16_t p = 0; p < sw.num_ports(); ++p) {
    for (uint8_t i = 0; i < sf::sw::kNumQueues; ++i) {
      if (sw.queue_packets(p, i) != 0 || sw.queue_bytes(p, i) != 0) fail("egress queue not empty after draining");
      if (sw.held_packets(p, i) != 0) fail("packets still held at ingress after draining");
      if (mmu.pg_use(p, i).used != 0 || mmu.queue_use(p, i).used != 0) fail("PG/queue cells leaked");
      const sf::sw::QueueCounters& q = sw.counters(p).queues[i];
      // Every packet enqueued was sent, or flushed unsent (PFC watchdog, port down).
      if (q.enqueued_packets != q.tx_packets + q.flushed) {
        fail("a queue sent (or flushed) a different number of packets than it enqueued");
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  g_pool = sf::fuzz::start_eal(kTarget, (*argv)[0], kPoolMbufs, kDataRoom, g_reserve);
  g_cfg = new sf::sw::SwitchConfig(sf::sw::parse_switch_config(sf::config::parse_text(sf::fuzz::kFuzzSwitchConfig)));
  std::array<uint8_t, 6> mac{};
  std::memcpy(mac.data(), sf::fuzz::kFuzzRouterMac, mac.size());
  const std::vector<std::array<uint8_t, 6>> macs(g_cfg->ports.ports.size(), mac);
  g_sw = new SwitchNode(*g_cfg, macs);
  g_verbose = sf::fuzz::env_flag("SF_FUZZ_SWITCH_VERBOSE");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const unsigned avail_before = rte_mempool_avail_count(g_pool);
  SwitchNode& sw = *g_sw;
  std::vector<sf::sw::PortCounters> before;
  if (g_verbose) {
    for (uint16_t p = 0; p < sw.num_ports(); ++p) before.push_back(sw.counters(p));
  }
  Replay r(sw, g_now);
  r.run(data, size);
  r.drain();
  if (g_verbose) print_counters(sw, before);
  check_empty(sw);
  sf::fuzz::check_no_leak(kTarget, g_pool, avail_before);
  // Forget what this input taught the FDB: every learned entry ages out.
  g_now = r.now() + kBetweenInputs;
  sw.advance(g_now);
  if (sw.fdb().size() != g_cfg->fdb.size()) fail("learned FDB entries survived ageing");
  return 0;
}
