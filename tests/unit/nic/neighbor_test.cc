// Neighbors (nic/host/neighbor.h) through a NicNode in virtual time: the
// gratuitous ARP and the gateway request at start, the answer installs the
// gateway MAC every frame of the port then carries; re-confirmation after
// kReachableTime (unicast probe), failure after kMaxProbes unanswered (the
// last MAC stays), a new MAC followed; ARP requests for our address
// answered, others counted as not_roce; IPv6 NS answered with a valid NA, a
// bad checksum refused; connect-time route errors; a port in the L2 form
// sends nothing of its own.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "nic/host/nic_node.h"
#include "tests/support/eal_env.h"

namespace sf::nic::test {
namespace {

const wire::MacAddr kMe{{0x02, 0x4e, 0, 0, 0, 1}};
const wire::MacAddr kGw1{{0x02, 0x53, 0, 0, 0, 1}};
const wire::MacAddr kGw2{{0x02, 0x53, 0, 0, 0, 2}};
const wire::MacAddr kOther{{0x02, 0x99, 0, 0, 0, 9}};
const wire::Ipv4Addr kMyIp{{10, 8, 1, 1}};
const wire::Ipv4Addr kGwIp{{10, 8, 1, 254}};
const wire::Ipv6Addr kMyIp6{{0xfd, 0x08, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};
const wire::Ipv6Addr kPeerIp6{{0xfd, 0x08, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x64}};

NicConfig cfg(bool routed, bool gateway) {
  NicConfig c;
  HostConfig h;
  h.name = "h";
  h.mac = kMe;
  h.ipv4 = kMyIp;
  h.ipv6 = kMyIp6;
  h.ports = {0};
  if (routed) {
    h.l3.ipv4_prefix = 24;
    h.l3.ipv6_prefix = 64;
    if (gateway) h.l3.gateway4 = kGwIp;
  }
  c.hosts.push_back(h);
  c.ports.push_back(NicPortConfig{});
  return c;
}

std::array<uint8_t, 16> gid4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, a, b, c, d};
}

rte_mbuf* frame(const std::vector<uint8_t>& bytes) {
  rte_mbuf* m = rte_pktmbuf_alloc(sf::test::mbuf_pool());
  EXPECT_NE(m, nullptr);
  std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(bytes.size())), bytes.data(), bytes.size());
  return m;
}

std::vector<uint8_t> arp(uint16_t op, const wire::MacAddr& sha, const wire::Ipv4Addr& spa, const wire::Ipv4Addr& tpa) {
  std::vector<uint8_t> f(42, 0);  // unpadded, as a veth delivers it
  std::memset(f.data(), 0xFF, 6);
  std::memcpy(f.data() + 6, sha.bytes.data(), 6);
  f[12] = 0x08, f[13] = 0x06, f[15] = 1, f[16] = 0x08, f[18] = 6, f[19] = 4, f[21] = static_cast<uint8_t>(op);
  std::memcpy(f.data() + 22, sha.bytes.data(), 6);
  std::memcpy(f.data() + 28, spa.bytes.data(), 4);
  std::memcpy(f.data() + 38, tpa.bytes.data(), 4);
  return f;
}

uint16_t csum6(const uint8_t* ip, const uint8_t* icmp, size_t len) {
  uint32_t s = 0;
  for (int i = 8; i < 40; i += 2) s += (ip[i] << 8) | ip[i + 1];
  s += static_cast<uint32_t>(len) + 58;
  for (size_t i = 0; i + 1 < len; i += 2) s += (icmp[i] << 8) | icmp[i + 1];
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return static_cast<uint16_t>(~s);
}

