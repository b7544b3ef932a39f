// TimingWheel: Carousel-style time-indexed queue of paced senders (endpoint.md
// 6.1-6.2). Each entry is an id (a QP slot) with an exact departure time; the
// wheel files it in slot (time / slot_width) mod num_slots, or in an overflow
// list beyond the horizon. pop_due(now) returns entries whose time is <= now,
// earliest slot first and the earliest time within a slot, so departures are
// exact (the driver is woken at next_time()) and never early.
// Pure logic, fixed capacity (ids 0..capacity-1, each present at most once):
// no allocation after construction. Threading: the node's thread.
// Cost: a bitmap of occupied slots lets the cursor skip empty slots 64 at a
// time and next_time() find the earliest slot without walking the empty ones
// (the wheel is polled every driver iteration, the cursor moves by the time
// since the last poll). The slot count is rounded up to a power of two.
#pragma once

#include <cstdint>
#include <vector>

#include "common/time.h"

namespace sf::nic {

class TimingWheel {
 public:
  TimingWheel(uint32_t capacity, TimeNs slot_width, uint32_t num_slots);

  // Files `id` to depart at `at` (an earlier `at` than the cursor is due at
  // once). An id already present is moved.
  void insert(uint32_t id, TimeNs at);
  void remove(uint32_t id);
  bool contains(uint32_t id) const { return id < node_.size() && node_[id].slot != kNone; }
  // The earliest entry due at `now`: true and *id set, or false.
  bool pop_due(TimeNs now, uint32_t* id);
  // Earliest departure time in the wheel; TimeNs::max() when empty.
  TimeNs next_time() const;
  uint32_t size() const { return size_; }
  TimeNs slot_width() const { return TimeNs(width_ns_); }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint32_t kOverflow = UINT32_MAX - 1;
  struct Node {
    int64_t at_ns = 0;
    uint32_t slot = kNone;  // wheel slot, kOverflow, or kNone
    uint32_t prev = kNone;
    uint32_t next = kNone;
  };
  void link(uint32_t id, uint32_t slot);
  void unlink(uint32_t id);
  // The first absolute slot number in [from, limit) whose slot holds an
  // entry; `limit` when none (limit - from <= number of slots).
  int64_t find_occupied(int64_t from, int64_t limit) const;
  // Moves the cursor to `now`'s slot, carrying entries of passed slots and
  // overflow entries now within the horizon.
  void advance_cursor(int64_t now_ns);
  uint32_t& head_of(uint32_t slot) { return slot == kOverflow ? overflow_head_ : heads_[slot]; }

  int64_t width_ns_;
  std::vector<uint32_t> heads_;
  uint32_t mask_;                 // heads_.size() - 1 (a power of two)
  std::vector<uint64_t> occupied_;  // bit s set <=> heads_[s] != kNone
  std::vector<Node> node_;
  uint32_t overflow_head_ = kNone;
  int64_t overflow_min_abs_ = INT64_MAX;  // lower bound of the overflow entries' slots
  int64_t cursor_abs_ = 0;  // absolute slot number of the cursor
  uint32_t size_ = 0;
  mutable int64_t cached_next_ns_ = INT64_MAX;
  mutable bool cache_valid_ = true;
};

}  // namespace sf::nic
