// A sharded switch (ShardedSwitch, 2 shards: Ethernet0/4 on shard 0,
// Ethernet8/12 on shard 1) driven from one thread in virtual time
// (ShardedSwitchNode) against the plain one-lcore SwitchNode fed the same
// frames: same frames out of every port, same counters, marks, drops and PFC,
// and a shared buffer that never leaks a cell.
#include "switch/pipeline/sharded_switch.h"

#include <gtest/gtest.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "common/config/json_loader.h"
#include "common/rng.h"
#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "tests/support/eal_env.h"
#include "tests/support/mbuf_chain.h"

namespace sf::sw {
namespace {

using wire::MacAddr;
using Bytes = std::vector<uint8_t>;

constexpr std::array<uint8_t, 6> kRouterMac{0x02, 0x53, 0x46, 0, 0, 0x01};
const MacAddr kHost[4] = {{{0x02, 0, 0, 0, 0, 0x0A}}, {{0x02, 0, 0, 0, 0, 0x0B}},
                          {{0x02, 0, 0, 0, 0, 0x0C}}, {{0x02, 0, 0, 0, 0, 0x0D}}};

std::string four_ports(const std::string& extra) {
  return R"({"PORT": {"Ethernet0": {"devargs": "a", "speed": 100}, "Ethernet4": {"devargs": "b", "speed": 100},
                      "Ethernet8": {"devargs": "c", "speed": 100}, "Ethernet12": {"devargs": "d", "speed": 100}})" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

// Lossless PG 3 (DSCP 26, pfc_enable 3), lossy PG 0 for the rest, dynamic
// thresholds over small pools so that admission, holds and drops all happen.
std::string buffers(const std::string& q3_th) {
  return R"(
    "DEVICE_METADATA": {"localhost": {"mmu_size": "512KiB"}},
    "BUFFER_POOL": {"ip": {"type": "ingress", "mode": "dynamic", "size": "256KiB", "xoff": "64KiB"},
                    "ep": {"type": "egress", "mode": "dynamic", "size": "256KiB"}},
    "BUFFER_PROFILE": {"pg0": {"pool": "ip", "size": "2048", "dynamic_th": "-1"},
                       "pg3": {"pool": "ip", "size": "2048", "dynamic_th": "-2", "xoff": "20000"},
                       "q0": {"pool": "ep", "size": "2048", "dynamic_th": "-1"},
                       "q3": {"pool": "ep", "size": "0", )" + q3_th + R"(}},
    "BUFFER_PG": {"Ethernet0,Ethernet4,Ethernet8,Ethernet12|0": {"profile": "pg0"},
                  "Ethernet0,Ethernet4,Ethernet8,Ethernet12|3": {"profile": "pg3"}},
    "BUFFER_QUEUE": {"Ethernet0,Ethernet4,Ethernet8,Ethernet12|0": {"profile": "q0"},
                     "Ethernet0,Ethernet4,Ethernet8,Ethernet12|3": {"profile": "q3"}},
    "PORT_QOS_MAP": {"global": {"pfc_enable": "3"}},
    "WRED_PROFILE": {"W": {"ecn": "ecn_all", "green_min_threshold": "3000", "green_max_threshold": "12000",
                           "green_drop_probability": "30"}},
    "QUEUE": {"Ethernet8|3": {"wred_profile": "W"}})";
}

Bytes frame(MacAddr dst, MacAddr src, uint8_t dscp, size_t payload, wire::Ecn ecn = wire::Ecn::kEct0) {
  wire::RoceFrameSpec s;
  s.l2 = {dst, src, std::nullopt};
  wire::Ipv4Spec ip;
  ip.src.bytes = {10, 0, 0, src.bytes[5]};
  ip.dst.bytes = {10, 0, 0, dst.bytes[5]};
  ip.dscp = dscp;
  ip.ecn = ecn;
  s.l3 = ip;
  s.bth.opcode = wire::Opcode::kRcWriteOnly;
  s.ext.reth_dma_length = static_cast<uint32_t>(payload);
  Bytes buf(9300);
  Bytes data(payload, 0x5A);
  const auto r = wire::build_roce_frame(buf, s, data);
  EXPECT_TRUE(r.ok());
  buf.resize(r.frame_bytes);
  return buf;
}

