// PfcGenerator: when a port sends 802.1Qbb PFC frames. The owner decides per
// priority whether it wants the peer paused (the switch from ingress PG
// occupancy, a NIC from its receive backlog, both with XOFF/XON hysteresis:
// see Hysteresis below); the generator turns those states into frames: an XOFF
// frame on the transition, refreshes before the peer's timer runs out while
// still congested, and an XON (time 0) frame on release. Several priorities
// changing together share one frame. Pure logic: time is an argument.
#pragma once

#include <array>
#include <cstdint>

#include "common/pfc/pfc_receiver.h"
#include "common/time.h"

namespace sf {

// XOFF when occupancy reaches `xoff_at`, XON when it falls to `xon_at` or
// below (xon_at < xoff_at); in between the state holds.
struct Hysteresis {
  uint64_t xoff_at = 0;
  uint64_t xon_at = 0;
  bool next(bool xoff, uint64_t occupancy) const {
    if (!xoff) return occupancy >= xoff_at;
    return occupancy > xon_at;
  }
};

struct PfcFrameRequest {
  uint8_t enable = 0;                             // priorities carried
  std::array<uint16_t, kPfcPrios> quanta{};       // pause quanta (0 = XON)
};

struct PfcTxCounters {
  std::array<uint64_t, kPfcPrios> pause_frames{};   // tx_prio<p>_pause (XOFF and refresh frames)
  std::array<uint64_t, kPfcPrios> xon_frames{};     // frames with time 0 for p
  std::array<TimeNs, kPfcPrios> pause_duration{};   // tx_prio<p>_pause_duration (time asserted)
  std::array<uint64_t, kPfcPrios> xoff_events{};    // XON -> XOFF transitions
};

class PfcGenerator {
 public:
  PfcGenerator() = default;
  // `quanta`: pause time carried by XOFF frames; refreshes go out when half
  // of it has elapsed, so the peer never resumes while we are congested.
  PfcGenerator(BitRate speed, uint16_t quanta = 0xFFFF, bool send_xon = true);

  // The owner's wish for priority p at `now`.
  void set_xoff(int prio, bool xoff, TimeNs now);
  bool xoff(int prio) const { return (state_ >> prio) & 1u; }
  uint8_t xoff_mask() const { return state_; }

  // A frame due at `now`: fills `req`, counts it and returns true.
  bool poll(TimeNs now, PfcFrameRequest* req);
  // When poll() next has something: now if a frame is pending, else the next
  // refresh; TimeNs::max() when no priority is asserted.
  TimeNs next_deadline() const {
    if ((pending_on_ | pending_off_) != 0) return TimeNs(0);
    return state_ == 0 ? TimeNs::max() : refresh_deadline();  // inline: asked every poll-loop iteration
  }
  TimeNs refresh_interval() const { return refresh_; }

  const PfcTxCounters& counters() const { return ctr_; }

 private:
  TimeNs refresh_deadline() const;  // the earliest refresh of an asserted priority

  TimeNs refresh_{0};
  uint16_t quanta_ = 0xFFFF;
  bool send_xon_ = true;
  uint8_t state_ = 0;        // priorities asserted (XOFF)
  uint8_t pending_on_ = 0;   // XOFF frame owed
  uint8_t pending_off_ = 0;  // XON frame owed
  std::array<TimeNs, kPfcPrios> last_sent_{};
  std::array<TimeNs, kPfcPrios> since_{};
  PfcTxCounters ctr_;
};

}  // namespace sf