std::vector<uint8_t> ns(const wire::Ipv6Addr& target, bool good_checksum) {
  std::vector<uint8_t> f(14 + 40 + 32, 0);
  f[0] = 0x33, f[1] = 0x33, f[2] = 0xFF, f[3] = target.bytes[13], f[4] = target.bytes[14], f[5] = target.bytes[15];
  std::memcpy(f.data() + 6, kOther.bytes.data(), 6);
  f[12] = 0x86, f[13] = 0xDD;
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x60, ip[5] = 32, ip[6] = 58, ip[7] = 255;
  std::memcpy(ip + 8, kPeerIp6.bytes.data(), 16);
  const uint8_t sn[16] = {0xFF, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xFF, target.bytes[13], target.bytes[14], target.bytes[15]};
  std::memcpy(ip + 24, sn, 16);
  uint8_t* icmp = ip + 40;
  icmp[0] = 135;
  std::memcpy(icmp + 8, target.bytes.data(), 16);
  icmp[24] = 1, icmp[25] = 1;
  std::memcpy(icmp + 26, kOther.bytes.data(), 6);
  const uint16_t c = csum6(ip, icmp, 32);
  icmp[2] = static_cast<uint8_t>(c >> 8), icmp[3] = static_cast<uint8_t>(good_checksum ? c : c ^ 1);
  return f;
}

struct Sent {
  std::vector<std::vector<uint8_t>> frames;
};

// Everything the node sends at `now` (the driver's transmit offer).
Sent offer(NicNode& n, TimeNs now) {
  Sent s;
  std::array<rte_mbuf*, 32> out{};
  const uint16_t k = n.transmit(0, out, now);
  for (uint16_t i = 0; i < k; ++i) {
    const auto* d = rte_pktmbuf_mtod(out[i], const uint8_t*);
    s.frames.emplace_back(d, d + out[i]->data_len);
    rte_pktmbuf_free(out[i]);
  }
  return s;
}

void give(NicNode& n, const std::vector<uint8_t>& f, TimeNs now) {
  rte_mbuf* m = frame(f);
  n.receive(0, std::span<rte_mbuf*>(&m, 1), now);
}

bool is_arp(const std::vector<uint8_t>& f, uint16_t op, const wire::Ipv4Addr& tpa) {
  return f.size() >= 42 && f[12] == 0x08 && f[13] == 0x06 && f[21] == op && std::memcmp(f.data() + 38, tpa.bytes.data(), 4) == 0;
}

