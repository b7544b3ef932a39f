// Multi-port hosts (docs/nic.md "Multi-port hosts"): a host with two ports,
// each its own MAC and IP (seed 002's planes), on two links to a two-port
// peer, with a tap on each link that records every frame's addresses.
//  * QPs bound to port 1 and port 2 send on their own port with their own
//    port's MAC/IP as source (data and ACKs), and the data arrives;
//  * a frame for the other port's MAC or IP is dropped and counted on the
//    port it arrived at;
//  * ibv_query_port / query_gid per port;
//  * gateway_mac: every frame leaves to the gateway MAC with the IP
//    destination the peer's (the tap routes it, as a router would).
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <optional>

#include "common/sim/simulator.h"
#include "common/wire/frame_parser.h"
#include "common/wire/mbuf_icrc.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

wire::MacAddr mac(uint8_t node, uint8_t port) { return {{0x02, 0x00, 0x00, 0x00, node, port}}; }
wire::Ipv4Addr ip(uint8_t node, uint8_t port) { return {{10, port, 0, node}}; }  // plane k = 10.k.0.0/16
const wire::MacAddr kGateway{{0x02, 0x99, 0x00, 0x00, 0x00, 0x01}};

// Host 0 of node `node` (1 or 2) with two ports, each its own address; port
// 2 gets `gw2` as gateway, port 1 `gw1`.
NicConfig two_port_node(uint8_t node, std::optional<wire::MacAddr> gw1 = std::nullopt,
                        std::optional<wire::MacAddr> gw2 = std::nullopt) {
  NicConfig c;
  HostConfig h;
  h.name = "n" + std::to_string(node);
  h.ports = {0, 1};
  h.port_addrs = {{mac(node, 1), ip(node, 1), std::nullopt, gw1}, {mac(node, 2), ip(node, 2), std::nullopt, gw2}};
  c.hosts.push_back(h);
  NicPortConfig p1;
  p1.line_rate = BitRate::gbps(100);
  NicPortConfig p2;
  p2.line_rate = BitRate::gbps(50);
  p2.mtu_bytes = 1024;
  c.ports = {p1, p2};
  return c;
}

// A two-port bump in the wire: records every frame's addresses and passes it
// on out of the other port. `route`: frames to the gateway MAC get the MAC of
// the host owning their destination IP (what a router's neighbour table does).
class Tap final : public Node {
 public:
  struct Seen {
    PortId in;
    wire::MacAddr src_mac, dst_mac;
    wire::Ipv4Addr src_ip, dst_ip;
    bool roce;
  };
  uint16_t num_ports() const override { return 2; }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs) override {
    for (rte_mbuf* m : pkts) {
      const wire::FrameInfo fi = wire::parse_mbuf(m);
      Seen s{port, {}, {}, {}, {}, fi.ok() && fi.kind == wire::FrameKind::kRoce};
      if (fi.eth != nullptr) {
        s.src_mac = fi.eth->src;
        s.dst_mac = fi.eth->dst;
      }
      if (fi.ipv4 != nullptr) {
        s.src_ip = fi.ipv4->src;
        s.dst_ip = fi.ipv4->dst;
      }
      seen.push_back(s);
      if (route && fi.eth != nullptr && fi.ipv4 != nullptr && fi.eth->dst == kGateway) {
        auto* eth = rte_pktmbuf_mtod(m, uint8_t*);
        const uint8_t node = fi.ipv4->dst.bytes[3];
        const uint8_t plane = fi.ipv4->dst.bytes[1];
        const wire::MacAddr to = mac(node, plane);
        std::copy(to.bytes.begin(), to.bytes.end(), eth);
      }
      q_[1 - port].push_back(m);
    }
  }
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs) override {
    if (q_[port].empty() || out.empty()) return 0;
    out[0] = q_[port].front();
    q_[port].pop_front();
    return 1;
  }
  TimeNs next_wakeup(TimeNs) const override { return TimeNs::max(); }
  void advance(TimeNs) override {}
  ~Tap() override {
    for (auto& q : q_) {
      for (rte_mbuf* m : q) rte_pktmbuf_free(m);
    }
  }
  std::vector<Seen> seen;
  bool route = false;

 private:
  std::deque<rte_mbuf*> q_[2];
};

