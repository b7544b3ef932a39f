// EvSet (nic/mrc/ev_set.h): the per-QP EV profile and the EV state machine.
// Deterministic: every draw comes from a seeded Rng.
#include "nic/mrc/ev_set.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace sf::nic::mrc {
namespace {

EvSetConfig cfg(uint16_t evs, uint16_t planes, uint16_t backups) {
  EvSetConfig c;
  c.num_evs = evs;
  c.num_planes = planes;
  c.backup_per_plane = backups;
  c.ev_base = 1000;
  c.probes_to_readmit = 3;
  return c;
}

// Picks n packets and returns how many went to each plane.
std::vector<uint64_t> plane_load(EvSet& s, Rng& rng, int n) {
  std::vector<uint64_t> load(s.num_planes(), 0);
  for (int i = 0; i < n; ++i) {
    auto p = s.pick_next(rng);
    EXPECT_TRUE(p.has_value());
    if (!p) break;
    EXPECT_TRUE(s.plane_up(p->plane));
    ++load[p->plane];
  }
  return load;
}

// 1. Config validation: each bad field is refused with a reason.
TEST(MrcEvSet, ConfigErrors) {
  EXPECT_EQ(cfg(128, 8, 4).error(), nullptr);
  EXPECT_EQ(cfg(256, 8, 8).error(), nullptr);
  EXPECT_NE(cfg(0, 1, 0).error(), nullptr);
  EXPECT_NE(cfg(257, 1, 0).error(), nullptr);
  EXPECT_NE(cfg(130, 8, 0).error(), nullptr);  // not a multiple of the planes
  EXPECT_NE(cfg(128, 0, 0).error(), nullptr);
  EXPECT_NE(cfg(128, 33, 0).error(), nullptr);
  EXPECT_NE(cfg(128, 8, 16).error(), nullptr);  // no active EV left
  EvSetConfig c = cfg(128, 8, 0);
  c.probes_to_readmit = 0;
  EXPECT_NE(c.error(), nullptr);
  c = cfg(128, 8, 0);
  c.ev_base = 0xFFFFFFF0u;
  EXPECT_NE(c.error(), nullptr);
}

// 2. Profile layout: EV values, planes, active and backup sets, index_of.
TEST(MrcEvSet, ProfileSpreadEvenly) {
  EvSet s(cfg(128, 8, 4));
  EXPECT_EQ(s.size(), 128);
  EXPECT_EQ(s.rotation(), 96);
  EXPECT_EQ(s.usable(), 96);
  for (uint8_t p = 0; p < 8; ++p) EXPECT_EQ(s.active_in_plane(p), 12);
  EXPECT_EQ(s.ev(5), 1005u);
  EXPECT_EQ(s.plane(13), 5);
  EXPECT_EQ(s.index_of(1005), 5);
  EXPECT_FALSE(s.index_of(999).has_value());
  EXPECT_FALSE(s.index_of(1128).has_value());
  EXPECT_TRUE(s.active(0));
  EXPECT_FALSE(s.active(127));  // the last 4 of each plane are backups
}

// 3. Deterministic and spread: same seed, same sequence; every active EV used,
//    no backup used, planes within a few percent of each other.
TEST(MrcEvSet, PickDeterministicAndBalanced) {
  EvSet a(cfg(128, 8, 4));
  EvSet b(cfg(128, 8, 4));
  Rng ra(42), rb(42);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(a.pick_next(ra)->index, b.pick_next(rb)->index);
  Rng r(7);
  EvSet s(cfg(128, 8, 4));
  const auto load = plane_load(s, r, 96000);
  for (uint64_t l : load) EXPECT_NEAR(static_cast<double>(l), 12000.0, 600.0);
  for (uint16_t i = 0; i < 128; ++i) {
    if (s.active(i)) {
      EXPECT_GT(s.counters(i).sent, 0u) << i;
    } else {
      EXPECT_EQ(s.counters(i).sent, 0u) << i;
    }
  }
}

// The per-EV `sent` count is kept as 8 bits beside the draw list with each
// wrap carried into the EV's counters: exact past 2^8, 2^16 and 2^17,
// through both pick paths (pick_next_index and pick_next), retransmissions
// apart.
TEST(MrcEvSet, SentCountCarriesPast16Bits) {
  EvSet s(cfg(1, 1, 0));
  Rng r(3);
  for (int i = 0; i < 255; ++i) ASSERT_EQ(s.pick_next_index(r), 0);
  EXPECT_EQ(s.counters(0).sent, 255u);
  ASSERT_EQ(s.pick_next_index(r), 0);
  EXPECT_EQ(s.counters(0).sent, 256u);
  ASSERT_TRUE(s.pick_next(r).has_value());
  EXPECT_EQ(s.counters(0).sent, 257u);
  for (int i = 0; i < 257; ++i) ASSERT_TRUE(s.pick_next(r, true).has_value());
  EXPECT_EQ(s.counters(0).sent, 257u);
  EvSet t(cfg(1, 1, 0));
  s = t;
  for (int i = 0; i < 65535; ++i) ASSERT_EQ(s.pick_next_index(r), 0);
  EXPECT_EQ(s.counters(0).sent, 65535u);
  ASSERT_EQ(s.pick_next_index(r), 0);
  EXPECT_EQ(s.counters(0).sent, 65536u);
  for (int i = 0; i < 65537; ++i) ASSERT_TRUE(s.pick_next(r).has_value());
  EXPECT_EQ(s.counters(0).sent, 131073u);
  ASSERT_TRUE(s.pick_next(r, true).has_value());
  EXPECT_EQ(s.counters(0).sent, 131073u);
  EXPECT_EQ(s.counters(0).retransmitted, 1u);
  EXPECT_EQ(s.picks(), 131074u);
}

// 4. ECN echo: the EV is skipped for one rotation (rotation() picks), then used again.
TEST(MrcEvSet, EcnSkipsOneRotation) {
  EvSet s(cfg(8, 2, 0));
  Rng r(1);
  EXPECT_EQ(s.on_signal(3, EvSignal::kEcnEcho), EvOutcome::kSkipped);
  EXPECT_EQ(s.state(3), EvState::kSkip);
  EXPECT_EQ(s.on_signal(3, EvSignal::kEcnEcho), EvOutcome::kNone);  // no extension
  EXPECT_EQ(s.usable(), 7);
  for (int i = 0; i < 8; ++i) EXPECT_NE(s.pick_next(r)->index, 3);
  // After 8 picks (one rotation) it is GOOD again.
  EXPECT_TRUE(s.pick_next(r).has_value());
  EXPECT_EQ(s.state(3), EvState::kGood);
  EXPECT_EQ(s.counters(3).skipped, 1u);
  // Trimmed skips too; last-hop trim does not blame the path.
  EXPECT_EQ(s.on_signal(4, EvSignal::kTrimmed), EvOutcome::kSkipped);
  EXPECT_EQ(s.on_signal(5, EvSignal::kTrimmedLastHop), EvOutcome::kNone);
  EXPECT_EQ(s.state(5), EvState::kGood);
}

// 5. Every EV skipped: skips end early (oldest first) rather than stall.
TEST(MrcEvSet, AllSkippedDoesNotStall) {
  EvSet s(cfg(4, 1, 0));
  Rng r(1);
  for (uint16_t i = 0; i < 4; ++i) s.on_signal(i, EvSignal::kEcnEcho);
  EXPECT_EQ(s.usable(), 0);
  auto p = s.pick_next(r);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->index, 0);  // the oldest skip ended
  EXPECT_EQ(s.no_usable(), 0u);
}

