// EventQueue: the simulator's pending events, a 4-ary min-heap of small POD
// events ordered by (time, seq). seq is assigned at push and strictly
// increases, so events at the same time run in the order they were scheduled:
// the run is a pure function of the inputs and the seed. Storage grows to the
// high-water mark and is then reused (no allocation in steady state).
#pragma once

#include <cstdint>
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
  uint16_t aux;     // kDeliver: link down-epoch at send; kLinkState: up
  EventKind kind;
};
static_assert(std::is_trivially_copyable_v<Event>);
static_assert(sizeof(Event) == 32);

// A 4-ary heap: half the levels of a binary one, and a node's four children
// (32 B each) fill one 128-byte-aligned block, two cache lines, so a sift
// down touches about half the lines (the heap of a large fabric holds ~10^5
// events, beyond L2). Pops follow (time, seq), a total order, so the run is
// the same whatever the heap's shape.
class EventQueue {
 public:
  void reserve(size_t n) {
    if (n > cap_) grow(n);
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  const Event& top() const { return at(0); }
  // Every pending event, in heap (not time) order; for cleanup.
  std::span<const Event> pending() const { return {heap_.get() + kPad, size_}; }

  void push(int64_t time_ns, EventKind kind, uint32_t target, rte_mbuf* pkt = nullptr, uint16_t aux = 0) {
    if (size_ == cap_) grow(cap_ == 0 ? 64 : cap_ * 2);  // grows to the high-water mark
    sift_up(size_++, Event{time_ns, next_seq_++, pkt, target, aux, kind});
  }

  Event pop() {
    const Event top = at(0);
    --size_;
    if (size_ > 0) sift_down(at(size_));
    return top;
  }

 private:
  // Element i lives at heap_[i + kPad]: the children of i, 4i+1 .. 4i+4, then
  // start at a multiple of 4 slots (128 bytes).
  static constexpr size_t kPad = 3;
  static constexpr size_t kAlign = 128;
  struct FreeAligned {
    void operator()(Event* p) const { ::operator delete[](p, std::align_val_t(kAlign)); }
  };

  Event& at(size_t i) { return heap_[i + kPad]; }
  const Event& at(size_t i) const { return heap_[i + kPad]; }

  void grow(size_t n) {
    std::unique_ptr<Event[], FreeAligned> h(static_cast<Event*>(::operator new[]((n + kPad) * sizeof(Event), std::align_val_t(kAlign))));
    if (size_ > 0) std::memcpy(h.get() + kPad, heap_.get() + kPad, size_ * sizeof(Event));
    heap_ = std::move(h);
    cap_ = n;
  }

  static bool before(const Event& a, const Event& b) {
    return a.time_ns < b.time_ns || (a.time_ns == b.time_ns && a.seq < b.seq);
  }

  // Places `e` at the hole `i` or above it.
  void sift_up(size_t i, const Event& e) {
    Event* h = heap_.get() + kPad;
    while (i > 0) {
      const size_t parent = (i - 1) / 4;
      if (!before(e, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = e;
  }

  // Places `e` (a copy of the former last element) starting from the root.
  void sift_down(const Event e) {
    Event* h = heap_.get() + kPad;
    const size_t n = size_;
    size_t i = 0;
    while (true) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t best = first;
      const size_t last = first + 4 < n ? first + 4 : n;
      for (size_t c = first + 1; c < last; ++c) {
        if (before(h[c], h[best])) best = c;
      }
      if (!before(h[best], e)) break;
      h[i] = h[best];
      i = best;
    }
    h[i] = e;
  }

  std::unique_ptr<Event[], FreeAligned> heap_;  // [kPad, kPad + size_) is the heap; then spare capacity up to cap_
  size_t cap_ = 0;
  size_t size_ = 0;
  uint64_t next_seq_ = 0;
};

}  // namespace sf::sim
