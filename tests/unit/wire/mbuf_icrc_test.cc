// ICRC over chained mbufs (suite dpdk): identical to the contiguous result
// for every split position, including splits inside the ICRC bytes; the
// trailer read where the walk stops detects a flip in any of its bytes.
#include <gtest/gtest.h>

#include <initializer_list>

#include "common/wire/mbuf_icrc.h"
#include "tests/support/eal_env.h"
#include "tests/unit/wire/wire_test_util.h"

namespace sf::wire {
namespace {

// A chain whose first segment is `first` bytes and the rest in `seg` chunks.
rte_mbuf* split_chain(const std::vector<uint8_t>& f, std::size_t first, uint16_t seg) {
  rte_mbuf* head = sf::test::make_mbuf(std::span<const uint8_t>(f.data(), first), 0);
  if (head == nullptr) return nullptr;
  rte_mbuf* rest = sf::test::make_mbuf(std::span<const uint8_t>(f.data() + first, f.size() - first), seg);
  if (rest == nullptr || rte_pktmbuf_chain(head, rest) != 0) {
    rte_pktmbuf_free(head);
    rte_pktmbuf_free(rest);
    return nullptr;
  }
  return head;
}

void check_all_splits(const RoceFrameSpec& spec, std::size_t payload_bytes,
                      std::initializer_list<uint16_t> segs = {1, 3, 64, 2048}) {
  const auto f = test::build(spec, payload_bytes);
  const FrameInfo whole = parse_frame(f);
  ASSERT_TRUE(whole.ok());
  const uint32_t want = icrc_compute(f, whole);
  for (std::size_t first = 1; first < f.size(); ++first) {
    for (uint16_t seg : segs) {
      rte_mbuf* m = split_chain(f, first, seg);
      ASSERT_NE(m, nullptr);
      ASSERT_EQ(m->pkt_len, f.size());
      // Parse from the whole frame when the headers are not in the first segment.
      FrameInfo fi = parse_mbuf(m);
      if (fi.reason == ParseReason::kNotContiguous) fi = whole;
      ASSERT_TRUE(fi.ok()) << first;
      EXPECT_EQ(icrc_compute_mbuf(m, fi), want) << "first=" << first << " seg=" << seg;
      EXPECT_EQ(icrc_verify_mbuf(m, fi), IcrcStatus::kOk) << first;
      // One bit of each trailer byte flipped in turn (the trailer is read
      // where the CRC walk stops, wherever the split falls). Expect: bad.
      for (std::size_t i = 0; i < 4; ++i) {
        uint32_t o = fi.icrc_offset + static_cast<uint32_t>(i);
        rte_mbuf* t = m;
        for (; o >= t->data_len; t = t->next) o -= t->data_len;
        *rte_pktmbuf_mtod_offset(t, uint8_t*, o) ^= 0x10;
        EXPECT_EQ(icrc_verify_mbuf(m, fi), IcrcStatus::kBad) << "first=" << first << " seg=" << seg << " byte " << i;
        *rte_pktmbuf_mtod_offset(t, uint8_t*, o) ^= 0x10;
      }
      // Corrupt then re-store across the (possibly split) ICRC bytes.
      uint8_t zero[4] = {};
      rte_mbuf* s = m;
      uint32_t off = fi.icrc_offset;
      for (std::size_t i = 0; i < 4; ++i) {
        uint32_t o = off + static_cast<uint32_t>(i);
        for (s = m; o >= s->data_len; s = s->next) o -= s->data_len;
        *rte_pktmbuf_mtod_offset(s, uint8_t*, o) = zero[i];
      }
      EXPECT_EQ(icrc_verify_mbuf(m, fi), IcrcStatus::kBad) << first;
      EXPECT_TRUE(icrc_store_mbuf(m, fi));
      EXPECT_EQ(icrc_verify_mbuf(m, fi), IcrcStatus::kOk) << first;
      rte_pktmbuf_free(m);
    }
  }
}

TEST(WireMbufIcrc, Ipv4EverySplit) { check_all_splits(test::sample_spec(Opcode::kRcWriteOnly), 301); }

TEST(WireMbufIcrc, Ipv6EverySplit) {
  check_all_splits(test::sample_spec(Opcode::kRcSendOnlyImm, test::sample_v6()), 130);
}

TEST(WireMbufIcrc, Srv6AndCnp) {
  check_all_splits(test::sample_spec(Opcode::kRcReadResponseOnly, test::sample_srv6()), 64);
  check_all_splits(test::sample_spec(Opcode::kCnp), 0);
}

// 4 KiB and 9000-byte payloads (an MTU data frame and a jumbo one) as they
// arrive: 2 KiB segments after a first one of every length. Expect: the
// contiguous ICRC, verify ok, bad after corruption, ok after re-store.
TEST(WireMbufIcrc, LargeFramesIn2KiBSegmentsEverySplit) {
  check_all_splits(test::sample_spec(Opcode::kRcWriteOnly), 4096, {2048});
  check_all_splits(test::sample_spec(Opcode::kRcWriteMiddle, test::sample_v6()), 4096, {2048});
  check_all_splits(test::sample_spec(Opcode::kRcWriteOnly), 9000, {2048});
}

TEST(WireMbufIcrc, MultiSegmentPayloadBuiltWithHeaders) {
  // NIC-style TX: headers in the first segment, payload appended in chunks.
  const auto spec = test::sample_spec(Opcode::kRcWriteFirst);
  const auto pl = test::payload(1000);
  std::vector<uint8_t> hdr(128);
  const auto r = build_roce_headers(hdr, spec, pl.size());
  ASSERT_TRUE(r.ok());
  std::vector<uint8_t> rest(pl);
  rest.resize(pl.size() + 4, 0);  // no pad (1000 % 4 == 0) + ICRC placeholder
  rte_mbuf* m = sf::test::make_mbuf(std::span<const uint8_t>(hdr.data(), r.header_bytes), 0);
  rte_mbuf* tail = sf::test::make_mbuf(rest, 333);
  ASSERT_EQ(rte_pktmbuf_chain(m, tail), 0);
  const FrameInfo fi = parse_mbuf(m);
  ASSERT_TRUE(fi.ok()) << to_string(fi.reason);
  EXPECT_EQ(fi.payload_bytes, 1000u);
  EXPECT_EQ(icrc_verify_mbuf(m, fi), IcrcStatus::kBad);
  ASSERT_TRUE(icrc_store_mbuf(m, fi));
  EXPECT_EQ(icrc_verify_mbuf(m, fi), IcrcStatus::kOk);
  // Same bytes as the contiguous builder.
  std::vector<uint8_t> lin(m->pkt_len);
  ASSERT_NE(rte_pktmbuf_read(m, 0, m->pkt_len, lin.data()), nullptr);
  const auto* p = static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, m->pkt_len, lin.data()));
  std::vector<uint8_t> got(p, p + m->pkt_len);
  EXPECT_EQ(got, test::build(spec, 1000));
  rte_pktmbuf_free(m);
}

TEST(WireMbufIcrc, NotRoce) {
  uint8_t pfc[60];
  build_pfc_frame(pfc, MacAddr{}, 1, {});
  rte_mbuf* m = sf::test::make_mbuf(pfc, 0);
  const FrameInfo fi = parse_mbuf(m);
  EXPECT_EQ(icrc_verify_mbuf(m, fi), IcrcStatus::kNotRoce);
  EXPECT_FALSE(icrc_store_mbuf(m, fi));
  EXPECT_EQ(icrc_compute_mbuf(m, fi), 0u);
  rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace sf::wire
