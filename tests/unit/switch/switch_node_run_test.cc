// Run admission and batched transmit of SwitchNode (enqueue_run: a run of
// copies for one PG / egress queue admitted in one step; transmit releasing
// a run of dequeued packets of one PG at once) against the per-frame
// reference of node_pair.h (the same frames one receive() call each, one
// packet per transmit() call: every run one copy long), in the
// conditions where a run's shortcut could go wrong: buffers so small that
// lossy PGs hit their dynamic limits and the lossless PG its XOFF threshold
// and headroom in the middle of a run, WRED/ECN with Kmin inside a run, a
// PFC-paused queue, and runs longer than a stage pass. Expect, after every
// step: the same frames out in the same order, the same counters, PFC state,
// queue depths and MMU occupancy.
// (PFC frames of XOFF / XON go out of port 0, the ingress port.)
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstring>
#include <vector>

#include "common/config/json_loader.h"
#include "common/rng.h"
#include "common/wire/credit_frame.h"
#include "common/wire/frame_builder.h"
#include "common/wire/mac_control.h"
#include "switch/pipeline/switch_node.h"
#include "tests/support/eal_env.h"
#include "tests/support/mbuf_chain.h"
#include "tests/support/roce_frame.h"
#include "tests/unit/switch/node_pair.h"

namespace sf::sw {
namespace {

using wire::MacAddr;
using Bytes = std::vector<uint8_t>;

using node_pair::kHostA;
using node_pair::kHostD;  // static, Ethernet4
using node_pair::kHostE;  // static, Ethernet8
using node_pair::kRouter;

// Small pools: the lossless PG 3 reaches XOFF after 16 KiB, the lossy PGs
// (alpha 1/4 of 64 KiB) after a few frames; WRED on queue 1 from 2 KB, on queue 3
// from 10 KB.
const char* kConfig = R"({
 "DEVICE_METADATA": {"localhost": {"mmu_size": "1MiB", "cell_size": 256, "seed": 3}},
 "PORT": {"Ethernet0": {"devargs": "a", "speed": 100, "mtu": 9100},
          "Ethernet4": {"devargs": "b", "speed": 100, "mtu": 9100},
          "Ethernet8": {"devargs": "c", "speed": 100, "mtu": 9100}},
 "BUFFER_POOL": {
  "ingress_lossless_pool": {"type": "ingress", "mode": "static", "size": "262144"},
  "ingress_lossy_pool": {"type": "ingress", "mode": "dynamic", "size": "65536"},
  "egress_lossless_pool": {"type": "egress", "mode": "static", "size": "262144"},
  "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "size": "65536"}},
 "BUFFER_PROFILE": {
  "pg_lossless_profile": {"pool": "ingress_lossless_pool", "size": "1024", "static_th": "16384",
                          "xoff": "24576", "xon": "2048", "xon_offset": "2048"},
  "ingress_lossy_profile": {"pool": "ingress_lossy_pool", "size": "512", "dynamic_th": "-2"},
  "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "static_th": "262144"},
  "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "1518", "dynamic_th": "-1"}},
 "BUFFER_PG": {"Ethernet0,Ethernet4,Ethernet8|0-2": {"profile": "ingress_lossy_profile"},
               "Ethernet0,Ethernet4,Ethernet8|3": {"profile": "pg_lossless_profile"},
               "Ethernet0,Ethernet4,Ethernet8|4-7": {"profile": "ingress_lossy_profile"}},
 "BUFFER_QUEUE": {"Ethernet0,Ethernet4,Ethernet8|0-2": {"profile": "egress_lossy_profile"},
                  "Ethernet0,Ethernet4,Ethernet8|3": {"profile": "egress_lossless_profile"},
                  "Ethernet0,Ethernet4,Ethernet8|4-7": {"profile": "egress_lossy_profile"}},
 "DSCP_TO_TC_MAP": {"ROCE": {"26": "3", "48": "6", "0": "0", "10": "1"}},
 "TC_TO_PRIORITY_GROUP_MAP": {"ROCE": {"0":"0","1":"1","2":"2","3":"3","4":"4","5":"5","6":"6","7":"7"}},
 "TC_TO_QUEUE_MAP": {"ROCE": {"0":"0","1":"1","2":"2","3":"3","4":"4","5":"5","6":"6","7":"7"}},
 "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": "ROCE", "tc_to_pg_map": "ROCE", "tc_to_queue_map": "ROCE",
                             "pfc_enable": "3"}},
 "WRED_PROFILE": {"W": {"ecn": "ecn_all", "wred_green_enable": "true",
                  "green_min_threshold": "2000", "green_max_threshold": "15000",
                  "green_drop_probability": "30"},
                  "W3": {"ecn": "ecn_all", "wred_green_enable": "true",
                  "green_min_threshold": "10000", "green_max_threshold": "15000",
                  "green_drop_probability": "30"}},
 "SCHEDULER": {"s.lossy": {"type": "DWRR", "weight": "2"}, "s.roce": {"type": "DWRR", "weight": "5"},
               "s.cnp": {"type": "STRICT", "priority": "5"}},
 "QUEUE": {"Ethernet0,Ethernet4,Ethernet8|0-2": {"scheduler": "s.lossy"},
           "Ethernet0,Ethernet4,Ethernet8|1": {"scheduler": "s.lossy", "wred_profile": "W"},
           "Ethernet0,Ethernet4,Ethernet8|3": {"scheduler": "s.roce", "wred_profile": "W3"},
           "Ethernet0,Ethernet4,Ethernet8|4-5": {"scheduler": "s.lossy"},
           "Ethernet0,Ethernet4,Ethernet8|6": {"scheduler": "s.cnp"},
           "Ethernet0,Ethernet4,Ethernet8|7": {"scheduler": "s.lossy"}},
 "NEIGH": {"Ethernet4|10.0.1.1": {"neigh": "02:00:00:00:01:01"}},
 "STATIC_ROUTE": {"10.9.0.0/16": {"nexthop": "10.0.1.1", "ifname": "Ethernet4"}},
 "FDB": {"02:00:00:00:00:0d": {"port": "Ethernet4"}, "02:00:00:00:00:0e": {"port": "Ethernet8"}}
})";