TEST(NicNeighbors, ResolvesRefreshesFailsAndFollowsTheGateway) {
  NicNode n(cfg(true, true), sf::test::mbuf_pool());
  const Neighbors& nb = n.neighbors();
  EXPECT_EQ(nb.gateway_state(0, false), Neighbors::State::kIncomplete);
  EXPECT_FALSE(nb.settled());
  EXPECT_NE(n.next_tx_port(0, TimeNs(0)), 1u) << "the start announcements are offered at once";
  // Start: gratuitous ARP (a request for our own address), then the gateway request (broadcast).
  Sent s = offer(n, TimeNs(0));
  ASSERT_EQ(s.frames.size(), 3u);  // GARP, unsolicited NA (the port has IPv6), gateway request
  EXPECT_TRUE(is_arp(s.frames[0], 1, kMyIp));
  EXPECT_EQ(s.frames[1][12], 0x86);
  EXPECT_TRUE(is_arp(s.frames[2], 1, kGwIp));
  EXPECT_EQ(s.frames[2][0], 0xFF);
  EXPECT_EQ(nb.route_error(0, gid4(10, 8, 2, 2)), "port 1's gateway 10.8.1.254 is not resolved yet");
  EXPECT_FALSE(n.host(0).local(1).has_gateway);
  // The answer: the gateway's MAC carries every frame of the port from now on.
  give(n, arp(2, kGw1, kGwIp, kMyIp), TimeNs::from_ms(1));
  EXPECT_EQ(nb.gateway_state(0, false), Neighbors::State::kReachable);
  EXPECT_TRUE(nb.settled());
  ASSERT_TRUE(n.host(0).local(1).has_gateway);
  EXPECT_EQ(n.host(0).local(1).gateway, kGw1);
  EXPECT_EQ(nb.route_error(0, gid4(10, 8, 2, 2)), "");
  EXPECT_EQ(nb.route_error(0, gid4(10, 8, 1, 7)), "");  // on link
  EXPECT_EQ(n.counters(0).dropped(), 0u);
  // Nothing more until kReachableTime has passed: then a unicast probe.
  EXPECT_EQ(n.next_wakeup(TimeNs::from_ms(2)), TimeNs::from_ms(1) + Neighbors::kReachableTime);
  EXPECT_TRUE(offer(n, TimeNs::from_s(10)).frames.empty());
  TimeNs t = TimeNs::from_ms(1) + Neighbors::kReachableTime;
  s = offer(n, t);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_TRUE(is_arp(s.frames[0], 1, kGwIp));
  EXPECT_EQ(0, std::memcmp(s.frames[0].data(), kGw1.bytes.data(), 6)) << "a refresh probe is unicast";
  EXPECT_EQ(nb.gateway_state(0, false), Neighbors::State::kStale);
  // Unanswered: kMaxProbes probes kProbeInterval apart, then failed; the last MAC stays in use.
  for (uint32_t i = 1; i < Neighbors::kMaxProbes; ++i) {
    t = t + Neighbors::kProbeInterval;
    EXPECT_EQ(offer(n, t).frames.size(), 1u);
  }
  t = t + Neighbors::kProbeInterval;
  EXPECT_EQ(offer(n, t).frames.size(), 1u);
  EXPECT_EQ(nb.gateway_state(0, false), Neighbors::State::kFailed);
  EXPECT_EQ(nb.counters(0).probe_failures, 1u);
  EXPECT_EQ(n.host(0).local(1).gateway, kGw1);
  EXPECT_EQ(nb.route_error(0, gid4(10, 8, 2, 2)), "") << "it answered once: its MAC stays while it is re-probed";
  // It comes back with a new MAC (a replaced router): followed.
  give(n, arp(1, kGw2, kGwIp, kMyIp), t + TimeNs::from_ms(5));  // its request for us
  EXPECT_EQ(nb.gateway_state(0, false), Neighbors::State::kReachable);
  EXPECT_EQ(n.host(0).local(1).gateway, kGw2);
  EXPECT_EQ(nb.counters(0).gateway_changes, 1u);
  s = offer(n, t + TimeNs::from_ms(6));  // our reply to its request
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_TRUE(is_arp(s.frames[0], 2, kGwIp));
  EXPECT_EQ(0, std::memcmp(s.frames[0].data(), kGw2.bytes.data(), 6));
  EXPECT_EQ(0, std::memcmp(s.frames[0].data() + 22, kMe.bytes.data(), 6));
  EXPECT_EQ(0, std::memcmp(s.frames[0].data() + 28, kMyIp.bytes.data(), 4));
}

TEST(NicNeighbors, AnswersItsAddressesOnlyAndCountsTheRest) {
  NicNode n(cfg(false, false), sf::test::mbuf_pool());  // the L2 form: answers, announces nothing
  EXPECT_TRUE(offer(n, TimeNs(0)).frames.empty());
  EXPECT_EQ(n.next_wakeup(TimeNs(0)), TimeNs::max());
  const wire::Ipv4Addr asker{{10, 8, 1, 100}};
  give(n, arp(1, kOther, asker, kMyIp), TimeNs(10));
  give(n, arp(1, kOther, asker, wire::Ipv4Addr{{10, 8, 1, 2}}), TimeNs(11));  // for another host
  give(n, ns(kMyIp6, false), TimeNs(12));                                    // bad ICMPv6 checksum
  give(n, ns(kMyIp6, true), TimeNs(13));
  EXPECT_EQ(n.counters(0).drops[static_cast<int>(RxDrop::kNotRoce)], 2u);
  EXPECT_EQ(n.neighbors().counters(0).rx_arp, 1u);
  EXPECT_EQ(n.neighbors().counters(0).rx_nd, 1u);
  Sent s = offer(n, TimeNs(20));
  ASSERT_EQ(s.frames.size(), 2u);
  EXPECT_TRUE(is_arp(s.frames[0], 2, asker));
  EXPECT_EQ(s.frames[0].size(), 60u);
  EXPECT_EQ(0, std::memcmp(s.frames[0].data(), kOther.bytes.data(), 6));
  const std::vector<uint8_t>& na = s.frames[1];
  ASSERT_EQ(na.size(), 86u);
  const uint8_t* ip = na.data() + 14;
  const uint8_t* icmp = ip + 40;
  EXPECT_EQ(0, std::memcmp(na.data(), kOther.bytes.data(), 6)) << "to the solicitor's link-layer address";
  EXPECT_EQ(0, std::memcmp(ip + 24, kPeerIp6.bytes.data(), 16));
  EXPECT_EQ(icmp[0], 136);
  EXPECT_EQ(icmp[4], 0x60) << "solicited + override";
  EXPECT_EQ(0, std::memcmp(icmp + 8, kMyIp6.bytes.data(), 16));
  EXPECT_EQ(icmp[24], 2);
  EXPECT_EQ(0, std::memcmp(icmp + 26, kMe.bytes.data(), 6));
  EXPECT_EQ(csum6(ip, icmp, 32), 0) << "the NA's checksum verifies";
  EXPECT_EQ(n.neighbors().route_error(0, gid4(10, 9, 9, 9)), "") << "the L2 form does not route";
}

