// A fixed-capacity FIFO of packets waiting on one egress queue (or held at
// ingress for one lossless PG), with what the MMU charged for each (returned
// on dequeue). Capacity is set once at setup;
// push/pop never allocate. Owned by the lcore that runs the switch node.
// The ring comes from calloc: a large one is mapped zero pages that take
// memory only once packets reach them (a 65-port switch has 16 rings per port
// of up to 16384 entries, most never more than a few deep); an empty queue
// restarts at slot 0 (pop), so only the deepest backlog's slots are touched
// (and at most one run, 32 slots, past it: tail_slots). A switch carves
// all its rings from one such block (QueueArena): one mapping per switch,
// not one per ring (a fabric of 512 switches has ~300,000 rings).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

#include "switch/mmu/mmu.h"

struct rte_mbuf;

namespace sf::sw {

// 32 bytes, no padding (the order packs them): stage C builds one a copy,
// stage D copies it into the run and the ring, transmit copies it out.
struct QueuedPkt {
  rte_mbuf* mbuf = nullptr;
  Ticket ticket;
  uint32_t bytes = 0;      // frame bytes (pkt_len)
  uint16_t in_port = 0;
  uint16_t out_port = 0;
  uint8_t pg = 0;
  uint8_t queue = 0;
  uint8_t ip_version = 0;  // 4 / 6: header at l3_offset may be ECN-marked; 0: never
  bool trimmed = false;    // cut to its headers by packet trimming
  uint16_t l3_offset = 0;
  uint8_t credit_vl = 0xFF;  // credit-mode ingress: VL whose slots this packet holds; 0xFF none (switch_node_credit.cc)
  uint8_t credit_slots = 0;  // credits it took there
};
static_assert(sizeof(QueuedPkt) == 32);

// Slots are written by push before pop or front() reads them.
static_assert(std::is_trivially_copyable_v<QueuedPkt> && std::is_trivially_destructible_v<QueuedPkt>);

class EgressQueue {
 public:
  // Capacity rounded up to a power of two.
  static uint32_t round_capacity(uint32_t capacity) {
    uint32_t c = 1;
    while (c < capacity) c <<= 1;
    return c;
  }
  explicit EgressQueue(uint32_t capacity = 1) {
    const uint32_t c = round_capacity(capacity);
    ring_.reset(static_cast<QueuedPkt*>(std::calloc(c, sizeof(QueuedPkt))));
    if (!ring_) throw std::bad_alloc();
    mask_ = c - 1;
  }
  // A ring of round_capacity(capacity) slots at `slots` (zeroed, not owned:
  // it outlives the queue).
  EgressQueue(uint32_t capacity, QueuedPkt* slots) : ring_(slots, Free{false}), mask_(round_capacity(capacity) - 1) {}

  bool empty() const { return head_ == tail_; }
  bool full() const { return tail_ - head_ > mask_; }  // capacity mask_ + 1 (no division by sizeof)
  uint32_t packets() const { return tail_ - head_; }
  uint32_t capacity() const { return mask_ + 1; }
  uint64_t bytes() const { return bytes_; }
  uint32_t head_bytes() const { return empty() ? 0 : ring_[head_ & mask_].bytes; }
  const QueuedPkt& front() const { return ring_[head_ & mask_]; }

