// NicNode behaviour over virtual time: per-QP pacing through the timing
// wheel (gaps exact, never a burst above the rate), many hosts on one node
// (own MAC/IP/ports, a host with two ports), PFC on the host side (a slow
// receiver asserts PFC from its receive backlog, the sender honours it per
// priority: no loss), requester PSN wrap.
#include <gtest/gtest.h>

#include <cstring>

#include "common/sim/simulator.h"
#include "common/wire/frame_parser.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

// Records every arrival (its departure time at the sender, length,
// destination QP) and frees it. Departure = arrival - delay - serialisation.
class Recorder final : public Node {
 public:
  struct Arrival {
    TimeNs at;  // departure from the sender
    uint32_t len;
    uint32_t qpn;
  };
  Recorder(BitRate link, TimeNs delay) : link_(link), delay_(delay) {}
  uint16_t num_ports() const override { return 1; }
  void receive(PortId, std::span<rte_mbuf*> pkts, TimeNs now) override {
    for (rte_mbuf* m : pkts) {
      const wire::FrameInfo fi = wire::parse_frame({rte_pktmbuf_mtod(m, const uint8_t*), m->data_len}, m->pkt_len);
      arrivals.push_back({now - delay_ - link_.tx_time(wire_bytes(m->pkt_len)), m->pkt_len,
                          fi.bth != nullptr ? fi.bth->dest_qp.value() : 0});
      rte_pktmbuf_free(m);
    }
  }
  uint16_t transmit(PortId, std::span<rte_mbuf*>, TimeNs) override { return 0; }
  TimeNs next_wakeup(TimeNs) const override { return TimeNs::max(); }
  void advance(TimeNs) override {}
  std::vector<Arrival> arrivals;

 private:
  BitRate link_;
  TimeNs delay_;
};

// Host 0's node `a` wired to a Recorder (100 Gb/s, 1 us) in a simulator;
// host 1's node `peer` is not wired: it only holds the QPs a's QPs connect to.
struct PacingRig {
  NicNode a{one_host_cfg(0), sf::test::mbuf_pool()};
  NicNode peer{one_host_cfg(1), sf::test::mbuf_pool()};
  Recorder rec{BitRate::gbps(100), TimeNs::from_us(1)};
  sim::Simulator sim{1};
  PacingRig() {
    const auto ia = sim.add_node(a, "a");
    const auto ir = sim.add_node(rec, "rec");
    sim.connect(ia, 0, ir, 0, {BitRate::gbps(100), TimeNs::from_us(1)});
  }
};

// 1. One QP paced at 10 Gb/s on a 100 Gb/s port, a 64 KiB WRITE (16 x 4 KiB
//    frames). Expect: consecutive departures exactly rate.tx_time(wire
//    bytes) apart (3.3504 us for a 4158-byte frame), nothing faster. Then
//    unpaced: back to back at the line rate.
TEST(NicPacing, GapsExactAtTheQpRate) {
  for (const uint64_t kbps : {uint64_t{10'000'000}, uint64_t{0}}) {
    PacingRig rig;
    auto& [a, peer, rec, sim] = rig;
    Endpoint ea = make_endpoint(a, 0, 1 << 16);
    Endpoint eb = make_endpoint(peer, 0, 1 << 16);
    ASSERT_EQ(connect_qp(ea, eb, ConnParams{}), 0);
    ASSERT_EQ(set_rate_limit(ea.qp, static_cast<uint32_t>(kbps)), 0);
    ASSERT_EQ(post_write(ea, 1, 0, 1 << 16, eb.addr(), eb.mr->rkey), 0);
    sim.run_for(TimeNs::from_us(100));
    ASSERT_GE(rec.arrivals.size(), 16u);
    const BitRate rate = kbps == 0 ? BitRate::gbps(100) : BitRate(kbps * 1000);
    for (size_t i = 1; i < 16; ++i) {
      // The gap after a frame is its own wire time at the rate.
      EXPECT_EQ(rec.arrivals[i].at - rec.arrivals[i - 1].at, rate.tx_time(wire_bytes(rec.arrivals[i - 1].len)))
          << "rate " << kbps << " kb/s, frame " << i;
    }
    if (kbps != 0) {
      // A MIDDLE frame: 14 + 20 + 8 + 12 + 4096 + 4 = 4154 B, 4178 on the
      // wire, 3342.4 ns at 10 Gb/s, rounded up.
      EXPECT_EQ(rec.arrivals[1].len, 4154u);
      EXPECT_EQ(rec.arrivals[2].at - rec.arrivals[1].at, TimeNs(3343));
    } else {
      // Unpaced: back to back, 334.24 ns -> 335 ns per MIDDLE frame at 100G.
      EXPECT_EQ(rec.arrivals[2].at - rec.arrivals[1].at, TimeNs(335));
    }
  }
}

