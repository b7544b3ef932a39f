// NSCC under virtual time (UET; shared/reference/endpoint.md 3.7, 4.5): the
// four quadrants of (ECN, delay vs target), batched increases once per base
// RTT, at most one decrease per base RTT, the receiver's rcv_cwnd_pen
// back-pressure, quick adapt on trims. Expected values from the equations in
// nscc.h / docs/cc.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "nic/cc/nscc.h"

namespace sf::nic {
namespace {

constexpr BitRate kLine = BitRate::gbps(100);
constexpr double kBdp = 125'000;  // 100 G x 10 us
constexpr double kMtu = 4096;
TimeNs us(int64_t v) { return TimeNs::from_us(v); }

AckEvent ack(TimeNs rtt, bool ecn, uint64_t bytes = 4096) {
  AckEvent a;
  a.acked_bytes = bytes;
  a.rtt = rtt;
  a.ecn_echo = ecn;
  a.inflight_bytes = 100'000;
  return a;
}

// 1. Bad parameters refused, naming the field.
TEST(NsccParams, BadParametersNamed) {
  EXPECT_FALSE(NsccParams{}.validate().has_value());
  auto bad = [](auto edit) {
    NsccParams p;
    edit(p);
    return std::string(p.validate().value_or("(accepted)"));
  };
  EXPECT_EQ(bad([](NsccParams& p) { p.target_qdelay = TimeNs(0); }).rfind("target_qdelay:", 0), 0u);
  EXPECT_EQ(bad([](NsccParams& p) { p.base_rtt = TimeNs(-1); }).rfind("base_rtt:", 0), 0u);
  EXPECT_EQ(bad([](NsccParams& p) { p.initial_cwnd_bdp = 2.0; }).rfind("initial_cwnd_bdp:", 0), 0u);
  EXPECT_EQ(bad([](NsccParams& p) { p.gamma = 0; }).rfind("gamma:", 0), 0u);
  EXPECT_EQ(bad([](NsccParams& p) { p.max_md = 1; }).rfind("max_md:", 0), 0u);
  EXPECT_EQ(bad([](NsccParams& p) { p.qa_threshold_targets = 0.5; }).rfind("qa_threshold_targets:", 0), 0u);
  EXPECT_EQ(bad([](NsccParams& p) { p.delay_ewma = 0; }).rfind("delay_ewma:", 0), 0u);
}

// 2. Starts at one BDP; window-limited (rate = line).
TEST(Nscc, Initial) {
  const Nscc n(NsccParams{}, kLine);
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp);
  EXPECT_EQ(n.rate(), kLine);
  EXPECT_EQ(n.window_bytes(), 125'000u);
}

// 3. No ECN, delay < target: proportional increase, pi_bdp x BDP x (t - d) / t
// per window of ACKs, applied once per base RTT.
TEST(Nscc, ProportionalIncrease) {
  Nscc n(NsccParams{}, kLine);
  for (int i = 1; i <= 10; ++i) {
    n.on_ack(ack(us(11), false), us(i));  // delay 1 us, target 5 us
    EXPECT_EQ(n.last_quadrant(), NsccQuadrant::kProportionalIncrease);
  }
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp);  // batched: nothing yet
  n.on_ack(ack(us(11), false), us(11));  // one base RTT after the first ACK
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp + 11 * (0.25 * kBdp * kMtu * (4.0 / 5.0)) / kBdp);
  EXPECT_EQ(n.counters().adjustments, 1u);
}

// 4. No ECN, delay >= target: fair increase, fi_mtus packets per window of ACKs.
TEST(Nscc, FairIncrease) {
  Nscc n(NsccParams{}, kLine);
  for (int i = 1; i <= 11; ++i) n.on_ack(ack(us(16), false), us(i));  // delay 6 us
  EXPECT_EQ(n.last_quadrant(), NsccQuadrant::kFairIncrease);
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp + 11 * kMtu * kMtu / kBdp);
}

