// Receive stage D (switch/pipeline/admission_stage.h) on its own: the
// QueuedRun hand-off from stage C (one key per run, flushed at another key
// and when full), and admit_run_whole against admission copy by copy
// (Mmu::admit_ingress + admit_egress, then push) on a real Mmu, EgressQueue
// and WRED: a run it takes leaves the same queue, tickets, counters and MMU
// state; a run it refuses (queue room, WRED above Kmin, PFC asserted or
// headroom in use, the MMU) changes nothing. Plain memory, no SwitchNode.
#include "switch/pipeline/admission_stage.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/unit/switch/queued_copy.h"

namespace sf::sw {
namespace {

using test::copy;
using test::kCell;

TEST(QueuedRun, CopiesOfOneKeyJoinAnotherKeyOrAFullRunFlushesFirst) {
  QueuedRun run;
  std::vector<std::vector<uint32_t>> flushed;  // bytes of each run handed over
  const auto flush = [&] {
    const uint16_t n = run.take();
    std::vector<uint32_t> b;
    for (uint16_t i = 0; i < n; ++i) b.push_back(run.data()[i].bytes);
    flushed.push_back(b);
  };
  run.add(copy(1, 3, 3, 100), flush);
  run.add(copy(1, 3, 3, 101), flush);
  EXPECT_EQ(run.size(), 2);
  EXPECT_TRUE(flushed.empty());
  run.add(copy(1, 3, 4, 102), flush);  // another queue
  run.add(copy(2, 3, 4, 103), flush);  // another port
  run.add(copy(2, 0, 4, 104), flush);  // another PG
  ASSERT_EQ(flushed.size(), 3u);
  EXPECT_EQ(flushed[0], (std::vector<uint32_t>{100, 101}));
  EXPECT_EQ(flushed[1], (std::vector<uint32_t>{102}));
  EXPECT_EQ(flushed[2], (std::vector<uint32_t>{103}));
  EXPECT_EQ(run.key(), QueuedRun::key_of(copy(2, 0, 4)));
  flush();
  EXPECT_TRUE(run.empty());
  flushed.clear();
  for (uint32_t i = 0; i < QueuedRun::kCapacity + 3; ++i) run.add(copy(5, 1, 1, i), flush);
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_EQ(flushed[0].size(), QueuedRun::kCapacity);
  EXPECT_EQ(flushed[0].back(), QueuedRun::kCapacity - 1);
  EXPECT_EQ(run.size(), 3);
}

// QueuedRun::set_slots_for: a run whose key has free contiguous slots is
// built in them (data() is the queue's tail slots), else in the run's own
// array; each take() resolves the next run anew (the tail moved). Expect:
// the copies in order wherever they were built, and in_ring() as the
// resolver said.
TEST(QueuedRun, BuiltInTheSlotsTheResolverGives) {
  struct Ctx {
    EgressQueue q{128};
    uint32_t asked = 0;
    bool refuse = false;
  } ctx;
  QueuedRun run;
  run.set_slots_for(
      [](void* c, uint32_t) -> QueuedPkt* {
        auto* x = static_cast<Ctx*>(c);
        ++x->asked;
        return x->refuse ? nullptr : x->q.tail_slots(QueuedRun::kCapacity);
      },
      &ctx);
  std::vector<uint32_t> got;
  bool was_in_ring = false;
  const auto flush = [&] {
    was_in_ring = run.in_ring();
    const uint16_t n = run.take();
    for (uint16_t i = 0; i < n; ++i) got.push_back(run.data()[i].bytes);
    if (was_in_ring) {
      EXPECT_EQ(run.data(), ctx.q.tail_slots(n));
      ctx.q.commit_run(n, 0);  // as admit_run_whole does when it takes the run
    }
  };
  for (uint32_t i = 0; i < 5; ++i) run.add(copy(1, 3, 3, 100 + i), flush);
  EXPECT_TRUE(run.in_ring());
  flush();
  EXPECT_TRUE(was_in_ring);
  EXPECT_EQ(ctx.q.packets(), 5u);
  for (uint32_t i = 0; i < 3; ++i) run.add(copy(1, 3, 3, 200 + i), flush);  // same key: resolved again
  EXPECT_EQ(run.data(), ctx.q.tail_slots(3));
  ctx.refuse = true;
  run.add(copy(2, 3, 3, 300), flush);  // another key: the first run goes, this one is staged
  EXPECT_TRUE(was_in_ring);
  EXPECT_FALSE(run.in_ring());
  flush();
  EXPECT_FALSE(was_in_ring);
  EXPECT_EQ(got, (std::vector<uint32_t>{100, 101, 102, 103, 104, 200, 201, 202, 300}));
  EXPECT_EQ(ctx.asked, 3u);
  EXPECT_EQ(ctx.q.packets(), 8u);
}

// Two ports; ingress pool 0 and egress pool 1; PG 3 of port 0 lossless
// (profile 2, headroom), the others lossy.
MmuConfig config() {
  MmuConfig c;
  c.cell_bytes = kCell;
  c.total_bytes = 1000 * kCell;
  c.pools = {{"ingress_pool", PoolDir::kIngress, ThresholdMode::kDynamic, 600 * kCell, 100 * kCell},
             {"egress_pool", PoolDir::kEgress, ThresholdMode::kDynamic, 800 * kCell, 0}};
  c.profiles = {{"ing", 0, 0, ThresholdMode::kDynamic, 0, 0},
                {"eg", 1, 0, ThresholdMode::kDynamic, 0, 0},
                {"lossless", 0, 0, ThresholdMode::kDynamic, -2, 0, 40 * kCell, 8 * kCell, 8 * kCell}};
  c.pg_profile = {{0, 0, 0, 2, 0, 0, 0, 0}, {0, 0, 0, 2, 0, 0, 0, 0}};
  c.queue_profile = {{1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}};
  return c;
}

// The run copy by copy, as SwitchNode::enqueue_one takes a lossy copy that is accepted.
void copy_by_copy(Mmu& mmu, EgressQueue& q, QueueCounters& qc, const std::vector<QueuedPkt>& run) {
  for (const QueuedPkt& p : run) {
    const Admission in = mmu.admit_ingress(p.in_port, p.pg, p.bytes);
    ASSERT_EQ(in.verdict, Verdict::kAccept);
    const Admission out = mmu.admit_egress(p.out_port, p.queue, in.ticket);
    ASSERT_EQ(out.verdict, Verdict::kAccept);
    q.push(p, out.ticket);
    ++qc.enqueued_packets;
    qc.watermark_bytes = std::max(qc.watermark_bytes, q.bytes());
  }
}

void expect_same(const Mmu& a, const Mmu& b) {
  EXPECT_EQ(a.total_used(), b.total_used());
  for (uint16_t p = 0; p < 2; ++p) {
    for (uint8_t i = 0; i < 8; ++i) {
      EXPECT_EQ(a.pg_use(p, i).used, b.pg_use(p, i).used);
      EXPECT_EQ(a.pg_use(p, i).shared, b.pg_use(p, i).shared);
      EXPECT_EQ(a.pg_use(p, i).hdrm, b.pg_use(p, i).hdrm);
      EXPECT_EQ(a.queue_use(p, i).used, b.queue_use(p, i).used);
      EXPECT_EQ(a.queue_use(p, i).shared, b.queue_use(p, i).shared);
    }
  }
}

std::vector<QueuedPkt> run_of(uint16_t n, uint8_t pg = 0, uint32_t bytes = 0) {
  std::vector<QueuedPkt> r;
  for (uint16_t i = 0; i < n; ++i) r.push_back(copy(1, pg, 2, bytes != 0 ? bytes : 64 + 97u * i, 0));
  return r;
}

// add_plain (stage C's plain L2 copy built straight in the run) against
// add() of the same copy built field by field: random ports, PGs, queues,
// IP versions and offsets, runs split at other keys and when full. Expect:
// the same runs, byte for byte, and the same key.
TEST(QueuedRun, AddPlainEqualsAdd) {
  QueuedRun a, b;
  std::vector<std::vector<QueuedPkt>> fa, fb;
  auto flush_of = [](QueuedRun& r, std::vector<std::vector<QueuedPkt>>& out) {
    return [&r, &out] {
      const uint16_t n = r.take();
      out.emplace_back(r.data(), r.data() + n);
    };
  };
  uint32_t seed = 99;
  auto rnd = [&] { return seed = seed * 1103515245u + 12345u, seed >> 8; };
  for (int i = 0; i < 20000; ++i) {
    auto* m = reinterpret_cast<rte_mbuf*>(uintptr_t{0x1000} + 64u * i);
    const uint32_t bytes = 60 + rnd() % 9000;
    const auto in = static_cast<uint16_t>(rnd() % 3);
    const auto out = static_cast<uint16_t>(rnd() % 2 + (rnd() % 50 == 0 ? 300 : 0));
    const auto pg = static_cast<uint8_t>(rnd() % 8 < 6 ? 3 : rnd() % 8);
    const auto q = static_cast<uint8_t>(rnd() % 8 < 6 ? 3 : rnd() % 8);
    const auto ipv = static_cast<uint8_t>(rnd() % 3 == 0 ? 0 : (rnd() % 2 ? 4 : 6));
    const auto l3 = static_cast<uint16_t>(ipv == 0 ? 0 : 14 + 4 * (rnd() % 2));
    QueuedPkt p;
    p.mbuf = m;
    p.bytes = bytes;
    p.in_port = in;
    p.out_port = out;
    p.pg = pg;
    p.queue = q;
    p.ip_version = ipv;
    p.l3_offset = l3;
    p.credit_vl = kNoCreditVl;
    a.add(p, flush_of(a, fa));
    b.add_plain(m, bytes, in, out, uint32_t{pg} | uint32_t{q} << 8 | uint32_t{ipv} << 16, l3, flush_of(b, fb));
    ASSERT_EQ(a.key(), b.key());
    ASSERT_EQ(a.size(), b.size());
  }
  flush_of(a, fa)();
  flush_of(b, fb)();
  ASSERT_EQ(fa.size(), fb.size());
  EXPECT_GT(fa.size(), 100u);
  for (size_t r = 0; r < fa.size(); ++r) {
    ASSERT_EQ(fa[r].size(), fb[r].size());
    ASSERT_EQ(std::memcmp(fa[r].data(), fb[r].data(), fa[r].size() * sizeof(QueuedPkt)), 0) << r;
  }
}

// RxMeta::pg_q_ip: the three fields add_plain takes, from one load.
TEST(QueuedRun, RxMetaPgQueueIpInOneWord) {
  RxMeta r;
  r.step = RxStep::kL2;
  r.pg = 3;
  r.queue = 5;
  r.ip_version = 4;
  r.l3_offset = 14;
  EXPECT_EQ(r.pg_q_ip(), 3u | 5u << 8 | 4u << 16);
}

TEST(AdmissionStage, WholeRunEqualsCopyByCopy) {
  const MmuConfig cfg = config();
  Mmu mmu(cfg);
  Mmu ref(cfg);
  EgressQueue q(64), ref_q(64);
  QueueCounters qc, ref_qc;
  for (uint16_t n : {1, 5, 32}) {
    const std::vector<QueuedPkt> run = run_of(n);
    ASSERT_TRUE(admit_run_whole(mmu, q, qc, Wred{}, RunPfc{}, run.data(), n));
    copy_by_copy(ref, ref_q, ref_qc, run);
    expect_same(mmu, ref);
  }
  EXPECT_EQ(qc.enqueued_packets, ref_qc.enqueued_packets);
  EXPECT_EQ(qc.watermark_bytes, ref_qc.watermark_bytes);
  ASSERT_EQ(q.packets(), ref_q.packets());
  EXPECT_EQ(q.bytes(), ref_q.bytes());
  while (!q.empty()) {
    const QueuedPkt a = q.pop();
    const QueuedPkt b = ref_q.pop();
    EXPECT_EQ(a.bytes, b.bytes);
    EXPECT_EQ(a.ticket.cells, b.ticket.cells);
    EXPECT_EQ(a.ticket.ing_shared, b.ticket.ing_shared);
    EXPECT_EQ(a.ticket.eg_shared, b.ticket.eg_shared);
  }
}

// admit_run_whole's paths (the one pass into the slots after the tail, and
// admit_run_whole_by_copy where they wrap round the ring or cells are not a
// power of two) against copy by copy, over random runs into a ring of 64
// that is drained at random (the tail goes round), cell sizes 64, 256, 96
// and 200, reserved cells at ingress and egress or none, and a buffer small
// enough that the MMU refuses some runs. Expect: a run taken leaves the
// same queue (every slot and ticket), counters and MMU as copy by copy; a
// run refused changes nothing.
TEST(AdmissionStage, WholeRunEqualsCopyByCopyRandom) {
  uint32_t seed = 7;
  auto rnd = [&] { return seed = seed * 1103515245u + 12345u, seed >> 8; };
  int taken = 0;
  int refused = 0;
  int in_place = 0;
  for (int trial = 0; trial < 120; ++trial) {
    MmuConfig cfg = config();
    const uint32_t cell = std::array<uint32_t, 4>{64, 256, 96, 200}[trial % 4];
    cfg.cell_bytes = cell;
    cfg.total_bytes = 400 * cell;
    cfg.pools[0].size_bytes = 300 * cell;
    cfg.pools[1].size_bytes = 350 * cell;
    cfg.profiles[0].reserved_bytes = (rnd() % 3) * 5 * cell;
    cfg.profiles[1].reserved_bytes = (rnd() % 3) * 7 * cell;
    cfg.profiles[0].dynamic_th = static_cast<int>(rnd() % 3) - 1;
    Mmu mmu(cfg);
    Mmu ref(cfg);
    EgressQueue q(64), ref_q(64);
    QueueCounters qc, ref_qc;
    auto pop_both = [&](uint32_t k) {
      for (uint32_t j = 0; j < k && !q.empty(); ++j) {
        const QueuedPkt a = q.pop();
        const QueuedPkt b = ref_q.pop();
        ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0);
        mmu.release(a.in_port, a.pg, a.out_port, a.queue, a.ticket);
        ref.release(b.in_port, b.pg, b.out_port, b.queue, b.ticket);
      }
    };
    for (int step = 0; step < 60; ++step) {
      pop_both(rnd() % 40);
      // Runs of up to 32 copies (QueuedRun::kCapacity is larger: these fit
      // the ring of 64 and the small buffer often enough).
      const auto n = static_cast<uint16_t>(1 + rnd() % std::min<uint16_t>(32, QueuedRun::kCapacity));
      std::vector<QueuedPkt> run;
      for (uint16_t i = 0; i < n; ++i) {
        QueuedPkt p = copy(1, 0, 2, 60 + rnd() % (rnd() % 4 == 0 ? 9000 : 1500), 0);
        p.mbuf = reinterpret_cast<rte_mbuf*>(uintptr_t{0x1000} + 64u * rnd());
        p.l3_offset = 14;
        p.ip_version = 4;
        run.push_back(p);
      }
      const Mmu before = mmu;
      const uint32_t packets = q.packets();
      // Every other step the run is built in place, in the free slots after
      // the tail (QueuedRun::in_ring) when they are contiguous and fit.
      const QueuedPkt* from = run.data();
      if (step % 2 == 1 && q.packets() + n <= q.capacity()) {
        if (QueuedPkt* slots = q.tail_slots(n); slots != nullptr) {
          for (uint16_t i = 0; i < n; ++i) {
            slots[i] = run[i];
            slots[i].ticket = Ticket{};  // add_plain leaves it 0
          }
          from = slots;
          ++in_place;
        }
      }
      if (admit_run_whole(mmu, q, qc, Wred{}, RunPfc{}, from, n)) {
        ++taken;
        copy_by_copy(ref, ref_q, ref_qc, run);
      } else {
        ++refused;
        expect_same(mmu, before);
        ASSERT_EQ(q.packets(), packets);
      }
      expect_same(mmu, ref);
      ASSERT_EQ(q.packets(), ref_q.packets());
      ASSERT_EQ(q.bytes(), ref_q.bytes());
      EXPECT_EQ(qc.enqueued_packets, ref_qc.enqueued_packets);
      EXPECT_EQ(qc.watermark_bytes, ref_qc.watermark_bytes);
      if (::testing::Test::HasFatalFailure()) return;
    }
    pop_both(64);
  }
  EXPECT_GT(taken, 2000);
  EXPECT_GT(refused, 100);
  EXPECT_GT(in_place, 1000);
}

// A refused run: false, and queue, counters and MMU as before.
void expect_refused(Mmu& mmu, EgressQueue& q, const Wred& w, RunPfc pfc, const std::vector<QueuedPkt>& run) {
  const Mmu before = mmu;
  const uint32_t packets = q.packets();
  const uint64_t bytes = q.bytes();
  QueueCounters qc;
  EXPECT_FALSE(admit_run_whole(mmu, q, qc, w, pfc, run.data(), static_cast<uint16_t>(run.size())));
  expect_same(mmu, before);
  EXPECT_EQ(q.packets(), packets);
  EXPECT_EQ(q.bytes(), bytes);
  EXPECT_EQ(qc.enqueued_packets, 0u);
}

TEST(AdmissionStage, RefusesWhatCopyByCopyWouldNotDoTheSameWay) {
  const MmuConfig cfg = config();
  Mmu mmu(cfg);
  // Queue room: 8 slots, a run of 9.
  EgressQueue small(8);
  expect_refused(mmu, small, Wred{}, RunPfc{}, run_of(9));
  // WRED: a copy would see a depth above Kmin (a draw); at Kmin exactly: taken.
  WredConfig wc;
  wc.ecn = true;
  wc.kmin_bytes = 4 * 1000;
  wc.kmax_bytes = 100000;
  wc.pmax = 1.0;
  EgressQueue q(64);
  expect_refused(mmu, q, Wred(wc), RunPfc{}, run_of(6, 0, 1000));
  QueueCounters qc;
  EXPECT_TRUE(admit_run_whole(mmu, q, qc, Wred(wc), RunPfc{}, run_of(5, 0, 1000).data(), 5));
  // PFC: XOFF asserted for the PG, or its headroom in use.
  expect_refused(mmu, q, Wred{}, RunPfc{true, true}, run_of(2, 3));
  Mmu full(cfg);
  for (int i = 0; i < 200 && full.pg_use(0, 3).hdrm == 0; ++i) {
    ASSERT_EQ(full.admit_ingress(0, 3, 9000).verdict, Verdict::kAccept);
  }
  ASSERT_NE(full.pg_use(0, 3).hdrm, 0u);
  EgressQueue q2(64);
  expect_refused(full, q2, Wred{}, RunPfc{true, false}, run_of(2, 3, 64));
  // The MMU: a run larger than the PG's dynamic share of the buffer.
  Mmu other(cfg);
  EgressQueue q3(64);
  expect_refused(other, q3, Wred{}, RunPfc{}, run_of(32, 0, 9000));
}

}  // namespace
}  // namespace sf::sw
