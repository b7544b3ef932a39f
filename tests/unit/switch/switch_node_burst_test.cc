// The staged receive pipeline (SwitchNode::receive_stages) on whole bursts
// against the per-frame reference of node_pair.h (the same frames one
// receive() call each): bursts that mix every kind of frame the switch handles give the same
// transmitted frames, in the same order, and the same counters, FDB and MMU
// state. Covers the cross-frame dependency of the stages (a destination
// learned earlier in the same burst), bursts longer than kStageBurst, and the
// fast parser's agreement with parse_frame().
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/config/json_loader.h"
#include "common/rng.h"
#include "common/wire/credit_frame.h"
#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
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

using node_pair::kBroadcast;
using node_pair::kHostA;
using node_pair::kHostB;
using node_pair::kHostC;
using node_pair::kHostD;
using node_pair::kHostE;
using node_pair::kRouter;

// Three ports (the last with a 1500 B MTU), IPv4 routes with ECMP, an IPv6
// route, PFC on priority 3 with a lossless PG, WRED/ECN on queue 3 with a low
// Kmin so that marking (random draws) happens, a static FDB entry.
const char* kConfig = R"({
 "DEVICE_METADATA": {"localhost": {"mmu_size": "4MiB", "cell_size": 256, "seed": 7}},
 "PORT": {"Ethernet0": {"devargs": "a", "speed": 100, "mtu": 9100},
          "Ethernet4": {"devargs": "b", "speed": 100, "mtu": 9100},
          "Ethernet8": {"devargs": "c", "speed": 100, "mtu": 1500}},
 "BUFFER_POOL": {
  "ingress_lossless_pool": {"type": "ingress", "mode": "static", "size": "1048576"},
  "ingress_lossy_pool": {"type": "ingress", "mode": "dynamic", "size": "1048576"},
  "egress_lossless_pool": {"type": "egress", "mode": "static", "size": "1048576"},
  "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "size": "1048576"}},
 "BUFFER_PROFILE": {
  "pg_lossless_profile": {"pool": "ingress_lossless_pool", "size": "0", "static_th": "65536",
                          "xoff": "65536", "xon": "2048", "xon_offset": "2048"},
  "ingress_lossy_profile": {"pool": "ingress_lossy_pool", "size": "0", "dynamic_th": "-2"},
  "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "static_th": "1048576"},
  "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "1518", "dynamic_th": "-2"}},
 "BUFFER_PG": {"Ethernet0,Ethernet4,Ethernet8|0-2": {"profile": "ingress_lossy_profile"},
               "Ethernet0,Ethernet4,Ethernet8|3": {"profile": "pg_lossless_profile"},
               "Ethernet0,Ethernet4,Ethernet8|4-7": {"profile": "ingress_lossy_profile"}},
 "BUFFER_QUEUE": {"Ethernet0,Ethernet4,Ethernet8|0-2": {"profile": "egress_lossy_profile"},
                  "Ethernet0,Ethernet4,Ethernet8|3": {"profile": "egress_lossless_profile"},
                  "Ethernet0,Ethernet4,Ethernet8|4-7": {"profile": "egress_lossy_profile"}},
 "DSCP_TO_TC_MAP": {"ROCE": {"26": "3", "48": "6", "46": "5", "0": "0", "10": "1"}},
 "DOT1P_TO_TC_MAP": {"P": {"0": "0", "3": "3", "5": "5"}},
 "TC_TO_PRIORITY_GROUP_MAP": {"ROCE": {"0":"0","1":"1","2":"2","3":"3","4":"4","5":"5","6":"6","7":"7"}},
 "TC_TO_QUEUE_MAP": {"ROCE": {"0":"0","1":"1","2":"2","3":"3","4":"4","5":"5","6":"6","7":"7"}},
 "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": "ROCE", "dot1p_to_tc_map": "P", "tc_to_pg_map": "ROCE",
                             "tc_to_queue_map": "ROCE", "pfc_enable": "3"}},
 "WRED_PROFILE": {"W": {"ecn": "ecn_all", "wred_green_enable": "true",
                  "green_min_threshold": "1000", "green_max_threshold": "20000",
                  "green_drop_probability": "50"}},
 "QUEUE": {"Ethernet0,Ethernet4,Ethernet8|3": {"wred_profile": "W"},
           "Ethernet0,Ethernet4,Ethernet8|1": {"wred_profile": "W"}},
 "NEIGH": {"Ethernet4|10.0.1.1": {"neigh": "02:00:00:00:01:01"},
           "Ethernet8|10.0.2.1": {"neigh": "02:00:00:00:02:01"},
           "Ethernet4|fd00::1": {"neigh": "02:00:00:00:01:06"}},
 "STATIC_ROUTE": {"10.1.0.0/16": {"nexthop": "10.0.1.1,10.0.2.1", "ifname": "Ethernet4,Ethernet8"},
                  "10.9.0.0/16": {"nexthop": "10.0.1.1", "ifname": "Ethernet4"},
                  "fd01::/16": {"nexthop": "fd00::1", "ifname": "Ethernet4"}},
 "FDB": {"02:00:00:00:00:0d": {"port": "Ethernet8"}}
})";

