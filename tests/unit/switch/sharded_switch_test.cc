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
#include "common/wire/credit_frame.h"
#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "tests/support/eal_env.h"
#include "tests/support/mbuf_chain.h"
#include "tests/support/roce_frame.h"

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
// `pfc` false: no pfc_enable (CREDIT_FC ports run no PFC); PG 3 still holds.
std::string buffers(const std::string& q3_th, bool pfc = true) {
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
    )" + std::string(pfc ? R"("PORT_QOS_MAP": {"global": {"pfc_enable": "3"}},)" : "") + R"(
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
  return test::roce_frame_bytes(s, payload);
}

uint64_t ce_marked(const std::vector<Bytes>& frames) {
  uint64_t n = 0;
  for (const Bytes& b : frames) {
    const wire::FrameInfo f = wire::parse_frame(b);
    if (f.ipv4 != nullptr && f.ipv4->ecn() == wire::Ecn::kCe) ++n;
  }
  return n;
}

// Release notes went both ways as many as came in, and no ring was ever full.
void expect_rings_balanced(const ShardCounters& s0, const ShardCounters& s1) {
  EXPECT_EQ(s0.releases_sent, s1.releases_received);
  EXPECT_EQ(s1.releases_sent, s0.releases_received);
  EXPECT_EQ(s0.ring_full + s1.ring_full, 0u);
  EXPECT_EQ(s0.release_ring_full + s1.release_ring_full, 0u);
}

// One step of the random traffic of the property tests: a burst of `burst`
// frames into port `in` for `dst` (a known host on another port, or one in
// 17 an unknown MAC: flooded), with `r` the step's draw for the rest.
struct RandomSend {
  uint16_t in;
  uint64_t r;
  MacAddr dst;
  uint8_t dscp;
  size_t payload;
  int burst;
};
RandomSend random_send(Rng& rng) {
  RandomSend s;
  s.in = static_cast<uint16_t>(rng.next_u64() % 4);
  s.r = rng.next_u64();
  const bool unknown = s.r % 17 == 0;  // floods
  s.dst = unknown ? MacAddr{{0x02, 0, 0, 0, 1, 0x99}} : kHost[(s.in + 1 + s.r % 3) % 4];
  s.dscp = (s.r >> 8) % 2 == 0 ? 26 : 0;
  s.payload = 20 + (s.r >> 16) % 1400;
  s.burst = 1 + static_cast<int>((s.r >> 32) % 6);
  return s;
}

// ---- CREDIT_FC ports across shards ----

// `ports` (names) in credit mode: `credits` of 4 KiB per VL, update threshold 2.
std::string credit_fc(std::initializer_list<const char*> ports, uint32_t credits = 8) {
  std::string s = R"("CREDIT_FC": {)";
  bool first = true;
  for (const char* p : ports) {
    s += std::string(first ? "" : ", ") + "\"" + p + R"(": {"vl_buffer": ")" + std::to_string(credits * 4096) + R"(", "update_threshold": 2})";
    first = false;
  }
  return s + "}";
}

