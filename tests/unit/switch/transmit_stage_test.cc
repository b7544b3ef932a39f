// Transmit stage E's helpers (switch/pipeline/transmit_stage.h) on their
// own: ReleaseBatch (summed release of consecutive packets of one queue,
// ingress port and PG) against releasing them one by one on a real Mmu,
// and int_candidate on frames in plain memory. No SwitchNode, no EAL.
#include "switch/pipeline/transmit_stage.h"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <vector>

namespace sf::sw {
namespace {

constexpr uint32_t kCell = 256;

MmuConfig config() {
  MmuConfig c;
  c.cell_bytes = kCell;
  c.total_bytes = 1000 * kCell;
  c.pools = {{"ingress_pool", PoolDir::kIngress, ThresholdMode::kDynamic, 600 * kCell, 0},
             {"egress_pool", PoolDir::kEgress, ThresholdMode::kDynamic, 800 * kCell, 0}};
  c.profiles = {{"ing", 0, 0, ThresholdMode::kDynamic, 0, 0}, {"eg", 1, 0, ThresholdMode::kDynamic, 0, 0}};
  c.pg_profile = {{0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0}};
  c.queue_profile = {{1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}};
  return c;
}

struct Sent {
  uint16_t in;
  uint8_t pg;
  uint8_t q;
  Ticket t;
};

TEST(TransmitStage, ReleaseBatchEqualsReleasesOneByOne) {
  const MmuConfig cfg = config();
  Mmu batched(cfg);
  Mmu ref(cfg);
  // Packets to port 1 from (in, pg) into queue q, in the order they leave.
  const std::vector<std::tuple<uint16_t, uint8_t, uint8_t>> keys{{0, 0, 2}, {0, 0, 2}, {0, 0, 2}, {0, 1, 2},
                                                                  {0, 1, 2}, {0, 1, 3}, {1, 1, 3}, {1, 1, 3}};
  std::vector<Sent> sent;
  uint32_t bytes = 100;
  for (const auto& [in, pg, q] : keys) {
    bytes += 300;
    for (Mmu* m : {&batched, &ref}) {
      const Admission a = m->admit_ingress(in, pg, bytes);
      ASSERT_EQ(a.verdict, Verdict::kAccept);
      const Admission e = m->admit_egress(1, q, a.ticket);
      ASSERT_EQ(e.verdict, Verdict::kAccept);
      if (m == &batched) sent.push_back({in, pg, q, e.ticket});
    }
  }
  ReleaseBatch rel;
  EXPECT_FALSE(rel.open());
  int batches = 0;
  for (const Sent& s : sent) {
    ref.release(s.in, s.pg, 1, s.q, s.t);
    if (rel.joins(s.q, s.in, s.pg)) {
      rel.add(s.t);
      continue;
    }
    rel.flush(batched, 1);
    batched.release(s.in, s.pg, 1, s.q, s.t);  // the first of a key: released itself
    rel.begin(s.q, s.in, s.pg);
    ++batches;
    EXPECT_TRUE(rel.open());
  }
  rel.flush(batched, 1);
  EXPECT_FALSE(rel.open());
  EXPECT_EQ(batches, 4);
  EXPECT_EQ(batched.total_used(), 0u);
  EXPECT_EQ(ref.total_used(), 0u);
  for (uint16_t p = 0; p < 2; ++p) {
    for (uint8_t i = 0; i < 8; ++i) {
      EXPECT_EQ(batched.pg_use(p, i).used, ref.pg_use(p, i).used);
      EXPECT_EQ(batched.pg_use(p, i).shared, ref.pg_use(p, i).shared);
      EXPECT_EQ(batched.queue_use(p, i).used, ref.queue_use(p, i).used);
      EXPECT_EQ(batched.queue_use(p, i).shared, ref.queue_use(p, i).shared);
    }
  }
  for (uint16_t pool = 0; pool < 2; ++pool) EXPECT_EQ(batched.pool_shared_used(pool), ref.pool_shared_used(pool));
}

// A frame in plain memory: Ethernet, then IPv4 (IHL `ihl`, protocol `proto`)
// or IPv6 (next header `proto`), UDP to `dport`, BTH with flag byte `bth8`.
struct Frame {
  Frame(int ip, uint8_t proto, uint16_t dport, uint8_t bth8, uint8_t ihl = 5, uint16_t len = 128)
      : bytes(256), m(std::make_unique<rte_mbuf>()) {
    const uint32_t l3 = 14;
    uint32_t udp;
    if (ip == 4) {
      bytes[l3] = static_cast<uint8_t>(0x40 | ihl);
      bytes[l3 + 9] = proto;
      udp = l3 + 4u * ihl;
    } else {
      bytes[l3] = 0x60;
      bytes[l3 + 6] = proto;
      udp = l3 + 40;
    }
    bytes[udp + 2] = static_cast<uint8_t>(dport >> 8);
    bytes[udp + 3] = static_cast<uint8_t>(dport);
    bytes[udp + 8 + 8] = bth8;
    m->buf_addr = bytes.data();
    m->data_off = 0;
    m->data_len = len;
    m->pkt_len = len;
    pkt.mbuf = m.get();
    pkt.ip_version = static_cast<uint8_t>(ip);
    pkt.l3_offset = l3;
  }
  std::vector<uint8_t> bytes;
  std::unique_ptr<rte_mbuf> m;  // on the heap: rte_mbuf's zero-size marker arrays make it no member
  QueuedPkt pkt;
};

// tx_run against the transmit loop's steps head by head (pop(), the
// scheduler's repeat(), the release batch's add): random heads (ingress
// port, PG, trimmed, credit VL, sizes, tickets; the fields tx_run must not
// look at set at random too), strict and DWRR queues with what is left of
// a deficit, rings that wrap, any room. Expect: the same packets out, in
// order, the same bytes, tickets summed, queue, head and deficit.
TEST(TransmitStage, TxRunEqualsHeadByHead) {
  uint32_t seed = 4242;
  auto rnd = [&] { return seed = seed * 1103515245u + 12345u, seed >> 8; };
  uint64_t sent = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::array<QueueSchedConfig, kSchedQueues> sc{};
    for (auto& c : sc) {
      c.type = rnd() % 3 == 0 ? SchedType::kStrict : SchedType::kDwrr;
      c.weight = 1 + rnd() % 3;
      c.priority = rnd() % 4;
    }
    const int q = static_cast<int>(rnd() % kSchedQueues);
    PortScheduler sa(sc), sb(sc);
    EgressQueue a(64), b(64);
    const uint32_t skip = rnd() % 64;  // the ring's head somewhere, so that the run may wrap
    for (uint32_t i = 0; i < skip; ++i) {
      a.push(QueuedPkt{});
      b.push(QueuedPkt{});
    }
    const uint16_t in = static_cast<uint16_t>(rnd() % 3);
    const uint8_t pg = static_cast<uint8_t>(rnd() % 8);
    const uint32_t n = 1 + rnd() % 60;
    for (uint32_t i = 0; i < n; ++i) {
      QueuedPkt p;
      p.mbuf = reinterpret_cast<rte_mbuf*>(uintptr_t{0x1000} + 64u * rnd());
      p.ticket = Ticket{static_cast<uint16_t>(rnd()), static_cast<uint16_t>(rnd()), static_cast<uint16_t>(rnd()),
                        static_cast<uint16_t>(rnd())};
      p.bytes = 60 + rnd() % (rnd() % 4 == 0 ? 9000 : 1500);
      p.in_port = rnd() % 16 == 0 ? static_cast<uint16_t>(in + 1 + rnd() % 300) : in;
      p.out_port = static_cast<uint16_t>(rnd());
      p.pg = rnd() % 16 == 0 ? static_cast<uint8_t>(rnd()) : pg;
      p.queue = static_cast<uint8_t>(rnd());
      p.ip_version = static_cast<uint8_t>(rnd());
      p.trimmed = rnd() % 24 == 0;
      p.l3_offset = static_cast<uint16_t>(rnd());
      p.credit_vl = rnd() % 24 == 0 ? static_cast<uint8_t>(rnd() % 8) : kNoCreditVl;
      p.credit_slots = static_cast<uint8_t>(rnd());
      a.push(p);
      b.push(p);
    }
    for (uint32_t i = 0; i < skip; ++i) {
      a.pop();
      b.pop();
    }
    // The transmit loop picked q and sent one packet of it (pick() charged it).
    std::array<uint32_t, kSchedQueues> heads{};
    heads[q] = 60 + rnd() % 9000;
    ASSERT_EQ(sa.pick(heads, 0xFF), q);
    ASSERT_EQ(sb.pick(heads, 0xFF), q);
    ReleaseBatch ra, rb;
    ra.begin(q, in, pg);
    rb.begin(q, in, pg);
    const auto room = static_cast<uint16_t>(rnd() % 70);
    std::vector<rte_mbuf*> out_a(room + 1, nullptr), out_b(room + 1, nullptr);
    uint32_t head_a = a.head_bytes();
    const TxRun r = tx_run(sa, a, q, ra, head_a, out_a.data(), room);
    uint16_t k = 0;
    uint64_t bytes = 0;
    while (k < room) {
      const uint32_t h = b.head_bytes();
      if (h == 0) break;
      const QueuedPkt& f = b.front();
      if (f.in_port != in || f.pg != pg || f.trimmed || f.credit_vl != kNoCreditVl) break;
      if (!sb.repeat(q, h)) break;
      const QueuedPkt p = b.pop();
      rb.add(p.ticket);
      out_b[k++] = p.mbuf;
      bytes += p.bytes;
    }
    ASSERT_EQ(r.packets, k) << trial;
    ASSERT_EQ(r.bytes, bytes) << trial;
    ASSERT_EQ(out_a, out_b) << trial;
    ASSERT_EQ(head_a, b.head_bytes()) << trial;
    ASSERT_EQ(a.packets(), b.packets()) << trial;
    ASSERT_EQ(a.bytes(), b.bytes()) << trial;
    ASSERT_EQ(sa.repeat_budget(q), sb.repeat_budget(q)) << trial;
    ASSERT_EQ(ra.sum().cells, rb.sum().cells) << trial;
    ASSERT_EQ(ra.sum().ing_shared, rb.sum().ing_shared) << trial;
    ASSERT_EQ(ra.sum().ing_hdrm, rb.sum().ing_hdrm) << trial;
    ASSERT_EQ(ra.sum().eg_shared, rb.sum().eg_shared) << trial;
    sent += k;
  }
  EXPECT_GT(sent, 8000u);
}

TEST(TransmitStage, IntCandidateDecidesFromAFewHeaderLoads) {
  constexpr uint8_t kFlag = wire::kBthIntFlag;
  EXPECT_EQ(int_candidate(Frame(4, 17, 4791, kFlag).pkt), 14 + 20);
  EXPECT_EQ(int_candidate(Frame(4, 17, 4791, 0).pkt), kIntNo);        // flag clear
  EXPECT_EQ(int_candidate(Frame(4, 17, 9999, kFlag).pkt), kIntNo);    // not RoCE
  EXPECT_EQ(int_candidate(Frame(4, 6, 4791, kFlag).pkt), kIntNo);     // not UDP
  EXPECT_EQ(int_candidate(Frame(4, 17, 4791, kFlag, 6).pkt), kIntParse);  // IPv4 options
  EXPECT_EQ(int_candidate(Frame(6, 17, 4791, kFlag).pkt), 14 + 40);
  EXPECT_EQ(int_candidate(Frame(6, 17, 4791, 0).pkt), kIntNo);
  EXPECT_EQ(int_candidate(Frame(6, 43, 4791, kFlag).pkt), kIntParse);  // a routing header (SRv6)
  EXPECT_EQ(int_candidate(Frame(4, 17, 4791, kFlag, 5, 40).pkt), kIntParse);  // BTH not in the segment
  Frame flooded(4, 17, 4791, kFlag);
  flooded.pkt.ip_version = 0;  // a flooded copy: parsed in full
  EXPECT_EQ(int_candidate(flooded.pkt), kIntParse);
}

}  // namespace
}  // namespace sf::sw