struct V4Opts {
  uint8_t dst_last = 2;
  uint8_t dst_second = 1;  // 10.<second>.0.<last>
  uint8_t dscp = 26;
  wire::Ecn ecn = wire::Ecn::kEct0;
  uint8_t ttl = 64;
  uint16_t sport = 0xC000;
  std::optional<wire::VlanSpec> vlan;
  size_t payload = 64;
};

Bytes roce_v4(MacAddr dst, MacAddr src, const V4Opts& o = {}) {
  wire::RoceFrameSpec s;
  s.l2 = {dst, src, o.vlan};
  wire::Ipv4Spec ip;
  ip.src.bytes = {10, 0, 0, 1};
  ip.dst.bytes = {10, o.dst_second, 0, o.dst_last};
  ip.dscp = o.dscp;
  ip.ecn = o.ecn;
  ip.ttl = o.ttl;
  s.l3 = ip;
  s.udp_src_port = o.sport;
  return test::roce_frame_bytes(s, o.payload);
}

Bytes roce_v6(MacAddr dst, MacAddr src, uint8_t hop_limit = 64, uint8_t dst_hi = 0x01, uint16_t sport = 0xC000) {
  wire::RoceFrameSpec s;
  s.l2 = {dst, src, std::nullopt};
  wire::Ipv6Spec ip;
  ip.src.bytes = {0xfd, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x09};
  ip.dst.bytes = {0xfd, dst_hi, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02};
  ip.dscp = 26;
  ip.ecn = wire::Ecn::kEct1;
  ip.hop_limit = hop_limit;
  ip.flow_label = 0x12345;
  s.l3 = ip;
  s.udp_src_port = sport;
  return test::roce_frame_bytes(s, 32, 0x33);
}

// A frame of another EtherType (no IP), padded to 60 bytes.
Bytes raw_l2(MacAddr dst, MacAddr src, uint16_t ether_type, size_t len = 60) {
  Bytes b(len, 0x11);
  std::memcpy(b.data(), dst.bytes.data(), 6);
  std::memcpy(b.data() + 6, src.bytes.data(), 6);
  b[12] = static_cast<uint8_t>(ether_type >> 8);
  b[13] = static_cast<uint8_t>(ether_type);
  return b;
}

Bytes pfc(uint8_t enable, uint16_t quanta, bool right_da = true) {
  Bytes b(60);
  std::array<uint16_t, 8> q{};
  q.fill(quanta);
  wire::build_pfc_frame(b, kHostC, enable, q);
  if (!right_da) b[5] = 0x02;
  return b;
}