// 6. Loss: retired at once, a backup of the same plane swapped in (balance
//    kept), probed, re-admitted as a backup after 3 probe successes in a row.
TEST(MrcEvSet, LossRetiresAndSwapsBackupSamePlane) {
  EvSet s(cfg(16, 4, 1));  // 4 per plane: 3 active + 1 backup
  Rng r(3);
  ASSERT_EQ(s.plane(6), 2);
  EXPECT_EQ(s.on_signal(6, EvSignal::kLoss), EvOutcome::kRetired);
  EXPECT_EQ(s.state(6), EvState::kAssumedBad);
  EXPECT_FALSE(s.active(6));
  EXPECT_TRUE(s.active(14));  // plane 2's backup
  for (uint8_t p = 0; p < 4; ++p) EXPECT_EQ(s.active_in_plane(p), 3);
  EXPECT_EQ(s.counters(6).retired, 1u);
  EXPECT_EQ(s.on_signal(6, EvSignal::kLoss), EvOutcome::kNone);
  const auto load = plane_load(s, r, 12000);
  for (uint64_t l : load) EXPECT_NEAR(static_cast<double>(l), 3000.0, 250.0);
  EXPECT_EQ(s.counters(6).sent, 0u);
  // Probing: only the retired EV is a candidate.
  ASSERT_EQ(s.next_probe(), 6);
  s.on_probe_sent(6);
  EXPECT_EQ(s.on_probe_result(6, true), EvOutcome::kNone);
  EXPECT_EQ(s.on_probe_result(6, false), EvOutcome::kNone);  // streak reset
  EXPECT_EQ(s.on_probe_result(6, true), EvOutcome::kNone);
  EXPECT_EQ(s.on_probe_result(6, true), EvOutcome::kNone);
  EXPECT_EQ(s.on_probe_result(6, true), EvOutcome::kReadmitted);
  EXPECT_EQ(s.state(6), EvState::kGood);
  EXPECT_FALSE(s.active(6));  // plane 2 is full: it is the new backup
  EXPECT_EQ(s.active_in_plane(2), 3);
  EXPECT_EQ(s.counters(6).probes, 1u);
  EXPECT_EQ(s.counters(6).probe_ok, 4u);
  EXPECT_EQ(s.counters(6).readmitted, 1u);
  EXPECT_FALSE(s.next_probe().has_value());
}