// Node a (host 0, two ports) and node b (the same), a's port k and b's port k
// joined through tap k (tap port 0 toward a).
struct Rig {
  NicNode a, b;
  Tap tap1, tap2;
  sim::Simulator sim{1};
  explicit Rig(NicConfig ca = two_port_node(1), NicConfig cb = two_port_node(2))
      : a(ca, sf::test::mbuf_pool()), b(cb, sf::test::mbuf_pool()) {
    const auto ia = sim.add_node(a, "a");
    const auto ib = sim.add_node(b, "b");
    const auto t1 = sim.add_node(tap1, "tap1");
    const auto t2 = sim.add_node(tap2, "tap2");
    const sim::LinkParams l100{BitRate::gbps(100), TimeNs::from_us(1)};
    const sim::LinkParams l50{BitRate::gbps(50), TimeNs::from_us(1)};
    sim.connect(ia, 0, t1, 0, l100);
    sim.connect(t1, 1, ib, 0, l100);
    sim.connect(ia, 1, t2, 0, l50);
    sim.connect(t2, 1, ib, 1, l50);
  }
};

// RESET -> INIT (bound to `port`) -> RTR -> RTS toward `peer_qp`, which is
// reached at `peer_mac` / `peer_ip` (its port's addresses, as the OOB
// exchange carries them).
int connect_on_port(Endpoint& self, uint8_t port, const v::Qp& peer_qp, const wire::MacAddr& peer_mac,
                    const wire::Ipv4Addr& peer_ip, uint32_t sq_psn, uint32_t rq_psn,
                    v::Mtu mtu = v::Mtu::k1024) {
  v::QpAttr a;
  a.qp_state = v::QpState::kInit;
  a.port_num = port;
  a.qp_access_flags = kAllAccess;
  if (int rc = v::modify_qp(self.qp, &a, v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags); rc != 0) {
    return rc;
  }
  v::QpAttr r;
  r.qp_state = v::QpState::kRtr;
  r.path_mtu = mtu;
  r.dest_qp_num = peer_qp.qp_num();
  r.rq_psn = rq_psn;
  r.max_dest_rd_atomic = 4;
  r.min_rnr_timer = 1;
  r.ah_attr.is_global = 1;
  r.ah_attr.sl = 3;
  r.ah_attr.port_num = port;
  r.ah_attr.grh.dgid = v::gid_from_ipv4(peer_ip);
  r.ah_attr.grh.traffic_class = 26 << 2;
  for (int k = 0; k < 6; ++k) r.ah_attr.dmac[k] = peer_mac.bytes[k];
  if (int rc = v::modify_qp(self.qp, &r, v::kQpState | v::kQpAv | v::kQpPathMtu | v::kQpDestQpn | v::kQpRqPsn |
                                             v::kQpMaxDestRdAtomic | v::kQpMinRnrTimer);
      rc != 0) {
    return rc;
  }
  v::QpAttr s;
  s.qp_state = v::QpState::kRts;
  s.sq_psn = sq_psn;
  s.max_rd_atomic = 4;
  s.retry_cnt = 7;
  s.rnr_retry = 7;
  s.timeout = 10;
  return v::modify_qp(self.qp, &s, v::kQpState | v::kQpSqPsn | v::kQpMaxQpRdAtomic | v::kQpRetryCnt |
                                       v::kQpRnrRetry | v::kQpTimeout);
}

// Connects a (on its port `pa`) and b (on its port `pb`) both ways, each to
// the other's port address.
void connect_ports(Rig& rig, Endpoint& ea, uint8_t pa, Endpoint& eb, uint8_t pb) {
  ASSERT_EQ(connect_on_port(ea, pa, *eb.qp, mac(2, pb), ip(2, pb), 0x100, 0x200), 0);
  ASSERT_EQ(connect_on_port(eb, pb, *ea.qp, mac(1, pa), ip(1, pa), 0x200, 0x100), 0);
  (void)rig;
}

