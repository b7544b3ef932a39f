// Round trips of every header type, Psn arithmetic, IPv4 checksum, SRv6 uSIDs
// and MAC Control builders.
#include <gtest/gtest.h>

#include <cstring>

#include "common/wire/byte_order.h"
#include "common/wire/ethernet.h"
#include "common/wire/ipv4.h"
#include "common/wire/ipv6.h"
#include "common/wire/mac_control.h"
#include "common/wire/psn.h"
#include "common/wire/roce.h"
#include "common/wire/srv6.h"
#include "common/wire/udp.h"

namespace sf::wire {
namespace {

TEST(WireBigEndian, StoresNetworkOrder) {
  Be16 a(0x1234);
  Be32 b(0x11223344);
  Be64 c(0x0102030405060708ull);
  Be24 d(0xFFABCDEF);
  EXPECT_EQ(a.bytes()[0], 0x12);
  EXPECT_EQ(b.bytes()[0], 0x11);
  EXPECT_EQ(b.bytes()[3], 0x44);
  EXPECT_EQ(c.bytes()[7], 0x08);
  EXPECT_EQ(a.value(), 0x1234);
  EXPECT_EQ(b.value(), 0x11223344u);
  EXPECT_EQ(c.value(), 0x0102030405060708ull);
  EXPECT_EQ(d.value(), 0xABCDEFu);  // 24 bits kept
  static_assert(!std::is_convertible_v<uint16_t, Be16>);
  static_assert(!std::is_convertible_v<Be16, uint16_t>);
  uint8_t le[4];
  store_le32(le, 0xAABBCCDD);
  EXPECT_EQ(le[0], 0xDD);
  EXPECT_EQ(load_le32(le), 0xAABBCCDDu);
}

TEST(WirePsn, WrapsAndComparesModulo24Bits) {
  EXPECT_EQ((Psn(0xFFFFFF) + 1).value(), 0u);
  EXPECT_EQ((Psn(0) - 1).value(), 0xFFFFFFu);
  EXPECT_EQ(Psn(0x1000001).value(), 1u);
  EXPECT_EQ(Psn::diff(Psn(0), Psn(0xFFFFFF)), 1);
  EXPECT_EQ(Psn::diff(Psn(0xFFFFFF), Psn(0)), -1);
  EXPECT_TRUE(Psn(2).after(Psn(0xFFFFF0)));
  EXPECT_TRUE(Psn(0xFFFFF0) < Psn(2));
  EXPECT_TRUE(Psn(100) > Psn(99));
  EXPECT_TRUE(Psn(5) <= Psn(5));
  // Half range: a + 2^23 - 1 is after a; a + 2^23 is "before" (ambiguous edge).
  EXPECT_TRUE(Psn(10 + Psn::kHalfRange - 1).after(Psn(10)));
  EXPECT_EQ(Psn::diff(Psn(10 + Psn::kHalfRange), Psn(10)), -static_cast<int32_t>(Psn::kHalfRange));
  Psn p(0xFFFFFF);
  ++p;
  EXPECT_EQ(p.value(), 0u);
}

TEST(WireEthernet, VlanTciRoundTrip) {
  uint8_t buf[EthHeader::kSize + VlanTag::kSize] = {};
  auto* eth = reinterpret_cast<EthHeader*>(buf);
  eth->dst = kMacControlDst;
  eth->ether_type.set(kEtherTypeVlan);
  auto* tag = reinterpret_cast<VlanTag*>(buf + EthHeader::kSize);
  tag->set_tci(5, true, 0xABC);
  tag->ether_type.set(kEtherTypeIpv4);
  EXPECT_EQ(buf[12], 0x81);
  EXPECT_EQ(buf[14], (5 << 5) | 0x10 | 0x0A);
  EXPECT_EQ(buf[15], 0xBC);
  EXPECT_EQ(tag->pcp(), 5);
  EXPECT_TRUE(tag->dei());
  EXPECT_EQ(tag->vid(), 0xABC);
  tag->set_tci(7, false, 0xFFFF);
  EXPECT_EQ(tag->pcp(), 7);
  EXPECT_FALSE(tag->dei());
  EXPECT_EQ(tag->vid(), 0xFFF);
}

TEST(WireIpv4, ChecksumKnownVector) {
  // Classic example header (Wikipedia, IPv4 header checksum): checksum 0xB861.
  uint8_t h[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                   0x00, 0x00, 0xC0, 0xA8, 0x00, 0x01, 0xC0, 0xA8, 0x00, 0xC7};
  EXPECT_EQ(ipv4_checksum(h), 0xB861);
  EXPECT_FALSE(ipv4_checksum_ok(h));
  auto* ip = reinterpret_cast<Ipv4Header*>(h);
  ipv4_set_checksum(*ip);
  EXPECT_EQ(ip->checksum.value(), 0xB861);
  EXPECT_TRUE(ipv4_checksum_ok(h));
  h[8] = 0x3F;  // TTL change breaks it
  EXPECT_FALSE(ipv4_checksum_ok(h));
}

TEST(WireIpv4, FieldAccessors) {
  Ipv4Header h{};
  h.version_ihl = 0x46;
  h.set_dscp_ecn(46, Ecn::kCe);
  EXPECT_EQ(h.version(), 4);
  EXPECT_EQ(h.header_bytes(), 24u);
  EXPECT_EQ(h.tos, (46 << 2) | 3);
  EXPECT_EQ(h.dscp(), 46);
  EXPECT_EQ(h.ecn(), Ecn::kCe);
  EXPECT_STREQ(to_string(Ecn::kEct0), "ect0");
  h.flags_frag.set(Ipv4Header::kFlagDf);
  EXPECT_FALSE(h.is_fragment());
  h.flags_frag.set(Ipv4Header::kFlagMf);
  EXPECT_TRUE(h.is_fragment());
  h.flags_frag.set(3);
  EXPECT_TRUE(h.is_fragment());
}

TEST(WireIpv6, TrafficClassAndFlowLabel) {
  Ipv6Header h{};
  h.set_vtc_flow(0xB9, 0x123456);  // flow label keeps 20 bits
  EXPECT_EQ(h.version(), 6);
  EXPECT_EQ(h.traffic_class(), 0xB9);
  EXPECT_EQ(h.flow_label(), 0x23456u);
  const auto* b = reinterpret_cast<const uint8_t*>(&h);
  EXPECT_EQ(b[0], 0x6B);
  EXPECT_EQ(b[1], 0x92);
  h.set_dscp_ecn(10, Ecn::kEct0);
  EXPECT_EQ(h.dscp(), 10);
  EXPECT_EQ(h.ecn(), Ecn::kEct0);
  EXPECT_EQ(h.flow_label(), 0x23456u);
}

TEST(WireUdp, Layout) {
  UdpHeader u{};
  u.src_port.set(0xC000);
  u.dst_port.set(kRoceUdpPort);
  const auto* b = reinterpret_cast<const uint8_t*>(&u);
  EXPECT_EQ(b[2], 0x12);
  EXPECT_EQ(b[3], 0xB7);
}

TEST(WireBth, MellanoxCnpExampleDecodes) {
  const uint8_t raw[12] = {0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x00, 0xd2, 0x00, 0x00, 0x00, 0x00};
  Bth b;
  std::memcpy(&b, raw, sizeof(b));
  EXPECT_EQ(static_cast<Opcode>(b.opcode), Opcode::kCnp);
  EXPECT_STREQ(to_string(static_cast<Opcode>(b.opcode)), "CNP");
  EXPECT_EQ(b.pkey.value(), 0xFFFF);
  EXPECT_TRUE(b.becn());
  EXPECT_FALSE(b.fecn());
  EXPECT_EQ(b.dest_qp.value(), 0xD2u);
  EXPECT_EQ(b.get_psn().value(), 0u);
  EXPECT_FALSE(b.ack_requested());
  EXPECT_EQ(b.tver(), 0);
}

TEST(WireBth, SettersRoundTrip) {
  Bth b{};
  b.opcode = static_cast<uint8_t>(Opcode::kRcWriteOnlyImm);
  b.set_flags(true, true, 3);
  b.set_fecn_becn(true, false);
  b.dest_qp.set(0x1ABCDEF);
  b.set_ack_req(true);
  b.psn.set(0xFEDCBA);
  EXPECT_TRUE(b.se());
  EXPECT_TRUE(b.mig_req());
  EXPECT_EQ(b.pad_count(), 3);
  EXPECT_TRUE(b.fecn());
  EXPECT_FALSE(b.becn());
  EXPECT_EQ(b.dest_qp.value(), 0xABCDEFu);
  EXPECT_TRUE(b.ack_requested());
  EXPECT_EQ(b.get_psn(), Psn(0xFEDCBA));
  const auto* raw = reinterpret_cast<const uint8_t*>(&b);
  EXPECT_EQ(raw[1], 0xF0);
  EXPECT_EQ(raw[4], 0x80);
  EXPECT_EQ(raw[8], 0x80);
}

TEST(WireExtHeaders, RoundTrips) {
  Reth r{};
  r.va.set(0x1122334455667788ull);
  r.rkey.set(0xAABBCCDD);
  r.dma_length.set(65536);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(&r)[0], 0x11);
  EXPECT_EQ(r.va.value(), 0x1122334455667788ull);
  EXPECT_EQ(r.rkey.value(), 0xAABBCCDDu);
  EXPECT_EQ(r.dma_length.value(), 65536u);
  Aeth a{};
  a.syndrome = Aeth::make_syndrome(AethType::kRnrNak, 14);
  a.msn.set(0xABCDEF);
  EXPECT_EQ(a.syndrome, 0x2E);
  EXPECT_EQ(a.type(), AethType::kRnrNak);
  EXPECT_EQ(a.syndrome_value(), 14);
  EXPECT_EQ(a.msn.value(), 0xABCDEFu);
  EXPECT_EQ(Aeth::make_syndrome(AethType::kNak, static_cast<uint8_t>(NakCode::kRemoteAccessError)), 0x62);
  EXPECT_EQ(Aeth::make_syndrome(AethType::kAck, kAethCreditUnlimited), 0x1F);
  EXPECT_STREQ(to_string(AethType::kNak), "nak");
  ImmDt i{};
  i.imm.set(0x01020304);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(&i)[3], 0x04);
  Deth d{};
  d.qkey.set(0x80010000);
  d.src_qp.set(0x123456);
  EXPECT_EQ(d.src_qp.value(), 0x123456u);
  AtomicEth at{};
  at.compare.set(7);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(&at)[27], 7);
}

