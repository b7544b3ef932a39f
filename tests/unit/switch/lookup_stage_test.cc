// Receive stage B (switch/pipeline/lookup_stage.h) on its own: a classified
// burst (stage A's RxMeta, written by hand here) against a real Fdb
// (rte_hash) and RouteTable (LPM); the results by frame index that stage C reads.
#include "switch/pipeline/lookup_stage.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "common/wire/frame_builder.h"
#include "switch/config/switch_config.h"
#include "switch/fwd/router_if.h"
#include "tests/support/roce_frame.h"

namespace sf::sw {
namespace {

const MacAddr kA{0x02, 0, 0, 0, 0, 0x0A};
const MacAddr kB{0x02, 0, 0, 0, 0, 0x0B};
const MacAddr kUnknown{0x02, 0, 0, 0, 0, 0x0F};
const MacAddr kBroadcast{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

// A frame head: destination MAC, then (for a routed frame) an IPv4 header at
// offset 14 with destination a.b.c.d.
struct Frame {
  explicit Frame(const MacAddr& dst, std::array<uint8_t, 4> ip_dst = {})
      : bytes(64), m(std::make_unique<rte_mbuf>()) {
    std::copy(dst.begin(), dst.end(), bytes.begin());
    std::copy(ip_dst.begin(), ip_dst.end(), bytes.begin() + 14 + 16);
    m->buf_addr = bytes.data();
    m->data_off = 0;
    m->data_len = 64;
    m->pkt_len = 64;
  }
  std::vector<uint8_t> bytes;
  std::unique_ptr<rte_mbuf> m;  // on the heap: rte_mbuf's zero-size marker arrays make it no member
};

RxMeta l2(uint16_t vlan = kDefaultVlan) {
  RxMeta r;
  r.step = RxStep::kL2;
  r.vlan = vlan;
  return r;
}
RxMeta route4() {
  RxMeta r;
  r.step = RxStep::kRoute4;
  r.ip_version = 4;
  r.l3_offset = 14;
  r.vlan = kDefaultVlan;
  return r;
}

class LookupStage : public testing::Test {
 protected:
  void SetUp() override {
    fdb_ = std::make_unique<Fdb>(64);
    ASSERT_TRUE(fdb_->add_static(kA, kDefaultVlan, 1));
    ASSERT_TRUE(fdb_->add_static(kB, kDefaultVlan, 2));
    ASSERT_TRUE(fdb_->add_static(kB, 100, 3));
    routes_ = std::make_unique<RouteTable>(route_limits_for(1, 0));
    const uint32_t nh = routes_->add_next_hop({2, kB, kA});
    ASSERT_TRUE(routes_->add_v4({10, 1, 0, 0}, 16, RouteTarget{false, nh}));
    nh_ = nh;
  }
  // Stage B over `frames` classified as `meta`.
  LookupBurst run(std::vector<Frame>& frames, const std::vector<RxMeta>& meta) {
    std::vector<rte_mbuf*> pkts;
    for (Frame& f : frames) pkts.push_back(f.m.get());
    LookupBurst b;
    lookup_burst(*fdb_, *routes_, pkts.data(), meta.data(), static_cast<uint16_t>(pkts.size()), b);
    return b;
  }
  std::unique_ptr<Fdb> fdb_;
  std::unique_ptr<RouteTable> routes_;
  uint32_t nh_ = 0;
};

TEST_F(LookupStage, UnicastDestinationsByFrameIndexRepeatedKeysOnce) {
  std::vector<Frame> f;
  f.emplace_back(kA);
  f.emplace_back(kA);
  f.emplace_back(kB);
  f.emplace_back(kUnknown);
  f.emplace_back(kB);
  const LookupBurst b = run(f, {l2(), l2(), l2(), l2(), l2(100)});
  EXPECT_EQ(b.n_keys, 4u);  // A, B, unknown, B in VLAN 100: the second A shares the first's key
  EXPECT_EQ(b.fdb(0), 1);
  EXPECT_EQ(b.fdb(1), 1);
  EXPECT_EQ(b.fdb(2), 2);
  EXPECT_EQ(b.fdb(3), -1);
  EXPECT_EQ(b.fdb(4), 3);
}

TEST_F(LookupStage, FloodedSlowAndRoutedFramesTakeNoFdbKey) {
  std::vector<Frame> f;
  f.emplace_back(kBroadcast);
  f.emplace_back(kA);  // kSlow: the slow path looks it up itself
  f.emplace_back(kA, std::array<uint8_t, 4>{10, 1, 2, 3});
  f.emplace_back(kA, std::array<uint8_t, 4>{192, 168, 0, 1});
  RxMeta slow;
  slow.step = RxStep::kSlow;
  const LookupBurst b = run(f, {l2(), slow, route4(), route4()});
  EXPECT_EQ(b.n_keys, 0u);
  EXPECT_EQ(b.n_dst4, 2u);
  ASSERT_TRUE(b.route4(2).has_value());
  EXPECT_EQ(b.route4(2)->id, nh_);
  EXPECT_FALSE(b.route4(3).has_value());
}

// Stages A and B in one loop (classify_lookup_burst, what SwitchNode runs)
// against classify_burst, then lookup_burst, on random bursts: IPv4 / IPv6,
// tagged or not, to known, unknown, cached, broadcast and router MACs,
// routed to a route or none, some bytes corrupted (kSlow), on a port with
// and without router interfaces. Two Fdbs with the same history (so the
// same lookup cache): the same RxMeta, counts, and lookup results (keys,
// misses, ports, routes) by frame index.
TEST_F(LookupStage, ClassifyAndLookupInOneLoopEqualsTheTwoStages) {
  constexpr std::array<uint8_t, 6> kRouter{0x02, 0x53, 0x46, 0, 0, 0x01};
  PortQos qos;
  qos.dscp_to_tc[26] = 3;
  for (uint8_t t = 0; t < 8; ++t) {
    qos.tc_to_pg[t] = t;
    qos.tc_to_queue[t] = static_cast<uint8_t>(7 - t);
  }
  const SwitchConfig empty;
  const RouterIf none(empty, {});
  std::mt19937 rng(2020);
  std::vector<MacAddr> macs{kA, kB, kUnknown, kBroadcast, MacAddr{kRouter}};
  for (uint8_t k = 0; k < 24; ++k) macs.push_back(MacAddr{0x02, 0, 0, 1, 0, k});
  Fdb fdb_a(256);
  Fdb fdb_b(256);
  auto both = [&](auto&& op) {
    op(fdb_a);
    op(fdb_b);
  };
  both([&](Fdb& f) {
    ASSERT_TRUE(f.add_static(kA, kDefaultVlan, 1));
    ASSERT_TRUE(f.add_static(kB, 7, 2));
  });
  uint64_t keys_a = 0;
  uint64_t hits = 0;
  for (int round = 0; round < 3000; ++round) {
    // Change the FDB and its cache between bursts the same way on both.
    const MacAddr& mac = macs[5 + rng() % 24];
    const uint32_t op = rng() % 4;
    const uint16_t to = static_cast<uint16_t>(rng() % 4);
    const TimeNs now(round);
    both([&](Fdb& f) {
      if (op == 0) f.learn(mac, kDefaultVlan, to, now);
      if (op == 1) f.lookup(mac, kDefaultVlan);
      if (op == 2) f.remove(mac, kDefaultVlan);
    });
    const auto n = static_cast<uint16_t>(1 + rng() % kRxStageBurst);
    std::vector<std::vector<uint8_t>> bytes;
    std::vector<std::unique_ptr<rte_mbuf>> mbufs;
    std::vector<rte_mbuf*> pkts;
    for (uint16_t i = 0; i < n; ++i) {
      wire::RoceFrameSpec s;
      s.l2.dst = wire::MacAddr{macs[rng() % macs.size()]};
      s.l2.src = wire::MacAddr{kA};
      if (rng() % 4 == 0) s.l2.vlan = wire::VlanSpec{5, false, static_cast<uint16_t>(rng() % 3 == 0 ? 0 : 7)};
      if (rng() % 4 == 0) {
        wire::Ipv6Spec ip;
        ip.dscp = 26;
        ip.dst.bytes[15] = 2;
        s.l3 = ip;
      } else {
        wire::Ipv4Spec ip;
        ip.dscp = 26;
        ip.dst.bytes = rng() % 2 ? std::array<uint8_t, 4>{10, 1, 2, 3} : std::array<uint8_t, 4>{192, 168, 0, 1};
        s.l3 = ip;
      }
      s.bth.opcode = wire::Opcode::kRcWriteOnly;
      s.ext.reth_dma_length = 64;
      std::vector<uint8_t> f = test::roce_frame_bytes(s, 64);
      if (rng() % 8 == 0) f[rng() % 60] ^= static_cast<uint8_t>(1u << (rng() % 8));
      bytes.push_back(std::move(f));
      auto m = std::make_unique<rte_mbuf>();
      m->buf_addr = bytes.back().data();
      m->data_off = 0;
      m->data_len = static_cast<uint16_t>(bytes.back().size());
      m->pkt_len = static_cast<uint32_t>(bytes.back().size());
      m->nb_segs = 1;
      pkts.push_back(m.get());
      mbufs.push_back(std::move(m));
    }
    const ClassifyPort port = rng() % 4 == 0 ? ClassifyPort{kRouter, 1518, qos, &none, 0} : ClassifyPort{kRouter, 1518, qos};
    std::array<RxMeta, kRxStageBurst> meta_a;
    std::array<RxMeta, kRxStageBurst> meta_b;
    LookupBurst a;
    LookupBurst b;
    const ClassifyCounts ca = classify_burst(port, pkts.data(), n, meta_a.data());
    lookup_burst(fdb_a, *routes_, pkts.data(), meta_a.data(), n, a);
    const ClassifyCounts cb = classify_lookup_burst(port, fdb_b, *routes_, pkts.data(), n, meta_b.data(), b);
    ASSERT_EQ(ca.packets, cb.packets) << "round " << round;
    ASSERT_EQ(ca.bytes, cb.bytes);
    ASSERT_EQ(a.n_keys, b.n_keys);
    ASSERT_EQ(a.n_missed, b.n_missed);
    ASSERT_EQ(a.n_dst4, b.n_dst4);
    keys_a += a.n_keys;
    for (uint16_t i = 0; i < n; ++i) {
      ASSERT_EQ(std::memcmp(&meta_a[i], &meta_b[i], sizeof(RxMeta)), 0) << "round " << round << " frame " << i;
      const RxMeta& r = meta_a[i];
      if (r.step == RxStep::kL2 && (bytes[i][0] & 1u) == 0) {
        ASSERT_EQ(a.fdb(i), b.fdb(i)) << "round " << round << " frame " << i;
        hits += a.fdb(i) >= 0 ? 1 : 0;
      } else if (r.step == RxStep::kRoute4) {
        ASSERT_EQ(a.route4(i).has_value(), b.route4(i).has_value());
        if (a.route4(i)) {
          ASSERT_EQ(a.route4(i)->id, b.route4(i)->id);
        }
      }
    }
  }
  EXPECT_GT(keys_a, 1000u);  // the bulk path was taken
  EXPECT_GT(hits, 1000u);    // and known destinations found
}

}  // namespace
}  // namespace sf::sw
