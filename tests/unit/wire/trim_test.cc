// Packet trimming: headers intact, lengths and checksums fixed, DSCP rewritten,
// ICRC no longer valid (the receiver must classify a trim by DSCP / length).
#include "common/wire/trim.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/icrc.h"
#include "common/wire/srv6.h"

namespace sf::wire {
namespace {

std::vector<uint8_t> write_frame(L3Spec l3, size_t payload) {
  RoceFrameSpec s;
  s.l3 = l3;
  s.bth.opcode = Opcode::kRcWriteOnly;
  s.ext.reth_dma_length = static_cast<uint32_t>(payload);
  std::vector<uint8_t> buf(payload + 200);
  const auto r = build_roce_frame(buf, s, std::vector<uint8_t>(payload, 0xAB));
  EXPECT_TRUE(r.ok());
  buf.resize(r.frame_bytes);
  return buf;
}

Ipv4Spec v4() {
  Ipv4Spec ip;
  ip.dscp = 26;
  ip.ecn = Ecn::kEct0;
  return ip;
}

// 1. IPv4 WRITE of 4 KiB trimmed to 128 B: lengths and checksum consistent,
// DSCP rewritten, ECN kept, BTH/RETH untouched, ICRC now bad.
TEST(Trim, Ipv4WriteTo128) {
  std::vector<uint8_t> fr = write_frame(v4(), 4096);
  const FrameInfo f = parse_frame(fr);
  ASSERT_TRUE(f.ok());
  const uint32_t psn = f.bth->psn.value();
  const TrimResult r = trim_frame(fr, f, 128, 11);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.cut);
  EXPECT_EQ(r.frame_bytes, 128u);
  fr.resize(r.frame_bytes);
  const FrameInfo t = parse_frame(fr);
  ASSERT_TRUE(t.ok()) << to_string(t.reason);  // IP checksum verified by the parser
  EXPECT_EQ(t.ipv4->total_length.value(), 128u - 14);
  EXPECT_EQ(t.udp->length.value(), 128u - 34);
  EXPECT_EQ(t.ipv4->dscp(), 11);
  EXPECT_EQ(t.ipv4->ecn(), Ecn::kEct0);
  EXPECT_EQ(t.bth->psn.value(), psn);
  EXPECT_EQ(t.reth->dma_length.value(), 4096u);
  EXPECT_EQ(icrc_verify(fr, t), IcrcStatus::kBad);
}

// 2. A size below the headers keeps exactly the headers; a short frame is only
// remarked.
TEST(Trim, NeverCutsIntoHeadersAndShortFramesStayWhole) {
  std::vector<uint8_t> fr = write_frame(v4(), 1000);
  FrameInfo f = parse_frame(fr);
  const uint32_t hdr = trim_header_end(f);
  EXPECT_EQ(hdr, 14u + 20 + 8 + 12 + 16);
  TrimResult r = trim_frame(fr, f, 16, 11);
  EXPECT_EQ(r.frame_bytes, hdr);
  fr.resize(r.frame_bytes);
  EXPECT_EQ(parse_frame(fr).ipv4->total_length.value(), hdr - 14);

  std::vector<uint8_t> small = write_frame(v4(), 16);
  f = parse_frame(small);
  r = trim_frame(small, f, 256, 11);
  EXPECT_FALSE(r.cut);
  EXPECT_EQ(r.frame_bytes, small.size());
  EXPECT_EQ(parse_frame(small).ipv4->dscp(), 11);
}

// 3. IPv6 and SRv6 (IPv6-in-IPv6): payload lengths of every header follow.
TEST(Trim, Ipv6AndSrv6Lengths) {
  Ipv6Spec ip6;
  ip6.dscp = 26;
  std::vector<uint8_t> fr = write_frame(ip6, 2000);
  TrimResult r = trim_frame(fr, parse_frame(fr), 200, 11);
  fr.resize(r.frame_bytes);
  FrameInfo t = parse_frame(fr);
  ASSERT_TRUE(t.ok()) << to_string(t.reason);
  EXPECT_EQ(t.ipv6->payload_length.value(), 200u - 14 - 40);
  EXPECT_EQ(t.ipv6->dscp(), 11);

  Srv6Spec sr;
  const uint8_t block[4] = {0xfc, 0xbb, 0xbb, 0xbb};
  const uint16_t usids[2] = {0x100, 0x200};
  ASSERT_TRUE(make_usid_address(sr.outer.dst, block, usids));
  fr = write_frame(sr, 2000);
  r = trim_frame(fr, parse_frame(fr), 200, 11);
  fr.resize(r.frame_bytes);
  t = parse_frame(fr);
  ASSERT_TRUE(t.ok()) << to_string(t.reason);
  EXPECT_EQ(t.outer_ipv6->payload_length.value(), 200u - 14 - 40);
  EXPECT_EQ(t.ipv6->payload_length.value(), 200u - 14 - 80);
  EXPECT_EQ(t.outer_ipv6->dscp(), 11);
  EXPECT_EQ(t.ipv6->dscp(), 11);
}

// 4. Non-IP frames are refused, untouched.
TEST(Trim, NonIpRefused) {
  std::vector<uint8_t> fr(60, 0);
  fr[12] = 0x88;
  fr[13] = 0xB5;
  const FrameInfo f = parse_frame(fr);
  EXPECT_EQ(trim_frame(fr, f, 32, 11).refusal, TrimRefusal::kNotIp);
}

}  // namespace
}  // namespace sf::wire
