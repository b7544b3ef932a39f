// parse_frame(): round trips of every opcode over IPv4 / IPv6 / SRv6 / VLAN,
// MAC Control, and every rejection reason on truncated or malformed input.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>

#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "tests/unit/wire/wire_test_util.h"

namespace sf::wire {
namespace {

using test::build;
using test::sample_spec;

using test::kAllOpcodes;

void expect_fields(const FrameInfo& fi, const RoceFrameSpec& s, std::size_t payload_bytes) {
  ASSERT_TRUE(fi.ok()) << to_string(fi.reason);
  EXPECT_EQ(fi.kind, FrameKind::kRoce);
  EXPECT_EQ(fi.udp->src_port.value(), s.udp_src_port);
  EXPECT_EQ(fi.udp->dst_port.value(), kRoceUdpPort);
  EXPECT_EQ(fi.udp->checksum.value(), 0);
  EXPECT_EQ(fi.bth->opcode, static_cast<uint8_t>(s.bth.opcode));
  const auto layout = *opcode_layout(fi.bth->opcode);
  EXPECT_EQ(fi.bth->dest_qp.value(), s.bth.dest_qp);
  EXPECT_EQ(fi.bth->get_psn(), s.bth.psn);
  EXPECT_EQ(fi.bth->ack_requested(), s.bth.ack_req);
  EXPECT_EQ(fi.bth->se(), s.bth.se);
  EXPECT_EQ(fi.bth->becn(), s.bth.becn);
  EXPECT_EQ(fi.payload_bytes, layout.payload ? payload_bytes : 0u);
  EXPECT_EQ((fi.payload_bytes + fi.pad_bytes) % 4, 0u);
  EXPECT_EQ(fi.bth->pad_count(), fi.pad_bytes);
  EXPECT_EQ(fi.reth != nullptr, layout.reth);
  EXPECT_EQ(fi.aeth != nullptr, layout.aeth);
  EXPECT_EQ(fi.immdt != nullptr, layout.immdt);
  EXPECT_EQ(fi.ieth != nullptr, layout.ieth);
  EXPECT_EQ(fi.deth != nullptr, layout.deth);
  EXPECT_EQ(fi.atomic_eth != nullptr, layout.atomic_eth);
  EXPECT_EQ(fi.atomic_ack_eth != nullptr, layout.atomic_ack_eth);
  if (fi.reth) {
    EXPECT_EQ(fi.reth->va.value(), s.ext.reth_va);
    EXPECT_EQ(fi.reth->rkey.value(), s.ext.reth_rkey);
    EXPECT_EQ(fi.reth->dma_length.value(), s.ext.reth_dma_length);
  }
  if (fi.aeth) {
    EXPECT_EQ(fi.aeth->syndrome, s.ext.aeth_syndrome);
    EXPECT_EQ(fi.aeth->msn.value(), s.ext.aeth_msn);
  }
  if (fi.immdt) {
    EXPECT_EQ(fi.immdt->imm.value(), s.ext.immdt);
  }
  if (fi.ieth) {
    EXPECT_EQ(fi.ieth->rkey.value(), s.ext.ieth_rkey);
  }
  if (fi.deth) {
    EXPECT_EQ(fi.deth->src_qp.value(), s.ext.deth_src_qp);
  }
  if (fi.atomic_eth) {
    EXPECT_EQ(fi.atomic_eth->compare.value(), s.ext.atomic_compare);
  }
  if (fi.atomic_ack_eth) {
    EXPECT_EQ(fi.atomic_ack_eth->orig.value(), s.ext.atomic_ack_orig);
  }
}

TEST(WireFrameParser, EveryOpcodeEveryL3RoundTrips) {
  const L3Spec l3s[] = {test::sample_v4(), test::sample_v6(), test::sample_srv6()};
  for (const auto& l3 : l3s) {
    for (Opcode op : kAllOpcodes) {
      for (std::size_t n : {0u, 1u, 3u, 4u, 257u}) {
        auto s = sample_spec(op, l3);
        if (!opcode_layout(static_cast<uint8_t>(op))->payload && n != 0) continue;
        const auto f = build(s, n);
        ASSERT_FALSE(f.empty());
        const FrameInfo fi = parse_frame(f);
        SCOPED_TRACE(std::string(to_string(op)) + " l3=" + std::to_string(l3.index()) + " n=" + std::to_string(n));
        expect_fields(fi, s, n);
        EXPECT_EQ(icrc_verify(f, fi), IcrcStatus::kOk);
        EXPECT_EQ(fi.icrc_offset + kIcrcBytes, f.size());
      }
    }
  }
}

TEST(WireFrameParser, Ipv4Fields) {
  auto s = sample_spec(Opcode::kRcSendOnly);
  s.l2.vlan = VlanSpec{3, true, 100};
  const auto f = build(s, 10);
  const FrameInfo fi = parse_frame(f);
  ASSERT_TRUE(fi.ok());
  ASSERT_NE(fi.vlan, nullptr);
  EXPECT_EQ(fi.vlan->pcp(), 3);
  EXPECT_TRUE(fi.vlan->dei());
  EXPECT_EQ(fi.vlan->vid(), 100);
  EXPECT_EQ(fi.ether_type, kEtherTypeIpv4);
  EXPECT_EQ(fi.l3_offset, 18u);
  EXPECT_EQ(fi.ip_version, IpVersion::kV4);
  EXPECT_EQ(fi.ipv4->dscp(), 26);
  EXPECT_EQ(fi.ipv4->ecn(), Ecn::kEct0);
  EXPECT_EQ(fi.ipv4->ttl, 63);
  EXPECT_EQ(fi.ipv4->id.value(), 0x1234);
  EXPECT_EQ(fi.ipv4->flags_frag.value(), Ipv4Header::kFlagDf);
  EXPECT_EQ(fi.ipv4->total_length.value(), f.size() - 18);
  EXPECT_EQ(fi.udp->length.value(), f.size() - 38);
  EXPECT_EQ(fi.ipv4->src, test::ip4(1));
  EXPECT_EQ(fi.eth->src, test::mac(1));
}

TEST(WireFrameParser, Ipv6AndSrv6Fields) {
  const auto f6 = build(sample_spec(Opcode::kRcSendOnly, test::sample_v6()), 10);
  FrameInfo fi = parse_frame(f6);
  ASSERT_TRUE(fi.ok());
  EXPECT_EQ(fi.ip_version, IpVersion::kV6);
  EXPECT_EQ(fi.outer_ipv6, nullptr);
  EXPECT_EQ(fi.ipv6->flow_label(), 0xABCDEu);
  EXPECT_EQ(fi.ipv6->dscp(), 26);
  EXPECT_EQ(fi.ipv6->ecn(), Ecn::kEct1);
  EXPECT_EQ(fi.ipv6->hop_limit, 17);
  EXPECT_EQ(fi.ipv6->payload_length.value(), f6.size() - 54);

  const auto fs = build(sample_spec(Opcode::kRcSendOnly, test::sample_srv6()), 10);
  fi = parse_frame(fs);
  ASSERT_TRUE(fi.ok());
  ASSERT_NE(fi.outer_ipv6, nullptr);
  EXPECT_EQ(fi.outer_ipv6->next_header, kIpProtoIpv6);
  EXPECT_EQ(fi.outer_ipv6->payload_length.value(), fs.size() - 54);
  EXPECT_EQ(active_usid(fi.outer_ipv6->dst), 0x0020);
  EXPECT_EQ(fi.ipv6->dst, test::ip6(12));
  EXPECT_EQ(fi.l3_offset, 14u);
  EXPECT_EQ(fi.ip_offset, 54u);
}

TEST(WireFrameParser, MacControl) {
  uint8_t f[60];
  build_pfc_frame(f, test::mac(7), 0x09, {100, 0, 0, 200, 0, 0, 0, 0});
  FrameInfo fi = parse_frame(f);
  ASSERT_TRUE(fi.ok());
  EXPECT_EQ(fi.kind, FrameKind::kMacControl);
  EXPECT_EQ(fi.mac_opcode, MacControlOpcode::kPfc);
  EXPECT_TRUE(fi.mac_control_dst_ok);
  EXPECT_EQ(fi.pfc->enabled_mask(), 0x09);
  EXPECT_EQ(fi.pfc->time_quanta[3].value(), 200);
  build_pause_frame(f, test::mac(7), 300);
  fi = parse_frame(f);
  ASSERT_TRUE(fi.ok());
  EXPECT_EQ(fi.mac_opcode, MacControlOpcode::kPause);
  EXPECT_EQ(fi.pause->pause_quanta.value(), 300);
  f[0] = 0x02;
  EXPECT_FALSE(parse_frame(f).mac_control_dst_ok);
  f[15] = 0x02;  // opcode 0x0002 (GATE)
  EXPECT_EQ(parse_frame(f).reason, ParseReason::kUnknownMacControlOpcode);
  EXPECT_EQ(parse_frame(std::span<const uint8_t>(f, 15)).reason, ParseReason::kTruncated);
  build_pfc_frame(f, test::mac(7), 1, {});
  EXPECT_EQ(parse_frame(std::span<const uint8_t>(f, 33)).reason, ParseReason::kTruncated);
  EXPECT_TRUE(parse_frame(std::span<const uint8_t>(f, 34)).ok());  // pad may be stripped
}

// Every truncation of a valid frame is rejected without reading past it.
TEST(WireFrameParser, EveryTruncationRejected) {
  const L3Spec l3s[] = {test::sample_v4(), test::sample_v6(), test::sample_srv6()};
  for (const auto& l3 : l3s) {
    auto s = sample_spec(Opcode::kRcWriteOnlyImm, l3);
    s.l2.vlan = VlanSpec{};
    const auto f = build(s, 9);
    for (std::size_t n = 0; n < f.size(); ++n) {
      std::vector<uint8_t> cut(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(n));  // exact-size heap copy for ASan
      const FrameInfo fi = parse_frame(cut);
      EXPECT_EQ(fi.reason, ParseReason::kTruncated) << n;
    }
  }
}

TEST(WireFrameParser, NotContiguousWhenHeadersBeyondHead) {
  const auto f = build(sample_spec(Opcode::kRcWriteOnly), 100);
  for (std::size_t head = 0; head < 14 + 20 + 8 + 12 + 16; ++head) {
    const FrameInfo fi = parse_frame(std::span<const uint8_t>(f.data(), head), static_cast<uint32_t>(f.size()));
    EXPECT_EQ(fi.reason, ParseReason::kNotContiguous) << head;
  }
  const FrameInfo fi = parse_frame(std::span<const uint8_t>(f.data(), 70), static_cast<uint32_t>(f.size()));
  EXPECT_TRUE(fi.ok());
  EXPECT_EQ(fi.icrc_offset + 4, f.size());
}

struct Mutation {
  const char* name;
  L3Spec l3;
  std::size_t offset;  // from frame start
  uint8_t value;
  ParseReason want;
};

TEST(WireFrameParser, MalformedReasons) {
  const std::size_t ip = 14;
  const std::size_t udp4 = ip + 20, bth4 = udp4 + 8;
  const std::size_t udp6 = ip + 40, bth6 = udp6 + 8;
  const Mutation cases[] = {
      {"ethertype", test::sample_v4(), 12, 0x90, ParseReason::kUnsupportedEtherType},
      {"v4 version", test::sample_v4(), ip, 0x55, ParseReason::kBadVersion},
      {"v4 ihl", test::sample_v4(), ip, 0x44, ParseReason::kBadIhl},
      {"v4 total<ihl", test::sample_v4(), ip + 3, 0x05, ParseReason::kBadLength},
      {"v4 total>frame", test::sample_v4(), ip + 2, 0x10, ParseReason::kTruncated},
      {"v4 checksum", test::sample_v4(), ip + 11, 0x00, ParseReason::kBadChecksum},
      {"v4 proto", test::sample_v4(), ip + 9, 6, ParseReason::kNotUdp},
      {"udp len<8", test::sample_v4(), udp4 + 5, 0x04, ParseReason::kBadLength},
      {"udp len>ip", test::sample_v4(), udp4 + 4, 0x10, ParseReason::kBadLength},
      {"udp port", test::sample_v4(), udp4 + 3, 0xB8, ParseReason::kNotRoce},
      {"tver", test::sample_v4(), bth4 + 1, 0x01, ParseReason::kBadTver},
      {"opcode", test::sample_v4(), bth4, 0x15, ParseReason::kUnknownOpcode},
      {"reth missing", test::sample_v4(), bth4, 0x0C, ParseReason::kBadLength},
      {"v6 version", test::sample_v6(), ip, 0x4B, ParseReason::kBadVersion},
      {"v6 next hdr", test::sample_v6(), ip + 6, 0x2B, ParseReason::kNotUdp},
      {"v6 paylen>frame", test::sample_v6(), ip + 4, 0x10, ParseReason::kTruncated},
      {"v6 tver", test::sample_v6(), bth6 + 1, 0x02, ParseReason::kBadTver},
      {"srv6 inner version", test::sample_srv6(), ip + 40, 0x4B, ParseReason::kBadVersion},
      {"srv6 inner > outer", test::sample_srv6(), ip + 40 + 5, 0xFF, ParseReason::kTruncated},
  };
  for (const auto& c : cases) {
    auto f = build(sample_spec(Opcode::kRcSendOnly, c.l3), 3);  // 3 bytes payload + 1 pad
    f[c.offset] = c.value;
    if (c.want != ParseReason::kBadChecksum && std::holds_alternative<Ipv4Spec>(c.l3) && c.offset >= ip &&
        c.offset < ip + 20 && c.want != ParseReason::kBadVersion && c.want != ParseReason::kBadIhl) {
      ipv4_set_checksum(*reinterpret_cast<Ipv4Header*>(f.data() + ip));
    }
    EXPECT_EQ(parse_frame(f).reason, c.want) << c.name << " got " << to_string(parse_frame(f).reason);
  }
  // Fragment (MF set, checksum fixed).
  auto f = build(sample_spec(Opcode::kRcSendOnly), 3);
  f[ip + 6] = 0x20;
  ipv4_set_checksum(*reinterpret_cast<Ipv4Header*>(f.data() + ip));
  EXPECT_EQ(parse_frame(f).reason, ParseReason::kFragmented);
  // Checksum skipped on request.
  auto g = build(sample_spec(Opcode::kRcSendOnly), 3);
  g[ip + 11] ^= 0xFF;
  EXPECT_TRUE(parse_frame(g, ParseOptions{.verify_ipv4_checksum = false}).ok());
  // PadCnt larger than the payload.
  auto p = build(sample_spec(Opcode::kRcSendOnly), 0);
  p[bth4 + 1] = 0x30;
  EXPECT_EQ(parse_frame(p).reason, ParseReason::kBadPad);
  // ACK carrying payload bytes.
  auto a = build(sample_spec(Opcode::kRcSendOnly), 8);
  a[bth4] = static_cast<uint8_t>(Opcode::kRcAck);
  EXPECT_EQ(parse_frame(a).reason, ParseReason::kBadLength);
  // UDP payload too short for BTH + ICRC.
  auto h = build(sample_spec(Opcode::kRcAck), 0);
  h[udp4 + 5] = 8 + 12;
  EXPECT_EQ(parse_frame(h).reason, ParseReason::kBadLength);
  // READ request truncated inside its RETH (UDP length consistent).
  auto r = build(sample_spec(Opcode::kRcReadRequest), 0);
  r[udp4 + 5] = static_cast<uint8_t>(r[udp4 + 5] - 8);
  r[ip + 3] = static_cast<uint8_t>(r[ip + 3] - 8);
  ipv4_set_checksum(*reinterpret_cast<Ipv4Header*>(r.data() + ip));
  EXPECT_EQ(parse_frame(r).reason, ParseReason::kBadLength);
  // Unknown opcode keeps the BTH for callers handling vendor opcodes.
  auto u = build(sample_spec(Opcode::kRcSendOnly), 4);
  u[bth4] = 0xE0;
  const FrameInfo ui = parse_frame(u);
  EXPECT_EQ(ui.reason, ParseReason::kUnknownOpcode);
  ASSERT_NE(ui.bth, nullptr);
  EXPECT_EQ(icrc_verify(u, ui), IcrcStatus::kBad);
}

// Forwarders stop at UDP: a frame whose RoCE layer is broken (unknown opcode,
// not port 4791) is still a sound UDP packet to them; the UDP checks remain.
TEST(WireFrameParser, StopAtUdp) {
  const std::size_t ip = 14;
  const std::size_t udp4 = ip + 20, bth4 = udp4 + 8;
  const ParseOptions stop{.verify_ipv4_checksum = true, .stop_at_udp = true};
  auto u = build(sample_spec(Opcode::kRcSendOnly), 4);
  u[bth4] = 0xE0;
  const FrameInfo fi = parse_frame(u, stop);
  EXPECT_EQ(fi.reason, ParseReason::kOk);
  EXPECT_EQ(fi.kind, FrameKind::kUnknown);
  EXPECT_EQ(fi.bth, nullptr);
  ASSERT_NE(fi.udp, nullptr);
  EXPECT_EQ(fi.udp_end, u.size());
  auto bad_len = build(sample_spec(Opcode::kRcSendOnly), 4);
  bad_len[udp4 + 5] = 0x04;
  EXPECT_EQ(parse_frame(bad_len, stop).reason, ParseReason::kBadLength);
  auto bad_csum = build(sample_spec(Opcode::kRcSendOnly), 4);
  bad_csum[ip + 11] ^= 0xFF;
  EXPECT_EQ(parse_frame(bad_csum, stop).reason, ParseReason::kBadChecksum);
}

TEST(WireFrameParser, EthernetPaddingIgnored) {
  auto f = build(sample_spec(Opcode::kRcSendOnly), 0);  // 58 bytes
  ASSERT_EQ(f.size(), 58u);
  f.resize(60, 0);
  const FrameInfo fi = parse_frame(f);
  ASSERT_TRUE(fi.ok());
  EXPECT_EQ(fi.icrc_offset, 54u);
  EXPECT_EQ(icrc_verify(f, fi), IcrcStatus::kOk);
}

TEST(WireFrameParser, ReasonNames) {
  EXPECT_STREQ(to_string(ParseReason::kOk), "ok");
  EXPECT_STREQ(to_string(ParseReason::kTruncated), "truncated");
  EXPECT_STREQ(to_string(ParseReason::kBadIhl), "bad_ihl");
  EXPECT_STREQ(to_string(ParseReason::kNotRoce), "not_roce");
  EXPECT_STREQ(to_string(ParseReason::kUnknownOpcode), "unknown_opcode");
  EXPECT_STREQ(to_string(FrameKind::kMacControl), "mac_control");
  EXPECT_STREQ(to_string(BuildError::kBufferTooSmall), "buffer_too_small");
}

TEST(WireFrameBuilder, Errors) {
  std::vector<uint8_t> out(2000);
  auto s = sample_spec(Opcode::kRcAck);
  const uint8_t pl[4] = {};
  EXPECT_EQ(build_roce_frame(out, s, pl).error, BuildError::kPayloadNotAllowed);
  s.bth.opcode = static_cast<Opcode>(0x15);
  EXPECT_EQ(build_roce_frame(out, s, {}).error, BuildError::kUnknownOpcode);
  EXPECT_EQ(roce_frame_bytes(s, 0), 0u);
  s = sample_spec(Opcode::kRcSendOnly);
  EXPECT_EQ(build_roce_frame(std::span<uint8_t>(out.data(), 60), s, test::payload(100)).error,
            BuildError::kBufferTooSmall);
  EXPECT_EQ(build_roce_frame(std::span<uint8_t>(out.data(), 20), s, {}).error, BuildError::kBufferTooSmall);
  std::vector<uint8_t> big(70000);
  EXPECT_EQ(build_roce_frame(big, s, std::span<const uint8_t>(big.data(), 65500)).error, BuildError::kTooLong);
  const auto r = build_roce_headers(out, s, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.header_bytes, 54u);
  EXPECT_EQ(r.frame_bytes, 54u + 100 + 4);
}

// detail::ipv4_ihl5_checksum_ok (the switch's and parse_fwd's check: 64-bit
// words, end-around carry, one divisibility test) against RFC 1071 word by
// word: random headers, headers made valid, and words drawn from values
// that make long carry chains (0xFFFF, 0x0000, 0x8000 ...), including the
// all-zero and all-ones headers.
TEST(WireFrameParser, Ipv4HeaderChecksumEqualsRfc1071WordByWord) {
  auto reference = [](const std::array<uint8_t, 20>& h) {
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2) sum += uint32_t{h[i]} << 8 | h[i + 1];
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return sum == 0xFFFF;
  };
  constexpr std::array<uint16_t, 8> kEdgy{0x0000, 0xFFFF, 0x8000, 0x7FFF, 0x0001, 0xFFFE, 0x00FF, 0xFF00};
  std::mt19937 rng(1071);
  int valid = 0;
  for (int it = 0; it < 400000; ++it) {
    std::array<uint8_t, 20> h{};
    const uint32_t how = it < 2 ? 3 : rng() % 3;
    for (int w = 0; w < 10; ++w) {
      uint16_t v = how == 0 ? static_cast<uint16_t>(rng()) : kEdgy[rng() % kEdgy.size()];
      if (how == 3) v = it == 0 ? 0x0000 : 0xFFFF;
      h[2 * w] = static_cast<uint8_t>(v >> 8);
      h[2 * w + 1] = static_cast<uint8_t>(v);
    }
    if (how != 3 && rng() % 2 == 0) {  // make it valid: the checksum word completes the sum
      h[10] = h[11] = 0;
      uint32_t sum = 0;
      for (int i = 0; i < 20; i += 2) sum += uint32_t{h[i]} << 8 | h[i + 1];
      while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
      const uint16_t c = static_cast<uint16_t>(~sum);
      h[10] = static_cast<uint8_t>(c >> 8);
      h[11] = static_cast<uint8_t>(c);
    }
    const bool want = reference(h);
    valid += want ? 1 : 0;
    ASSERT_EQ(detail::ipv4_ihl5_checksum_ok(h.data()), want) << "iteration " << it;
  }
  EXPECT_GT(valid, 100000);
}

}  // namespace
}  // namespace sf::wire
