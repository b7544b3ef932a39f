// Swift. See swift.h and docs/cc.md "Swift".
#include "nic/cc/swift.h"

#include <algorithm>
#include <cmath>

namespace sf::nic {

std::optional<std::string_view> SwiftParams::validate() const {
  if (mtu_bytes == 0) return "mtu_bytes: must be > 0";
  if (!(ai > 0)) return "ai: must be > 0";
  if (!(endpoint_ai > 0)) return "endpoint_ai: must be > 0";
  if (!(beta > 0 && beta <= 1)) return "beta: must be in (0, 1]";
  if (!(max_mdf > 0 && max_mdf < 1)) return "max_mdf: must be in (0, 1)";
  if (!(min_cwnd > 0)) return "min_cwnd: must be > 0";
  if (!(max_cwnd >= min_cwnd)) return "max_cwnd: must be >= min_cwnd";
  if (!(min_ecwnd > 0)) return "min_ecwnd: must be > 0";
  if (!(max_ecwnd >= min_ecwnd)) return "max_ecwnd: must be >= min_ecwnd";
  if (!(initial_cwnd >= 0)) return "initial_cwnd: must be >= 0 (0 = one BDP)";
  if (base_target.ns() <= 0) return "base_target: must be > 0";
  if (per_hop.ns() < 0) return "per_hop: must be >= 0";
  if (fs_range.ns() < 0) return "fs_range: must be >= 0";
  if (!(fs_min_cwnd > 0)) return "fs_min_cwnd: must be > 0";
  if (!(fs_max_cwnd > fs_min_cwnd)) return "fs_max_cwnd: must be > fs_min_cwnd";
  if (endpoint_target.ns() <= 0) return "endpoint_target: must be > 0";
  if (!(rtt_ewma_old >= 0 && rtt_ewma_old < 1)) return "rtt_ewma_old: must be in [0, 1)";
  if (retx_reset_threshold == 0) return "retx_reset_threshold: must be > 0";
  return std::nullopt;
}

Swift::Swift(const SwiftParams& params, BitRate line_rate)
    : p_(params), line_bps_(line_rate.bps()), rate_bps_(line_rate.bps()) {
  // cc.md 3.2: alpha = fs_range / (1/sqrt(fs_min) - 1/sqrt(fs_max)), beta = -alpha / sqrt(fs_max).
  const double range = static_cast<double>(p_.fs_range.ns());
  fs_alpha_ns_ = range / (1.0 / std::sqrt(p_.fs_min_cwnd) - 1.0 / std::sqrt(p_.fs_max_cwnd));
  fs_beta_ns_ = -fs_alpha_ns_ / std::sqrt(p_.fs_max_cwnd);
  double init = p_.initial_cwnd;
  if (init == 0) {
    const double bdp_bytes = static_cast<double>(line_bps_) / 8e9 * static_cast<double>(p_.base_target.ns());
    init = bdp_bytes / p_.mtu_bytes;
  }
  fcwnd_ = std::clamp(init, p_.min_cwnd, p_.max_cwnd);
  ecwnd_ = std::clamp(init, p_.min_ecwnd, p_.max_ecwnd);
  update_outputs();
}

TimeNs Swift::fabric_target(double fcwnd, uint8_t hops) const {
  const double fs = std::clamp(fs_alpha_ns_ / std::sqrt(fcwnd) + fs_beta_ns_, 0.0,
                               static_cast<double>(p_.fs_range.ns()));
  return p_.base_target + p_.per_hop * hops + TimeNs(static_cast<int64_t>(fs));
}

bool Swift::can_decrease(const std::optional<TimeNs>& last, TimeNs rtt, TimeNs now) {
  return !last || now - *last >= rtt;
}

void Swift::on_ack(const AckEvent& a, TimeNs now) {
  ++ctr_.acks;
  if (a.kind != AckKind::kAck) {
    // Fast recovery (a NACK / SACK hole): one cut by max_mdf per RTT.
    retx_cnt_ = 0;
    if (can_decrease(last_fabric_decrease_, rtt_estimate(), now)) {
      fcwnd_ = std::max(fcwnd_ * (1 - p_.max_mdf), p_.min_cwnd);
      last_fabric_decrease_ = now;
      ++ctr_.loss_cuts;
    }
    update_outputs();
    return;
  }
  retx_cnt_ = 0;
  if (!a.has_rtt()) return;
  const TimeNs rtt = a.rtt;
  srtt_ = srtt_.ns() == 0 ? rtt
                          : TimeNs(static_cast<int64_t>(p_.rtt_ewma_old * static_cast<double>(srtt_.ns()) +
                                                        (1 - p_.rtt_ewma_old) * static_cast<double>(rtt.ns())));
  const TimeNs remote = std::clamp(a.remote_delay, TimeNs(0), rtt);
  const double fabric_ns = static_cast<double>((rtt - remote).ns());
  const double endpoint_ns = static_cast<double>(remote.ns());
  const double acked_pkts = static_cast<double>(a.acked_bytes) / p_.mtu_bytes;

  // Fabric window against the scaled target.
  const double ft = static_cast<double>(fabric_target(fcwnd_, a.hops).ns());
  if (fabric_ns < ft) {
    fcwnd_ += fcwnd_ >= 1 ? p_.ai * acked_pkts / fcwnd_ : p_.ai * acked_pkts;
    ++ctr_.fabric_increases;
  } else if (can_decrease(last_fabric_decrease_, rtt, now)) {
    fcwnd_ *= std::max(1 - p_.beta * (fabric_ns - ft) / fabric_ns, 1 - p_.max_mdf);
    last_fabric_decrease_ = now;
    ++ctr_.fabric_decreases;
  } else {
    ++ctr_.decreases_held;
  }
  fcwnd_ = std::clamp(fcwnd_, p_.min_cwnd, p_.max_cwnd);

  // Endpoint window against the fixed endpoint target (remote_delay 0: the
  // responder reported no turnaround, i.e. no endpoint delay).
  {
    const double et = static_cast<double>(p_.endpoint_target.ns());
    if (endpoint_ns < et) {
      ecwnd_ += ecwnd_ >= 1 ? p_.endpoint_ai * acked_pkts / ecwnd_ : p_.endpoint_ai * acked_pkts;
      ++ctr_.endpoint_increases;
    } else if (can_decrease(last_endpoint_decrease_, rtt, now)) {
      ecwnd_ *= std::max(1 - p_.beta * (endpoint_ns - et) / endpoint_ns, 1 - p_.max_mdf);
      last_endpoint_decrease_ = now;
      ++ctr_.endpoint_decreases;
    } else {
      ++ctr_.decreases_held;
    }
    ecwnd_ = std::clamp(ecwnd_, p_.min_ecwnd, p_.max_ecwnd);
  }
  update_outputs();
}

void Swift::on_rto(TimeNs now) {
  ++ctr_.rtos;
  ++retx_cnt_;
  if (retx_cnt_ >= p_.retx_reset_threshold) {
    fcwnd_ = p_.min_cwnd;
    last_fabric_decrease_ = now;
  } else if (can_decrease(last_fabric_decrease_, rtt_estimate(), now)) {
    fcwnd_ = std::max(fcwnd_ * (1 - p_.max_mdf), p_.min_cwnd);
    last_fabric_decrease_ = now;
  }
  update_outputs();
}

void Swift::update_outputs() {
  const double w = cwnd();
  if (w >= 1) {
    window_bytes_ = static_cast<uint64_t>(w * p_.mtu_bytes);
    rate_bps_ = line_bps_;
    return;
  }
  // cwnd < 1: one packet in flight, one packet every srtt / cwnd.
  window_bytes_ = p_.mtu_bytes;
  const double bps = w * p_.mtu_bytes * 8e9 / static_cast<double>(rtt_estimate().ns());
  rate_bps_ = std::clamp<uint64_t>(static_cast<uint64_t>(bps), 1, line_bps_);
}

}  // namespace sf::nic