Bytes pause_frame(uint16_t quanta) {
  Bytes b = raw_l2(MacAddr{{0x01, 0x80, 0xC2, 0, 0, 0x01}}, kHostC, wire::kEtherTypeMacControl);
  b[14] = 0x00;
  b[15] = 0x01;  // PAUSE
  b[16] = static_cast<uint8_t>(quanta >> 8);
  b[17] = static_cast<uint8_t>(quanta);
  return b;
}

Bytes credit_frame_bytes() {
  Bytes b = raw_l2(wire::kCreditFcDst, kHostC, wire::kEtherTypeCreditFc);
  return b;
}

// Every kind of frame, by index (random mixes pick from these).
Bytes kind(int k, uint32_t salt) {
  const auto s = static_cast<uint16_t>(0xC000 + (salt & 0x3FF));
  switch (k) {
    case 0: return roce_v4(kHostB, kHostA, [&] { V4Opts o; o.sport = s; return o; }());                        // to B: flood until B is learned
    case 1: return roce_v4(kHostA, kHostB, [&] { V4Opts o; o.sport = s; return o; }());                        // to A (learned on its port)
    case 2: return roce_v4(kBroadcast, kHostC, [&] { V4Opts o; o.dscp = 0; return o; }());                     // broadcast flood
    case 3: return roce_v4(kRouter, kHostA, [&] { V4Opts o; o.dst_last = static_cast<uint8_t>(salt); o.sport = s; return o; }());  // routed, ECMP
    case 4: return roce_v4(kRouter, kHostA, [&] { V4Opts o; o.dst_second = 9; return o; }());                  // routed, one next hop
    case 5: return roce_v4(kRouter, kHostA, [&] { V4Opts o; o.ttl = 1; return o; }());                         // TTL expired
    case 6: return roce_v4(kRouter, kHostA, [&] { V4Opts o; o.dst_second = 200; return o; }());                // no route
    case 7: {                                                                    // bad IPv4 checksum
      Bytes b = roce_v4(kHostD, kHostA);
      b[14 + 10] ^= 0x40;
      return b;
    }
    case 8: return Bytes(10, 0xAB);                                              // truncated
    case 9: return roce_v4(kHostD, kHostC, [&] { V4Opts o; o.vlan = wire::VlanSpec{3, false, 0}; return o; }());  // tagged, to static D
    case 10: return pfc(0x08, static_cast<uint16_t>(salt & 0xFF));               // PFC priority 3
    case 11: return pause_frame(static_cast<uint16_t>(salt & 0x7));              // PAUSE (short)
    case 12: return pfc(0x08, 100, false);                                       // PFC to a wrong DA
    case 13: return credit_frame_bytes();                                        // credit frame, port not in credit mode
    case 14: return raw_l2(kHostD, kHostA, 0x88CC);                              // LLDP-like, L2 to static D
    case 15: return roce_v6(kRouter, kHostA, 64, 0x01, s);                       // IPv6 routed
    case 16: return roce_v6(kRouter, kHostA, 1);                                 // IPv6 hop limit 1
    case 17: return roce_v6(kRouter, kHostA, 64, 0x77);                          // IPv6 no route
    case 18: return roce_v6(kHostB, kHostA);                                     // IPv6 at L2
    case 19: {                                                                   // IPv4 options (IHL 6): slow path
      Bytes b = roce_v4(kHostD, kHostA);
      b.insert(b.begin() + 34, {0x01, 0x01, 0x01, 0x00});  // NOP NOP NOP EOL
      b[14] = 0x46;
      const uint16_t total = static_cast<uint16_t>((b[16] << 8 | b[17]) + 4);
      b[16] = static_cast<uint8_t>(total >> 8);
      b[17] = static_cast<uint8_t>(total);
      auto* h = reinterpret_cast<wire::Ipv4Header*>(b.data() + 14);
      wire::ipv4_set_checksum(*h);
      return b;
    }
    case 20: {                                                                   // IPv4 fragment (forwarded)
      Bytes b = roce_v4(kRouter, kHostA, [&] { V4Opts o; o.dst_second = 9; return o; }());
      b[14 + 6] = 0x20;  // MF, DF clear
      auto* h = reinterpret_cast<wire::Ipv4Header*>(b.data() + 14);
      wire::ipv4_set_checksum(*h);
      return b;
    }
    case 21: {                                                                   // IPv4 not UDP, routed
      Bytes b = roce_v4(kRouter, kHostA, [&] { V4Opts o; o.dst_second = 9; return o; }());
      b[14 + 9] = 6;
      auto* h = reinterpret_cast<wire::Ipv4Header*>(b.data() + 14);
      wire::ipv4_set_checksum(*h);
      return b;
    }
    case 22: return roce_v4(kHostC, kHostC);                                     // src == dst: learned, then hairpin
    case 23: return roce_v4(kHostD, kHostA, [&] { V4Opts o; o.dscp = 10; o.payload = 1400; return o; }());      // WRED queue 1, big
    case 24: return roce_v4(kHostB, kHostA, [&] { V4Opts o; o.payload = 1600; return o; }());                  // oversize on the 1500 B port
    case 25: {                                                                   // UDP length past the IP packet
      Bytes b = roce_v4(kHostD, kHostA);
      b[14 + 20 + 4] = 0x7F;
      return b;
    }
    case 26: return raw_l2(kHostB, MacAddr{{0x03, 0, 0, 0, 0, 1}}, 0x88B6);      // multicast source: not learned
  }
  return {};
}
constexpr int kKinds = 27;

