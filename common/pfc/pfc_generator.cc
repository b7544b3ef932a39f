// PFC frame generation. See pfc_generator.h.
#include "common/pfc/pfc_generator.h"

#include <algorithm>

namespace sf {

PfcGenerator::PfcGenerator(BitRate speed, uint16_t quanta, bool send_xon)
    : refresh_(TimeNs(speed.tx_time(uint64_t{quanta} * 64).ns() / 2)), quanta_(quanta), send_xon_(send_xon) {}

void PfcGenerator::set_xoff(int p, bool on, TimeNs now) {
  const uint8_t bit = static_cast<uint8_t>(1u << p);
  const bool was = (state_ & bit) != 0;
  if (on == was) return;
  if (on) {
    state_ |= bit;
    pending_on_ |= bit;
    pending_off_ &= static_cast<uint8_t>(~bit);
    since_[p] = now;
    ++ctr_.xoff_events[p];
  } else {
    state_ &= static_cast<uint8_t>(~bit);
    pending_on_ &= static_cast<uint8_t>(~bit);
    if (send_xon_) pending_off_ |= bit;
    ctr_.pause_duration[p] += now - since_[p];
  }
}

bool PfcGenerator::poll(TimeNs now, PfcFrameRequest* req) {
  uint8_t on = pending_on_;
  // Refresh every asserted priority whose last frame is half a pause old.
  for (int p = 0; p < kPfcPrios; ++p) {
    if (((state_ >> p) & 1u) && now - last_sent_[p] >= refresh_) on = static_cast<uint8_t>(on | 1u << p);
  }
  // A frame going out anyway carries every asserted priority (fewer frames).
  if (on != 0 || pending_off_ != 0) on |= state_;
  const uint8_t off = pending_off_;
  if ((on | off) == 0) return false;
  *req = PfcFrameRequest{};
  req->enable = static_cast<uint8_t>(on | off);
  for (int p = 0; p < kPfcPrios; ++p) {
    if ((on >> p) & 1u) {
      req->quanta[p] = quanta_;
      last_sent_[p] = now;
      ++ctr_.pause_frames[p];
    } else if ((off >> p) & 1u) {
      req->quanta[p] = 0;
      ++ctr_.xon_frames[p];
    }
  }
  pending_on_ = 0;
  pending_off_ = 0;
  return true;
}

TimeNs PfcGenerator::refresh_deadline() const {
  TimeNs t = TimeNs::max();
  for (int p = 0; p < kPfcPrios; ++p) {
    if ((state_ >> p) & 1u) t = std::min(t, last_sent_[p] + refresh_);
  }
  return t;
}

}  // namespace sf
