// Forwarding tables on real DPDK structures (EAL started by eal_env.cc):
// L2 learn / move / age, LPM v4 and v6, ECMP spread.
#include "switch/fwd/fdb.h"
#include "switch/fwd/route_table.h"

#include <gtest/gtest.h>

#include <array>
#include <map>

namespace sf::sw {
namespace {

const MacAddr kA{0x02, 0, 0, 0, 0, 0xA};
const MacAddr kB{0x02, 0, 0, 0, 0, 0xB};

// 1. Learn on first sight, refresh on the same port, move to another port.
TEST(Fdb, LearnRefreshMove) {
  Fdb fdb(1024);
  EXPECT_FALSE(fdb.lookup(kA, 1).has_value());
  EXPECT_EQ(fdb.learn(kA, 1, 3, TimeNs(0)), LearnOutcome::kLearned);
  EXPECT_EQ(fdb.lookup(kA, 1), 3);
  EXPECT_FALSE(fdb.lookup(kA, 2).has_value());  // VLAN is part of the key
  EXPECT_EQ(fdb.learn(kA, 1, 3, TimeNs(5)), LearnOutcome::kRefreshed);
  EXPECT_EQ(fdb.learn(kA, 1, 4, TimeNs(6)), LearnOutcome::kMoved);
  EXPECT_EQ(fdb.lookup(kA, 1), 4);
  EXPECT_EQ(fdb.stats().moved, 1u);
}

// 2. Ageing removes learned entries idle for the ageing time, never static ones.
TEST(Fdb, AgeingSparesStaticAndFresh) {
  Fdb fdb(1024);
  ASSERT_TRUE(fdb.add_static(kB, 0, 7));
  fdb.learn(kA, 0, 1, TimeNs::from_s(0));
  EXPECT_EQ(fdb.age(TimeNs::from_s(299), TimeNs::from_s(300)), 0u);
  EXPECT_EQ(fdb.age(TimeNs::from_s(300), TimeNs::from_s(300)), 1u);
  EXPECT_FALSE(fdb.lookup(kA, 0).has_value());
  EXPECT_EQ(fdb.lookup(kB, 0), 7);
  // A static entry is not moved by a frame seen elsewhere.
  EXPECT_EQ(fdb.learn(kB, 0, 2, TimeNs::from_s(301)), LearnOutcome::kStatic);
  EXPECT_EQ(fdb.lookup(kB, 0), 7);
  EXPECT_EQ(fdb.stats().static_conflict, 1u);
}

// 3. A full table refuses and counts; nothing crashes.
TEST(Fdb, FullTableCounts) {
  Fdb fdb(8);
  int full = 0;
  for (int i = 0; i < 64; ++i) {
    const MacAddr m{0x02, 0, 0, 0, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
    full += fdb.learn(m, 0, 1, TimeNs(0)) == LearnOutcome::kTableFull;
  }
  EXPECT_GT(full, 0);
  EXPECT_EQ(fdb.stats().table_full, static_cast<uint64_t>(full));
  EXPECT_EQ(fdb.size() + static_cast<uint32_t>(full), 64u);
}

// 4. Longest prefix wins, IPv4 and IPv6; no route is nullopt.
TEST(RouteTable, LongestPrefixMatch) {
  RouteTable rt;
  const uint32_t nh1 = rt.add_next_hop({1, {}, {}});
  const uint32_t nh2 = rt.add_next_hop({2, {}, {}});
  ASSERT_TRUE(rt.add_v4({10, 0, 0, 0}, 8, {false, nh1}));
  ASSERT_TRUE(rt.add_v4({10, 1, 0, 0}, 16, {false, nh2}));
  const uint8_t a[4] = {10, 1, 2, 3};
  const uint8_t b[4] = {10, 2, 2, 3};
  const uint8_t c[4] = {11, 0, 0, 1};
  EXPECT_EQ(rt.lookup_v4(a), (RouteTarget{false, nh2}));
  EXPECT_EQ(rt.lookup_v4(b), (RouteTarget{false, nh1}));
  EXPECT_FALSE(rt.lookup_v4(c).has_value());

  std::array<uint8_t, 16> p{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_TRUE(rt.add_v6(p, 16, {false, nh1}));
  p[2] = 0x12;
  ASSERT_TRUE(rt.add_v6(p, 24, {false, nh2}));
  std::array<uint8_t, 16> x = p;
  x[15] = 1;
  EXPECT_EQ(rt.lookup_v6(x.data()), (RouteTarget{false, nh2}));
  x[2] = 0x13;
  EXPECT_EQ(rt.lookup_v6(x.data()), (RouteTarget{false, nh1}));
  x[0] = 0x20;
  EXPECT_FALSE(rt.lookup_v6(x.data()).has_value());
  EXPECT_FALSE(rt.add_v4({1, 2, 3, 4}, 0, {false, nh1}));
  EXPECT_FALSE(rt.add_v6(p, 129, {false, nh1}));
}

// 5. ECMP: 10k RoCEv2 flows that differ only in the UDP source port spread over
// a 4-member group within 10% of even; the same flow always takes one member.
TEST(RouteTable, EcmpSpreadsOnSourcePort) {
  RouteTable rt;
  std::array<uint32_t, 4> m{};
  for (uint16_t i = 0; i < 4; ++i) m[i] = rt.add_next_hop({i, {}, {}});
  const uint32_t g = rt.add_group(m);
  ASSERT_TRUE(rt.add_v4({10, 0, 0, 0}, 8, {true, g}));
  const uint8_t src[4] = {10, 0, 0, 1};
  const uint8_t dst[4] = {10, 0, 9, 9};
  std::map<uint16_t, int> count;
  const int flows = 10000;
  for (int i = 0; i < flows; ++i) {
    const uint16_t sport = static_cast<uint16_t>(0xC000 + i);
    const auto t = rt.lookup_v4(dst);
    ASSERT_TRUE(t.has_value());
    const uint32_t h = flow_hash(src, dst, 17, sport, 4791);
    const uint16_t port = rt.resolve(*t, h).port;
    ++count[port];
    ASSERT_EQ(rt.resolve(*t, flow_hash(src, dst, 17, sport, 4791)).port, port);
  }
  ASSERT_EQ(count.size(), 4u);
  for (auto [port, n] : count) EXPECT_NEAR(n, flows / 4, flows / 4 / 10) << "port " << port;
}

}  // namespace
}  // namespace sf::sw
