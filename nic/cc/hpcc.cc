// HPCC. See hpcc.h and docs/cc.md "HPCC".
#include "nic/cc/hpcc.h"

#include <algorithm>
#include <cstring>

namespace sf::nic {

std::optional<std::string_view> HpccParams::validate() const {
  if (base_rtt.ns() <= 0) return "base_rtt: must be > 0";
  if (!(eta > 0 && eta <= 1)) return "eta: must be in (0, 1]";
  if (max_stage > 1000) return "max_stage: must be <= 1000";
  if (min_rate.bps() == 0) return "min_rate: must be > 0";
  if (initial_rate.bps() != 0 && initial_rate.bps() < min_rate.bps()) return "initial_rate: must be >= min_rate (or 0 = line rate)";
  return std::nullopt;
}

Hpcc::Hpcc(const HpccParams& params, BitRate line_rate)
    : p_(params), line_bps_(line_rate.bps()), rate_bps_(line_rate.bps()) {
  t_ns_ = static_cast<double>(p_.base_rtt.ns());
  inv_t_ = 1.0 / t_ns_;
  bps_per_window_byte_ = 8e9 / t_ns_;
  w_init_ = static_cast<double>(line_bps_) / 8e9 * t_ns_;
  const double ai_bps = p_.rate_ai.bps() != 0 ? static_cast<double>(p_.rate_ai.bps())
                                              : static_cast<double>(line_bps_) * 0.0004;
  w_ai_ = ai_bps / 8e9 * t_ns_;
  w_min_ = std::min(static_cast<double>(p_.min_rate.bps()) / 8e9 * t_ns_, w_init_);
  w_start_ = p_.initial_rate.bps() == 0
                 ? w_init_
                 : std::clamp(static_cast<double>(p_.initial_rate.bps()) / 8e9 * t_ns_, w_min_, w_init_);
  wc_ = w_start_;
  w_ = w_start_;
  if (w_start_ < w_init_) rate_bps_ = std::max<uint64_t>(static_cast<uint64_t>(w_ * bps_per_window_byte_), 1);
}

void Hpcc::on_ack(const AckEvent& a, TimeNs /*now*/) {
  ++ctr_.acks;
  const std::size_t n = a.int_hops.size();
  if (n == 0 || n > kMaxHops) {
    ++ctr_.acks_without_int;
    return;
  }
  if (!seeded_ || n != nhops_) {
    seeded_ = true;
    nhops_ = static_cast<uint8_t>(n);
    std::memcpy(last_.data(), a.int_hops.data(), n * sizeof(wire::IntHop));
    last_update_seq_ = a.snd_nxt;
    ++ctr_.seeds;
    return;
  }
  const bool commit = a.ack_seq > last_update_seq_;

  // MeasureInflight. Per hop u = (min(q, q') / T + dtx / dts) / B, with B in
  // bytes/ns = rate_mbps / 8000: one division per hop.
  double u_max = 0;
  double tau = 0;
  bool any = false;
  for (std::size_t i = 0; i < n; ++i) {
    const wire::IntHop& h = a.int_hops[i];
    const uint32_t dts = wire::int_ts_delta_ns(h, last_[i]);
    const uint32_t rate_mbps = h.rate_mbps.value();
    if (dts == 0 || dts > (1u << 31) || rate_mbps == 0) {
      ++ctr_.stale_hops;
      continue;
    }
    const double q = std::min(h.qlen_bytes.value(), last_[i].qlen_bytes.value());
    const double dtx = static_cast<double>(wire::int_tx_delta_bytes(h, last_[i]));
    const double d = static_cast<double>(dts);
    const double u = (q * d * inv_t_ + dtx) * 8000.0 / (d * rate_mbps);
    if (!any || u > u_max) {
      u_max = u;
      tau = d;
    }
    any = true;
  }
  if (any) {
    tau = std::min(tau, t_ns_);
    u_ = (u_ * (t_ns_ - tau) + u_max * tau) * inv_t_;

    // ComputeWind.
    double w;
    uint32_t stage;
    if (u_ >= p_.eta || inc_stage_ >= p_.max_stage) {
      w = wc_ * p_.eta / u_ + w_ai_;
      stage = 0;
      ++ctr_.md_steps;
    } else {
      w = wc_ + w_ai_;
      stage = inc_stage_ + 1;
      ++ctr_.ai_steps;
    }
    w_ = std::clamp(w, w_min_, w_init_);
    if (commit) {
      wc_ = w_;
      inc_stage_ = stage;
      ++ctr_.commits;
    } else {
      ++ctr_.fast_reacts;
    }
    rate_bps_ = std::max<uint64_t>(static_cast<uint64_t>(w_ * bps_per_window_byte_), 1);
  }
  if (commit || p_.update_hops_every_ack) std::memcpy(last_.data(), a.int_hops.data(), n * sizeof(wire::IntHop));
  if (commit) last_update_seq_ = a.snd_nxt;
}

}  // namespace sf::nic
