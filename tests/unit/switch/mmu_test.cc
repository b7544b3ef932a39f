// Unit tests of the shared-buffer MMU: thresholds exactly per formula, headroom,
// trim verdicts, and no cell leak under any sequence.
#include "switch/mmu/mmu.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>

namespace sf::sw {
namespace {

constexpr uint32_t kCell = 256;

// Two ports; ingress pool 0, egress pool 1; profiles:
//  0: ingress lossy, 1: egress, 2: ingress lossless (xoff headroom).
MmuConfig base_config(ThresholdMode mode, int dynamic_th, uint64_t static_th) {
  MmuConfig c;
  c.cell_bytes = kCell;
  c.total_bytes = 4 << 20;
  c.pools = {{"ingress_pool", PoolDir::kIngress, mode, 1 << 20, 0},
             {"egress_pool", PoolDir::kEgress, mode, 1 << 20, 0}};
  ProfileConfig ing{"ing", 0, 0, mode, dynamic_th, static_th};
  ProfileConfig eg{"eg", 1, 0, ThresholdMode::kStatic, 0, 0};  // egress unlimited
  ProfileConfig lossless{"lossless", 0, 0, mode, dynamic_th, static_th, 64 * kCell, 8 * kCell, 8 * kCell};
  c.profiles = {ing, eg, lossless};
  c.pg_profile = {{0, 0, 0, 2, 0, 0, 0, 0}, {0, 0, 0, 2, 0, 0, 0, 0}};
  c.queue_profile = {{1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}};
  return c;
}

// 1. Static threshold: a PG takes exactly static_th bytes of shared buffer.
TEST(Mmu, StaticThresholdExact) {
  const MmuConfig cfg = base_config(ThresholdMode::kStatic, 0, 100 * kCell);
  Mmu mmu(cfg);
  int accepted = 0;
  for (int i = 0; i < 200; ++i) {
    if (mmu.admit(0, 0, 1, 0, kCell).verdict == Verdict::kAccept) ++accepted;
  }
  EXPECT_EQ(accepted, 100);
  EXPECT_EQ(mmu.pg_use(0, 0).shared, 100u);
  EXPECT_EQ(mmu.admit(0, 0, 1, 0, kCell).reason, DropReason::kIngressLimit);
}

// 2. Dynamic threshold: limit = alpha x free, so one saturated PG with alpha = 1
// settles at half of the pool (Choudhury-Hahne: alpha*B/(1+alpha)).
TEST(Mmu, DynamicThresholdAlphaOneTakesHalf) {
  const MmuConfig cfg = base_config(ThresholdMode::kDynamic, 0, 0);
  Mmu mmu(cfg);
  const uint32_t pool = (1 << 20) / kCell;
  while (mmu.admit(0, 0, 1, 0, kCell).verdict == Verdict::kAccept) {
  }
  EXPECT_EQ(mmu.pg_use(0, 0).shared, pool / 2);
  EXPECT_EQ(mmu.pg_shared_limit(0, 0), mmu.pool_free(0));
}

// 3. Each alpha exponent: the limit equals 2^th x free at every step, and the
// saturated share matches alpha*B/(1+alpha*S) for S = 1 and S = 2 within a cell.
TEST(Mmu, DynamicThresholdPerFormula) {
  for (int th : {-7, -4, -3, -1, 0, 1, 3}) {
    for (int senders : {1, 2}) {
      const MmuConfig cfg = base_config(ThresholdMode::kDynamic, th, 0);
      Mmu mmu(cfg);
      bool progress = true;
      while (progress) {
        progress = false;
        for (int s = 0; s < senders; ++s) {
          const uint32_t free = mmu.pool_free(0);
          const double want = th >= 0 ? double(free) * (1 << th) : double(free) / (1 << -th);
          EXPECT_EQ(mmu.pg_shared_limit(static_cast<uint16_t>(s), 0), static_cast<uint32_t>(want));
          progress |= mmu.admit(static_cast<uint16_t>(s), 0, 1, 0, kCell).verdict == Verdict::kAccept;
        }
      }
      const double alpha = th >= 0 ? double(1 << th) : 1.0 / (1 << -th);
      const double pool = (1 << 20) / kCell;
      const double expect = alpha * pool / (1 + alpha * senders);
      EXPECT_NEAR(mmu.pg_use(0, 0).shared, expect, 1.0 + alpha) << "th=" << th << " S=" << senders;
    }
  }
}

// 4. Special alpha encodings: -8 means no shared buffer, 7 means unlimited.
TEST(Mmu, DynamicThresholdEncodingsAtTheEnds) {
  // The Mmu points into its config's profiles: the configs outlive it.
  const MmuConfig zero_cfg = base_config(ThresholdMode::kDynamic, -8, 0);
  Mmu zero(zero_cfg);
  EXPECT_EQ(zero.admit(0, 0, 1, 0, kCell).reason, DropReason::kIngressLimit);
  const MmuConfig unlimited_cfg = base_config(ThresholdMode::kDynamic, 7, 0);
  Mmu unlimited(unlimited_cfg);
  int n = 0;
  while (unlimited.admit(0, 0, 1, 0, kCell).verdict == Verdict::kAccept) ++n;
  EXPECT_EQ(n, (1 << 20) / static_cast<int>(kCell));  // the whole pool
}

// 5. Reserved cells come first and do not count against the shared pool.
TEST(Mmu, ReservedBeforeShared) {
  MmuConfig cfg = base_config(ThresholdMode::kStatic, 0, 10 * kCell);
  cfg.profiles[0].reserved_bytes = 5 * kCell;
  Mmu mmu(cfg);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(mmu.admit(0, 0, 1, 0, kCell).ticket.ing_shared, 0);
  EXPECT_EQ(mmu.pool_shared_used(0), 0u);
  EXPECT_EQ(mmu.admit(0, 0, 1, 0, kCell).ticket.ing_shared, 1);
  EXPECT_EQ(mmu.pool_shared_used(0), 1u);
}

// 6. A lossless PG over its limit goes into headroom up to xoff, then the drop is
// counted as a headroom overflow (a misconfiguration), never as ingress_limit.
TEST(Mmu, LosslessHeadroomThenOverflow) {
  const MmuConfig cfg = base_config(ThresholdMode::kStatic, 0, 10 * kCell);
  Mmu mmu(cfg);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(mmu.admit(0, 3, 1, 3, kCell).verdict, Verdict::kAccept);
  for (int i = 0; i < 64; ++i) {
    const Admission a = mmu.admit(0, 3, 1, 3, kCell);
    ASSERT_EQ(a.verdict, Verdict::kAccept);
    ASSERT_EQ(a.ticket.ing_hdrm, 1);
  }
  EXPECT_EQ(mmu.pg_use(0, 3).hdrm, 64u);
  EXPECT_EQ(mmu.admit(0, 3, 1, 3, kCell).reason, DropReason::kHeadroomOverflow);
}

// 7. A shared headroom pool caps the sum over PGs.
TEST(Mmu, SharedHeadroomPoolCapsAllPgs) {
  MmuConfig cfg = base_config(ThresholdMode::kStatic, 0, 1 * kCell);
  cfg.pools[0].xoff_bytes = 80 * kCell;
  Mmu mmu(cfg);
  int hdrm = 0;
  for (uint16_t port : {0, 1}) {
    for (int i = 0; i < 70; ++i) {
      const Admission a = mmu.admit(port, 3, 1, 3, kCell);
      if (a.verdict == Verdict::kAccept) hdrm += a.ticket.ing_hdrm;
    }
  }
  EXPECT_EQ(hdrm, 80);
  EXPECT_EQ(mmu.hdrm_pool_used(0), 80u);
}

// 8. Trim-eligible profiles turn a would-be drop into a trim verdict and charge nothing.
TEST(Mmu, TrimVerdictChargesNothing) {
  MmuConfig cfg = base_config(ThresholdMode::kStatic, 0, 0);
  cfg.profiles[1] = ProfileConfig{"eg_trim", 1, 0, ThresholdMode::kStatic, 0, 4 * kCell};
  cfg.profiles[1].discard = DiscardAction::kTrim;
  Mmu mmu(cfg);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(mmu.admit(0, 0, 1, 0, kCell).verdict, Verdict::kAccept);
  const uint32_t used = mmu.total_used();
  const Admission a = mmu.admit(0, 0, 1, 0, kCell);
  EXPECT_EQ(a.verdict, Verdict::kTrim);
  EXPECT_EQ(a.reason, DropReason::kEgressLimit);
  EXPECT_EQ(mmu.total_used(), used);
}

// 9. Physical buffer: never more cells in use than the memory has.
TEST(Mmu, PhysicalBufferFull) {
  MmuConfig cfg = base_config(ThresholdMode::kStatic, 0, 0);
  cfg.total_bytes = 16 * kCell;
  Mmu mmu(cfg);
  for (int i = 0; i < 16; ++i) ASSERT_EQ(mmu.admit(0, 0, 1, 0, kCell).verdict, Verdict::kAccept);
  EXPECT_EQ(mmu.admit(0, 0, 1, 0, kCell).reason, DropReason::kBufferFull);
}

// 10. No profile: counted drop.
TEST(Mmu, NoProfileIsNoBuffer) {
  MmuConfig cfg = base_config(ThresholdMode::kStatic, 0, 0);
  cfg.queue_profile[1][7] = kNoProfile;
  Mmu mmu(cfg);
  EXPECT_EQ(mmu.admit(0, 0, 1, 7, 64).reason, DropReason::kNoBuffer);
}

// 11. Property: random admit / release over random ports, PGs, queues, sizes and
// modes never leaks a cell and never exceeds any limit; at the end, every
// counter is back to zero.
TEST(Mmu, NoCellLeakUnderRandomTraffic) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 20; ++round) {
    const bool dynamic = round % 2 == 0;
    MmuConfig cfg = base_config(dynamic ? ThresholdMode::kDynamic : ThresholdMode::kStatic,
                                static_cast<int>(rng() % 8) - 4, (rng() % 200 + 1) * kCell);
    cfg.pools[0].size_bytes = 300 * kCell;
    cfg.pools[1].size_bytes = 300 * kCell;
    cfg.pools[0].xoff_bytes = (round % 3 == 0) ? 50 * kCell : 0;
    cfg.profiles[0].reserved_bytes = (rng() % 4) * kCell;
    cfg.profiles[1] = ProfileConfig{"eg", 1, (rng() % 4) * kCell, cfg.pools[1].mode, 1, 150 * kCell};
    cfg.total_bytes = 500 * kCell;
    Mmu mmu(cfg);
    struct Held { uint16_t in; uint8_t pg; uint16_t out; uint8_t q; Ticket t; };
    std::deque<Held> held;
    for (int step = 0; step < 20000; ++step) {
      if (rng() % 3 != 0 || held.empty()) {
        const uint16_t in = static_cast<uint16_t>(rng() % 2);
        const uint8_t pg = static_cast<uint8_t>(rng() % 8);
        const uint16_t out = static_cast<uint16_t>(rng() % 2);
        const uint8_t q = static_cast<uint8_t>(rng() % 8);
        const Admission a = mmu.admit(in, pg, out, q, 64 + rng() % 9200);
        if (a.verdict == Verdict::kAccept) held.push_back({in, pg, out, q, a.ticket});
      } else {
        const size_t i = rng() % held.size();
        mmu.release(held[i].in, held[i].pg, held[i].out, held[i].q, held[i].t);
        held.erase(held.begin() + static_cast<long>(i));
      }
      ASSERT_LE(mmu.total_used(), mmu.total_cells());
      ASSERT_LE(mmu.pool_shared_used(0), 300u);
      ASSERT_LE(mmu.pool_shared_used(1), 300u);
    }
    for (const Held& h : held) mmu.release(h.in, h.pg, h.out, h.q, h.t);
    EXPECT_EQ(mmu.total_used(), 0u);
    EXPECT_EQ(mmu.pool_shared_used(0), 0u);
    EXPECT_EQ(mmu.pool_shared_used(1), 0u);
    EXPECT_EQ(mmu.hdrm_pool_used(0), 0u);
    for (uint16_t p = 0; p < 2; ++p) {
      for (uint8_t i = 0; i < 8; ++i) {
        EXPECT_EQ(mmu.pg_use(p, i).used, 0u);
        EXPECT_EQ(mmu.pg_use(p, i).shared, 0u);
        EXPECT_EQ(mmu.pg_use(p, i).hdrm, 0u);
        EXPECT_EQ(mmu.queue_use(p, i).used, 0u);
        EXPECT_EQ(mmu.queue_use(p, i).shared, 0u);
      }
    }
  }
}

