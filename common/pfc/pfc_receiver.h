// PfcReceiver: what a port does with received 802.1Qbb PFC and 802.3x PAUSE
// frames (shared/reference/switch.md section 3). Per priority, a pause timer of
// `quanta x 512 bit times` at the port speed; quanta 0 resumes; PAUSE pauses
// every priority. Used by switch ports and NIC ports alike. Pure logic: time is
// an argument, the caller reports paused_mask() to its scheduler and
// next_expiry() as a wakeup.
//
// Counters follow mlx5's names: rx_prio<p>_pause (frames), _pause_duration
// (time paused), _pause_transition (XOFF -> XON); rx_global_pause for PAUSE.
#pragma once

#include <array>
#include <cstdint>

#include "common/time.h"

namespace sf {

inline constexpr int kPfcPrios = 8;

struct PfcRxCounters {
  std::array<uint64_t, kPfcPrios> pause_frames{};   // rx_prio<p>_pause: frames with bit p enabled
  std::array<TimeNs, kPfcPrios> pause_duration{};   // rx_prio<p>_pause_duration
  std::array<uint64_t, kPfcPrios> transitions{};    // rx_prio<p>_pause_transition (XOFF -> XON)
  uint64_t global_pause_frames = 0;                 // rx_global_pause (802.3x)
  uint64_t ignored_frames = 0;                      // frames arriving while ignore mask set (watchdog)
};

class PfcReceiver {
 public:
  PfcReceiver() = default;
  explicit PfcReceiver(BitRate speed) : speed_(speed) {}

  // Duration of `quanta` pause quanta at this port's speed (512 bit times each).
  TimeNs quanta_time(uint16_t quanta) const { return speed_.tx_time(uint64_t{quanta} * 64); }

  // A PFC frame: for each priority p with bit p of `enable`, pause for
  // time_quanta[p] from `now` (0 resumes at once). Priorities in `ignore`
  // (e.g. stormed by the watchdog) are counted but not honoured.
  void on_pfc(uint8_t enable, const std::array<uint16_t, kPfcPrios>& time_quanta, TimeNs now);
  // An 802.3x PAUSE: every priority, `quanta` from `now`.
  void on_pause(uint16_t quanta, TimeNs now);

  // Priorities still paused at `now` (bit p); expires timers first.
  uint8_t paused_mask(TimeNs now);
  uint8_t paused_mask_no_update() const { return paused_; }
  // Earliest pause expiry; TimeNs::max() when nothing is paused. O(1): kept
  // up to date by every call that changes a pause (asked after every event).
  TimeNs next_expiry() const { return expiry_; }
  // Priorities to honour nothing for (PFC watchdog action drop/forward).
  void set_ignore(uint8_t mask, TimeNs now);
  // Time the last frame for priority p arrived (watchdog restoration).
  TimeNs last_frame(int prio) const { return last_frame_[prio]; }

  const PfcRxCounters& counters() const { return ctr_; }
  // rx_prio<p>_pause_duration including a pause still running at `now`
  // (counters() holds finished pauses only).
  TimeNs pause_duration_at(int prio, TimeNs now) const {
    const bool on = (paused_ >> prio) & 1u;
    const TimeNs end = on && until_[prio] < now ? until_[prio] : now;
    return ctr_.pause_duration[prio] + (on && end > since_[prio] ? end - since_[prio] : TimeNs(0));
  }

 private:
  void set_until(int prio, TimeNs until, TimeNs now);
  void resume(int prio, TimeNs at);
  void update_expiry();

  BitRate speed_{0};
  uint8_t paused_ = 0;
  uint8_t ignore_ = 0;
  TimeNs expiry_ = TimeNs::max();
  std::array<TimeNs, kPfcPrios> until_{};
  std::array<TimeNs, kPfcPrios> since_{};
  std::array<TimeNs, kPfcPrios> last_frame_{};
  PfcRxCounters ctr_;
};

}  // namespace sf