uint64_t ce_marked(const std::vector<Bytes>& frames) {
  uint64_t n = 0;
  for (const Bytes& b : frames) {
    const wire::FrameInfo f = wire::parse_frame(b);
    if (f.ipv4 != nullptr && f.ipv4->ecn() == wire::Ecn::kCe) ++n;
  }
  return n;
}

class ShardedSwitchTest : public testing::Test {
 protected:
  void make(const std::string& doc) {
    cfg_ = parse_switch_config(config::parse_text(doc));
    macs_.assign(cfg_.ports.ports.size(), kRouterMac);
    ref_ = std::make_unique<SwitchNode>(cfg_, macs_, test::mbuf_pool());
    sharded_ = std::make_unique<ShardedSwitch>(cfg_, macs_, test::mbuf_pool(), std::vector<uint16_t>{0, 0, 1, 1});
    node_ = std::make_unique<ShardedSwitchNode>(*sharded_);
  }
  void TearDown() override {
    node_.reset();
    sharded_.reset();
    ref_.reset();
  }
  // The same frame into both switches.
  void rx(uint16_t port, const Bytes& b, TimeNs now) {
    rte_mbuf* one[1] = {test::make_mbuf(b)};
    ref_->receive(port, one, now);
    one[0] = test::make_mbuf(b);
    node_->receive(port, one, now);
  }
  // One frame per transmit call, as the simulator's links ask.
  static std::vector<Bytes> take(Node& n, uint16_t port, TimeNs now, size_t max) {
    std::vector<Bytes> out;
    rte_mbuf* burst[1];
    while (out.size() < max) {
      const uint16_t k = n.transmit(port, std::span<rte_mbuf*>(burst, 1), now);
      if (k == 0) break;
      for (uint16_t i = 0; i < k; ++i) {
        out.push_back(test::take_bytes(burst[i]));
      }
    }
    return out;
  }
  // Up to `max` frames from `port` of both; expects the very same frames.
  std::vector<Bytes> tx(uint16_t port, TimeNs now, size_t max = SIZE_MAX) {
    const std::vector<Bytes> a = take(*ref_, port, now, max);
    const std::vector<Bytes> b = take(*node_, port, now, max);
    EXPECT_EQ(a.size(), b.size()) << "port " << port << " at " << now.ns();
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) EXPECT_EQ(a[i], b[i]) << "port " << port << " frame " << i;
    return b;
  }
  // Every counter of every port, and the buffer, equal in both.
  void expect_same_state(const char* where) {
    for (PortId p = 0; p < 4; ++p) {
      const PortCounters a = ref_->counters(p);
      const PortCounters b = sharded_->counters(p);
      EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0)
          << where << ": port " << p << " rx " << a.rx_packets << "/" << b.rx_packets << " tx " << a.tx_packets << "/"
          << b.tx_packets << " dropped " << a.dropped << "/" << b.dropped << " held " << a.held << "/" << b.held
          << " marks q3 " << a.queues[3].ecn_marked << "/" << b.queues[3].ecn_marked;
      for (uint8_t q = 0; q < kNumQueues; ++q) {
        EXPECT_EQ(ref_->queue_bytes(p, q), sharded_->owner(p).queue_bytes(p, q)) << where;
        EXPECT_EQ(ref_->mmu().queue_use(p, q).used, sharded_->owner(p).mmu().queue_use(p, q).used) << where;
      }
      for (uint8_t g = 0; g < kNumPgs; ++g) {
        EXPECT_EQ(ref_->mmu().pg_use(p, g).used, sharded_->owner(p).mmu().pg_use(p, g).used) << where;
        EXPECT_EQ(ref_->mmu().pg_use(p, g).hdrm, sharded_->owner(p).mmu().pg_use(p, g).hdrm) << where;
        EXPECT_EQ(ref_->held_packets(p, g), sharded_->held_packets(p, g)) << where;
      }
      EXPECT_EQ(ref_->pfc_tx(p).xoff_mask(), sharded_->owner(p).pfc_tx(p).xoff_mask()) << where << " port " << p;
    }
    EXPECT_EQ(ref_->mmu().total_used(), sharded_->mmu().total_used()) << where;
    for (uint16_t pool = 0; pool < 2; ++pool) {
      EXPECT_EQ(ref_->mmu().pool_shared_used(pool), sharded_->mmu().pool_shared_used(pool)) << where;
      EXPECT_EQ(ref_->mmu().hdrm_pool_used(pool), sharded_->mmu().hdrm_pool_used(pool)) << where;
    }
  }
  // Hosts A..D announce themselves on ports 0..3 (flooded, then learned).
  void learn_hosts(TimeNs now) {
    for (uint16_t p = 0; p < 4; ++p) rx(p, frame(kHost[(p + 1) % 4], kHost[p], 0, 64), now);
    for (uint16_t p = 0; p < 4; ++p) tx(p, now);
  }

  SwitchConfig cfg_;
  std::vector<std::array<uint8_t, 6>> macs_;
  std::unique_ptr<SwitchNode> ref_;
  std::unique_ptr<ShardedSwitch> sharded_;
  std::unique_ptr<ShardedSwitchNode> node_;
};

