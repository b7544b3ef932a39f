// EventQueue: the simulator's pending events, a binary min-heap of small POD
// events ordered by (time, seq). seq is assigned at push and strictly
// increases, so events at the same time run in the order they were scheduled:
// the run is a pure function of the inputs and the seed. Storage grows to the
// high-water mark and is then reused (no allocation in steady state).
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

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

class EventQueue {
 public:
  void reserve(size_t n) {
    if (n > heap_.size()) heap_.resize(n);
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  const Event& top() const { return heap_[0]; }
  // Every pending event, in heap (not time) order; for cleanup.
  std::span<const Event> pending() const { return {heap_.data(), size_}; }

  void push(int64_t time_ns, EventKind kind, uint32_t target, rte_mbuf* pkt = nullptr, uint16_t aux = 0) {
    if (size_ == heap_.size()) heap_.resize(heap_.empty() ? 64 : heap_.size() * 2);  // grows to the high-water mark
    sift_up(size_++, Event{time_ns, next_seq_++, pkt, target, aux, kind});
  }

  Event pop() {
    const Event top = heap_[0];
    --size_;
    if (size_ > 0) sift_down(heap_[size_]);
    return top;
  }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time_ns < b.time_ns || (a.time_ns == b.time_ns && a.seq < b.seq);
  }

  // Places `e` at the hole `i` or above it.
  void sift_up(size_t i, const Event& e) {
    Event* h = heap_.data();
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!before(e, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = e;
  }

  // Places `e` (a copy of the former last element) starting from the root.
  void sift_down(const Event e) {
    Event* h = heap_.data();
    const size_t n = size_;
    size_t i = 0;
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(h[child + 1], h[child])) ++child;
      if (!before(h[child], e)) break;
      h[i] = h[child];
      i = child;
    }
    h[i] = e;
  }

  std::vector<Event> heap_;  // [0, size_) is the heap; the rest is spare capacity
  size_t size_ = 0;
  uint64_t next_seq_ = 0;
};

}  // namespace sf::sim
