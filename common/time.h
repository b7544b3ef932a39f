// Time and rate types shared by every layer: TimeNs (a strong nanosecond count),
// BitRate, wire-time arithmetic and TSC<->ns conversion (pure arithmetic; reading
// the TSC is the real-time driver's job, common/dpdk).
#pragma once

#include <cassert>
#include <compare>
#include <cstdint>
#include <limits>

namespace sf {

// 128-bit intermediate for rate arithmetic (no overflow at 800G x hours).
__extension__ using U128 = unsigned __int128;

// A point in time or a duration, in nanoseconds. Strong type: no implicit
// conversion from or to integers (STYLE G2). Virtual time starts at 0; real
// time is the TSC converted to ns since driver start.
class TimeNs {
 public:
  constexpr TimeNs() = default;
  constexpr explicit TimeNs(int64_t ns) : ns_(ns) {}

  static constexpr TimeNs zero() { return TimeNs(0); }
  // "Never": next_wakeup() of a node with no pending timer.
  static constexpr TimeNs max() { return TimeNs(std::numeric_limits<int64_t>::max()); }
  static constexpr TimeNs from_us(int64_t us) { return TimeNs(us * 1000); }
  static constexpr TimeNs from_ms(int64_t ms) { return TimeNs(ms * 1000 * 1000); }
  static constexpr TimeNs from_s(int64_t s) { return TimeNs(s * 1000 * 1000 * 1000); }

  constexpr int64_t ns() const { return ns_; }
  constexpr double us() const { return static_cast<double>(ns_) / 1e3; }
  constexpr double sec() const { return static_cast<double>(ns_) / 1e9; }

  constexpr auto operator<=>(const TimeNs&) const = default;
  constexpr TimeNs operator+(TimeNs o) const { return TimeNs(ns_ + o.ns_); }
  constexpr TimeNs operator-(TimeNs o) const { return TimeNs(ns_ - o.ns_); }
  constexpr TimeNs& operator+=(TimeNs o) { ns_ += o.ns_; return *this; }
  constexpr TimeNs& operator-=(TimeNs o) { ns_ -= o.ns_; return *this; }
  constexpr TimeNs operator*(int64_t k) const { return TimeNs(ns_ * k); }

 private:
  int64_t ns_ = 0;
};

// Saturating add so that max() + d stays max() (timer arithmetic on "never").
constexpr TimeNs sat_add(TimeNs t, TimeNs d) {
  if (t == TimeNs::max() || d == TimeNs::max()) return TimeNs::max();
  return t + d;
}

// A link or pacing rate in bits per second.
class BitRate {
 public:
  constexpr BitRate() = default;
  constexpr explicit BitRate(uint64_t bps) : bps_(bps) {}
  static constexpr BitRate gbps(double g) { return BitRate(static_cast<uint64_t>(g * 1e9)); }
  static constexpr BitRate mbps(double m) { return BitRate(static_cast<uint64_t>(m * 1e6)); }

  constexpr uint64_t bps() const { return bps_; }
  constexpr double gbps_value() const { return static_cast<double>(bps_) / 1e9; }
  constexpr auto operator<=>(const BitRate&) const = default;

  // Serialisation time of `bytes` at this rate, rounded up to whole ns so that
  // back-to-back packets never exceed the rate. Rate 0 means "unlimited".
  constexpr TimeNs tx_time(uint64_t bytes) const {
    if (bps_ == 0) return TimeNs(0);
    const U128 num = static_cast<U128>(bytes) * 8u * 1000000000u;
    return TimeNs(static_cast<int64_t>((num + bps_ - 1) / bps_));
  }
  // Bytes that fit in `t` at this rate (rounded down).
  constexpr uint64_t bytes_in(TimeNs t) const {
    if (t.ns() <= 0) return 0;
    const U128 num = static_cast<U128>(bps_) * static_cast<uint64_t>(t.ns());
    return static_cast<uint64_t>(num / (8u * 1000000000ull));
  }

 private:
  uint64_t bps_ = 0;
};

// Converts TSC cycles to ns and back for a given TSC frequency. Pure arithmetic
// (no rdtsc here) so tests can drive it with any hz.
class TscConverter {
 public:
  // hz > 0 (rte_get_tsc_hz() or a measured rate).
  constexpr explicit TscConverter(uint64_t hz) : hz_(hz), inv_(hz == 0 ? 0 : UINT64_MAX / hz) { assert(hz > 0); }
  constexpr uint64_t hz() const { return hz_; }
  // Exact floor(cycles x 1e9 / hz). Whole seconds first, so the remainder
  // product fits 64 bits (hz below 1.8e10); both divisions by hz are a
  // multiply by the reciprocal and at most one correction each (no div, no
  // 128-bit division on every poll-loop clock read).
  constexpr TimeNs to_ns(uint64_t cycles) const {
    if (hz_ >= kMaxHz64) {
      const U128 num = static_cast<U128>(cycles) * 1000000000u;
      return TimeNs(static_cast<int64_t>(num / hz_));
    }
    uint64_t rem = 0;
    const uint64_t sec = div_hz(cycles, &rem);
    uint64_t unused = 0;
    return TimeNs(static_cast<int64_t>(sec * 1000000000u + div_hz(rem * 1000000000u, &unused)));
  }
  constexpr uint64_t to_cycles(TimeNs t) const {
    const U128 num = static_cast<U128>(t.ns()) * hz_;
    return static_cast<uint64_t>(num / 1000000000u);
  }

 private:
  static constexpr uint64_t kMaxHz64 = UINT64_MAX / 1000000000u;  // rem x 1e9 fits below this
  // floor(x / hz_) and the remainder. inv_ = floor((2^64 - 1) / hz_) is
  // less than 1 below 2^64 / hz_, so the estimate x * inv_ / 2^64 is never
  // high and less than x / 2^64 < 1 low: at most one correction.
  constexpr uint64_t div_hz(uint64_t x, uint64_t* rem) const {
    uint64_t q = static_cast<uint64_t>((static_cast<U128>(x) * inv_) >> 64);
    uint64_t r = x - q * hz_;
    while (r >= hz_) {
      r -= hz_;
      ++q;
    }
    *rem = r;
    return q;
  }
  uint64_t hz_;
  uint64_t inv_;
};

}  // namespace sf
