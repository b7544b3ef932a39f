// Receive stage B (switch/pipeline/lookup_stage.h) on its own: a classified
// burst (stage A's RxMeta, written by hand here) against a real Fdb
// (rte_hash) and RouteTable (LPM); the results by frame index that stage C reads.
#include "switch/pipeline/lookup_stage.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <vector>

#include <memory>

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

}  // namespace
}  // namespace sf::sw