// 7. No backup left: the plane runs short (counted), and a re-admitted EV
//    refills its slot.
TEST(MrcEvSet, NoBackupThenReadmitRefills) {
  EvSet s(cfg(8, 2, 0));
  EXPECT_EQ(s.on_signal(1, EvSignal::kAlwaysSkip), EvOutcome::kRetired);
  EXPECT_EQ(s.no_backup(), 1u);
  EXPECT_EQ(s.active_in_plane(1), 3);
  for (int i = 0; i < 3; ++i) s.on_probe_result(1, true);
  EXPECT_EQ(s.state(1), EvState::kGood);
  EXPECT_TRUE(s.active(1));
  EXPECT_EQ(s.active_in_plane(1), 4);
  EXPECT_EQ(s.usable(), 8);
}

// 8. Plane failure: a port-status update stops a plane at once, the others
//    share the load evenly (7/8), and the plane is used again when up.
TEST(MrcEvSet, PlaneDownAndUp) {
  EvSet s(cfg(128, 8, 4));
  Rng r(11);
  s.set_planes_up(0xFFu & ~(1u << 3));
  EXPECT_FALSE(s.plane_up(3));
  EXPECT_EQ(s.usable(), 84);
  const auto load = plane_load(s, r, 70000);
  EXPECT_EQ(load[3], 0u);
  for (uint8_t p = 0; p < 8; ++p) {
    if (p != 3) {
      EXPECT_NEAR(static_cast<double>(load[p]), 10000.0, 500.0);
    }
  }
  // A retired EV of a down plane is not probed.
  s.on_signal(3, EvSignal::kLoss);
  EXPECT_FALSE(s.next_probe().has_value());
  // Every plane down: nothing to pick, counted.
  s.set_planes_up(0);
  EXPECT_FALSE(s.pick_next(r).has_value());
  EXPECT_EQ(s.no_usable(), 1u);
  s.set_planes_up(0xFF);
  EXPECT_EQ(s.usable(), 96);  // 3 retired, its backup 99 swapped in
  EXPECT_EQ(s.active_in_plane(3), 12);
  const auto after = plane_load(s, r, 96000);
  for (uint64_t l : after) EXPECT_NEAR(static_cast<double>(l), 12000.0, 600.0);
}

// 9. Retransmissions avoid the EV of the lost packet and are counted apart.
TEST(MrcEvSet, RetransmitAvoidsEv) {
  EvSet s(cfg(4, 1, 0));
  Rng r(5);
  for (int i = 0; i < 200; ++i) EXPECT_NE(s.pick_next(r, true, uint16_t{2})->index, 2);
  uint64_t rtx = 0;
  for (uint16_t i = 0; i < 4; ++i) rtx += s.counters(i).retransmitted;
  EXPECT_EQ(rtx, 200u);
  EXPECT_EQ(s.counters(0).sent, 0u);
  // The only usable EV is used even if avoided.
  EvSet one(cfg(1, 1, 0));
  EXPECT_EQ(one.pick_next(r, true, uint16_t{0})->index, 0);
}

