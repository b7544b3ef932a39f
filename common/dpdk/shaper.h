// Shaper: a per-port token bucket that makes a port behave as a link of a
// configured rate (DESIGN.md section 1: "the driver owns line rate").
// Charged in wire bytes (sf::wire_bytes: padding + preamble/IFG/FCS), so real
// time and the simulator agree on what "10 Gb/s" means.
//
// Units: credit is kept in bit*ns/s units (rate_bps x dt_ns), so refill is an
// exact integer product and there is no rounding drift over long runs.
// Threading: owned by the lcore that polls the port; no locking.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/node.h"
#include "common/time.h"

namespace sf::dpdk {

class Shaper {
 public:
  // Largest frame we expect (jumbo 9.5 KiB); the bucket always holds at least
  // one of these so a big frame can never be starved.
  static constexpr uint64_t kMinBurstBytes = 16 * 1024;
  static constexpr TimeNs kDefaultBurstTime = TimeNs::from_us(20);
  static constexpr uint64_t kUnitsPerByte = 8ull * 1000 * 1000 * 1000;  // bits x 1e9

  // Default burst allowance: 20 us of line rate, at least kMinBurstBytes.
  static constexpr uint64_t default_burst_bytes(BitRate rate) {
    return std::max(kMinBurstBytes, rate.bytes_in(kDefaultBurstTime));
  }

  // Unlimited (rate 0): allowance() always returns `max`.
  constexpr Shaper() = default;
  // `burst_bytes` is the bucket depth; the bucket starts empty at `start`.
  constexpr Shaper(BitRate rate, uint64_t burst_bytes, TimeNs start = TimeNs::zero())
      : rate_bps_(rate.bps()),
        cap_units_(static_cast<int64_t>(std::max(burst_bytes, uint64_t{1}) * kUnitsPerByte)),
        last_(start) {}
  constexpr explicit Shaper(BitRate rate) : Shaper(rate, default_burst_bytes(rate)) {}

  constexpr bool unlimited() const { return rate_bps_ == 0; }
  constexpr BitRate rate() const { return BitRate(rate_bps_); }
  constexpr uint64_t burst_bytes() const { return static_cast<uint64_t>(cap_units_) / kUnitsPerByte; }

  // Add credit for the time since the last refill, capped at the burst depth.
  constexpr void refill(TimeNs now) {
    if (unlimited() || now <= last_) return;
    const U128 add = static_cast<U128>(rate_bps_) * static_cast<uint64_t>((now - last_).ns());
    last_ = now;
    const int64_t room = cap_units_ - credit_units_;  // > 0 unless full
    if (room <= 0) return;
    credit_units_ = add >= static_cast<U128>(room) ? cap_units_ : credit_units_ + static_cast<int64_t>(add);
  }

  // How many packets of about `est_wire_bytes` fit in the current credit, at
  // most `max`. 0 means the wire is busy: do not ask the node.
  constexpr uint16_t allowance(uint32_t est_wire_bytes, uint16_t max) const {
    if (unlimited()) return max;
    if (credit_units_ <= 0) return 0;
    const int64_t per_pkt = static_cast<int64_t>(std::max(est_wire_bytes, wire_bytes(0))) *
                            static_cast<int64_t>(kUnitsPerByte);
    const int64_t n = credit_units_ / per_pkt;
    return static_cast<uint16_t>(std::min<int64_t>(n, max));
  }

  // Charge `wire` bytes that were handed to the wire. Credit may go negative
  // (a packet larger than estimated); the deficit delays the next send, so
  // the long-term rate stays exact.
  constexpr void charge(uint64_t wire) {
    if (!unlimited()) credit_units_ -= static_cast<int64_t>(wire * kUnitsPerByte);
  }

  // Time until the credit covers one packet of `est_wire_bytes` (0 if it
  // does already); the loop's idle back-off never sleeps past it.
  constexpr TimeNs time_until(uint32_t est_wire_bytes) const {
    if (unlimited()) return TimeNs::zero();
    const int64_t need = static_cast<int64_t>(est_wire_bytes) * static_cast<int64_t>(kUnitsPerByte);
    if (credit_units_ >= need) return TimeNs::zero();
    const auto deficit = static_cast<uint64_t>(need - credit_units_);
    return TimeNs(static_cast<int64_t>((deficit + rate_bps_ - 1) / rate_bps_));
  }

  // Credit in whole bytes (may be negative); for tests and stats.
  constexpr int64_t credit_bytes() const { return credit_units_ / static_cast<int64_t>(kUnitsPerByte); }

 private:
  uint64_t rate_bps_ = 0;
  int64_t cap_units_ = 0;
  int64_t credit_units_ = 0;
  TimeNs last_ = TimeNs::zero();
};

}  // namespace sf::dpdk