TEST(NicNeighbors, ConnectTimeRouteErrors) {
  NicNode n(cfg(true, false), sf::test::mbuf_pool());
  EXPECT_EQ(n.neighbors().route_error(0, gid4(10, 8, 2, 2)),
            "no route to 10.8.2.2: it is outside port 1's subnet 10.8.1.1/24 and the port has no gateway");
  EXPECT_EQ(n.neighbors().route_error(0, gid4(10, 8, 1, 9)), "");
  NicNode g(cfg(true, true), sf::test::mbuf_pool());
  TimeNs t(0);
  for (uint32_t i = 0; i <= Neighbors::kMaxProbes; ++i, t = t + Neighbors::kProbeInterval) offer(g, t);
  EXPECT_TRUE(g.neighbors().settled());
  EXPECT_EQ(g.neighbors().route_error(0, gid4(10, 8, 2, 2)),
            "port 1's gateway 10.8.1.254 does not answer ARP (3 requests, 1000 ms apart): wrong gateway address, "
            "or the router is down");
  EXPECT_FALSE(g.host(0).local(1).has_gateway);
}

// A tagged ARP request (priority tag VID 0 PCP 3, and VID 12) and a tagged NS
// for our addresses: each answered, the answer carrying the request's tag
// (the frame views of common/wire/arp_nd.h, shared with sf-switch).
TEST(NicNeighbors, AnswersTaggedRequestsWithTheirTag) {
  NicNode n(cfg(false, false), sf::test::mbuf_pool());
  offer(n, TimeNs(0));
  for (const uint16_t tci : {uint16_t{3u << 13}, uint16_t{3u << 13 | 12u}}) {
    std::vector<uint8_t> f = arp(1, kOther, kGwIp, kMyIp);
    const uint8_t tag[4] = {0x81, 0x00, static_cast<uint8_t>(tci >> 8), static_cast<uint8_t>(tci)};
    f.insert(f.begin() + 12, tag, tag + 4);
    give(n, f, TimeNs::from_ms(1));
    Sent s = offer(n, TimeNs::from_ms(1));
    ASSERT_EQ(s.frames.size(), 1u);
    const std::vector<uint8_t>& r = s.frames[0];
    ASSERT_GE(r.size(), 46u);
    EXPECT_EQ(r[12], 0x81);
    EXPECT_EQ(r[13], 0x00);
    EXPECT_EQ((r[14] << 8 | r[15]), tci);
    EXPECT_EQ(r[16], 0x08);
    EXPECT_EQ(r[17], 0x06);
    EXPECT_EQ(r[14 + 4 + 7], 2) << "an ARP reply";
    EXPECT_EQ(0, std::memcmp(r.data(), kOther.bytes.data(), 6));
  }
  std::vector<uint8_t> f = ns(kMyIp6, true);
  const uint8_t tag[4] = {0x81, 0x00, 0x00, 0x07};
  f.insert(f.begin() + 12, tag, tag + 4);
  give(n, f, TimeNs::from_ms(2));
  Sent s = offer(n, TimeNs::from_ms(2));
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.frames[0][15], 7);
  EXPECT_EQ(s.frames[0][14 + 4 + 40], 136) << "an NA";
  EXPECT_EQ(n.neighbors().counters(0).tx_arp_replies, 2u);
  EXPECT_EQ(n.neighbors().counters(0).tx_na, 1u);
}

}  // namespace
}  // namespace sf::nic::test