// 1b. The address vector's static rate (ah_attr.static_rate, an ibv_rate
//     value; perftest --rate_limit_type HW): IBV_RATE_10_GBPS (3) paces as a
//     10 Gb/s rate limit does; with a rate limit too, the smaller applies;
//     query_qp returns it; a value that is no ibv_rate is refused at RTR.
TEST(NicPacing, StaticRateOfTheAddressVector) {
  for (const uint32_t limit_kbps : {uint32_t{0}, uint32_t{25'000'000}, uint32_t{5'000'000}}) {
    PacingRig rig;
    auto& [a, peer, rec, sim] = rig;
    Endpoint ea = make_endpoint(a, 0, 1 << 16);
    Endpoint eb = make_endpoint(peer, 0, 1 << 16);
    ConnParams cp;
    cp.static_rate = 3;  // IBV_RATE_10_GBPS
    ASSERT_EQ(connect_qp(ea, eb, cp), 0);
    if (limit_kbps != 0) {
      ASSERT_EQ(set_rate_limit(ea.qp, limit_kbps), 0);
    }
    v::QpAttr q;
    v::QpInitAttr qi;
    ASSERT_EQ(v::query_qp(ea.qp, &q, 0, &qi), 0);
    EXPECT_EQ(q.ah_attr.static_rate, 3);
    ASSERT_EQ(post_write(ea, 1, 0, 1 << 16, eb.addr(), eb.mr->rkey), 0);
    sim.run_for(TimeNs::from_us(200));
    ASSERT_GE(rec.arrivals.size(), 16u);
    const BitRate rate = limit_kbps == 5'000'000 ? BitRate::gbps(5) : BitRate::gbps(10);
    for (size_t i = 1; i < 16; ++i) {
      EXPECT_EQ(rec.arrivals[i].at - rec.arrivals[i - 1].at, rate.tx_time(wire_bytes(rec.arrivals[i - 1].len)))
          << "limit " << limit_kbps << " kb/s, frame " << i;
    }
  }
  PacingRig rig;
  auto& [a, peer, rec, sim] = rig;
  Endpoint ea = make_endpoint(a, 0, 1 << 16);
  Endpoint eb = make_endpoint(peer, 0, 1 << 16);
  ConnParams bad;
  bad.static_rate = 99;
  EXPECT_EQ(connect_qp(ea, eb, bad), EINVAL);
  EXPECT_EQ(rc::Qp::static_rate_of(2), BitRate(2'500'000'000));
  EXPECT_EQ(rc::Qp::static_rate_of(21), BitRate::gbps(400));
  EXPECT_EQ(rc::Qp::static_rate_of(0), BitRate(0));
}

// 2. Two QPs of one host on one port, paced at 10 and 25 Gb/s, each with a
//    backlog. A frame may leave up to one line-rate frame late (the port is
//    busy with the other QP's frame); its successor keeps the schedule
//    (Carousel: due at s + gap, s the scheduled time), so the rate does not
//    drift. Expect: per QP, any run of departures spans at least its frames'
//    gaps less that one frame time (never a burst above the rate), and its
//    average rate within 1% of the target.
TEST(NicPacing, TwoQpsEachAtItsRate) {
  PacingRig rig;
  auto& [a, peer, rec, sim] = rig;
  Endpoint e1 = make_endpoint(a, 0, 1 << 20);
  Endpoint p1 = make_endpoint(peer, 0, 1 << 20);
  Endpoint p2 = make_endpoint(peer, 0, 1 << 20);
  Endpoint e2;
  e2.ctx = v::open_device(a, 0);
  e2.pd = e1.pd;
  e2.scq = e1.scq;
  e2.rcq = e1.rcq;
  v::QpInitAttr ia2;
  ia2.send_cq = e1.scq;
  ia2.recv_cq = e1.rcq;
  ia2.cap.max_send_wr = 16;
  ia2.cap.max_recv_wr = 16;
  e2.qp = v::create_qp(e1.pd, &ia2);
  e2.mr = e1.mr;
  ASSERT_EQ(connect_qp(e1, p1, ConnParams{}), 0);
  ASSERT_EQ(connect_qp(e2, p2, ConnParams{}), 0);
  ASSERT_EQ(set_rate_limit(e1.qp, 10'000'000), 0);
  ASSERT_EQ(set_rate_limit(e2.qp, 25'000'000), 0);
  v::Sge sge{e1.addr(), 1 << 19, e1.mr->lkey};
  v::SendWr wr;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = v::WrOpcode::kRdmaWrite;
  wr.rdma.remote_addr = p1.addr();
  wr.rdma.rkey = p1.mr->rkey;
  ASSERT_EQ(v::post_send(e1.qp, &wr, nullptr), 0);
  ASSERT_EQ(v::post_send(e2.qp, &wr, nullptr), 0);
  sim.run_for(TimeNs::from_us(60));
  for (const auto& [qp, rate] : {std::pair{e1.qp, BitRate::gbps(10)}, std::pair{e2.qp, BitRate::gbps(25)}}) {
    std::vector<Recorder::Arrival> mine;
    for (const auto& ar : rec.arrivals) {
      if (ar.qpn == qp->dest_qp() && ar.at > TimeNs::from_us(5)) mine.push_back(ar);
    }
    ASSERT_GT(mine.size(), 10u);
    uint64_t wire = 0;
    const TimeNs one_frame = BitRate::gbps(100).tx_time(wire_bytes(4170));
    for (size_t i = 0; i + 1 < mine.size(); ++i) {
      TimeNs gaps = TimeNs::zero();
      for (size_t k = i + 1; k < mine.size(); ++k) {
        gaps = gaps + rate.tx_time(wire_bytes(mine[k - 1].len));
        EXPECT_GE(mine[k].at - mine[i].at, gaps - one_frame) << i << ".." << k;
      }
      wire += wire_bytes(mine[i].len);
    }
    const double achieved = static_cast<double>(wire) * 8e9 / static_cast<double>((mine.back().at - mine[0].at).ns());
    EXPECT_NEAR(achieved / static_cast<double>(rate.bps()), 1.0, 0.01) << rate.gbps_value();
  }
}

// Two nodes of 4 hosts each, host i of X on port i linked to host i of Y.
// 3. Expect: each pair's WRITE lands in its own peer only (per-host MAC, IP,
//    QP table), frames to another host's address on a port are dropped.
TEST(NicHosts, FourHostsPerNodeEachOnItsPort) {
  NicConfig cx;
  NicConfig cy;
  for (int i = 0; i < 4; ++i) {
    cx.hosts.push_back(host_cfg(i, {static_cast<PortId>(i)}));
    cy.hosts.push_back(host_cfg(10 + i, {static_cast<PortId>(i)}));
    cx.ports.push_back(NicPortConfig{});
    cy.ports.push_back(NicPortConfig{});
  }
  NicNode x(cx, sf::test::mbuf_pool());
  NicNode y(cy, sf::test::mbuf_pool());
  sim::Simulator sim(3);
  const auto ix = sim.add_node(x, "x");
  const auto iy = sim.add_node(y, "y");
  for (PortId p = 0; p < 4; ++p) sim.connect(ix, p, iy, p, {BitRate::gbps(100), TimeNs::from_us(1)});
  std::vector<Endpoint> ex;
  std::vector<Endpoint> ey;
  for (int i = 0; i < 4; ++i) {
    ex.push_back(make_endpoint(x, i, 1 << 18));
    ey.push_back(make_endpoint(y, i, 1 << 18));
    connect_pair(ex[i], ey[i]);
    fill_pattern(ex[i].buf, 100 + i);
    ASSERT_EQ(post_write(ex[i], i, 0, 1 << 18, ey[i].addr(), ey[i].mr->rkey), 0);
  }
  sim.run_for(TimeNs::from_ms(1));
  for (int i = 0; i < 4; ++i) {
    const auto s = drain(ex[i].scq);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].status, v::WcStatus::kSuccess);
    EXPECT_EQ(ex[i].buf, ey[i].buf) << i;
    EXPECT_EQ(x.counters(static_cast<PortId>(i)).tx_pkts, 64u) << i;
    EXPECT_EQ(y.counters(static_cast<PortId>(i)).dropped(), 0u);
  }
  EXPECT_EQ(x.host(2).local().mac, host_mac(2));
}

