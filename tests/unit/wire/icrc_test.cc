// ICRC: known vector (Mellanox CNP example, bytes cross-checked with scapy and
// zlib), masking rules for IPv4 and IPv6, incremental == one-shot.
#include <gtest/gtest.h>

#include <isa-l/crc.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "common/wire/icrc.h"
#include "tests/unit/wire/wire_test_util.h"

namespace sf::wire {
namespace {

using test::build;
using test::sample_spec;

std::vector<uint8_t> from_hex(const std::string& h) {
  std::vector<uint8_t> v;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) v.push_back(static_cast<uint8_t>(std::stoul(h.substr(i, 2), nullptr, 16)));
  return v;
}

// Frame produced by scapy: Ether()/IP(tos=0xC2, DF)/UDP(sport=0xF000, chksum=0)/
// BTH(opcode=0x81, becn=1, dqpn=0xd2)/CNPPadding(); ICRC 0x63391F8D stored LE.
const char* kScapyCnp =
    "020000000002020000000001080045c2003c00004000401125ed0a0000010a000002f00012b7002800008100ffff400000d2"
    "00000000000000000000000000000000000000008d1f3963";

TEST(WireIcrc, PseudoLrhRegister) {
  const uint8_t ff[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  // rxe seeds the raw register with 0xDEBB20E3 = ~crc32(FF x 8).
  EXPECT_EQ(~crc32_gzip_refl(0, ff, 8), 0xDEBB20E3u);
  EXPECT_EQ(crc32_gzip_refl(0, ff, 8), 0x2144DF1Cu);  // kCrcAfterPseudoLrh in icrc.cc
}

TEST(WireIcrc, KnownVectorMellanoxCnp) {
  const auto ref = from_hex(kScapyCnp);
  ASSERT_EQ(ref.size(), 74u);
  // The BTH is the documented Mellanox example.
  const uint8_t bth[12] = {0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x00, 0xd2, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(std::memcmp(ref.data() + 42, bth, sizeof(bth)), 0);
  const FrameInfo fi = parse_frame(ref);
  ASSERT_TRUE(fi.ok()) << to_string(fi.reason);
  EXPECT_EQ(icrc_compute(ref, fi), 0x63391F8Du);
  EXPECT_EQ(icrc_verify(ref, fi), IcrcStatus::kOk);

  // Our builder produces the identical frame.
  RoceFrameSpec s = sample_spec(Opcode::kCnp);
  auto& v4 = std::get<Ipv4Spec>(s.l3);
  v4.dscp = 48;
  v4.ecn = Ecn::kEct0;
  v4.ttl = 64;
  v4.id = 0;
  s.udp_src_port = 0xF000;
  s.bth.dest_qp = 0xD2;
  std::vector<uint8_t> out(128);
  const auto r = build_cnp_frame(out, s);
  ASSERT_TRUE(r.ok());
  out.resize(r.frame_bytes);
  EXPECT_EQ(out, ref);
}

TEST(WireIcrc, IncrementalEqualsOneShot) {
  const auto f = build(sample_spec(Opcode::kRcWriteOnly), 1000);
  const FrameInfo fi = parse_frame(f);
  ASSERT_TRUE(fi.ok());
  const uint32_t whole = icrc_compute(f, fi);
  const IcrcLayout l = icrc_layout(fi);
  for (uint32_t cut = fi.ip_offset + l.masked_bytes(); cut <= fi.icrc_offset; cut += 37) {
    IcrcAccumulator acc;
    ASSERT_TRUE(acc.begin(std::span<const uint8_t>(f).subspan(fi.ip_offset), l));
    acc.update(std::span<const uint8_t>(f.data() + fi.ip_offset + l.masked_bytes(), cut - fi.ip_offset - l.masked_bytes()));
    acc.update(std::span<const uint8_t>(f.data() + cut, fi.icrc_offset - cut));
    EXPECT_EQ(acc.value(), whole) << cut;
  }
  IcrcAccumulator bad;
  EXPECT_FALSE(bad.begin(std::span<const uint8_t>(f.data(), 10), l));
  EXPECT_FALSE(bad.begin(f, IcrcLayout{}));
}

// begin_prefix() (the pseudo-LRH and the masked block up to the BTH's
// AckReq byte), copied as a saved state, then the rest in pieces of every
// size 1..20 (short pieces take ISA-L's table path), under each CRC
// implementation, IPv4 and IPv6. Expect: every copy gives the one-shot ICRC.
TEST(WireIcrc, PrefixStateCopiesContinueInAnySplit) {
  for (const Crc32Impl impl : {Crc32Impl::kIsal, Crc32Impl::kVpclmul}) {
    if (!crc32_select_impl(impl)) continue;
    for (const L3Spec& l3 : {L3Spec{test::sample_v4()}, L3Spec{test::sample_v6()}}) {
      const auto f = build(sample_spec(Opcode::kRcWriteFirst, l3), 301);
      const FrameInfo fi = parse_frame(f);
      ASSERT_TRUE(fi.ok());
      const uint32_t whole = icrc_compute(f, fi);
      const IcrcLayout l = icrc_layout(fi);
      ASSERT_EQ(l.constant_bytes() + 4, l.masked_bytes());  // AckReq + PSN end the block
      IcrcAccumulator saved;
      ASSERT_TRUE(saved.begin_prefix(std::span<const uint8_t>(f).subspan(fi.ip_offset, l.constant_bytes()), l));
      EXPECT_EQ(saved.impl(), impl);
      for (std::size_t piece = 1; piece <= 20; ++piece) {
        IcrcAccumulator acc = saved;
        for (std::size_t off = fi.ip_offset + l.constant_bytes(); off < fi.icrc_offset; off += piece) {
          acc.update(std::span<const uint8_t>(f.data() + off, std::min(piece, fi.icrc_offset - off)));
        }
        EXPECT_EQ(acc.value(), whole) << to_string(impl) << " piece " << piece;
      }
      IcrcAccumulator bad;
      EXPECT_FALSE(bad.begin_prefix(std::span<const uint8_t>(f).subspan(fi.ip_offset, l.constant_bytes() - 1), l));
    }
  }
  crc32_select_impl(crc32_best_impl());
}

// Changing a masked field keeps the ICRC; changing a covered one breaks it.
void check_masking(const L3Spec& l3, const std::vector<std::size_t>& masked_offs,
                   const std::vector<std::size_t>& covered_offs) {
  auto f = build(sample_spec(Opcode::kRcSendOnly, l3), 64);
  const FrameInfo fi = parse_frame(f, ParseOptions{.verify_ipv4_checksum = false});
  ASSERT_TRUE(fi.ok()) << to_string(fi.reason);
  ASSERT_EQ(icrc_verify(f, fi), IcrcStatus::kOk);
  for (std::size_t off : masked_offs) {
    auto g = f;
    g[off] ^= 0x5A;
    EXPECT_EQ(icrc_verify(g, parse_frame(g, ParseOptions{.verify_ipv4_checksum = false})), IcrcStatus::kOk) << off;
  }
  for (std::size_t off : covered_offs) {
    auto g = f;
    g[off] ^= 0x01;
    EXPECT_EQ(icrc_verify(g, fi), IcrcStatus::kBad) << off;  // same offsets as f
  }
}

TEST(WireIcrc, Ipv4MaskingRules) {
  const std::size_t ip = EthHeader::kSize, udp = ip + 20, bth = udp + 8;
  check_masking(test::sample_v4(),
                {ip + 1, ip + 8, ip + 10, ip + 11, udp + 6, udp + 7, bth + 4},
                {ip + 0, ip + 4, ip + 9, ip + 12, ip + 19, udp + 0, udp + 2, bth + 0, bth + 3, bth + 7, bth + 8,
                 bth + 11, bth + 12, bth + 70});
}

TEST(WireIcrc, Ipv6MaskingRules) {
  const std::size_t ip = EthHeader::kSize, udp = ip + 40, bth = udp + 8;
  auto f = build(sample_spec(Opcode::kRcSendOnly, test::sample_v6()), 64);
  // ip+0 low nibble is traffic class (masked); the version nibble is covered.
  check_masking(test::sample_v6(),
                {ip + 1, ip + 2, ip + 3, ip + 7, udp + 6, udp + 7, bth + 4},
                {ip + 4, ip + 6, ip + 8, ip + 39, udp + 0, udp + 4, bth + 0, bth + 9, bth + 12});
  const FrameInfo fi = parse_frame(f);
  auto g = f;
  g[ip] = static_cast<uint8_t>((g[ip] & 0xF0) | ((g[ip] + 3) & 0x0F));
  EXPECT_EQ(icrc_verify(g, fi), IcrcStatus::kOk);
}

TEST(WireIcrc, Srv6CoversInnerHeaderOnly) {
  auto f = build(sample_spec(Opcode::kRcSendOnly, test::sample_srv6()), 32);
  const FrameInfo fi = parse_frame(f);
  ASSERT_TRUE(fi.ok()) << to_string(fi.reason);
  EXPECT_EQ(fi.ip_offset, EthHeader::kSize + Ipv6Header::kSize);
  EXPECT_EQ(icrc_verify(f, fi), IcrcStatus::kOk);
  // A uN shift rewrites the outer DA: the ICRC still holds.
  auto* outer = const_cast<Ipv6Header*>(fi.outer_ipv6);
  usid_shift(outer->dst);
  outer->hop_limit--;
  EXPECT_EQ(icrc_verify(f, fi), IcrcStatus::kOk);
}

TEST(WireIcrc, NotRoceAndStore) {
  uint8_t pfc[60];
  build_pfc_frame(pfc, MacAddr{}, 1, {});
  const FrameInfo pi = parse_frame(pfc);
  EXPECT_EQ(icrc_verify(pfc, pi), IcrcStatus::kNotRoce);
  EXPECT_FALSE(icrc_store(pfc, pi));
  EXPECT_STREQ(to_string(IcrcStatus::kBad), "bad");
  auto f = build(sample_spec(Opcode::kRcReadRequest), 0);
  const FrameInfo fi = parse_frame(f);
  f[fi.icrc_offset] ^= 1;
  EXPECT_EQ(icrc_verify(f, fi), IcrcStatus::kBad);
  ASSERT_TRUE(icrc_store(f, fi));
  EXPECT_EQ(icrc_verify(f, fi), IcrcStatus::kOk);
}

}  // namespace
}  // namespace sf::wire
