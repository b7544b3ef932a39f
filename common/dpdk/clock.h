// Clocks for the poll loop (STYLE G3, G5): the loop is a template on a Clock,
// reads it once per iteration and passes `now` down. TscClock is the real
// one (TSC -> ns since construction); ManualClock is for tests.
#pragma once

#include <rte_cycles.h>

#include <concepts>
#include <cstdint>

#include "common/time.h"

namespace sf::dpdk {

template <typename C>
concept Clock = requires(C& c) {
  { c.now() } -> std::same_as<TimeNs>;
};

// Real time: TSC cycles since construction, converted to ns. Requires EAL
// (rte_get_tsc_hz). Owned by one lcore; now() is a rdtsc plus a 128-bit mul.
class TscClock {
 public:
  TscClock() : conv_(rte_get_tsc_hz()), start_tsc_(rte_rdtsc()) {}
  // With a TSC rate measured by the caller (rte_get_tsc_hz() may be the
  // CPU's nominal frequency rather than the TSC's).
  explicit TscClock(uint64_t tsc_hz) : conv_(tsc_hz), start_tsc_(rte_rdtsc()) {}
  TimeNs now() const { return conv_.to_ns(rte_rdtsc() - start_tsc_); }
  const TscConverter& converter() const { return conv_; }

 private:
  TscConverter conv_;
  uint64_t start_tsc_;
};

// Virtual time for tests: only moves when told to.
class ManualClock {
 public:
  TimeNs now() const { return now_; }
  void set(TimeNs t) { now_ = t; }
  void advance(TimeNs d) { now_ += d; }

 private:
  TimeNs now_ = TimeNs::zero();
};

}  // namespace sf::dpdk
