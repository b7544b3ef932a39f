// The MRC QP over two planes: 2-port hosts back to back (port k of a to port
// k of b, mrc_qp_harness.h), plane p = port p + 1. The QP sprays its packets
// over both ports (each port asks it for a packet of its plane), each with
// its port's source addresses and the peer's plane address; a plane going
// down mid-transfer is dropped at once by both ends (ERTH port status) and
// the transfer completes on the other, byte-exact, without a QP error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/unit/nic/mrc_qp_harness.h"

namespace sf::nic::test {
namespace {

// Both QPs told the peer's per-plane addresses (port p + 1 of the other host).
void connect_planes(MrcRig& rig, Endpoint& x, Endpoint& y, v::MrcQpAttr a = {}, int mask = 0, uint8_t planes = 2) {
  tell_peer_planes(rig, x, y, a, mask, planes);
  connect_mrc(x, y);
}

// 1. A 4 MiB WRITE sprayed over two ports: each carries about half the data
//    packets, every EV's packets on its own plane's port, byte-exact; the
//    responder's SACKs on its control plane (port 1).
TEST(MrcMultiPlane, SpraysOverBothPorts) {
  MrcRig rig(2);
  Endpoint x = make_mrc_endpoint(rig.a, 4u << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 4u << 20);
  fill_pattern(x.buf, 21);
  connect_planes(rig, x, y);
  ASSERT_EQ(x.qp->mrc()->num_planes(), 2);
  size_t not_as_built = 0;  // each plane's header cache: its port's addresses
  rig.tap = [&](int, PortId, const std::vector<uint8_t>& b) { not_as_built += data_frame_as_built(b) ? 0 : 1; };
  ASSERT_EQ(post_write(x, 1, 0, 4u << 20, y.addr(), y.mr->rkey), 0);
  rig.run_until([&] { return !drain(x.scq).empty(); }, TimeNs::from_ms(20));
  EXPECT_TRUE(std::equal(x.buf.begin(), x.buf.end(), y.buf.begin()));
  std::array<size_t, 2> per_port{};
  for (const LinkPkt& k : rig.log) {
    if (k.from == 0 && k.data) {
      ++per_port[k.port];
      EXPECT_EQ(k.ev % 2, k.port) << "EV " << k.ev << " of plane " << k.ev % 2 << " on port " << k.port;
    }
    if (k.from == 1 && k.op == wire::MrcOp::kSack) {
      EXPECT_EQ(k.port, 0u);
    }
  }
  EXPECT_EQ(per_port[0] + per_port[1], 1024u);
  EXPECT_EQ(not_as_built, 0u);
  EXPECT_GT(per_port[0], 400u);
  EXPECT_GT(per_port[1], 400u);
  EXPECT_EQ(mctr(x).tx_retransmits, 0u);
  EXPECT_EQ(rig.a.counters(0).dropped() + rig.a.counters(1).dropped() + rig.b.counters(0).dropped() +
                rig.b.counters(1).dropped(),
            0u);
}

// 1b. A QP limited by its SACK window (mpr 16 PSNs past the oldest
//    unacknowledged, against a BDP of ~30-120 packets at 5 us each way) over
//    2, 4 and 8 planes, the ports taking bursts of up to 32 frames: each
//    SACK that moves the oldest PSN opens a few slots at once, and the port
//    asked first (the rig, like sf-sim and a poll loop, asks in port order)
//    kept the QP's turn for all of them: before the plane share, every one
//    of the 512 packets left on plane 0. Now each plane gets its turn:
//    every plane within 2 packets of the mean.
TEST(MrcMultiPlane, WindowLimitedSplitIsEven) {
  for (int planes : {2, 4, 8}) {
    MrcRig rig(planes, BitRate::gbps(100), TimeNs::from_us(5));
    rig.burst = 32;
    Endpoint x = make_mrc_endpoint(rig.a, 2u << 20);
    Endpoint y = make_mrc_endpoint(rig.b, 2u << 20);
    fill_pattern(x.buf, 24);
    v::MrcQpAttr a;
    a.mpr = 16;
    connect_planes(rig, x, y, a, v::kMrcMpr, static_cast<uint8_t>(planes));
    ASSERT_EQ(x.qp->mrc()->num_planes(), planes);
    ASSERT_EQ(post_write(x, 1, 0, 2u << 20, y.addr(), y.mr->rkey), 0);
    ASSERT_TRUE(rig.run_until([&] { return !drain(x.scq).empty(); }, TimeNs::from_ms(20)));
    EXPECT_TRUE(std::equal(x.buf.begin(), x.buf.end(), y.buf.begin()));
    std::vector<size_t> per_port(static_cast<size_t>(planes), 0);
    for (const LinkPkt& k : rig.log) {
      if (k.from == 0 && k.data && !k.rtx) ++per_port[k.port];
    }
    const double mean = 512.0 / planes;
    std::string split;
    for (size_t n : per_port) split += std::to_string(n) + " ";
    std::printf("%d planes: %s\n", planes, split.c_str());
    for (size_t n : per_port) {
      EXPECT_LE(std::abs(static_cast<double>(n) - mean), 2.0) << planes << " planes: " << split;
    }
    EXPECT_EQ(mctr(x).tx_retransmits, 0u);
  }
}

// 2. Plane 1 goes down mid-transfer (the link and both hosts' port 2): the
//    QPs stop using it at once and tell each other; what was in flight on it
//    is retransmitted on plane 0; the transfer completes byte-exact, no QP
//    error, every later packet on port 1.
TEST(MrcMultiPlane, PlaneDownMidTransfer) {
  MrcRig rig(2);
  Endpoint x = make_mrc_endpoint(rig.a, 4u << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 4u << 20);
  fill_pattern(x.buf, 22);
  connect_planes(rig, x, y);
  ASSERT_EQ(post_write(x, 1, 0, 4u << 20, y.addr(), y.mr->rkey), 0);
  size_t sent = 0;
  rig.filter = [&](const LinkPkt& k) {
    if (k.from == 0 && k.data) ++sent;
    return Fate::kDeliver;
  };
  ASSERT_TRUE(rig.run_until([&] { return sent >= 300; }, TimeNs::from_ms(5)));
  const size_t log_at = rig.log.size();
  rig.link_up[1] = false;
  rig.a.set_port_up(1, false);
  rig.b.set_port_up(1, false);
  EXPECT_FALSE(x.qp->sends_on(2));
  EXPECT_TRUE(x.qp->sends_on(1));
  std::vector<v::Wc> wc;
  rig.run_until(
      [&] {
        auto w = drain(x.scq);
        wc.insert(wc.end(), w.begin(), w.end());
        return !wc.empty();
      },
      rig.now + TimeNs::from_ms(20));
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kSuccess);
  EXPECT_TRUE(std::equal(x.buf.begin(), x.buf.end(), y.buf.begin()));
  EXPECT_EQ(x.qp->state(), v::QpState::kRts);
  EXPECT_EQ(y.qp->state(), v::QpState::kRts);
  size_t later = 0;
  for (size_t i = log_at; i < rig.log.size(); ++i) {
    const LinkPkt& k = rig.log[i];
    if (k.from != 0 || !k.data) continue;
    EXPECT_EQ(k.port, 0u);
    EXPECT_EQ(k.ev % 2, 0u);
    ++later;
  }
  EXPECT_GT(later, 600u);
  // What was on the plane-1 link when it went down was lost and resent on plane 0.
  EXPECT_GT(mctr(x).tx_retransmits, 0u);
  // Each side learnt the other's plane 1 is down (port-status update).
  EXPECT_GE(mctr(x).rx[static_cast<int>(mrc::MrcRx::kPortStatus)], 1u);
  EXPECT_GE(mctr(y).rx[static_cast<int>(mrc::MrcRx::kPortStatus)], 1u);
  EXPECT_FALSE(x.qp->mrc()->ev_set()->plane_up(1));
  EXPECT_FALSE(y.qp->mrc()->ev_set()->plane_up(1));
  EXPECT_GE(mctr(x).tx_port_status, 1u);
}

// 3. A port-status update alone (the peer's plane down, ours up): the
//    sender stops using that plane as soon as the ERTH arrives.
TEST(MrcMultiPlane, PeerPortStatusStopsThePlane) {
  MrcRig rig(2);
  Endpoint x = make_mrc_endpoint(rig.a, 1u << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 1u << 20);
  fill_pattern(x.buf, 23);
  connect_planes(rig, x, y);
  // b's port 2 goes down; the link stays up for a's frames until b's ERTH
  // (sent on b's plane 0) reaches a.
  rig.b.set_port_up(1, false);
  rig.run_for(TimeNs::from_us(5));
  EXPECT_FALSE(x.qp->mrc()->ev_set()->plane_up(1));
  EXPECT_FALSE(x.qp->sends_on(2));
  const size_t log_at = rig.log.size();
  ASSERT_EQ(post_write(x, 1, 0, 1u << 20, y.addr(), y.mr->rkey), 0);
  rig.run_until([&] { return !drain(x.scq).empty(); }, rig.now + TimeNs::from_ms(10));
  EXPECT_TRUE(std::equal(x.buf.begin(), x.buf.end(), y.buf.begin()));
  for (size_t i = log_at; i < rig.log.size(); ++i) {
    if (rig.log[i].from == 0 && rig.log[i].data) {
      EXPECT_EQ(rig.log[i].port, 0u);
    }
  }
  // The ERTH was answered (EETH): a stops repeating it.
  EXPECT_EQ(mctr(y).tx_port_status, 1u);
}

// 4. The simulator's link event (Node::set_port_link, how sf-sim tells a
//    node its link went down) is a port-status change: the plane stops and
//    the peer is told. Before, NicNode ignored it: in sf-sim a host port
//    down left its MRC QPs spraying into the dead link (scenario e,
//    docs/scenarios.md).
TEST(MrcMultiPlane, LinkEventIsPortStatus) {
  MrcRig rig(2);
  Endpoint x = make_mrc_endpoint(rig.a, 1u << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 1u << 20);
  fill_pattern(x.buf, 29);
  connect_planes(rig, x, y);
  static_cast<Node&>(rig.b).set_port_link(1, false, rig.now);
  EXPECT_FALSE(rig.b.port_up(1));
  rig.run_for(TimeNs::from_us(5));
  EXPECT_FALSE(x.qp->mrc()->ev_set()->plane_up(1));
  ASSERT_EQ(post_write(x, 1, 0, 1u << 20, y.addr(), y.mr->rkey), 0);
  rig.run_until([&] { return !drain(x.scq).empty(); }, rig.now + TimeNs::from_ms(10));
  EXPECT_TRUE(std::equal(x.buf.begin(), x.buf.end(), y.buf.begin()));
  EXPECT_EQ(mctr(y).tx_port_status, 1u);
  static_cast<Node&>(rig.b).set_port_link(1, true, rig.now);
  EXPECT_TRUE(rig.b.port_up(1));
}

// 6. A rate limit on a spraying QP (ibv_modify_qp_rate_limit) is the QP's
//    rate: each of its P ports keeps its own schedule and paces at R / P,
//    so every port runs at R / P and the QP at R (docs/mrc.md "Pacing a
//    spraying QP"). 8 MiB at 40 Gb/s over 2 and 4 ports of 100 Gb/s, the
//    ports taking bursts of 32 (a port never sends ahead of its schedule
//    because another port's frame left); rates from the first to the last
//    data frame on each port, in wire bytes (what the pacer charges). Then
//    plane 1 of 2 going down: the other port takes the whole rate.
TEST(MrcMultiPlane, RateLimitPacedPerPort) {
  constexpr double kRate = 40e9;
  for (int planes : {2, 4}) {
    MrcRig rig(planes);
    rig.burst = 32;
    Endpoint x = make_mrc_endpoint(rig.a, 8u << 20);
    Endpoint y = make_mrc_endpoint(rig.b, 8u << 20);
    fill_pattern(x.buf, 31);
    connect_planes(rig, x, y, {}, 0, static_cast<uint8_t>(planes));
    v::QpRateLimitAttr rl;
    rl.rate_limit = static_cast<uint32_t>(kRate / 1000);
    ASSERT_EQ(v::modify_qp_rate_limit(x.qp, &rl), 0);
    struct PortTx {
      TimeNs first{-1}, last{0};
      uint64_t wire = 0, last_wire = 0;
    };
    std::vector<PortTx> tx(static_cast<size_t>(planes));
    rig.tap = [&](int from, PortId port, const std::vector<uint8_t>& b) {
      if (from != 0 || !describe(b, from, port).data) return;
      PortTx& t = tx[port];
      if (t.first.ns() < 0) t.first = rig.now;
      t.last = rig.now;
      t.last_wire = wire_bytes(static_cast<uint32_t>(b.size()));
      t.wire += t.last_wire;
    };
    ASSERT_EQ(post_write(x, 1, 0, 8u << 20, y.addr(), y.mr->rkey), 0);
    ASSERT_TRUE(rig.run_until([&] { return !drain(x.scq).empty(); }, TimeNs::from_ms(50)));
    EXPECT_TRUE(std::equal(x.buf.begin(), x.buf.end(), y.buf.begin()));
    double total = 0;
    std::string rates;
    for (const PortTx& t : tx) {
      // Bytes sent before the last frame over the time to it: the rate between departures.
      const double gbps = static_cast<double>(t.wire - t.last_wire) * 8 / static_cast<double>((t.last - t.first).ns());
      total += gbps;
      rates += std::to_string(gbps) + " ";
      EXPECT_NEAR(gbps, kRate / 1e9 / planes, 0.02 * kRate / 1e9 / planes) << planes << " planes: " << rates;
    }
    std::printf("%d planes at %.0f Gb/s: per port %s= %.2f Gb/s\n", planes, kRate / 1e9, rates.c_str(), total);
    EXPECT_NEAR(total, kRate / 1e9, 0.02 * kRate / 1e9);
    EXPECT_EQ(mctr(x).tx_retransmits, 0u);
  }
  // Plane 1 down before the transfer: port 1 alone carries the QP's 40 Gb/s.
  MrcRig rig(2);
  Endpoint x = make_mrc_endpoint(rig.a, 4u << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 4u << 20);
  connect_planes(rig, x, y);
  v::QpRateLimitAttr rl;
  rl.rate_limit = static_cast<uint32_t>(kRate / 1000);
  ASSERT_EQ(v::modify_qp_rate_limit(x.qp, &rl), 0);
  rig.link_up[1] = false;
  rig.a.set_port_up(1, false);
  rig.b.set_port_up(1, false);
  TimeNs first{-1}, last{0};
  uint64_t wire = 0, last_wire = 0;
  rig.tap = [&](int from, PortId port, const std::vector<uint8_t>& b) {
    if (from != 0 || !describe(b, from, port).data) return;
    EXPECT_EQ(port, 0u);
    if (first.ns() < 0) first = rig.now;
    last = rig.now;
    last_wire = wire_bytes(static_cast<uint32_t>(b.size()));
    wire += last_wire;
  };
  ASSERT_EQ(post_write(x, 1, 0, 4u << 20, y.addr(), y.mr->rkey), 0);
  ASSERT_TRUE(rig.run_until([&] { return !drain(x.scq).empty(); }, TimeNs::from_ms(50)));
  const double gbps = static_cast<double>(wire - last_wire) * 8 / static_cast<double>((last - first).ns());
  std::printf("plane 1 down: port 1 at %.2f Gb/s\n", gbps);
  EXPECT_NEAR(gbps, kRate / 1e9, 0.02 * kRate / 1e9);
}

}  // namespace
}  // namespace sf::nic::test
