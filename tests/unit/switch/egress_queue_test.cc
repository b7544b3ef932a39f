// EgressQueue (switch/pipeline/egress_queue.h): FIFO order across the ring's
// wrap, and an empty queue restarting at slot 0 so that a ring's zero pages
// are touched only as deep as its deepest backlog (docs/soak.md "Findings":
// the soak switch's RssAnon grew by 40 B a forwarded packet until every ring
// had gone round once).
#include "switch/pipeline/egress_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace sf::sw {
namespace {

QueuedPkt pkt(uint32_t n) {
  QueuedPkt p;
  p.bytes = 64 + n;
  p.l3_offset = static_cast<uint16_t>(n);
  return p;
}

// n slots of zero bytes, as QueueArena's calloc gives them (QueuedPkt's
// default member values are not all zero).
std::vector<QueuedPkt> zeroed(size_t n) {
  std::vector<QueuedPkt> v(n);
  std::memset(static_cast<void*>(v.data()), 0, n * sizeof(QueuedPkt));
  return v;
}

// Slots never written are still all zero bytes.
size_t touched(const std::vector<QueuedPkt>& slots) {
  size_t n = 0;
  for (const QueuedPkt& s : slots) {
    const auto* b = reinterpret_cast<const uint8_t*>(&s);
    bool zero = true;
    for (size_t i = 0; i < sizeof s; ++i) zero = zero && b[i] == 0;
    n += zero ? 0 : 1;
  }
  return n;
}

TEST(EgressQueue, FifoAcrossTheWrap) {
  std::vector<QueuedPkt> slots = zeroed(8);
  EgressQueue q(8, slots.data());
  uint32_t in = 0, out = 0;
  // Never empty: the indices go round the ring several times.
  q.push(pkt(in++));
  for (int i = 0; i < 50; ++i) {
    q.push(pkt(in++));
    q.push(pkt(in++));
    ASSERT_EQ(q.pop().l3_offset, out++);
    ASSERT_EQ(q.pop().l3_offset, out++);
    ASSERT_FALSE(q.empty());
  }
  EXPECT_EQ(q.packets(), 1u);
  EXPECT_EQ(q.bytes(), 64u + out);
  EXPECT_EQ(q.pop().l3_offset, out);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.bytes(), 0u);
  EXPECT_EQ(q.head_bytes(), 0u);
  // Full at capacity.
  for (uint32_t i = 0; i < 8; ++i) q.push(pkt(i));
  EXPECT_TRUE(q.full());
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(q.pop().l3_offset, i);
  EXPECT_TRUE(q.empty());
}

TEST(EgressQueue, AnEmptyQueueRestartsAtSlotZero) {
  std::vector<QueuedPkt> slots = zeroed(1024);
  EgressQueue q(1024, slots.data());
  // 10,000 packets one at a time: one slot touched, not the whole ring.
  for (uint32_t i = 0; i < 10000; ++i) {
    q.push(pkt(i));
    ASSERT_EQ(q.front().l3_offset, i);
    ASSERT_EQ(q.pop().l3_offset, i);
  }
  EXPECT_EQ(touched(slots), 1u);
  // Backlogs of up to 5 packets: 5 slots.
  for (uint32_t round = 0; round < 1000; ++round) {
    const uint32_t depth = 1 + round % 5;
    for (uint32_t i = 0; i < depth; ++i) q.push(pkt(i));
    for (uint32_t i = 0; i < depth; ++i) ASSERT_EQ(q.pop().l3_offset, i);
    ASSERT_TRUE(q.empty());
  }
  EXPECT_EQ(touched(slots), 5u);
}

// push_run and pop_while (the ring in registers: stage D's whole-run push,
// transmit's tx_run) against push and pop one by one on a twin queue:
// random runs of 0..32 copies with tickets, random pops stopped at a random
// head or count, across the wrap and the restart at slot 0. Expect: the same
// packets, tickets, bytes, head_bytes and emptiness after every step.
TEST(EgressQueue, PushRunAndPopWhileEqualPushAndPop) {
  std::vector<QueuedPkt> slots_a = zeroed(64), slots_b = zeroed(64);
  EgressQueue a(64, slots_a.data()), b(64, slots_b.data());
  uint32_t seed = 12345;
  auto rnd = [&] { return seed = seed * 1103515245u + 12345u, seed >> 8; };
  uint32_t next = 0;
  for (int step = 0; step < 5000; ++step) {
    const uint32_t room = 64 - a.packets();
    const uint32_t n = std::min<uint32_t>(rnd() % 33, room);
    std::vector<QueuedPkt> run;
    for (uint32_t i = 0; i < n; ++i) run.push_back(pkt(next++ % 5000));
    auto ticket = [&](uint32_t i) { return Ticket{static_cast<uint16_t>(i + 1), static_cast<uint16_t>(i), 0, 7}; };
    a.push_run(run.data(), n, ticket);
    for (uint32_t i = 0; i < n; ++i) b.push(run[i], ticket(i));
    const uint32_t max = rnd() % 40;
    const uint32_t stop_at = rnd() % 40;  // the head that take() refuses
    std::vector<rte_mbuf*> got;
    const EgressQueue::Popped p = a.pop_while(max, [&](const QueuedPkt& f, uint32_t k) {
      EXPECT_EQ(k, got.size());
      if (k == stop_at) return false;
      got.push_back(f.mbuf);
      return true;
    });
    uint64_t bytes = 0;
    uint32_t popped = 0;
    while (popped < max && popped != stop_at && !b.empty()) {
      const QueuedPkt r = b.pop();
      bytes += r.bytes;
      ++popped;
    }
    ASSERT_EQ(p.packets, popped) << step;
    ASSERT_EQ(p.bytes, bytes) << step;
    ASSERT_EQ(a.packets(), b.packets());
    ASSERT_EQ(a.bytes(), b.bytes());
    ASSERT_EQ(a.head_bytes(), b.head_bytes());
    if (!a.empty()) {
      ASSERT_EQ(a.front().l3_offset, b.front().l3_offset);
      ASSERT_EQ(a.front().ticket.cells, b.front().ticket.cells);
      ASSERT_EQ(a.front().ticket.ing_shared, b.front().ticket.ing_shared);
    }
  }
  // Emptied by pop_while: restarts at slot 0 like pop().
  a.pop_while(1000, [](const QueuedPkt&, uint32_t) { return true; });
  while (!b.empty()) b.pop();
  a.push(pkt(1));
  b.push(pkt(1));
  EXPECT_EQ(&a.front() - slots_a.data(), 0);
  EXPECT_EQ(&b.front() - slots_b.data(), 0);
}

}  // namespace
}  // namespace sf::sw
