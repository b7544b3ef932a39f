// Router interfaces (switch/fwd/router_if.h, INTERFACE table): the switch
// answers ARP / NS for its addresses with the router MAC, drops bad ones
// counted by reason, passes other hosts' ARP on, and resolves dynamic next
// hops by gleaning and by asking. Through a whole SwitchNode on real mbufs
// (ARP / ND take stage C's slow step, slow_frame); and the INTERFACE config errors.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "common/config/config_node.h"
#include "common/config/json_loader.h"
#include "common/wire/arp_nd.h"
#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "tests/support/eal_env.h"
#include "tests/unit/switch/switch_node_fixture.h"

namespace sf::sw {
namespace {

using wire::MacAddr;
using wire::NeighborError;
using wire::NeighborKind;
using wire::NeighborMsg;

const MacAddr kRouter{kRouterMac};
const wire::Ipv4Addr kIf0{{10, 0, 1, 1}}, kIf1{{10, 0, 2, 1}};
const wire::Ipv4Addr kA{{10, 0, 1, 2}}, kB{{10, 0, 2, 2}};
wire::Ipv6Addr v6(uint8_t subnet, uint8_t host) {
  return wire::Ipv6Addr{{0xFD, 0, 0, subnet, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, host}};
}

std::string doc(const std::string& extra = "") {
  return R"({"PORT": {"Ethernet0": {"devargs": "a", "speed": 100, "mtu": 9100},
                      "Ethernet4": {"devargs": "b", "speed": 100, "mtu": 9100},
                      "Ethernet8": {"devargs": "c", "speed": 100, "mtu": 9100}},
  "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.1.1/24": {}, "Ethernet0|fd00:1::1/64": {},
                "Ethernet4|10.0.2.1/24": {}, "Ethernet4|fd00:2::1/64": {}},
  "STATIC_ROUTE": {"10.0.1.2/32": {"nexthop": "10.0.1.2", "ifname": "Ethernet0"},
                   "10.0.2.0/24": {"nexthop": "10.0.2.2", "ifname": "Ethernet4"},
                   "fd00:2::/64": {"nexthop": "fd00:2::2", "ifname": "Ethernet4"}})" +
         extra + "}";
}

rte_mbuf* bytes_mbuf(const uint8_t* b, size_t n) { return test::make_mbuf({b, n}); }

rte_mbuf* arp(uint16_t op, const MacAddr& src, const wire::Ipv4Addr& spa, const wire::Ipv4Addr& tpa,
              std::optional<uint16_t> tci = std::nullopt, const MacAddr& dst = wire::kBroadcastMac) {
  std::array<uint8_t, wire::kNeighborFrameMax> f;
  const size_t n = wire::write_arp(f.data(), {dst, src, tci}, op, src, spa, {}, tpa);
  return bytes_mbuf(f.data(), n);
}

rte_mbuf* ns(const MacAddr& src, const wire::Ipv6Addr& sip, const wire::Ipv6Addr& target) {
  std::array<uint8_t, wire::kNeighborFrameMax> f;
  const wire::Ipv6Addr g = wire::solicited_node(target);
  const size_t n = wire::write_nd(f.data(), {wire::ipv6_multicast_mac(g), src, std::nullopt}, false, sip, g, target,
                                  src, false);
  return bytes_mbuf(f.data(), n);
}

rte_mbuf* na(const MacAddr& src, const wire::Ipv6Addr& sip, const wire::Ipv6Addr& dip, const MacAddr& dst) {
  std::array<uint8_t, wire::kNeighborFrameMax> f;
  const size_t n = wire::write_nd(f.data(), {dst, src, std::nullopt}, true, sip, dip, sip, src, true);
  return bytes_mbuf(f.data(), n);
}

NeighborMsg parse(const std::vector<uint8_t>& b) {
  NeighborMsg m;
  EXPECT_EQ(wire::parse_neighbor(b.data(), b.size(), m), NeighborError::kNone);
  return m;
}

class RouterIfTest : public SwitchNodeFixture {
 protected:
  void make_l3(const std::string& extra = "") { make(doc(extra)); }
  const RouterIfCounters& rc(uint16_t p) { return node_->router_if()->counters(p); }
  uint64_t drops(uint16_t p, DropCause c) { return node_->counters(p).drops[static_cast<size_t>(c)]; }
  // A RoCE WRITE from A to `dst` addressed to the router MAC.
  static wire::RoceFrameSpec routed4(const wire::Ipv4Addr& dst) {
    auto s = v4(kRouter, kHostA);
    std::get<wire::Ipv4Spec>(s.l3).src = kA;
    std::get<wire::Ipv4Spec>(s.l3).dst = dst;
    return s;
  }
};