// The far end of a credit link as the tests play it (VL 0 only): it sends a
// data frame only with a credit the switch granted, takes in every frame the
// switch sends it (credit frames raise the grant; data frames are consumed at
// once) and grants the switch the slots back in credit frames of its own.
struct CreditPeer {
  bool credit = false;   // the port runs CREDIT_FC
  uint32_t credits = 8;  // initial credits, both ends of the link
  uint32_t granted = 8;  // the switch's cumulative grant to us
  uint32_t sent = 0;                // data frames we sent (slots taken at the switch)
  uint32_t consumed = 0;            // data frames the switch sent us
  uint32_t advertised = 0;          // consumed as of our last credit frame
  uint64_t updates = 0;             // credit frames from the switch
  bool can_send() const { return !credit || sent != granted; }
  void sent_one() { ++sent; }
  void take(const std::vector<Bytes>& frames) {
    for (const Bytes& b : frames) {
      const wire::CreditFrameInfo c = wire::parse_credit_frame(b);
      if (!c.ok()) {
        ++consumed;
        continue;
      }
      ++updates;
      for (const wire::CreditEntry& e : c.entries) {
        if (e.vl == 0) granted = e.granted_total.value();
      }
    }
  }
  // Our credit frame to the switch when we consumed something since the last one.
  std::optional<Bytes> grant(const MacAddr& self) {
    if (!credit || consumed == advertised) return std::nullopt;
    advertised = consumed;
    Bytes b(wire::kCreditFrameMaxBytes);
    const wire::CreditGrant g{0, credits + consumed};
    b.resize(wire::build_credit_frame(b, self, {&g, 1}));
    return b;
  }
};

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
  // Drained: no cell in any PG or queue of any shard.
  void expect_no_cell_on_any_shard(uint64_t seed) {
    for (uint16_t s = 0; s < 2; ++s) {
      for (PortId p = 0; p < 4; ++p) {
        for (uint8_t i = 0; i < 8; ++i) {
          EXPECT_EQ(sharded_->shard(s).mmu().pg_use(p, i).used, 0u) << "seed " << seed << " shard " << s;
          EXPECT_EQ(sharded_->shard(s).mmu().queue_use(p, i).used, 0u) << "seed " << seed << " shard " << s;
        }
      }
    }
  }
  // Test 5's body (credit: every port in credit mode).
  void two_threads(bool credit);
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
  expect_rings_balanced(s0, s1);
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
      const auto [in, r, dst, dscp, payload, burst] = random_send(rng);
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
    expect_no_cell_on_any_shard(seed);
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
TEST_F(ShardedSwitchTest, TwoThreadsConserveEveryPacketAndCell) { two_threads(false); }

// 5b. The same with every port in credit mode (32 credits; each thread plays
// the peers of its shard's ports: sends only with a credit, consumes what it
// takes and grants it back). Expect on top: every credit note applied, and
// drained, no slot occupied on any credit port, whose granted slots are its
// initial credits plus every slot its peer's frames took.
TEST_F(ShardedSwitchTest, TwoThreadsConserveEveryPacketCellAndCreditSlot) { two_threads(true); }

