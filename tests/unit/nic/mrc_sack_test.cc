// SackTracker / SackScoreboard (nic/mrc/sack_tracker.h): the responder's
// CACK + bitmap and the requester's view of a SACK, across the 24-bit wrap.
#include "nic/mrc/sack_tracker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>
#include <vector>

#include "common/rng.h"

namespace sf::nic::mrc {
namespace {

// 1. In order: CACK follows, bitmap stays empty, a repeat is a duplicate.
TEST(MrcSackTracker, InOrderAndDuplicate) {
  SackTracker t(Psn(100));
  EXPECT_EQ(t.cack(), Psn(99));
  EXPECT_EQ(t.on_packet(Psn(100)), PsnVerdict::kNew);
  EXPECT_EQ(t.on_packet(Psn(101)), PsnVerdict::kNew);
  EXPECT_EQ(t.cack(), Psn(101));
  EXPECT_EQ(t.bitmap(), 0u);
  EXPECT_EQ(t.on_packet(Psn(100)), PsnVerdict::kDuplicate);
  EXPECT_EQ(t.rx_new(), 2u);
  EXPECT_EQ(t.rx_duplicate(), 1u);
}

// 2. Out of order: holes in the bitmap, duplicates of held PSNs, the hole
//    filled advances CACK over the whole prefix; the SACK matches what the
//    wire helpers read back.
TEST(MrcSackTracker, OutOfOrderBitmap) {
  SackTracker t(Psn(0));
  EXPECT_EQ(t.on_packet(Psn(2)), PsnVerdict::kNew);
  EXPECT_EQ(t.on_packet(Psn(3)), PsnVerdict::kNew);
  EXPECT_EQ(t.on_packet(Psn(5)), PsnVerdict::kNew);
  EXPECT_EQ(t.on_packet(Psn(5)), PsnVerdict::kDuplicate);
  EXPECT_EQ(t.cack(), Psn(0xFFFFFF));  // nothing in order yet
  SackFields f = t.sack(Psn(5));
  EXPECT_EQ(f.sack_offset, 1);
  EXPECT_EQ(f.ooo_count, 3);
  EXPECT_EQ(f.ack_psn_offset, 6);
  using wire::MrcSackState;
  EXPECT_EQ(wire::mrc_sack_state(f.cack, f.sack_offset, f.bitmap, Psn(0)), MrcSackState::kMissing);
  EXPECT_EQ(wire::mrc_sack_state(f.cack, f.sack_offset, f.bitmap, Psn(1)), MrcSackState::kMissing);
  EXPECT_EQ(wire::mrc_sack_state(f.cack, f.sack_offset, f.bitmap, Psn(2)), MrcSackState::kReceived);
  EXPECT_EQ(wire::mrc_sack_state(f.cack, f.sack_offset, f.bitmap, Psn(4)), MrcSackState::kMissing);
  EXPECT_EQ(wire::mrc_sack_state(f.cack, f.sack_offset, f.bitmap, Psn(5)), MrcSackState::kReceived);
  EXPECT_EQ(t.on_packet(Psn(0)), PsnVerdict::kNew);
  EXPECT_EQ(t.cack(), Psn(0));
  EXPECT_EQ(t.on_packet(Psn(1)), PsnVerdict::kNew);
  EXPECT_EQ(t.cack(), Psn(3));
  EXPECT_EQ(t.bitmap(), 0b10u);  // 5 = cack + 2
  EXPECT_TRUE(t.received(Psn(5)));
  EXPECT_FALSE(t.received(Psn(4)));
}

// 3. Window: beyond CACK + mpr is out of window; the 64th PSN is in.
TEST(MrcSackTracker, Window) {
  SackTracker t(Psn(10));
  EXPECT_EQ(t.on_packet(Psn(10 + 64)), PsnVerdict::kOutOfWindow);
  EXPECT_EQ(t.on_packet(Psn(10 + 63)), PsnVerdict::kNew);
  EXPECT_EQ(t.bitmap(), uint64_t{1} << 63);
  SackTracker small(Psn(10), 8);
  EXPECT_EQ(small.on_packet(Psn(18)), PsnVerdict::kOutOfWindow);
  EXPECT_EQ(small.on_packet(Psn(17)), PsnVerdict::kNew);
  EXPECT_EQ(small.rx_out_of_window(), 1u);
  EXPECT_EQ(small.sack(Psn(17)).mpr, 8);
  EXPECT_EQ(SackTracker(Psn(0), 1000).mpr(), 64);  // clamped to the bitmap's reach
  // A full window in reverse order ends with CACK past all 64.
  SackTracker r(Psn(0));
  for (int i = 63; i >= 0; --i) EXPECT_EQ(r.on_packet(Psn(static_cast<uint32_t>(i))), PsnVerdict::kNew);
  EXPECT_EQ(r.cack(), Psn(63));
  EXPECT_EQ(r.bitmap(), 0u);
}

// 4. PSN wrap: a window straddling 2^24 - 1 -> 0.
TEST(MrcSackTracker, Wrap) {
  SackTracker t(Psn(0xFFFFFE));
  EXPECT_EQ(t.on_packet(Psn(1)), PsnVerdict::kNew);        // cack + 3
  EXPECT_EQ(t.on_packet(Psn(0xFFFFFF)), PsnVerdict::kNew);  // cack + 2
  EXPECT_EQ(t.bitmap(), 0b1010u);
  EXPECT_EQ(t.on_packet(Psn(0xFFFFFE)), PsnVerdict::kNew);
  EXPECT_EQ(t.cack(), Psn(0xFFFFFF));
  EXPECT_EQ(t.on_packet(Psn(0)), PsnVerdict::kNew);
  EXPECT_EQ(t.cack(), Psn(1));
  EXPECT_EQ(t.on_packet(Psn(0xFFFFFF)), PsnVerdict::kDuplicate);
}

// 5. Scoreboard: cumulative and selective acks, holes reported exactly once,
//    rearm() reports again, cumulative ack clears them.
TEST(MrcSackScoreboard, AckedAndMissing) {
  SackScoreboard s(Psn(0), 64);
  for (int i = 0; i < 10; ++i) s.on_send();
  EXPECT_EQ(s.in_flight(), 10u);
  std::vector<uint32_t> acked;
  auto rec = [&](Psn p) { acked.push_back(p.value()); };
  std::array<Psn, 64> miss{};
  // Receiver got 0, 1, 3, 6: CACK 1, bitmap bits for 3 (i=1) and 6 (i=4).
  SackResult r = s.on_sack(Psn(1), 1, 0b10010, miss, rec);
  EXPECT_EQ(r.verdict, SackVerdict::kOk);
  EXPECT_EQ(r.newly_acked, 4u);
  ASSERT_EQ(r.missing, 3);
  EXPECT_EQ(miss[0], Psn(2));
  EXPECT_EQ(miss[1], Psn(4));
  EXPECT_EQ(miss[2], Psn(5));  // 7..9 are past the highest received: not missing
  EXPECT_EQ(s.una(), Psn(2));
  EXPECT_TRUE(s.acked(Psn(3)));
  EXPECT_FALSE(s.acked(Psn(4)));
  // Same SACK again (duplicate): nothing new.
  r = s.on_sack(Psn(1), 1, 0b10010, miss, rec);
  EXPECT_EQ(r.newly_acked, 0u);
  EXPECT_EQ(r.missing, 0);
  s.rearm(Psn(4));
  r = s.on_sack(Psn(1), 1, 0b10010, miss, rec);
  ASSERT_EQ(r.missing, 1);
  EXPECT_EQ(miss[0], Psn(4));
  // The retransmissions of 2 arrives: CACK 3.
  r = s.on_sack(Psn(3), 1, 0b100, miss, rec);
  EXPECT_EQ(r.newly_acked, 1u);  // 2 only (3 and 6 already acked)
  EXPECT_EQ(s.una(), Psn(4));
  // Everything: CACK 9.
  r = s.on_sack(Psn(9), 1, 0, miss, rec);
  EXPECT_EQ(s.in_flight(), 0u);
  std::sort(acked.begin(), acked.end());
  EXPECT_EQ(acked, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  // A stale SACK afterwards.
  r = s.on_sack(Psn(5), 1, 0, miss, rec);
  EXPECT_EQ(r.verdict, SackVerdict::kStale);
  EXPECT_EQ(r.newly_acked, 0u);
}

// 6. Invalid SACKs (acknowledging unsent PSNs) change nothing; a small span
//    gets the first holes, the next SACK the rest.
TEST(MrcSackScoreboard, InvalidAndSpanFull) {
  SackScoreboard s(Psn(0), 64);
  for (int i = 0; i < 8; ++i) s.on_send();
  std::array<Psn, 2> miss{};
  int calls = 0;
  auto rec = [&](Psn) { ++calls; };
  EXPECT_EQ(s.on_sack(Psn(8), 1, 0, miss, rec).verdict, SackVerdict::kInvalid);
  EXPECT_EQ(s.on_sack(Psn(0), 1, uint64_t{1} << 7, miss, rec).verdict, SackVerdict::kInvalid);  // PSN 8
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(s.una(), Psn(0));
  // Only 7 received: holes 0..6.
  SackResult r = s.on_sack(Psn(0xFFFFFF), 1, uint64_t{1} << 7, miss, rec);
  EXPECT_EQ(r.verdict, SackVerdict::kOk);
  ASSERT_EQ(r.missing, 2);
  EXPECT_EQ(miss[0], Psn(0));
  EXPECT_EQ(miss[1], Psn(1));
  r = s.on_sack(Psn(0xFFFFFF), 1, uint64_t{1} << 7, miss, rec);
  ASSERT_EQ(r.missing, 2);
  EXPECT_EQ(miss[0], Psn(2));
  // A negative sack_offset (UET-style aligned base) covering una.
  r = s.on_sack(Psn(0xFFFFFF), -7, 0xFF00, miss, rec);  // base 0xFFFFF8, bits 8..15 = PSNs 0..7
  EXPECT_EQ(s.in_flight(), 0u);
  EXPECT_EQ(calls, 8);
}

// 7. Wrap: the scoreboard across 2^24 - 1 -> 0.
TEST(MrcSackScoreboard, Wrap) {
  SackScoreboard s(Psn(0xFFFFFC), 64);
  for (int i = 0; i < 8; ++i) s.on_send();  // 0xFFFFFC .. 3
  EXPECT_EQ(s.next(), Psn(4));
  std::array<Psn, 8> miss{};
  uint32_t n = 0;
  SackResult r = s.on_sack(Psn(0xFFFFFD), 1, 0b1010, miss, [&](Psn) { ++n; });  // got FC FD | FF 1
  EXPECT_EQ(n, 4u);
  ASSERT_EQ(r.missing, 2);
  EXPECT_EQ(miss[0], Psn(0xFFFFFE));
  EXPECT_EQ(miss[1], Psn(0));
  EXPECT_EQ(s.una(), Psn(0xFFFFFE));
}

// 8. End to end over a lossy, reordering channel: the requester retransmits
//    exactly the PSNs the SACKs show missing; everything arrives, and no PSN
//    the responder already had is ever retransmitted.
TEST(MrcSack, LossyChannelExactRetransmit) {
  Rng rng(1234);
  const Psn first(0xFFFF00);  // crosses the wrap
  SackScoreboard snd(first, 64);
  SackTracker rcv(first);
  std::vector<Psn> wire;
  std::set<uint32_t> delivered;
  uint64_t rtx = 0, spurious = 0;
  const uint32_t total = 2000;
  uint32_t sent_new = 0;
  std::array<Psn, 64> miss{};
  for (int round = 0; round < 100000 && (sent_new < total || snd.in_flight() > 0); ++round) {
    while (sent_new < total && snd.can_send() && wire.size() < 16) {
      wire.push_back(snd.on_send());
      ++sent_new;
    }
    if (wire.empty()) {
      // Tail loss: the transport would probe; here rearm everything in flight.
      for (uint32_t i = 0; i < snd.in_flight(); ++i) {
        if (!snd.acked(snd.una() + i)) {
          wire.push_back(snd.una() + i);
          ++rtx;
        }
      }
      continue;
    }
    const std::size_t k = rng.below(wire.size());  // reorder
    const Psn p = wire[k];
    wire.erase(wire.begin() + static_cast<std::ptrdiff_t>(k));
    if (rng.chance(0.05)) continue;  // lost
    if (rcv.on_packet(p) == PsnVerdict::kNew) delivered.insert(p.value());
    const SackFields f = rcv.sack(p);
    if (rng.chance(0.2)) continue;  // SACK lost
    const SackResult r = snd.on_sack(f.cack, f.sack_offset, f.bitmap, miss, [](Psn) {});
    ASSERT_NE(r.verdict, SackVerdict::kInvalid);
    for (uint16_t i = 0; i < r.missing; ++i) {
      if (rcv.received(miss[i])) ++spurious;
      wire.push_back(miss[i]);
      ++rtx;
    }
  }
  EXPECT_EQ(delivered.size(), total);
  EXPECT_EQ(snd.in_flight(), 0u);
  EXPECT_EQ(spurious, 0u);
  EXPECT_GT(rtx, 0u);
}

}  // namespace
}  // namespace sf::nic::mrc
