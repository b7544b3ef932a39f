// DCQCN reaction point: shared/reference/cc.md 1.4 (paper) and 1.5 (firmware).
#include "nic/cc/dcqcn.h"

#include <algorithm>
#include <cmath>

namespace sf::nic {

std::string_view to_string(DcqcnAlphaUpdate a) {
  switch (a) {
    case DcqcnAlphaUpdate::kOnCnp: return "on_cnp";
    case DcqcnAlphaUpdate::kPeriodic: return "periodic";
  }
  return "?";
}

std::string_view to_string(DcqcnHyperStep h) {
  switch (h) {
    case DcqcnHyperStep::kLinear: return "linear";
    case DcqcnHyperStep::kConstant: return "constant";
  }
  return "?";
}

std::string_view to_string(DcqcnStageCount s) {
  switch (s) {
    case DcqcnStageCount::kBeforeIncrease: return "before_increase";
    case DcqcnStageCount::kAfterIncrease: return "after_increase";
  }
  return "?";
}

std::string_view to_string(DcqcnParamSet s) {
  switch (s) {
    case DcqcnParamSet::kPaper: return "paper";
    case DcqcnParamSet::kNvidia: return "nvidia";
  }
  return "?";
}

std::optional<DcqcnParamSet> dcqcn_param_set_from_string(std::string_view s) {
  if (s == "paper") return DcqcnParamSet::kPaper;
  if (s == "nvidia") return DcqcnParamSet::kNvidia;
  return std::nullopt;
}

std::string_view to_string(DcqcnStage s) {
  switch (s) {
    case DcqcnStage::kIdle: return "idle";
    case DcqcnStage::kDecrease: return "decrease";
    case DcqcnStage::kFastRecovery: return "fast_recovery";
    case DcqcnStage::kAdditive: return "additive_increase";
    case DcqcnStage::kHyper: return "hyper_increase";
  }
  return "?";
}

// cc.md 1.4, "Paper parameter set" table. The paper fixes R_AI = 40 Mb/s for
// its 40 G NICs; we keep the ratio (line / 1000). R_HAI is not fixed by the
// paper: the authors' sample config uses 200 Mb/s at 40 G (line / 200). The
// paper has no minimum rate; we use the firmware's rpg_min_rate (1 Mb/s, cc.md
// 1.6) so that a rate never reaches zero. B = 10 MB taken as 10^7 bytes.
DcqcnParams DcqcnParams::paper(BitRate line) {
  DcqcnParams p;
  p.max_rate = BitRate(0);
  p.min_rate = BitRate::mbps(1);
  p.g = 1.0 / 256.0;
  p.initial_alpha = 1.0;
  p.alpha_update = DcqcnAlphaUpdate::kOnCnp;
  p.alpha_period = TimeNs::from_us(55);  // K
  p.rate_reduce_period = TimeNs::zero();  // cut on every CNP
  p.min_dec_factor_pct = 0;
  p.clamp_tgt_rate = true;                // Rt = Rc at every cut
  p.clamp_tgt_rate_after_time_inc = false;
  p.rate_to_set_on_first_cnp = BitRate(0);
  p.rate_increase_period = TimeNs::from_us(55);  // Ti
  p.byte_counter_bytes = 10'000'000;             // B
  p.fast_recovery_steps = 5;                     // F
  p.ai_rate = BitRate(line.bps() / 1000);        // 40 Mb/s at 40 G
  p.hai_rate = BitRate(line.bps() / 200);        // 200 Mb/s at 40 G
  p.hyper_step = DcqcnHyperStep::kLinear;
  p.stage_count = DcqcnStageCount::kBeforeIncrease;
  p.cnp_interval = TimeNs::from_us(50);          // N
  p.cnp_dscp = 48;
  p.cnp_pcp = 6;
  return p;
}

// cc.md 1.6 "Firmware default" column (NVIDIA parameter names in comments).
// min_time_between_cnps: 4 us as tabulated (cc.md 1.3; one card's dump shows 2).
DcqcnParams DcqcnParams::nvidia(BitRate /*line*/) {
  DcqcnParams p;
  p.max_rate = BitRate(0);                    // rpg_max_rate 0 = line rate
  p.min_rate = BitRate::mbps(1);              // rpg_min_rate 1 Mb/s
  p.g = (1024.0 - 1019.0) / 1024.0;           // dce_tcp_g 1019
  p.initial_alpha = 1023.0 / 1024.0;          // initial_alpha_value 1023
  p.alpha_update = DcqcnAlphaUpdate::kPeriodic;
  p.alpha_period = TimeNs::from_us(1);        // dce_tcp_rtt 1 us
  p.rate_reduce_period = TimeNs::from_us(4);  // rate_reduce_monitor_period 4 us
  p.min_dec_factor_pct = 50;                  // rpg_min_dec_fac 50 %
  p.clamp_tgt_rate = false;                   // clamp_tgt_rate 0
  p.clamp_tgt_rate_after_time_inc = true;     // clamp_tgt_rate_after_time_inc 1
  p.rate_to_set_on_first_cnp = BitRate(0);    // rate_to_set_on_first_cnp 0 = not used
  p.rate_increase_period = TimeNs::from_us(300);  // rpg_time_reset 300 us
  p.byte_counter_bytes = 32767ull * 64;           // rpg_byte_reset 32767 x 64 B
  p.fast_recovery_steps = 1;                      // rpg_threshold 1
  p.ai_rate = BitRate::mbps(5);                   // rpg_ai_rate 5 Mb/s
  p.hai_rate = BitRate::mbps(50);                 // rpg_hai_rate 50 Mb/s
  p.hyper_step = DcqcnHyperStep::kConstant;
  p.stage_count = DcqcnStageCount::kAfterIncrease;
  p.cnp_interval = TimeNs::from_us(4);            // min_time_between_cnps
  p.cnp_dscp = 48;                                // cnp_dscp
  p.cnp_pcp = 6;                                  // cnp_802p_prio
  return p;
}

DcqcnParams DcqcnParams::from_set(DcqcnParamSet set, BitRate line) {
  return set == DcqcnParamSet::kPaper ? paper(line) : nvidia(line);
}

std::optional<std::string_view> DcqcnParams::validate() const {
  if (!(g > 0.0 && g <= 1.0)) return "g: must be in (0, 1]";
  if (!(initial_alpha >= 0.0 && initial_alpha <= 1.0)) return "initial_alpha: must be in [0, 1]";
  if (alpha_period <= TimeNs::zero()) return "alpha_period: must be > 0";
  if (rate_reduce_period < TimeNs::zero()) return "rate_reduce_period: must be >= 0";
  if (rate_increase_period <= TimeNs::zero()) return "rate_increase_period: must be > 0";
  if (min_rate.bps() == 0) return "min_rate: must be > 0";
  if (max_rate.bps() != 0 && min_rate > max_rate) return "min_rate: must not exceed max_rate";
  if (min_dec_factor_pct > 100) return "min_dec_factor_pct: must be <= 100";
  if (cnp_interval < TimeNs::zero()) return "cnp_interval: must be >= 0";
  if (cnp_dscp > 63) return "cnp_dscp: must be < 64";
  if (cnp_pcp > 7) return "cnp_pcp: must be < 8";
  return std::nullopt;
}

Dcqcn::Dcqcn(const DcqcnParams& params, BitRate line_rate) : p_(params) {
  max_bps_ = (p_.max_rate.bps() == 0 || p_.max_rate > line_rate) ? line_rate.bps() : p_.max_rate.bps();
  min_bps_ = std::min(p_.min_rate.bps(), max_bps_);
  rc_bps_ = rt_bps_ = max_bps_;
  alpha_ = p_.initial_alpha;
}

// Alpha is evaluated lazily (cc.md 1.7): the periods elapsed since the last
// evaluation are applied at once, so alpha never needs a wakeup of its own.
void Dcqcn::catch_up_alpha(TimeNs now) {
  if (!seen_first_cnp_ || now <= alpha_mark_) return;
  const int64_t k = (now - alpha_mark_).ns() / p_.alpha_period.ns();
  if (k == 0) return;
  const double keep = 1.0 - p_.g;
  int64_t downs = k;
  if (p_.alpha_update == DcqcnAlphaUpdate::kPeriodic) {
    // The period that just ended goes up if it saw a CNP; later ones saw none.
    if (alpha_cnp_seen_) {
      alpha_ = std::min(1.0, keep * alpha_ + p_.g);
      --downs;
    }
    alpha_cnp_seen_ = false;
  }
  // Repeated multiplication for short gaps (exactly what the per-period
  // formula gives), pow() for long idle stretches.
  if (downs <= 64) {
    for (int64_t i = 0; i < downs; ++i) alpha_ *= keep;
  } else {
    alpha_ *= std::pow(keep, static_cast<double>(downs));
  }
  alpha_mark_ += p_.alpha_period * k;
}

void Dcqcn::advance(TimeNs now) {
  for (;;) {
    const TimeNs next = std::min(cut_deadline_, increase_deadline_);
    if (next > now) break;
    if (cut_deadline_ <= increase_deadline_) {
      // A cut due with the increase timer wins: it restarts that timer.
      const TimeNs at = cut_deadline_;
      cut_deadline_ = TimeNs::max();
      catch_up_alpha(at);
      cut(at);
    } else {
      const TimeNs at = increase_deadline_;
      increase_deadline_ = at + p_.rate_increase_period;
      catch_up_alpha(at);
      increase_event(IncreaseCause::kTimer);
    }
  }
  catch_up_alpha(now);
}

TimeNs Dcqcn::next_deadline() const { return std::min(cut_deadline_, increase_deadline_); }

void Dcqcn::on_cnp(TimeNs now) {
  advance(now);
  ++ctr_.cnps;
  const bool first = !seen_first_cnp_;
  if (first) {
    seen_first_cnp_ = true;
    alpha_ = p_.initial_alpha;
    alpha_mark_ = now;
    alpha_cnp_seen_ = false;  // the first CNP sets alpha; it does not also raise it (HPCC model)
    decrease_origin_ = now;
    if (p_.rate_to_set_on_first_cnp.bps() != 0) {
      rc_bps_ = rt_bps_ = std::clamp(p_.rate_to_set_on_first_cnp.bps(), min_bps_, max_bps_);
    }
  }
  if (p_.rate_reduce_period == TimeNs::zero()) {
    cut(now);  // with the alpha from before this CNP (paper order)
  } else if (cut_deadline_ == TimeNs::max()) {
    // End of the decrease period this CNP falls in.
    const int64_t n = (now - decrease_origin_).ns() / p_.rate_reduce_period.ns();
    cut_deadline_ = decrease_origin_ + p_.rate_reduce_period * (n + 1);
  }
  if (p_.alpha_update == DcqcnAlphaUpdate::kOnCnp) {
    alpha_ = (1.0 - p_.g) * alpha_ + p_.g;
    alpha_mark_ = now;  // restart the alpha timer
  } else if (!first) {
    alpha_cnp_seen_ = true;
  }
}

void Dcqcn::cut(TimeNs now) {
  if (p_.clamp_tgt_rate || bc_ > 0 || (p_.clamp_tgt_rate_after_time_inc && t_ > 0)) {
    rt_bps_ = rc_bps_;
  }
  uint64_t dec = static_cast<uint64_t>(static_cast<double>(rc_bps_) * alpha_ / 2.0);
  if (p_.min_dec_factor_pct > 0) {
    const uint64_t max_dec = static_cast<uint64_t>(
        static_cast<U128>(rc_bps_) * (100 - p_.min_dec_factor_pct) / 100);
    dec = std::min(dec, max_dec);
  }
  dec = std::min(dec, rc_bps_);
  uint64_t rc = rc_bps_ - dec;
  if (rc < min_bps_) {
    rc = min_bps_;
    ++ctr_.min_rate_clamps;
  }
  rc_bps_ = rc;
  rt_bps_ = std::max(rt_bps_, rc_bps_);  // only when the min-rate floor lifted Rc above Rt
  t_ = bc_ = 0;
  bytes_ = 0;
  increase_deadline_ = sat_add(now, p_.rate_increase_period);
  stage_ = DcqcnStage::kDecrease;
  ++ctr_.cuts;
}

void Dcqcn::on_tx_bytes(uint64_t bytes, TimeNs now) {
  advance(now);
  if (stage_ == DcqcnStage::kIdle || p_.byte_counter_bytes == 0) return;
  bytes_ += bytes;
  while (bytes_ >= p_.byte_counter_bytes && stage_ != DcqcnStage::kIdle) {
    bytes_ -= p_.byte_counter_bytes;
    increase_event(IncreaseCause::kBytes);
  }
}

void Dcqcn::increase_event(IncreaseCause cause) {
  uint32_t& stage_counter = cause == IncreaseCause::kTimer ? t_ : bc_;
  if (cause == IncreaseCause::kTimer) {
    ++ctr_.timer_events;
  } else {
    ++ctr_.byte_counter_events;
  }
  if (p_.stage_count == DcqcnStageCount::kBeforeIncrease) {
    ++stage_counter;
    increase();
  } else {
    increase();
    ++stage_counter;
  }
}

void Dcqcn::increase() {
  const uint32_t f = p_.fast_recovery_steps;
  const uint32_t hi = std::max(t_, bc_);
  const uint32_t lo = std::min(t_, bc_);
  if (hi < f) {
    stage_ = DcqcnStage::kFastRecovery;
    ++ctr_.fast_recovery_steps;
  } else if (lo > f) {
    const uint64_t i = p_.hyper_step == DcqcnHyperStep::kLinear ? lo - f : 1;
    const U128 rt = static_cast<U128>(rt_bps_) + static_cast<U128>(i) * p_.hai_rate.bps();
    rt_bps_ = static_cast<uint64_t>(std::min<U128>(rt, max_bps_));
    stage_ = DcqcnStage::kHyper;
    ++ctr_.hyper_steps;
  } else {
    rt_bps_ = std::min(max_bps_, rt_bps_ + p_.ai_rate.bps());
    stage_ = DcqcnStage::kAdditive;
    ++ctr_.additive_steps;
  }
  // Rounded up so that Rc reaches Rt (and max_rate) exactly.
  rc_bps_ = static_cast<uint64_t>((static_cast<U128>(rt_bps_) + rc_bps_ + 1) / 2);
  if (rc_bps_ >= max_bps_) {
    // Fully recovered: the limiter is released until the next CNP.
    rc_bps_ = rt_bps_ = max_bps_;
    stage_ = DcqcnStage::kIdle;
    increase_deadline_ = TimeNs::max();
    t_ = bc_ = 0;
    bytes_ = 0;
  }
}

}  // namespace sf::nic
