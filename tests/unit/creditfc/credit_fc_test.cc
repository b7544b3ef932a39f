// Credit-based flow control: credits per VL in MTU units, updates after the
// threshold, cumulative grants that survive a lost update, stall timing, VL
// arbitration weights.
#include "common/creditfc/credit_fc.h"

#include <gtest/gtest.h>

namespace sf {
namespace {

CreditFcConfig cfg(uint32_t mtu, uint32_t buffer, uint32_t threshold) {
  CreditFcConfig c;
  c.mtu_bytes = mtu;
  c.vl_mask = 0b11;
  c.vl_buffer_bytes[0] = buffer;
  c.vl_buffer_bytes[1] = buffer;
  c.update_threshold = threshold;
  c.vl_weight[0] = 1;
  c.vl_weight[1] = 1;
  return c;
}

// 1. 1 MiB per VL at MTU 8 KiB = 128 credits (seed 003); the sender stops at zero.
TEST(CreditFc, CreditsAreBufferOverMtu) {
  const CreditFcConfig c = cfg(8192, 1 << 20, 8);
  EXPECT_EQ(c.credits(0), 128u);
  CreditSender tx(c);
  for (int i = 0; i < 128; ++i) {
    ASSERT_TRUE(tx.can_send(0));
    tx.on_send(0);
  }
  EXPECT_FALSE(tx.can_send(0));
  EXPECT_TRUE(tx.can_send(1));
}

// 2. The receiver advertises only after `threshold` freed slots, with the
// cumulative grant; a lost update is repaired by the next one.
TEST(CreditFc, UpdatesAfterThresholdAndCumulative) {
  const CreditFcConfig c = cfg(4096, 4 * 4096, 2);
  CreditSender tx(c);
  CreditReceiver rx(c);
  for (int i = 0; i < 4; ++i) tx.on_send(0);
  ASSERT_FALSE(tx.can_send(0));
  rx.on_freed(0);
  EXPECT_EQ(rx.updates_due(), 0u);
  rx.on_freed(0);
  ASSERT_EQ(rx.updates_due(), 1u);
  const uint32_t lost = rx.granted_total(0);  // this update is lost on the wire
  EXPECT_EQ(lost, 6u);
  rx.sent_updates(1);
  rx.on_freed(0);
  rx.on_freed(0);
  ASSERT_EQ(rx.updates_due(), 1u);
  tx.on_update(0, rx.granted_total(0), TimeNs(0));
  EXPECT_EQ(tx.available(0), 4u);  // both updates' credits, from one message
  tx.on_update(0, lost, TimeNs(0));  // a late, stale update takes nothing back
  EXPECT_EQ(tx.available(0), 4u);
}

// 3. Stalls are timed from "waiting with no credit" to the credit's arrival and
// land in power-of-two microsecond buckets.
TEST(CreditFc, StallDurationsHistogram) {
  const CreditFcConfig c = cfg(4096, 4096, 1);
  CreditSender tx(c);
  tx.on_send(0);
  tx.note_backlog(0, true, TimeNs::from_us(10));
  tx.on_update(0, 2, TimeNs::from_us(13));  // 3 us stall -> bucket [2, 4) us
  tx.on_send(0);
  tx.note_backlog(0, true, TimeNs::from_us(20));
  tx.on_update(0, 3, TimeNs::from_us(20) + TimeNs(500));  // 0.5 us -> bucket 0
  tx.on_send(0);
  tx.note_backlog(0, true, TimeNs::from_us(30));
  tx.note_backlog(0, false, TimeNs::from_ms(5) + TimeNs::from_us(30));  // 5 ms -> [4096, 8192) us
  const CreditStallStats& s = tx.stalls(0);
  EXPECT_EQ(s.stalls, 3u);
  EXPECT_EQ(s.histogram[2], 1u);
  EXPECT_EQ(s.histogram[0], 1u);
  EXPECT_EQ(s.histogram[13], 1u);
  EXPECT_EQ(s.stalled_time, TimeNs::from_us(3) + TimeNs(500) + TimeNs::from_ms(5));
}

// 4. Arbitration: weights 3:1 share 75/25 while both VLs are ready; a VL with
// weight 0 is never picked; an overweighted VL takes most of the link (seed
// 003's misconfigured VL15).
TEST(VlArbiter, WeightedShares) {
  std::array<uint32_t, kMaxVls> w{};
  w[0] = 3;
  w[1] = 1;
  VlArbiter arb(w);
  int n0 = 0;
  for (int i = 0; i < 4000; ++i) n0 += arb.pick(0b11) == 0;
  EXPECT_EQ(n0, 3000);
  EXPECT_EQ(arb.pick(0b100), -1);  // VL2 has weight 0
  w[15] = 60;
  w[1] = 20;
  w[0] = 20;
  VlArbiter bad(w);
  int data = 0;
  for (int i = 0; i < 10000; ++i) {
    const int v = bad.pick(0b1000'0000'0000'0011);
    data += v == 0 || v == 1;
  }
  EXPECT_EQ(data, 4000);  // data VLs get 40 % of the link
}

}  // namespace
}  // namespace sf
