// CreditPort: one link end's credit state and frames. Two ports wired back to
// back by hand (frames copied between them), numbered scenarios.
#include "common/creditfc/credit_port.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace sf {
namespace {

const wire::MacAddr kMacA{{0x02, 0, 0, 0, 0, 0x0A}};

CreditFcConfig cfg(uint32_t mtu, uint32_t buffer, uint32_t threshold, uint16_t vl_mask = 0b11) {
  CreditFcConfig c;
  c.mtu_bytes = mtu;
  c.vl_mask = vl_mask;
  for (int v = 0; v < kMaxVls; ++v) {
    c.vl_buffer_bytes[v] = c.vl_valid(v) ? buffer : 0;
    c.vl_weight[v] = c.vl_valid(v) ? 1 : 0;
  }
  c.update_threshold = threshold;
  c.sl_to_vl[3] = 1;
  return c;
}

// Moves the update owed by `from` (if any) into `to`; returns whether one went.
bool deliver_update(CreditPort& from, CreditPort& to, TimeNs now) {
  std::array<uint8_t, wire::kCreditFrameMaxBytes> buf{};
  const size_t n = from.build_update(buf, kMacA);
  if (n == 0) return false;
  EXPECT_EQ(to.on_frame({buf.data(), n}, now), CreditRxOutcome::kApplied);
  return true;
}

// 1. A sends on VL 1 until its 4 credits are gone; B frees slots and, every
// 2 (threshold), owes one frame; delivering it gives A its credits back.
// Expect: A blocked at 4 sent, 2 credits back per update, frames counted.
TEST(CreditPort, CreditsFlowBackAtThreshold) {
  CreditPort a(cfg(4096, 4 * 4096, 2));
  CreditPort b(cfg(4096, 4 * 4096, 2));
  EXPECT_EQ(a.vl_of_sl(3), 1);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(a.can_send(1));
    a.on_send(1);
    b.on_arrival(1);
  }
  EXPECT_FALSE(a.can_send(1));
  EXPECT_TRUE(a.can_send(0));
  b.on_freed(1);
  EXPECT_FALSE(deliver_update(b, a, TimeNs(0)));  // 1 freed < threshold 2
  b.on_freed(1);
  ASSERT_TRUE(deliver_update(b, a, TimeNs(0)));
  EXPECT_EQ(a.sender().available(1), 2u);
  EXPECT_FALSE(b.update_due());
  EXPECT_EQ(b.counters().tx_updates, 1u);
  EXPECT_EQ(a.counters().rx_updates, 1u);
  EXPECT_EQ(b.counters().rx_overrun, 0u);
}

// 2. A stall: A waits with no credit from t=10 us to the update at t=12.5 us.
// Expect: one stall, in the [2, 4) us bucket, in the port's counters.
TEST(CreditPort, StallTimedUntilUpdate) {
  CreditPort a(cfg(4096, 4096, 1));
  CreditPort b(cfg(4096, 4096, 1));
  a.on_send(0);
  b.on_arrival(0);
  a.note_backlog(0, true, TimeNs::from_us(10));
  b.on_freed(0);
  ASSERT_TRUE(deliver_update(b, a, TimeNs::from_us(12) + TimeNs(500)));
  const CreditCounters c = a.counters();
  EXPECT_EQ(c.credit_stalls, 1u);
  EXPECT_EQ(c.stall_histogram[2], 1u);
  EXPECT_EQ(c.stalled_time, TimeNs(2500));
  EXPECT_TRUE(a.can_send(0));
}

// 3. Bad frames: truncated, bad version, unknown opcode. Expect: each counted
// under its reason, credits unchanged.
TEST(CreditPort, MalformedFramesCountedAndIgnored) {
  CreditPort a(cfg(4096, 4096, 1));
  a.on_send(0);
  const std::array<wire::CreditGrant, 1> g{{{0, 5}}};
  std::array<uint8_t, 60> f{};
  ASSERT_EQ(wire::build_credit_frame(f, kMacA, g), 60u);
  EXPECT_EQ(a.on_frame({f.data(), 20}, TimeNs(0)), CreditRxOutcome::kMalformed);
  auto bad = f;
  bad[14] = 9;
  EXPECT_EQ(a.on_frame(bad, TimeNs(0)), CreditRxOutcome::kMalformed);
  bad = f;
  bad[15] = 7;
  EXPECT_EQ(a.on_frame(bad, TimeNs(0)), CreditRxOutcome::kMalformed);
  const CreditCounters c = a.counters();
  EXPECT_EQ(c.rx_malformed, 3u);
  EXPECT_EQ(c.rx_malformed_by_reason[static_cast<size_t>(wire::CreditParseReason::kTruncated)], 1u);
  EXPECT_EQ(c.rx_malformed_by_reason[static_cast<size_t>(wire::CreditParseReason::kBadVersion)], 1u);
  EXPECT_EQ(c.rx_malformed_by_reason[static_cast<size_t>(wire::CreditParseReason::kUnknownOpcode)], 1u);
  EXPECT_EQ(c.rx_updates, 0u);
  EXPECT_FALSE(a.can_send(0));
}