// 1. QP x on port 1 and QP y on port 2 of each node, one WRITE each way per
//    QP. Expect: the data arrives; on tap k only port-k addresses are seen,
//    each direction with its sender's port-k MAC and IP as source; the frame
//    counts per node port match the QP's port.
TEST(NicMultiPort, QpsSendOnTheirPortWithItsAddresses) {
  Rig rig;
  Endpoint a1 = make_endpoint(rig.a, 0, 1 << 16);
  Endpoint a2 = make_endpoint(rig.a, 0, 1 << 16);
  Endpoint b1 = make_endpoint(rig.b, 0, 1 << 16);
  Endpoint b2 = make_endpoint(rig.b, 0, 1 << 16);
  connect_ports(rig, a1, 1, b1, 1);
  connect_ports(rig, a2, 2, b2, 2);
  fill_pattern(a1.buf, 1);
  fill_pattern(a2.buf, 2);
  ASSERT_EQ(post_write(a1, 1, 0, 1 << 16, b1.addr(), b1.mr->rkey), 0);
  ASSERT_EQ(post_write(a2, 2, 0, 1 << 16, b2.addr(), b2.mr->rkey), 0);
  rig.sim.run_for(TimeNs::from_ms(1));
  const auto c1 = drain(a1.scq);
  const auto c2 = drain(a2.scq);
  ASSERT_EQ(c1.size(), 1u);
  ASSERT_EQ(c2.size(), 1u);
  EXPECT_EQ(c1[0].status, v::WcStatus::kSuccess);
  EXPECT_EQ(c2[0].status, v::WcStatus::kSuccess);
  EXPECT_EQ(a1.buf, b1.buf);
  EXPECT_EQ(a2.buf, b2.buf);
  for (int k = 1; k <= 2; ++k) {
    const Tap& t = k == 1 ? rig.tap1 : rig.tap2;
    const auto plane = static_cast<uint8_t>(k);
    size_t from_a = 0, from_b = 0;
    for (const Tap::Seen& s : t.seen) {
      ASSERT_TRUE(s.roce);
      const uint8_t src = s.in == 0 ? 1 : 2;
      const uint8_t dst = s.in == 0 ? 2 : 1;
      EXPECT_EQ(s.src_mac, mac(src, plane)) << "tap " << k;
      EXPECT_EQ(s.dst_mac, mac(dst, plane)) << "tap " << k;
      EXPECT_EQ(s.src_ip, ip(src, plane)) << "tap " << k;
      EXPECT_EQ(s.dst_ip, ip(dst, plane)) << "tap " << k;
      ++(s.in == 0 ? from_a : from_b);
    }
    // 64 KiB at a 1024-byte path MTU: 64 data frames out of a, ACKs back.
    EXPECT_EQ(from_a, 64u) << "tap " << k;
    EXPECT_GE(from_b, 1u) << "tap " << k;
  }
  EXPECT_EQ(rig.a.counters(0).tx_pkts, 64u);
  EXPECT_EQ(rig.a.counters(1).tx_pkts, 64u);
  for (PortId p = 0; p < 2; ++p) {
    EXPECT_EQ(rig.a.counters(p).dropped(), 0u);
    EXPECT_EQ(rig.b.counters(p).dropped(), 0u);
  }
}

// 2. b's QP on port 2 sends to a's port-1 MAC (then to a's port-1 IP with
//    the right MAC): the frames reach a's port 2, which is not that address.
//    Expect: dropped there as wrong_mac (then wrong_ip), counted on node port
//    1 (a's port 2) only; nothing is delivered.
TEST(NicMultiPort, FrameForTheOtherPortsAddressIsDropped) {
  for (const bool wrong_ip : {false, true}) {
    Rig rig;
    Endpoint a2 = make_endpoint(rig.a, 0, 1 << 16);
    Endpoint b2 = make_endpoint(rig.b, 0, 1 << 16);
    ASSERT_EQ(connect_on_port(a2, 2, *b2.qp, mac(2, 2), ip(2, 2), 0x100, 0x200), 0);
    ASSERT_EQ(connect_on_port(b2, 2, *a2.qp, wrong_ip ? mac(1, 2) : mac(1, 1), wrong_ip ? ip(1, 1) : ip(1, 2), 0x200,
                              0x100),
              0);
    fill_pattern(b2.buf, 7);
    ASSERT_EQ(post_write(b2, 1, 0, 4096, a2.addr(), a2.mr->rkey), 0);
    rig.sim.run_for(TimeNs::from_us(200));
    const RxDrop why = wrong_ip ? RxDrop::kWrongIp : RxDrop::kWrongMac;
    EXPECT_GE(rig.a.counters(1).drops[static_cast<int>(why)], 4u) << to_string(why);
    EXPECT_EQ(rig.a.counters(1).dropped(), rig.a.counters(1).drops[static_cast<int>(why)]);
    EXPECT_EQ(rig.a.counters(0).rx_pkts, 0u);
    EXPECT_EQ(std::count(a2.buf.begin(), a2.buf.end(), 0), static_cast<long>(a2.buf.size()));
    EXPECT_TRUE(drain(b2.scq).empty());
  }
}