// 1. Incast across shards with ECN, plus traffic inside each shard and back.
// A (port 0) and B (port 1, both shard 0) send lossless traffic to C (port 2,
// shard 1) while D (port 3, shard 1) sends to C and C answers A. Port 2 is
// drained slower than it fills. Expect: the same frames (CE marks included)
// leave every port in the same order, and every counter, occupancy and the
// buffer match the one-lcore switch after every step; traffic crossed the
// rings both ways and all cells came back.
TEST_F(ShardedSwitchTest, SameAsOneShardForCrossShardIncast) {
  make(four_ports(buffers(R"("dynamic_th": "0")")));
  learn_hosts(TimeNs(0));
  expect_same_state("after learning");
  uint64_t marked = 0;
  for (int round = 0; round < 40; ++round) {
    const TimeNs now = TimeNs::from_us(1 + round);
    rx(0, frame(kHost[2], kHost[0], 26, 900), now);
    rx(1, frame(kHost[2], kHost[1], 26, 900), now);
    rx(3, frame(kHost[2], kHost[3], 26, 400), now);
    rx(2, frame(kHost[0], kHost[2], 0, 300), now);
    rx(0, frame(kHost[1], kHost[0], 0, 200), now);
    marked += ce_marked(tx(2, now, 2));
    tx(0, now, 1);
    tx(1, now);
    expect_same_state("incast round");
  }
  const TimeNs end = TimeNs::from_us(100);
  for (uint16_t p = 0; p < 4; ++p) {
    const std::vector<Bytes> left = tx(p, end);
    if (p == 2) marked += ce_marked(left);
  }
  expect_same_state("drained");
  EXPECT_GT(marked, 0u);
  EXPECT_EQ(marked, sharded_->counters(2).queues[3].ecn_marked);
  EXPECT_EQ(sharded_->mmu().total_used(), 0u);
  const ShardCounters& s0 = sharded_->shard_counters(0);
  const ShardCounters& s1 = sharded_->shard_counters(1);
  EXPECT_GE(s0.forwarded, 80u);  // A and B to C
  EXPECT_GE(s1.forwarded, 40u);  // C to A
  EXPECT_EQ(s0.forwarded, s1.received);
  EXPECT_EQ(s1.forwarded, s0.received);
  EXPECT_EQ(s0.releases_sent, s1.releases_received);
  EXPECT_EQ(s1.releases_sent, s0.releases_received);
  EXPECT_EQ(s0.ring_full + s1.ring_full, 0u);
}