// 3b. Cost follows the work: 16 single-port hosts, one of them (host 5)
//    writes. Expect: the node names no port to transmit on before the post,
//    only host 5's port after it (Node::next_tx_port, what sf-sim offers),
//    the WRITE completes with frames on that port only, and once it is
//    done no port is named and no wakeup is pending but the QP timer's.
TEST(NicHosts, OnlyTouchedPortsOffered) {
  NicConfig cx;
  NicConfig cy;
  for (int i = 0; i < 16; ++i) {
    cx.hosts.push_back(host_cfg(i, {static_cast<PortId>(i)}));
    cy.hosts.push_back(host_cfg(20 + i, {static_cast<PortId>(i)}));
    cx.ports.push_back(NicPortConfig{});
    cy.ports.push_back(NicPortConfig{});
  }
  NicNode x(cx, sf::test::mbuf_pool());
  NicNode y(cy, sf::test::mbuf_pool());
  ASSERT_TRUE(x.tracks_tx_ports());
  sim::Simulator sim(3);
  const auto ix = sim.add_node(x, "x");
  const auto iy = sim.add_node(y, "y");
  for (PortId p = 0; p < 16; ++p) sim.connect(ix, p, iy, p, {BitRate::gbps(100), TimeNs::from_us(1)});
  Endpoint e5 = make_endpoint(x, 5, 1 << 16);
  Endpoint p5 = make_endpoint(y, 5, 1 << 16);
  connect_pair(e5, p5);
  EXPECT_EQ(x.next_tx_port(0, sim.now()), 16) << "nothing to send yet";
  fill_pattern(e5.buf, 55);
  ASSERT_EQ(post_write(e5, 1, 0, 1 << 16, p5.addr(), p5.mr->rkey), 0);
  EXPECT_EQ(x.next_tx_port(0, sim.now()), 5);
  EXPECT_EQ(x.next_tx_port(6, sim.now()), 16);
  sim.run_for(TimeNs::from_ms(1));
  const auto s = drain(e5.scq);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, v::WcStatus::kSuccess);
  EXPECT_EQ(e5.buf, p5.buf);
  for (PortId p = 0; p < 16; ++p) EXPECT_EQ(x.counters(p).tx_pkts, p == 5 ? 16u : 0u) << p;
  EXPECT_EQ(x.next_tx_port(0, sim.now()), 16) << "done: no port has work";
  EXPECT_EQ(y.next_tx_port(0, sim.now()), 16);
}