struct Frame {
  uint16_t port;
  Bytes bytes;
};

class Pair : public node_pair::NodePair {
 public:
  Pair() : NodePair(kConfig) {}
  // The same burst to both nodes.
  void rx(uint16_t port, const std::vector<Bytes>& frames, TimeNs now) {
    receive_both(port, [&] {
      std::vector<rte_mbuf*> ms;
      for (const Bytes& b : frames) ms.push_back(test::make_mbuf(b, b.size() > 1000 ? 512 : 0));
      return ms;
    }, now);
  }
  // Transmits up to `budget` frames of every port from both; expects the same bytes.
  void tx_and_compare(TimeNs now, uint16_t budget = 64) {
    for (uint16_t p = 0; p < node_->num_ports(); ++p) {
      compare_port(p, now, budget);
      if (testing::Test::HasFatalFailure()) return;
    }
  }
  void expect_same_state() {
    for (uint16_t p = 0; p < node_->num_ports(); ++p) {
      const PortCounters& a = node_->counters(p);
      const PortCounters& b = ref_->counters(p);
      EXPECT_EQ(a.rx_packets, b.rx_packets) << p;
      EXPECT_EQ(a.rx_bytes, b.rx_bytes) << p;
      EXPECT_EQ(a.tx_packets, b.tx_packets) << p;
      EXPECT_EQ(a.flooded, b.flooded) << p;
      EXPECT_EQ(a.routed, b.routed) << p;
      EXPECT_EQ(a.dropped, b.dropped) << p;
      for (size_t c = 0; c < kNumDropCauses; ++c) {
        EXPECT_EQ(a.drops[c], b.drops[c]) << "port " << p << " " << to_string(static_cast<DropCause>(c));
      }
      for (int q = 0; q < kNumQueues; ++q) {
        EXPECT_EQ(a.queues[q].ecn_marked, b.queues[q].ecn_marked) << p << "/" << q;
        EXPECT_EQ(a.queues[q].enqueued_packets, b.queues[q].enqueued_packets) << p << "/" << q;
      }
      // And every other counter (all uint64_t, no padding).
      EXPECT_EQ(std::memcmp(&a, &b, sizeof(PortCounters)), 0) << "port " << p;
      EXPECT_EQ(node_->paused(p), ref_->paused(p)) << p;
      EXPECT_EQ(node_->pfc_tx(p).xoff_mask(), ref_->pfc_tx(p).xoff_mask()) << p;
      for (int q = 0; q < kNumQueues; ++q) {
        EXPECT_EQ(node_->queue_bytes(p, static_cast<uint8_t>(q)), ref_->queue_bytes(p, static_cast<uint8_t>(q)));
      }
    }
    const FdbStats& fa = node_->fdb().stats();
    const FdbStats& fb = ref_->fdb().stats();
    EXPECT_EQ(fa.learned, fb.learned);
    EXPECT_EQ(fa.moved, fb.moved);
    EXPECT_EQ(fa.static_conflict, fb.static_conflict);
    EXPECT_EQ(fa.table_full, fb.table_full);
    EXPECT_EQ(node_->fdb().size(), ref_->fdb().size());
    for (const MacAddr& h : {kHostA, kHostB, kHostC, kHostD}) {
      EXPECT_EQ(node_->fdb().lookup(h.bytes, kDefaultVlan), ref_->fdb().lookup(h.bytes, kDefaultVlan));
    }
    EXPECT_EQ(node_->mmu().total_used(), ref_->mmu().total_used());
  }
  SwitchNode& staged() { return *node_; }
};