// 2. Property: random traffic (sizes, ports, classes, floods, bursts,
// partial drains) over a small dynamic-threshold buffer that overflows, 20
// seeds. (Exact equality with one shard is test 1's business: here lossless
// PGs send to both shards, and which of a shard's held packets takes freed
// space first may differ from one shard's round robin over all hold FIFOs.)
// Expect after every step: every packet is accounted for (received + extra
// flood copies = sent + dropped + queued + held), the physical buffer equals
// the ingress PGs' cells (all on their own shards), and the rings moved
// release notes for every cell sent back. At the end, with every port
// drained: no cell left anywhere (buffer, pools, headroom, every PG and
// queue of every shard).
TEST_F(ShardedSwitchTest, SharedPoolNeverLeaksCells) {
  uint64_t all_drops = 0, all_held = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    make(four_ports(buffers(R"("dynamic_th": "-1")")));
    Rng rng(seed);
    learn_hosts(TimeNs(0));
    auto check = [&](const char* where) {
      uint64_t in = 0, out = 0, pg_cells = 0, q_cells = 0;
      for (PortId p = 0; p < 4; ++p) {
        const PortCounters c = sharded_->counters(p);
        in += c.rx_packets + 2 * c.flooded;  // 4 ports: a flood makes 3 copies of 1 packet
        out += c.tx_packets + c.dropped;
        for (uint8_t i = 0; i < 8; ++i) {
          out += sharded_->owner(p).queue_packets(p, i) + sharded_->held_packets(p, i);
          pg_cells += sharded_->owner(p).mmu().pg_use(p, i).used;
          q_cells += sharded_->owner(p).mmu().queue_use(p, i).used;
        }
      }
      EXPECT_EQ(in, out) << where << " seed " << seed;
      EXPECT_EQ(sharded_->mmu().total_used(), pg_cells) << where << " seed " << seed;
      EXPECT_LE(q_cells, pg_cells) << where << " seed " << seed;
      EXPECT_EQ(sharded_->shard_counters(0).releases_sent, sharded_->shard_counters(1).releases_received);
      EXPECT_EQ(sharded_->shard_counters(1).releases_sent, sharded_->shard_counters(0).releases_received);
    };
    for (int step = 0; step < 300; ++step) {
      const TimeNs now = TimeNs::from_us(1 + step);
      const auto in = static_cast<uint16_t>(rng.next_u64() % 4);
      const uint64_t r = rng.next_u64();
      const bool unknown = r % 17 == 0;  // floods
      const MacAddr dst = unknown ? MacAddr{{0x02, 0, 0, 0, 1, 0x99}} : kHost[(in + 1 + r % 3) % 4];
      const uint8_t dscp = (r >> 8) % 2 == 0 ? 26 : 0;
      const size_t payload = 20 + (r >> 16) % 1400;
      const int burst = 1 + static_cast<int>((r >> 32) % 6);
      for (int k = 0; k < burst; ++k) {
        rx(in, frame(dst, kHost[in], dscp, payload, k % 3 == 0 ? wire::Ecn::kNotEct : wire::Ecn::kEct1), now);
      }
      take(*node_, static_cast<uint16_t>((r >> 40) % 4), now, (r >> 44) % 4);
      check("random step");
      if (HasFailure()) return;
    }
    for (uint16_t p = 0; p < 4; ++p) {
      all_drops += sharded_->counters(p).dropped;
      all_held += sharded_->counters(p).held;
    }
    for (int round = 0; round < 3; ++round) {
      for (uint16_t p = 0; p < 4; ++p) take(*node_, p, TimeNs::from_ms(1), SIZE_MAX);
    }
    check("drained");
    EXPECT_EQ(sharded_->mmu().total_used(), 0u) << "seed " << seed;
    for (uint16_t pool = 0; pool < 2; ++pool) {
      EXPECT_EQ(sharded_->mmu().pool_shared_used(pool), 0u) << "seed " << seed;
      EXPECT_EQ(sharded_->mmu().hdrm_pool_used(pool), 0u) << "seed " << seed;
    }
    for (uint16_t s = 0; s < 2; ++s) {
      for (PortId p = 0; p < 4; ++p) {
        for (uint8_t i = 0; i < 8; ++i) {
          EXPECT_EQ(sharded_->shard(s).mmu().pg_use(p, i).used, 0u) << "seed " << seed << " shard " << s;
          EXPECT_EQ(sharded_->shard(s).mmu().queue_use(p, i).used, 0u) << "seed " << seed << " shard " << s;
        }
      }
    }
    TearDown();
  }
  EXPECT_GT(all_drops, 0u) << "the buffer is meant to overflow";
  EXPECT_GT(all_held, 0u) << "lossless packets are meant to be held";
}

