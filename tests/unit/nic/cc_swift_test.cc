// Swift under virtual time against the equations of shared/reference/cc.md
// 3.2-3.3 (Kumar et al., SIGCOMM 2020): target delay with per-hop and flow
// scaling, AI below target, MD at most once per RTT bounded by max_mdf,
// pacing below one packet, fabric and endpoint windows. Expected values are
// computed here from those equations, never pasted from a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "nic/cc/congestion_control.h"
#include "nic/cc/swift.h"

namespace sf::nic {
namespace {

constexpr BitRate kLine = BitRate::gbps(100);
constexpr uint32_t kMtu = 4096;
TimeNs us(int64_t v) { return TimeNs::from_us(v); }

SwiftParams params(double initial_cwnd) {
  SwiftParams p;
  p.initial_cwnd = initial_cwnd;
  return p;
}

AckEvent ack(double pkts, TimeNs rtt, TimeNs remote = TimeNs(0), uint8_t hops = 0) {
  AckEvent a;
  a.acked_bytes = static_cast<uint64_t>(pkts * kMtu);
  a.rtt = rtt;
  a.remote_delay = remote;
  a.hops = hops;
  return a;
}

// 1. Every bad parameter is refused with a message naming it.
TEST(SwiftParams, BadParametersNamed) {
  EXPECT_FALSE(SwiftParams{}.validate().has_value());
  auto bad = [](auto edit) {
    SwiftParams p;
    edit(p);
    return std::string(p.validate().value_or("(accepted)"));
  };
  EXPECT_EQ(bad([](SwiftParams& p) { p.beta = 0; }).rfind("beta:", 0), 0u);
  EXPECT_EQ(bad([](SwiftParams& p) { p.max_mdf = 1.0; }).rfind("max_mdf:", 0), 0u);
  EXPECT_EQ(bad([](SwiftParams& p) { p.min_cwnd = 0; }).rfind("min_cwnd:", 0), 0u);
  EXPECT_EQ(bad([](SwiftParams& p) { p.max_cwnd = 0.001; }).rfind("max_cwnd:", 0), 0u);
  EXPECT_EQ(bad([](SwiftParams& p) { p.fs_max_cwnd = 0.05; }).rfind("fs_max_cwnd:", 0), 0u);
  EXPECT_EQ(bad([](SwiftParams& p) { p.base_target = TimeNs(0); }).rfind("base_target:", 0), 0u);
  EXPECT_EQ(bad([](SwiftParams& p) { p.mtu_bytes = 0; }).rfind("mtu_bytes:", 0), 0u);
  EXPECT_EQ(bad([](SwiftParams& p) { p.ai = -1; }).rfind("ai:", 0), 0u);
  EXPECT_EQ(bad([](SwiftParams& p) { p.rtt_ewma_old = 1; }).rfind("rtt_ewma_old:", 0), 0u);
}

// 2. Target = base + hops * h + clamp(alpha/sqrt(cwnd) + beta, 0, fs_range):
// fs_range at fs_min_cwnd, 0 at fs_max_cwnd, the formula in between.
TEST(Swift, TargetDelayScaling) {
  const Swift s(SwiftParams{}, kLine);
  const SwiftParams p;
  EXPECT_EQ(s.fabric_target(p.fs_max_cwnd, 0), us(25));
  EXPECT_EQ(s.fabric_target(p.fs_max_cwnd, 3), us(28));
  EXPECT_NEAR(static_cast<double>(s.fabric_target(p.fs_min_cwnd, 0).ns()), 125'000.0, 1.0);
  EXPECT_EQ(s.fabric_target(0.01, 0), us(125));  // clamped at fs_range
  const double alpha = 100'000.0 / (1 / std::sqrt(0.1) - 1 / std::sqrt(256.0));
  const double beta = -alpha / std::sqrt(256.0);
  EXPECT_NEAR(static_cast<double>(s.fabric_target(16, 2).ns()), 27'000.0 + alpha / 4 + beta, 1.0);
}

// 3. The initial window is one BDP of line x base_target (100 G x 25 us = 312.5 KB
// = 76.3 packets), clamped to max_cwnd.
TEST(Swift, InitialWindowIsBdp) {
  const Swift s(params(0), kLine);
  EXPECT_NEAR(s.fcwnd(), 100e9 / 8 * 25e-6 / kMtu, 1e-9);
  EXPECT_EQ(s.window_bytes(), static_cast<uint64_t>(s.cwnd() * kMtu));
  EXPECT_EQ(s.rate(), kLine);  // window-limited, no pacing
  const Swift big(params(0), BitRate::gbps(800));
  EXPECT_DOUBLE_EQ(big.fcwnd(), 256);
}

// 4. Below target: cwnd += ai * acked / cwnd per ACK; one window of ACKs adds ~ai.
TEST(Swift, AdditiveIncreaseBelowTarget) {
  Swift s(params(20), kLine);
  s.on_ack(ack(1, us(10)), us(10));
  EXPECT_DOUBLE_EQ(s.fcwnd(), 20 + 1.0 / 20);
  double w = s.fcwnd();
  for (int i = 0; i < 20; ++i) {
    s.on_ack(ack(1, us(10)), us(11 + i));
    w += 1.0 / w;
  }
  EXPECT_DOUBLE_EQ(s.fcwnd(), w);
  EXPECT_NEAR(s.fcwnd(), 21.05, 0.05);
  EXPECT_EQ(s.counters().fabric_decreases, 0u);
}

// 5. Below one packet the increase is ai * acked (not divided by cwnd).
TEST(Swift, AdditiveIncreaseBelowOnePacket) {
  Swift s(params(0.5), kLine);
  s.on_ack(ack(0.25, us(10)), us(10));
  EXPECT_DOUBLE_EQ(s.fcwnd(), 0.75);
}

// 6. Above target: cwnd *= max(1 - beta (d - t) / d, 1 - max_mdf), then no
// second cut until an RTT has passed since the first.
TEST(Swift, MultiplicativeDecreaseOncePerRtt) {
  Swift s(params(100), kLine);
  const double t = static_cast<double>(s.fabric_target(100, 0).ns());
  const double d = 40'000;  // 40 us fabric delay
  ASSERT_GT(d, t);
  s.on_ack(ack(1, us(40)), us(100));
  const double w1 = 100 * (1 - 0.8 * (d - t) / d);
  EXPECT_DOUBLE_EQ(s.fcwnd(), w1);
  // Within the RTT (40 us) of the cut: held.
  s.on_ack(ack(1, us(40)), us(139));
  EXPECT_DOUBLE_EQ(s.fcwnd(), w1);
  EXPECT_EQ(s.counters().decreases_held, 1u);
  // One RTT later: the next cut, with the target of the new window.
  s.on_ack(ack(1, us(40)), us(140));
  const double t2 = static_cast<double>(s.fabric_target(w1, 0).ns());
  EXPECT_DOUBLE_EQ(s.fcwnd(), w1 * (1 - 0.8 * (d - t2) / d));
  EXPECT_EQ(s.counters().fabric_decreases, 2u);
}

// 7. A huge delay cuts by exactly max_mdf, never more.
TEST(Swift, DecreaseBoundedByMaxMdf) {
  Swift s(params(100), kLine);
  s.on_ack(ack(1, TimeNs::from_ms(10)), us(1));
  EXPECT_DOUBLE_EQ(s.fcwnd(), 50);
}

// 8. The fabric delay excludes the responder's turnaround: an RTT of 40 us
// with 30 us spent in the remote endpoint is 10 us of fabric (below target).
TEST(Swift, FabricDelayExcludesEndpoint) {
  Swift s(params(10), kLine);
  s.on_ack(ack(1, us(40), us(30)), us(1));
  EXPECT_DOUBLE_EQ(s.fcwnd(), 10.1);
  EXPECT_EQ(s.counters().fabric_decreases, 0u);
  // ... but the endpoint delay (30 us) is above the endpoint target (10 us):
  EXPECT_DOUBLE_EQ(s.ecwnd(), 10 * std::max(1 - 0.8 * (30.0 - 10.0) / 30.0, 0.5));
  EXPECT_DOUBLE_EQ(s.cwnd(), s.ecwnd());  // the min of both applies
  EXPECT_EQ(s.window_bytes(), static_cast<uint64_t>(s.ecwnd() * kMtu));
}

// 9. Hops raise the target: at fs_max_cwnd (flow term 0) a 26 us fabric
// delay is above the 0-hop target (25 us) but below the 3-hop one (28 us).
TEST(Swift, PerHopTarget) {
  Swift a(params(256), kLine);
  Swift b(params(256), kLine);
  a.on_ack(ack(1, us(26)), us(1));
  b.on_ack(ack(1, us(26), TimeNs(0), 3), us(1));
  EXPECT_LT(a.fcwnd(), 256);
  EXPECT_EQ(a.counters().fabric_decreases, 1u);
  EXPECT_DOUBLE_EQ(b.fcwnd(), 256);  // AI, clamped at max_cwnd
  EXPECT_EQ(b.counters().fabric_increases, 1u);
}

// 10. Below one packet of window: one packet in flight, paced one per srtt / cwnd.
TEST(Swift, PacingBelowOnePacket) {
  SwiftParams p = params(0.5);
  p.rtt_ewma_old = 0;  // srtt = last sample
  Swift s(p, kLine);
  s.on_ack(ack(0, us(200)), us(1));  // far above target: cut by max_mdf -> 0.25
  EXPECT_DOUBLE_EQ(s.fcwnd(), 0.25);
  EXPECT_EQ(s.window_bytes(), kMtu);
  // one 4096 B packet every 200 us / 0.25 = 800 us: 40.96 Mb/s.
  EXPECT_NEAR(static_cast<double>(s.rate().bps()), 4096 * 8 / 800e-6, 2.0);
}

// 11. RTOs: the first ones cut by max_mdf (once per RTT), retx_reset_threshold
// in a row reset the window to min_cwnd; an ACK clears the count.
TEST(Swift, RtoResetsAfterThreshold) {
  Swift s(params(64), kLine);
  s.on_rto(us(1));
  EXPECT_DOUBLE_EQ(s.fcwnd(), 32);
  s.on_rto(us(2));  // within base_target (no RTT sample yet) of the cut: held
  EXPECT_DOUBLE_EQ(s.fcwnd(), 32);
  s.on_rto(us(3));
  EXPECT_DOUBLE_EQ(s.fcwnd(), SwiftParams{}.min_cwnd);
  EXPECT_EQ(s.counters().rtos, 3u);
}

// 12. Fast recovery (NACK): one max_mdf cut per RTT.
TEST(Swift, NackCutsOncePerRtt) {
  Swift s(params(64), kLine);
  AckEvent n;
  n.kind = AckKind::kNackLoss;
  s.on_ack(n, us(1));
  s.on_ack(n, us(2));
  EXPECT_DOUBLE_EQ(s.fcwnd(), 32);
  EXPECT_EQ(s.counters().loss_cuts, 1u);
}

// 13. Convergence and target tracking in a closed loop: N flows through one
// 100 G bottleneck with a 5 us base RTT; each RTT a flow's whole window is
// acknowledged and the queue is what exceeds one BDP. Expect: the fabric
// delay settles near the target (flow scaling included), the windows are
// fair, and the link stays busy.
TEST(Swift, ClosedLoopConvergesToTarget) {
  constexpr int kFlows = 4;
  const double c_bytes_per_ns = 100e9 / 8e9;
  const double base_ns = 5'000;
  const double bdp_pkts = c_bytes_per_ns * base_ns / kMtu;
  std::vector<Swift> flows;
  for (int i = 0; i < kFlows; ++i) flows.emplace_back(params(1 + 10 * i), kLine);
  double now_ns = 0;
  double delay_sum = 0, target_sum = 0;
  int samples = 0;
  for (int step = 0; step < 3000; ++step) {
    double total = 0;
    for (const Swift& f : flows) total += f.cwnd();
    const double queue_bytes = std::max(0.0, (total - bdp_pkts) * kMtu);
    const double rtt_ns = base_ns + queue_bytes / c_bytes_per_ns;
    now_ns += rtt_ns;
    for (Swift& f : flows) {
      const double w = f.cwnd();
      f.on_ack(ack(w, TimeNs(static_cast<int64_t>(rtt_ns))), TimeNs(static_cast<int64_t>(now_ns)));
    }
    if (step >= 2000) {
      delay_sum += rtt_ns;
      target_sum += static_cast<double>(flows[0].fabric_target(flows[0].fcwnd(), 0).ns());
      ++samples;
      EXPECT_GT(total, bdp_pkts) << "link idle at step " << step;
    }
  }
  const double mean_delay = delay_sum / samples, mean_target = target_sum / samples;
  EXPECT_NEAR(mean_delay, mean_target, 0.1 * mean_target);
  double lo = 1e9, hi = 0;
  for (const Swift& f : flows) {
    lo = std::min(lo, f.cwnd());
    hi = std::max(hi, f.cwnd());
  }
  EXPECT_LT(hi / lo, 1.3) << "unfair: " << lo << " .. " << hi;
}

}  // namespace
}  // namespace sf::nic