// 4. One host with two ports (planes): QP 1 on port_num 1, QP 2 on
//    port_num 2, each to a different peer node. Expect: each QP's frames
//    leave on its own port only, both WRITEs verified.
TEST(NicHosts, HostWithTwoPorts) {
  NicConfig c;
  c.hosts.push_back(host_cfg(0, {0, 1}));
  c.ports = {NicPortConfig{}, NicPortConfig{}};
  NicNode a(c, sf::test::mbuf_pool());
  NicNode b1(one_host_cfg(1), sf::test::mbuf_pool());
  NicNode b2(one_host_cfg(2), sf::test::mbuf_pool());
  sim::Simulator sim(1);
  const auto ia = sim.add_node(a, "a");
  sim.connect(ia, 0, sim.add_node(b1, "b1"), 0, {BitRate::gbps(100), TimeNs::from_us(1)});
  sim.connect(ia, 1, sim.add_node(b2, "b2"), 0, {BitRate::gbps(100), TimeNs::from_us(1)});
  Endpoint e1 = make_endpoint(a, 0, 1 << 16);
  Endpoint e2 = make_endpoint(a, 0, 1 << 17);
  Endpoint p1 = make_endpoint(b1, 0, 1 << 16);
  Endpoint p2 = make_endpoint(b2, 0, 1 << 17);
  connect_pair(e1, p1);
  // QP 2 on port 2: connect_qp uses port 1, so do it by hand.
  v::QpAttr i2;
  i2.qp_state = v::QpState::kInit;
  i2.port_num = 2;
  i2.qp_access_flags = kAllAccess;
  ASSERT_EQ(v::modify_qp(e2.qp, &i2, v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags), 0);
  ConnParams p;
  ASSERT_EQ(connect_qp(p2, e2, p), 0);
  {
    // INIT -> RTR -> RTS for e2 (already INIT on port 2).
    const rc::LocalAddr& pl = p2.ctx->host().local();
    v::QpAttr r;
    r.qp_state = v::QpState::kRtr;
    r.path_mtu = v::Mtu::k4096;
    r.dest_qp_num = p2.qp->qp_num();
    r.rq_psn = p.sq_psn;
    r.max_dest_rd_atomic = 4;
    r.min_rnr_timer = 1;
    r.ah_attr.is_global = 1;
    r.ah_attr.sl = 3;
    r.ah_attr.grh.dgid = v::gid_from_ipv4(pl.ipv4);
    for (int k = 0; k < 6; ++k) r.ah_attr.dmac[k] = pl.mac.bytes[k];
    ASSERT_EQ(v::modify_qp(e2.qp, &r, v::kQpState | v::kQpAv | v::kQpPathMtu | v::kQpDestQpn | v::kQpRqPsn |
                                          v::kQpMaxDestRdAtomic | v::kQpMinRnrTimer), 0);
    v::QpAttr s;
    s.qp_state = v::QpState::kRts;
    s.sq_psn = p.rq_psn;
    s.max_rd_atomic = 4;
    s.retry_cnt = 7;
    s.rnr_retry = 7;
    s.timeout = 10;
    ASSERT_EQ(v::modify_qp(e2.qp, &s, v::kQpState | v::kQpSqPsn | v::kQpMaxQpRdAtomic | v::kQpRetryCnt |
                                          v::kQpRnrRetry | v::kQpTimeout), 0);
  }
  fill_pattern(e1.buf, 1);
  fill_pattern(e2.buf, 2);
  ASSERT_EQ(post_write(e1, 1, 0, 1 << 16, p1.addr(), p1.mr->rkey), 0);
  ASSERT_EQ(post_write(e2, 2, 0, 1 << 17, p2.addr(), p2.mr->rkey), 0);
  sim.run_for(TimeNs::from_ms(1));
  EXPECT_EQ(drain(e1.scq).size() + drain(e2.scq).size(), 2u);
  EXPECT_EQ(e1.buf, p1.buf);
  EXPECT_EQ(e2.buf, p2.buf);
  EXPECT_EQ(a.counters(0).tx_pkts, 16u);
  EXPECT_EQ(a.counters(1).tx_pkts, 32u);
}

