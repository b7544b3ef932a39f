// sf-pktio frame format: generator frames verify in one or many segments;
// corruption, truncation and foreign frames are told apart; the sink's
// per-flow counters and the forwarder's queue room (suite `dpdk`).
#include <gtest/gtest.h>

#include <vector>

#include "tests/support/eal_env.h"
#include "tools/sf-pktio/pktio_nodes.h"

namespace sf::pktio {
namespace {

std::vector<uint8_t> frame(uint32_t len, uint64_t seq) {
  std::vector<uint8_t> b(len);
  write_frame(b.data(), len, seq);
  return b;
}

FrameCheck check_bytes(const std::vector<uint8_t>& b, uint16_t seg, uint64_t* seq) {
  rte_mbuf* m = sf::test::make_mbuf(b, seg);
  const FrameCheck c = check_frame(m, seq);
  rte_pktmbuf_free(m);
  return c;
}

// 1. Sizes 60..4096 with many sequence numbers, in 1 segment and in 100 B
//    segments. Expect: kOk and the sequence number back.
TEST(PktioFrame, RoundTripSingleAndChained) {
  for (uint32_t len : {60u, 61u, 290u, 1500u, 4096u}) {
    for (uint64_t seq : {0ull, 1ull, 255ull, 256ull, 123456789ull}) {
      const auto b = frame(len, seq);
      uint64_t got = 0;
      EXPECT_EQ(check_bytes(b, 0, &got), FrameCheck::kOk) << len;
      EXPECT_EQ(got, seq);
      EXPECT_EQ(check_bytes(b, 100, &got), FrameCheck::kOk) << len;
    }
  }
}

// 2. One payload byte flipped in the 3rd segment. Expect: kBadPayload.
TEST(PktioFrame, CorruptionDetected) {
  auto b = frame(1000, 7);
  b[450] ^= 1;
  uint64_t seq = 0;
  EXPECT_EQ(check_bytes(b, 200, &seq), FrameCheck::kBadPayload);
}

// 3. Frame cut short. Expect: kBadLength. 4. Not ours. Expect: kForeign.
TEST(PktioFrame, TruncatedAndForeign) {
  auto b = frame(1000, 7);
  b.resize(900);
  uint64_t seq = 0;
  EXPECT_EQ(check_bytes(b, 0, &seq), FrameCheck::kBadLength);
  std::vector<uint8_t> other(64, 0);
  other[12] = 0x08;  // IPv4
  EXPECT_EQ(check_bytes(other, 0, &seq), FrameCheck::kForeign);
}

// 5. GenNode chains frames larger than the data room; SinkNode counts them.
TEST(PktioFrame, GenChainsLargeFramesSinkVerifies) {
  GenNode gen(1, sf::test::mbuf_pool(), 5000, 3);
  SinkNode sink(1);
  std::array<rte_mbuf*, 8> out{};
  const uint16_t n = gen.transmit(0, out, TimeNs::zero());
  ASSERT_EQ(n, 3);
  EXPECT_TRUE(gen.done());
  EXPECT_EQ(out[0]->nb_segs, 3);
  sink.receive(0, std::span<rte_mbuf*>(out.data(), n), TimeNs(5));
  EXPECT_EQ(sink.result(0).rx_pkts, 3u);
  EXPECT_EQ(sink.result(0).multi_seg, 3u);
  EXPECT_EQ(sink.result(0).payload_errors, 0u);
  EXPECT_EQ(sink.result(0).lost, 0u);
}

// An IPv4/UDP frame of `len` bytes from UDP source port `sport` (ihl words of IPv4 header).
std::vector<uint8_t> udp_frame(uint32_t len, uint16_t sport, uint8_t ihl = 5) {
  std::vector<uint8_t> b(len, 0);
  b[12] = 0x08;  // IPv4
  b[14] = static_cast<uint8_t>(0x40 | ihl);
  b[14 + 9] = 17;  // UDP
  const uint32_t udp = 14 + ihl * 4u;
  b[udp] = static_cast<uint8_t>(sport >> 8);
  b[udp + 1] = static_cast<uint8_t>(sport & 0xff);
  return b;
}

// 6. Per-flow counting (the lab's receivers): flow i = UDP source port base+i.
//    Frames of flows 0 and 3 (one with IPv4 options, one chained with the UDP
//    port in the 2nd segment), a port below the base, one past the table,
//    a non-UDP frame and a generator frame. Expect: flows 0 and 3 counted
//    with bytes and first/last times, the four others in flow_other, the
//    generator frame verified and not a flow.
TEST(PktioFrame, SinkCountsFlowsByUdpSourcePort) {
  constexpr uint16_t kBase = 49152;
  SinkNode sink(1, kBase);
  std::vector<std::vector<uint8_t>> frames = {
      udp_frame(1098, kBase), udp_frame(1098, kBase + 3, 7), udp_frame(60, kBase - 1),
      udp_frame(60, kBase + SinkNode::kMaxFlows), frame(200, 0)};
  frames.push_back(udp_frame(80, kBase));
  frames.back()[14 + 9] = 6;  // TCP: not a flow
  std::vector<rte_mbuf*> m;
  for (const auto& f : frames) m.push_back(sf::test::make_mbuf(f));
  m.push_back(sf::test::make_mbuf(udp_frame(1098, kBase + 3), 30));  // sport in segment 2
  sink.receive(0, std::span<rte_mbuf*>(m.data(), 3), TimeNs(100));
  sink.receive(0, std::span<rte_mbuf*>(m.data() + 3, m.size() - 3), TimeNs(250));
  EXPECT_EQ(sink.flow(0).pkts, 1u);
  EXPECT_EQ(sink.flow(0).bytes, 1098u);
  EXPECT_EQ(sink.flow(0).first_rx, TimeNs(100));
  EXPECT_EQ(sink.flow(3).pkts, 2u);
  EXPECT_EQ(sink.flow(3).bytes, 2196u);
  EXPECT_EQ(sink.flow(3).first_rx, TimeNs(100));
  EXPECT_EQ(sink.flow(3).last_rx, TimeNs(250));
  EXPECT_EQ(sink.flow_other_pkts(), 3u);  // below the base, past the table, TCP
  EXPECT_EQ(sink.result(0).rx_pkts, 7u);
  EXPECT_EQ(sink.result(0).payload_errors, 0u);
  for (uint32_t i = 0; i < SinkNode::kMaxFlows; ++i) {
    if (i != 0 && i != 3) {
      EXPECT_EQ(sink.flow(i).pkts, 0u) << i;
    }
  }
}

// 7. Without a base nothing is counted per flow.
TEST(PktioFrame, SinkWithoutBaseCountsNoFlows) {
  SinkNode sink(1);
  rte_mbuf* m = sf::test::make_mbuf(udp_frame(1098, 49152));
  sink.receive(0, std::span<rte_mbuf*>(&m, 1), TimeNs(1));
  EXPECT_EQ(sink.flow(0).pkts, 0u);
  EXPECT_EQ(sink.flow_other_pkts(), 0u);
  EXPECT_EQ(sink.result(0).foreign, 1u);
}

// 8. FwdNode::room: free slots of the queue toward a port.
TEST(PktioFrame, FwdRoomShrinksAsTheQueueFills) {
  FwdNode fwd(2, false);
  EXPECT_EQ(fwd.room(1), FwdNode::kQueuePkts);
  std::vector<rte_mbuf*> m;
  for (int i = 0; i < 5; ++i) m.push_back(sf::test::make_mbuf(udp_frame(60, 1)));
  fwd.receive(0, std::span<rte_mbuf*>(m.data(), m.size()), TimeNs(1));
  EXPECT_EQ(fwd.room(1), FwdNode::kQueuePkts - 5);
  EXPECT_EQ(fwd.room(0), FwdNode::kQueuePkts);
  std::array<rte_mbuf*, 8> out{};
  EXPECT_EQ(fwd.transmit(1, out, TimeNs(2)), 5);
  EXPECT_EQ(fwd.room(1), FwdNode::kQueuePkts);
  rte_pktmbuf_free_bulk(out.data(), 5);
}

}  // namespace
}  // namespace sf::pktio