TEST(WireOpcodes, LayoutTable) {
  EXPECT_EQ(opcode_layout(0x0A)->ext_bytes(), Reth::kSize);
  EXPECT_EQ(opcode_layout(0x0B)->ext_bytes(), Reth::kSize + ImmDt::kSize);
  EXPECT_EQ(opcode_layout(0x12)->ext_bytes(), Aeth::kSize + AtomicAckEth::kSize);
  EXPECT_EQ(opcode_layout(0x13)->ext_bytes(), AtomicEth::kSize);
  EXPECT_EQ(opcode_layout(0x65)->ext_bytes(), Deth::kSize + ImmDt::kSize);
  EXPECT_EQ(opcode_layout(0x81)->ext_bytes(), CnpBody::kSize);
  EXPECT_FALSE(opcode_layout(0x0C)->payload);
  EXPECT_TRUE(opcode_layout(0x0E)->payload);
  EXPECT_FALSE(opcode_layout(0x15).has_value());
  EXPECT_FALSE(opcode_layout(0xE0).has_value());
  EXPECT_STREQ(to_string(static_cast<Opcode>(0x15)), "UNKNOWN");
  for (int op = 0; op < 256; ++op) {
    if (opcode_layout(static_cast<uint8_t>(op))) {
      EXPECT_STRNE(to_string(static_cast<Opcode>(op)), "UNKNOWN") << op;
    }
  }
}

