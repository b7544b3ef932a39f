// BBR-style CC under virtual time against Linux tcp_bbr.c / the ACM Queue
// paper (shared/reference/cc.md 5): BtlBw windowed max, RTprop windowed min,
// STARTUP -> DRAIN -> PROBE_BW -> PROBE_RTT, pacing = gain x BtlBw x 0.99,
// cwnd = cwnd_gain x BDP. Hand-made ACK traces; expected values from the
// equations.
#include <gtest/gtest.h>

#include <string>

#include "nic/cc/bbr.h"

namespace sf::nic {
namespace {

constexpr BitRate kLine = BitRate::gbps(100);
constexpr uint32_t kMtu = 4096;
TimeNs us(int64_t v) { return TimeNs::from_us(v); }

// Drives one Bbr with one ACK per round trip (each ACK passes the snd_nxt of
// the previous one), a delivery-rate sample of `gbps` over 10 us.
struct Driver {
  Bbr bbr;
  uint64_t seq = 0;
  TimeNs now{0};
  explicit Driver(const BbrParams& p = {}) : bbr(p, kLine) {}

  void ack(double gbps, TimeNs rtt, uint64_t inflight, TimeNs dt = TimeNs::from_us(10), bool new_round = true,
           bool app_limited = false) {
    now += dt;
    AckEvent a;
    a.acked_bytes = 64 * 1024;
    a.ack_seq = new_round ? seq + 1 : seq;
    seq += 1'000'000;
    a.snd_nxt = seq;
    a.inflight_bytes = inflight;
    a.rtt = rtt;
    a.delivery_interval = us(10);
    a.delivered_bytes = static_cast<uint64_t>(gbps * 1e9 * 10e-6 / 8);
    a.app_limited = app_limited;
    bbr.on_ack(a, now);
  }
  // Into PROBE_BW at 50 Gb/s, RTprop 10 us (BDP 62500 B).
  void to_probe_bw() {
    for (double g : {10.0, 20.0, 40.0, 50.0, 50.0, 50.0, 50.0}) ack(g, us(10), 1'000'000);
    ack(50, us(10), 10'000);
  }
};

// 1. Bad parameters refused, naming the field.
TEST(BbrParams, BadParametersNamed) {
  EXPECT_FALSE(BbrParams{}.validate().has_value());
  auto bad = [](auto edit) {
    BbrParams p;
    edit(p);
    return std::string(p.validate().value_or("(accepted)"));
  };
  EXPECT_EQ(bad([](BbrParams& p) { p.high_gain = 1; }).rfind("high_gain:", 0), 0u);
  EXPECT_EQ(bad([](BbrParams& p) { p.drain_gain = 1.5; }).rfind("drain_gain:", 0), 0u);
  EXPECT_EQ(bad([](BbrParams& p) { p.probe_bw_gains[3] = 0; }).rfind("probe_bw_gains:", 0), 0u);
  EXPECT_EQ(bad([](BbrParams& p) { p.probe_bw_start_phase = 8; }).rfind("probe_bw_start_phase:", 0), 0u);
  EXPECT_EQ(bad([](BbrParams& p) { p.bw_window_rounds = 0; }).rfind("bw_window_rounds:", 0), 0u);
  EXPECT_EQ(bad([](BbrParams& p) { p.rtprop_window = TimeNs(0); }).rfind("rtprop_window:", 0), 0u);
  EXPECT_EQ(bad([](BbrParams& p) { p.initial_cwnd_pkts = 2; }).rfind("initial_cwnd_pkts:", 0), 0u);
}

// 2. Before any sample: STARTUP, line-rate pacing, 10-packet window.
TEST(Bbr, InitialState) {
  const Bbr b(BbrParams{}, kLine);
  EXPECT_EQ(b.phase(), BbrPhase::kStartup);
  EXPECT_EQ(b.rate(), kLine);
  EXPECT_EQ(b.window_bytes(), 10u * kMtu);
  EXPECT_DOUBLE_EQ(b.pacing_gain(), 2.885);
  // initial_rate (seed 001): paced below line rate until the first sample;
  // above line rate it is line rate.
  BbrParams p;
  p.initial_rate = BitRate::gbps(10);
  EXPECT_EQ(Bbr(p, kLine).rate(), BitRate::gbps(10));
  p.initial_rate = BitRate(kLine.bps() * 2);
  EXPECT_EQ(Bbr(p, kLine).rate(), kLine);
}

// 3. STARTUP grows the window by the bytes acked while it is below 2.885 x BDP
// and paces at 2.885 x BtlBw (never lower while in STARTUP);
// BtlBw that grows < 25 % for 3 rounds fills the pipe: DRAIN (pacing 1/2.885),
// then PROBE_BW once inflight <= BDP.
TEST(Bbr, StartupDrainProbeBw) {
  Driver d;
  d.ack(10, us(10), 1'000'000);
  EXPECT_EQ(d.bbr.phase(), BbrPhase::kStartup);
  EXPECT_EQ(d.bbr.window_bytes(), 10u * kMtu);  // already above 2.885 x 12500 B
  EXPECT_NEAR(static_cast<double>(d.bbr.rate().bps()), 2.885 * 10e9 * 0.99, 1e3);
  d.ack(20, us(10), 1'000'000);  // BDP 25000 B: target 72125 B > window
  EXPECT_EQ(d.bbr.window_bytes(), 10u * kMtu + 64 * 1024);
  EXPECT_NEAR(static_cast<double>(d.bbr.rate().bps()), 2.885 * 20e9 * 0.99, 1e3);
  d.ack(10, us(10), 1'000'000, us(10), false);  // a lower sample: BtlBw and pacing hold
  EXPECT_NEAR(static_cast<double>(d.bbr.rate().bps()), 2.885 * 20e9 * 0.99, 1e3);
  for (double g : {40.0, 50.0}) d.ack(g, us(10), 1'000'000);  // growth >= 25 %: full_bw resets
  EXPECT_FALSE(d.bbr.filled_pipe());
  d.ack(50, us(10), 1'000'000);  // round 5: no growth (1)
  d.ack(50, us(10), 1'000'000);  // (2)
  EXPECT_EQ(d.bbr.phase(), BbrPhase::kStartup);
  d.ack(50, us(10), 1'000'000);  // (3): pipe full
  EXPECT_TRUE(d.bbr.filled_pipe());
  EXPECT_EQ(d.bbr.phase(), BbrPhase::kDrain);
  EXPECT_NEAR(static_cast<double>(d.bbr.rate().bps()), 50e9 / 2.885 * 0.99, 1e3);
  EXPECT_EQ(d.bbr.bdp_bytes(), 62'500u);
  d.ack(50, us(10), 62'501);  // still above one BDP
  EXPECT_EQ(d.bbr.phase(), BbrPhase::kDrain);
  d.ack(50, us(10), 62'500);
  EXPECT_EQ(d.bbr.phase(), BbrPhase::kProbeBw);
  EXPECT_EQ(d.bbr.cycle_index(), 2u);
  EXPECT_NEAR(static_cast<double>(d.bbr.rate().bps()), 50e9 * 0.99, 1e3);
  EXPECT_EQ(d.bbr.window_bytes(), 2u * 62'500);  // min(cwnd + acked, 2 x BDP)
}

// 4. BtlBw is the max over the last bw_window_rounds rounds: a 80 G burst
// sample holds for 10 rounds, then the 50 G samples rule again.
TEST(Bbr, BtlBwWindowedMax) {
  Driver d;
  d.to_probe_bw();
  d.ack(80, us(10), 10'000);
  const uint64_t r80 = d.bbr.round_count();
  while (d.bbr.round_count() < r80 + 10) {
    d.ack(50, us(10), 10'000);
    EXPECT_EQ(d.bbr.btl_bw_bps(), 80'000'000'000u) << "round " << d.bbr.round_count() - r80;
  }
  d.ack(50, us(10), 10'000);
  d.ack(50, us(10), 10'000);
  EXPECT_EQ(d.bbr.btl_bw_bps(), 50'000'000'000u);
}

// 5. App-limited samples below BtlBw are not taken; above it they are.
TEST(Bbr, AppLimitedSamples) {
  Driver d;
  d.to_probe_bw();
  d.ack(5, us(10), 10'000, us(10), true, true);
  EXPECT_EQ(d.bbr.counters().app_limited_ignored, 1u);
  EXPECT_EQ(d.bbr.btl_bw_bps(), 50'000'000'000u);
  d.ack(60, us(10), 10'000, us(10), true, true);
  EXPECT_EQ(d.bbr.btl_bw_bps(), 60'000'000'000u);
}

// 6. PROBE_BW gain cycling: a gain-1 phase lasts one RTprop; the 1.25 phase
// also needs inflight >= 1.25 BDP; the 0.75 phase ends as soon as inflight
// <= BDP.
TEST(Bbr, GainCycling) {
  Driver d;
  d.to_probe_bw();
  ASSERT_EQ(d.bbr.cycle_index(), 2u);
  // 6 gain-1 phases (2..7), each ending on the first ACK more than RTprop (10 us) after it began.
  for (uint32_t i = 3; i < 8; ++i) {
    d.ack(50, us(10), 62'500, us(5), false);
    EXPECT_EQ(d.bbr.cycle_index(), i - 1) << "too early";
    d.ack(50, us(10), 62'500, us(6), false);
    EXPECT_EQ(d.bbr.cycle_index(), i);
  }
  d.ack(50, us(10), 62'500, us(11), false);
  ASSERT_EQ(d.bbr.cycle_index(), 0u);
  EXPECT_DOUBLE_EQ(d.bbr.pacing_gain(), 1.25);
  EXPECT_NEAR(static_cast<double>(d.bbr.rate().bps()), 1.25 * 50e9 * 0.99, 1e3);
  d.ack(50, us(10), 70'000, us(20), false);  // long enough, but inflight < 1.25 x BDP = 78125
  EXPECT_EQ(d.bbr.cycle_index(), 0u);
  d.ack(50, us(10), 78'125, us(1), false);
  EXPECT_EQ(d.bbr.cycle_index(), 1u);
  EXPECT_DOUBLE_EQ(d.bbr.pacing_gain(), 0.75);
  d.ack(50, us(10), 62'500, us(1), false);  // at once: inflight <= BDP
  EXPECT_EQ(d.bbr.cycle_index(), 2u);
}

// 7. RTprop is the windowed min; when it has not been refreshed for
// rtprop_window, PROBE_RTT: cwnd 4 packets, gain 1; it ends probe_rtt_time
// after inflight reached 4 packets and at least one round later, back to
// PROBE_BW with the RTprop stamp refreshed (the new, larger sample).
TEST(Bbr, ProbeRtt) {
  BbrParams p;
  p.rtprop_window = TimeNs::from_us(500);
  p.probe_rtt_time = TimeNs::from_us(50);
  Driver d(p);
  d.to_probe_bw();
  EXPECT_EQ(d.bbr.rtprop(), us(10));
  d.ack(50, us(9), 62'500, us(10), false);
  EXPECT_EQ(d.bbr.rtprop(), us(9));
  // 12 us samples do not lower it; 500 us later the filter expires.
  for (int i = 0; i < 50; ++i) d.ack(50, us(12), 62'500, us(10), false);
  EXPECT_EQ(d.bbr.phase(), BbrPhase::kProbeBw);
  d.ack(50, us(12), 62'500, us(10), false);
  ASSERT_EQ(d.bbr.phase(), BbrPhase::kProbeRtt);
  EXPECT_EQ(d.bbr.counters().probe_rtt_entries, 1u);
  EXPECT_EQ(d.bbr.rtprop(), us(12));
  EXPECT_EQ(d.bbr.window_bytes(), 4u * kMtu);
  EXPECT_DOUBLE_EQ(d.bbr.pacing_gain(), 1.0);
  d.ack(50, us(12), 4 * kMtu, us(1), false);  // inflight drained: the 50 us dwell starts
  d.ack(50, us(12), 4 * kMtu, us(60), false);  // time passed, but no round yet
  EXPECT_EQ(d.bbr.phase(), BbrPhase::kProbeRtt);
  d.ack(50, us(12), 4 * kMtu, us(1), true);  // a round ends
  EXPECT_EQ(d.bbr.phase(), BbrPhase::kProbeBw);
  d.ack(50, us(12), 62'500, us(10), false);
  EXPECT_EQ(d.bbr.phase(), BbrPhase::kProbeBw);  // the stamp was refreshed
}

// 8. An RTO shrinks the window to min_cwnd_pkts.
TEST(Bbr, RtoShrinksWindow) {
  Driver d;
  d.to_probe_bw();
  d.bbr.on_rto(d.now);
  EXPECT_EQ(d.bbr.window_bytes(), 4u * kMtu);
}

}  // namespace
}  // namespace sf::nic
