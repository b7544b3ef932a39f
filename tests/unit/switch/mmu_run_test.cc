// Mmu::admit_run (a run of packets of one PG and queue admitted at once)
// against admit_ingress + admit_egress packet by packet, on two Mmus driven
// through the same random history: whenever every packet of the run would be
// accepted without headroom (and, when asked, the PG stays below its shared
// limit), the run is accepted with the same tickets and the same state after;
// otherwise it is refused and changes nothing. Release of summed tickets
// (release_sum) equals the releases one by one.
#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <vector>

#include "switch/mmu/mmu.h"

namespace sf::sw {
namespace {

constexpr uint32_t kCell = 256;

// Two ports; pools 0 (ingress) and 1 (egress) of random size and mode;
// profiles 0: ingress lossy, 1: egress, 2: ingress lossless (headroom).
MmuConfig random_config(std::mt19937& rng) {
  MmuConfig c;
  c.cell_bytes = kCell;
  c.total_bytes = (200 + rng() % 400) * kCell;
  const auto mode = [&] { return rng() % 2 == 0 ? ThresholdMode::kDynamic : ThresholdMode::kStatic; };
  c.pools = {{"ingress_pool", PoolDir::kIngress, mode(), (50 + rng() % 250) * kCell, (rng() % 3 == 0) ? 40 * kCell : 0},
             {"egress_pool", PoolDir::kEgress, mode(), (50 + rng() % 250) * kCell, 0}};
  const auto th = [&] { return static_cast<int>(rng() % 12) - 5; };  // -5..6, and sometimes the ends
  const auto dyn = [&] { return rng() % 10 == 0 ? (rng() % 2 == 0 ? -8 : 7) : th(); };
  ProfileConfig ing{"ing", 0, (rng() % 5) * kCell, c.pools[0].mode, dyn(), (rng() % 120) * kCell};
  ProfileConfig eg{"eg", 1, (rng() % 5) * kCell, c.pools[1].mode, dyn(), (rng() % 120) * kCell};
  ProfileConfig lossless{"lossless", 0, (rng() % 5) * kCell, c.pools[0].mode, dyn(), (rng() % 120) * kCell,
                         (10 + rng() % 60) * kCell, 8 * kCell, 8 * kCell};
  c.profiles = {ing, eg, lossless};
  c.pg_profile = {{0, 0, 0, 2, 0, 0, 0, kNoProfile}, {0, 0, 0, 2, 0, 0, 0, 0}};
  c.queue_profile = {{1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, kNoProfile}};
  return c;
}

void expect_same(const Mmu& a, const Mmu& b, int step) {
  ASSERT_EQ(a.total_used(), b.total_used()) << "step " << step;
  for (uint16_t pool = 0; pool < 2; ++pool) {
    ASSERT_EQ(a.pool_shared_used(pool), b.pool_shared_used(pool)) << "step " << step;
    ASSERT_EQ(a.pool_watermark(pool), b.pool_watermark(pool)) << "step " << step;
    ASSERT_EQ(a.hdrm_pool_used(pool), b.hdrm_pool_used(pool)) << "step " << step;
  }
  for (uint16_t p = 0; p < 2; ++p) {
    for (uint8_t i = 0; i < 8; ++i) {
      for (const auto& [x, y] : {std::pair{a.pg_use(p, i), b.pg_use(p, i)}, std::pair{a.queue_use(p, i), b.queue_use(p, i)}}) {
        ASSERT_EQ(x.used, y.used) << "step " << step;
        ASSERT_EQ(x.shared, y.shared) << "step " << step;
        ASSERT_EQ(x.hdrm, y.hdrm) << "step " << step;
        ASSERT_EQ(x.watermark, y.watermark) << "step " << step;
      }
    }
  }
}

struct Queued {
  uint16_t in;
  uint8_t pg;
  uint16_t out;
  uint8_t q;
  Ticket t;
};

// 1. Random runs (1..32 packets, sizes 64..9000 B or all one size) over
// random configs and occupancies. Expect: admit_run accepts exactly when the
// packet-by-packet admissions all accept without headroom (and the PG stays
// below its limit after each, when asked); then the same tickets and state;
// when it refuses, nothing changed. Both outcomes occur often.
TEST(MmuRun, RunEqualsPacketByPacket) {
  std::mt19937 rng(4242);
  int runs_accepted = 0;
  int runs_refused = 0;
  for (int round = 0; round < 60; ++round) {
    const MmuConfig cfg = random_config(rng);
    Mmu run(cfg);
    Mmu ref(cfg);
    std::deque<Queued> queued;
    for (int step = 0; step < 2000; ++step) {
      if (rng() % 3 == 0 && !queued.empty()) {
        // Release a few (oldest or random), in both.
        for (int k = 0; k < 1 + static_cast<int>(rng() % 8) && !queued.empty(); ++k) {
          const size_t i = rng() % 2 == 0 ? 0 : rng() % queued.size();
          const Queued& h = queued[i];
          run.release(h.in, h.pg, h.out, h.q, h.t);
          ref.release(h.in, h.pg, h.out, h.q, h.t);
          queued.erase(queued.begin() + static_cast<long>(i));
        }
        continue;
      }
      const auto in = static_cast<uint16_t>(rng() % 2);
      const auto pg = static_cast<uint8_t>(rng() % 8);
      const auto out = static_cast<uint16_t>(rng() % 2);
      const auto q = static_cast<uint8_t>(rng() % 8);
      const bool below = rng() % 2 == 0;
      const uint32_t n = 1 + rng() % 32;
      const bool one_size = rng() % 2 == 0;
      const uint32_t size0 = 64 + rng() % (rng() % 4 == 0 ? 9000 : 1500);
      std::vector<uint32_t> bytes(n);
      std::vector<uint32_t> cells(n);
      for (uint32_t i = 0; i < n; ++i) {
        bytes[i] = one_size ? size0 : 64 + rng() % 9000;
        cells[i] = run.cells_for(bytes[i]);
      }
      // The reference, packet by packet, on a copy first: would the run qualify?
      Mmu probe = ref;
      bool qualifies = true;
      std::vector<Ticket> want(n);
      for (uint32_t i = 0; i < n && qualifies; ++i) {
        const Admission a = probe.admit_ingress(in, pg, bytes[i]);
        if (a.verdict != Verdict::kAccept || a.ticket.ing_hdrm != 0) {
          qualifies = false;
          break;
        }
        if (below && probe.pg_use(in, pg).shared >= probe.pg_shared_limit(in, pg)) qualifies = false;
        const Admission e = probe.admit_egress(out, q, a.ticket);
        if (e.verdict != Verdict::kAccept) qualifies = false;
        want[i] = e.ticket;
      }
      std::vector<Ticket> got(n);
      const bool accepted = run.admit_run(in, pg, out, q, cells.data(), n, below, got.data());
      ASSERT_EQ(accepted, qualifies) << "round " << round << " step " << step;
      if (accepted) {
        ++runs_accepted;
        ref = probe;
        for (uint32_t i = 0; i < n; ++i) {
          ASSERT_EQ(got[i].cells, want[i].cells);
          ASSERT_EQ(got[i].ing_shared, want[i].ing_shared) << "round " << round << " step " << step << " pkt " << i;
          ASSERT_EQ(got[i].ing_hdrm, want[i].ing_hdrm);
          ASSERT_EQ(got[i].eg_shared, want[i].eg_shared) << "round " << round << " step " << step << " pkt " << i;
          queued.push_back({in, pg, out, q, got[i]});
        }
      } else {
        ++runs_refused;
        expect_same(run, ref, step);  // nothing charged
        // Then both take the packets one by one (the caller's fallback).
        for (uint32_t i = 0; i < n; ++i) {
          const Admission a = run.admit(in, pg, out, q, bytes[i]);
          const Admission b = ref.admit(in, pg, out, q, bytes[i]);
          ASSERT_EQ(a.verdict, b.verdict);
          if (a.verdict == Verdict::kAccept) queued.push_back({in, pg, out, q, a.ticket});
        }
      }
      expect_same(run, ref, step);
      if (testing::Test::HasFatalFailure()) return;
    }
  }
  EXPECT_GT(runs_accepted, 2000) << runs_refused;
  EXPECT_GT(runs_refused, 2000) << runs_accepted;
}

// 2. An attached Mmu (sharding) never takes a run; one with the PG and queue
// in one pool neither. Expect: false, nothing charged.
TEST(MmuRun, AttachedOrOnePoolRefuses) {
  std::mt19937 rng(7);
  MmuConfig cfg = random_config(rng);
  cfg.profiles[0].reserved_bytes = 8 * kCell;
  cfg.profiles[1].reserved_bytes = 8 * kCell;
  const std::vector<uint32_t> cells{1, 1, 1};
  std::vector<Ticket> t(3);
  {
    Mmu mmu(cfg);
    SharedBuffer shared(cfg.pools.size());
    mmu.attach(&shared);
    EXPECT_FALSE(mmu.admit_run(0, 0, 1, 0, cells.data(), 3, false, t.data()));
    EXPECT_EQ(mmu.pg_use(0, 0).used, 0u);
  }
  cfg.profiles[1].pool = 0;
  Mmu mmu(cfg);
  EXPECT_FALSE(mmu.admit_run(0, 0, 1, 0, cells.data(), 3, false, t.data()));
  EXPECT_EQ(mmu.total_used(), 0u);
  cfg.profiles[1].pool = 1;
  Mmu ok(cfg);
  EXPECT_TRUE(ok.admit_run(0, 0, 1, 0, cells.data(), 3, false, t.data()));
  EXPECT_EQ(ok.pg_use(0, 0).used, 3u);
}

// 3. release_sum of a run's summed tickets equals releasing them one by one
// (also with headroom and shared parts, attached or not). Expect: the same
// state after, and everything back to zero at the end.
TEST(MmuRun, ReleaseSumEqualsReleases) {
  std::mt19937 rng(99);
  for (int round = 0; round < 40; ++round) {
    const MmuConfig cfg = random_config(rng);
    const bool attach = round % 2 == 1;
    Mmu a(cfg);
    Mmu b(cfg);
    SharedBuffer sa(cfg.pools.size());
    SharedBuffer sb(cfg.pools.size());
    if (attach) {
      a.attach(&sa);
      b.attach(&sb);
    }
    const auto in = static_cast<uint16_t>(rng() % 2);
    const auto pg = static_cast<uint8_t>(rng() % 7);
    const auto out = static_cast<uint16_t>(rng() % 2);
    const auto q = static_cast<uint8_t>(rng() % 7);
    std::vector<Ticket> tickets;
    for (int i = 0; i < 40; ++i) {
      const uint32_t bytes = 64 + rng() % 3000;
      const Admission x = a.admit(in, pg, out, q, bytes);
      const Admission y = b.admit(in, pg, out, q, bytes);
      ASSERT_EQ(x.verdict, y.verdict);
      if (x.verdict == Verdict::kAccept) tickets.push_back(x.ticket);
    }
    size_t i = 0;
    while (i < tickets.size()) {
      const size_t k = std::min(tickets.size() - i, size_t{1} + rng() % 12);
      Mmu::TicketSum sum;
      for (size_t j = i; j < i + k; ++j) {
        sum.add(tickets[j]);
        b.release(in, pg, out, q, tickets[j]);
      }
      a.release_sum(in, pg, out, q, sum);
      i += k;
      expect_same(a, b, static_cast<int>(i));
    }
    EXPECT_EQ(a.total_used(), 0u);
    EXPECT_EQ(a.pool_shared_used(0), 0u);
    EXPECT_EQ(a.pool_shared_used(1), 0u);
    EXPECT_EQ(a.hdrm_pool_used(0), 0u);
  }
}

// 4. cells_for (a shift for power-of-two cells, else a division) is the
// rounded-up quotient for any cell size the config allows and any frame.
// Expect: ceil(bytes / cell) for cells 32..4096, bytes 0..70000.
TEST(MmuRun, CellsForIsCeilDivision) {
  for (uint32_t cell : {32u, 64u, 96u, 128u, 208u, 256u, 333u, 512u, 4096u}) {
    MmuConfig cfg;
    cfg.cell_bytes = cell;
    cfg.total_bytes = 1 << 20;
    const Mmu mmu(cfg);
    for (uint32_t bytes = 0; bytes < 70000; bytes += 1 + bytes % 7) {
      ASSERT_EQ(mmu.cells_for(bytes), (bytes + cell - 1) / cell) << cell << " " << bytes;
    }
  }
}

}  // namespace
}  // namespace sf::sw
