// NSCC in the MRC QP (docs/cc.md "MRC integration") between two NicNodes
// over the test link in virtual time (mrc_qp_harness.h): RTT samples from
// the SACK's echoed timestamp less the responder's service time, the window
// of bytes in flight following NSCC's quadrants (growth on a clean path, a
// cut on ECN with delay, no cut on ECN without delay, quick adapt on trims),
// the refusals, and every byte delivered whatever the window does.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <utility>

#include "nic/app/sf_nic_report.h"
#include "nic/cc/congestion_control.h"
#include "tests/unit/nic/mrc_qp_harness.h"

namespace sf::nic::test {
namespace {

CcChoice nscc(std::optional<NsccParams> p = {}) {
  CcChoice c;
  c.algorithm = CcAlgorithm::kNscc;
  if (p) c.params = *p;
  return c;
}

const Nscc& nscc_of(const Endpoint& e) { return std::get<Nscc>(e.qp->congestion_control()); }

// Sends `bytes` as 64 KiB WRITEs from x to y; true when all completed.
bool send_all(MrcRig& rig, Endpoint& x, Endpoint& y, size_t bytes, TimeNs limit = TimeNs::from_ms(50)) {
  const size_t msg = 64 * 1024;
  size_t posted = 0;
  size_t done = 0;
  const TimeNs end = rig.now + limit;
  while (done < bytes / msg && rig.now < end) {
    while (posted < bytes / msg && posted - done < 32) {
      if (post_write(x, posted, posted * msg, msg, y.addr() + posted * msg, y.mr->rkey) != 0) return false;
      ++posted;
    }
    const auto w = wait_send(rig, x, 1, end - rig.now);
    for (const v::Wc& c : w) {
      if (c.status != v::WcStatus::kSuccess) return false;
    }
    done += w.size();
  }
  return done == bytes / msg;
}

// 1. A clean 100 Gb/s path, 1 us each way: the RTT samples are the path's
//    own (2 us of propagation + a frame's and a SACK's wire time), SACK
//    coalescing (8 packets) not counted in them; no ECN, delay ~0: NSCC
//    increases proportionally until the window reaches its cap (1.5 BDP of
//    the QP's base RTT); nothing cut, every byte there.
TEST(MrcNscc, CleanPathGrowsToTheCapWithThePathsRtt) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 4 << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 4 << 20);
  fill_pattern(x.buf, 3);
  v::MrcQpAttr a;
  a.sack_every_pkts = 8;
  connect_mrc(x, y, &a, v::kMrcSackCoalesce);
  ASSERT_TRUE(x.qp->set_congestion_control(nscc(), BitRate::gbps(100)));
  const Nscc& cc = nscc_of(x);
  const double bdp = 100e9 / 8 * 10e-6;  // MrcQpAttr's default base_rtt_ns, 10 us
  EXPECT_DOUBLE_EQ(cc.bdp_bytes(), bdp);
  EXPECT_EQ(x.qp->mrc()->effective_window(), static_cast<uint64_t>(bdp));  // initial_cwnd_bdp 1
  ASSERT_TRUE(send_all(rig, x, y, 4 << 20));
  expect_same(x, 0, y, 0, 4 << 20);
  const rc::QpCcStats& s = x.qp->cc_stats();
  EXPECT_GT(s.rtt_samples, 50u);
  EXPECT_GE(s.rtt_min, TimeNs::from_us(2));
  EXPECT_LT(s.rtt_max, TimeNs::from_us(4)) << "a SACK's wait at the responder counted as path delay";
  EXPECT_GT(cc.counters().proportional, 0u);
  EXPECT_EQ(cc.counters().decreases, 0u);
  EXPECT_EQ(x.qp->cc_window(), static_cast<uint64_t>(1.5 * bdp));
  EXPECT_EQ(x.qp->mrc()->effective_window(), x.qp->cc_window());
  EXPECT_EQ(mctr(x).tx_retransmits, 0u);
}

