// Carousel timing wheel. See timing_wheel.h.
#include "nic/host/timing_wheel.h"

#include <stdexcept>

namespace sf::nic {

TimingWheel::TimingWheel(uint32_t capacity, TimeNs slot_width, uint32_t num_slots)
    : width_ns_(slot_width.ns()), heads_(num_slots, kNone), node_(capacity) {
  if (slot_width.ns() <= 0 || num_slots == 0) throw std::invalid_argument("TimingWheel: slot width and slots must be > 0");
}

void TimingWheel::link(uint32_t id, uint32_t slot) {
  Node& n = node_[id];
  uint32_t& head = head_of(slot);
  n.slot = slot;
  n.prev = kNone;
  n.next = head;
  if (head != kNone) node_[head].prev = id;
  head = id;
}

void TimingWheel::unlink(uint32_t id) {
  Node& n = node_[id];
  if (n.prev != kNone) {
    node_[n.prev].next = n.next;
  } else {
    head_of(n.slot) = n.next;
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
    link(id, static_cast<uint32_t>(abs % n));
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
  const uint32_t dst = static_cast<uint32_t>(target % n);
  // Entries of the slots passed over are due: carry them to the new cursor slot.
  const int64_t steps = target - cursor_abs_ >= n ? n : target - cursor_abs_;
  for (int64_t k = 0; k < steps; ++k) {
    const auto s = static_cast<uint32_t>((cursor_abs_ + k) % n);
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
      link(id, static_cast<uint32_t>(abs % n));
    } else if (abs < overflow_min_abs_) {
      overflow_min_abs_ = abs;
    }
    id = next;
  }
}

bool TimingWheel::pop_due(TimeNs now, uint32_t* out) {
  if (size_ == 0) return false;
  advance_cursor(now.ns());
  const auto s = static_cast<uint32_t>(cursor_abs_ % static_cast<int64_t>(heads_.size()));
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
  for (int64_t k = 0; k < n && best == INT64_MAX; ++k) {
    for (uint32_t id = heads_[static_cast<size_t>((cursor_abs_ + k) % n)]; id != kNone; id = node_[id].next) {
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