// 1. One burst with every kind of frame once, on each port in turn.
// Expect: the same frames out, in order, and the same counters as frame by
// frame; every drop cause the kinds imply is counted.
TEST(SwitchNodeBurst, EveryKindOnceMatchesPerFrame) {
  Pair pair;
  TimeNs now(1000);
  for (uint16_t port = 0; port < 3; ++port) {
    std::vector<Bytes> burst;
    for (int k = 0; k < kKinds; ++k) burst.push_back(kind(k, static_cast<uint32_t>(k)));
    pair.rx(port, burst, now);
    pair.expect_same_state();
    pair.tx_and_compare(now, 1024);
    pair.expect_same_state();
    now = now + TimeNs::from_us(5);
  }
  const PortCounters& c = pair.staged().counters(0);
  EXPECT_GT(c.flooded, 0u);
  EXPECT_GT(c.routed, 0u);
  EXPECT_GT(c.rx_mac_control, 0u);
  EXPECT_EQ(c.rx_credit_ignored, 1u);
  for (DropCause d : {DropCause::kMalformed, DropCause::kTtlExpired, DropCause::kNoRoute, DropCause::kHairpin}) {
    EXPECT_GT(c.drops[static_cast<size_t>(d)], 0u) << to_string(d);
  }
  EXPECT_GT(pair.staged().counters(2).drops[static_cast<size_t>(DropCause::kOversize)], 0u);
  EXPECT_GT(pair.sent(), 0u);
}

// 2. A destination learned earlier in the same burst: B is unknown, then a
// frame from B arrives (learned on port 0), then frames to B: the first flood,
// the ones after the learn are hairpin drops, as frame by frame.
TEST(SwitchNodeBurst, DestinationLearnedInTheSameBurst) {
  Pair pair;
  const std::vector<Bytes> burst{roce_v4(kHostB, kHostA), roce_v4(kHostB, kHostA), roce_v4(kHostA, kHostB),
                                 roce_v4(kHostB, kHostA), roce_v4(kHostC, kHostC), roce_v4(kHostC, kHostA)};
  pair.rx(0, burst, TimeNs(0));
  pair.expect_same_state();
  const PortCounters& c = pair.staged().counters(0);
  EXPECT_EQ(c.flooded, 2u);  // the two frames to B before B was learned
  // To B after the learn, C to itself, then to C: all on the ingress port.
  EXPECT_EQ(c.drops[static_cast<size_t>(DropCause::kHairpin)], 4u);
  pair.tx_and_compare(TimeNs(0), 1024);
  pair.expect_same_state();
}

