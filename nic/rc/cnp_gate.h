// CnpGate: the notification point's per-QP decision whether a CE-marked
// arrival produces a CNP. For now "at most one CNP per interval" (DCQCN's
// classic NP rule, endpoint.md 1.6). CC SEAM: nic/cc's CnpLimiter has the
// same should_send(now) shape; swap the alias in nic/rc/cc_seam.h.
#pragma once

#include "common/time.h"

namespace sf::nic::rc {

class IntervalCnpGate {
 public:
  explicit IntervalCnpGate(TimeNs interval = TimeNs::from_us(50)) : interval_(interval) {}
  // True when a CNP may go out at `now` (and records it as sent).
  bool should_send(TimeNs now) {
    if (sent_once_ && now < last_ + interval_) return false;
    sent_once_ = true;
    last_ = now;
    return true;
  }
  TimeNs interval() const { return interval_; }

 private:
  TimeNs interval_;
  TimeNs last_{0};
  bool sent_once_ = false;
};

}  // namespace sf::nic::rc