// 5. PFC on the host side: the receiver drains its ring at 25 Gb/s while the
//    sender writes 8 MiB at 100 Gb/s. With PFC (priority 3, XOFF at 64 KiB
//    of backlog): PFC frames sent by the receiver, honoured by the sender
//    (its QP set aside while paused), no ring drop, no retransmission,
//    bytes verified. Without PFC: ring drops and retransmissions (the
//    contrast shows PFC did the work), bytes still verified.
TEST(NicPfc, SlowReceiverPausesSenderLosslessly) {
  for (const bool pfc : {true, false}) {
    NicConfig cb = one_host_cfg(1);
    cb.ports[0].rx_drain_rate = BitRate::gbps(25);
    cb.ports[0].rx_ring_pkts = 64;  // below the 128-PSN window, so without PFC it overflows
    cb.ports[0].pfc_generate_mask = pfc ? 1u << 3 : 0;
    cb.ports[0].pfc_backlog = {64 * 1024, 32 * 1024};
    NicNode a(one_host_cfg(0), sf::test::mbuf_pool());
    NicNode b(cb, sf::test::mbuf_pool());
    sim::Simulator sim(5);
    const auto ia = sim.add_node(a, "a");
    const auto ib = sim.add_node(b, "b");
    sim.connect(ia, 0, ib, 0, {BitRate::gbps(100), TimeNs::from_us(1)});
    Endpoint ea = make_endpoint(a, 0, 8 << 20);
    Endpoint eb = make_endpoint(b, 0, 8 << 20);
    ConnParams p;
    p.timeout = 6;
    connect_pair(ea, eb, p);
    fill_pattern(ea.buf, 9);
    for (int i = 0; i < 8; ++i) ASSERT_EQ(post_write(ea, i, i << 20, 1 << 20, eb.addr() + (i << 20), eb.mr->rkey), 0);
    sim.run_for(TimeNs::from_ms(20));
    const auto s = drain(ea.scq);
    ASSERT_EQ(s.size(), 8u) << "pfc " << pfc;
    for (const auto& wc : s) EXPECT_EQ(wc.status, v::WcStatus::kSuccess);
    EXPECT_EQ(ea.buf, eb.buf);
    const uint64_t ring_drops = b.counters(0).drops[static_cast<int>(RxDrop::kRxRingFull)];
    if (pfc) {
      EXPECT_GT(b.counters(0).tx_pfc_frames, 0u);
      EXPECT_GT(a.pfc_rx(0).counters().pause_frames[3], 0u);
      EXPECT_GT(a.counters(0).paused_skips, 0u);
      EXPECT_EQ(ring_drops, 0u);
      EXPECT_EQ(ea.qp->counters().tx_retransmit_pkts, 0u);
    } else {
      EXPECT_EQ(b.counters(0).tx_pfc_frames, 0u);
      EXPECT_GT(ring_drops, 0u);
      EXPECT_GT(ea.qp->counters().tx_retransmit_pkts, 0u);
    }
  }
}

