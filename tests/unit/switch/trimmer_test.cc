// Packet trimming as a component (switch/pipeline/trimmer.h) on its own: the
// cut of a frame in real mbufs (single segment and chains), the trim queue
// (fixed and "dynamic"), what is not trimmable (nothing changed), and the
// ticket split of sharded trimming. No SwitchNode.
#include "switch/pipeline/trimmer.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "tests/support/eal_env.h"
#include "tests/support/mbuf_chain.h"
#include "tests/support/roce_frame.h"
#include "tests/unit/switch/switch_node_fixture.h"

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

// "dynamic" maps the trim DSCP through the ingress port's maps (the ones
// that classify every packet; SONiC: "the dscp_value is used for mapping to
// queue"), which the node passes (switch_node_trim.cc: ports_[p.in_port]):
// with two ports whose maps differ, the queue is the ingress port's, and
// the packet's own DSCP (26) plays no part.
TEST(Trimmer, DynamicQueueFollowsTheIngressPortsMaps) {
  const Trimmer t(TrimConfig{.size_bytes = 128, .dscp = 48, .dynamic_queue = true, .queue = 0});
  PortQos in_qos;   // port 1
  PortQos out_qos;  // port 2
  in_qos.dscp_to_tc[48] = 5;
  in_qos.tc_to_queue[5] = 7;
  in_qos.dscp_to_tc[26] = 3;
  in_qos.tc_to_queue[3] = 3;
  out_qos.dscp_to_tc[48] = 2;
  out_qos.tc_to_queue[2] = 1;
  for (const auto& [qos, want] : {std::pair{&in_qos, 7}, std::pair{&out_qos, 1}}) {
    rte_mbuf* m = test::make_mbuf(test::roce_frame_bytes(v4_spec(26), 512));
    QueuedPkt p = copy_of(m);
    ASSERT_TRUE(t.cut(p, *qos));
    EXPECT_EQ(p.queue, want);
    rte_pktmbuf_free(m);
  }
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

// A chain whose first segment ends inside a header (Ethernet, IP, UDP, BTH,
// RETH, or right at a boundary) is trimmed exactly as the same frame in one
// segment: same bytes out (DSCP, IP total length, IPv4 checksum, UDP length,
// UDP checksum 0, BTH kept), whatever the split; the chain adds up.
TEST(Trimmer, ChainSplitInsideTheHeadersTrimsLikeOneSegment) {
  const Trimmer t(TrimConfig{.size_bytes = 128, .dscp = 11, .dynamic_queue = false, .queue = 6});
  const std::vector<uint8_t> bytes = test::roce_frame_bytes(v4_spec(), 1024);
  std::vector<uint8_t> want;
  {
    QueuedPkt p = copy_of(test::make_mbuf(bytes));
    ASSERT_TRUE(t.cut(p, PortQos{}));
    want = test::take_bytes(p.mbuf);
  }
  ASSERT_EQ(want.size(), 128u);
  const wire::FrameInfo wf = wire::parse_frame(want);
  ASSERT_NE(wf.udp, nullptr);
  EXPECT_EQ(wf.udp->length.value(), 128u - 34u);
  EXPECT_EQ(wf.ipv4->total_length.value(), 128u - 14u);
  // Eth 0..13, IPv4 14..33, UDP 34..41, BTH 42..53, RETH 54..69.
  for (uint16_t split : {1, 6, 13, 14, 20, 33, 34, 36, 40, 41, 42, 47, 53, 54, 60, 69, 70}) {
    SCOPED_TRACE(split);
    rte_mbuf* m = test::make_mbuf(bytes, split);
    ASSERT_EQ(m->data_len, split);
    QueuedPkt p = copy_of(m);
    if (!t.cut(p, PortQos{})) {
      ADD_FAILURE() << "not trimmed";
      rte_pktmbuf_free(m);
      continue;
    }
    EXPECT_EQ(p.queue, 6);
    EXPECT_EQ(p.bytes, 128u);
    uint32_t sum = 0;
    for (const rte_mbuf* s = m; s != nullptr; s = s->next) sum += s->data_len;
    EXPECT_EQ(sum, m->pkt_len);
    const std::vector<uint8_t> got = test::take_bytes(m);
    const wire::FrameInfo gf = wire::parse_frame(got);
    ASSERT_NE(gf.udp, nullptr);
    EXPECT_EQ(gf.udp->length.value(), 128u - 34u);
    EXPECT_EQ(gf.udp->checksum.value(), 0u);
    EXPECT_EQ(got, want);
  }
}

// Not trimmable: the copy and its bytes stay as they were.
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

// The same through a SwitchNode, with ports whose maps differ: queue 0 of
// Ethernet8 trims (4 KB), SWITCH_TRIMMING queue_index "dynamic", DSCP 48.
// Ethernet0 (ingress) maps TC 6 -> queue `in_q`, Ethernet8 (egress) maps
// TC 6 -> queue 5 (DSCP 48 -> TC 6 on both: the default class selector).
// Expect: the 7 trimmed packets on queue `in_q` of Ethernet8, none on 5.
class TrimQueueNodeTest : public SwitchNodeFixture {
 protected:
  void make_with(const std::string& in_q) {
    make(R"({"PORT": {"Ethernet0": {"devargs": "a", "speed": 100},
        "Ethernet4": {"devargs": "b", "speed": 100}, "Ethernet8": {"devargs": "c", "speed": 100}},
      "BUFFER_POOL": {"ip": {"type": "ingress", "mode": "static", "size": "1MiB"},
                      "ep": {"type": "egress", "mode": "static", "size": "1MiB"}},
      "BUFFER_PROFILE": {"lossy": {"pool": "ip", "size": "0", "static_th": "1MiB"},
                         "q": {"pool": "ep", "size": "0", "static_th": "1MiB"},
                         "q_trim": {"pool": "ep", "size": "0", "static_th": "4000", "packet_discard_action": "trim"}},
      "BUFFER_PG": {"Ethernet0,Ethernet4,Ethernet8|0-7": {"profile": "lossy"}},
      "BUFFER_QUEUE": {"Ethernet0,Ethernet4,Ethernet8|0-7": {"profile": "q"}, "Ethernet8|0": {"profile": "q_trim"}},
      "TC_TO_QUEUE_MAP": {"in": {"0": "0", "6": ")" + in_q + R"("}, "eg": {"0": "0", "6": "5"}},
      "PORT_QOS_MAP": {"Ethernet0": {"tc_to_queue_map": "in"}, "Ethernet8": {"tc_to_queue_map": "eg"}},
      "SWITCH_TRIMMING": {"GLOBAL": {"size": "128", "dscp_value": "48", "queue_index": "dynamic"}}})");
    rx(2, frame(v4(kHostA, kHostC)), TimeNs(0));
    rx(0, frame(v4(kHostC, kHostA)), TimeNs(0));
    for (uint16_t p = 0; p < 3; ++p) drain(p, TimeNs(0));
  }
};

TEST_F(TrimQueueNodeTest, DynamicQueueIsTheIngressPortsQueue) {
  for (const auto& [in_q, want] : {std::pair{"6", 6}, std::pair{"4", 4}}) {
    SCOPED_TRACE(in_q);
    make_with(in_q);
    for (int i = 0; i < 10; ++i) rx(0, frame(v4(kHostC, kHostA, 2, 0), 1024), TimeNs(100));
    EXPECT_EQ(node_->counters(2).trimmed, 7u);
    EXPECT_EQ(node_->queue_packets(2, want), 7u);
    EXPECT_EQ(node_->queue_packets(2, 5), 0u);
    drain(2, TimeNs(200));
    node_.reset();
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
