// sf-pktio frame format: generator frames verify in one or many segments;
// corruption, truncation and foreign frames are told apart (suite `dpdk`).
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

}  // namespace
}  // namespace sf::pktio