// 2. Every data packet CE-marked on a path whose RTT (20 us) is far above
//    the base RTT named in cc_params (2 us): the MD quadrant, at most once
//    per RTT; the window falls far below its start and the bytes in flight
//    follow it; the transfer completes byte-exact.
TEST(MrcNscc, EcnWithDelayCutsTheWindow) {
  MrcRig rig(1, BitRate::gbps(100), TimeNs::from_us(10));
  Endpoint x = make_mrc_endpoint(rig.a, 2 << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 2 << 20);
  fill_pattern(x.buf, 4);
  connect_mrc(x, y);
  NsccParams p;
  p.base_rtt = TimeNs::from_us(2);
  p.base_rtt_from_qp = false;
  p.qa_threshold_targets = 1000;  // MD only, no quick adapt
  ASSERT_TRUE(x.qp->set_congestion_control(nscc(p), BitRate::gbps(100)));
  const uint64_t start = x.qp->cc_window();
  uint64_t max_inflight = 0;
  rig.filter = [&](const LinkPkt& k) {
    if (k.from == 0) max_inflight = std::max<uint64_t>(max_inflight, x.qp->mrc()->bytes_in_flight());
    return k.data ? Fate::kCe : Fate::kDeliver;
  };
  ASSERT_TRUE(send_all(rig, x, y, 2 << 20));
  expect_same(x, 0, y, 0, 2 << 20);
  const Nscc& cc = nscc_of(x);
  EXPECT_GT(cc.counters().decreases, 3u);
  EXPECT_GT(cc.counters().decreases_held, 0u);  // once per RTT, not per SACK
  EXPECT_EQ(cc.counters().proportional + cc.counters().fair, 0u);
  EXPECT_LT(x.qp->cc_window(), start / 4);
  EXPECT_LE(max_inflight, start + 4096);
  EXPECT_EQ(mctr(x).tx_retransmits, 0u);
}

// 3. CE marks on a path without queueing delay (the RTT is the base RTT):
//    NSCC's fourth quadrant, no window change (the EV load balancer moves
//    off the marked EVs instead: they are skipped).
TEST(MrcNscc, EcnWithoutDelayLeavesTheWindowToTheLoadBalancer) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 2 << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 2 << 20);
  fill_pattern(x.buf, 5);
  connect_mrc(x, y);
  ASSERT_TRUE(x.qp->set_congestion_control(nscc(), BitRate::gbps(100)));
  const uint64_t start = x.qp->cc_window();
  rig.filter = [](const LinkPkt& k) { return k.data ? Fate::kCe : Fate::kDeliver; };
  ASSERT_TRUE(send_all(rig, x, y, 2 << 20));
  expect_same(x, 0, y, 0, 2 << 20);
  const Nscc& cc = nscc_of(x);
  EXPECT_GT(cc.counters().no_change, 50u);
  EXPECT_EQ(cc.counters().decreases, 0u);
  EXPECT_EQ(x.qp->cc_window(), start);
  const mrc::EvSet& evs = *x.qp->mrc()->ev_set();
  uint64_t skipped = 0;
  for (uint16_t i = 0; i < evs.size(); ++i) skipped += evs.counters(i).skipped;
  EXPECT_GT(skipped, 50u);
}

// 4. Trimmed packets (every 16th first transmission): each NACK reaches
//    NSCC as a trim, quick adapt cuts the window to what was delivered in
//    its period; the trimmed PSNs are retransmitted and every byte arrives.
TEST(MrcNscc, TrimsQuickAdapt) {
  MrcRig rig(1, BitRate::gbps(100), TimeNs::from_us(5));
  Endpoint x = make_mrc_endpoint(rig.a, 2 << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 2 << 20);
  fill_pattern(x.buf, 6);
  connect_mrc(x, y);
  ASSERT_TRUE(x.qp->set_congestion_control(nscc(), BitRate::gbps(100)));
  uint32_t n = 0;
  rig.filter = [&](const LinkPkt& k) { return k.data && !k.rtx && ++n % 16 == 0 ? Fate::kTrim : Fate::kDeliver; };
  ASSERT_TRUE(send_all(rig, x, y, 2 << 20));
  expect_same(x, 0, y, 0, 2 << 20);
  const Nscc& cc = nscc_of(x);
  EXPECT_EQ(cc.counters().trims, mctr(x).rtx_nack);
  EXPECT_GT(cc.counters().trims, 10u);
  EXPECT_GT(cc.counters().quick_adapts, 0u);
  EXPECT_EQ(mctr(x).timeouts, 0u);
}