// One forwarded RoCEv2 frame: `key` picks the class and destination.
Bytes frame(int key, size_t payload, uint16_t sport) {
  static constexpr uint8_t kDscp[] = {26, 0, 10, 48, 26};
  const MacAddr dst = key == 4 ? kRouter : key % 2 == 0 ? kHostD : kHostE;
  wire::RoceFrameSpec s;
  s.l2 = {dst, kHostA, std::nullopt};
  wire::Ipv4Spec ip;
  ip.src.bytes = {10, 0, 0, 1};
  ip.dst.bytes = {10, 9, 0, 2};
  ip.dscp = kDscp[key];
  ip.ecn = sport % 3 == 0 ? wire::Ecn::kNotEct : wire::Ecn::kEct0;
  s.l3 = ip;
  s.udp_src_port = sport;
  return test::roce_frame_bytes(s, payload);
}

Bytes pfc(uint8_t enable, uint16_t quanta) {
  Bytes b(60);
  std::array<uint16_t, 8> q{};
  q.fill(quanta);
  wire::build_pfc_frame(b, kHostA, enable, q);
  return b;
}

class Pair : public node_pair::NodePair {
 public:
  explicit Pair(const char* config = kConfig) : NodePair(config) {}
  void rx(uint16_t port, const std::vector<Bytes>& frames, TimeNs now) {
    receive_both(port, [&] {
      std::vector<rte_mbuf*> ms;
      for (const Bytes& b : frames) ms.push_back(test::make_mbuf(b));
      return ms;
    }, now);
  }
  // The reference one packet per transmit() call: data goes out of ports 1
  // and 2 only and comes in on port 0 only (PFC frames of its PG 3 leave port 0).
  void tx_and_compare(uint16_t port, TimeNs now, uint16_t budget) { compare_port(port, now, budget, true); }
  void expect_same_state() {
    for (uint16_t p = 0; p < node_->num_ports(); ++p) {
      const PortCounters& a = node_->counters(p);
      const PortCounters& b = ref_->counters(p);
      for (size_t c = 0; c < kNumDropCauses; ++c) {
        EXPECT_EQ(a.drops[c], b.drops[c]) << "port " << p << " " << to_string(static_cast<DropCause>(c));
      }
      for (int q = 0; q < kNumQueues; ++q) {
        EXPECT_EQ(a.queues[q].ecn_marked, b.queues[q].ecn_marked) << p << "/" << q;
        EXPECT_EQ(a.queues[q].enqueued_packets, b.queues[q].enqueued_packets) << p << "/" << q;
        EXPECT_EQ(a.queues[q].watermark_bytes, b.queues[q].watermark_bytes) << p << "/" << q;
      }
      EXPECT_EQ(std::memcmp(&a, &b, sizeof(PortCounters)), 0) << "port " << p;
      EXPECT_EQ(node_->pfc_tx(p).xoff_mask(), ref_->pfc_tx(p).xoff_mask()) << p;
      for (uint8_t i = 0; i < 8; ++i) {
        EXPECT_EQ(node_->queue_bytes(p, i), ref_->queue_bytes(p, i));
        EXPECT_EQ(node_->held_packets(p, i), ref_->held_packets(p, i));
        const BufferUse& x = node_->mmu().pg_use(p, i);
        const BufferUse& y = ref_->mmu().pg_use(p, i);
        EXPECT_EQ(x.used, y.used);
        EXPECT_EQ(x.shared, y.shared);
        EXPECT_EQ(x.hdrm, y.hdrm);
        EXPECT_EQ(x.watermark, y.watermark);
        EXPECT_EQ(node_->mmu().queue_use(p, i).used, ref_->mmu().queue_use(p, i).used);
        EXPECT_EQ(node_->mmu().queue_use(p, i).shared, ref_->mmu().queue_use(p, i).shared);
        EXPECT_EQ(node_->mmu().queue_use(p, i).watermark, ref_->mmu().queue_use(p, i).watermark);
      }
    }
    for (uint16_t pool = 0; pool < 4; ++pool) {
      EXPECT_EQ(node_->mmu().pool_shared_used(pool), ref_->mmu().pool_shared_used(pool));
      EXPECT_EQ(node_->mmu().pool_watermark(pool), ref_->mmu().pool_watermark(pool));
      EXPECT_EQ(node_->mmu().hdrm_pool_used(pool), ref_->mmu().hdrm_pool_used(pool));
    }
    EXPECT_EQ(node_->mmu().total_used(), ref_->mmu().total_used());
  }
  // CREDIT_FC state of `port` (an ingress credit port): the same slots
  // taken, freed and advertised, the same overruns, as frame by frame.
  void expect_same_credit(uint16_t port) {
    const CreditPort* a = node_->credit(port);
    const CreditPort* b = ref_->credit(port);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    for (int vl = 0; vl < kMaxVls; ++vl) {
      EXPECT_EQ(a->receiver().occupied(vl), b->receiver().occupied(vl)) << "VL " << vl;
      EXPECT_EQ(a->receiver().granted_total(vl), b->receiver().granted_total(vl)) << "VL " << vl;
    }
    EXPECT_EQ(a->receiver().updates_due(), b->receiver().updates_due());
    const CreditCounters x = a->counters();
    const CreditCounters y = b->counters();
    EXPECT_EQ(x.rx_overrun, y.rx_overrun);
    EXPECT_EQ(x.tx_updates, y.tx_updates);
    EXPECT_EQ(x.rx_updates, y.rx_updates);
    EXPECT_EQ(x.rx_malformed, y.rx_malformed);
    EXPECT_EQ(x.rx_unknown_vl, y.rx_unknown_vl);
  }
  SwitchNode& fast() { return *node_; }
};