// 1. An ARP request for the port's address: the reply leaves the same port
// with the router MAC, to the asker; counted; nothing flooded.
TEST_F(RouterIfTest, AnswersArpForItsAddress) {
  make_l3();
  rx(0, arp(wire::kArpOpRequest, kHostA, kA, kIf0));
  const auto out = drain(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(drain(1).empty());
  EXPECT_TRUE(drain(2).empty());
  const NeighborMsg m = parse(out[0]);
  EXPECT_EQ(m.kind, NeighborKind::kArpReply);
  EXPECT_EQ(m.eth_dst, kHostA);
  EXPECT_EQ(m.eth_src, kRouter);
  EXPECT_EQ(m.sender_mac, kRouter);
  EXPECT_EQ(std::memcmp(m.sender_ip.data(), kIf0.bytes.data(), 4), 0);
  EXPECT_EQ(std::memcmp(m.target_ip.data(), kA.bytes.data(), 4), 0);
  EXPECT_EQ(out[0].size(), wire::kMinFrameBytes);
  EXPECT_EQ(rc(0).rx_arp_request, 1u);
  EXPECT_EQ(rc(0).tx_arp_reply, 1u);
  EXPECT_EQ(node_->counters(0).tx_packets, 1u);
  EXPECT_EQ(node_->counters(0).dropped, 0u);
  // The address of another port's interface is not this port's: not
  // answered here, and not bridged to the other ports (other subnets).
  rx(0, arp(wire::kArpOpRequest, kHostA, kA, kIf1));
  EXPECT_TRUE(drain(0).empty());
  EXPECT_TRUE(drain(1).empty());
  EXPECT_TRUE(drain(2).empty());
  EXPECT_EQ(rc(0).not_ours, 1u);
  EXPECT_EQ(node_->counters(0).rx_trapped, 1u);
}

// 2. A tagged request (VID 5, PCP 3) is answered with the same tag.
TEST_F(RouterIfTest, AnswersTaggedArpWithTheTag) {
  make_l3();
  const uint16_t tci = 3u << 13 | 5u;
  rx(0, arp(wire::kArpOpRequest, kHostA, kA, kIf0, tci));
  const auto out = drain(0);
  ASSERT_EQ(out.size(), 1u);
  const NeighborMsg m = parse(out[0]);
  ASSERT_TRUE(m.tci.has_value());
  EXPECT_EQ(*m.tci, tci);
  EXPECT_EQ(m.kind, NeighborKind::kArpReply);
}

// 3. An NS for the port's IPv6 address: a solicited NA (S, O) from the
// address to the asker with the router MAC as target LLA, checksum right.
TEST_F(RouterIfTest, AnswersNeighborSolicitation) {
  make_l3();
  rx(0, ns(kHostA, v6(1, 2), v6(1, 1)));
  const auto out = drain(0);
  ASSERT_EQ(out.size(), 1u);
  const NeighborMsg m = parse(out[0]);
  EXPECT_EQ(m.kind, NeighborKind::kNa);
  EXPECT_TRUE(m.na_solicited);
  EXPECT_TRUE(m.na_override);
  EXPECT_TRUE(m.has_lla);
  EXPECT_EQ(m.sender_mac, kRouter);
  EXPECT_EQ(m.eth_dst, kHostA);
  EXPECT_EQ(m.target_ip, v6(1, 1).bytes);
  EXPECT_EQ(m.ip_dst, v6(1, 2).bytes);
  EXPECT_EQ(rc(0).rx_ns, 1u);
  EXPECT_EQ(rc(0).tx_na, 1u);
  // An NS from :: (duplicate address detection) must not carry a source
  // link-layer address option (RFC 4861 7.1.1): refused, counted.
  rx(0, ns(kHostA, wire::Ipv6Addr{}, v6(1, 1)));
  EXPECT_TRUE(drain(0).empty());
  EXPECT_EQ(rc(0).bad_by[static_cast<size_t>(NeighborError::kNdTarget)], 1u);
}

// 4. Bad ARP / ND on a router port: dropped as malformed, counted by reason.
TEST_F(RouterIfTest, BadFramesAreCountedDrops) {
  make_l3();
  std::array<uint8_t, wire::kNeighborFrameMax> f;
  size_t n = wire::write_arp(f.data(), {wire::kBroadcastMac, kHostA, std::nullopt}, wire::kArpOpRequest, kHostA, kA,
                             {}, kIf0);
  f[14 + 4] = 8;  // hardware length 8
  rx(0, bytes_mbuf(f.data(), n));
  f[14 + 4] = 6;
  f[14 + 7] = 9;  // opcode 9
  rx(0, bytes_mbuf(f.data(), n));
  n = wire::write_nd(f.data(), {kRouter, kHostA, std::nullopt}, false, v6(1, 2), v6(1, 1), v6(1, 1), kHostA, false);
  f[14 + 40 + 2] ^= 0x55;  // checksum
  rx(0, bytes_mbuf(f.data(), n));
  f[14 + 40 + 2] ^= 0x55;
  f[14 + 7] = 64;  // hop limit: from off-link
  rx(0, bytes_mbuf(f.data(), n));
  EXPECT_TRUE(drain(0).empty());
  EXPECT_TRUE(drain(1).empty());
  EXPECT_EQ(rc(0).bad, 4u);
  EXPECT_EQ(rc(0).bad_by[static_cast<size_t>(NeighborError::kArpFormat)], 1u);
  EXPECT_EQ(rc(0).bad_by[static_cast<size_t>(NeighborError::kArpOpcode)], 1u);
  EXPECT_EQ(rc(0).bad_by[static_cast<size_t>(NeighborError::kNdChecksum)], 1u);
  EXPECT_EQ(rc(0).bad_by[static_cast<size_t>(NeighborError::kNdHopLimit)], 1u);
  EXPECT_EQ(drops(0, DropCause::kMalformed), 4u);
  // A port without an interface leaves ARP alone (bridged, as before).
  n = wire::write_arp(f.data(), {wire::kBroadcastMac, kHostC, std::nullopt}, wire::kArpOpRequest, kHostC, kA, {}, kIf0);
  f[14 + 4] = 8;
  rx(2, bytes_mbuf(f.data(), n));
  EXPECT_EQ(drain(0).size(), 1u);
  EXPECT_EQ(drops(2, DropCause::kMalformed), 0u);
}

// 5. A dynamic next hop (10.0.2.2, no NEIGH): the first packet routed to it
// becomes the ARP request for it on its port (broadcast, from the
// interface address); packets within kSolicitInterval are dropped
// no_neighbor; the host's reply resolves it and the next packet is routed
// to its MAC.
TEST_F(RouterIfTest, ResolvesNextHopByAsking) {
  make_l3();
  rx(0, frame(routed4(kB)));
  auto out = drain(1);
  ASSERT_EQ(out.size(), 1u);
  NeighborMsg m = parse(out[0]);
  EXPECT_EQ(m.kind, NeighborKind::kArpRequest);
  EXPECT_EQ(m.eth_dst, wire::kBroadcastMac);
  EXPECT_EQ(m.sender_mac, kRouter);
  EXPECT_EQ(std::memcmp(m.sender_ip.data(), kIf1.bytes.data(), 4), 0);
  EXPECT_EQ(std::memcmp(m.target_ip.data(), kB.bytes.data(), 4), 0);
  EXPECT_EQ(node_->counters(0).neighbor_solicits, 1u);
  rx(0, frame(routed4(kB)), TimeNs::from_us(10));
  EXPECT_TRUE(drain(1, TimeNs::from_us(10)).empty());
  EXPECT_EQ(drops(0, DropCause::kNoNeighbor), 1u);
  // Another request once the interval is over.
  rx(0, frame(routed4(kB)), TimeNs::from_ms(2));
  EXPECT_EQ(drain(1, TimeNs::from_ms(2)).size(), 1u);
  // The reply: taken (not forwarded), and the next hop resolved.
  rx(1, arp(wire::kArpOpReply, kHostB, kB, kIf1, std::nullopt, kRouter), TimeNs::from_ms(3));
  EXPECT_TRUE(drain(0, TimeNs::from_ms(3)).empty());
  EXPECT_EQ(rc(1).rx_arp_reply, 1u);
  EXPECT_EQ(rc(1).gleaned, 1u);
  EXPECT_EQ(node_->counters(1).rx_trapped, 1u);
  rx(0, frame(routed4(kB)), TimeNs::from_ms(4));
  out = drain(1, TimeNs::from_ms(4));
  ASSERT_EQ(out.size(), 1u);
  const wire::FrameInfo f = wire::parse_frame(out[0]);
  ASSERT_TRUE(f.ok()) << wire::to_string(f.reason);
  EXPECT_EQ(f.eth->dst, kHostB);
  EXPECT_EQ(f.eth->src, kRouter);
  EXPECT_EQ(f.ipv4->ttl, 63);
  const auto nb = node_->router_if()->neighbors();
  ASSERT_EQ(nb.size(), 3u);  // 10.0.1.2, 10.0.2.2, fd00:2::2
  EXPECT_TRUE(nb[1].resolved);
  EXPECT_EQ(nb[1].solicits, 2u);
  EXPECT_FALSE(nb[0].resolved);
}

// 6. Gleaning: host A's gratuitous ARP (and its request for the gateway)
// resolve it without the switch asking; a later one with a new MAC moves it.
TEST_F(RouterIfTest, GleansFromArpAndFollowsAMove) {
  make_l3();
  rx(0, arp(wire::kArpOpRequest, kHostA, kA, kA));  // gratuitous: gleaned, taken
  EXPECT_TRUE(drain(1).empty());
  EXPECT_EQ(rc(0).gleaned, 1u);
  EXPECT_EQ(rc(0).not_ours, 1u);
  auto s = v4(kRouter, kHostB);
  std::get<wire::Ipv4Spec>(s.l3).src = kB;
  std::get<wire::Ipv4Spec>(s.l3).dst = kA;
  rx(1, frame(s));
  auto out = drain(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(wire::parse_frame(out[0]).eth->dst, kHostA);
  rx(0, arp(wire::kArpOpRequest, kHostC, kA, kIf0));  // A's address now at C's MAC
  EXPECT_EQ(drain(0).size(), 1u);                      // (the answer)
  EXPECT_EQ(rc(0).neighbor_moves, 1u);
  rx(1, frame(s));
  out = drain(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(wire::parse_frame(out[0]).eth->dst, kHostC);
  // A sender on another port does not set a next hop of this one.
  rx(2, arp(wire::kArpOpRequest, kHostB, kA, kA));
  drain(0);
  drain(1);
  rx(1, frame(s));
  out = drain(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(wire::parse_frame(out[0]).eth->dst, kHostC);
}

// 7. IPv6: the routed packet becomes an NS to the solicited-node group; the
// host's NA (to the router MAC) resolves the next hop.
TEST_F(RouterIfTest, ResolvesIpv6NextHop) {
  make_l3();
  wire::RoceFrameSpec s;
  s.l2 = {kRouter, kHostA, std::nullopt};
  wire::Ipv6Spec ip;
  ip.src = v6(1, 2);
  ip.dst = v6(2, 2);
  s.l3 = ip;
  s.bth.opcode = wire::Opcode::kRcWriteOnly;
  s.ext.reth_dma_length = 64;
  rx(0, frame(s));
  auto out = drain(1);
  ASSERT_EQ(out.size(), 1u);
  NeighborMsg m = parse(out[0]);
  EXPECT_EQ(m.kind, NeighborKind::kNs);
  EXPECT_EQ(m.target_ip, v6(2, 2).bytes);
  EXPECT_EQ(m.ip_dst, wire::solicited_node(v6(2, 2)).bytes);
  EXPECT_EQ(m.sender_ip, v6(2, 1).bytes);
  EXPECT_EQ(m.sender_mac, kRouter);
  EXPECT_EQ(m.eth_dst, wire::ipv6_multicast_mac(wire::solicited_node(v6(2, 2))));
  rx(1, na(kHostB, v6(2, 2), v6(2, 1), kRouter));
  EXPECT_TRUE(drain(0).empty());
  EXPECT_EQ(rc(1).rx_na, 1u);
  rx(0, frame(s), TimeNs::from_ms(5));
  out = drain(1, TimeNs::from_ms(5));
  ASSERT_EQ(out.size(), 1u);
  const wire::FrameInfo f = wire::parse_frame(out[0]);
  ASSERT_TRUE(f.ok()) << wire::to_string(f.reason);
  EXPECT_EQ(f.eth->dst, kHostB);
  EXPECT_EQ(f.ipv6->hop_limit, 63);
}

// 8. A switch reset (reboot) forgets resolved next hops: the next packet
// to one asks again.
TEST_F(RouterIfTest, ResetForgetsNextHops) {
  make_l3();
  rx(1, arp(wire::kArpOpRequest, kHostB, kB, kB));  // B announces itself
  rx(0, frame(routed4(kB)));
  auto out = drain(1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(wire::parse_frame(out[0]).eth->dst, kHostB);
  node_->reset(TimeNs::from_ms(1));
  EXPECT_FALSE(node_->router_if()->neighbors()[1].resolved);
  rx(0, frame(routed4(kB)), TimeNs::from_ms(2));
  out = drain(1, TimeNs::from_ms(2));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(parse(out[0]).kind, NeighborKind::kArpRequest);
}

// 8. INTERFACE errors name the JSON path and say why.
std::string parse_error(const std::string& extra_tables) {
  try {
    parse_switch_config(config::parse_text(R"({"PORT": {"Ethernet0": {"devargs": "a", "speed": 100},
      "Ethernet4": {"devargs": "b", "speed": 100}}, )" + extra_tables + "}"));
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RouterIfConfig, Errors) {
  auto has = [](const std::string& err, const std::string& want) {
    EXPECT_NE(err.find(want), std::string::npos) << "error: " << err << "\nwant: " << want;
  };
  has(parse_error(R"("INTERFACE": {"Ethernet0|10.0.1.1": {}})"), "INTERFACE.Ethernet0|10.0.1.1");
  has(parse_error(R"("INTERFACE": {"Ethernet0|10.0.1.1": {}})"), "key must be <port>|<address>/<prefix length>");
  has(parse_error(R"("INTERFACE": {"Ethernet9|10.0.1.1/24": {}})"), "unknown port \"Ethernet9\"");
  has(parse_error(R"("INTERFACE": {"Ethernet0|10.0.1.0/24": {}})"), "is the network address of its /24");
  has(parse_error(R"("INTERFACE": {"Ethernet0|10.0.1.255/24": {}})"), "is the broadcast address");
  has(parse_error(R"("INTERFACE": {"Ethernet0|224.0.0.1/24": {}})"), "not a unicast host address");
  has(parse_error(R"("INTERFACE": {"Ethernet0|10.0.1.1/24": {}, "Ethernet4|10.0.1.9/16": {}})"),
      "subnet overlaps INTERFACE \"Ethernet0|10.0.1.1/24\"");
  has(parse_error(R"("INTERFACE": {"Ethernet0|10.0.1.1/24": {"mtu": 9000}})"), "INTERFACE.Ethernet0|10.0.1.1/24");
  has(parse_error(R"("INTERFACE": {"Ethernet0": {"vrf_name": "Vrf1"}})"), "only the default VRF");
  has(parse_error(R"("INTERFACE": {"Ethernet0|10.0.1.1/24": {}},
      "STATIC_ROUTE": {"10.9.0.0/16": {"nexthop": "10.0.2.2", "ifname": "Ethernet0"}})"),
      "no NEIGH entry for 10.0.2.2 on Ethernet0, and it is on no INTERFACE subnet of Ethernet0");
  has(parse_error(R"("INTERFACE": {"Ethernet0|10.0.1.1/24": {}},
      "STATIC_ROUTE": {"10.9.0.0/16": {"nexthop": "10.0.1.2", "ifname": "Ethernet4"}})"),
      "no NEIGH entry for 10.0.1.2 on Ethernet4");
  has(parse_error(R"("INTERFACE": {"Ethernet0|10.0.1.1/24": {}},
      "STATIC_ROUTE": {"10.9.0.0/16": {"nexthop": "10.0.1.1", "ifname": "Ethernet0"}})"),
      "is the switch's own INTERFACE address");
  // Accepted: dynamic next hops, and a NEIGH entry wins over resolution.
  const SwitchConfig c = parse_switch_config(config::parse_text(doc(R"(,
      "NEIGH": {"Ethernet0|10.0.1.2": {"neigh": "02:00:00:00:00:0a"}})")));
  ASSERT_EQ(c.interfaces.size(), 4u);
  EXPECT_EQ(c.interfaces[0].prefix_len, 24);
  EXPECT_FALSE(c.interfaces[0].v6);
  EXPECT_TRUE(c.interfaces[1].v6);
  ASSERT_EQ(c.routes.size(), 3u);
  for (const StaticRoute& r : c.routes) {
    const bool to_a = !r.v6 && r.prefix[3] == 2;
    EXPECT_EQ(r.next_hops[0].dynamic, !to_a);
  }
}

}  // namespace
}  // namespace sf::sw
