// Carousel timing wheel. See timing_wheel.h.
#include "nic/host/timing_wheel.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace sf::nic {

namespace {
uint32_t pow2_at_least(uint32_t n) {
  if (n == 0 || n > (1u << 31)) throw std::invalid_argument("TimingWheel: slot width and slots must be > 0");
  return std::bit_ceil(n);
}
}  // namespace

TimingWheel::TimingWheel(uint32_t capacity, TimeNs slot_width, uint32_t num_slots)
    : width_ns_(slot_width.ns()),
      heads_(pow2_at_least(num_slots), kNone),
      mask_(static_cast<uint32_t>(heads_.size() - 1)),
      occupied_((heads_.size() + 63) / 64, 0),
      node_(capacity) {
  if (slot_width.ns() <= 0) throw std::invalid_argument("TimingWheel: slot width and slots must be > 0");
}

int64_t TimingWheel::find_occupied(int64_t from, int64_t limit) const {
  const auto n = static_cast<int64_t>(heads_.size());
  int64_t pos = from;
  while (pos < limit) {
    const auto s = static_cast<uint32_t>(pos & mask_);
    const uint32_t bit = s & 63u;
    const uint64_t word = occupied_[s >> 6] >> bit;
    if (word != 0) {
      const int64_t at = pos + std::countr_zero(word);
      return at < limit ? at : limit;
    }
    // To the end of this word, or of the slot array (wrap).
    pos += std::min<int64_t>(64 - bit, n - s);
  }
  return limit;
}

void TimingWheel::link(uint32_t id, uint32_t slot) {
  Node& n = node_[id];
  uint32_t& head = head_of(slot);
  n.slot = slot;
  n.prev = kNone;
  n.next = head;
  if (head != kNone) node_[head].prev = id;
  head = id;
  if (slot != kOverflow) occupied_[slot >> 6] |= uint64_t{1} << (slot & 63u);
}

void TimingWheel::unlink(uint32_t id) {
  Node& n = node_[id];
  if (n.prev != kNone) {
    node_[n.prev].next = n.next;
  } else {
    head_of(n.slot) = n.next;
    if (n.next == kNone && n.slot != kOverflow) occupied_[n.slot >> 6] &= ~(uint64_t{1} << (n.slot & 63u));
  }
  if (n.next != kNone) node_[n.next].prev = n.prev;
  n.slot = kNone;
  n.prev = n.next = kNone;
}

void TimingWheel::insert(uint32_t id, TimeNs at) {
  if (id >= node_.size()) return;
  if (contains(id)) {
    // Moving an entry later may move the earliest time; moving it earlier
    // keeps the cache exact (min below).
    if (at.ns() > node_[id].at_ns) cache_valid_ = false;
    unlink(id);
    --size_;
  }
  node_[id].at_ns = at.ns();
  int64_t abs = at.ns() / width_ns_;
  if (abs < cursor_abs_) abs = cursor_abs_;
  const auto n = static_cast<int64_t>(heads_.size());
  if (abs >= cursor_abs_ + n) {
    link(id, kOverflow);
    if (abs < overflow_min_abs_) overflow_min_abs_ = abs;
  } else {
    link(id, static_cast<uint32_t>(abs) & mask_);
  }
  ++size_;
  if (cache_valid_ && at.ns() < cached_next_ns_) cached_next_ns_ = at.ns();
}

void TimingWheel::remove(uint32_t id) {
  if (!contains(id)) return;
  unlink(id);
  --size_;
  cache_valid_ = false;
}

void TimingWheel::advance_cursor(int64_t now_ns) {
  const int64_t target = now_ns / width_ns_;
  if (target <= cursor_abs_) return;
  const auto n = static_cast<int64_t>(heads_.size());
  const uint32_t dst = static_cast<uint32_t>(target) & mask_;
  // Entries of the slots passed over are due: carry them to the new cursor slot.
  const int64_t steps = target - cursor_abs_ >= n ? n : target - cursor_abs_;
  const int64_t end = cursor_abs_ + steps;
  for (int64_t abs = find_occupied(cursor_abs_, end); abs < end; abs = find_occupied(abs + 1, end)) {
    const auto s = static_cast<uint32_t>(abs) & mask_;
    if (s == dst) continue;
    while (heads_[s] != kNone) {
      const uint32_t id = heads_[s];
      unlink(id);
      link(id, dst);
    }
  }
  cursor_abs_ = target;
  // Overflow entries that are now inside the horizon (the list is walked
  // only when its earliest entry comes within reach).
  if (overflow_head_ == kNone || overflow_min_abs_ >= cursor_abs_ + n) return;
  overflow_min_abs_ = INT64_MAX;
  uint32_t id = overflow_head_;
  while (id != kNone) {
    const uint32_t next = node_[id].next;
    int64_t abs = node_[id].at_ns / width_ns_;
    if (abs < cursor_abs_ + n) {
      if (abs < cursor_abs_) abs = cursor_abs_;
      unlink(id);
      link(id, static_cast<uint32_t>(abs) & mask_);
    } else if (abs < overflow_min_abs_) {
      overflow_min_abs_ = abs;
    }
    id = next;
  }
}

bool TimingWheel::pop_due(TimeNs now, uint32_t* out) {
  if (size_ == 0) return false;
  advance_cursor(now.ns());
  const auto s = static_cast<uint32_t>(cursor_abs_) & mask_;
  uint32_t best = kNone;
  for (uint32_t id = heads_[s]; id != kNone; id = node_[id].next) {
    if (node_[id].at_ns <= now.ns() && (best == kNone || node_[id].at_ns < node_[best].at_ns ||
                                        (node_[id].at_ns == node_[best].at_ns && id < best))) {
      best = id;
    }
  }
  if (best == kNone) return false;
  unlink(best);
  --size_;
  cache_valid_ = false;
  *out = best;
  return true;
}

TimeNs TimingWheel::next_time() const {
  if (size_ == 0) return TimeNs::max();
  if (cache_valid_) return TimeNs(cached_next_ns_);
  int64_t best = INT64_MAX;
  const auto n = static_cast<int64_t>(heads_.size());
  // The first occupied slot from the cursor on holds the earliest entries
  // (an entry sits in the slot of its time, or the cursor's when overdue).
  const int64_t first = find_occupied(cursor_abs_, cursor_abs_ + n);
  if (first < cursor_abs_ + n) {
    for (uint32_t id = heads_[static_cast<uint32_t>(first) & mask_]; id != kNone; id = node_[id].next) {
      if (node_[id].at_ns < best) best = node_[id].at_ns;
    }
  }
  for (uint32_t id = overflow_head_; id != kNone; id = node_[id].next) {
    if (node_[id].at_ns < best) best = node_[id].at_ns;
  }
  cached_next_ns_ = best;
  cache_valid_ = true;
  return TimeNs(best);
}

}  // namespace sf::nic