// 3. PFC from congestion at a remote egress. Port 2 (shard 1) is paused by
// hand; A (port 0, shard 0) sends lossless traffic to C on port 2. Expect:
// the queue fills to its limit, further packets are held on shard 1 while
// their cells stay charged to port 0's PG 3 on shard 0, which asserts XOFF:
// port 0 sends a PFC frame pausing priority 3. After the pause ends and
// port 2 drains, the cells come back to shard 0 and port 0 sends XON. Both
// exactly as the one-lcore switch does, and nothing is lost.
TEST_F(ShardedSwitchTest, RemoteEgressCongestionPausesTheIngressPort) {
  make(four_ports(buffers(R"("dynamic_th": "-7")")));
  learn_hosts(TimeNs(0));
  ref_->set_paused(2, 1u << 3);
  sharded_->shard(1).set_paused(2, 1u << 3);
  TimeNs now = TimeNs::from_us(1);
  for (int i = 0; i < 50; ++i) rx(0, frame(kHost[2], kHost[0], 26, 1000), now);
  expect_same_state("congested");
  EXPECT_GT(sharded_->held_packets(0, 3), 0u);
  EXPECT_EQ(sharded_->shard(1).held_packets(0, 3), sharded_->held_packets(0, 3));  // held at the egress shard
  EXPECT_NE(sharded_->owner(0).pfc_tx(0).xoff_mask() & (1u << 3), 0u);
  EXPECT_EQ(sharded_->counters(0).dropped, 0u);
  const std::vector<Bytes> xoff = tx(0, now);
  ASSERT_EQ(xoff.size(), 1u);
  wire::FrameInfo f = wire::parse_frame(xoff[0]);
  ASSERT_NE(f.pfc, nullptr);
  EXPECT_EQ(f.pfc->enabled_mask() & (1u << 3), 1u << 3);
  EXPECT_GT(f.pfc->time_quanta[3].value(), 0u);
  // The pause ends; port 2 drains everything.
  ref_->set_paused(2, 0);
  sharded_->shard(1).set_paused(2, 0);
  now = TimeNs::from_us(50);
  EXPECT_EQ(tx(2, now).size(), 50u);
  expect_same_state("drained");
  EXPECT_EQ(sharded_->owner(0).pfc_tx(0).xoff_mask(), 0u);
  const std::vector<Bytes> xon = tx(0, now);
  ASSERT_EQ(xon.size(), 1u);
  f = wire::parse_frame(xon[0]);
  ASSERT_NE(f.pfc, nullptr);
  EXPECT_EQ(f.pfc->time_quanta[3].value(), 0u);
  EXPECT_EQ(sharded_->counters(0).tx_pfc_frames, 2u);
  EXPECT_EQ(sharded_->mmu().total_used(), 0u);
}

