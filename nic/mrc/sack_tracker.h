// MRC PSN tracking, both ends of a SACK (docs/mrc.md "Transport building
// blocks", endpoint.md 3.4):
//   SackTracker    the responder: cumulative PSN (CACK) + a window of up to
//                  256 PSNs past it, duplicate / out-of-window detection, and
//                  the SACK fields to send (SETH: CACK, sack_offset, a 64-PSN
//                  bitmap of the window, mpr).
//   SackScoreboard the requester: which PSNs a SACK newly acknowledges and
//                  which it shows missing (holes before a received PSN), so
//                  exactly those are retransmitted.
// PSNs are 24-bit (wire::Psn, modulo 2^24); windows straddle the wrap.
// No clock, no RNG, no allocation after construction. One lcore (the QP's).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "common/wire/mrc.h"
#include "common/wire/psn.h"

namespace sf::nic::mrc {

using wire::Psn;

// What the responder makes of a data packet's PSN.
enum class PsnVerdict : uint8_t {
  kNew,          // first arrival: place it
  kDuplicate,    // at or before CACK, or its bit already set: ignore (re-SACK)
  kOutOfWindow,  // beyond CACK + mpr: NACK PSN_OOR_WINDOW
};
const char* to_string(PsnVerdict v);

// The SETH fields of a SACK (CACK travels in the BTH PSN).
struct SackFields {
  Psn cack;                  // every PSN up to and including it received
  int16_t sack_offset = 1;   // bitmap base = CACK + sack_offset
  uint64_t bitmap = 0;       // bit i: PSN cack + sack_offset + i received (PSNs <= CACK: set)
  uint16_t mpr = 0;          // PSNs past CACK the responder tracks
  int16_t ack_psn_offset = 0;  // triggering PSN - CACK
  uint16_t ooo_count = 0;    // PSNs held beyond CACK (popcount of the bitmap)
};

class SackTracker {
 public:
  static constexpr uint16_t kBitmapBits = wire::Seth::kBitmapBits;  // one SACK's reach (64)
  static constexpr uint16_t kMaxWindow = 256;                       // PSNs past CACK tracked at most
  static constexpr int kWords = kMaxWindow / 64;
  static_assert(kWords == 4, "held() and the fast path in on_packet() name the four words");

  // `first` is the first PSN expected (CACK starts at first - 1); `mpr` is the
  // tracking window: 0 is refused (abort at setup), more than 256 is clamped
  // to 256 and mpr() says so. `align`: the bitmap base on send, 1 (CACK + 1)
  // or 8 (a multiple of 8, UET's PDS); others are refused (abort).
  explicit SackTracker(Psn first, uint16_t mpr = kBitmapBits, uint8_t align = 1);

  PsnVerdict on_packet(Psn psn);
  // The SACK to send now, for a triggering packet `trigger`: the 64-PSN
  // bitmap starts at CACK + 1, or, for a trigger past CACK + 64, ends at the
  // trigger (so the packet that made the SACK is always in it); with align 8
  // the base is rounded to a multiple of 8 (down at CACK + 1, up past it).
  SackFields sack(Psn trigger) const;

  Psn cack() const { return cack_; }
  // Bits 0..63 of the window: bit i = PSN cack + 1 + i received.
  uint64_t bitmap() const { return bits_[0]; }
  // PSNs held past CACK: any, and the offset of the last one (0: none).
  bool held() const { return (bits_[0] | bits_[1] | bits_[2] | bits_[3]) != 0; }
  uint32_t span() const;
  uint16_t mpr() const { return mpr_; }
  uint8_t align() const { return align_; }
  void set_align(uint8_t align);
  bool received(Psn psn) const {
    const int32_t d = Psn::diff(psn, cack_);
    if (d <= 0) return true;
    if (d > kMaxWindow) return false;
    const uint32_t i = static_cast<uint32_t>(d - 1);
    return (bits_[i >> 6] >> (i & 63)) & 1u;
  }

  uint64_t rx_new() const { return rx_new_; }
  uint64_t rx_duplicate() const { return rx_dup_; }
  uint64_t rx_out_of_window() const { return rx_oow_; }

 private:
  // 64 bits of the window from bit index k (PSN cack_ + 1 + k); k < 0 (at
  // least -63): PSNs at or before CACK, set.
  uint64_t window64(int k) const;