// 5. ECN, delay >= target: multiplicative decrease at once,
// cwnd x max(1 - gamma (d - t) / d, 1 - max_md), at most once per RTT.
TEST(Nscc, MultiplicativeDecreaseOncePerRtt) {
  Nscc n(NsccParams{}, kLine);
  n.on_ack(ack(us(20), true), us(1));  // delay 10 us, RTT 20 us
  EXPECT_EQ(n.last_quadrant(), NsccQuadrant::kMultiplicativeDecrease);
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp * (1 - 0.8 * 5.0 / 10.0));
  n.on_ack(ack(us(20), true), us(20));  // 19 us later: the queue seen is still the old one
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp * 0.6);
  EXPECT_EQ(n.counters().decreases_held, 1u);
  n.on_ack(ack(us(20), true), us(21));  // one RTT later
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp * 0.6 * 0.6);
  // A larger delay (18 us, below the quick-adapt threshold) cuts by max_md at most.
  n.on_ack(ack(us(28), true), us(50));
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp * 0.36 * 0.5);
}

// 6. ECN, delay < target: no window change (the EV is the problem, not the window).
TEST(Nscc, EcnWithLowDelayKeepsWindow) {
  Nscc n(NsccParams{}, kLine);
  for (int i = 1; i <= 30; ++i) n.on_ack(ack(us(12), true), us(i));
  EXPECT_EQ(n.last_quadrant(), NsccQuadrant::kNoChange);
  EXPECT_EQ(n.counters().no_change, 30u);
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp);
}

// 7. Receiver back-pressure: each ACK removes acked x rcv_cwnd_pen / 128.
TEST(Nscc, ReceiverPenalty) {
  Nscc n(NsccParams{}, kLine);
  AckEvent a = ack(us(12), true);
  a.rcv_cwnd_pen = 64;
  n.on_ack(a, us(1));
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp - 2048);
  a.rcv_cwnd_pen = 127;
  n.on_ack(a, us(2));
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp - 2048 - (4096 * 127 >> 7));
  EXPECT_EQ(n.counters().penalties, 2u);
}

// 8. The window stays within [mtu, 1.5 BDP].
TEST(Nscc, WindowBounds) {
  Nscc n(NsccParams{}, kLine);
  for (int i = 1; i <= 2000; ++i) n.on_ack(ack(us(10), false), us(i));
  EXPECT_DOUBLE_EQ(n.cwnd(), 1.5 * kBdp);
  Nscc m(NsccParams{}, kLine);
  AckEvent a = ack(us(10), true, 1'000'000);  // ECN + low delay: no increase on top
  a.rcv_cwnd_pen = 127;
  m.on_ack(a, us(1));
  EXPECT_DOUBLE_EQ(m.cwnd(), kMtu);
}

// 9. Quick adapt: a trim arms it; at the end of the QA period (base RTT +
// target = 15 us from the first ACK) the window drops to the bytes acked in
// the period; the ACKs of the packets in flight at that moment are ignored,
// then the quadrants apply again.
TEST(Nscc, QuickAdaptOnTrim) {
  Nscc n(NsccParams{}, kLine);
  for (int i = 1; i <= 10; ++i) n.on_ack(ack(us(12), true), us(i));  // no change, 40960 B acked
  AckEvent trim;
  trim.kind = AckKind::kNackTrim;
  n.on_ack(trim, us(12));
  EXPECT_EQ(n.counters().trims, 1u);
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp);
  AckEvent a = ack(us(12), true);
  a.inflight_bytes = 20'000;
  n.on_ack(a, us(16));
  EXPECT_EQ(n.counters().quick_adapts, 1u);
  EXPECT_DOUBLE_EQ(n.cwnd(), 11 * kMtu);
  // 20000 B in flight (this ACK's 4096 included): ignored, even with ECN and high delay.
  for (int i = 0; i < 4; ++i) n.on_ack(ack(us(40), true), us(17 + i));
  EXPECT_EQ(n.last_quadrant(), NsccQuadrant::kNone);
  EXPECT_EQ(n.counters().ignored, 5u);
  EXPECT_DOUBLE_EQ(n.cwnd(), 11 * kMtu);
  n.on_ack(ack(us(40), true), us(25));
  EXPECT_EQ(n.last_quadrant(), NsccQuadrant::kMultiplicativeDecrease);
  EXPECT_LT(n.cwnd(), 11 * kMtu);
}

