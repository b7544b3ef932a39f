#include "nic/mrc/sack_tracker.h"

#include <bit>
#include <cstdio>
#include <cstdlib>

namespace sf::nic::mrc {

const char* to_string(PsnVerdict v) {
  switch (v) {
    case PsnVerdict::kNew: return "new";
    case PsnVerdict::kDuplicate: return "duplicate";
    case PsnVerdict::kOutOfWindow: return "out_of_window";
  }
  return "?";
}

const char* to_string(SackVerdict v) {
  switch (v) {
    case SackVerdict::kOk: return "ok";
    case SackVerdict::kStale: return "stale";
    case SackVerdict::kInvalid: return "invalid";
  }
  return "?";
}

SackTracker::SackTracker(Psn first, uint16_t mpr, uint8_t align)
    : cack_(first - 1), mpr_(mpr > kMaxWindow ? kMaxWindow : mpr) {
  if (mpr == 0) {
    std::fprintf(stderr, "nic/mrc/sack_tracker: mpr must be >= 1\n");
    std::abort();
  }
  set_align(align);
}

void SackTracker::set_align(uint8_t align) {
  if (align != 1 && align != 8) {
    std::fprintf(stderr, "nic/mrc/sack_tracker: align %u must be 1 or 8\n", align);
    std::abort();
  }
  align_ = align;
}

PsnVerdict SackTracker::on_packet(Psn psn) {
  const int32_t d = Psn::diff(psn, cack_);
  if (d <= 0) {
    ++rx_dup_;
    return PsnVerdict::kDuplicate;
  }
  if (d > mpr_) {
    ++rx_oow_;
    return PsnVerdict::kOutOfWindow;
  }
  const uint32_t i = static_cast<uint32_t>(d - 1);
  const uint64_t bit = uint64_t{1} << (i & 63);
  if (bits_[i >> 6] & bit) {
    ++rx_dup_;
    return PsnVerdict::kDuplicate;
  }
  bits_[i >> 6] |= bit;
  ++rx_new_;
  if (i != 0) return PsnVerdict::kNew;
  if ((bits_[1] | bits_[2] | bits_[3]) == 0 && bits_[0] != ~uint64_t{0}) {
    // Nothing held past CACK + 64 (the common case, and all of mpr <= 64): one word.
    const int k = std::countr_one(bits_[0]);
    cack_ += static_cast<uint32_t>(k);
    bits_[0] >>= k;
    return PsnVerdict::kNew;
  }
  // Advance CACK over the in-order prefix and shift the window by as much.
  uint32_t n = 0;
  for (int w = 0; w < kWords; ++w) {
    const int k = std::countr_one(bits_[w]);
    n += static_cast<uint32_t>(k);
    if (k < 64) break;
  }
  cack_ += n;
  const uint32_t words = n >> 6, bits = n & 63;
  for (int w = 0; w < kWords; ++w) {
    const uint32_t src = static_cast<uint32_t>(w) + words;
    uint64_t v = src < kWords ? bits_[src] >> bits : 0;
    if (bits != 0 && src + 1 < kWords) v |= bits_[src + 1] << (64 - bits);
    bits_[w] = v;
  }
  return PsnVerdict::kNew;
}

uint32_t SackTracker::span() const {
  for (int w = kWords - 1; w >= 0; --w) {
    if (bits_[w] != 0) return static_cast<uint32_t>(64 * w + std::bit_width(bits_[w]));
  }
  return 0;
}

uint64_t SackTracker::window64(int k) const {
  if (k < 0) return (bits_[0] << -k) | ((uint64_t{1} << -k) - 1);
  const uint32_t w = static_cast<uint32_t>(k) >> 6, b = static_cast<uint32_t>(k) & 63;
  uint64_t v = w < kWords ? bits_[w] >> b : 0;
  if (b != 0 && w + 1 < kWords) v |= bits_[w + 1] << (64 - b);
  return v;
}

SackFields SackTracker::sack(Psn trigger) const {
  SackFields f;
  f.cack = cack_;
  f.mpr = mpr_;
  const int32_t off = Psn::diff(trigger, cack_);
  // Base offset from CACK: 1, or the window ending at a trigger past CACK + 64.
  const int32_t reach = off < kMaxWindow ? off : kMaxWindow;  // a trigger past the window: its end
  int32_t s = reach > kBitmapBits ? reach - (kBitmapBits - 1) : 1;
  if (align_ > 1) {
    const int32_t mis = static_cast<int32_t>((cack_ + static_cast<uint32_t>(s)).value() % align_);
    if (s == 1) {
      s -= mis;  // down: the window starts at or before CACK + 1
    } else if (mis != 0) {
      s += align_ - mis;  // up: the trigger stays inside
    }
  }
  f.sack_offset = static_cast<int16_t>(s);
  f.bitmap = window64(s - 1);
  f.ack_psn_offset = static_cast<int16_t>(off < INT16_MIN ? INT16_MIN : (off > INT16_MAX ? INT16_MAX : off));
  uint32_t held = 0;
  for (uint64_t w : bits_) held += static_cast<uint32_t>(std::popcount(w));
  f.ooo_count = static_cast<uint16_t>(held);
  return f;
}

SackScoreboard::SackScoreboard(Psn first, uint32_t capacity) : capacity_(capacity), una_(first), next_(first) {
  if (capacity < 64 || capacity > (1u << 22) || (capacity & (capacity - 1)) != 0) {
    std::fprintf(stderr, "nic/mrc/sack_tracker: capacity %u must be a power of two in [64, 2^22]\n", capacity);
    std::abort();
  }
  acked_.assign(capacity / 64, 0);
  reported_.assign(capacity / 64, 0);
}

void SackScoreboard::rearm(Psn psn) {
  if (in_flight_psn(psn)) put(reported_, psn, false);
}

bool SackScoreboard::acked(Psn psn) const {
  if (in_flight_psn(psn)) return get(acked_, psn);
  return psn.before(una_);  // cumulatively acknowledged (when sent at all)
}

SackVerdict SackScoreboard::check(Psn cack, int16_t sack_offset, uint64_t bitmap) const {
  const Psn last_sent = next_ - 1;
  if (cack.after(last_sent)) return SackVerdict::kInvalid;
  if (bitmap != 0) {
    const int hi = 63 - std::countl_zero(bitmap);
    const Psn top = wire::mrc_sack_base(cack, sack_offset) + static_cast<uint32_t>(hi);
    if (top.after(last_sent)) return SackVerdict::kInvalid;
  }
  return cack.before(una_ - 1) ? SackVerdict::kStale : SackVerdict::kOk;
}

}  // namespace sf::nic::mrc
