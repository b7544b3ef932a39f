// Receive stage C's forwarding decision (switch/pipeline/forward_stage.h) on
// its own: routed IPv4 / IPv6 against a real RouteTable (LPM), SRv6 uN
// through the uSID table, ECMP with ports down, the L2 flood set, and the
// incremental TTL checksum update. Headers in plain memory; no SwitchNode.
#include "switch/pipeline/forward_stage.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <vector>

namespace sf::sw {
namespace {

using Mac = std::array<uint8_t, 6>;
const Mac kPeer{0x02, 0, 0, 0, 0, 0x0B};

wire::Ipv4Header v4_header(std::array<uint8_t, 4> dst, uint8_t ttl = 64) {
  wire::Ipv4Header h{};
  h.version_ihl = 0x45;
  h.total_length.set(60);
  h.ttl = ttl;
  h.protocol = 17;
  h.src.bytes = {10, 0, 0, 1};
  h.dst.bytes = dst;
  wire::ipv4_set_checksum(h);
  return h;
}

wire::Ipv6Header v6_header(std::array<uint8_t, 16> dst, uint8_t hop_limit = 64) {
  wire::Ipv6Header h{};
  h.set_vtc_flow(0, 0x12345);
  h.next_header = 17;
  h.hop_limit = hop_limit;
  h.src.bytes = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  h.dst.bytes = dst;
  return h;
}

TEST(ForwardStageTtl, DecrementTtlEqualsRecomputedChecksum) {
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    wire::Ipv4Header h{};
    h.version_ihl = 0x45;
    h.tos = static_cast<uint8_t>(rng());
    h.total_length.set(static_cast<uint16_t>(rng()));
    h.id.set(static_cast<uint16_t>(rng()));
    h.ttl = static_cast<uint8_t>(2 + rng() % 254);
    h.protocol = static_cast<uint8_t>(rng());
    for (auto& b : h.src.bytes) b = static_cast<uint8_t>(rng());
    for (auto& b : h.dst.bytes) b = static_cast<uint8_t>(rng());
    wire::ipv4_set_checksum(h);
    wire::Ipv4Header want = h;
    --want.ttl;
    wire::ipv4_set_checksum(want);
    decrement_ttl(h);
    ASSERT_EQ(h.ttl, want.ttl);
    ASSERT_EQ(h.checksum.value(), want.checksum.value()) << "case " << i;
  }
}

class ForwardStage : public testing::Test {
 protected:
  void SetUp() override {
    routes_ = std::make_unique<RouteTable>(route_limits_for(2, 1, 8));
    st_ = std::make_unique<PortStates>(4);
    one_ = routes_->add_next_hop({1, kPeer, Mac{0x02, 0, 0, 0, 0, 1}});
    ASSERT_TRUE(routes_->add_v4({10, 1, 0, 0}, 16, RouteTarget{false, one_}));
    std::vector<uint32_t> members;
    for (uint16_t p = 1; p <= 3; ++p) members.push_back(routes_->add_next_hop({p, kPeer, Mac{0x02, 0, 0, 0, 0, 9}}));
    group_ = routes_->add_group(members);
    ASSERT_TRUE(routes_->add_v4({10, 2, 0, 0}, 16, RouteTarget{true, group_}));
    std::array<uint8_t, 16> p6{0x20, 0x01, 0x0d, 0xb8};
    ASSERT_TRUE(routes_->add_v6(p6, 32, RouteTarget{true, group_}));
  }
  RouteDecision v4(std::array<uint8_t, 4> dst, uint16_t sp = 1000) {
    const wire::Ipv4Header h = v4_header(dst);
    return route_v4(*routes_, *st_, routes_->lookup_v4(h.dst.bytes.data()), h, sp, 4791);
  }
  std::unique_ptr<RouteTable> routes_;
  std::unique_ptr<PortStates> st_;
  uint32_t one_ = 0;
  uint32_t group_ = 0;
};

TEST_F(ForwardStage, RouteV4NoRouteOneNextHopAndEcmp) {
  const RouteDecision none = v4({192, 168, 0, 1});
  EXPECT_EQ(none.nh, nullptr);
  EXPECT_EQ(none.cause, DropCause::kNoRoute);
  const RouteDecision one = v4({10, 1, 2, 3});
  ASSERT_NE(one.nh, nullptr);
  EXPECT_EQ(one.nh, &routes_->next_hop(one_));
  // ECMP: the flow hash spreads source ports over every member; a flow stays put.
  std::set<uint16_t> used;
  for (uint16_t sp = 0; sp < 256; ++sp) {
    const RouteDecision r = v4({10, 2, 0, 7}, sp);
    ASSERT_NE(r.nh, nullptr);
    EXPECT_EQ(r.nh, v4({10, 2, 0, 7}, sp).nh);
    used.insert(r.nh->port);
  }
  EXPECT_EQ(used, (std::set<uint16_t>{1, 2, 3}));
}

TEST_F(ForwardStage, RouteV4EcmpLeavesDownPortsOutAndDropsWhenNoneIsLeft) {
  st_->set_bits(2, kPortAdminUp);  // link down
  for (uint16_t sp = 0; sp < 256; ++sp) {
    const RouteDecision r = v4({10, 2, 0, 7}, sp);
    ASSERT_NE(r.nh, nullptr);
    EXPECT_NE(r.nh->port, 2);
  }
  st_->set_bits(1, kPortAdminUp);
  st_->set_bits(3, 0);
  const RouteDecision r = v4({10, 2, 0, 7});
  EXPECT_EQ(r.nh, nullptr);
  EXPECT_EQ(r.cause, DropCause::kPortDown);
  // A single next hop is not the stage's to refuse (admission drops it port_down).
  EXPECT_NE(v4({10, 1, 0, 1}).nh, nullptr);
}

TEST_F(ForwardStage, RouteV6HopLimitLpmAndEcmp) {
  const Srv6Table none;
  wire::Ipv6Header h = v6_header({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}, 1);
  RouteDecision r = route_v6(*routes_, *st_, none, h, 1, 2);
  EXPECT_EQ(r.nh, nullptr);
  EXPECT_EQ(r.cause, DropCause::kTtlExpired);
  h.hop_limit = 2;
  r = route_v6(*routes_, *st_, none, h, 1, 2);
  ASSERT_NE(r.nh, nullptr);
  EXPECT_GE(r.nh->port, 1);
  EXPECT_EQ(h.hop_limit, 2);  // the caller rewrites
  h.dst.bytes[0] = 0x30;
  r = route_v6(*routes_, *st_, none, h, 1, 2);
  EXPECT_EQ(r.nh, nullptr);
  EXPECT_EQ(r.cause, DropCause::kNoRoute);
}

TEST_F(ForwardStage, Srv6ConsumesOurUsidAndPicksTheNextOnesNeighbour) {
  Srv6Config cfg;
  cfg.block = {0xfc, 0x00, 0x00, 0x00};
  cfg.my_usid = 0x0100;
  cfg.table = {{0x0200, RouteNextHop{3, kPeer}}, {0x0300, RouteNextHop{2, kPeer}}};
  const std::vector<Mac> macs{Mac{2, 0, 0, 0, 0, 0x10}, Mac{2, 0, 0, 0, 0, 0x11}, Mac{2, 0, 0, 0, 0, 0x12}};
  const Srv6Table srv6(cfg, macs);
  ASSERT_TRUE(srv6.enabled());
  // fc00:0000:0100:0200::  -> our uSID is shifted out, 0x0200 goes to port 3
  // (no port MAC given for it: zero source).
  wire::Ipv6Header h = v6_header({0xfc, 0, 0, 0, 0x01, 0x00, 0x02, 0x00});
  RouteDecision r = route_v6(*routes_, *st_, srv6, h, 0, 0);
  ASSERT_NE(r.nh, nullptr);
  EXPECT_EQ(r.nh->port, 3);
  EXPECT_EQ(r.nh->src_mac, Mac{});
  EXPECT_EQ(h.dst.bytes[4], 0x02);
  EXPECT_EQ(h.dst.bytes[5], 0x00);
  EXPECT_EQ(h.dst.bytes[6], 0x00);
  // fc00:0000:0300:: -> not ours: port 2 with its MAC, the address unchanged.
  h = v6_header({0xfc, 0, 0, 0, 0x03, 0x00});
  r = route_v6(*routes_, *st_, srv6, h, 0, 0);
  ASSERT_NE(r.nh, nullptr);
  EXPECT_EQ(r.nh->port, 2);
  EXPECT_EQ(r.nh->src_mac, macs[2]);
  EXPECT_EQ(h.dst.bytes[4], 0x03);
  // Our uSID with nothing after it (End: no local decap) and an unknown uSID.
  h = v6_header({0xfc, 0, 0, 0, 0x01, 0x00});
  r = route_v6(*routes_, *st_, srv6, h, 0, 0);
  EXPECT_EQ(r.nh, nullptr);
  EXPECT_EQ(r.cause, DropCause::kNoRoute);
  h = v6_header({0xfc, 0, 0, 0, 0x07, 0x00});
  EXPECT_EQ(route_v6(*routes_, *st_, srv6, h, 0, 0).nh, nullptr);
  // Outside the block: LPM as without SRv6.
  h = v6_header({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2});
  EXPECT_NE(route_v6(*routes_, *st_, srv6, h, 0, 0).nh, nullptr);
}

TEST(ForwardStageFlood, FloodSetIsTheUsablePortsButTheIngress) {
  std::array<uint8_t, 6> to{};
  const auto up = [](uint16_t p) { return p != 4; };
  EXPECT_EQ(flood_set(6, 1, up, to.data()), 4);
  EXPECT_EQ(to, (std::array<uint8_t, 6>{1, 0, 1, 1, 0, 1}));
  EXPECT_EQ(flood_set(2, 0, [](uint16_t) { return false; }, to.data()), 0);
  EXPECT_EQ(to[0], 0);
  EXPECT_EQ(to[1], 0);
}

}  // namespace
}  // namespace sf::sw
