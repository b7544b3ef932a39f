// Receive stage D copy by copy (switch/pipeline/admission_copy.h) on its
// own: admit_copy_egress on a real Mmu (into the queue, refused with its
// cause and the ingress cells back, trimmed, held behind a lossless PG's
// hold FIFO) and wred_ecn (no draw at or below Kmin; above it Wred's
// decision on one draw, the CE mark in place). Plain memory, no SwitchNode.
#include "switch/pipeline/admission_copy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <random>

#include "tests/unit/switch/queued_copy.h"

namespace sf::sw {
namespace {

using test::copy;
using test::kCell;

// Two ports. PG 0 lossy, PG 3 lossless. Egress queues: 0 static limit of 8
// cells (drop), 2 the same with packet_discard_action trim, 1 no profile,
// 3 dynamic (roomy).
MmuConfig config() {
  MmuConfig c;
  c.cell_bytes = kCell;
  c.total_bytes = 1000 * kCell;
  c.pools = {{"ingress_pool", PoolDir::kIngress, ThresholdMode::kDynamic, 600 * kCell, 100 * kCell},
             {"egress_pool", PoolDir::kEgress, ThresholdMode::kStatic, 800 * kCell, 0}};
  c.profiles = {{"ing", 0, 0, ThresholdMode::kDynamic, 0, 0},
                {"lossless", 0, 0, ThresholdMode::kDynamic, 0, 0, 40 * kCell, 8 * kCell, 8 * kCell},
                {"eg_small", 1, 0, ThresholdMode::kStatic, 0, 8 * kCell},
                {"eg_trim", 1, 0, ThresholdMode::kStatic, 0, 8 * kCell, 0, 0, 0, DiscardAction::kTrim},
                {"eg", 1, 0, ThresholdMode::kDynamic, 0, 0}};
  c.pg_profile = {{0, 0, 0, 1, 0, 0, 0, 0}, {0, 0, 0, 1, 0, 0, 0, 0}};
  c.queue_profile = {{2, -1, 3, 4, 4, 4, 4, 4}, {2, -1, 3, 4, 4, 4, 4, 4}};
  return c;
}

struct Admitted {
  CopyEgress e;
  Ticket in;
};

// Ingress admission, then admit_copy_egress.
Admitted admit(Mmu& mmu, const QueuedPkt& p, const EgressQueue& held) {
  const Admission in = mmu.admit_ingress(p.in_port, p.pg, p.bytes);
  EXPECT_EQ(in.verdict, Verdict::kAccept);
  const bool lossless = mmu.pg_profile(p.in_port, p.pg)->lossless();
  return {admit_copy_egress(mmu, p, in.ticket, lossless, held), in.ticket};
}

TEST(AdmitCopyEgress, LossyCopyQueuedOrRefusedWithItsCellsBack) {
  const MmuConfig cfg = config();
  Mmu mmu(cfg);
  EgressQueue held(4);
  // 1000 B = 4 cells: two fit under the 8-cell limit, the third does not.
  for (int i = 0; i < 2; ++i) {
    const Admitted a = admit(mmu, copy(1, 0, 0), held);
    EXPECT_EQ(a.e.kind, CopyEgress::kQueue);
    EXPECT_FALSE(a.e.released);
    EXPECT_EQ(a.e.ticket.cells, 4);
  }
  EXPECT_EQ(mmu.queue_use(1, 0).used, 8u);
  const uint32_t pg_before = mmu.pg_use(0, 0).used;
  const Admitted r = admit(mmu, copy(1, 0, 0), held);
  EXPECT_EQ(r.e.kind, CopyEgress::kRefuse);
  EXPECT_EQ(r.e.cause, DropCause::kEgressLimit);
  EXPECT_TRUE(r.e.released);
  EXPECT_EQ(mmu.pg_use(0, 0).used, pg_before);  // the ingress cells went back
  // No profile: no buffer.
  const Admitted nb = admit(mmu, copy(1, 0, 1), held);
  EXPECT_EQ(nb.e.kind, CopyEgress::kRefuse);
  EXPECT_EQ(nb.e.cause, DropCause::kNoBuffer);
  // A trim profile: trimmed instead, ingress cells back (the trimmed packet is admitted again).
  for (int i = 0; i < 2; ++i) ASSERT_EQ(admit(mmu, copy(1, 0, 2), held).e.kind, CopyEgress::kQueue);
  const uint32_t pg_trim = mmu.pg_use(0, 0).used;
  const Admitted t = admit(mmu, copy(1, 0, 2), held);
  EXPECT_EQ(t.e.kind, CopyEgress::kTrim);
  EXPECT_EQ(t.e.cause, DropCause::kEgressLimit);
  EXPECT_TRUE(t.e.released);
  EXPECT_EQ(mmu.pg_use(0, 0).used, pg_trim);
}

TEST(AdmitCopyEgress, LosslessCopyWaitsAtTheEgressLimitAndBehindHeldOnes) {
  const MmuConfig cfg = config();
  Mmu mmu(cfg);
  EgressQueue held(4);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(admit(mmu, copy(1, 3, 0), held).e.kind, CopyEgress::kQueue);
  const uint32_t q_before = mmu.queue_use(1, 0).used;
  const Admitted h = admit(mmu, copy(1, 3, 0), held);
  EXPECT_EQ(h.e.kind, CopyEgress::kHold);
  EXPECT_FALSE(h.e.released);
  EXPECT_EQ(h.e.ticket.cells, h.in.cells);  // the ingress ticket, still charged
  EXPECT_EQ(h.e.ticket.eg_shared, 0);
  held.push(copy(1, 3, 0), h.e.ticket);
  // Behind a held packet: held too, even for a roomy queue (FIFO order).
  const uint32_t q3_before = mmu.queue_use(1, 3).used;
  EXPECT_EQ(admit(mmu, copy(1, 3, 3), held).e.kind, CopyEgress::kHold);
  EXPECT_EQ(mmu.queue_use(1, 3).used, q3_before);
  EXPECT_EQ(mmu.queue_use(1, 0).used, q_before);
  // Larger than the queue could ever take (8 cells): refused, not held forever.
  EgressQueue empty(4);
  const Admitted big = admit(mmu, copy(1, 3, 0, 9 * kCell), empty);
  EXPECT_EQ(big.e.kind, CopyEgress::kRefuse);
  EXPECT_EQ(big.e.cause, DropCause::kEgressLimit);
  EXPECT_TRUE(big.e.released);
  // A full hold FIFO: queue_full.
  EgressQueue one(1);
  one.push(copy(1, 3, 0), Ticket{});
  const Admitted full = admit(mmu, copy(1, 3, 0), one);
  EXPECT_EQ(full.e.kind, CopyEgress::kRefuse);
  EXPECT_EQ(full.e.cause, DropCause::kQueueFull);
  EXPECT_TRUE(full.e.released);
  while (!held.empty()) held.pop();
  one.pop();
}

// wred_ecn (copy by copy, SwitchNode::to_egress): at or below Kmin no draw
// and nothing read; above it Wred::decide on one draw, the CE mark written
// in place (IPv4 checksum right). Headers in plain memory behind an mbuf.
struct Frame {
  std::unique_ptr<rte_mbuf> m = std::make_unique<rte_mbuf>();  // (rte_mbuf cannot be a member: a zero-size array)
  std::array<uint8_t, 128> d{};
  explicit Frame(uint8_t ip_version, wire::Ecn ecn) {
    m->buf_addr = d.data();
    if (ip_version == 4) {
      auto* h = reinterpret_cast<wire::Ipv4Header*>(d.data() + 14);
      h->version_ihl = 0x45;
      h->total_length.set(100);
      h->ttl = 64;
      h->protocol = 17;
      h->set_dscp_ecn(26, ecn);
      wire::ipv4_set_checksum(*h);
    } else if (ip_version == 6) {
      auto* h = reinterpret_cast<wire::Ipv6Header*>(d.data() + 14);
      h->set_vtc_flow(0, 1);
      h->set_dscp_ecn(26, ecn);
      h->next_header = 17;
    }
  }
  QueuedPkt pkt(uint8_t ip_version) {
    QueuedPkt p = copy(1, 0, 0, 100);
    p.mbuf = m.get();
    p.ip_version = ip_version;
    p.l3_offset = 14;
    return p;
  }
  const wire::Ipv4Header& v4() const { return *reinterpret_cast<const wire::Ipv4Header*>(d.data() + 14); }
  const wire::Ipv6Header& v6() const { return *reinterpret_cast<const wire::Ipv6Header*>(d.data() + 14); }
};

WredConfig wred(bool ecn, bool drop) {
  WredConfig c;
  c.ecn = ecn;
  c.wred_drop = drop;
  c.kmin_bytes = 1000;
  c.kmax_bytes = 5000;
  c.pmax = 1.0;
  return c;
}

// A queue holding `bytes` (in packets of at most 1000 bytes).
void fill(EgressQueue& q, uint64_t bytes) {
  while (q.bytes() < bytes) q.push(copy(1, 0, 0, static_cast<uint32_t>(std::min<uint64_t>(1000, bytes - q.bytes()))), Ticket{});
}

TEST(WredEcn, NoDrawAtOrBelowKmin) {
  const Wred w(wred(true, true));
  EgressQueue q(64);
  fill(q, 1000);
  Frame f(4, wire::Ecn::kEct0);
  Rng rng(5), ref(5);
  EXPECT_EQ(wred_ecn(w, q, f.pkt(4), rng), EcnAction::kPass);
  EXPECT_EQ(rng.uniform(), ref.uniform());  // nothing drawn
  EXPECT_EQ(f.v4().ecn(), wire::Ecn::kEct0);
}

TEST(WredEcn, MarksEctDropsNotEctAboveKmax) {
  EgressQueue q(64);
  fill(q, 6000);
  Rng rng(1);
  Frame a(4, wire::Ecn::kEct0);
  EXPECT_EQ(wred_ecn(Wred(wred(true, true)), q, a.pkt(4), rng), EcnAction::kMark);
  EXPECT_EQ(a.v4().ecn(), wire::Ecn::kCe);
  EXPECT_EQ(a.v4().dscp(), 26);
  wire::Ipv4Header h = a.v4();
  wire::ipv4_set_checksum(h);
  EXPECT_EQ(h.checksum.value(), a.v4().checksum.value());
  Frame b(6, wire::Ecn::kEct1);
  EXPECT_EQ(wred_ecn(Wred(wred(true, true)), q, b.pkt(6), rng), EcnAction::kMark);
  EXPECT_EQ(b.v6().ecn(), wire::Ecn::kCe);
  Frame c(4, wire::Ecn::kNotEct);
  EXPECT_EQ(wred_ecn(Wred(wred(true, true)), q, c.pkt(4), rng), EcnAction::kDrop);
  EXPECT_EQ(wred_ecn(Wred(wred(true, false)), q, c.pkt(4), rng), EcnAction::kPass);
  EXPECT_EQ(c.v4().ecn(), wire::Ecn::kNotEct);
  Frame l2(0, wire::Ecn::kNotEct);  // no IP header to the switch: never ECT
  EXPECT_EQ(wred_ecn(Wred(wred(true, true)), q, l2.pkt(0), rng), EcnAction::kDrop);
}

TEST(WredEcn, SameDecisionAsWredOnTheSameDraws) {
  const Wred w(wred(true, true));
  Rng rng(9), ref(9);
  std::mt19937 pick(2);
  for (int i = 0; i < 2000; ++i) {
    EgressQueue q(64);
    fill(q, pick() % 7000);
    const bool ect = (pick() & 1) != 0;
    Frame f(4, ect ? wire::Ecn::kEct0 : wire::Ecn::kNotEct);
    const EcnAction want = q.bytes() <= 1000 ? EcnAction::kPass : w.decide(q.bytes(), ect, ref.uniform());
    ASSERT_EQ(wred_ecn(w, q, f.pkt(4), rng), want) << i;
    ASSERT_EQ(f.v4().ecn() == wire::Ecn::kCe, want == EcnAction::kMark) << i;
  }
  EXPECT_EQ(rng.uniform(), ref.uniform());
}

}  // namespace
}  // namespace sf::sw
