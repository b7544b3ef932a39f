// Psn: the 24-bit RoCE packet sequence number (endpoint.md 1.9). Arithmetic is
// modulo 2^24; ordering uses the signed 24-bit difference as rxe does
// (psn_compare(a,b) = (int32_t)((a - b) << 8)), valid while |a - b| < 2^23.
#pragma once

#include <cstdint>

namespace sf::wire {

class Psn {
 public:
  static constexpr uint32_t kMask = 0xFFFFFFu;
  static constexpr uint32_t kHalfRange = 1u << 23;

  constexpr Psn() = default;
  // Keeps the low 24 bits of `v`.
  constexpr explicit Psn(uint32_t v) : v_(v & kMask) {}
  constexpr uint32_t value() const { return v_; }

  // Signed distance a - b in [-2^23, 2^23): > 0 means `a` is after `b`.
  static constexpr int32_t diff(Psn a, Psn b) {
    return static_cast<int32_t>((a.v_ - b.v_) << 8) >> 8;
  }
  constexpr bool after(Psn o) const { return diff(*this, o) > 0; }
  constexpr bool before(Psn o) const { return diff(*this, o) < 0; }

  constexpr Psn operator+(uint32_t n) const { return Psn(v_ + n); }
  constexpr Psn operator-(uint32_t n) const { return Psn(v_ - n); }
  constexpr Psn& operator+=(uint32_t n) { v_ = (v_ + n) & kMask; return *this; }
  constexpr Psn& operator++() { return *this += 1; }
  constexpr bool operator==(const Psn&) const = default;
  // Modular order (not a total order over all 2^24 values; see diff()).
  constexpr bool operator<(Psn o) const { return before(o); }
  constexpr bool operator>(Psn o) const { return after(o); }
  constexpr bool operator<=(Psn o) const { return !after(o); }
  constexpr bool operator>=(Psn o) const { return !before(o); }

 private:
  uint32_t v_ = 0;
};

static_assert(Psn::diff(Psn(0), Psn(0xFFFFFF)) == 1);
static_assert(Psn(0xFFFFFF) + 1 == Psn(0));
static_assert(Psn(5).after(Psn(0xFFFFF0)));

}  // namespace sf::wire