// 6. Requester PSN wrap over the link: sq_psn 0xFFFFFD, a 5-packet WRITE and
//    a 3-packet READ cross 0xFFFFFF -> 0. Expect: both succeed, bytes equal.
TEST(NicHosts, RequesterPsnWrapEndToEnd) {
  NicNode a(one_host_cfg(0), sf::test::mbuf_pool());
  NicNode b(one_host_cfg(1), sf::test::mbuf_pool());
  sim::Simulator sim(1);
  sim.connect(sim.add_node(a, "a"), 0, sim.add_node(b, "b"), 0, {BitRate::gbps(100), TimeNs::from_us(1)});
  Endpoint ea = make_endpoint(a, 0, 1 << 16);
  Endpoint eb = make_endpoint(b, 0, 1 << 16);
  ConnParams p;
  p.mtu = v::Mtu::k1024;
  p.sq_psn = 0xFFFFFD;
  connect_pair(ea, eb, p);
  fill_pattern(ea.buf, 1);
  fill_pattern(eb.buf, 2);
  const std::vector<uint8_t> b_orig = eb.buf;
  ASSERT_EQ(post_write(ea, 1, 0, 5000, eb.addr(), eb.mr->rkey), 0);
  ASSERT_EQ(post_write(ea, 2, 8192, 3000, eb.addr() + 8192, eb.mr->rkey, v::WrOpcode::kRdmaRead), 0);
  sim.run_for(TimeNs::from_us(100));
  const auto s = drain(ea.scq);
  ASSERT_EQ(s.size(), 2u);
  for (const auto& wc : s) EXPECT_EQ(wc.status, v::WcStatus::kSuccess);
  EXPECT_EQ(0, std::memcmp(eb.buf.data(), ea.buf.data(), 5000));
  EXPECT_EQ(0, std::memcmp(ea.buf.data() + 8192, b_orig.data() + 8192, 3000));
  EXPECT_EQ(ea.qp->next_psn(), wire::Psn(5));
  EXPECT_EQ(eb.qp->expected_psn(), wire::Psn(5));
}

}  // namespace
}  // namespace sf::nic::test