// 5. The two shards on two threads at once, each driving only its own ports
// through its per-lcore driver node (ShardedSwitch::shard_node) as a poll
// loop does: bursts in, transmit, advance. Lossless and lossy traffic cross
// in both directions, with floods, over a buffer that overflows. Expect,
// once both stopped and the rings are drained: every packet transmitted or
// dropped exactly once per copy, no cell left in the shared buffer or any
// PG or queue, every release note applied, no ring-full drop.
TEST_F(ShardedSwitchTest, TwoThreadsConserveEveryPacketAndCell) {
  make(four_ports(buffers(R"("dynamic_th": "-1")")));
  learn_hosts(TimeNs(0));
  ref_.reset();  // not used: the threads allocate their own frames
  auto run_shard = [&](uint16_t s) {
    ASSERT_EQ(rte_thread_register(), 0);  // an lcore id, as a shard's EAL lcore has
    Node& n = sharded_->shard_node(s);
    Rng rng(100 + s);
    rte_mbuf* out[32];
    for (int it = 0; it < 3000; ++it) {
      const TimeNs now = TimeNs::from_us(10 + it);
      const auto in = static_cast<uint16_t>(2 * s + rng.next_u64() % 2);
      const uint64_t r = rng.next_u64();
      const MacAddr dst = r % 23 == 0 ? MacAddr{{0x02, 0, 0, 0, 1, 0x99}} : kHost[(in + 1 + r % 3) % 4];
      rte_mbuf* burst[4];
      const int k = 1 + static_cast<int>((r >> 8) % 4);
      for (int i = 0; i < k; ++i) burst[i] = test::make_mbuf(frame(dst, kHost[in], (r >> 16) % 2 ? 26 : 0, 64 + (r >> 20) % 1200));
      n.receive(in, std::span<rte_mbuf*>(burst, k), now);
      if (now >= n.next_wakeup(now)) n.advance(now);
      for (uint16_t p = 2 * s; p < 2 * s + 2; ++p) {
        const uint16_t got = n.transmit(p, std::span<rte_mbuf*>(out, 1 + (r >> 32) % 3), now);
        rte_pktmbuf_free_bulk(out, got);
      }
    }
    rte_thread_unregister();
  };
  std::thread t0(run_shard, 0);
  std::thread t1(run_shard, 1);
  t0.join();
  t1.join();
  // Drain on this thread until nothing moves.
  rte_mbuf* out[32];
  for (int round = 0; round < 1000; ++round) {
    bool moved = sharded_->pump_all(TimeNs::from_ms(10));
    for (uint16_t p = 0; p < 4; ++p) {
      Node& n = sharded_->shard_node(sharded_->shard_of(p));
      n.advance(TimeNs::from_ms(10));
      const uint16_t got = n.transmit(p, out, TimeNs::from_ms(10));
      rte_pktmbuf_free_bulk(out, got);
      moved |= got > 0;
    }
    if (!moved) break;
  }
  uint64_t in = 0, done = 0, dropped = 0;
  for (PortId p = 0; p < 4; ++p) {
    const PortCounters c = sharded_->counters(p);
    in += c.rx_packets + 2 * c.flooded;
    done += c.tx_packets + c.dropped;
    dropped += c.dropped;
    for (uint8_t i = 0; i < 8; ++i) {
      EXPECT_EQ(sharded_->owner(p).queue_packets(p, i), 0u);
      EXPECT_EQ(sharded_->held_packets(p, i), 0u);
    }
  }
  EXPECT_EQ(in, done);
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(sharded_->mmu().total_used(), 0u);
  for (uint16_t pool = 0; pool < 2; ++pool) {
    EXPECT_EQ(sharded_->mmu().pool_shared_used(pool), 0u);
    EXPECT_EQ(sharded_->mmu().hdrm_pool_used(pool), 0u);
  }
  for (uint16_t s = 0; s < 2; ++s) {
    for (PortId p = 0; p < 4; ++p) {
      for (uint8_t i = 0; i < 8; ++i) {
        EXPECT_EQ(sharded_->shard(s).mmu().pg_use(p, i).used, 0u);
        EXPECT_EQ(sharded_->shard(s).mmu().queue_use(p, i).used, 0u);
      }
    }
  }
  const ShardCounters& a = sharded_->shard_counters(0);
  const ShardCounters& b = sharded_->shard_counters(1);
  EXPECT_GT(a.forwarded, 100u);
  EXPECT_GT(b.forwarded, 100u);
  EXPECT_EQ(a.forwarded, b.received);
  EXPECT_EQ(b.forwarded, a.received);
  EXPECT_EQ(a.releases_sent, b.releases_received);
  EXPECT_EQ(b.releases_sent, a.releases_received);
  EXPECT_EQ(a.ring_full + b.ring_full, 0u);
}

