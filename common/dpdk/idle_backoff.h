// IdleBackoff: what a poll loop does after iterations without work, so that
// several DPDK processes can share a small machine (DESIGN.md section 4).
// Spin, then rte_pause, then sleep with a doubling period up to max_sleep;
// any work resets it. Or, until_due: sleep until just before the next thing
// due (a node's timer, a paced departure, a held port's next send) and spin
// from there, so a pacer leaves its core to others between departures yet is
// on time for each (until_due_sleep). Pure policy (no clock, no sleeping) so
// it is unit-tested.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/time.h"

namespace sf::dpdk {

struct IdleBackoffOptions {
  bool enabled = false;          // off: always spin (dedicated cores)
  uint32_t spin_iterations = 64;  // idle iterations that just spin
  uint32_t pause_iterations = 1024;  // then this many with rte_pause()
  TimeNs min_sleep = TimeNs::from_us(1);
  TimeNs max_sleep = TimeNs::from_us(200);
  // until_due (replaces the spin/pause/doubling steps when set): an idle
  // iteration sleeps until wake_margin before the earliest due time, at most
  // until_due_max_sleep (frames may arrive meanwhile: they wait in the rx
  // ring that long at most); a wait shorter than until_due_min_sleep spins.
  bool until_due = false;
  TimeNs wake_margin = TimeNs::from_us(10);
  TimeNs until_due_min_sleep = TimeNs::from_us(5);
  TimeNs until_due_max_sleep = TimeNs::from_us(50);
};

// How long an idle loop at `now` sleeps before `due` (TimeNs::max(): nothing
// due): due - now - wake_margin, at most until_due_max_sleep; zero (spin)
// when that is under until_due_min_sleep.
inline TimeNs until_due_sleep(TimeNs now, TimeNs due, const IdleBackoffOptions& o) {
  TimeNs d = o.until_due_max_sleep;
  if (due != TimeNs::max()) {
    const TimeNs wake = due - o.wake_margin;
    if (wake <= now) return TimeNs::zero();
    d = std::min(d, wake - now);
  }
  return d < o.until_due_min_sleep ? TimeNs::zero() : d;
}

enum class IdleAction : uint8_t { kSpin, kPause, kSleep };

class IdleBackoff {
 public:
  IdleBackoff() = default;
  explicit IdleBackoff(const IdleBackoffOptions& o) : opt_(o), sleep_(o.min_sleep) {}

  void on_work() {
    idle_ = 0;
    sleep_ = opt_.min_sleep;
  }
  // One idle iteration; when kSleep, sleep_time() is how long (already doubled
  // for the next call).
  IdleAction on_idle() {
    if (!opt_.enabled) return IdleAction::kSpin;
    ++idle_;
    if (idle_ <= opt_.spin_iterations) return IdleAction::kSpin;
    if (idle_ <= opt_.spin_iterations + opt_.pause_iterations) return IdleAction::kPause;
    last_sleep_ = sleep_;
    sleep_ = std::min(TimeNs(sleep_.ns() * 2), opt_.max_sleep);
    return IdleAction::kSleep;
  }
  TimeNs sleep_time() const { return last_sleep_; }
  uint64_t idle_iterations() const { return idle_; }

 private:
  IdleBackoffOptions opt_{};
  uint64_t idle_ = 0;
  TimeNs sleep_ = TimeNs::from_us(1);
  TimeNs last_sleep_ = TimeNs::zero();
};

}  // namespace sf::dpdk