// 3. ibv_query_port / ibv_query_gid per port: state, MTU, speed, link layer,
//    each port's own GIDs; a port the host does not have is EINVAL; a QP
//    bound to a port without an IPv6 GID cannot use GID index 1.
TEST(NicMultiPort, QueryPort) {
  NicConfig c = two_port_node(1);
  c.hosts[0].port_addrs[1].ipv4.reset();
  wire::Ipv6Addr v6{};
  v6.bytes[0] = 0xFD;
  v6.bytes[15] = 0x22;
  c.hosts[0].port_addrs[0].ipv6 = v6;
  c.hosts[0].port_addrs[1].ipv6 = v6;
  c.hosts[0].port_addrs[1].ipv6->bytes[14] = 0x02;
  NicNode n(c, sf::test::mbuf_pool());
  auto ctx = v::open_device(n, 0);
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(ctx->phys_port_cnt(), 2);
  v::PortAttr p1, p2, bad;
  ASSERT_EQ(v::query_port(ctx.get(), 1, &p1), 0);
  ASSERT_EQ(v::query_port(ctx.get(), 2, &p2), 0);
  EXPECT_EQ(v::query_port(ctx.get(), 0, &bad), EINVAL);
  EXPECT_EQ(v::query_port(ctx.get(), 3, &bad), EINVAL);
  EXPECT_EQ(v::query_port(nullptr, 1, &bad), EINVAL);
  EXPECT_EQ(p1.state, v::PortState::kActive);
  EXPECT_EQ(p1.link_layer, v::LinkLayer::kEthernet);
  EXPECT_EQ(p1.active_mtu, v::Mtu::k4096);
  EXPECT_EQ(p2.active_mtu, v::Mtu::k1024);
  EXPECT_EQ(p1.active_speed_mbps, 100000u);
  EXPECT_EQ(p2.active_speed_mbps, 50000u);
  EXPECT_EQ(p1.gid_tbl_len, 2);
  wire::MacAddr m;
  ASSERT_EQ(v::query_port_mac(ctx.get(), 2, &m), 0);
  EXPECT_EQ(m, mac(1, 2));
  v::Gid g;
  ASSERT_TRUE(ctx->query_gid(1, 0, &g));
  EXPECT_EQ(g, v::gid_from_ipv4(ip(1, 1)));
  EXPECT_TRUE(ctx->query_gid(0, &g));  // port 1's, the single-port call
  EXPECT_EQ(g, v::gid_from_ipv4(ip(1, 1)));
  EXPECT_FALSE(ctx->query_gid(2, 0, &g));  // port 2 has no IPv4
  ASSERT_TRUE(ctx->query_gid(2, 1, &g));
  EXPECT_EQ(g.bytes[14], 0x02);
  EXPECT_FALSE(ctx->query_gid(3, 0, &g));
  // A QP on port 2 with an IPv4 destination (GID index 0): EINVAL at RTR.
  Endpoint e = make_endpoint(n, 0, 4096);
  Endpoint peer = make_endpoint(n, 0, 4096);
  EXPECT_EQ(connect_on_port(e, 2, *peer.qp, mac(2, 2), ip(2, 2), 1, 2), EINVAL);
  // Port 3 does not exist: EINVAL at INIT.
  Endpoint e3 = make_endpoint(n, 0, 4096);
  EXPECT_EQ(connect_on_port(e3, 3, *peer.qp, mac(2, 1), ip(2, 1), 1, 2), EINVAL);
}