void ShardedSwitchTest::two_threads(bool credit) {
  if (credit) {
    make(four_ports(buffers(R"("dynamic_th": "-1")", false) + ", " +
                    credit_fc({"Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"}, 32)));
  } else {
    make(four_ports(buffers(R"("dynamic_th": "-1")")));
  }
  std::array<CreditPeer, 4> peers;  // peers[p] is touched by p's shard's thread only
  for (CreditPeer& p : peers) p = {.credit = credit, .credits = 32, .granted = 32};
  if (credit) {
    for (uint16_t p = 0; p < 4; ++p) {
      rx(p, frame(kHost[(p + 1) % 4], kHost[p], 0, 64), TimeNs(0));
      peers[p].sent_one();
    }
    for (uint16_t p = 0; p < 4; ++p) peers[p].take(take(*node_, p, TimeNs(0), SIZE_MAX));
  } else {
    learn_hosts(TimeNs(0));
  }
  ref_.reset();  // not used: the threads allocate their own frames
  // Frames `port` sent (freed): the peer takes them in and grants back.
  auto peer_takes = [&](Node& n, uint16_t port, rte_mbuf** out, uint16_t got, TimeNs now) {
    if (!credit) return rte_pktmbuf_free_bulk(out, got);
    std::vector<Bytes> frames;
    for (uint16_t i = 0; i < got; ++i) frames.push_back(test::take_bytes(out[i]));
    peers[port].take(frames);
    if (auto g = peers[port].grant(kHost[port])) {
      rte_mbuf* one[1] = {test::make_mbuf(*g)};
      n.receive(port, one, now);
    }
  };
  // Frames each thread sent. With credit links a shard's traffic waits on the
  // other shard's progress, and on this machine the two threads may not run
  // at the same time: each runs 3000 iterations and on until both sent
  // kFrames (bounded by kMaxIterations).
  constexpr uint64_t kFrames = 1000;
  constexpr int kMaxIterations = 2'000'000;
  std::array<std::atomic<uint64_t>, 2> sent{};
  auto run_shard = [&](uint16_t s) {
    ASSERT_EQ(rte_thread_register(), 0);  // an lcore id, as a shard's EAL lcore has
    Node& n = sharded_->shard_node(s);
    Rng rng(100 + s);
    rte_mbuf* out[32];
    for (int it = 0; it < 3000 || sent[0].load() < kFrames || sent[1].load() < kFrames; ++it) {
      ASSERT_LT(it, kMaxIterations) << "shard " << s << " sent " << sent[0].load() << " / " << sent[1].load();
      const TimeNs now = TimeNs::from_us(10 + it);
      const auto in = static_cast<uint16_t>(2 * s + rng.next_u64() % 2);
      const uint64_t r = rng.next_u64();
      const MacAddr dst = r % 23 == 0 ? MacAddr{{0x02, 0, 0, 0, 1, 0x99}} : kHost[(in + 1 + r % 3) % 4];
      rte_mbuf* burst[4];
      int k = 0;
      for (const int want = 1 + static_cast<int>((r >> 8) % 4); k < want && peers[in].can_send(); ++k) {
        burst[k] = test::make_mbuf(frame(dst, kHost[in], (r >> 16) % 2 ? 26 : 0, 64 + (r >> 20) % 1200));
        if (credit) peers[in].sent_one();
      }
      if (k > 0) n.receive(in, std::span<rte_mbuf*>(burst, k), now);
      sent[s].fetch_add(static_cast<uint64_t>(k));
      if (now >= n.next_wakeup(now)) n.advance(now);
      for (uint16_t p = 2 * s; p < 2 * s + 2; ++p) {
        const uint16_t got = n.transmit(p, std::span<rte_mbuf*>(out, 1 + (r >> 32) % 3), now);
        peer_takes(n, p, out, got, now);
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
      peer_takes(n, p, out, got, TimeNs::from_ms(10));
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
    if (credit) {
      const CreditPort& cp = *sharded_->owner(p).credit(p);
      in -= cp.counters().rx_updates;  // credit frames: consumed
      EXPECT_EQ(cp.receiver().occupied(0), 0u) << "port " << p;
      EXPECT_EQ(cp.receiver().granted_total(0), peers[p].credits + peers[p].sent) << "port " << p;
      EXPECT_EQ(cp.counters().tx_without_credit, 0u) << "port " << p;
    }
    for (uint8_t i = 0; i < 8; ++i) {
      EXPECT_EQ(sharded_->owner(p).queue_packets(p, i), 0u);
      EXPECT_EQ(sharded_->held_packets(p, i), 0u);
    }
  }
  EXPECT_EQ(in, done);
  if (!credit) {
    EXPECT_GT(dropped, 0u);  // (credit links bound what is in flight)
  }
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
  expect_rings_balanced(a, b);
  EXPECT_EQ(a.credit_notes_sent, b.credit_notes_received);
  EXPECT_EQ(b.credit_notes_sent, a.credit_notes_received);
  if (credit) {
    EXPECT_GT(a.credit_notes_sent, 100u);
    EXPECT_GT(b.credit_notes_sent, 100u);
  }
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
// a reason (trimming and CREDIT_FC are supported); one shard is the plain switch (no rings, no shared counters).
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
  // And so are CREDIT_FC ports (tests 7, 8, 5b).
  SwitchConfig credit = parse_switch_config(config::parse_text(four_ports(credit_fc({"Ethernet0", "Ethernet8"}))));
  ShardedSwitch c(credit, macs_, nullptr, {0, 0, 1, 1});
  EXPECT_EQ(c.num_shards(), 2);
}


// The credit state of every credit port equal in both (the sharded switch's
// on the port's shard), and what the slots say: granted + occupied = the
// initial credits + every slot the peer's frames took (a slot freed twice or
// never would break it).
void expect_same_credit(const SwitchNode& ref, const ShardedSwitch& sh, const std::array<CreditPeer, 4>& peers,
                        const char* where) {
  for (PortId p = 0; p < 4; ++p) {
    const CreditPort* a = ref.credit(p);
    const CreditPort* b = sh.owner(p).credit(p);
    ASSERT_EQ(a != nullptr, peers[p].credit) << where;
    ASSERT_EQ(b != nullptr, peers[p].credit) << where;
    if (a == nullptr) continue;
    const CreditCounters ca = a->counters();
    const CreditCounters cb = b->counters();
    EXPECT_EQ(ca.tx_updates, cb.tx_updates) << where << " port " << p;
    EXPECT_EQ(ca.rx_updates, cb.rx_updates) << where << " port " << p;
    EXPECT_EQ(ca.rx_overrun, cb.rx_overrun) << where << " port " << p;
    EXPECT_EQ(ca.credit_stalls, cb.credit_stalls) << where << " port " << p;
    EXPECT_EQ(ca.stalled_time, cb.stalled_time) << where << " port " << p;
    EXPECT_EQ(cb.tx_without_credit, 0u) << where << " port " << p;
    EXPECT_EQ(a->receiver().occupied(0), b->receiver().occupied(0)) << where << " port " << p;
    EXPECT_EQ(a->receiver().granted_total(0), b->receiver().granted_total(0)) << where << " port " << p;
    EXPECT_EQ(a->sender().available(0), b->sender().available(0)) << where << " port " << p;
    EXPECT_EQ(b->receiver().granted_total(0) + b->receiver().occupied(0), peers[p].credits + peers[p].sent)
        << where << " port " << p;
  }
}

// 7. Cross-shard incast with CREDIT_FC ports. Ports 0 (A), 1 (B) on shard 0
// and port 2 (C) on shard 1 run credit FC (8 credits, threshold 2), port 3
// (D, shard 1) does not; no PFC. A and B send lossless traffic to C, D sends
// to C, C answers A and A sends to B, every credit peer only with a credit
// and granting back what it consumed. Port 2 is drained slower than it
// fills, so its queue fills, PG 3 holds, A and B run out of credit and wait
// for the updates that packets leaving port 2 on shard 1 earn them on
// shard 0. Expect: the same frames (data and credit updates, in the same
// order) out of every port, and every counter, occupancy and credit state
// (updates, stalls, slots occupied and granted) equal to the one-lcore
// switch after every step; credit notes crossed both ways and, drained, no
// slot or cell is left.
TEST_F(ShardedSwitchTest, CreditPortsSameAsOneShardForCrossShardIncast) {
  make(four_ports(buffers(R"("dynamic_th": "0")", false) + ", " + credit_fc({"Ethernet0", "Ethernet4", "Ethernet8"})));
  std::array<CreditPeer, 4> peers;
  for (uint16_t p = 0; p < 3; ++p) peers[p].credit = true;
  auto send = [&](uint16_t port, const Bytes& b, TimeNs now) {
    if (!peers[port].can_send()) return;
    rx(port, b, now);
    if (peers[port].credit) peers[port].sent_one();
  };
  auto grant = [&](uint16_t port, TimeNs now) {
    if (auto g = peers[port].grant(kHost[port])) rx(port, *g, now);
  };
  auto step = [&](TimeNs now, const char* where) {
    peers[2].take(tx(2, now, 2));
    peers[0].take(tx(0, now, 1));
    peers[1].take(tx(1, now));
    peers[3].take(tx(3, now));
    for (uint16_t p = 0; p < 4; ++p) grant(p, now);
    expect_same_state(where);
    expect_same_credit(*ref_, *sharded_, peers, where);
  };
  for (uint16_t p = 0; p < 4; ++p) send(p, frame(kHost[(p + 1) % 4], kHost[p], 0, 64), TimeNs(0));
  step(TimeNs(0), "after learning");
  uint64_t stalled_a = 0;
  for (int round = 0; round < 60; ++round) {
    const TimeNs now = TimeNs::from_us(1 + round);
    send(0, frame(kHost[2], kHost[0], 26, 900), now);
    send(1, frame(kHost[2], kHost[1], 26, 900), now);
    send(0, frame(kHost[2], kHost[0], 26, 900), now);
    send(3, frame(kHost[2], kHost[3], 26, 400), now);
    send(2, frame(kHost[0], kHost[2], 0, 300), now);
    send(0, frame(kHost[1], kHost[0], 0, 200), now);
    if (!peers[0].can_send()) ++stalled_a;
    step(now, "incast round");
    if (HasFailure()) return;
  }
  for (int i = 0; i < 20; ++i) step(TimeNs::from_us(100 + i), "drain");
  EXPECT_GT(stalled_a, 0u) << "A is meant to run out of credit";
  for (uint16_t p = 0; p < 3; ++p) {
    const CreditPort& c = *sharded_->owner(p).credit(p);
    EXPECT_GT(peers[p].updates, 2u) << "port " << p;
    EXPECT_EQ(peers[p].updates, c.counters().tx_updates) << "port " << p;
    EXPECT_EQ(c.receiver().occupied(0), 0u) << "port " << p;
    EXPECT_EQ(c.counters().rx_overrun, 0u) << "port " << p;
  }
  EXPECT_EQ(sharded_->mmu().total_used(), 0u);
  const ShardCounters& s0 = sharded_->shard_counters(0);
  const ShardCounters& s1 = sharded_->shard_counters(1);
  EXPECT_GE(s1.credit_notes_sent, 60u);  // A's and B's slots freed at port 2
  EXPECT_GE(s0.credit_notes_sent, 30u);  // C's slots freed at port 0
  EXPECT_EQ(s0.credit_notes_sent, s1.credit_notes_received);
  EXPECT_EQ(s1.credit_notes_sent, s0.credit_notes_received);
  expect_rings_balanced(s0, s1);
}

// 8. Property: no credit slot or cell leaks. Every port in credit mode (32
// credits: the peers together can fill more than the buffer holds), 20
// seeds of random traffic (sizes, ports, lossless and lossy classes, floods,
// bursts as far as the peer's credit goes, partial drains, peers that grant
// back late) over a small buffer that overflows, so packets of one shard's
// credit ports are dropped on the other shard at egress admission, by WRED
// and at the queue. Expect after every step: every packet accounted for and
// every credit port's granted + occupied slots = its initial credits + the
// slots its peer's frames took; drained: no slot occupied and no cell left
// anywhere.
TEST_F(ShardedSwitchTest, CreditPortsNeverLeakSlotsOrCells) {
  uint64_t all_drops = 0, all_held = 0, all_notes = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    // Tight egress limits: lossy queue 0 at 1/64 of the free pool (drops),
    // lossless queue 3 at 1/32 (holds).
    std::string doc = four_ports(buffers(R"("dynamic_th": "-5")", false) + ", " +
                                 credit_fc({"Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"}, 32));
    const std::string q0 = R"("q0": {"pool": "ep", "size": "2048", "dynamic_th": "-1"})";
    doc.replace(doc.find(q0), q0.size(), R"("q0": {"pool": "ep", "size": "0", "dynamic_th": "-6"})");
    make(doc);
    Rng rng(seed);
    std::array<CreditPeer, 4> peers;
    for (CreditPeer& p : peers) p = {.credit = true, .credits = 32, .granted = 32};
    auto check = [&](const char* where) {
      uint64_t in = 0, out = 0;
      for (PortId p = 0; p < 4; ++p) {
        const PortCounters c = sharded_->counters(p);
        in += c.rx_packets + 2 * c.flooded;
        out += c.tx_packets + c.dropped;
        for (uint8_t i = 0; i < 8; ++i) out += sharded_->owner(p).queue_packets(p, i) + sharded_->held_packets(p, i);
        const CreditPort& cp = *sharded_->owner(p).credit(p);
        EXPECT_EQ(cp.receiver().granted_total(0) + cp.receiver().occupied(0), peers[p].credits + peers[p].sent)
            << where << " seed " << seed << " port " << p;
        in -= cp.counters().rx_updates;  // credit frames in (rx_packets): consumed, not forwarded
      }
      EXPECT_EQ(in, out) << where << " seed " << seed;
    };
    for (uint16_t p = 0; p < 4; ++p) {
      rx(p, frame(kHost[(p + 1) % 4], kHost[p], 0, 64), TimeNs(0));
      peers[p].sent_one();
    }
    for (uint16_t p = 0; p < 4; ++p) peers[p].take(take(*node_, p, TimeNs(0), SIZE_MAX));
    for (int step = 0; step < 300; ++step) {
      const TimeNs now = TimeNs::from_us(1 + step);
      const auto [in, r, dst, dscp, payload, burst] = random_send(rng);
      for (int k = 0; k < burst && peers[in].can_send(); ++k) {
        rx(in, frame(dst, kHost[in], dscp, payload, k % 3 == 0 ? wire::Ecn::kNotEct : wire::Ecn::kEct1), now);
        peers[in].sent_one();
      }
      const auto out = static_cast<uint16_t>((r >> 40) % 4);
      peers[out].take(take(*node_, out, now, (r >> 44) % 4));
      if ((r >> 48) % 3 != 0) {  // the peer grants late one time in three
        if (auto g = peers[out].grant(kHost[out])) {
          rte_mbuf* one[1] = {test::make_mbuf(*g)};
          node_->receive(out, one, now);
        }
      }
      check("random step");
      if (HasFailure()) return;
    }
    for (uint16_t p = 0; p < 4; ++p) {
      all_drops += sharded_->counters(p).dropped;
      all_held += sharded_->counters(p).held;
    }
    for (int round = 0; round < 20; ++round) {
      for (uint16_t p = 0; p < 4; ++p) {
        peers[p].take(take(*node_, p, TimeNs::from_ms(1), SIZE_MAX));
        if (auto g = peers[p].grant(kHost[p])) {
          rte_mbuf* one[1] = {test::make_mbuf(*g)};
          node_->receive(p, one, TimeNs::from_ms(1));
        }
      }
    }
    check("drained");
    EXPECT_EQ(sharded_->mmu().total_used(), 0u) << "seed " << seed;
    for (PortId p = 0; p < 4; ++p) {
      EXPECT_EQ(sharded_->owner(p).credit(p)->receiver().occupied(0), 0u) << "seed " << seed << " port " << p;
      EXPECT_EQ(sharded_->owner(p).credit(p)->counters().tx_without_credit, 0u) << "seed " << seed;
      for (uint8_t i = 0; i < 8; ++i) {
        EXPECT_EQ(sharded_->owner(p).queue_packets(p, i), 0u) << "seed " << seed;
        EXPECT_EQ(sharded_->held_packets(p, i), 0u) << "seed " << seed;
      }
    }
    expect_no_cell_on_any_shard(seed);
    const ShardCounters& s0 = sharded_->shard_counters(0);
    const ShardCounters& s1 = sharded_->shard_counters(1);
    EXPECT_EQ(s0.credit_notes_sent, s1.credit_notes_received) << "seed " << seed;
    EXPECT_EQ(s1.credit_notes_sent, s0.credit_notes_received) << "seed " << seed;
    all_notes += s0.credit_notes_sent + s1.credit_notes_sent;
    TearDown();
  }
  EXPECT_GT(all_drops, 0u) << "the lossy queues are meant to overflow";
  EXPECT_GT(all_held, 0u) << "lossless packets are meant to be held";
  EXPECT_GT(all_notes, 1000u);
}

}  // namespace
}  // namespace sf::sw