TEST(WireSrv6, ActiveUsidAndShift) {
  Ipv6Addr da{};
  const uint8_t block[4] = {0xFC, 0xBB, 0x00, 0x00};
  const uint16_t usids[3] = {0x0020, 0x0010, 0x0022};
  ASSERT_TRUE(make_usid_address(da, block, usids));
  EXPECT_EQ(da.bytes[4], 0x00);
  EXPECT_EQ(da.bytes[5], 0x20);
  EXPECT_EQ(active_usid(da), 0x0020);
  EXPECT_FALSE(usid_args_zero(da));
  usid_shift(da);
  EXPECT_EQ(active_usid(da), 0x0010);
  EXPECT_EQ(da.bytes[0], 0xFC);
  EXPECT_EQ(da.bytes[1], 0xBB);
  usid_shift(da);
  EXPECT_EQ(active_usid(da), 0x0022);
  EXPECT_TRUE(usid_args_zero(da));
  usid_shift(da);
  EXPECT_EQ(active_usid(da), 0);
  const uint16_t too_many[7] = {1, 2, 3, 4, 5, 6, 7};
  EXPECT_FALSE(make_usid_address(da, block, too_many));
  const uint16_t six[6] = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(make_usid_address(da, block, six));
  EXPECT_EQ(da.bytes[15], 6);
  EXPECT_FALSE(make_usid_address(da, std::span<const uint8_t>(block, 3), six));
}

