#include "nic/mrc/ev_set.h"

#include <algorithm>

#include <cstdio>
#include <cstdlib>

namespace sf::nic::mrc {

const char* to_string(EvState s) {
  switch (s) {
    case EvState::kGood: return "good";
    case EvState::kSkip: return "skip";
    case EvState::kAssumedBad: return "assumed_bad";
    case EvState::kDenied: return "denied";
  }
  return "?";
}

const char* to_string(EvSignal s) {
  switch (s) {
    case EvSignal::kEcnEcho: return "ecn_echo";
    case EvSignal::kTrimmed: return "trimmed";
    case EvSignal::kTrimmedLastHop: return "trimmed_lasthop";
    case EvSignal::kAlwaysSkip: return "always_skip";
    case EvSignal::kLoss: return "loss";
  }
  return "?";
}

const char* to_string(EvOutcome o) {
  switch (o) {
    case EvOutcome::kNone: return "none";
    case EvOutcome::kSkipped: return "skipped";
    case EvOutcome::kRetired: return "retired";
    case EvOutcome::kReadmitted: return "readmitted";
  }
  return "?";
}

const char* EvSetConfig::error() const {
  if (num_planes < 1 || num_planes > kMaxPlanes) return "num_planes must be 1..32";
  if (num_evs < 1 || num_evs > kMaxEvs) return "num_evs must be 1..256";
  if (num_evs % num_planes != 0) return "num_evs must be a multiple of num_planes (EVs spread evenly)";
  if (backup_per_plane >= num_evs / num_planes) return "backup_per_plane must leave at least one active EV per plane";
  if (probes_to_readmit < 1) return "probes_to_readmit must be >= 1";
  if (uint64_t{ev_base} + num_evs - 1 > 0xFFFFFFFFull) return "ev_base + num_evs overflows 32 bits";
  return nullptr;
}

EvSet::EvSet(const EvSetConfig& cfg) : cfg_(cfg) {
  if (const char* e = cfg.error()) {
    std::fprintf(stderr, "nic/mrc/ev_set: invalid config: %s\n", e);
    std::abort();
  }
  const uint16_t per_plane = cfg.num_evs / cfg.num_planes;
  target_active_ = static_cast<uint16_t>(per_plane - cfg.backup_per_plane);
  rotation_ = static_cast<uint16_t>(target_active_ * cfg.num_planes);
  up_mask_ = cfg.num_planes == 32 ? 0xFFFFFFFFu : (1u << cfg.num_planes) - 1;
  // Index i is the (i / num_planes)-th EV of plane i % num_planes: the first
  // target_active_ of each plane are active, the rest backups.
  for (uint16_t i = 0; i < cfg.num_evs; ++i) {
    if (i / cfg.num_planes < target_active_) set_active(i, true);
  }
}

void EvSet::refresh(uint16_t index) {
  Ev& e = evs_[index];
  const bool want = is_usable(e, index);
  if (want && e.pos == kNotUsable) {
    e.pos = n_usable_;
    usable_[n_usable_++] = static_cast<uint8_t>(index);
  } else if (!want && e.pos != kNotUsable) {
    const uint16_t last = usable_[--n_usable_];
    usable_[e.pos] = static_cast<uint8_t>(last);
    evs_[last].pos = e.pos;
    e.pos = kNotUsable;
  }
}

void EvSet::set_active(uint16_t index, bool a) {
  Ev& e = evs_[index];
  if (e.active == a) return;
  e.active = a;
  if (a) {
    ++active_per_plane_[plane(index)];
  } else {
    --active_per_plane_[plane(index)];
  }
  refresh(index);
}

void EvSet::leave_active(uint16_t index) {
  if (!evs_[index].active) {
    refresh(index);
    return;
  }
  set_active(index, false);
  // A GOOD backup of the same plane takes the slot (lowest index: deterministic).
  const uint8_t p = plane(index);
  for (uint16_t j = p; j < cfg_.num_evs; j = static_cast<uint16_t>(j + cfg_.num_planes)) {
    if (!evs_[j].active && evs_[j].state == EvState::kGood) {
      set_active(j, true);
      return;
    }
  }
  ++no_backup_;
}

void EvSet::become_good(uint16_t index) {
  Ev& e = evs_[index];
  e.state = EvState::kGood;
  e.probe_streak = 0;
  if (!e.active && active_per_plane_[plane(index)] < target_active_) {
    set_active(index, true);
  } else {
    refresh(index);
  }
}

void EvSet::pop_skip() {
  const SkipEntry entry = skip_ring_[skip_head_];
  skip_head_ = static_cast<uint16_t>((skip_head_ + 1) % kSkipRing);
  --skip_count_;
  Ev& e = evs_[entry.index];
  if (e.state == EvState::kSkip && e.skip_until == entry.until) {
    become_good(entry.index);  // a backup refills its plane if it runs short
  }
}

bool EvSet::expire_skips(bool force_one) {
  bool ended = false;
  while (skip_count_ > 0) {
    const SkipEntry& head = skip_ring_[skip_head_];
    const Ev& e = evs_[head.index];
    const bool live = e.state == EvState::kSkip && e.skip_until == head.until;
    if (live && head.until > picks_ && !(force_one && !ended)) break;
    if (live) ended = true;
    pop_skip();
  }
  return ended;
}

std::optional<EvPick> EvSet::pick_next_slow(Rng& rng, bool retransmission, std::optional<uint16_t> avoid) {
  expire_skips(false);
  if (n_usable_ == 0) {
    // Only skipped EVs left: end the oldest skip rather than stall.
    while (n_usable_ == 0 && expire_skips(true)) {
    }
  }
  if (n_usable_ == 0) {
    ++no_usable_;
    return std::nullopt;
  }
  uint16_t idx;
  if (avoid && *avoid < cfg_.num_evs && n_usable_ > 1 && evs_[*avoid].pos != kNotUsable) {
    // Uniform over the others: draw among n-1 slots, the avoided slot maps to the last.
    const uint16_t r = static_cast<uint16_t>(rng.below(n_usable_ - 1));
    idx = r == evs_[*avoid].pos ? usable_[n_usable_ - 1] : usable_[r];
  } else {
    idx = usable_[rng.below(n_usable_)];
  }
  return count_pick(idx, retransmission);
}

uint16_t EvSet::alive_in_plane(uint8_t p) const {
  uint16_t n = 0;
  for (uint16_t j = p; j < cfg_.num_evs; j = static_cast<uint16_t>(j + cfg_.num_planes)) {
    n += evs_[j].active && (evs_[j].state == EvState::kGood || evs_[j].state == EvState::kSkip) ? 1 : 0;
  }
  return n;
}

uint16_t EvSet::usable_in_plane(uint8_t p) const {
  uint16_t n = 0;
  for (uint16_t i = 0; i < n_usable_; ++i) n += plane(usable_[i]) == p ? 1 : 0;
  return n;
}

std::optional<EvPick> EvSet::pick_in_plane(Rng& rng, uint8_t p, bool retransmission, std::optional<uint16_t> avoid) {
  expire_skips(false);
  uint16_t n = usable_in_plane(p);
  // Only skipped EVs left in the plane: end skips (oldest first) rather than stall.
  while (n == 0 && plane_up(p) && expire_skips(true)) n = usable_in_plane(p);
  if (n == 0) {
    ++no_usable_;
    return std::nullopt;
  }
  const bool skip_avoid = avoid && *avoid < cfg_.num_evs && n > 1 && evs_[*avoid].pos != kNotUsable &&
                          plane(*avoid) == p;
  uint16_t r = static_cast<uint16_t>(rng.below(skip_avoid ? n - 1 : n));
  uint16_t idx = 0;
  for (uint16_t i = 0; i < n_usable_; ++i) {
    const uint16_t k = usable_[i];
    if (plane(k) != p || (skip_avoid && k == *avoid)) continue;
    if (r == 0) {
      idx = k;
      break;
    }
    --r;
  }
  return count_pick(idx, retransmission);
}

std::optional<EvPick> EvSet::take(uint16_t index, bool retransmission) {
  if (index >= cfg_.num_evs || evs_[index].pos == kNotUsable) return std::nullopt;
  return count_pick(index, retransmission);
}

EvOutcome EvSet::skip(uint16_t index) {
  Ev& e = evs_[index];
  if (skip_count_ == kSkipRing) pop_skip();
  e.state = EvState::kSkip;
  e.skip_until = picks_ + rotation_;
  skip_ring_[(skip_head_ + skip_count_) % kSkipRing] = SkipEntry{index, e.skip_until};
  ++skip_count_;
  ++e.counters.skipped;
  refresh(index);
  return EvOutcome::kSkipped;
}

EvOutcome EvSet::on_signal(uint16_t index, EvSignal s) {
  if (index >= cfg_.num_evs) return EvOutcome::kNone;
  Ev& e = evs_[index];
  switch (s) {
    case EvSignal::kTrimmedLastHop:
      return EvOutcome::kNone;
    case EvSignal::kEcnEcho:
    case EvSignal::kTrimmed:
      if (e.state != EvState::kGood) return EvOutcome::kNone;
      return skip(index);
    case EvSignal::kAlwaysSkip:
    case EvSignal::kLoss: {
      if (e.state == EvState::kAssumedBad || e.state == EvState::kDenied) return EvOutcome::kNone;
      // Floor: a loss does not retire one of the last live EVs of its plane
      // (1/8 of the plane's active share, at least 1); the EV is skipped for a
      // rotation instead. Without it, reordering past ooo_tolerance (queues
      // of a too-large window) read as losses retired all 128 EVs within
      // 0.5 ms and the QP stalled until probes re-admitted them (docs/mrc.md).
      // A dead plane is taken out by its port status, not by retirements.
      if (e.active && plane_up(plane(index))) {
        const uint16_t floor = static_cast<uint16_t>(std::max(1, target_active_ / 8));
        if (alive_in_plane(plane(index)) <= floor) {
          ++retire_refused_;
          return skip(index);
        }
      }
      e.state = EvState::kAssumedBad;
      e.probe_streak = 0;
      ++e.counters.retired;
      leave_active(index);
      return EvOutcome::kRetired;
    }
  }
  return EvOutcome::kNone;
}

std::optional<uint16_t> EvSet::next_probe() {
  for (uint16_t n = 0; n < cfg_.num_evs; ++n) {
    const uint16_t i = probe_cursor_;
    probe_cursor_ = static_cast<uint16_t>((probe_cursor_ + 1) % cfg_.num_evs);
    if (evs_[i].state == EvState::kAssumedBad && plane_up(plane(i))) return i;
  }
  return std::nullopt;
}

void EvSet::on_probe_sent(uint16_t index) {
  if (index < cfg_.num_evs) ++evs_[index].counters.probes;
}

EvOutcome EvSet::on_probe_result(uint16_t index, bool ok) {
  if (index >= cfg_.num_evs) return EvOutcome::kNone;
  Ev& e = evs_[index];
  if (e.state != EvState::kAssumedBad) return EvOutcome::kNone;
  if (!ok) {
    e.probe_streak = 0;
    return EvOutcome::kNone;
  }
  ++e.counters.probe_ok;
  if (++e.probe_streak < cfg_.probes_to_readmit) return EvOutcome::kNone;
  ++e.counters.readmitted;
  become_good(index);
  return EvOutcome::kReadmitted;
}

void EvSet::set_planes_up(uint32_t up_mask) {
  for (uint8_t p = 0; p < cfg_.num_planes; ++p) set_plane_up(p, (up_mask >> p) & 1u);
}

void EvSet::set_plane_up(uint8_t p, bool up) {
  if (p >= cfg_.num_planes || plane_up(p) == up) return;
  up_mask_ = up ? (up_mask_ | (1u << p)) : (up_mask_ & ~(1u << p));
  for (uint16_t j = p; j < cfg_.num_evs; j = static_cast<uint16_t>(j + cfg_.num_planes)) refresh(j);
}

void EvSet::deny(uint16_t index) {
  if (index >= cfg_.num_evs || evs_[index].state == EvState::kDenied) return;
  evs_[index].state = EvState::kDenied;
  leave_active(index);
}

void EvSet::allow(uint16_t index) {
  if (index >= cfg_.num_evs || evs_[index].state != EvState::kDenied) return;
  become_good(index);
}

std::optional<uint16_t> EvSet::index_of(uint32_t value) const {
  if (value < cfg_.ev_base || value - cfg_.ev_base >= cfg_.num_evs) return std::nullopt;
  return static_cast<uint16_t>(value - cfg_.ev_base);
}

}  // namespace sf::nic::mrc