// 1. Bursts of a few long runs (same class and destination, 1..48 copies,
// one size or random sizes 64..4000 B) from port 0, sometimes a PFC frame
// for priority 3 from port 1 or 2 in the middle of a burst, and transmit
// offers of random budgets on ports 1 and 2 in between. Expect: the same
// output and state as the reference after every step; the runs reach drops
// at every limit, ECN marks, XOFF and headroom.
TEST(SwitchNodeRun, LongRunsMatchPerFrame) {
  Pair pair;
  Rng rng(2024);
  TimeNs now(0);
  auto r32 = [&] { return static_cast<uint32_t>(rng.next_u64()); };
  for (int step = 0; step < 400; ++step) {
    std::vector<Bytes> burst;
    const uint32_t runs = 1 + r32() % 3;
    for (uint32_t k = 0; k < runs; ++k) {
      const int key = static_cast<int>(r32() % 5);
      const uint32_t len = 1 + r32() % 48;
      const bool one_size = r32() % 2 == 0;
      const size_t size0 = 64 + r32() % (r32() % 3 == 0 ? 4000 : 600);
      for (uint32_t i = 0; i < len; ++i) {
        burst.push_back(frame(key, one_size ? size0 : 64 + r32() % 4000, static_cast<uint16_t>(0xC000 + r32() % 64)));
      }
    }
    if (r32() % 6 == 0) {  // pause priority 3 towards a port, then carry on
      std::vector<Bytes> p{pfc(0x08, static_cast<uint16_t>(r32() % 2 == 0 ? 0 : 50 + r32() % 500))};
      pair.rx(static_cast<uint16_t>(1 + r32() % 2), p, now);
    }
    pair.rx(0, burst, now);
    pair.expect_same_state();
    if (testing::Test::HasFailure()) FAIL() << "step " << step;
    for (uint16_t port = 0; port <= 2; ++port) pair.tx_and_compare(port, now, static_cast<uint16_t>(r32() % 96));
    pair.expect_same_state();
    if (testing::Test::HasFailure()) FAIL() << "step " << step << " (transmit)";
    now = now + TimeNs::from_us(1 + r32() % 20);
  }
  for (uint16_t port = 0; port <= 2; ++port) pair.tx_and_compare(port, now + TimeNs::from_s(1), 60000);
  pair.expect_same_state();
  EXPECT_EQ(pair.fast().mmu().total_used(), 0u);
  uint64_t marked = 0;
  for (uint16_t p = 1; p <= 2; ++p) {
    for (int q = 0; q < kNumQueues; ++q) marked += pair.fast().counters(p).queues[q].ecn_marked;
  }
  const PortCounters& c = pair.fast().counters(0);
  EXPECT_GT(marked, 0u);
  EXPECT_GT(c.drops[static_cast<size_t>(DropCause::kIngressLimit)], 0u);
  EXPECT_GT(c.drops[static_cast<size_t>(DropCause::kWred)], 0u);
  EXPECT_GT(c.tx_pfc_frames, 0u);  // XOFF (and XON) for PG 3
  EXPECT_GT(pair.fast().mmu().pg_use(0, 3).watermark, pair.fast().mmu().cells_for(16384 + 1024));  // into headroom
  EXPECT_GT(pair.sent(), 1000u);
}