// 4. gateway_mac on both nodes' port 2 (a routed plane): every frame either
//    side sends on port 2 has the gateway as destination MAC and the peer's
//    port-2 IP as destination IP; the tap routes it to the owner of that IP.
//    Expect: the WRITE arrives and completes; port 1 (no gateway) is unchanged.
TEST(NicMultiPort, GatewayMacOnTheWire) {
  Rig rig(two_port_node(1, std::nullopt, kGateway), two_port_node(2, std::nullopt, kGateway));
  rig.tap2.route = true;
  Endpoint a2 = make_endpoint(rig.a, 0, 1 << 15);
  Endpoint b2 = make_endpoint(rig.b, 0, 1 << 15);
  connect_ports(rig, a2, 2, b2, 2);
  Endpoint a1 = make_endpoint(rig.a, 0, 4096);
  Endpoint b1 = make_endpoint(rig.b, 0, 4096);
  connect_ports(rig, a1, 1, b1, 1);
  fill_pattern(a2.buf, 3);
  fill_pattern(a1.buf, 4);
  ASSERT_EQ(post_write(a2, 1, 0, 1 << 15, b2.addr(), b2.mr->rkey), 0);
  ASSERT_EQ(post_write(a1, 2, 0, 4096, b1.addr(), b1.mr->rkey), 0);
  rig.sim.run_for(TimeNs::from_ms(1));
  const auto c = drain(a2.scq);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, v::WcStatus::kSuccess);
  EXPECT_EQ(a2.buf, b2.buf);
  EXPECT_EQ(a1.buf, b1.buf);
  size_t data = 0, acks = 0;
  for (const Tap::Seen& s : rig.tap2.seen) {
    const uint8_t src = s.in == 0 ? 1 : 2;
    const uint8_t dst = s.in == 0 ? 2 : 1;
    EXPECT_EQ(s.dst_mac, kGateway);
    EXPECT_EQ(s.src_mac, mac(src, 2));
    EXPECT_EQ(s.dst_ip, ip(dst, 2));
    EXPECT_EQ(s.src_ip, ip(src, 2));
    ++(s.in == 0 ? data : acks);
  }
  EXPECT_EQ(data, 32u);
  EXPECT_GE(acks, 1u);
  for (const Tap::Seen& s : rig.tap1.seen) EXPECT_EQ(s.dst_mac, mac(s.in == 0 ? 2 : 1, 1));
  // The QP's own view: ah_attr.dmac is what the caller gave (the peer's MAC).
  v::QpAttr qa;
  ASSERT_EQ(v::query_qp(a2.qp, &qa, 0, nullptr), 0);
  EXPECT_EQ(qa.port_num, 2);
  EXPECT_EQ(qa.ah_attr.dmac[5], 2);
  for (PortId p = 0; p < 2; ++p) EXPECT_EQ(rig.b.counters(p).dropped(), 0u);
}

// 5. A paced QP on port 1 is reset while its next departure is filed in
//    port 1's wheel, then bound to port 2 (to b's port-2 QP) and paced again.
//    Expect: nothing more leaves on port 1 (the old filing is skipped when
//    it comes due), the new WRITE goes out on port 2 and arrives intact.
TEST(NicMultiPort, QpRebindSendsOnlyOnItsNewPort) {
  Rig rig;
  Endpoint a = make_endpoint(rig.a, 0, 1 << 16);
  Endpoint b1 = make_endpoint(rig.b, 0, 1 << 16);
  Endpoint b2 = make_endpoint(rig.b, 0, 1 << 16);
  connect_ports(rig, a, 1, b1, 1);
  ASSERT_EQ(set_rate_limit(a.qp, 1'000'000), 0);  // 1 Gb/s: a 1 KiB frame every ~8.6 us
  fill_pattern(a.buf, 5);
  ASSERT_EQ(post_write(a, 1, 0, 1 << 16, b1.addr(), b1.mr->rkey), 0);
  rig.sim.run_for(TimeNs::from_us(20));
  const uint64_t on_port1 = rig.a.counters(0).tx_pkts;
  ASSERT_GE(on_port1, 1u);
  ASSERT_LT(on_port1, 64u);
  v::QpAttr r;
  r.qp_state = v::QpState::kReset;
  ASSERT_EQ(v::modify_qp(a.qp, &r, v::kQpState), 0);
  ASSERT_EQ(connect_on_port(a, 2, *b2.qp, mac(2, 2), ip(2, 2), 0x300, 0x400), 0);
  ASSERT_EQ(connect_on_port(b2, 2, *a.qp, mac(1, 2), ip(1, 2), 0x400, 0x300), 0);
  ASSERT_EQ(set_rate_limit(a.qp, 1'000'000), 0);
  ASSERT_EQ(post_write(a, 2, 0, 1 << 14, b2.addr(), b2.mr->rkey), 0);
  rig.sim.run_for(TimeNs::from_ms(1));
  EXPECT_EQ(rig.a.counters(0).tx_pkts, on_port1);
  EXPECT_EQ(rig.a.counters(1).tx_pkts, 16u);
  EXPECT_TRUE(std::equal(a.buf.begin(), a.buf.begin() + (1 << 14), b2.buf.begin()));
  bool done = false;
  for (const v::Wc& wc : drain(a.scq)) done = done || (wc.wr_id == 2 && wc.status == v::WcStatus::kSuccess);
  EXPECT_TRUE(done);
}

}  // namespace
}  // namespace sf::nic::test
