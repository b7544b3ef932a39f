// TSC rate measurement. See tsc_calibration.h.
#include "nic/app/tsc_calibration.h"

#include <rte_cycles.h>

#include <ctime>

namespace sf::nic::app {

namespace {
struct Pair {
  uint64_t tsc;
  int64_t ns;
};
int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
// The TSC at the middle of the shortest of 5 bracketed clock reads.
Pair read_pair() {
  Pair best{0, 0};
  uint64_t best_span = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    const uint64_t a = rte_rdtsc_precise();
    const int64_t ns = mono_ns();
    const uint64_t b = rte_rdtsc_precise();
    if (b - a < best_span) {
      best_span = b - a;
      best = {a + (b - a) / 2, ns};
    }
  }
  return best;
}
}  // namespace

uint64_t measure_tsc_hz(int64_t over_ns) {
  const Pair p0 = read_pair();
  timespec ts{static_cast<time_t>(over_ns / 1000000000), static_cast<long>(over_ns % 1000000000)};
  nanosleep(&ts, nullptr);
  const Pair p1 = read_pair();
  if (p1.ns <= p0.ns) return 0;
  return tsc_hz_from(p1.tsc - p0.tsc, p1.ns - p0.ns);
}

}  // namespace sf::nic::app