// 12. admit_egress decides exactly as egress_fits says (it computes the test
// itself, inline), static and dynamic limits, reserved and shared, with the
// pool near full. Expect: accept iff egress_fits was true just before; the
// ticket's eg_shared is the part beyond the queue's free reserved cells;
// otherwise kEgressLimit and nothing charged.
TEST(Mmu, AdmitEgressAgreesWithEgressFits) {
  std::mt19937 rng(777);
  for (int round = 0; round < 20; ++round) {
    const bool dynamic = round % 2 == 0;
    MmuConfig cfg = base_config(dynamic ? ThresholdMode::kDynamic : ThresholdMode::kStatic, 0, 0);
    cfg.pools[1].size_bytes = 200 * kCell;
    cfg.profiles[1] = ProfileConfig{"eg", 1, (rng() % 6) * kCell, cfg.pools[1].mode,
                                    static_cast<int>(rng() % 6) - 3, (rng() % 150 + 1) * kCell};
    Mmu mmu(cfg);
    int accepted = 0;
    int refused = 0;
    for (int step = 0; step < 3000; ++step) {
      const uint16_t out = static_cast<uint16_t>(rng() % 2);
      const uint8_t q = static_cast<uint8_t>(rng() % 8);
      const Admission in = mmu.admit_ingress(0, 0, 64 + rng() % 4000);
      if (in.verdict != Verdict::kAccept) continue;
      const BufferUse before = mmu.queue_use(out, q);
      const uint32_t pool_before = mmu.pool_shared_used(1);
      const bool fits = mmu.egress_fits(out, q, in.ticket.cells);
      const uint32_t res_used = before.used - before.shared;
      const uint32_t reserved = mmu.cells_for(static_cast<uint32_t>(cfg.profiles[1].reserved_bytes));
      const uint32_t res_free = res_used < reserved ? reserved - res_used : 0;
      const uint32_t over = in.ticket.cells > res_free ? in.ticket.cells - res_free : 0;
      const Admission out_a = mmu.admit_egress(out, q, in.ticket);
      ASSERT_EQ(out_a.verdict == Verdict::kAccept, fits) << "step " << step;
      if (fits) {
        ++accepted;
        ASSERT_EQ(out_a.ticket.eg_shared, over);
        ASSERT_EQ(mmu.queue_use(out, q).used, before.used + in.ticket.cells);
        ASSERT_EQ(mmu.pool_shared_used(1), pool_before + over);
        if (rng() % 2 == 0) mmu.release(0, 0, out, q, out_a.ticket);
      } else {
        ++refused;
        ASSERT_EQ(out_a.reason, DropReason::kEgressLimit);
        ASSERT_EQ(mmu.queue_use(out, q).used, before.used);
        ASSERT_EQ(mmu.pool_shared_used(1), pool_before);
        mmu.release_ingress(0, 0, in.ticket);
      }
    }
    EXPECT_GT(accepted, 0);
    EXPECT_GT(refused, 0) << "round " << round;
  }
}

}  // namespace
}  // namespace sf::sw