// 6. Responder back-pressure, RQ: WRITE_WITH_IMMs into a responder with no
//    receive posted. Its SACKs carry rcv_cwnd_pen = rcv_pen_rq (64) while an
//    immediate waits; the sender's NSCC takes the penalty and its window
//    shrinks below the one of the same run with rcv_pen_rq 0 (which sends
//    none); once receives are posted every immediate completes and the
//    SACKs stop asking. Every byte arrives either way.
std::pair<uint64_t, uint64_t> imm_run(uint8_t pen_rq, uint64_t* pen_sacks, uint64_t* penalties) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 2 << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 2 << 20);
  fill_pattern(x.buf, 7);
  v::MrcQpAttr a;
  a.rcv_pen_rq = pen_rq;
  connect_mrc(x, y, &a, v::kMrcRcvPenalty);
  EXPECT_TRUE(x.qp->set_congestion_control(nscc(), BitRate::gbps(100)));
  const uint64_t start = x.qp->cc_window();
  constexpr int kMsgs = 16;
  constexpr uint32_t kLen = 64 * 1024;
  for (int i = 0; i < kMsgs; ++i) {
    EXPECT_EQ(post_write(x, i, i * kLen, kLen, y.addr() + i * kLen, y.mr->rkey, v::WrOpcode::kRdmaWriteWithImm,
                         static_cast<uint32_t>(i)),
              0);
  }
  const auto w = wait_send(rig, x, kMsgs, TimeNs::from_ms(20));
  EXPECT_EQ(w.size(), static_cast<size_t>(kMsgs));
  const uint64_t window = x.qp->cc_window();
  *pen_sacks = mctr(y).tx_rcv_pen_sacks;
  *penalties = nscc_of(x).counters().penalties;
  // Receives now: the held immediates complete in order, nothing more asks.
  for (int i = 0; i < kMsgs; ++i) EXPECT_EQ(post_recv(y, 100 + i, 0, 0), 0);
  rig.run_for(TimeNs::from_us(50));
  std::array<v::Wc, 32> wc{};
  const int n = v::poll_cq(y.rcq, static_cast<int>(wc.size()), wc.data());
  EXPECT_EQ(n, kMsgs);
  for (int i = 0; i < n; ++i) EXPECT_EQ(wc[i].imm_data, static_cast<uint32_t>(i));
  EXPECT_EQ(y.qp->mrc()->rcv_penalty(), 0);
  expect_same(x, 0, y, 0, size_t{kMsgs} * kLen);
  return {start, window};
}

TEST(MrcNscc, ResponderWithoutReceivesPushesBack) {
  uint64_t pen_sacks = 0, penalties = 0, off_sacks = 0, off_penalties = 0;
  const auto [start, window] = imm_run(64, &pen_sacks, &penalties);
  const auto [start_off, window_off] = imm_run(0, &off_sacks, &off_penalties);
  EXPECT_GT(pen_sacks, 10u);
  EXPECT_EQ(penalties, pen_sacks);  // every SACK that asked reached NSCC
  EXPECT_EQ(off_sacks, 0u);
  EXPECT_EQ(off_penalties, 0u);
  EXPECT_EQ(start, start_off);
  EXPECT_LT(window, window_off / 2);
}

// 7. Responder back-pressure, reorder window: mpr 16, from 50 %: the first
//    data packet is lost, the ones after it fill the reorder window; the
//    SACKs ask for more the wider the span past CACK (up to 127 at 16), the
//    sender's NSCC takes it; once the hole is repaired they stop.
TEST(MrcNscc, FullReorderWindowPushesBack) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 20);
  fill_pattern(x.buf, 8);
  v::MrcQpAttr a;
  a.mpr = 16;
  a.rcv_pen_ooo_pct = 50;
  connect_mrc(x, y, &a, v::kMrcMpr | v::kMrcRcvPenalty);
  ASSERT_TRUE(x.qp->set_congestion_control(nscc(), BitRate::gbps(100)));
  bool dropped = false;
  rig.filter = [&](const LinkPkt& k) {
    if (k.data && !dropped) {
      dropped = true;
      return Fate::kDrop;
    }
    return Fate::kDeliver;
  };
  ASSERT_TRUE(send_all(rig, x, y, 1 << 20));
  expect_same(x, 0, y, 0, 1 << 20);
  EXPECT_TRUE(dropped);
  EXPECT_GT(mctr(y).tx_rcv_pen_sacks, 0u);
  EXPECT_EQ(nscc_of(x).counters().penalties, mctr(y).tx_rcv_pen_sacks);
  EXPECT_EQ(y.qp->mrc()->rcv_penalty(), 0);
  // Nothing asks on a clean path.
  const uint64_t before = mctr(y).tx_rcv_pen_sacks;
  ASSERT_TRUE(send_all(rig, x, y, 1 << 20));
  EXPECT_EQ(mctr(y).tx_rcv_pen_sacks, before);
}

// 8. The knobs are checked: rcv_pen_rq above 127, rcv_pen_ooo_pct 0 or
//    above 100 are refused (EINVAL, the attribute named).
TEST(MrcNscc, BackPressureKnobsChecked) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 16);
  v::MrcQpAttr a;
  a.rcv_pen_rq = 128;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcRcvPenalty), EINVAL);
  EXPECT_NE(std::string(x.qp->mrc()->error()).find("rcv_pen_rq"), std::string::npos);
  a.rcv_pen_rq = 127;
  a.rcv_pen_ooo_pct = 0;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcRcvPenalty), EINVAL);
  EXPECT_NE(std::string(x.qp->mrc()->error()).find("rcv_pen_ooo_pct"), std::string::npos);
  a.rcv_pen_ooo_pct = 101;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcRcvPenalty), EINVAL);
  EXPECT_NE(std::string(x.qp->mrc()->error()).find("rcv_pen_ooo_pct"), std::string::npos);
  a.rcv_pen_ooo_pct = 100;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcRcvPenalty), 0);
}