TEST(WireMacControl, PfcFrameLayout) {
  uint8_t f[64];
  std::memset(f, 0xEE, sizeof(f));
  const std::array<uint16_t, 8> q = {0, 0, 0, 0xFFFF, 0x1234, 0, 0, 7};
  ASSERT_EQ(build_pfc_frame(f, MacAddr{{2, 0, 0, 0, 0, 9}}, 0x98, q), 60u);
  EXPECT_EQ(f[0], 0x01);
  EXPECT_EQ(f[2], 0xC2);
  EXPECT_EQ(f[5], 0x01);
  EXPECT_EQ(f[11], 9);
  EXPECT_EQ(f[12], 0x88);
  EXPECT_EQ(f[13], 0x08);
  EXPECT_EQ(f[14], 0x01);
  EXPECT_EQ(f[15], 0x01);
  EXPECT_EQ(f[16], 0x00);
  EXPECT_EQ(f[17], 0x98);
  EXPECT_EQ(f[18 + 6], 0xFF);
  EXPECT_EQ(f[18 + 8], 0x12);
  EXPECT_EQ(f[18 + 15], 7);
  for (int i = 34; i < 60; ++i) EXPECT_EQ(f[i], 0) << i;
  EXPECT_EQ(f[60], 0xEE);  // nothing written past 60
  const auto* body = reinterpret_cast<const PfcBody*>(f + EthHeader::kSize);
  EXPECT_TRUE(body->enabled(3));
  EXPECT_FALSE(body->enabled(0));
  EXPECT_EQ(body->time_quanta[4].value(), 0x1234);
  EXPECT_EQ(build_pfc_frame(std::span<uint8_t>(f, 59), MacAddr{}, 1, q), 0u);
}

TEST(WireMacControl, PauseFrameLayout) {
  uint8_t f[60];
  ASSERT_EQ(build_pause_frame(f, MacAddr{{2, 0, 0, 0, 0, 9}}, 0xFFFF), 60u);
  EXPECT_EQ(f[14], 0x00);
  EXPECT_EQ(f[15], 0x01);
  EXPECT_EQ(f[16], 0xFF);
  EXPECT_EQ(f[17], 0xFF);
  for (int i = 18; i < 60; ++i) EXPECT_EQ(f[i], 0) << i;
  EXPECT_STREQ(to_string(MacControlOpcode::kPfc), "pfc");
  EXPECT_EQ(build_pause_frame(std::span<uint8_t>(f, 10), MacAddr{}, 1), 0u);
}

}  // namespace
}  // namespace sf::wire