// 10. A delay above qa_threshold_targets x target arms quick adapt too.
TEST(Nscc, QuickAdaptOnHugeDelay) {
  Nscc n(NsccParams{}, kLine);
  n.on_ack(ack(us(12), false), us(1));
  n.on_ack(ack(us(31), false), us(2));  // delay 21 us > 4 x 5 us
  n.on_ack(ack(us(12), false), us(16));
  EXPECT_EQ(n.counters().quick_adapts, 1u);
  EXPECT_DOUBLE_EQ(n.cwnd(), 3 * kMtu);
}

// 10b. An RTO does not arm quick adapt (htsim's UEC model: a timeout is the
//    sender's retransmission and path (EV) business; congestion reaches NSCC
//    by trims, delay and ECN). Before, with MRC, every RTO of a QP whose
//    packets died on a blackholed spine (scenario d) re-armed it, and the
//    next period's few acknowledged bytes cut the window to one MTU.
TEST(Nscc, RtoDoesNotQuickAdapt) {
  Nscc n(NsccParams{}, kLine);
  n.on_ack(ack(us(12), true), us(1));
  n.on_rto(us(2));
  n.on_rto(us(3));
  EXPECT_EQ(n.counters().rtos, 2u);
  AckEvent a = ack(us(12), true);
  a.inflight_bytes = 4096;
  n.on_ack(a, us(16));  // a period later, one packet acknowledged in it
  n.on_ack(a, us(32));
  EXPECT_EQ(n.counters().quick_adapts, 0u);
  EXPECT_DOUBLE_EQ(n.cwnd(), kBdp);
}

// 11. A sample below base_rtt lowers it (delay = rtt - least RTT seen).
TEST(Nscc, BaseRttLearnsMinimum) {
  Nscc n(NsccParams{}, kLine);
  n.on_ack(ack(us(8), false), us(1));
  EXPECT_EQ(n.base_rtt(), us(8));
  n.on_ack(ack(us(13), true), us(2));  // delay 5 us = target: MD quadrant
  EXPECT_EQ(n.last_quadrant(), NsccQuadrant::kMultiplicativeDecrease);
}

// 12. Closed loop: 4 flows starting at one BDP each (4x overload) on one
// 100 G bottleneck, 10 us base RTT; the switch marks ECN when the queue is
// above one target's worth (5 us = 62.5 KB). Each round trip every flow gets
// its window back as 4 KiB ACKs spread over the round, each with the delay
// and mark of the queue then. Expect: quick adapt takes the initial overload
// out, then the queueing delay tracks the target (mean within 50 %), the
// link stays busy, and the windows end within 1.5x of each other.
TEST(Nscc, ClosedLoopTracksTarget) {
  constexpr int kFlows = 4;
  const double c = 12.5;  // bytes per ns
  std::vector<Nscc> flows;
  for (int i = 0; i < kFlows; ++i) flows.emplace_back(NsccParams{}, kLine);
  double now = 0, delay_sum = 0;
  int late = 0, busy = 0;
  for (int round = 0; round < 600; ++round) {
    double total = 0;
    for (const Nscc& f : flows) total += f.cwnd();
    const double queue = std::max(0.0, total - kBdp);
    const double qdelay = queue / c;
    const double rtt = 10'000 + qdelay;
    for (Nscc& f : flows) {
      const int acks = static_cast<int>(f.cwnd() / kMtu) + 1;
      for (int k = 0; k < acks; ++k) {
        AckEvent a = ack(TimeNs(static_cast<int64_t>(rtt)), queue > 62'500);
        a.inflight_bytes = static_cast<uint64_t>(f.cwnd());
        f.on_ack(a, TimeNs(static_cast<int64_t>(now + rtt * k / acks)));
      }
    }
    now += rtt;
    if (round >= 400) {
      delay_sum += qdelay;
      ++late;
      busy += total >= kBdp ? 1 : 0;
    }
  }
  EXPECT_GT(flows[0].counters().quick_adapts + flows[1].counters().quick_adapts, 0u);
  EXPECT_NEAR(delay_sum / late, 5'000.0, 2'500.0);
  EXPECT_GE(busy, late * 9 / 10);
  double lo = 1e18, hi = 0;
  for (const Nscc& f : flows) {
    lo = std::min(lo, f.cwnd());
    hi = std::max(hi, f.cwnd());
  }
  EXPECT_LT(hi / lo, 1.5) << lo << " .. " << hi;
}

}  // namespace
}  // namespace sf::nic