  // Caller checks full() first.
  void push(const QueuedPkt& p) {
    ring_[tail_++ & mask_] = p;
    bytes_ += p.bytes;
  }
  // push(p) with what the MMU charged for it.
  void push(const QueuedPkt& p, const Ticket& t) {
    QueuedPkt& slot = ring_[tail_++ & mask_];
    slot = p;
    slot.ticket = t;
    bytes_ += p.bytes;
  }
  // A queue that runs empty starts again at slot 0, so a ring's pages are
  // touched only as deep as its deepest backlog (the calloc'ed arena's zero
  // pages stay untouched), not all of it once the tail has gone round.
  // pop() of the head, whose bytes (head_bytes()) are `bytes`, once the
  // caller has read it (front()); returns the new head_bytes().
  uint32_t pop_head(uint32_t bytes) {
    ++head_;
    bytes_ -= bytes;
    if (head_ == tail_) {
      head_ = tail_ = 0;
      return 0;
    }
    return ring_[head_ & mask_].bytes;
  }
  // Pops heads in order while take(head, k) (k: how many taken before it)
  // says so, at most `max`: pop() of each, walking the ring's slots with a
  // pointer (at most two contiguous segments: to the ring's end, then from
  // slot 0). Returns how many and their bytes.
  struct Popped {
    uint32_t packets = 0;
    uint64_t bytes = 0;
  };
  template <class Take>
  [[gnu::always_inline]] Popped pop_while(uint32_t max, Take&& take) {
    const QueuedPkt* ring = ring_.get();
    const uint32_t h = head_;
    const uint32_t avail = std::min(max, tail_ - h);
    uint32_t start = h & mask_;
    uint32_t seg = std::min(avail, mask_ + 1 - start);
    uint32_t k = 0;
    uint64_t bytes = 0;
    for (;;) {
      const QueuedPkt* f = ring + start;
      const QueuedPkt* const end = f + seg;
      for (; f != end; ++f) {
        if (!take(*f, k)) break;
        bytes += f->bytes;
        ++k;
      }
      if (f != end || k == avail) break;
      start = 0;  // wrapped
      seg = avail - k;
    }
    bytes_ -= bytes;
    head_ = h + k;
    if (head_ == tail_) head_ = tail_ = 0;
    return Popped{k, bytes};
  }
  // push(run[i], ticket(i)) for i in [0, n): the caller checked that n fit.
  template <class TicketOf>
  [[gnu::always_inline]] void push_run(const QueuedPkt* run, uint32_t n, TicketOf&& ticket) {
    QueuedPkt* ring = ring_.get();
    const uint32_t mask = mask_;
    uint32_t t = tail_;
    uint64_t b = 0;
    for (uint32_t i = 0; i < n; ++i) {
      QueuedPkt& slot = ring[t++ & mask];
      slot = run[i];
      slot.ticket = ticket(i);
      b += run[i].bytes;
    }
    tail_ = t;
    bytes_ += b;
  }
  // The n slots after the tail when they are contiguous in the ring (else
  // nullptr): the caller fills them, then commit_run(n, their bytes) pushes
  // them; not committed, they stay free (a later push overwrites them). The
  // caller checked that n fit (packets() + n <= capacity()).
  QueuedPkt* tail_slots(uint32_t n) {
    const uint32_t t = tail_ & mask_;
    return t + n <= mask_ + 1 ? ring_.get() + t : nullptr;
  }
  void commit_run(uint32_t n, uint64_t bytes) {
    tail_ += n;
    bytes_ += bytes;
  }
  QueuedPkt pop() {
    const QueuedPkt p = ring_[head_++ & mask_];
    bytes_ -= p.bytes;
    if (head_ == tail_) head_ = tail_ = 0;
    return p;
  }

 private:
  struct Free {
    Free() noexcept : owned(true) {}
    explicit Free(bool own) noexcept : owned(own) {}
    bool owned;
    void operator()(QueuedPkt* p) const {
      if (owned) std::free(p);
    }
  };
  std::unique_ptr<QueuedPkt[], Free> ring_;
  uint32_t mask_ = 0;
  uint32_t head_ = 0;  // free-running indices
  uint32_t tail_ = 0;
  uint64_t bytes_ = 0;
};

// Zeroed slots for many rings from one calloc (large: mapped zero pages).
class QueueArena {
 public:
  QueueArena() = default;
  explicit QueueArena(uint64_t slots)
      : mem_(static_cast<QueuedPkt*>(std::calloc(slots == 0 ? 1 : slots, sizeof(QueuedPkt)))), size_(slots) {
    if (mem_ == nullptr) throw std::bad_alloc();
  }
  // The next ring of `capacity` (rounded up to a power of two) slots.
  EgressQueue take(uint32_t capacity) {
    const uint32_t c = EgressQueue::round_capacity(capacity);
    if (used_ + c > size_) throw std::bad_alloc();  // (sized by the caller)
    QueuedPkt* p = mem_.get() + used_;
    used_ += c;
    return EgressQueue(c, p);
  }

 private:
  struct Free {
    void operator()(QueuedPkt* p) const { std::free(p); }
  };
  std::unique_ptr<QueuedPkt[], Free> mem_;
  uint64_t size_ = 0;
  uint64_t used_ = 0;
};

}  // namespace sf::sw
