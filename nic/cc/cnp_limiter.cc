// DCQCN NP CNP spacing (shared/reference/cc.md 1.3).
#include "nic/cc/cnp_limiter.h"

namespace sf::nic {

std::string_view to_string(CnpCoalesce c) {
  switch (c) {
    case CnpCoalesce::kSuppress: return "suppress";
    case CnpCoalesce::kDeferred: return "deferred";
  }
  return "?";
}

bool CnpLimiter::should_send(TimeNs now) {
  if (!sent_any_ || now - last_sent_ >= interval_) {
    sent_any_ = true;
    pending_ = false;  // this CNP also answers any mark still owed
    last_sent_ = now;
    ++ctr_.sent;
    return true;
  }
  ++ctr_.suppressed;
  if (mode_ == CnpCoalesce::kDeferred) pending_ = true;
  return false;
}

bool CnpLimiter::advance(TimeNs now) {
  if (!pending_ || now < sat_add(last_sent_, interval_)) return false;
  pending_ = false;
  last_sent_ = now;
  ++ctr_.sent;
  ++ctr_.deferred;
  return true;
}

}  // namespace sf::nic