// 2. A run whose last copy takes the lossless PG's shared use exactly to its
// XOFF threshold (static_th 16 KiB = 64 cells past 4 reserved cells, 1-cell
// frames), or one copy short of it or past it, in one burst (stage passes of
// 32: runs of 32, 32, then the rest). Expect: XOFF for priority 3 exactly
// when the shared use reached the limit, as frame by frame, and the same
// state; the PFC frame goes out of port 0.
TEST(SwitchNodeRun, RunEndingAtTheXoffThreshold) {
  for (uint32_t n = 60; n <= 72; ++n) {
    Pair pair;
    std::vector<Bytes> burst;
    for (uint32_t i = 0; i < n; ++i) burst.push_back(frame(0, 64, static_cast<uint16_t>(0xC000 + i)));
    pair.rx(0, burst, TimeNs(1000));
    pair.expect_same_state();
    EXPECT_EQ(pair.fast().pfc_tx(0).xoff_mask() == 0x08, n >= 68) << n;
    pair.tx_and_compare(0, TimeNs(1000), 4);
    EXPECT_EQ(pair.fast().counters(0).tx_pfc_frames, n >= 68 ? 1u : 0u) << n;
    pair.tx_and_compare(1, TimeNs(1000), 200);
    pair.expect_same_state();
    EXPECT_EQ(pair.fast().mmu().total_used(), 0u);
  }
}

