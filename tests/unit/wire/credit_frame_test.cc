// Credit update frame (docs/wire-formats.md "Credit update frame"): the byte
// layout written out by hand (no scapy: tshark has no dissector for ours),
// the builder against it, and every parser rejection with its reason.
#include "common/wire/credit_frame.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace sf::wire {
namespace {

const MacAddr kSrc{{0x02, 0x53, 0x46, 0x00, 0x00, 0x07}};

std::vector<uint8_t> build(std::span<const CreditGrant> g) {
  std::vector<uint8_t> b(kCreditFrameMaxBytes + 8, 0xEE);
  const size_t n = build_credit_frame(b, kSrc, g);
  b.resize(n);
  return b;
}

// 1. Two grants: the exact bytes of docs/wire-formats.md, padded to 60.
TEST(CreditFrame, ByteLayout) {
  const std::array<CreditGrant, 2> g{{{0, 0x00000102}, {15, 0xA1B2C3D4}}};
  const std::vector<uint8_t> b = build(g);
  const std::vector<uint8_t> want = {
      0x03, 0x53, 0x46, 0x43, 0x46, 0x00,  // DA (locally administered group)
      0x02, 0x53, 0x46, 0x00, 0x00, 0x07,  // SA
      0x88, 0xB5,                          // EtherType: local experimental 1
      0x01, 0x01, 0x02, 0x00,              // version 1, opcode update, count 2, reserved
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02,  // VL 0, granted 258
      0x0F, 0x00, 0x00, 0x00, 0xA1, 0xB2, 0xC3, 0xD4,  // VL 15, granted 0xA1B2C3D4
  };
  ASSERT_EQ(b.size(), 60u);
  EXPECT_TRUE(std::equal(want.begin(), want.end(), b.begin()));
  for (size_t i = want.size(); i < b.size(); ++i) EXPECT_EQ(b[i], 0) << "pad byte " << i;
  // Named offsets agree with the layout.
  EXPECT_EQ(EthHeader::kSize + CreditUpdateHeader::kOffCount, 16u);
  EXPECT_EQ(EthHeader::kSize + CreditUpdateHeader::kSize + CreditEntry::kSize + CreditEntry::kOffGranted, 30u);
}

// 2. Round trip with 16 entries: 146 bytes, no pad; the parser returns them.
TEST(CreditFrame, SixteenEntriesRoundTrip) {
  std::array<CreditGrant, 16> g{};
  for (uint8_t v = 0; v < 16; ++v) g[v] = {v, 1000u * v + 7};
  const std::vector<uint8_t> b = build(g);
  ASSERT_EQ(b.size(), kCreditFrameMaxBytes);
  const CreditFrameInfo fi = parse_credit_frame(b);
  ASSERT_TRUE(fi.ok()) << to_string(fi.reason);
  ASSERT_EQ(fi.entries.size(), 16u);
  for (uint8_t v = 0; v < 16; ++v) {
    EXPECT_EQ(fi.entries[v].vl, v);
    EXPECT_EQ(fi.entries[v].granted_total.value(), 1000u * v + 7);
  }
}

// 3. The builder refuses what it cannot write: no grants, 17 grants, VL 16,
// a short buffer.
TEST(CreditFrame, BuilderRefusals) {
  std::vector<uint8_t> b(200);
  EXPECT_EQ(build_credit_frame(b, kSrc, {}), 0u);
  std::array<CreditGrant, 17> many{};
  EXPECT_EQ(build_credit_frame(b, kSrc, many), 0u);
  const std::array<CreditGrant, 1> bad_vl{{{16, 1}}};
  EXPECT_EQ(build_credit_frame(b, kSrc, bad_vl), 0u);
  const std::array<CreditGrant, 1> one{{{1, 1}}};
  std::vector<uint8_t> small(59);
  EXPECT_EQ(build_credit_frame(small, kSrc, one), 0u);
}

// 4. Rejections, each with its reason: every truncation point, wrong
// EtherType, VLAN tag in front, bad version, unknown opcode, count 0 / 17,
// a VL byte over 15.
TEST(CreditFrame, ParserReasons) {
  const std::array<CreditGrant, 3> g{{{0, 1}, {1, 2}, {2, 3}}};
  const std::vector<uint8_t> good = build(g);
  ASSERT_TRUE(parse_credit_frame(good).ok());
  // Entries end at 14 + 4 + 24 = 42: any shorter frame is truncated.
  for (size_t len = 0; len < 42; ++len) {
    const CreditFrameInfo fi = parse_credit_frame({good.data(), len});
    EXPECT_EQ(fi.reason, CreditParseReason::kTruncated) << len;
    EXPECT_TRUE(fi.entries.empty());
  }
  EXPECT_TRUE(parse_credit_frame({good.data(), 42}).ok());  // the pad is optional for the parser

  auto with = [&](size_t off, uint8_t v) {
    std::vector<uint8_t> b = good;
    b[off] = v;
    return parse_credit_frame(b).reason;
  };
  EXPECT_EQ(with(12, 0x08), CreditParseReason::kNotCreditFrame);
  EXPECT_EQ(with(5, 0x01), CreditParseReason::kNotCreditFrame);  // another DA: e.g. sf-pktio's 0x88B5 frames
  EXPECT_EQ(with(14, 0), CreditParseReason::kBadVersion);
  EXPECT_EQ(with(14, 2), CreditParseReason::kBadVersion);
  EXPECT_EQ(with(15, 0x02), CreditParseReason::kUnknownOpcode);
  EXPECT_EQ(with(16, 0), CreditParseReason::kBadCount);
  EXPECT_EQ(with(16, 17), CreditParseReason::kBadCount);
  EXPECT_EQ(with(16, 6), CreditParseReason::kTruncated);  // 6 entries claimed, 60-byte frame
  EXPECT_EQ(with(18 + 8, 0x10), CreditParseReason::kBadVl);
  EXPECT_TRUE(parse_credit_frame([&] { auto b = good; b[17] = 0xFF; b[19] = 0xFF; return b; }()).ok())
      << "reserved bytes are ignored";

  std::vector<uint8_t> tagged(good.begin(), good.begin() + 12);
  for (uint8_t v : {0x81, 0x00, 0x60, 0x00}) tagged.push_back(v);
  tagged.insert(tagged.end(), good.begin() + 12, good.end());
  EXPECT_EQ(parse_credit_frame(tagged).reason, CreditParseReason::kNotCreditFrame);
  for (int r = 0; r < static_cast<int>(CreditParseReason::kCount); ++r) {
    EXPECT_NE(to_string(static_cast<CreditParseReason>(r)), "unknown");
  }
}

}  // namespace
}  // namespace sf::wire
