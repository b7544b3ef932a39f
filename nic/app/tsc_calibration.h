// The TSC's real rate, measured against CLOCK_MONOTONIC at startup. DPDK's
// rte_get_tsc_hz() may take the CPU's nominal frequency (on this project's
// VMs 2450 MHz for a TSC the kernel measured at 2445.4 MHz): every paced rate
// then runs 0.19 % slow in real time. sf-nic measures the rate over a short
// interval and uses it for the poll loop's clock when it differs (docs/nic.md
// "Pacing"). tsc_hz_from is the pure arithmetic; the measurement reads the
// clocks (control path, before the loop).
#pragma once

#include <cstdint>

#include "common/time.h"

namespace sf::nic::app {

// Cycles per second from a TSC delta over a CLOCK_MONOTONIC delta (ns > 0).
constexpr uint64_t tsc_hz_from(uint64_t d_tsc, int64_t d_ns) {
  return static_cast<uint64_t>((static_cast<U128>(d_tsc) * 1000000000u + static_cast<uint64_t>(d_ns) / 2) /
                               static_cast<uint64_t>(d_ns));
}

// Whether a measured rate replaces `nominal_hz`: they differ by more than
// 10 ppm (below that the measurement's own error) and by less than 5 % (more
// is a failed measurement: a preempted reader).
constexpr bool use_measured_tsc_hz(uint64_t nominal_hz, uint64_t measured_hz) {
  const uint64_t diff = nominal_hz > measured_hz ? nominal_hz - measured_hz : measured_hz - nominal_hz;
  return diff * 100000 > nominal_hz && diff * 20 < nominal_hz;
}

// Measures the TSC rate over about `over_ns` (sleeping meanwhile), each end
// the tightest of a few TSC reads around a CLOCK_MONOTONIC read.
uint64_t measure_tsc_hz(int64_t over_ns);

}  // namespace sf::nic::app