// 6. The shared FDB (concurrent mode): two threads learn 1500 MACs each on
// their own port while looking up the other's. Expect: every MAC learned
// once on its port, lookups never see a wrong port, the counters add up. An
// ageing sweep removes them all (their slots are freed at the next sweep: a
// lookup may still be reading them); the table counts only live entries.
TEST(ShardedFdb, TwoLearnersOneAger) {
  constexpr uint32_t kPerThread = 1500;
  Fdb fdb(2 * kPerThread, /*concurrent=*/true);
  auto mac_of = [](uint32_t t, uint32_t i) {
    return MacAddr{{0x02, static_cast<uint8_t>(t), static_cast<uint8_t>(i >> 16), static_cast<uint8_t>(i >> 8),
                    static_cast<uint8_t>(i), 0x01}}.bytes;
  };
  std::atomic<uint64_t> wrong{0};
  auto learner = [&](uint32_t t) {
    // Writers need an lcore id (rte_hash's per-lcore free-slot cache), as
    // the shards' EAL lcores have.
    ASSERT_EQ(rte_thread_register(), 0);
    for (uint32_t i = 0; i < kPerThread; ++i) {
      fdb.learn(mac_of(t, i), 0, static_cast<uint16_t>(t), TimeNs(0));
      const auto other = fdb.lookup(mac_of(1 - t, i), 0);
      if (other && *other != 1 - t) wrong.fetch_add(1);
    }
    rte_thread_unregister();
  };
  std::thread a(learner, 0);
  std::thread b(learner, 1);
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_EQ(fdb.size(), 2 * kPerThread);
  EXPECT_EQ(fdb.stats().learned, 2 * kPerThread);
  for (uint32_t t = 0; t < 2; ++t) {
    for (uint32_t i = 0; i < kPerThread; ++i) ASSERT_EQ(fdb.lookup(mac_of(t, i), 0), static_cast<uint16_t>(t));
  }
  const TimeNs ageing = TimeNs::from_s(300);
  EXPECT_EQ(fdb.age(ageing, ageing), 2 * kPerThread);
  EXPECT_EQ(fdb.size(), 0u);
  EXPECT_FALSE(fdb.lookup(mac_of(0, 7), 0).has_value());
  // New MACs while the aged slots wait for the next sweep; that sweep frees
  // them and ages nothing it should not.
  for (uint32_t i = 0; i < 2 * kPerThread; ++i) {
    EXPECT_EQ(fdb.learn(mac_of(2, i), 0, 2, ageing), LearnOutcome::kLearned) << i;
  }
  EXPECT_EQ(fdb.age(ageing + TimeNs::from_s(1), ageing), 0u);
  EXPECT_EQ(fdb.lookup(mac_of(2, 9), 0), 2);
  EXPECT_EQ(fdb.size(), 2 * kPerThread);
}

// Lossy PG 0 / queue 0 over dynamic thresholds with a trim profile at
// ingress (`pg_action`) or egress (`q_action`); trimmed packets go to queue 6.
// The trimming side has the tight limit (alpha 1/32), the other one a loose one.
std::string trim_buffers(const char* pg_action, const char* q_action) {
  const std::string pg_th = std::string(pg_action) == "trim" ? "-5" : "2";
  const std::string q_th = std::string(q_action) == "trim" ? "-5" : "2";
  return std::string(R"(
    "DEVICE_METADATA": {"localhost": {"mmu_size": "512KiB"}},
    "BUFFER_POOL": {"ip": {"type": "ingress", "mode": "dynamic", "size": "256KiB"},
                    "ep": {"type": "egress", "mode": "dynamic", "size": "256KiB"}},
    "BUFFER_PROFILE": {"pg0": {"pool": "ip", "size": "0", "dynamic_th": ")") + pg_th +
         R"(", "packet_discard_action": ")" + pg_action + R"("},
                       "q0": {"pool": "ep", "size": "0", "dynamic_th": ")" + q_th +
         R"(", "packet_discard_action": ")" + q_action + R"("},
                       "q6": {"pool": "ep", "size": "0", "dynamic_th": "3"}},
    "BUFFER_PG": {"Ethernet0,Ethernet4,Ethernet8,Ethernet12|0": {"profile": "pg0"}},
    "BUFFER_QUEUE": {"Ethernet0,Ethernet4,Ethernet8,Ethernet12|0": {"profile": "q0"},
                     "Ethernet0,Ethernet4,Ethernet8,Ethernet12|6": {"profile": "q6"}},
    "SWITCH_TRIMMING": {"GLOBAL": {"size": "128", "dscp_value": "48", "queue_index": "6"}})";
}

