// PFC watchdog timers. See pfc_watchdog.h.
#include "switch/lossless/pfc_watchdog.h"

#include <algorithm>

namespace sf::sw {

std::string_view to_string(PfcWdAction a) {
  switch (a) {
    case PfcWdAction::kDrop: return "drop";
    case PfcWdAction::kForward: return "forward";
    case PfcWdAction::kAlert: return "alert";
  }
  return "unknown";
}

void PfcWatchdog::on_paused(uint8_t q, bool paused, TimeNs now) {
  const uint8_t bit = static_cast<uint8_t>(1u << q);
  const bool was = (paused_ & bit) != 0;
  if (paused && !was) {
    paused_ |= bit;
    paused_since_[q] = now;
  } else if (!paused && was) {
    paused_ &= static_cast<uint8_t>(~bit);
  }
}

void PfcWatchdog::on_tx(uint8_t q, TimeNs now) {
  // Transmission proves the queue is not deadlocked: the stretch restarts.
  paused_since_[q] = now;
}

void PfcWatchdog::on_pfc_frame(uint8_t q, TimeNs now) {
  last_frame_[q] = now;
  if ((stormed_ >> q) & 1u && cfg_.action != PfcWdAction::kAlert) count_ignored(q);
}

PfcWdEvents PfcWatchdog::advance(TimeNs at) {
  PfcWdEvents ev;
  // With a poll period, decide as of the last poll instant.
  const int64_t poll = cfg_.poll.ns();
  const TimeNs now = poll > 0 ? TimeNs(at.ns() - at.ns() % poll) : at;
  for (uint8_t q = 0; q < 8; ++q) {
    if (!guarded(q)) continue;
    const uint8_t bit = static_cast<uint8_t>(1u << q);
    if (!(stormed_ & bit)) {
      if ((paused_ & bit) && now - paused_since_[q] >= cfg_.detection) {
        stormed_ |= bit;
        ev.stormed |= bit;
        ++ctr_.storms[q];
        // The restoration time counts from the storm or the last pause
        // frame, whichever is later.
        last_frame_[q] = std::max(last_frame_[q], now);
      }
    } else {
      // Alert restores as soon as the pause is gone; the others wait for
      // `restoration` without a pause frame.
      const bool clear = cfg_.action == PfcWdAction::kAlert ? !(paused_ & bit)
                                                            : now - last_frame_[q] >= cfg_.restoration;
      if (clear) {
        stormed_ &= static_cast<uint8_t>(~bit);
        ev.restored |= bit;
        ++ctr_.restores[q];
        paused_since_[q] = now;
      }
    }
  }
  return ev;
}

TimeNs PfcWatchdog::next_deadline() const {
  TimeNs t = TimeNs::max();
  for (uint8_t q = 0; q < 8; ++q) {
    if (!guarded(q)) continue;
    const uint8_t bit = static_cast<uint8_t>(1u << q);
    if (!(stormed_ & bit)) {
      if (paused_ & bit) t = std::min(t, paused_since_[q] + cfg_.detection);
    } else if (cfg_.action != PfcWdAction::kAlert) {
      t = std::min(t, last_frame_[q] + cfg_.restoration);
    } else if (!(paused_ & bit)) {
      t = TimeNs(0);  // alert: restored as soon as the pause is gone (due now)
    }
  }
  // With a poll period: the first poll instant at or after the deadline.
  const int64_t poll = cfg_.poll.ns();
  if (poll > 0 && t != TimeNs::max() && t.ns() % poll != 0) t = TimeNs(t.ns() + (poll - t.ns() % poll));
  return t;
}

}  // namespace sf::sw