// 10. DENIED: by the controller; never used nor probed; allow() makes it GOOD.
TEST(MrcEvSet, DenyAllow) {
  EvSet s(cfg(8, 2, 1));
  s.deny(0);
  EXPECT_EQ(s.state(0), EvState::kDenied);
  EXPECT_TRUE(s.active(6));  // plane 0's backup swapped in
  EXPECT_EQ(s.on_signal(0, EvSignal::kLoss), EvOutcome::kNone);
  EXPECT_FALSE(s.next_probe().has_value());
  EXPECT_EQ(s.on_probe_result(0, true), EvOutcome::kNone);
  s.allow(0);
  EXPECT_EQ(s.state(0), EvState::kGood);
  EXPECT_FALSE(s.active(0));
  EXPECT_EQ(s.active_in_plane(0), 3);
}

// 11. A skipped EV that is retired and re-admitted is not wrongly un-skipped
//     by its stale ring entry; re-skipped later it waits a full rotation.
TEST(MrcEvSet, StaleSkipEntries) {
  EvSet s(cfg(4, 1, 0));
  Rng r(9);
  s.on_signal(1, EvSignal::kEcnEcho);
  s.on_signal(1, EvSignal::kLoss);
  for (int i = 0; i < 3; ++i) s.on_probe_result(1, true);
  EXPECT_EQ(s.state(1), EvState::kGood);
  s.pick_next(r);
  s.pick_next(r);
  s.on_signal(1, EvSignal::kEcnEcho);  // skip until picks 2 + 4 = 6
  for (int i = 0; i < 4; ++i) EXPECT_NE(s.pick_next(r)->index, 1);
  EXPECT_EQ(s.state(1), EvState::kSkip);
  s.pick_next(r);
  EXPECT_EQ(s.state(1), EvState::kGood);
}

}  // namespace
}  // namespace sf::nic::mrc

