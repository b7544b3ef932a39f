// ICRC: known vector (Mellanox CNP example, bytes cross-checked with scapy and
// zlib), masking rules for IPv4 and IPv6, incremental == one-shot.
#include <gtest/gtest.h>

#include <isa-l/crc.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include "common/wire/icrc.h"
#include "tests/unit/wire/mrc_test_util.h"
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

// xor_udp_sport(): a begin_prefix() state saved with one UDP source port,
// moved to another by the ports' XOR (the MRC header cache: one saved state
// per kind of header, the entropy value's port put in per packet), then
// continued over the rest of the frame. Random MRC data frames (op, PSN,
// METH, RETH, payload length and bytes, DSCP / ECN / TTL, addresses, flow
// label) and random port pairs, IPv4 / IPv6 / SRv6 (the ICRC covers the
// inner header), under each CRC implementation. Expect: the ICRC of the
// frame with the new port computed from scratch (icrc_compute), every time;
// a port changed twice (a -> b -> c) the same as a -> c.
TEST(WireIcrc, SportDeltaMatchesFullComputation) {
  std::mt19937_64 rng(0x1C3C5EEDu);
  auto r8 = [&] { return static_cast<uint8_t>(rng()); };
  const MrcOp ops[] = {MrcOp::kWriteFirst, MrcOp::kWriteMiddle, MrcOp::kWriteLast, MrcOp::kWriteOnly,
                       MrcOp::kWriteLastImm, MrcOp::kWriteOnlyImm};
  int checked = 0;
  for (const Crc32Impl impl : {Crc32Impl::kIsal, Crc32Impl::kVpclmul}) {
    if (!crc32_select_impl(impl)) continue;
    for (int l3i = 0; l3i < 3; ++l3i) {
      for (int round = 0; round < 200; ++round) {
        MrcFrameSpec s = test::sample_mrc(ops[rng() % std::size(ops)],
                                          l3i == 0 ? L3Spec{test::sample_v4()}
                                                   : l3i == 1 ? L3Spec{test::sample_v6()} : L3Spec{test::sample_srv6()});
        if (auto* v4 = std::get_if<Ipv4Spec>(&s.l3)) {
          v4->src.bytes[3] = r8();
          v4->dst.bytes[2] = r8();
          v4->dscp = r8() & 63;
          v4->ttl = r8();
          v4->id = static_cast<uint16_t>(rng());
        } else if (auto* v6 = std::get_if<Ipv6Spec>(&s.l3)) {
          v6->src.bytes[7] = r8();
          v6->flow_label = static_cast<uint32_t>(rng()) & 0xFFFFF;
          v6->hop_limit = r8();
        } else {
          auto& sr = std::get<Srv6Spec>(s.l3);
          sr.inner.dst.bytes[9] = r8();
          sr.inner.flow_label = sr.outer.flow_label = static_cast<uint32_t>(rng()) & 0xFFFFF;
        }
        s.bth.dest_qp = static_cast<uint32_t>(rng()) & 0xFFFFFF;
        s.bth.psn = Psn(static_cast<uint32_t>(rng()));
        s.bth.se = (rng() & 1) != 0;
        s.meth.msn = static_cast<uint32_t>(rng());
        s.meth.ev = static_cast<uint32_t>(rng());
        s.meth.tx_ts = static_cast<uint32_t>(rng());
        s.reth_rkey = static_cast<uint32_t>(rng());
        const uint16_t port_a = static_cast<uint16_t>(rng());
        const uint16_t port_b = round % 4 == 0 ? static_cast<uint16_t>(0xC000u | (rng() & 0x3FFF)) : static_cast<uint16_t>(rng());
        const uint16_t port_c = static_cast<uint16_t>(rng());
        const std::size_t payload = rng() % 5000;
        s.udp_src_port = port_a;
        auto fa = test::build_mrc(s, payload);
        ASSERT_FALSE(fa.empty());
        for (std::size_t i = 0; i < payload; ++i) fa[fa.size() - 4 - ((payload + 3) & ~std::size_t{3}) + i] = r8();
        const FrameInfo fi = parse_frame(fa, ParseOptions{.verify_ipv4_checksum = false});
        ASSERT_TRUE(fi.ok()) << to_string(fi.reason);
        const IcrcLayout l = icrc_layout(fi);
        const std::size_t sport_off = fi.ip_offset + l.ip_header_bytes;
        ASSERT_EQ(fa[sport_off] << 8 | fa[sport_off + 1], port_a);
        // The same frame with port b (c), from scratch.
        auto with_port = [&](uint16_t p) {
          auto g = fa;
          g[sport_off] = static_cast<uint8_t>(p >> 8);
          g[sport_off + 1] = static_cast<uint8_t>(p);
          return icrc_compute(g, fi);
        };
        IcrcAccumulator saved;
        ASSERT_TRUE(saved.begin_prefix(std::span<const uint8_t>(fa).subspan(fi.ip_offset, l.constant_bytes()), l));
        auto finish = [&](IcrcAccumulator acc) {
          const std::size_t from = fi.ip_offset + l.constant_bytes();
          acc.update(std::span<const uint8_t>(fa.data() + from, fi.icrc_offset - from));
          return acc.value();
        };
        IcrcAccumulator ab = saved;
        ab.xor_udp_sport(static_cast<uint16_t>(port_a ^ port_b));
        EXPECT_EQ(finish(ab), with_port(port_b)) << to_string(impl) << " l3 " << l3i << " round " << round;
        IcrcAccumulator abc = ab;
        abc.xor_udp_sport(static_cast<uint16_t>(port_b ^ port_c));
        IcrcAccumulator ac = saved;
        ac.xor_udp_sport(static_cast<uint16_t>(port_a ^ port_c));
        EXPECT_EQ(finish(abc), with_port(port_c));
        EXPECT_EQ(finish(ac), with_port(port_c));
        IcrcAccumulator aa = saved;
        aa.xor_udp_sport(0);
        EXPECT_EQ(finish(aa), icrc_compute(fa, fi));
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, crc32_impl_supported(Crc32Impl::kVpclmul) ? 1200 : 600);
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