// 3. Random mixes of every kind, random burst sizes up to 80 (longer than one
// stage pass), random ingress ports, transmit offers with random budgets in
// between (queues build up: WRED marks and drops, MMU limits, PFC XOFF/XON).
// Expect: the same frames and state as frame by frame after every step.
TEST(SwitchNodeBurst, RandomMixesMatchPerFrame) {
  Pair pair;
  Rng rng(12345);
  TimeNs now(0);
  for (int step = 0; step < 60; ++step) {
    std::vector<Bytes> burst;
    const uint32_t n = 1 + static_cast<uint32_t>(rng.next_u64()) % 80;
    for (uint32_t i = 0; i < n; ++i) {
      // Mostly forwarded traffic, some of everything else.
      const uint32_t r = static_cast<uint32_t>(rng.next_u64());
      const int k = (r % 4 != 0) ? static_cast<int>(r / 4 % 5) : static_cast<int>(r / 4 % kKinds);
      burst.push_back(kind(k, static_cast<uint32_t>(rng.next_u64())));
    }
    const auto port = static_cast<uint16_t>(static_cast<uint32_t>(rng.next_u64()) % 3);
    pair.rx(port, burst, now);
    pair.expect_same_state();
    if (testing::Test::HasFailure()) FAIL() << "step " << step;
    pair.tx_and_compare(now, static_cast<uint16_t>(static_cast<uint32_t>(rng.next_u64()) % 48));
    now = now + TimeNs::from_us(static_cast<uint32_t>(rng.next_u64()) % 20);
  }
  pair.tx_and_compare(now, 60000);
  pair.expect_same_state();
  EXPECT_EQ(pair.staged().mmu().total_used(), 0u);
}

// 5. The express prefix of a pass (receive_express): frames of the common
// way (straight IPv4 / UDP, L2, to a destination the FDB's cache holds on
// another port), a new source inside it (learned in the prefix, its
// destination looked up live), a station moving to the ingress port (the
// frames to it after the move are hairpin drops: the first inside the
// prefix, the next ends it), then frames the stages take (a miss, a routed
// frame, a broadcast); a pass of 80 frames (two stage passes) all express.
// Expect the same frames and state as frame by frame, and the prefix taken.
TEST(SwitchNodeBurst, ExpressPrefixMatchesPerFrame) {
  Pair pair;
  TimeNs now(0);
  auto to = [](MacAddr dst, MacAddr src, uint16_t sport) {
    return roce_v4(dst, src, [&] { V4Opts o; o.sport = sport; return o; }());
  };
  // A learned on port 1, C on port 2, B on port 0; the cache holds A and C
  // once port 0's frames to them were looked up.
  pair.rx(1, {to(kHostB, kHostA, 1)}, now);
  pair.rx(2, {to(kHostB, kHostC, 2)}, now);
  pair.rx(0, {to(kHostA, kHostB, 3), to(kHostC, kHostB, 4)}, now);
  pair.expect_same_state();
  const uint64_t before = pair.staged().express_frames();
  auto step = [&](uint16_t port, const std::vector<Bytes>& burst) {
    pair.rx(port, burst, now);
    pair.expect_same_state();
    pair.tx_and_compare(now, 1024);
    pair.expect_same_state();
    now = now + TimeNs::from_us(3);
  };
  // Eight to A / C, then E's first frame (learned inside the prefix), then more.
  std::vector<Bytes> b1;
  for (uint16_t i = 0; i < 8; ++i) b1.push_back(to(i % 2 ? kHostA : kHostC, kHostB, i));
  b1.push_back(to(kHostA, kHostE, 100));
  for (uint16_t i = 0; i < 4; ++i) b1.push_back(to(kHostC, kHostB, i));
  step(0, b1);
  EXPECT_GE(pair.staged().express_frames() - before, 8u);
  // A moves to port 0 in the middle of a prefix: the frames to A after it
  // are hairpin drops, as frame by frame; then B itself (hairpin), a miss
  // (F unknown: flood), a routed frame, a broadcast.
  const uint64_t hairpin0 = pair.staged().counters(0).drops[static_cast<size_t>(DropCause::kHairpin)];
  const uint64_t at1 = pair.staged().express_frames();
  const MacAddr kHostF{{0x02, 0, 0, 0, 0, 0x0F}};
  step(0, {to(kHostA, kHostB, 1), to(kHostC, kHostB, 2), to(kHostA, kHostB, 3), to(kHostC, kHostA, 4),
           to(kHostA, kHostB, 5), to(kHostA, kHostB, 6), to(kHostB, kHostE, 7), to(kHostF, kHostB, 8),
           roce_v4(kRouter, kHostB), to(kBroadcast, kHostB, 9), to(kHostC, kHostB, 10)});
  // Express: the first three, A's move (learned, C looked up live) and the
  // next frame (B learned again after A: A looked up live, on port 0 now, a
  // hairpin drop inside the prefix); the frame after it finds A on the
  // ingress port in the cache and ends the prefix.
  EXPECT_EQ(pair.staged().express_frames() - at1, 5u);
  EXPECT_EQ(pair.staged().counters(0).drops[static_cast<size_t>(DropCause::kHairpin)] - hairpin0, 3u);
  // 80 frames to C on port 0 (stage passes of 64 and 16), every one express
  // once the cache holds C again.
  step(0, {to(kHostC, kHostB, 0)});
  const uint64_t at2 = pair.staged().express_frames();
  std::vector<Bytes> b3;
  for (uint16_t i = 0; i < 80; ++i) b3.push_back(to(i % 3 ? kHostC : kHostD, kHostB, i));
  step(0, b3);
  EXPECT_EQ(pair.staged().express_frames() - at2, 80u);
}

