// NSCC. See nscc.h and docs/cc.md "NSCC".
#include "nic/cc/nscc.h"

#include <algorithm>

namespace sf::nic {

std::string_view to_string(NsccQuadrant q) {
  switch (q) {
    case NsccQuadrant::kNone: return "none";
    case NsccQuadrant::kProportionalIncrease: return "proportional_increase";
    case NsccQuadrant::kFairIncrease: return "fair_increase";
    case NsccQuadrant::kMultiplicativeDecrease: return "multiplicative_decrease";
    case NsccQuadrant::kNoChange: return "no_change";
  }
  return "?";
}

std::optional<std::string_view> NsccParams::validate() const {
  if (mtu_bytes == 0) return "mtu_bytes: must be > 0";
  if (base_rtt.ns() <= 0) return "base_rtt: must be > 0";
  if (target_qdelay.ns() <= 0) return "target_qdelay: must be > 0";
  if (!(max_cwnd_bdp > 0)) return "max_cwnd_bdp: must be > 0";
  if (!(initial_cwnd_bdp > 0 && initial_cwnd_bdp <= max_cwnd_bdp)) return "initial_cwnd_bdp: must be in (0, max_cwnd_bdp]";
  if (!(pi_bdp >= 0)) return "pi_bdp: must be >= 0";
  if (!(fi_mtus >= 0)) return "fi_mtus: must be >= 0";
  if (!(gamma > 0 && gamma <= 1)) return "gamma: must be in (0, 1]";
  if (!(max_md > 0 && max_md < 1)) return "max_md: must be in (0, 1)";
  if (!(qa_threshold_targets >= 1)) return "qa_threshold_targets: must be >= 1";
  if (!(delay_ewma > 0 && delay_ewma <= 1)) return "delay_ewma: must be in (0, 1]";
  return std::nullopt;
}

Nscc::Nscc(const NsccParams& params, BitRate line_rate)
    : p_(params), line_bps_(line_rate.bps()), base_rtt_(params.base_rtt) {
  bdp_ = static_cast<double>(line_bps_) / 8e9 * static_cast<double>(p_.base_rtt.ns());
  min_cwnd_ = p_.min_cwnd_bytes != 0 ? p_.min_cwnd_bytes : p_.mtu_bytes;
  max_cwnd_ = std::max(p_.max_cwnd_bdp * bdp_, min_cwnd_);
  cwnd_ = std::clamp(p_.initial_cwnd_bdp * bdp_, min_cwnd_, max_cwnd_);
}

void Nscc::clamp() { cwnd_ = std::clamp(cwnd_, min_cwnd_, max_cwnd_); }

void Nscc::quick_adapt(uint64_t inflight, TimeNs now) {
  if (!qa_end_) {
    qa_end_ = now + base_rtt_ + p_.target_qdelay;
    return;
  }
  if (now < *qa_end_) return;
  if (trigger_qa_ && bytes_to_ignore_ == 0) {
    const double achieved = std::max(static_cast<double>(achieved_bytes_), min_cwnd_);
    if (achieved < cwnd_) {
      cwnd_ = achieved;
      inc_bytes_ = 0;
      bytes_to_ignore_ = inflight;  // their signals predate the cut
      ++ctr_.quick_adapts;
    }
    trigger_qa_ = false;
  }
  achieved_bytes_ = 0;
  qa_end_ = now + base_rtt_ + p_.target_qdelay;
}

void Nscc::on_ack(const AckEvent& a, TimeNs now) {
  ++ctr_.acks;
  achieved_bytes_ += a.acked_bytes;

  // Receiver back-pressure, whatever else the ACK says.
  if (a.rcv_cwnd_pen > 0) {
    const uint64_t pen = a.rcv_cwnd_pen > 127 ? 127 : a.rcv_cwnd_pen;
    cwnd_ -= static_cast<double>((a.acked_bytes * pen) >> 7);
    clamp();
    ++ctr_.penalties;
  }
  if (a.kind == AckKind::kNackTrim) {
    ++ctr_.trims;
    trigger_qa_ = true;
  }

  double delay_ns = -1;
  if (a.has_rtt()) {
    if (a.rtt < base_rtt_) base_rtt_ = a.rtt;
    delay_ns = static_cast<double>((a.rtt - base_rtt_).ns());
    avg_delay_ns_ = ctr_.acks == 1 ? delay_ns : (1 - p_.delay_ewma) * avg_delay_ns_ + p_.delay_ewma * delay_ns;
    if (delay_ns > p_.qa_threshold_targets * static_cast<double>(p_.target_qdelay.ns())) trigger_qa_ = true;
  }
  quick_adapt(a.inflight_bytes, now);

  last_q_ = NsccQuadrant::kNone;
  if (bytes_to_ignore_ > 0) {
    // Packets sent before a quick adapt: their delay and marks are stale.
    bytes_to_ignore_ = a.acked_bytes >= bytes_to_ignore_ ? 0 : bytes_to_ignore_ - a.acked_bytes;
    ++ctr_.ignored;
  } else if (a.kind == AckKind::kAck && delay_ns >= 0) {
    const double target = static_cast<double>(p_.target_qdelay.ns());
    const double acked = static_cast<double>(a.acked_bytes);
    const bool high = delay_ns >= target;
    if (!a.ecn_echo && !high) {
      last_q_ = NsccQuadrant::kProportionalIncrease;
      inc_bytes_ += p_.pi_bdp * bdp_ * acked * (target - delay_ns) / target;
      ++ctr_.proportional;
    } else if (!a.ecn_echo) {
      last_q_ = NsccQuadrant::kFairIncrease;
      inc_bytes_ += p_.fi_mtus * p_.mtu_bytes * acked;
      ++ctr_.fair;
    } else if (high) {
      last_q_ = NsccQuadrant::kMultiplicativeDecrease;
      // At most once per RTT (this ACK's sample): the ACKs of the next
      // round trip still carry the queue the cut has not drained yet.
      if (!last_decrease_ || now - *last_decrease_ >= a.rtt) {
        const double d = std::max(avg_delay_ns_, delay_ns);
        cwnd_ *= std::max(1 - p_.gamma * (d - target) / d, 1 - p_.max_md);
        inc_bytes_ = 0;
        last_decrease_ = now;
        ++ctr_.decreases;
      } else {
        ++ctr_.decreases_held;
      }
    } else {
      last_q_ = NsccQuadrant::kNoChange;
      ++ctr_.no_change;
    }
  }

  // Batched increase, once per base RTT.
  if (!last_adjust_) {
    last_adjust_ = now;
  } else if (now - *last_adjust_ >= base_rtt_) {
    if (inc_bytes_ > 0) {
      cwnd_ += inc_bytes_ / cwnd_;
      ++ctr_.adjustments;
    }
    inc_bytes_ = 0;
    last_adjust_ = now;
  }
  clamp();
}

// An RTO does not arm quick adapt (docs/cc.md "NSCC"): as in htsim's UEC
// model, a timeout is the transport's business (retransmission, and for MRC
// the EV's retirement); congestion reaches NSCC as trims, delay and ECN. With
// MRC spraying, a timeout mostly means a dead path: arming quick adapt on it
// cut a QP crossing a blackholed spine to one MTU again and again (scenario d).
void Nscc::on_rto(TimeNs /*now*/) { ++ctr_.rtos; }

}  // namespace sf::nic