// A CREDIT_FC ingress port (Ethernet0: 2 VLs of 8 credits, update every 3
// freed slots, 1500 B MTU) in the same small buffers, no PFC; WRED on queue 1.
const char* kCreditConfig = R"({
 "DEVICE_METADATA": {"localhost": {"mmu_size": "1MiB", "cell_size": 256, "seed": 5}},
 "PORT": {"Ethernet0": {"devargs": "a", "speed": 100, "mtu": 1500},
          "Ethernet4": {"devargs": "b", "speed": 100, "mtu": 9100},
          "Ethernet8": {"devargs": "c", "speed": 100, "mtu": 9100}},
 "BUFFER_POOL": {
  "ingress_lossless_pool": {"type": "ingress", "mode": "static", "size": "262144"},
  "ingress_lossy_pool": {"type": "ingress", "mode": "dynamic", "size": "65536"},
  "egress_lossless_pool": {"type": "egress", "mode": "static", "size": "262144"},
  "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "size": "65536"}},
 "BUFFER_PROFILE": {
  "ingress_lossy_profile": {"pool": "ingress_lossy_pool", "size": "512", "dynamic_th": "-2"},
  "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "1518", "dynamic_th": "-1"}},
 "BUFFER_PG": {"Ethernet0,Ethernet4,Ethernet8|0-7": {"profile": "ingress_lossy_profile"}},
 "BUFFER_QUEUE": {"Ethernet0,Ethernet4,Ethernet8|0-7": {"profile": "egress_lossy_profile"}},
 "DSCP_TO_TC_MAP": {"M": {"26": "3", "48": "6", "0": "0", "10": "1"}},
 "TC_TO_PRIORITY_GROUP_MAP": {"M": {"0":"0","1":"1","2":"2","3":"3","4":"4","5":"5","6":"6","7":"7"}},
 "TC_TO_QUEUE_MAP": {"M": {"0":"0","1":"1","2":"2","3":"3","4":"4","5":"5","6":"6","7":"7"}},
 "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": "M", "tc_to_pg_map": "M", "tc_to_queue_map": "M"}},
 "WRED_PROFILE": {"W": {"ecn": "ecn_all", "wred_green_enable": "true",
                  "green_min_threshold": "2000", "green_max_threshold": "15000",
                  "green_drop_probability": "30"}},
 "QUEUE": {"Ethernet0,Ethernet4,Ethernet8|1": {"wred_profile": "W"}},
 "NEIGH": {"Ethernet4|10.0.1.1": {"neigh": "02:00:00:00:01:01"}},
 "STATIC_ROUTE": {"10.9.0.0/16": {"nexthop": "10.0.1.1", "ifname": "Ethernet4"}},
 "FDB": {"02:00:00:00:00:0d": {"port": "Ethernet4"}, "02:00:00:00:00:0e": {"port": "Ethernet8"}},
 "CREDIT_FC": {"Ethernet0": {"mtu": 1024, "vls": 2, "vl_buffer": 8192, "update_threshold": 3,
                             "sl_to_vl": {"1": 1, "3": 1, "6": 1}}}
})";