namespace sf::nic::mrc {
namespace {

// 12. A backup that was skipped when its plane lost an EV fills the slot as
//     soon as its skip ends.
TEST(MrcEvSet, SkippedBackupRefillsPlane) {
  EvSet s(cfg(8, 2, 1));  // plane 0: 0, 2, 4 active, 6 backup
  Rng r(4);
  EXPECT_EQ(s.on_signal(6, EvSignal::kEcnEcho), EvOutcome::kSkipped);
  EXPECT_EQ(s.on_signal(0, EvSignal::kLoss), EvOutcome::kRetired);
  EXPECT_EQ(s.no_backup(), 1u);
  EXPECT_EQ(s.active_in_plane(0), 2);
  for (int i = 0; i < s.rotation() + 1; ++i) s.pick_next(r);
  EXPECT_EQ(s.state(6), EvState::kGood);
  EXPECT_TRUE(s.active(6));
  EXPECT_EQ(s.active_in_plane(0), 3);
}

// 13. Random operations (seeded): after each, the usable set is exactly the
//     GOOD active EVs of up planes, no plane has more active EVs than its
//     share, and a plane short of active EVs has no GOOD backup left idle.
TEST(MrcEvSet, RandomOperationsKeepInvariants) {
  EvSet s(cfg(64, 4, 4));  // 16 per plane: 12 active + 4 backups
  Rng r(2024);
  for (int step = 0; step < 20000; ++step) {
    const uint16_t i = static_cast<uint16_t>(r.below(64));
    switch (r.below(9)) {
      case 0: s.on_signal(i, EvSignal::kEcnEcho); break;
      case 1: s.on_signal(i, EvSignal::kTrimmed); break;
      case 2: s.on_signal(i, EvSignal::kLoss); break;
      case 3: s.on_signal(i, EvSignal::kAlwaysSkip); break;
      case 4:
        if (const auto pr = s.next_probe()) s.on_probe_result(*pr, r.chance(0.8));
        break;
      case 5:
        if (r.chance(0.05)) s.set_plane_up(static_cast<uint8_t>(r.below(4)), r.chance(0.6));
        break;
      case 6:
        if (r.chance(0.1)) {
          s.deny(i);
        } else {
          s.allow(i);
        }
        break;
      default: s.pick_next(r, r.chance(0.1)); break;
    }
    uint16_t usable = 0;
    for (uint8_t p = 0; p < 4; ++p) {
      uint16_t active = 0;
      bool idle_good_backup = false;
      for (uint16_t j = p; j < 64; j = static_cast<uint16_t>(j + 4)) {
        if (s.active(j)) ++active;
        if (s.active(j) && s.state(j) == EvState::kGood && s.plane_up(p)) ++usable;
        if (!s.active(j) && s.state(j) == EvState::kGood) idle_good_backup = true;
      }
      ASSERT_EQ(active, s.active_in_plane(p)) << "step " << step;
      ASSERT_LE(active, 12) << "step " << step;
      if (active < 12) {
        ASSERT_FALSE(idle_good_backup) << "plane " << int(p) << " step " << step;
      }
    }
    ASSERT_EQ(usable, s.usable()) << "step " << step;
  }
}

// pick_in_plane (a multi-port sender's port asks for an EV of its plane):
// only that plane's usable EVs, uniform over them, `avoid` honoured, a
// retired EV never, a down plane nothing, an all-skipped plane still served
// (skips ended early), counters as pick_next.
TEST(MrcEvSet, PickInPlane) {
  EvSetConfig c;
  c.num_evs = 64;
  c.num_planes = 4;
  EvSet s(c);
  Rng rng(3);
  std::array<uint64_t, 64> hits{};
  for (int i = 0; i < 16000; ++i) {
    const auto p = s.pick_in_plane(rng, 2);
    ASSERT_TRUE(p.has_value());
    ASSERT_EQ(p->plane, 2);
    ASSERT_EQ(s.plane(p->index), 2);
    ++hits[p->index];
  }
  for (uint16_t i = 2; i < 64; i += 4) {
    EXPECT_GT(hits[i], 700u) << i;  // 1,000 each expected
    EXPECT_LT(hits[i], 1300u) << i;
  }
  EXPECT_EQ(s.usable_in_plane(2), 16);
  for (int i = 0; i < 200; ++i) {
    const auto p = s.pick_in_plane(rng, 1, true, uint16_t{5});
    ASSERT_TRUE(p.has_value());
    EXPECT_NE(p->index, 5);
  }
  EXPECT_GT(s.counters(9).retransmitted, 0u);
  EXPECT_EQ(s.on_signal(6, EvSignal::kLoss), EvOutcome::kRetired);
  for (int i = 0; i < 2000; ++i) EXPECT_NE(s.pick_in_plane(rng, 2)->index, 6);
  s.set_plane_up(3, false);
  EXPECT_FALSE(s.pick_in_plane(rng, 3).has_value());
  EXPECT_EQ(s.usable_in_plane(3), 0);
  // Plane 0 all skipped: still served.
  for (uint16_t i = 0; i < 64; i += 4) s.on_signal(i, EvSignal::kEcnEcho);
  EXPECT_EQ(s.usable_in_plane(0), 0);
  const auto p0 = s.pick_in_plane(rng, 0);
  ASSERT_TRUE(p0.has_value());
  EXPECT_EQ(p0->plane, 0);
}

// 14. Retirement floor: losses on every EV of a plane (spurious ones from
//     reordering look the same) retire all but the last 1/8 of its active
//     EVs; those are skipped instead (retire_refused), so the plane never
//     runs out of usable EVs and the other plane is untouched.
TEST(MrcEvSet, LossesNeverRetireAPlanesLastEvs) {
  EvSet s(cfg(128, 2, 0));  // 64 active per plane
  for (int round = 0; round < 3; ++round) {
    for (uint16_t i = 0; i < 128; i = static_cast<uint16_t>(i + 2)) s.on_signal(i, EvSignal::kLoss);  // plane 0
  }
  EXPECT_EQ(s.usable_in_plane(1), 64);
  uint16_t retired = 0;
  for (uint16_t i = 0; i < 128; i = static_cast<uint16_t>(i + 2)) retired += s.state(i) == EvState::kAssumedBad;
  EXPECT_EQ(retired, 64 - 8);  // floor: 64 / 8 = 8 left
  EXPECT_GT(s.retire_refused(), 0u);
  Rng r(7);
  for (int k = 0; k < 100; ++k) {  // the skips end within a rotation; the plane keeps sending
    const auto pk = s.pick_in_plane(r, 0);
    ASSERT_TRUE(pk.has_value());
    EXPECT_NE(s.state(pk->index), EvState::kAssumedBad);
  }
  // A one-EV plane keeps its EV.
  EvSet one(cfg(2, 2, 0));
  EXPECT_EQ(one.on_signal(0, EvSignal::kLoss), EvOutcome::kSkipped);
  EXPECT_EQ(one.retire_refused(), 1u);
}

}  // namespace
}  // namespace sf::nic::mrc
