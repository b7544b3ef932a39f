// DCQCN reaction point under virtual time: the exact rate trajectory against
// the formulas of shared/reference/cc.md 1.4 (paper) and 1.5 (firmware), for
// both parameter sets. Expected values are computed here from those formulas
// (documented in docs/cc.md), never pasted from a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "nic/cc/congestion_control.h"
#include "nic/cc/dcqcn.h"

namespace sf::nic {
namespace {

constexpr BitRate kLine = BitRate::gbps(100);
constexpr uint64_t kL = 100'000'000'000ull;

TimeNs us(int64_t v) { return TimeNs::from_us(v); }
// Rc = (Rt + Rc) / 2, rounded up (docs/cc.md).
uint64_t half_up(uint64_t rt, uint64_t rc) { return (rt + rc + 1) / 2; }
// Rc - Rc * alpha / 2, the cut (floor of the decrease).
uint64_t cut_of(uint64_t rc, double alpha) {
  return rc - static_cast<uint64_t>(static_cast<double>(rc) * alpha / 2.0);
}

DcqcnParams paper() { return DcqcnParams::paper(kLine); }
DcqcnParams nvidia() { return DcqcnParams::nvidia(kLine); }

// 1. Both parameter sets validate and carry the cc.md values.
TEST(DcqcnParams, SetsCarryReferenceValues) {
  const DcqcnParams p = paper();
  EXPECT_FALSE(p.validate().has_value());
  EXPECT_DOUBLE_EQ(p.g, 1.0 / 256);
  EXPECT_EQ(p.alpha_period, us(55));
  EXPECT_EQ(p.rate_increase_period, us(55));
  EXPECT_EQ(p.byte_counter_bytes, 10'000'000u);
  EXPECT_EQ(p.fast_recovery_steps, 5u);
  EXPECT_EQ(p.ai_rate, BitRate::mbps(100));  // 40 Mb/s at 40 G, scaled to 100 G
  EXPECT_EQ(p.cnp_interval, us(50));
  const DcqcnParams n = nvidia();
  EXPECT_FALSE(n.validate().has_value());
  EXPECT_DOUBLE_EQ(n.g, 5.0 / 1024);
  EXPECT_DOUBLE_EQ(n.initial_alpha, 1023.0 / 1024);
  EXPECT_EQ(n.alpha_period, us(1));
  EXPECT_EQ(n.rate_reduce_period, us(4));
  EXPECT_EQ(n.rate_increase_period, us(300));
  EXPECT_EQ(n.byte_counter_bytes, 32767u * 64);
  EXPECT_EQ(n.fast_recovery_steps, 1u);
  EXPECT_EQ(n.ai_rate, BitRate::mbps(5));
  EXPECT_EQ(n.hai_rate, BitRate::mbps(50));
  EXPECT_EQ(n.min_rate, BitRate::mbps(1));
  EXPECT_EQ(n.cnp_interval, us(4));
  EXPECT_EQ(n.cnp_dscp, 48);
  EXPECT_EQ(n.cnp_pcp, 6);
}

// 2. Bad parameters name the field.
TEST(DcqcnParams, ValidateNamesTheField) {
  DcqcnParams p = paper();
  p.alpha_period = TimeNs::zero();
  ASSERT_TRUE(p.validate().has_value());
  EXPECT_EQ(p.validate()->substr(0, 12), "alpha_period");
  p = nvidia();
  p.g = 0;
  EXPECT_EQ(p.validate()->substr(0, 2), "g:");
  p = nvidia();
  p.min_dec_factor_pct = 101;
  EXPECT_EQ(p.validate()->substr(0, 18), "min_dec_factor_pct");
  p = nvidia();
  p.min_rate = BitRate(0);
  EXPECT_EQ(p.validate()->substr(0, 8), "min_rate");
}

// 3. Before any CNP the QP runs at line rate with no timers; bytes and
// advance() change nothing.
TEST(DcqcnPaper, IdleBeforeFirstCnp) {
  Dcqcn d(paper(), kLine);
  EXPECT_EQ(d.rate(), kLine);
  EXPECT_EQ(d.target_rate(), kLine);
  EXPECT_EQ(d.stage(), DcqcnStage::kIdle);
  EXPECT_EQ(d.next_deadline(), TimeNs::max());
  d.on_tx_bytes(50'000'000, us(10));
  d.advance(TimeNs::from_ms(10));
  EXPECT_EQ(d.rate(), kLine);
  EXPECT_EQ(d.counters().byte_counter_events, 0u);
}

// 4. First CNP (paper): Rt = Rc, Rc = Rc * (1 - alpha/2) with alpha = 1, then
// alpha = (1-g)*1 + g = 1; the increase timer is armed Ti later.
TEST(DcqcnPaper, FirstCnpCut) {
  Dcqcn d(paper(), kLine);
  d.on_cnp(us(10));
  EXPECT_EQ(d.target_rate().bps(), kL);
  EXPECT_EQ(d.rate().bps(), kL / 2);
  EXPECT_DOUBLE_EQ(d.alpha(), 1.0);
  EXPECT_EQ(d.stage(), DcqcnStage::kDecrease);
  EXPECT_EQ(d.next_deadline(), us(10 + 55));
  EXPECT_EQ(d.counters().cnps, 1u);
  EXPECT_EQ(d.counters().cuts, 1u);
}

// 5. Alpha decays by (1-g) once per K = 55 us without a CNP, not before; the
// next cut uses the decayed alpha and then raises it: alpha = (1-g)a + g.
TEST(DcqcnPaper, AlphaDecaysEachPeriodThenRisesOnCnp) {
  const double keep = 1.0 - 1.0 / 256;
  Dcqcn d(paper(), kLine);
  const TimeNs t0 = us(10);
  d.on_cnp(t0);
  double a = 1.0;
  d.advance(t0 + us(55) - TimeNs(1));
  EXPECT_DOUBLE_EQ(d.alpha(), a);
  for (int k = 1; k <= 3; ++k) {
    d.advance(t0 + us(55) * k);
    a *= keep;
    EXPECT_DOUBLE_EQ(d.alpha(), a) << "period " << k;
  }
  // 3 timer events happened (T = 1..3 < F: fast recovery from L/2 towards L).
  uint64_t rc = kL / 2;
  for (int k = 0; k < 3; ++k) rc = half_up(kL, rc);
  EXPECT_EQ(d.rate().bps(), rc);
  EXPECT_EQ(d.counters().fast_recovery_steps, 3u);
  // 6. CNP at t0 + 175 us: no further decay (last at 165), cut with a.
  d.on_cnp(t0 + us(175));
  EXPECT_EQ(d.target_rate().bps(), rc);
  EXPECT_EQ(d.rate().bps(), cut_of(rc, a));
  EXPECT_DOUBLE_EQ(d.alpha(), keep * a + 1.0 / 256);
  EXPECT_EQ(d.time_stage(), 0u);
  // The alpha timer restarted at the CNP: the next decay is at +55 us.
  const double a2 = d.alpha();
  d.advance(t0 + us(175 + 54));
  EXPECT_DOUBLE_EQ(d.alpha(), a2);
  d.advance(t0 + us(175 + 55));
  EXPECT_DOUBLE_EQ(d.alpha(), a2 * keep);
}

// 7. Timer-driven recovery (paper, no bytes sent): after two back-to-back
// CNPs Rt = L/2, Rc = L/4. Timer events T = 1..4 are fast recovery
// (Rc = (Rt+Rc)/2, Rt fixed); T = 5, 6, ... are additive (Rt += R_AI) because
// BC stays 0 (never hyper).
TEST(DcqcnPaper, TimerDrivenFastRecoveryThenAdditive) {
  const DcqcnParams p = paper();
  Dcqcn d(p, kLine);
  d.on_cnp(us(0));
  d.on_cnp(us(1));
  uint64_t rt = kL / 2;
  uint64_t rc = kL / 4;
  ASSERT_EQ(d.target_rate().bps(), rt);
  ASSERT_EQ(d.rate().bps(), rc);
  const TimeNs cut_at = us(1);
  for (int k = 1; k <= 10; ++k) {
    const TimeNs at = cut_at + p.rate_increase_period * k;
    d.advance(at - TimeNs(1));
    EXPECT_EQ(d.rate().bps(), rc) << "early at event " << k;
    d.advance(at);
    if (k < 5) {
      EXPECT_EQ(d.stage(), DcqcnStage::kFastRecovery) << k;
    } else {
      rt += p.ai_rate.bps();
      EXPECT_EQ(d.stage(), DcqcnStage::kAdditive) << k;
    }
    rc = half_up(rt, rc);
    EXPECT_EQ(d.target_rate().bps(), rt) << k;
    EXPECT_EQ(d.rate().bps(), rc) << k;
    EXPECT_EQ(d.time_stage(), static_cast<uint32_t>(k));
    EXPECT_EQ(d.next_deadline(), at + p.rate_increase_period);
  }
  EXPECT_EQ(d.counters().fast_recovery_steps, 4u);
  EXPECT_EQ(d.counters().additive_steps, 6u);
  EXPECT_EQ(d.counters().hyper_steps, 0u);
  EXPECT_EQ(d.counters().timer_events, 10u);
}

// 8. Byte-counter-driven increase (paper): one event per B = 10 MB sent, the
// remainder carried; no event one byte short. Timer kept out of the way.
TEST(DcqcnPaper, ByteCounterDrivenIncrease) {
  const DcqcnParams p = paper();
  Dcqcn d(p, kLine);
  d.on_cnp(us(0));
  d.on_cnp(us(0));
  uint64_t rt = kL / 2;
  uint64_t rc = kL / 4;
  const TimeNs t = us(10);  // before the first timer event at 55 us
  d.on_tx_bytes(p.byte_counter_bytes - 1, t);
  EXPECT_EQ(d.byte_stage(), 0u);
  EXPECT_EQ(d.rate().bps(), rc);
  d.on_tx_bytes(1, t);
  EXPECT_EQ(d.byte_stage(), 1u);
  rc = half_up(rt, rc);
  EXPECT_EQ(d.rate().bps(), rc);
  EXPECT_EQ(d.stage(), DcqcnStage::kFastRecovery);
  // 4.5 B at once: 4 events (BC = 2..5); BC = 5 is the first additive one.
  d.on_tx_bytes(p.byte_counter_bytes * 4 + p.byte_counter_bytes / 2, t);
  EXPECT_EQ(d.byte_stage(), 5u);
  for (int k = 2; k <= 4; ++k) rc = half_up(rt, rc);
  rt += p.ai_rate.bps();
  rc = half_up(rt, rc);
  EXPECT_EQ(d.target_rate().bps(), rt);
  EXPECT_EQ(d.rate().bps(), rc);
  EXPECT_EQ(d.stage(), DcqcnStage::kAdditive);
  EXPECT_EQ(d.counters().byte_counter_events, 5u);
  EXPECT_EQ(d.counters().timer_events, 0u);
  // The half B carried: another half completes event 6.
  d.on_tx_bytes(p.byte_counter_bytes / 2, t);
  EXPECT_EQ(d.byte_stage(), 6u);
}

// 9. Hyper increase (paper): bytes and timer both advancing. Each timer
// period, B bytes go out 1 us before the timer fires, so the events alternate
// BC, T, BC, T ... The regime of each event follows from (T, BC) after the
// bump: FR while max < 5, hyper with i = min - 5 once min > 5, additive
// otherwise.
TEST(DcqcnPaper, HyperIncreaseAfterBothCountersPassF) {
  const DcqcnParams p = paper();
  Dcqcn d(p, kLine);
  for (int i = 0; i < 3; ++i) d.on_cnp(us(0));  // Rt = L/4, Rc = L/8
  uint64_t rt = kL / 4;
  uint64_t rc = kL / 8;
  ASSERT_EQ(d.rate().bps(), rc);
  uint32_t t_stage = 0;
  uint32_t bc_stage = 0;
  uint64_t hyper = 0;
  auto expect_step = [&](uint32_t t_s, uint32_t bc_s) {
    const uint32_t hi = std::max(t_s, bc_s);
    const uint32_t lo = std::min(t_s, bc_s);
    if (hi < 5) {
      EXPECT_EQ(d.stage(), DcqcnStage::kFastRecovery);
    } else if (lo > 5) {
      rt += (lo - 5) * p.hai_rate.bps();
      ++hyper;
      EXPECT_EQ(d.stage(), DcqcnStage::kHyper);
    } else {
      rt += p.ai_rate.bps();
      EXPECT_EQ(d.stage(), DcqcnStage::kAdditive);
    }
    rc = half_up(rt, rc);
    EXPECT_EQ(d.target_rate().bps(), rt) << "T=" << t_s << " BC=" << bc_s;
    EXPECT_EQ(d.rate().bps(), rc) << "T=" << t_s << " BC=" << bc_s;
  };
  for (int k = 1; k <= 9; ++k) {
    const TimeNs at = p.rate_increase_period * k;
    d.on_tx_bytes(p.byte_counter_bytes, at - us(1));
    expect_step(t_stage, ++bc_stage);
    d.advance(at);
    expect_step(++t_stage, bc_stage);
  }
  // Hyper events: T=6 (i=1), BC=7 (1), T=7 (2), BC=8 (2), T=8 (3), BC=9 (3), T=9 (4).
  EXPECT_EQ(hyper, 7u);
  EXPECT_EQ(d.counters().hyper_steps, hyper);
  EXPECT_EQ(d.counters().additive_steps, 3u);
  EXPECT_EQ(d.counters().fast_recovery_steps, 8u);
}

// 10. Minimum rate: repeated cuts floor at min_rate and count the clamps.
TEST(DcqcnPaper, MinRateClamp) {
  DcqcnParams p = paper();
  p.min_rate = BitRate::gbps(10);
  Dcqcn d(p, kLine);
  d.on_cnp(us(0));  // 50 G
  d.on_cnp(us(0));  // 25 G
  d.on_cnp(us(0));  // 12.5 G
  EXPECT_EQ(d.rate().bps(), kL / 8);
  EXPECT_EQ(d.counters().min_rate_clamps, 0u);
  d.on_cnp(us(0));  // 6.25 G -> 10 G
  EXPECT_EQ(d.rate(), BitRate::gbps(10));
  EXPECT_EQ(d.target_rate().bps(), kL / 8);
  EXPECT_EQ(d.counters().min_rate_clamps, 1u);
  d.on_cnp(us(0));  // Rt = Rc = 10 G, stays 10 G
  EXPECT_EQ(d.rate(), BitRate::gbps(10));
  EXPECT_EQ(d.target_rate(), BitRate::gbps(10));
  EXPECT_EQ(d.counters().min_rate_clamps, 2u);
}

// 11. Maximum = line rate: additive increase never lifts Rt above line; once
// Rc reaches line the limiter is released (idle, no timer).
TEST(DcqcnPaper, RecoversToLineRateAndGoesIdle) {
  const DcqcnParams p = paper();
  Dcqcn d(p, kLine);
  d.on_cnp(us(0));
  TimeNs now = us(0);
  int events = 0;
  while (d.next_deadline() != TimeNs::max() && events < 1000) {
    now = d.next_deadline();
    d.advance(now);
    ++events;
    EXPECT_LE(d.target_rate().bps(), kL);
    EXPECT_LE(d.rate().bps(), d.target_rate().bps());
  }
  EXPECT_LT(events, 1000);
  EXPECT_EQ(d.rate(), kLine);
  EXPECT_EQ(d.stage(), DcqcnStage::kIdle);
  // Rt = L from the first event on; Rc rounded up makes the gap Rt - Rc go
  // g -> floor(g / 2), so it closes after floor(log2(L/2)) + 1 events.
  EXPECT_EQ(events, static_cast<int>(std::floor(std::log2(static_cast<double>(kL / 2)))) + 1);
  // A new CNP after recovery cuts again with the decayed alpha (not reset).
  const double keep = 1.0 - p.g;
  const TimeNs later = now + us(55) * 10;
  d.advance(later);
  const double a = d.alpha();
  EXPECT_LT(a, 1.0);
  d.on_cnp(later);
  EXPECT_EQ(d.rate().bps(), cut_of(kL, a));
  EXPECT_DOUBLE_EQ(d.alpha(), keep * a + p.g);
}

// 12. Firmware first CNP: alpha = 1023/1024 and no immediate cut; the cut comes
// at the end of the 4 us decrease period, with alpha decayed for the 4 alpha
// periods (the first CNP sets alpha without raising it). Rt is not clamped
// (no increase happened yet), the cut is Rc * alpha / 2.
TEST(DcqcnNvidia, FirstCnpCutsAtDecreasePeriodEnd) {
  const DcqcnParams p = nvidia();
  const double keep = 1.0 - p.g;
  Dcqcn d(p, kLine);
  const TimeNs t0 = us(100);
  d.on_cnp(t0);
  EXPECT_EQ(d.rate(), kLine);
  EXPECT_DOUBLE_EQ(d.alpha(), 1023.0 / 1024);
  EXPECT_EQ(d.next_deadline(), t0 + us(4));
  d.advance(t0 + us(4) - TimeNs(1));
  EXPECT_EQ(d.counters().cuts, 0u);
  d.advance(t0 + us(4));
  double a = 1023.0 / 1024;
  for (int i = 0; i < 4; ++i) a *= keep;
  EXPECT_DOUBLE_EQ(d.alpha(), a);
  uint64_t rc = cut_of(kL, a);
  EXPECT_EQ(d.rate().bps(), rc);
  EXPECT_EQ(d.target_rate().bps(), kL);
  EXPECT_EQ(d.counters().cuts, 1u);
  EXPECT_EQ(d.next_deadline(), t0 + us(4 + 300));

  // Second CNP at t0 + 10 us: alpha rises for period [10, 11), falls for
  // [11, 12); the cut is at t0 + 12 us. Still no increase: Rt stays L.
  d.on_cnp(t0 + us(10));
  EXPECT_EQ(d.next_deadline(), t0 + us(12));
  d.advance(t0 + us(12));
  for (int i = 0; i < 6; ++i) a *= keep;  // [4, 10)
  a = std::min(1.0, keep * a + p.g);      // [10, 11)
  a *= keep;                              // [11, 12)
  EXPECT_DOUBLE_EQ(d.alpha(), a);
  rc = cut_of(rc, a);
  EXPECT_EQ(d.rate().bps(), rc);
  EXPECT_EQ(d.target_rate().bps(), kL);
  EXPECT_EQ(d.counters().cuts, 2u);
  EXPECT_EQ(d.counters().cnps, 2u);
}

// 13. Firmware: several CNPs inside one decrease period give one cut.
TEST(DcqcnNvidia, OneCutPerDecreasePeriod) {
  Dcqcn d(nvidia(), kLine);
  d.on_cnp(us(0));
  d.on_cnp(TimeNs(500));
  d.on_cnp(TimeNs(3999));
  d.advance(us(4));
  EXPECT_EQ(d.counters().cuts, 1u);
  EXPECT_EQ(d.counters().cnps, 3u);
  d.advance(us(40));
  EXPECT_EQ(d.counters().cuts, 1u);
}

// 14. Firmware increase with F = 1 and the counter bumped after the regime
// is chosen: timer event 1 (T=0) is fast recovery, event 2 (T=1) additive.
// A cut after a timer increase clamps Rt := Rc (clamp_tgt_rate_after_time_inc).
TEST(DcqcnNvidia, TimerIncreaseAndTargetClamp) {
  const DcqcnParams p = nvidia();
  Dcqcn d(p, kLine);
  d.on_cnp(us(0));
  d.on_cnp(us(5));
  d.advance(us(8));  // cuts at 4 and 8 us
  ASSERT_EQ(d.counters().cuts, 2u);
  uint64_t rc = d.rate().bps();
  uint64_t rt = d.target_rate().bps();
  ASSERT_EQ(rt, kL);
  d.advance(us(308));
  EXPECT_EQ(d.stage(), DcqcnStage::kFastRecovery);
  rc = half_up(rt, rc);
  EXPECT_EQ(d.rate().bps(), rc);
  EXPECT_EQ(d.time_stage(), 1u);
  d.advance(us(608));
  EXPECT_EQ(d.stage(), DcqcnStage::kAdditive);
  rt = std::min(kL, rt + p.ai_rate.bps());  // capped at line
  rc = half_up(rt, rc);
  EXPECT_EQ(d.target_rate().bps(), rt);
  EXPECT_EQ(d.rate().bps(), rc);
  // Cut after timer increases: Rt := Rc.
  d.on_cnp(us(610));
  d.advance(us(612));
  const double a = d.alpha();
  EXPECT_EQ(d.target_rate().bps(), rc);
  EXPECT_EQ(d.rate().bps(), cut_of(rc, a));
}

// 15. Firmware hyper increase is a constant R_HAI per event once both
// counters exceed F = 1; the byte counter is 32767 x 64 B. A cut after a
// byte-counter increase clamps Rt := Rc, which brings Rt below line.
TEST(DcqcnNvidia, ConstantHyperStep) {
  const DcqcnParams p = nvidia();
  const uint64_t b = p.byte_counter_bytes;
  Dcqcn d(p, kLine);
  d.on_cnp(us(0));
  d.advance(us(4));       // cut 1, Rt = L
  d.on_tx_bytes(b, us(5));  // BC 0: fast recovery, BC = 1
  EXPECT_EQ(d.counters().fast_recovery_steps, 1u);
  const uint64_t rc_before = d.rate().bps();
  d.on_cnp(us(6));
  d.advance(us(8));       // cut 2 with BC > 0: Rt := Rc
  uint64_t rt = d.target_rate().bps();
  uint64_t rc = d.rate().bps();
  EXPECT_EQ(rt, rc_before);
  EXPECT_EQ(rc, cut_of(rc_before, d.alpha()));
  const TimeNs cut_at = us(8);
  // Bytes: (T=0, BC=0) fast recovery; (0, 1) additive.
  d.on_tx_bytes(b, us(9));
  rc = half_up(rt, rc);
  EXPECT_EQ(d.stage(), DcqcnStage::kFastRecovery);
  d.on_tx_bytes(b, us(9));
  rt += p.ai_rate.bps();
  rc = half_up(rt, rc);
  EXPECT_EQ(d.stage(), DcqcnStage::kAdditive);
  EXPECT_EQ(d.rate().bps(), rc);
  // Timer: (0, 2) additive, (1, 2) additive.
  d.advance(cut_at + us(300));
  rt += p.ai_rate.bps();
  rc = half_up(rt, rc);
  EXPECT_EQ(d.stage(), DcqcnStage::kAdditive);
  d.advance(cut_at + us(600));
  rt += p.ai_rate.bps();
  rc = half_up(rt, rc);
  EXPECT_EQ(d.time_stage(), 2u);
  EXPECT_EQ(d.byte_stage(), 2u);
  EXPECT_EQ(d.rate().bps(), rc);
  // (2, 2), (2, 3), (2, 4): both > F, each event adds exactly R_HAI.
  for (int k = 0; k < 3; ++k) {
    d.on_tx_bytes(b, cut_at + us(601));
    rt += p.hai_rate.bps();
    rc = half_up(rt, rc);
    EXPECT_EQ(d.stage(), DcqcnStage::kHyper);
    EXPECT_EQ(d.target_rate().bps(), rt);
    EXPECT_EQ(d.rate().bps(), rc);
  }
  EXPECT_EQ(d.counters().hyper_steps, 3u);
  EXPECT_EQ(d.counters().additive_steps, 3u);
}

// 16. Firmware rate_to_set_on_first_cnp and rpg_min_dec_fac: the first CNP
// sets Rc = Rt = the given rate; a cut never removes more than
// (100 - min_dec_factor_pct) % of Rc (80 -> at most 20 %).
TEST(DcqcnNvidia, RateOnFirstCnpAndMinDecFactor) {
  DcqcnParams p = nvidia();
  p.rate_to_set_on_first_cnp = BitRate::gbps(85);
  p.min_dec_factor_pct = 80;
  Dcqcn d(p, kLine);
  d.on_cnp(us(0));
  EXPECT_EQ(d.rate(), BitRate::gbps(85));
  EXPECT_EQ(d.target_rate(), BitRate::gbps(85));
  d.advance(us(4));
  // alpha ~ 0.98: the alpha cut would remove 49 %, the factor caps it at 20 %.
  EXPECT_EQ(d.rate().bps(), 85'000'000'000ull - 85'000'000'000ull * 20 / 100);
}

// 17. A steady CNP train converges to the band the formulas predict
// (paper set, one CNP every 275 us = 5 K = 5 Ti, no bytes sent).
// Per cycle: alpha a -> ((1-g)a + g)(1-g)^5, fixed point
//   a* = g q / (1 - (1-g) q), q = (1-g)^5.
// Rate just before a CNP, R: cut Rt = R, Rc = R(1 - a/2); 4 fast-recovery
// events leave Rc = R - R a/32; the 5th event (T = 5 = F) is additive:
// Rt = R + R_AI, Rc = R + R_AI/2 - R a/64. Fixed point R* = 32 R_AI / a*
// (below line, so the cap never acts). Each cycle contracts the error by
// (1 - a*/64), so after 6000 cycles it is below 1e-6 of R*; rounding adds
// at most a few bit/s per cycle.
TEST(DcqcnPaper, SteadyCnpTrainConvergesToPredictedBand) {
  const DcqcnParams p = paper();
  const double g = p.g;
  const double q = std::pow(1.0 - g, 5);
  const double a_star = g * q / (1.0 - (1.0 - g) * q);
  const double r_star = 32.0 * static_cast<double>(p.ai_rate.bps()) / a_star;
  ASSERT_LT(r_star, static_cast<double>(kL));
  Dcqcn d(p, kLine);
  const TimeNs period = us(275);
  std::vector<double> pre_cnp;
  for (int k = 0; k < 6000; ++k) {
    const TimeNs now = period * k;
    d.advance(now);
    pre_cnp.push_back(static_cast<double>(d.rate().bps()));
    d.on_cnp(now);
  }
  const double a_pre = (d.alpha() - g) / (1.0 - g);  // alpha just before the last cut
  EXPECT_NEAR(a_pre, a_star, 1e-9);
  double lo = pre_cnp.back();
  double hi = pre_cnp.back();
  for (size_t i = pre_cnp.size() - 200; i < pre_cnp.size(); ++i) {
    lo = std::min(lo, pre_cnp[i]);
    hi = std::max(hi, pre_cnp[i]);
  }
  EXPECT_NEAR(lo / r_star, 1.0, 1e-5);
  EXPECT_NEAR(hi / r_star, 1.0, 1e-5);
  EXPECT_EQ(d.counters().hyper_steps, 0u);
  EXPECT_EQ(d.counters().cuts, 6000u);
}

// 18. Firmware set, CNP every 100 us (shorter than the 300 us increase timer,
// which every cut restarts): no increase ever happens, each cut removes
// Rc a/2 with a -> a* (~0.8 %, see below), so from 100 G the rate needs about
// ln(1e5) / 0.004 ~ 3000 cycles to reach the 1 Mb/s floor; 5000 are run.
TEST(DcqcnNvidia, PersistentCnpsSinkToMinRate) {
  const DcqcnParams p = nvidia();
  Dcqcn d(p, kLine);
  for (int k = 0; k < 5000; ++k) {
    d.on_cnp(us(100) * k);
    d.advance(us(100) * k + us(4));
    EXPECT_LE(d.rate().bps(), kL);
  }
  EXPECT_EQ(d.rate(), p.min_rate);
  EXPECT_GT(d.counters().min_rate_clamps, 0u);
  EXPECT_EQ(d.counters().fast_recovery_steps + d.counters().additive_steps, 0u);
  // alpha at the cut converges to the fixed point of one rise and 99 decays
  // per 100 us cycle, seen 4 periods after the rise: a_cut = (keep a + g) keep^3.
  const double keep = 1.0 - p.g;
  const double q = std::pow(keep, 99);
  const double a_star = p.g * q / (1.0 - keep * q);  // just before a rise
  const double a_cut = (keep * a_star + p.g) * std::pow(keep, 3);
  EXPECT_NEAR(d.alpha(), a_cut, 1e-9);
}

// 20. rpg_max_rate below line caps the start rate and every increase; a zero
// byte counter disables byte-driven increases.
TEST(DcqcnNvidia, MaxRateCapAndNoByteCounter) {
  DcqcnParams p = nvidia();
  p.max_rate = BitRate::gbps(40);
  p.byte_counter_bytes = 0;
  Dcqcn d(p, kLine);
  EXPECT_EQ(d.rate(), BitRate::gbps(40));
  EXPECT_EQ(d.max_rate(), BitRate::gbps(40));
  d.on_cnp(us(0));
  d.advance(us(4));
  EXPECT_LT(d.rate(), BitRate::gbps(40));
  d.on_tx_bytes(1'000'000'000, us(5));
  EXPECT_EQ(d.counters().byte_counter_events, 0u);
  TimeNs now = us(5);
  while (d.next_deadline() != TimeNs::max()) {
    now = d.next_deadline();
    d.advance(now);
    EXPECT_LE(d.target_rate(), BitRate::gbps(40));
  }
  EXPECT_EQ(d.rate(), BitRate::gbps(40));
  EXPECT_EQ(d.stage(), DcqcnStage::kIdle);
  // A max_rate above line means line.
  p.max_rate = BitRate::gbps(400);
  EXPECT_EQ(Dcqcn(p, kLine).rate(), kLine);
}

// 21. A cut and an increase-timer expiry due at the same nanosecond: the cut
// wins and restarts the timer (no increase at that instant).
TEST(DcqcnNvidia, CutBeatsIncreaseAtSameInstant) {
  const DcqcnParams p = nvidia();
  Dcqcn d(p, kLine);
  d.on_cnp(us(0));
  d.advance(us(4));  // cut 1 at 4 us; increase timer due at 304 us
  d.on_cnp(us(301));  // decrease period [300, 304): cut due at 304 us too
  d.advance(us(304));
  EXPECT_EQ(d.counters().cuts, 2u);
  EXPECT_EQ(d.counters().timer_events, 0u);
  EXPECT_EQ(d.next_deadline(), us(604));
}

// 19. The variant interface: none = fixed line rate ignoring CNPs; dcqcn
// behaves exactly as a bare Dcqcn; names round-trip.
TEST(CongestionControl, VariantDispatchAndNames) {
  CongestionControl none = make_congestion_control(CcChoice{}, kLine);
  EXPECT_EQ(cc_algorithm(none), CcAlgorithm::kNone);
  cc_on_cnp(none, us(1));
  cc_on_tx_bytes(none, 1'000'000'000, us(2));
  cc_advance(none, us(3));
  EXPECT_EQ(cc_rate(none), kLine);
  EXPECT_EQ(cc_next_deadline(none), TimeNs::max());

  auto choice = cc_choice_from_string("dcqcn-paper");
  ASSERT_TRUE(choice.has_value());
  CongestionControl cc = make_congestion_control(*choice, kLine);
  EXPECT_EQ(cc_algorithm(cc), CcAlgorithm::kDcqcn);
  Dcqcn bare(paper(), kLine);
  cc_on_cnp(cc, us(0));
  bare.on_cnp(us(0));
  EXPECT_EQ(cc_rate(cc), bare.rate());
  EXPECT_EQ(cc_next_deadline(cc), bare.next_deadline());
  cc_advance(cc, us(55));
  bare.advance(us(55));
  EXPECT_EQ(cc_rate(cc), bare.rate());

  EXPECT_EQ(to_string(*cc_choice_from_string("dcqcn")), "dcqcn-nvidia");
  EXPECT_EQ(to_string(*cc_choice_from_string("dcqcn-nvidia")), "dcqcn-nvidia");
  EXPECT_EQ(to_string(*cc_choice_from_string("none")), "none");
  EXPECT_FALSE(cc_choice_from_string("dcqcn-fast").has_value());
  EXPECT_FALSE(cc_choice_from_string("").has_value());
  EXPECT_EQ(cc_algorithm_from_string("dcqcn"), CcAlgorithm::kDcqcn);
  EXPECT_EQ(to_string(CcAlgorithm::kNone), "none");
  EXPECT_EQ(dcqcn_param_set_from_string("paper"), DcqcnParamSet::kPaper);
  EXPECT_FALSE(dcqcn_param_set_from_string("mlx").has_value());
  EXPECT_EQ(to_string(DcqcnStage::kHyper), "hyper_increase");
}

}  // namespace
}  // namespace sf::nic
