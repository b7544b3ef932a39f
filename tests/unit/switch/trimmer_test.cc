// Packet trimming as a component (switch/pipeline/trimmer.h) on its own: the
// cut of a frame in real mbufs (single segment and chains), the trim queue
// (fixed and "dynamic"), what is not trimmable (nothing changed), and the
// ticket split of sharded trimming. No SwitchNode.
#include "switch/pipeline/trimmer.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <random>
#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "tests/support/eal_env.h"
#include "tests/support/mbuf_chain.h"
#include "tests/support/roce_frame.h"

namespace sf::sw {
namespace {

wire::RoceFrameSpec v4_spec(uint8_t dscp = 26) {
  wire::RoceFrameSpec s;
  s.l2 = {wire::MacAddr{{0x02, 0, 0, 0, 0, 0x0B}}, wire::MacAddr{{0x02, 0, 0, 0, 0, 0x0A}}, std::nullopt};
  wire::Ipv4Spec ip;
  ip.src.bytes = {10, 0, 0, 1};
  ip.dst.bytes = {10, 1, 0, 2};
  ip.dscp = dscp;
  ip.ecn = wire::Ecn::kEct0;
  s.l3 = ip;
  s.bth.opcode = wire::Opcode::kRcWriteOnly;
  s.ext.reth_dma_length = 1024;
  return s;
}

QueuedPkt copy_of(rte_mbuf* m, uint8_t ip_version = 4) {
  QueuedPkt p;
  p.mbuf = m;
  p.in_port = 1;
  p.out_port = 2;
  p.queue = 3;
  p.pg = 3;
  p.ip_version = ip_version;
  p.l3_offset = 14;
  p.bytes = m->pkt_len;
  return p;
}

wire::FrameInfo parse(rte_mbuf* m) {
  return wire::parse_frame({rte_pktmbuf_mtod(m, const uint8_t*), m->data_len}, m->pkt_len);
}

TEST(Trimmer, CutsToTheHeadersOnTheTrimQueue) {
  const Trimmer t(TrimConfig{.size_bytes = 128, .dscp = 11, .dynamic_queue = false, .queue = 6});
  rte_mbuf* m = test::make_mbuf(test::roce_frame_bytes(v4_spec(), 1024));
  const uint32_t before = m->pkt_len;
  QueuedPkt p = copy_of(m);
  ASSERT_TRUE(t.cut(p, PortQos{}));
  EXPECT_TRUE(p.trimmed);
  EXPECT_EQ(p.queue, 6);
  EXPECT_LT(m->pkt_len, before);
  EXPECT_EQ(p.bytes, m->pkt_len);
  EXPECT_EQ(m->pkt_len, 128u);  // headers end before 128 bytes
  EXPECT_EQ(m->data_len, 128u);
  const wire::FrameInfo f = parse(m);
  ASSERT_NE(f.ipv4, nullptr);
  EXPECT_EQ(f.ipv4->dscp(), 11);
  EXPECT_EQ(f.ipv4->ecn(), wire::Ecn::kEct0);  // ECN kept
  EXPECT_EQ(f.ipv4->total_length.value(), 128u - 14u);
  EXPECT_NE(f.bth, nullptr);  // BTH kept
  rte_pktmbuf_free(m);
}

TEST(Trimmer, DynamicQueueIsTheTrimDscpsQueue) {
  const Trimmer t(TrimConfig{.size_bytes = 128, .dscp = 48, .dynamic_queue = true, .queue = 0});
  PortQos qos;
  qos.dscp_to_tc[48] = 5;
  qos.tc_to_queue[5] = 7;
  rte_mbuf* m = test::make_mbuf(test::roce_frame_bytes(v4_spec(), 512));
  QueuedPkt p = copy_of(m);
  ASSERT_TRUE(t.cut(p, qos));
  EXPECT_EQ(p.queue, 7);
  rte_pktmbuf_free(m);
}

TEST(Trimmer, ChainsLoseTheSegmentsPastTheCut) {
  const Trimmer t(TrimConfig{.size_bytes = 200, .dscp = 8, .dynamic_queue = false, .queue = 1});
  rte_mbuf* m = test::make_mbuf(test::roce_frame_bytes(v4_spec(), 1024), 128);
  ASSERT_GT(m->nb_segs, 3);
  QueuedPkt p = copy_of(m);
  ASSERT_TRUE(t.cut(p, PortQos{}));
  EXPECT_EQ(m->pkt_len, 200u);
  EXPECT_EQ(m->nb_segs, 2);
  EXPECT_EQ(rte_pktmbuf_lastseg(m)->data_len, 72u);
  EXPECT_EQ(rte_pktmbuf_lastseg(m)->next, nullptr);
  uint32_t sum = 0;
  for (const rte_mbuf* s = m; s != nullptr; s = s->next) sum += s->data_len;
  EXPECT_EQ(sum, m->pkt_len);
  rte_pktmbuf_free(m);
}

TEST(Trimmer, ShortFrameIsRemarkedNotCut) {
  const Trimmer t(TrimConfig{.size_bytes = 4000, .dscp = 9, .dynamic_queue = false, .queue = 2});
  rte_mbuf* m = test::make_mbuf(test::roce_frame_bytes(v4_spec(), 64));
  const uint32_t before = m->pkt_len;
  QueuedPkt p = copy_of(m);
  ASSERT_TRUE(t.cut(p, PortQos{}));
  EXPECT_EQ(m->pkt_len, before);
  EXPECT_EQ(parse(m).ipv4->dscp(), 9);
  EXPECT_TRUE(p.trimmed);
  rte_pktmbuf_free(m);
}

// Not trimmable: the copy and its bytes stay as they were. (A chain whose
// first segment ends inside the UDP header is trimmed today with the UDP
// length left as it was: parse_frame sees only the first segment; not
// asserted here.)
TEST(Trimmer, RefusesWithoutChangingAnything) {
  const Trimmer t(TrimConfig{.size_bytes = 128, .dscp = 11, .dynamic_queue = false, .queue = 6});
  const std::vector<uint8_t> bytes = test::roce_frame_bytes(v4_spec(), 1024);
  auto unchanged = [&](const QueuedPkt& p, const QueuedPkt& was) {
    EXPECT_EQ(p.queue, was.queue);
    EXPECT_EQ(p.bytes, was.bytes);
    EXPECT_EQ(p.trimmed, was.trimmed);
    std::vector<uint8_t> now(p.mbuf->pkt_len);
    ASSERT_EQ(now.size(), bytes.size());
    const void* d = rte_pktmbuf_read(p.mbuf, 0, p.mbuf->pkt_len, now.data());
    EXPECT_EQ(std::memcmp(d, bytes.data(), bytes.size()), 0);
  };
  {  // not IP to the switch (ip_version 0: a flooded copy, a non-IP frame)
    QueuedPkt p = copy_of(test::make_mbuf(bytes), 0);
    const QueuedPkt was = p;
    EXPECT_FALSE(t.cut(p, PortQos{}));
    unchanged(p, was);
    rte_pktmbuf_free(p.mbuf);
  }
  {  // trimmed already
    QueuedPkt p = copy_of(test::make_mbuf(bytes));
    p.trimmed = true;
    const QueuedPkt was = p;
    EXPECT_FALSE(t.cut(p, PortQos{}));
    unchanged(p, was);
    rte_pktmbuf_free(p.mbuf);
  }
  {  // shared bytes (another reference)
    QueuedPkt p = copy_of(test::make_mbuf(bytes));
    rte_pktmbuf_refcnt_update(p.mbuf, 1);
    const QueuedPkt was = p;
    EXPECT_FALSE(t.cut(p, PortQos{}));
    unchanged(p, was);
    rte_pktmbuf_free(p.mbuf);
    rte_pktmbuf_free(p.mbuf);
  }
}

TEST(Trimmer, TicketSplitKeepsReservedThenSharedThenHeadroom) {
  Ticket t;
  t.cells = 10;
  t.ing_shared = 4;
  t.ing_hdrm = 3;  // reserved 3
  t.eg_shared = 5;
  Trimmer::TicketSplit s = Trimmer::split_ticket(t, 2);
  EXPECT_EQ(s.keep.cells, 2);
  EXPECT_EQ(s.keep.ing_shared, 0);
  EXPECT_EQ(s.keep.ing_hdrm, 0);
  s = Trimmer::split_ticket(t, 5);
  EXPECT_EQ(s.keep.ing_shared, 2);
  EXPECT_EQ(s.keep.ing_hdrm, 0);
  s = Trimmer::split_ticket(t, 9);
  EXPECT_EQ(s.keep.ing_shared, 4);
  EXPECT_EQ(s.keep.ing_hdrm, 2);
  s = Trimmer::split_ticket(t, 50);  // more than the ticket: all of it
  EXPECT_EQ(s.keep.cells, 10);
  EXPECT_EQ(s.give.cells, 0);
  // Every split adds up to the ticket, part by part.
  std::mt19937 rng(3);
  for (int i = 0; i < 10000; ++i) {
    Ticket r;
    r.cells = static_cast<uint16_t>(1 + rng() % 100);
    r.ing_shared = static_cast<uint16_t>(rng() % (r.cells + 1));
    r.ing_hdrm = static_cast<uint16_t>(rng() % (r.cells - r.ing_shared + 1));
    const uint32_t want = rng() % 120;
    const Trimmer::TicketSplit x = Trimmer::split_ticket(r, want);
    ASSERT_EQ(x.keep.cells, std::min<uint32_t>(want, r.cells));
    ASSERT_EQ(x.keep.cells + x.give.cells, r.cells);
    ASSERT_EQ(x.keep.ing_shared + x.give.ing_shared, r.ing_shared);
    ASSERT_EQ(x.keep.ing_hdrm + x.give.ing_hdrm, r.ing_hdrm);
    ASSERT_LE(x.keep.ing_shared + x.keep.ing_hdrm, x.keep.cells);
    ASSERT_LE(x.give.ing_shared + x.give.ing_hdrm, x.give.cells);
    ASSERT_EQ(x.keep.eg_shared, 0);
  }
}

}  // namespace
}  // namespace sf::sw