// 4. A frame for VLs 0 and 7 on a port using VLs 0-1. Expect: VL 0 applied,
// VL 7 counted as unknown and skipped.
TEST(CreditPort, UnknownVlEntrySkipped) {
  CreditPort a(cfg(4096, 4096, 1));
  a.on_send(0);
  const std::array<wire::CreditGrant, 2> g{{{7, 100}, {0, 2}}};
  std::array<uint8_t, 60> f{};
  ASSERT_GT(wire::build_credit_frame(f, kMacA, g), 0u);
  EXPECT_EQ(a.on_frame(f, TimeNs(0)), CreditRxOutcome::kPartlyUnknownVl);
  EXPECT_EQ(a.counters().rx_unknown_vl, 1u);
  EXPECT_EQ(a.sender().available(0), 1u);
  EXPECT_EQ(a.sender().available(7), 0u);
}

// 5. A lost update is healed by the next one (cumulative grant), and one
// frame carries every VL that is due.
TEST(CreditPort, LostUpdateHealedAndVlsShareAFrame) {
  CreditPort a(cfg(4096, 2 * 4096, 1));
  CreditPort b(cfg(4096, 2 * 4096, 1));
  for (int vl : {0, 0, 1, 1}) {
    a.on_send(vl);
    b.on_arrival(vl);
  }
  b.on_freed(0);
  std::array<uint8_t, wire::kCreditFrameMaxBytes> lost{};
  ASSERT_GT(b.build_update(lost, kMacA), 0u);  // never delivered
  b.on_freed(0);
  b.on_freed(1);
  std::array<uint8_t, wire::kCreditFrameMaxBytes> buf{};
  const size_t n = b.build_update(buf, kMacA);
  ASSERT_GT(n, 0u);
  const wire::CreditFrameInfo fi = wire::parse_credit_frame({buf.data(), n});
  ASSERT_TRUE(fi.ok());
  EXPECT_EQ(fi.entries.size(), 2u);
  EXPECT_EQ(a.on_frame({buf.data(), n}, TimeNs(0)), CreditRxOutcome::kApplied);
  EXPECT_EQ(a.sender().available(0), 2u);  // both freed slots, one of them from the lost update
  EXPECT_EQ(a.sender().available(1), 1u);
}

// 6. A peer that sends without credit. B has 2 slots; after 2 arrivals it
// frees one but has not advertised it yet (threshold 1, frame not sent), so
// a third arrival is an overrun even though a slot is free. Once updates
// went out (grant 4), a fourth arrival is within credit. Expect: 1 overrun.
TEST(CreditPort, OverrunIsArrivalBeyondAdvertisedCredit) {
  CreditPort b(cfg(4096, 2 * 4096, 1));
  b.on_arrival(0);
  b.on_arrival(0);
  EXPECT_EQ(b.counters().rx_overrun, 0u);
  b.on_freed(0);
  b.on_arrival(0);
  EXPECT_EQ(b.counters().rx_overrun, 1u);
  std::array<uint8_t, wire::kCreditFrameMaxBytes> buf{};
  ASSERT_GT(b.build_update(buf, kMacA), 0u);  // advertises 3
  b.on_freed(0);
  ASSERT_GT(b.build_update(buf, kMacA), 0u);  // advertises 4
  b.on_arrival(0);
  EXPECT_EQ(b.counters().rx_overrun, 1u);
  EXPECT_EQ(b.receiver().occupied(0), 2u);
}

// 7. Jumbo frames: with a 2 KiB MTU a credit holds a frame of up to
// 2048 + 128 bytes; a 9000-byte frame takes 5. A sends one 9000-byte and one
// 100-byte frame from a pool of 6; a second jumbo waits (a stall for 5
// credits) until B frees the first one and advertises.
// Expect: credits_for 1/1/5, stall ended by the update, no overrun.
TEST(CreditPort, JumboFrameTakesSeveralCredits) {
  CreditPort a(cfg(2048, 6 * 2048, 1));
  CreditPort b(cfg(2048, 6 * 2048, 1));
  EXPECT_EQ(a.credits_for(100), 1u);
  EXPECT_EQ(a.credits_for(2048 + 128), 1u);
  EXPECT_EQ(a.credits_for(9000), 5u);
  a.on_send(0, 5);
  b.on_arrival(0, 5);
  a.on_send(0, 1);
  b.on_arrival(0, 1);
  EXPECT_FALSE(a.can_send(0, 5));
  a.note_backlog(0, 5, TimeNs(0));
  EXPECT_TRUE(a.sender().stalled(0));
  b.on_freed(0, 1);  // the small one: 1 credit back is not enough for the jumbo
  ASSERT_TRUE(deliver_update(b, a, TimeNs(100)));
  EXPECT_TRUE(a.sender().stalled(0));
  b.on_freed(0, 5);
  ASSERT_TRUE(deliver_update(b, a, TimeNs(300)));
  EXPECT_FALSE(a.sender().stalled(0));
  EXPECT_EQ(a.counters().stalled_time, TimeNs(300));
  EXPECT_EQ(a.sender().available(0), 6u);
  EXPECT_EQ(b.counters().rx_overrun, 0u);
  EXPECT_EQ(a.counters().tx_without_credit, 0u);
  a.on_send(0, 7);  // a bug in the owner: counted
  EXPECT_EQ(a.counters().tx_without_credit, 1u);
}

}  // namespace
}  // namespace sf
