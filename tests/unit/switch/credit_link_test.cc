// Credit-based link FC as a port component (switch/pipeline/credit_link.h)
// on its own: the queue <-> VL maps, slots taken and freed on receive (and
// the update owed), VL arbitration and credit spending on transmit, stall
// timing, and CreditInHand (the slots a drop frees, once). No SwitchNode.
#include "switch/pipeline/credit_link.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace sf::sw {
namespace {

// Two VLs: TCs 0-3 on VL 0 (queues 0-3), TCs 4-7 on VL 1 (queues 4-7, in
// reverse); 4 slots a VL of 1024 bytes; an update every 2 freed slots.
CreditFcConfig two_vls() {
  CreditFcConfig c;
  c.mtu_bytes = 1024;
  c.vl_mask = 0b11;
  c.vl_buffer_bytes[0] = 4 * 1024;
  c.vl_buffer_bytes[1] = 4 * 1024;
  c.update_threshold = 2;
  for (int sl = 0; sl < 8; ++sl) c.sl_to_vl[sl] = sl < 4 ? 0 : 1;
  c.vl_weight[0] = 1;
  c.vl_weight[1] = 1;
  return c;
}

PortQos qos() {
  PortQos q;
  for (int tc = 0; tc < 8; ++tc) q.tc_to_queue[tc] = static_cast<uint8_t>(tc < 4 ? tc : 11 - tc);
  return q;
}

QueuedPkt pkt(uint8_t queue, uint32_t bytes) {
  QueuedPkt p;
  p.queue = queue;
  p.bytes = bytes;
  return p;
}

TEST(CreditLink, QueueAndVlMaps) {
  const CreditLink c(two_vls(), qos());
  for (int q = 0; q < 4; ++q) EXPECT_EQ(c.vl_of_queue(q), 0) << q;
  for (int q = 4; q < 8; ++q) EXPECT_EQ(c.vl_of_queue(q), 1) << q;
  EXPECT_EQ(c.queues_of_vl(0), 0x0F);
  EXPECT_EQ(c.queues_of_vl(1), 0xF0);
  EXPECT_EQ(c.default_vl(), 0);
  EXPECT_EQ(c.slots_for(64), 1);
  EXPECT_EQ(c.slots_for(1024 + 128), 1);
  EXPECT_EQ(c.slots_for(1024 + 129), 2);
  EXPECT_EQ(c.slots_for(1u << 30), 255);  // capped: it fits QueuedPkt::credit_slots
}

TEST(CreditLink, ArrivalsHoldSlotsUntilFreedAndOweAnUpdate) {
  CreditLink c(two_vls(), qos());
  QueuedPkt a = pkt(5, 100);
  c.on_arrival(a);
  EXPECT_EQ(a.credit_vl, 1);
  EXPECT_EQ(a.credit_slots, 1);
  QueuedPkt b = pkt(6, 2000);
  c.on_arrival(b);
  EXPECT_EQ(b.credit_slots, 2);
  EXPECT_EQ(c.fc().receiver().occupied(1), 3u);
  EXPECT_FALSE(c.update_due());
  EXPECT_FALSE(c.free_slots(a.credit_vl, a.credit_slots));  // 1 freed: below the threshold
  EXPECT_TRUE(c.free_slots(b.credit_vl, b.credit_slots));
  EXPECT_TRUE(c.update_due());
  EXPECT_EQ(c.fc().receiver().occupied(1), 0u);
  // The update frame the peer gets.
  std::array<uint8_t, wire::kCreditFrameMaxBytes> f{};
  EXPECT_GT(c.build_update(f, wire::MacAddr{{2, 0, 0, 0, 0, 1}}), 0u);
  EXPECT_FALSE(c.update_due());
}

TEST(CreditLink, UnclassifiedDropIsChargedAndFreed) {
  CreditLink c(two_vls(), qos());
  EXPECT_FALSE(c.free_unclassified(c.default_vl(), 1));
  EXPECT_TRUE(c.free_unclassified(c.default_vl(), 1));
  EXPECT_EQ(c.fc().receiver().occupied(0), 0u);
  EXPECT_EQ(c.fc().counters().rx_overrun, 0u);
}

TEST(CreditLink, EligibleQueuesAreThoseOfTheArbitratedVlWithCredit) {
  CreditLink c(two_vls(), qos());
  std::array<uint32_t, kNumQueues> head{};
  EXPECT_EQ(c.eligible(head, 0xFF), 0);  // nothing queued
  head[1] = 100;
  head[6] = 100;
  const uint8_t first = c.eligible(head, 0xFF);
  const uint8_t second = c.eligible(head, 0xFF);
  // Weights 1 / 1: the VLs take turns; each answer is one VL's queues.
  EXPECT_TRUE((first == 0x0F && second == 0xF0) || (first == 0xF0 && second == 0x0F)) << int{first} << " " << int{second};
  EXPECT_EQ(c.eligible(head, 0x0F) , 0x0F);  // queue 6 not eligible (paused): VL 0 only
  // VL 1 spends its 4 credits: only VL 0 can go.
  for (int i = 0; i < 4; ++i) c.on_send(6, 100);
  EXPECT_EQ(c.fc().sender().available(1), 0u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.eligible(head, 0xFF), 0x0F);
  // A head packet needing more credits than left waits too.
  head[1] = 3000;  // 3 slots
  for (int i = 0; i < 2; ++i) c.on_send(1, 100);  // 2 left on VL 0
  EXPECT_EQ(c.eligible(head, 0xFF), 0);
  EXPECT_EQ(c.fc().counters().tx_without_credit, 0u);
}

TEST(CreditLink, BacklogWithoutCreditIsAStall) {
  CreditLink c(two_vls(), qos());
  QueueArena arena(kNumQueues * 8);
  std::array<EgressQueue, kNumQueues> queues;
  for (auto& q : queues) q = arena.take(8);
  QueuedPkt p = pkt(4, 100);
  queues[4].push(p, Ticket{});
  for (int i = 0; i < 4; ++i) c.on_send(4, 100);  // VL 1 out of credit
  c.note_backlog(queues, 0, TimeNs::from_us(1));
  EXPECT_TRUE(c.fc().sender().stalled(1));
  EXPECT_FALSE(c.fc().sender().stalled(0));
  CreditLink d(two_vls(), qos());
  for (int i = 0; i < 4; ++i) d.on_send(4, 100);
  d.note_backlog(queues, 0x10, TimeNs::from_us(1));  // queue 4 paused: not waiting for credit
  EXPECT_FALSE(d.fc().sender().stalled(1));
  queues[4].pop();
}

TEST(CreditInHand, TakeFreesOnce) {
  CreditInHand h;
  EXPECT_EQ(h.take().vl, kNoCreditVl);
  QueuedPkt p = pkt(0, 64);
  p.credit_vl = 3;
  p.credit_slots = 2;
  h.set(p);
  const CreditInHand::Held a = h.take();
  EXPECT_EQ(a.vl, 3);
  EXPECT_EQ(a.slots, 2);
  EXPECT_FALSE(a.unclassified);
  EXPECT_EQ(h.take().vl, kNoCreditVl);  // dropped once
  h.set_unclassified(5, 1);
  const CreditInHand::Held b = h.take();
  EXPECT_EQ(b.vl, 5);
  EXPECT_TRUE(b.unclassified);
  h.set_unclassified(5, 1);
  h.clear();
  EXPECT_EQ(h.take().vl, kNoCreditVl);
  p.credit_vl = kNoCreditVl;
  h.set(p);  // a plain port's packet holds nothing
  EXPECT_EQ(h.take().vl, kNoCreditVl);
}

}  // namespace
}  // namespace sf::sw