// 6. Random bursts mostly of the express way: per ingress port, sources
// of that port and destinations on the others (held by the FDB's cache after
// their first lookups), mixed with what ends a prefix: a destination on the
// ingress port (hairpin), an unknown one (flood), a broadcast, a routed
// frame, another DSCP (another run key), a static MAC as source (refused on
// another port, counted each frame), any kind of frame of the list above,
// and big frames. Expect the same frames and state as frame by frame, and
// most frames through the prefix.
TEST(SwitchNodeBurst, RandomExpressMixesMatchPerFrame) {
  Pair pair;
  Rng rng(777);
  TimeNs now(0);
  const MacAddr kHostF{{0x02, 0, 0, 0, 0, 0x0F}};
  const MacAddr kHostG{{0x02, 0, 0, 0, 0, 0x10}};
  // B, G on port 0; A, E on port 1; C and static D on port 2.
  const MacAddr on[3][2] = {{kHostB, kHostG}, {kHostA, kHostE}, {kHostC, kHostD}};
  for (uint16_t p = 0; p < 3; ++p) pair.rx(p, {roce_v4(kBroadcast, on[p][0]), roce_v4(kBroadcast, on[p][1])}, now);
  pair.tx_and_compare(now, 1024);
  const uint64_t before = pair.staged().express_frames();
  uint64_t frames = 0;
  for (int step = 0; step < 150; ++step) {
    const auto port = static_cast<uint16_t>(rng.next_u64() % 3);
    const auto n = static_cast<uint32_t>(1 + rng.next_u64() % 100);
    // Seven bursts in ten of the express way only (static sources and
    // another DSCP included); the rest with everything.
    const bool pure = rng.next_u64() % 10 < 7;
    std::vector<Bytes> burst;
    int d_left = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const auto r = static_cast<uint32_t>(rng.next_u64());
      MacAddr src = on[port][r % 2];
      MacAddr dst = on[(port + 1 + (r >> 1) % 2) % 3][(r >> 2) % 2];
      V4Opts o;
      o.sport = static_cast<uint16_t>(i);
      o.dscp = (r >> 3) % 8 == 0 ? 10 : 26;
      o.payload = (r >> 6) % 9 == 0 ? 900 : 64;
      const uint32_t what = (r >> 10) % 40;
      switch (pure && what != 4 ? 39 : what) {
        case 0: dst = on[port][0]; break;   // on the ingress port: hairpin
        case 1: dst = kHostF; break;        // unknown: flood
        case 2: dst = kBroadcast; break;
        case 3: dst = kRouter; break;       // routed
        case 4: d_left = 3; break;          // static D as the source of 3 frames: refused off port 2
        case 5: burst.push_back(kind(static_cast<int>((r >> 16) % kKinds), r)); continue;
        default: break;
      }
      if (d_left > 0) {
        src = kHostD;
        --d_left;
      }
      burst.push_back(roce_v4(dst, src, o));
    }
    frames += n;
    pair.rx(port, burst, now);
    pair.expect_same_state();
    if (testing::Test::HasFailure()) FAIL() << "step " << step;
    pair.tx_and_compare(now, static_cast<uint16_t>(rng.next_u64() % 300));
    if (testing::Test::HasFailure()) FAIL() << "step " << step << " (transmit)";
    now = now + TimeNs::from_us(static_cast<uint32_t>(rng.next_u64() % 20));
  }
  pair.tx_and_compare(now, 60000);
  pair.expect_same_state();
  EXPECT_EQ(pair.staged().mmu().total_used(), 0u);
  EXPECT_GT(pair.staged().fdb().stats().static_conflict, 0u);
  const uint64_t express = pair.staged().express_frames() - before;
  std::printf("express %llu of %llu frames\n", static_cast<unsigned long long>(express),
              static_cast<unsigned long long>(frames));
  EXPECT_GT(express * 5, frames * 2);  // 40 % at least (56 % with this seed)
}

