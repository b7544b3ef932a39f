// BBR-style CC. See bbr.h and docs/cc.md "BBR".
#include "nic/cc/bbr.h"

#include <algorithm>

namespace sf::nic {

std::string_view to_string(BbrPhase p) {
  switch (p) {
    case BbrPhase::kStartup: return "startup";
    case BbrPhase::kDrain: return "drain";
    case BbrPhase::kProbeBw: return "probe_bw";
    case BbrPhase::kProbeRtt: return "probe_rtt";
  }
  return "?";
}

std::optional<std::string_view> BbrParams::validate() const {
  if (mtu_bytes == 0) return "mtu_bytes: must be > 0";
  if (!(high_gain > 1)) return "high_gain: must be > 1";
  if (!(drain_gain > 0 && drain_gain < 1)) return "drain_gain: must be in (0, 1)";
  if (!(cwnd_gain >= 1)) return "cwnd_gain: must be >= 1";
  for (double g : probe_bw_gains) {
    if (!(g > 0)) return "probe_bw_gains: every gain must be > 0";
  }
  if (probe_bw_start_phase >= kBbrCycleLen) return "probe_bw_start_phase: must be < 8";
  if (bw_window_rounds == 0) return "bw_window_rounds: must be > 0";
  if (rtprop_window.ns() <= 0) return "rtprop_window: must be > 0";
  if (probe_rtt_time.ns() < 0) return "probe_rtt_time: must be >= 0";
  if (!(full_bw_thresh > 1)) return "full_bw_thresh: must be > 1";
  if (full_bw_cnt == 0) return "full_bw_cnt: must be > 0";
  if (min_cwnd_pkts == 0) return "min_cwnd_pkts: must be > 0";
  if (!(pacing_margin >= 0 && pacing_margin < 1)) return "pacing_margin: must be in [0, 1)";
  if (initial_cwnd_pkts < min_cwnd_pkts) return "initial_cwnd_pkts: must be >= min_cwnd_pkts";
  return std::nullopt;
}

Bbr::Bbr(const BbrParams& params, BitRate line_rate)
    : p_(params),
      line_bps_(line_rate.bps()),
      pacing_gain_(params.high_gain),
      cwnd_gain_(params.high_gain),
      cwnd_bytes_(uint64_t{params.initial_cwnd_pkts} * params.mtu_bytes),
      bdp_(uint64_t{params.initial_cwnd_pkts} * params.mtu_bytes),
      rate_bps_(params.initial_rate.bps() != 0 ? std::min(params.initial_rate.bps(), line_rate.bps())
                                               : line_rate.bps()) {}

// Called whenever BtlBw or RTprop may have changed (not per target_cwnd()).
void Bbr::refresh_bdp() {
  if (rtprop_ == TimeNs::max() || max_bw_bps() == 0) {
    bdp_ = uint64_t{p_.initial_cwnd_pkts} * p_.mtu_bytes;
    return;
  }
  bdp_ = static_cast<uint64_t>(static_cast<double>(max_bw_bps()) / 8e9 * static_cast<double>(rtprop_.ns()));
}

uint64_t Bbr::target_cwnd(double gain) const {
  const uint64_t t = static_cast<uint64_t>(gain * static_cast<double>(bdp_));
  return std::max<uint64_t>(t, uint64_t{p_.min_cwnd_pkts} * p_.mtu_bytes);
}

// Linux lib/win_minmax.c minmax_running_max, time = round count.
void Bbr::update_max_bw(uint64_t round, uint64_t bps) {
  const uint64_t win = p_.bw_window_rounds;
  const BwSample v{round, bps};
  if (bps >= bw_[0].bps || round - bw_[2].round > win) {
    bw_ = {v, v, v};
    return;
  }
  if (bps >= bw_[1].bps) {
    bw_[2] = bw_[1] = v;
  } else if (bps >= bw_[2].bps) {
    bw_[2] = v;
  }
  const uint64_t dt = round - bw_[0].round;
  if (dt > win) {
    bw_[0] = bw_[1];
    bw_[1] = bw_[2];
    bw_[2] = v;
    if (round - bw_[0].round > win) {
      bw_[0] = bw_[1];
      bw_[1] = bw_[2];
      bw_[2] = v;
    }
  } else if (bw_[1].round == bw_[0].round && dt > win / 4) {
    bw_[2] = bw_[1] = v;
  } else if (bw_[2].round == bw_[1].round && dt > win / 2) {
    bw_[2] = v;
  }
}

void Bbr::check_full_bw(bool round_start, bool app_limited) {
  if (filled_pipe_ || !round_start || app_limited) return;
  if (static_cast<double>(max_bw_bps()) >= static_cast<double>(full_bw_bps_) * p_.full_bw_thresh) {
    full_bw_bps_ = max_bw_bps();
    full_bw_rounds_ = 0;
    return;
  }
  if (++full_bw_rounds_ >= p_.full_bw_cnt) filled_pipe_ = true;
}

void Bbr::enter_probe_bw(TimeNs now) {
  phase_ = BbrPhase::kProbeBw;
  cycle_idx_ = p_.probe_bw_start_phase;
  cycle_stamp_ = now;
}

void Bbr::on_ack(const AckEvent& a, TimeNs now) {
  ++ctr_.acks;
  delivered_ += a.acked_bytes;
  const uint64_t inflight = a.inflight_bytes;

  // Round trips.
  bool round_start = false;
  if (!round_started_ || a.ack_seq > round_end_seq_) {
    round_started_ = true;
    round_end_seq_ = a.snd_nxt;
    ++round_count_;
    ++ctr_.rounds;
    round_start = true;
  }

  // BtlBw: app-limited samples only when they raise the max.
  if (a.delivery_interval.ns() > 0 && a.delivered_bytes > 0) {
    const uint64_t bps = static_cast<uint64_t>(static_cast<double>(a.delivered_bytes) * 8e9 /
                                               static_cast<double>(a.delivery_interval.ns()));
    if (!a.app_limited || bps >= max_bw_bps()) {
      const uint64_t before = max_bw_bps();
      update_max_bw(round_count_, bps);
      if (max_bw_bps() != before) refresh_bdp();
      ++ctr_.bw_samples;
    } else {
      ++ctr_.app_limited_ignored;
    }
  }

  // PROBE_BW gain cycling (bbr_is_next_cycle_phase).
  if (phase_ == BbrPhase::kProbeBw) {
    const double gain = p_.probe_bw_gains[cycle_idx_];
    const bool full_length = rtprop_ != TimeNs::max() && now - cycle_stamp_ > rtprop_;
    bool next = full_length;
    if (gain > 1) {
      next = full_length && (a.kind != AckKind::kAck || inflight >= target_cwnd(gain));
    } else if (gain < 1) {
      next = full_length || inflight <= target_cwnd(1.0);
    }
    if (next) {
      cycle_idx_ = (cycle_idx_ + 1) % kBbrCycleLen;
      cycle_stamp_ = now;
    }
  }

  check_full_bw(round_start, a.app_limited);
  if (phase_ == BbrPhase::kStartup && filled_pipe_) phase_ = BbrPhase::kDrain;
  if (phase_ == BbrPhase::kDrain && inflight <= target_cwnd(1.0)) enter_probe_bw(now);

  // RTprop and PROBE_RTT (bbr_update_min_rtt).
  const bool expired = rtprop_ != TimeNs::max() && now - rtprop_stamp_ > p_.rtprop_window;
  if (a.has_rtt() && (a.rtt < rtprop_ || expired)) {
    rtprop_ = a.rtt;
    rtprop_stamp_ = now;
    refresh_bdp();
  }
  if (expired && phase_ != BbrPhase::kProbeRtt) {
    phase_ = BbrPhase::kProbeRtt;
    probe_rtt_done_.reset();
    ++ctr_.probe_rtt_entries;
  }
  if (phase_ == BbrPhase::kProbeRtt) {
    if (!probe_rtt_done_) {
      if (inflight <= uint64_t{p_.min_cwnd_pkts} * p_.mtu_bytes) {
        probe_rtt_done_ = now + p_.probe_rtt_time;
        probe_rtt_round_done_ = false;
        round_end_seq_ = a.snd_nxt;  // the round that must pass starts now
      }
    } else {
      if (round_start) probe_rtt_round_done_ = true;
      if (probe_rtt_round_done_ && now >= *probe_rtt_done_) {
        rtprop_stamp_ = now;
        if (filled_pipe_) {
          enter_probe_bw(now);
        } else {
          phase_ = BbrPhase::kStartup;
        }
      }
    }
  }

  // Gains per phase.
  switch (phase_) {
    case BbrPhase::kStartup: pacing_gain_ = p_.high_gain; cwnd_gain_ = p_.high_gain; break;
    case BbrPhase::kDrain: pacing_gain_ = p_.drain_gain; cwnd_gain_ = p_.high_gain; break;
    case BbrPhase::kProbeBw: pacing_gain_ = p_.probe_bw_gains[cycle_idx_]; cwnd_gain_ = p_.cwnd_gain; break;
    case BbrPhase::kProbeRtt: pacing_gain_ = 1; cwnd_gain_ = 1; break;
  }
  set_outputs(a.acked_bytes, inflight);
}

void Bbr::set_outputs(uint64_t acked, uint64_t /*inflight*/) {
  // Pacing (bbr_set_pacing_rate): in STARTUP the rate only grows.
  if (max_bw_bps() > 0 && (max_bw_bps() != paced_bw_ || pacing_gain_ != paced_gain_)) {
    paced_bw_ = max_bw_bps();
    paced_gain_ = pacing_gain_;
    const double r = pacing_gain_ * static_cast<double>(max_bw_bps()) * (1 - p_.pacing_margin);
    const uint64_t bps = std::clamp<uint64_t>(static_cast<uint64_t>(r), 1, line_bps_);
    if (filled_pipe_ || bps > rate_bps_ || ctr_.bw_samples == 1) rate_bps_ = bps;
  }
  // Window (bbr_set_cwnd).
  const uint64_t min_cwnd = uint64_t{p_.min_cwnd_pkts} * p_.mtu_bytes;
  const uint64_t target = target_cwnd(cwnd_gain_);
  if (filled_pipe_) {
    cwnd_bytes_ = std::min(cwnd_bytes_ + acked, target);
  } else if (cwnd_bytes_ < target || delivered_ < uint64_t{p_.initial_cwnd_pkts} * p_.mtu_bytes) {
    cwnd_bytes_ += acked;
  }
  cwnd_bytes_ = std::max(cwnd_bytes_, min_cwnd);
  if (phase_ == BbrPhase::kProbeRtt) cwnd_bytes_ = std::min(cwnd_bytes_, min_cwnd);
}

void Bbr::on_rto(TimeNs /*now*/) {
  ++ctr_.rtos;
  cwnd_bytes_ = uint64_t{p_.min_cwnd_pkts} * p_.mtu_bytes;
}

}  // namespace sf::nic
