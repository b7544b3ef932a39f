// IdleBackoff: what a poll loop does after iterations without work, so that
// several DPDK processes can share a small machine (DESIGN.md section 4).
// Spin, then rte_pause, then sleep with a doubling period up to max_sleep;
// any work resets it. Pure policy (no clock, no sleeping) so it is unit-tested.
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
};

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
