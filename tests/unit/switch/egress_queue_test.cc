// EgressQueue (switch/pipeline/egress_queue.h): FIFO order across the ring's
// wrap, and an empty queue restarting at slot 0 so that a ring's zero pages
// are touched only as deep as its deepest backlog (docs/soak.md "Findings":
// the soak switch's RssAnon grew by 40 B a forwarded packet until every ring
// had gone round once).
#include "switch/pipeline/egress_queue.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sf::sw
