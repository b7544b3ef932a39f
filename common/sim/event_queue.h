// EventQueue: the simulator's pending events, a binary min-heap of small POD
// events ordered by (time, seq). The simulator assigns seq when it schedules
// an event (simulator.h: a global count, or the partitioned engine's
// (origin node, its count)), unique per event, so events at the same time
// run in a fixed order: the run is a pure function of the inputs and the
// seed. An event may be scheduled before it enters the heap: the simulator
// keeps a link direction's later deliveries in its own FIFO and files only
// the earliest here (simulator.h, Channel::fifo); each still runs at its
// place in (time, seq) order.
//
// Layout: 1-based in a 64-byte-aligned array, so the two children of a slot
// (2i, 2i + 1: 32 bytes each) share one cache line and a sift-down step
// touches one line, not two. Storage grows to the high-water mark and is
// then reused (no allocation in steady state).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <type_traits>

struct rte_mbuf;

namespace sf::sim {

enum class EventKind : uint8_t {
  kTxDone,     // target = channel: its wire finished serialising a frame
  kDeliver,    // target = channel: `pkt` arrives at the channel's receiver
  kWakeup,     // target = node: a next_wakeup() deadline
  kLinkState,  // target = link: aux = 1 up, 0 down
  kFault,      // target = index into the simulator's fault actions (blackhole, loss, reboot)
};

struct Event {
  int64_t time_ns;
  uint64_t seq;
  rte_mbuf* pkt;    // kDeliver only; owned by the queue until dispatched
  uint32_t target;  // channel, node or link index, by kind
  uint16_t aux;     // kDeliver: link down-epoch at send; kLinkState: up | (end + 1) << 1 (0: both ends)
  EventKind kind;
};
static_assert(std::is_trivially_copyable_v<Event>);
static_assert(sizeof(Event) == 32);

class EventQueue {
 public:
  void reserve(size_t n) {
    if (n > cap_) grow(n);
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  const Event& top() const { return heap_[1]; }
  // Every pending event, in heap (not time) order; for cleanup.
  std::span<const Event> pending() const { return {heap_.get() + 1, size_}; }

  void push_seq(int64_t time_ns, uint64_t seq, EventKind kind, uint32_t target, rte_mbuf* pkt, uint16_t aux) {
    if (size_ + 1 >= cap_) grow(cap_ == 0 ? 64 : cap_ * 2);  // grows to the high-water mark
    sift_up(++size_, Event{time_ns, seq, pkt, target, aux, kind});
  }

  Event pop() {
    const Event top = heap_[1];
    --size_;
    if (size_ > 0) sift_down(heap_[size_ + 1]);
    return top;
  }

 private:
  struct Free {
    void operator()(Event* p) const { std::free(p); }
  };

  static bool before(const Event& a, const Event& b) {
    return a.time_ns < b.time_ns || (a.time_ns == b.time_ns && a.seq < b.seq);
  }

  void grow(size_t n) {
    const size_t bytes = (n * sizeof(Event) + 63) / 64 * 64;
    auto* p = static_cast<Event*>(std::aligned_alloc(64, bytes));
    if (p == nullptr) throw std::bad_alloc();
    if (size_ > 0) std::memcpy(static_cast<void*>(p + 1), heap_.get() + 1, size_ * sizeof(Event));
    heap_.reset(p);
    cap_ = bytes / sizeof(Event);
  }

  // Places `e` at the hole `i` or above it.
  void sift_up(size_t i, const Event& e) {
    Event* h = heap_.get();
    while (i > 1) {
      const size_t parent = i / 2;
      if (!before(e, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = e;
  }

  // Places `e` (a copy of the former last element) starting from the root.
  void sift_down(const Event e) {
    Event* h = heap_.get();
    const size_t n = size_;
    size_t i = 1;
    while (true) {
      size_t child = 2 * i;
      if (child > n) break;
      if (child + 1 <= n && before(h[child + 1], h[child])) ++child;
      if (!before(h[child], e)) break;
      h[i] = h[child];
      i = child;
    }
    h[i] = e;
  }

  std::unique_ptr<Event[], Free> heap_;  // [1, size_] is the heap; slot 0 unused; the rest spare
  size_t cap_ = 0;                       // slots, slot 0 included
  size_t size_ = 0;
};

}  // namespace sf::sim