// A frame into the credit port, by kind: forwarded to D / E (three classes,
// two VLs, 64..1400 B), routed, TTL expired, flooded, hairpin, oversize,
// truncated, IPv4 options (the slow step, forwarded), a credit update from
// the peer.
Bytes credit_kind(uint32_t k, uint32_t salt) {
  static constexpr uint8_t kDscp[] = {26, 0, 10};
  auto v4 = [&](const MacAddr& dst, uint8_t dscp, size_t payload, uint8_t ttl = 64) {
    wire::RoceFrameSpec s;
    s.l2 = {dst, kHostA, std::nullopt};
    wire::Ipv4Spec ip;
    ip.src.bytes = {10, 0, 0, 1};
    ip.dst.bytes = {10, 9, 0, 2};
    ip.dscp = dscp;
    ip.ecn = wire::Ecn::kEct0;
    ip.ttl = ttl;
    s.l3 = ip;
    s.udp_src_port = static_cast<uint16_t>(0xC000 + salt % 64);
    return test::roce_frame_bytes(s, payload);
  };
  const size_t payload = 64 + salt % 1400;
  switch (k) {
    case 0: case 1: case 2: case 3: return v4(salt % 2 == 0 ? kHostD : kHostE, kDscp[salt % 3], payload);
    case 4: return v4(kRouter, kDscp[salt % 3], payload);
    case 5: return v4(kRouter, 26, 64, 1);                      // TTL expired
    case 6: return v4(node_pair::kBroadcast, 10, payload);      // flooded: its slots freed at once
    case 7: return v4(kHostA, 26, 64);                          // to A (learned on port 0): hairpin
    case 8: return v4(kHostD, 26, 1600);                        // oversize: dropped unclassified
    case 9: return Bytes(10, 0xAB);                             // truncated: dropped unclassified
    case 10: {                                                  // IPv4 options: the slow step, forwarded
      Bytes b = v4(kHostD, 10, 200);
      b.insert(b.begin() + 34, {0x01, 0x01, 0x01, 0x00});
      b[14] = 0x46;
      const uint16_t total = static_cast<uint16_t>((b[16] << 8 | b[17]) + 4);
      b[16] = static_cast<uint8_t>(total >> 8);
      b[17] = static_cast<uint8_t>(total);
      wire::ipv4_set_checksum(*reinterpret_cast<wire::Ipv4Header*>(b.data() + 14));
      return b;
    }
    default: {                                                  // a credit update from the peer
      Bytes b(wire::kCreditFrameMaxBytes);
      const wire::CreditGrant g[] = {{0, salt % 200}, {1, salt % 300}};
      b.resize(wire::build_credit_frame(b, kHostA, g));
      return b;
    }
  }
}

// 3. A CREDIT_FC ingress port takes the same stages as any other: bursts of
// every kind above (up to 70 frames: more than one stage pass) against the
// same frames one receive() call each, transmit offers of random budgets in
// between. Expect: the same frames out (credit updates of port 0 among
// them), counters, MMU state, and the same credit slots taken, freed and
// advertised, overruns and updates; the bursts overrun the 8 credits, hit
// the buffer limits, WRED and every drop that frees unclassified slots.
TEST(SwitchNodeRun, CreditPortBurstsMatchPerFrame) {
  Pair pair(kCreditConfig);
  ASSERT_NE(pair.fast().credit(0), nullptr);
  Rng rng(77);
  TimeNs now(0);
  auto r32 = [&] { return static_cast<uint32_t>(rng.next_u64()); };
  for (int step = 0; step < 300; ++step) {
    std::vector<Bytes> burst;
    const uint32_t n = 1 + r32() % 70;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t r = r32();
      burst.push_back(credit_kind(r % 3 != 0 ? r / 3 % 5 : r / 3 % 12, r32()));
    }
    pair.rx(0, burst, now);
    pair.expect_same_state();
    pair.expect_same_credit(0);
    if (testing::Test::HasFailure()) FAIL() << "step " << step;
    for (uint16_t port = 0; port <= 2; ++port) pair.tx_and_compare(port, now, static_cast<uint16_t>(r32() % 80));
    pair.expect_same_state();
    pair.expect_same_credit(0);
    if (testing::Test::HasFailure()) FAIL() << "step " << step << " (transmit)";
    now = now + TimeNs::from_us(1 + r32() % 20);
  }
  for (uint16_t port = 0; port <= 2; ++port) pair.tx_and_compare(port, now + TimeNs::from_s(1), 60000);
  pair.expect_same_state();
  pair.expect_same_credit(0);
  EXPECT_EQ(pair.fast().mmu().total_used(), 0u);
  const CreditCounters cc = pair.fast().credit(0)->counters();
  EXPECT_GT(cc.rx_overrun, 0u);
  EXPECT_GT(cc.tx_updates, 0u);
  EXPECT_GT(cc.rx_updates, 0u);
  for (int vl = 0; vl < 2; ++vl) EXPECT_EQ(pair.fast().credit(0)->receiver().occupied(vl), 0u) << "VL " << vl;
  const PortCounters& c = pair.fast().counters(0);
  for (DropCause d : {DropCause::kOversize, DropCause::kMalformed, DropCause::kTtlExpired, DropCause::kHairpin,
                      DropCause::kIngressLimit}) {
    EXPECT_GT(c.drops[static_cast<size_t>(d)], 0u) << to_string(d);
  }
  EXPECT_GT(c.flooded, 0u);
  EXPECT_GT(c.routed, 0u);
}

}  // namespace
}  // namespace sf::sw
