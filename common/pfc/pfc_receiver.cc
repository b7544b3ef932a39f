// PFC / PAUSE reception timers. See pfc_receiver.h.
#include "common/pfc/pfc_receiver.h"

namespace sf {

void PfcReceiver::resume(int p, TimeNs at) {
  paused_ = static_cast<uint8_t>(paused_ & ~(1u << p));
  ctr_.pause_duration[p] += at - since_[p];
  ++ctr_.transitions[p];
}

void PfcReceiver::set_until(int p, TimeNs until, TimeNs now) {
  const bool was = (paused_ >> p) & 1u;
  if (until <= now) {
    if (was) resume(p, now);
    return;
  }
  if (!was) {
    paused_ = static_cast<uint8_t>(paused_ | 1u << p);
    since_[p] = now;
  }
  until_[p] = until;  // a refresh replaces the timer (802.1Qbb): it may shorten it too
}

void PfcReceiver::on_pfc(uint8_t enable, const std::array<uint16_t, kPfcPrios>& q, TimeNs now) {
  for (int p = 0; p < kPfcPrios; ++p) {
    if (!((enable >> p) & 1u)) continue;
    ++ctr_.pause_frames[p];
    last_frame_[p] = now;
    if ((ignore_ >> p) & 1u) {
      ++ctr_.ignored_frames;
      continue;
    }
    set_until(p, now + quanta_time(q[p]), now);
  }
  update_expiry();
}

void PfcReceiver::on_pause(uint16_t quanta, TimeNs now) {
  ++ctr_.global_pause_frames;
  const TimeNs until = now + quanta_time(quanta);
  for (int p = 0; p < kPfcPrios; ++p) {
    last_frame_[p] = now;
    if ((ignore_ >> p) & 1u) continue;
    set_until(p, until, now);
  }
  update_expiry();
}

uint8_t PfcReceiver::paused_mask(TimeNs now) {
  if (paused_ == 0 || expiry_ > now) return paused_;
  for (int p = 0; p < kPfcPrios; ++p) {
    if (((paused_ >> p) & 1u) && until_[p] <= now) resume(p, until_[p]);
  }
  update_expiry();
  return paused_;
}

void PfcReceiver::update_expiry() {
  TimeNs t = TimeNs::max();
  for (int p = 0; p < kPfcPrios; ++p) {
    if (((paused_ >> p) & 1u) && until_[p] < t) t = until_[p];
  }
  expiry_ = t;
}

void PfcReceiver::set_ignore(uint8_t mask, TimeNs now) {
  ignore_ = mask;
  for (int p = 0; p < kPfcPrios; ++p) {
    if (((ignore_ >> p) & 1u) && ((paused_ >> p) & 1u)) resume(p, now);
  }
  update_expiry();
}

}  // namespace sf
