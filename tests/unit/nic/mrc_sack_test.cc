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
  EXPECT_EQ(SackTracker(Psn(0), 1000).mpr(), 256);  // clamped to the tracker's 256
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

// 4b. A window of 256 PSNs (mpr 256, docs/mrc.md "SACK window past 64"):
//    PSNs up to CACK + 256 tracked across the tracker's four words; a SACK
//    shows 64 of them, from CACK + 1, or ending at a trigger past CACK + 64
//    (sack_offset = trigger - CACK - 63); every PSN the bitmap covers reads
//    back (mrc_sack_state) as the tracker has it, the others are unknown;
//    the first PSN arriving last moves CACK over all 256 at once.
TEST(MrcSackTracker, Window256) {
  for (uint32_t start : {0u, 0xFFFF80u}) {  // and straddling the wrap
    SackTracker t(Psn(start), 256);
    EXPECT_EQ(t.on_packet(Psn(start) + 256), PsnVerdict::kOutOfWindow);
    for (uint32_t i = 255; i >= 1; --i) {
      if (i % 5 == 0) continue;  // holes
      ASSERT_EQ(t.on_packet(Psn(start) + i), PsnVerdict::kNew) << i;
    }
    EXPECT_EQ(t.on_packet(Psn(start) + 254), PsnVerdict::kDuplicate);
    EXPECT_EQ(t.span(), 255u);  // PSN start + 254 = CACK + 255 (255 is a hole)
    for (uint32_t trig : {3u, 64u, 65u, 130u, 200u, 255u}) {
      const SackFields f = t.sack(Psn(start) + trig);
      const int32_t want = trig + 1 > 64 ? static_cast<int32_t>(trig + 1) - 63 : 1;  // trigger - CACK = trig + 1
      EXPECT_EQ(f.sack_offset, want) << trig;
      EXPECT_EQ(f.ooo_count, 255 - 51) << trig;
      const Psn base = wire::mrc_sack_base(f.cack, f.sack_offset);
      for (uint32_t i = 0; i < 260; ++i) {
        const Psn p = Psn(start) + i;
        const wire::MrcSackState st = wire::mrc_sack_state(f.cack, f.sack_offset, f.bitmap, p);
        if (wire::mrc_sack_bit(base, p) < 0) {
          EXPECT_EQ(st, wire::MrcSackState::kUnknown) << trig << " " << i;
        } else {
          EXPECT_EQ(st == wire::MrcSackState::kReceived, t.received(p)) << trig << " " << i;
        }
      }
      EXPECT_EQ(wire::mrc_sack_state(f.cack, f.sack_offset, f.bitmap, Psn(start) + trig),
                t.received(Psn(start) + trig) ? wire::MrcSackState::kReceived : wire::MrcSackState::kMissing);
    }
    for (uint32_t i = 5; i < 256; i += 5) ASSERT_EQ(t.on_packet(Psn(start) + i), PsnVerdict::kNew);
    EXPECT_EQ(t.cack(), Psn(start) - 1);
    EXPECT_EQ(t.on_packet(Psn(start)), PsnVerdict::kNew);
    EXPECT_EQ(t.cack(), Psn(start) + 255);
    EXPECT_FALSE(t.held());
    EXPECT_EQ(t.span(), 0u);
  }
}

// 4c. UET-style 8-aligned bases (align 8): the base is a multiple of 8 --
//    rounded down when the window starts at CACK + 1 (sack_offset -6..1,
//    PSNs at or before CACK set in the bitmap), up when it ends at a trigger
//    past CACK + 64 (the trigger still inside) -- and the bitmap reads back
//    exactly as the tracker has it, across the wrap.
TEST(MrcSackTracker, AlignedBase) {
  for (uint32_t start : {0u, 3u, 0xFFFFF9u}) {
    for (uint32_t first_in : {0u, 1u, 2u, 7u}) {
      SackTracker t(Psn(start), 256, 8);
      for (uint32_t i = 0; i < first_in; ++i) t.on_packet(Psn(start) + i);  // CACK moves by first_in
      for (uint32_t i = first_in + 1; i < 200; i += 3) t.on_packet(Psn(start) + i);
      for (uint32_t trig : {first_in + 1, first_in + 40, first_in + 70, first_in + 199}) {
        const SackFields f = t.sack(Psn(start) + trig);
        const Psn base = wire::mrc_sack_base(f.cack, f.sack_offset);
        EXPECT_EQ(base.value() % 8, 0u) << start << " " << first_in << " " << trig;
        EXPECT_LE(f.sack_offset, Psn::diff(Psn(start) + trig, f.cack));
        EXPECT_GE(wire::mrc_sack_bit(base, Psn(start) + trig), 0) << "the trigger is in the bitmap";
        if (Psn::diff(Psn(start) + trig, f.cack) <= 64) {
          EXPECT_GE(f.sack_offset, -6);
          EXPECT_LE(f.sack_offset, 1);
        }
        for (int i = 0; i < 64; ++i) {
          const Psn p = base + static_cast<uint32_t>(i);
          EXPECT_EQ(((f.bitmap >> i) & 1u) != 0, t.received(p)) << start << " " << first_in << " " << trig << " " << i;
        }
      }
    }
  }
  SackTracker t(Psn(0));
  t.set_align(8);
  EXPECT_EQ(t.align(), 8);
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
// The responder's mpr (the requester's in-flight limit), its SACK base
// alignment and how deep the channel reorders: 64 / 1 / 16 is the default
// QP; 256 PSNs reordered 200 deep make SACK windows that end at their
// trigger (sack_offset > 1).
void lossy_channel(uint16_t mpr, uint8_t align, size_t depth) {
  Rng rng(1234);
  const Psn first(0xFFFF00);  // crosses the wrap
  SackScoreboard snd(first, mpr);
  SackTracker rcv(first, mpr, align);
  std::vector<Psn> wire;
  std::set<uint32_t> delivered;
  uint64_t rtx = 0, spurious = 0;
  const uint32_t total = 2000;
  uint32_t sent_new = 0;
  std::array<Psn, 64> miss{};
  for (int round = 0; round < 100000 && (sent_new < total || snd.in_flight() > 0); ++round) {
    while (sent_new < total && snd.can_send() && wire.size() < depth) {
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

TEST(MrcSack, LossyChannelExactRetransmit) {
  lossy_channel(64, 1, 16);
  lossy_channel(64, 8, 16);
  lossy_channel(256, 1, 200);
  lossy_channel(256, 8, 200);
}

}  // namespace
}  // namespace sf::nic::mrc