// 9. A dead half of the fabric at one packet in flight (scenario d: a
//    blackholed spine behind half of the EVs, a QP whose window is down to
//    one packet): 4 KiB WRITEs one at a time, every odd EV dropping data
//    and probes.
//    A packet on a dead EV has no later packet to show a SACK hole: before,
//    only its RTO found it (100 us, doubling per expiry of the PSN) and its
//    retransmission went on another random EV, dead half the time (scenario
//    d's QP waited 1.0 -> 4.2 ms on five such in a row). Now the
//    reliability probe's answer (SACKs stopped for probe_interval 20 us)
//    shows the PSN missing, the reordering tolerance (15 us) makes it lost,
//    and it is resent on the plane's EV proven alive by the latest SACK.
TEST(MrcNscc, OnePacketInFlightFindsDeadPathsByProbe) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 20);
  fill_pattern(x.buf, 9);
  connect_mrc(x, y);
  ASSERT_TRUE(x.qp->set_congestion_control(nscc(), BitRate::gbps(100)));
  rig.filter = [](const LinkPkt& k) {
    const bool dead = k.from == 0 && (k.data || k.op == wire::MrcOp::kProbe) && k.ev % 2 == 1;
    return dead ? Fate::kDrop : Fate::kDeliver;
  };
  constexpr int kMsgs = 200;
  constexpr uint32_t kLen = 4096;
  const TimeNs start = rig.now;
  TimeNs worst{0};
  for (int i = 0; i < kMsgs; ++i) {
    const TimeNs t0 = rig.now;
    ASSERT_EQ(post_write(x, i, i * kLen, kLen, y.addr() + i * kLen, y.mr->rkey), 0);
    const auto w = wait_send(rig, x, 1, TimeNs::from_ms(10));
    ASSERT_EQ(w.size(), 1u) << "message " << i;
    ASSERT_EQ(w[0].status, v::WcStatus::kSuccess);
    worst = std::max(worst, rig.now - t0);
  }
  const TimeNs took = rig.now - start;
  const mrc::MrcCounters& c = mctr(x);
  std::printf("took %.1f us, worst message %.1f us, timeouts %llu, probe holes %llu, rtx on alive EV %llu, "
              "retransmits %llu\n",
              took.ns() / 1e3, worst.ns() / 1e3, static_cast<unsigned long long>(c.timeouts),
              static_cast<unsigned long long>(c.probe_holes), static_cast<unsigned long long>(c.rtx_alive_ev),
              static_cast<unsigned long long>(c.tx_retransmits));
  expect_same(x, 0, y, 0, size_t{kMsgs} * kLen);
  EXPECT_GT(c.probe_holes, 10u);
  EXPECT_GT(c.rtx_alive_ev, 10u);
  // sf-nic's report carries both (summed over the host's MRC QPs).
  const nlohmann::json m = app::host_json(rig.a, 0)["mrc"];
  EXPECT_EQ(m["probe_holes"], c.probe_holes);
  EXPECT_EQ(m["rtx_alive_ev"], c.rtx_alive_ev);
  EXPECT_LE(c.timeouts, c.tx_retransmits / 10);  // the probe, not the RTO, finds nearly every loss
  EXPECT_LT(worst, TimeNs::from_us(100));        // no message waits an RTO
  EXPECT_LT(took, TimeNs::from_ms(4));
}

// 5. What runs where: an MRC QP takes nscc or none (the other ACK-driven
//    ones and DCQCN are refused and leave no CC); an RC QP refuses nscc.
TEST(MrcNscc, Refusals) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 16);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 16);
  connect_mrc(x, y);
  for (CcAlgorithm alg : {CcAlgorithm::kDcqcn, CcAlgorithm::kSwift, CcAlgorithm::kBbr, CcAlgorithm::kHpcc}) {
    CcChoice c;
    c.algorithm = alg;
    EXPECT_FALSE(x.qp->set_congestion_control(c, BitRate::gbps(100))) << to_string(alg);
    EXPECT_FALSE(x.qp->cc_active());
    EXPECT_NE(rc::Qp::cc_refusal(c, true), nullptr);
  }
  EXPECT_EQ(rc::Qp::cc_refusal(nscc(), true), nullptr);
  EXPECT_NE(rc::Qp::cc_refusal(nscc(), false), nullptr);
  EXPECT_TRUE(x.qp->set_congestion_control(CcChoice{}, BitRate::gbps(100)));
  EXPECT_EQ(x.qp->mrc()->effective_window(), x.qp->mrc()->window_bytes());  // none: the fixed window
}

}  // namespace
}  // namespace sf::nic::test