// 4. parse_fwd() accepts a frame only where parse_frame() (stop at UDP) does,
// with the same headers: every kind above, and random byte flips of them.
TEST(SwitchNodeBurst, FastParserAgreesWithParseFrame) {
  Rng rng(99);
  int accepted = 0;
  for (int round = 0; round < 4000; ++round) {
    Bytes b = kind(static_cast<int>(static_cast<uint32_t>(rng.next_u64()) % kKinds), static_cast<uint32_t>(rng.next_u64()));
    if (round % 2 == 1 && !b.empty()) {
      for (int f = 0; f < 3; ++f) b[static_cast<uint32_t>(rng.next_u64()) % std::min<size_t>(b.size(), 64)] ^= static_cast<uint8_t>(1u << (static_cast<uint32_t>(rng.next_u64()) % 8));
    }
    if (round % 7 == 3 && b.size() > 20) b.resize(14 + static_cast<uint32_t>(rng.next_u64()) % (b.size() - 14));
    const uint32_t head = round % 5 == 4 && b.size() > 30 ? static_cast<uint32_t>(30 + static_cast<uint32_t>(rng.next_u64()) % (b.size() - 30))
                                                          : static_cast<uint32_t>(b.size());
    wire::FwdHeaders h;
    const bool fast = wire::parse_fwd(b.data(), head, static_cast<uint32_t>(b.size()), true, h);
    if (!fast) continue;
    ++accepted;
    const wire::FrameInfo f = wire::parse_frame({b.data(), head}, static_cast<uint32_t>(b.size()),
                                                {.verify_ipv4_checksum = true, .stop_at_udp = true});
    ASSERT_TRUE(f.reason == wire::ParseReason::kOk || f.reason == wire::ParseReason::kNotUdp ||
                f.reason == wire::ParseReason::kUnsupportedEtherType)
        << "round " << round << ": " << wire::to_string(f.reason);
    EXPECT_NE(f.kind, wire::FrameKind::kMacControl);
    EXPECT_EQ(f.outer_ipv6, nullptr);
    EXPECT_EQ(h.ether_type, f.ether_type);
    EXPECT_EQ(h.vlan, f.vlan != nullptr);
    EXPECT_EQ(h.ip_version, static_cast<uint8_t>(f.ip_version));
    if (h.ip_version != 0) {
      EXPECT_EQ(h.l3_offset, f.l3_offset);
    }
    EXPECT_EQ(h.udp_offset, f.udp != nullptr ? f.udp_offset : 0u) << "round " << round;
  }
  EXPECT_GT(accepted, 1000);
}

}  // namespace
}  // namespace sf::sw