// 5. Trimming across shards. A and B (shard 0) and D (shard 1) overload C
// (port 2, shard 1) with lossy frames; first with a trim profile on the
// ingress PG (trimmed on the ingress shard, admitted to queue 6 by the egress
// shard), then on the egress queue (trimmed by the egress shard on packets
// another shard admitted at ingress). Expect: the same frames, whole and
// trimmed, leave every port in the same order, every counter (trimmed,
// trimmed_tx, trimmed_dropped) matches the one-lcore switch after every
// step, every trimmed frame left or was counted trimmed_dropped, and no
// cell is left.
TEST_F(ShardedSwitchTest, TrimsAsOneShard) {
  for (const bool at_ingress : {true, false}) {
    SCOPED_TRACE(at_ingress ? "trim at ingress" : "trim at egress");
    make(four_ports(trim_buffers(at_ingress ? "trim" : "drop", at_ingress ? "drop" : "trim")));
    learn_hosts(TimeNs(0));
    for (int round = 0; round < 60; ++round) {
      const TimeNs now = TimeNs::from_us(1 + round);
      rx(0, frame(kHost[2], kHost[0], 0, 1000), now);
      rx(1, frame(kHost[2], kHost[1], 0, 1000), now);
      rx(3, frame(kHost[2], kHost[3], 0, 1000), now);
      tx(2, now, 1);
      expect_same_state("trim round");
    }
    EXPECT_GT(sharded_->shard_counters(0).forwarded, 40u);
    const TimeNs end = TimeNs::from_us(200);
    for (uint16_t p = 0; p < 4; ++p) tx(p, end);
    expect_same_state("drained");
    // Trimmed at ingress, a frame needs one more cell of its full PG, so
    // some are trimmed_dropped (as with one lcore); every other one left.
    const PortCounters c = sharded_->counters(2);
    EXPECT_GT(c.trimmed_tx, 20u);
    EXPECT_EQ(c.trimmed_tx + c.trimmed_dropped, c.trimmed);
    if (!at_ingress) {
      EXPECT_EQ(c.trimmed_dropped, 0u);
    }
    EXPECT_EQ(sharded_->mmu().total_used(), 0u);
    node_.reset();
    sharded_.reset();
    ref_.reset();
  }
}

// 4. Bad shard maps and configs sharding does not support are refused with
// a reason (trimming is supported); one shard is the plain switch (no rings, no shared counters).
TEST_F(ShardedSwitchTest, RefusesBadMapsAndUnsupportedConfigs) {
  cfg_ = parse_switch_config(config::parse_text(four_ports("")));
  macs_.assign(4, kRouterMac);
  EXPECT_THROW(ShardedSwitch(cfg_, macs_, nullptr, {0, 0, 2, 2}), std::invalid_argument);  // shard 1 owns nothing
  EXPECT_THROW(ShardedSwitch(cfg_, macs_, nullptr, {0, 1}), std::invalid_argument);
  std::string err;
  EXPECT_TRUE(ShardedSwitch::parse_map("0,1,x,1", 4, &err).empty());
  EXPECT_NE(err.find("'x'"), std::string::npos);
  EXPECT_TRUE(ShardedSwitch::parse_map("0,1", 4, &err).empty());
  EXPECT_NE(err.find("2 entries for 4 ports"), std::string::npos);
  EXPECT_EQ(ShardedSwitch::parse_map("0,1,1,0", 4, &err), (std::vector<uint16_t>{0, 1, 1, 0}));
  EXPECT_EQ(ShardedSwitch::even_split(4, 2), (std::vector<uint16_t>{0, 0, 1, 1}));
  EXPECT_EQ(ShardedSwitch::even_split(3, 2), (std::vector<uint16_t>{0, 0, 1}));
  ShardedSwitch one(cfg_, macs_, nullptr, {0, 0, 0, 0});
  EXPECT_EQ(one.num_shards(), 1);
  EXPECT_FALSE(one.shard(0).mmu().attached());
  // Trimming is taken across shards (tests/scenario/sharded_trim_incast_test.cc).
  SwitchConfig trim = parse_switch_config(config::parse_text(four_ports(
      R"("SWITCH_TRIMMING": {"GLOBAL": {"size": "128", "dscp_value": "48", "queue_index": "6"}})")));
  ShardedSwitch t(trim, macs_, nullptr, {0, 0, 1, 1});
  EXPECT_EQ(t.num_shards(), 2);
}

}  // namespace
}  // namespace sf::sw
