// The congestion-control seams of a Qp (cc_seam.h, docs/nic.md "CC seams"):
// nic/cc's CongestionControl variant (DCQCN RP) driven by CNPs, transmitted
// bytes and its own timers; after every event the pacing rate follows it.
// The host calls next_deadline()/advance() of every active QP, so a CC timer
// reported here is honoured in both drivers.
#include "nic/rc/qp.h"

namespace sf::nic::rc {

void Qp::set_congestion_control(const CcChoice& c, BitRate line_rate) {
  cc_ = make_congestion_control(c, line_rate);
  cc_active_ = c.algorithm != CcAlgorithm::kNone;
  apply_cc_rate();
}

void Qp::apply_cc_rate() {
  BitRate r = rate_limit_;
  if (cc_active_) {
    const BitRate c = nic::cc_rate(cc_);
    r = rate_limit_.bps() != 0 && rate_limit_.bps() < c.bps() ? rate_limit_ : c;
  }
  if (r == rate_) return;
  rate_ = r;
  // The bucket holds max_burst_sz at the pacing rate in force (a 128-bit
  // division only when the rate changed and there is a bucket).
  pace_burst_ns_ = pace_burst_bytes_ == 0 ? TimeNs(0) : rate_.tx_time(pace_burst_bytes_);
}

void Qp::cc_on_cnp(TimeNs now) {
  if (!cc_active_) return;
  nic::cc_on_cnp(cc_, now);
  apply_cc_rate();
}

void Qp::cc_on_tx_bytes(uint64_t bytes, TimeNs now) {
  if (!cc_active_) return;
  nic::cc_on_tx_bytes(cc_, bytes, now);
  apply_cc_rate();
}

TimeNs Qp::cc_next_deadline() const { return cc_active_ ? nic::cc_next_deadline(cc_) : TimeNs::max(); }

void Qp::cc_advance(TimeNs now) {
  if (!cc_active_) return;
  nic::cc_advance(cc_, now);
  apply_cc_rate();
}

}  // namespace sf::nic::rc
