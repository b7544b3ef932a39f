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

SackTracker::SackTracker(Psn first, uint16_t mpr) : cack_(first - 1), mpr_(mpr > kMaxWindow ? kMaxWindow : mpr) {
  if (mpr == 0) {
    std::fprintf(stderr, "nic/mrc/sack_tracker: mpr must be >= 1\n");
    std::abort();
  }
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
  const uint64_t bit = uint64_t{1} << (d - 1);
  if (bitmap_ & bit) {
    ++rx_dup_;
    return PsnVerdict::kDuplicate;
  }
  bitmap_ |= bit;
  // Advance CACK over the in-order prefix.
  const int n = std::countr_one(bitmap_);
  cack_ += static_cast<uint32_t>(n);
  bitmap_ = n >= 64 ? 0 : bitmap_ >> n;
  ++rx_new_;
  return PsnVerdict::kNew;
}

bool SackTracker::received(Psn psn) const {
  return wire::mrc_sack_state(cack_, 1, bitmap_, psn) == wire::MrcSackState::kReceived;
}

SackFields SackTracker::sack(Psn trigger) const {
  SackFields f;
  f.cack = cack_;
  f.sack_offset = 1;
  f.bitmap = bitmap_;
  f.mpr = mpr_;
  const int32_t off = Psn::diff(trigger, cack_);
  f.ack_psn_offset = static_cast<int16_t>(off < INT16_MIN ? INT16_MIN : (off > INT16_MAX ? INT16_MAX : off));
  f.ooo_count = static_cast<uint16_t>(std::popcount(bitmap_));
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

Psn SackScoreboard::on_send() {
  const Psn p = next_;
  put(acked_, p, false);
  put(reported_, p, false);
  ++next_;
  return p;
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
