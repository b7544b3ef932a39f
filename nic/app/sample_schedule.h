// SampleSchedule: when sf-nic's time-series sampler takes sample k (k = 1, 2,
// ...): on the grid start + k * period, so that consecutive samples bound
// windows of one period (the benchmark's 100 ms pacing windows) instead of
// drifting by however late each wake-up was. A sampler that wakes more than a
// period late skips the grid points it missed rather than writing a burst of
// samples that are all late. Pure (times in ns from any origin), unit-tested.
// period_ns > 0 (the caller validates --ts-period-ms).
#pragma once

#include <cstdint>

namespace sf::nic::app {

class SampleSchedule {
 public:
  SampleSchedule(int64_t start_ns, int64_t period_ns) : start_ns_(start_ns), period_ns_(period_ns) {}
  // Time the next sample is due.
  int64_t due_ns() const { return start_ns_ + index_ * period_ns_; }
  int64_t index() const { return index_; }
  // A sample was taken at `taken_ns` (>= due_ns()); moves to the first grid
  // point after it.
  void taken(int64_t taken_ns) {
    const int64_t k = (taken_ns - start_ns_) / period_ns_ + 1;
    index_ = k > index_ + 1 ? k : index_ + 1;
  }

 private:
  int64_t start_ns_;
  int64_t period_ns_;
  int64_t index_ = 1;
};

}  // namespace sf::nic::app