  Psn cack_;
  std::array<uint64_t, kWords> bits_{};  // bit i: PSN cack_ + 1 + i
  uint16_t mpr_;
  uint8_t align_ = 1;
  uint64_t rx_new_ = 0;
  uint64_t rx_dup_ = 0;
  uint64_t rx_oow_ = 0;
};

enum class SackVerdict : uint8_t {
  kOk,
  kStale,    // CACK older than what is already acknowledged (reordered SACK); bitmap still applied
  kInvalid,  // acknowledges a PSN never sent: ignored entirely (counted by the caller)
};
const char* to_string(SackVerdict v);

struct SackResult {
  SackVerdict verdict = SackVerdict::kOk;
  uint32_t newly_acked = 0;   // PSNs this SACK acknowledged for the first time
  uint16_t missing = 0;       // PSNs written to the caller's span
};

class SackScoreboard {
 public:
  // `first`: the first PSN to send; `capacity`: PSNs in flight at most, a
  // power of two in [64, 2^22]. Allocates its two bitsets here, never later.
  SackScoreboard(Psn first, uint32_t capacity);

  bool can_send() const { return in_flight() < capacity_; }
  // Assigns the next PSN (the caller checked can_send()).
  Psn on_send() {
    const Psn p = next_;
    put(acked_, p, false);
    put(reported_, p, false);
    ++next_;
    return p;
  }

  // Applies a SACK. `on_acked(Psn)` runs once per newly acknowledged PSN (in
  // no particular order); the PSNs shown missing (a clear bit below the
  // highest set bit, sent, not yet reported) go to `missing_out`, each
  // reported once until rearm(); if the span fills, the rest are reported by
  // a later SACK.
  template <class OnAcked>
  SackResult on_sack(Psn cack, int16_t sack_offset, uint64_t bitmap, std::span<Psn> missing_out,
                     OnAcked&& on_acked);

  // Lets a missing PSN be reported again (its retransmission was lost too).
  void rearm(Psn psn);

  Psn una() const { return una_; }   // oldest PSN not cumulatively acknowledged
  Psn next() const { return next_; }
  uint32_t in_flight() const { return static_cast<uint32_t>(Psn::diff(next_, una_)); }
  uint32_t capacity() const { return capacity_; }
  // Sent and acknowledged (cumulatively or selectively).
  bool acked(Psn psn) const;

 private:
  bool in_flight_psn(Psn psn) const {
    const int32_t d = Psn::diff(psn, una_);
    return d >= 0 && d < static_cast<int32_t>(in_flight());
  }
  uint32_t slot(Psn psn) const { return psn.value() & (capacity_ - 1); }
  bool get(const std::vector<uint64_t>& b, Psn psn) const { return (b[slot(psn) >> 6] >> (slot(psn) & 63)) & 1u; }
  void put(std::vector<uint64_t>& b, Psn psn, bool v) {
    const uint64_t m = uint64_t{1} << (slot(psn) & 63);
    b[slot(psn) >> 6] = v ? (b[slot(psn) >> 6] | m) : (b[slot(psn) >> 6] & ~m);
  }
  // Validation shared by on_sack: kInvalid when the SACK covers unsent PSNs.
  SackVerdict check(Psn cack, int16_t sack_offset, uint64_t bitmap) const;

  uint32_t capacity_;
  Psn una_;
  Psn next_;
  std::vector<uint64_t> acked_;     // selectively acked, PSNs in [una_, next_)
  std::vector<uint64_t> reported_;  // reported missing, PSNs in [una_, next_)
};

template <class OnAcked>
SackResult SackScoreboard::on_sack(Psn cack, int16_t sack_offset, uint64_t bitmap,
                                   std::span<Psn> missing_out, OnAcked&& on_acked) {
  SackResult r;
  r.verdict = check(cack, sack_offset, bitmap);
  if (r.verdict == SackVerdict::kInvalid) return r;
  // Cumulative part: [una_, cack].
  while (in_flight() > 0 && !una_.after(cack)) {
    if (!get(acked_, una_)) {
      on_acked(una_);
      ++r.newly_acked;
    }
    put(acked_, una_, false);
    put(reported_, una_, false);
    ++una_;
  }
  // Selective part.
  const Psn base = wire::mrc_sack_base(cack, sack_offset);
  int highest = -1;
  for (uint64_t bits = bitmap; bits != 0; bits &= bits - 1) {
    const int i = std::countr_zero(bits);
    highest = i;
    const Psn p = base + static_cast<uint32_t>(i);
    if (in_flight_psn(p) && !get(acked_, p)) {
      put(acked_, p, true);
      on_acked(p);
      ++r.newly_acked;
    }
  }
  // A bitmap may fill the hole at una_ (sack_offset <= 0).
  while (in_flight() > 0 && get(acked_, una_)) {
    put(acked_, una_, false);
    put(reported_, una_, false);
    ++una_;
  }
  // Holes: clear bits below the highest set one.
  for (int i = 0; i < highest; ++i) {
    if ((bitmap >> i) & 1u) continue;
    const Psn p = base + static_cast<uint32_t>(i);
    if (!in_flight_psn(p) || get(acked_, p) || get(reported_, p)) continue;
    if (r.missing == missing_out.size()) break;
    put(reported_, p, true);
    missing_out[r.missing++] = p;
  }
  return r;
}

}  // namespace sf::nic::mrc
