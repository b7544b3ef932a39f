// TxHeaderCache: headers copied from the cache and patched (PSN, AckReq,
// RETH, immediate) are byte for byte what build_roce_headers() writes for
// the new packet, for every cacheable opcode, L3 (IPv4, IPv6, SRv6), VLAN,
// SE and payload length; the ICRC continued from an entry's saved state is
// bit for bit a fresh one, under both CRC implementations; the key (opcode,
// SE, payload length) and the slots.
#include <gtest/gtest.h>

#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "nic/rc/tx_header_cache.h"

namespace sf::nic::rc {
namespace {

using wire::Opcode;

const Opcode kCacheable[] = {Opcode::kRcSendFirst,     Opcode::kRcSendMiddle,  Opcode::kRcSendLast,
                             Opcode::kRcSendLastImm,   Opcode::kRcSendOnly,    Opcode::kRcSendOnlyImm,
                             Opcode::kRcWriteFirst,    Opcode::kRcWriteMiddle, Opcode::kRcWriteLast,
                             Opcode::kRcWriteLastImm,  Opcode::kRcWriteOnly,   Opcode::kRcWriteOnlyImm,
                             Opcode::kRcReadRequest};

wire::RoceFrameSpec base_spec(int l3, bool vlan) {
  wire::RoceFrameSpec s;
  s.l2.dst = wire::MacAddr{{0x02, 0, 0, 0, 0, 2}};
  s.l2.src = wire::MacAddr{{0x02, 0, 0, 0, 0, 1}};
  if (vlan) s.l2.vlan = wire::VlanSpec{.pcp = 3, .vid = 100};
  wire::Ipv6Addr a{}, b{};
  a.bytes[0] = 0xfd;
  a.bytes[15] = 1;
  b.bytes[0] = 0xfd;
  b.bytes[15] = 2;
  if (l3 == 0) {
    s.l3 = wire::Ipv4Spec{.src = wire::Ipv4Addr{{10, 0, 0, 1}}, .dst = wire::Ipv4Addr{{10, 0, 0, 2}}, .dscp = 26};
  } else if (l3 == 1) {
    wire::Ipv6Spec v6;
    v6.src = a;
    v6.dst = b;
    v6.dscp = 26;
    s.l3 = v6;
  } else {
    wire::Srv6Spec sr;
    sr.outer.src = a;
    sr.outer.dst = b;
    sr.inner.src = b;
    sr.inner.dst = a;
    s.l3 = sr;
  }
  s.udp_src_port = 0xC123;
  s.bth.dest_qp = 0x00ABCD;
  return s;
}

// What Qp::build does on a miss: the spec with the packet's fields.
std::vector<uint8_t> reference(const wire::RoceFrameSpec& base, const TxFields& f, uint32_t payload_bytes) {
  const wire::RoceFrameSpec s = f.spec(base);
  std::vector<uint8_t> out(512);
  const wire::BuildResult r = wire::build_roce_headers(out, s, payload_bytes);
  if (!r.ok()) return {};
  out.resize(r.header_bytes);
  return out;
}

// Where Qp::build starts the ICRC's masked block (SRv6: the inner IPv6
// header), and its layout.
uint32_t ip_off_of(bool vlan, int l3 = 0) {
  return wire::EthHeader::kSize + (vlan ? wire::VlanTag::kSize : 0) + (l3 == 2 ? wire::Ipv6Header::kSize : 0);
}
wire::IcrcLayout layout_of(int l3) {
  return l3 == 0 ? wire::IcrcLayout{wire::IpVersion::kV4, 20} : wire::IcrcLayout{wire::IpVersion::kV6, 40};
}

std::vector<uint8_t> payload_of(uint32_t n, uint32_t seed) {
  std::vector<uint8_t> p(n);
  for (uint32_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i * 131 + seed * 7 + (i >> 8));
  return p;
}

// The ICRC of headers + payload + pad from a fresh begin() (as Qp::build
// does on a miss and for uncached opcodes).
uint32_t fresh_icrc(const std::vector<uint8_t>& hdr, uint32_t ip_off, wire::IcrcLayout layout,
                    const std::vector<uint8_t>& payload) {
  wire::IcrcAccumulator acc;
  EXPECT_TRUE(acc.begin({hdr.data() + ip_off, hdr.size() - ip_off}, layout));
  acc.update({hdr.data() + ip_off + layout.masked_bytes(), hdr.size() - ip_off - layout.masked_bytes()});
  acc.update(payload);
  const uint8_t pad[3] = {};
  acc.update({pad, (4 - (payload.size() & 3u)) & 3u});
  return acc.value();
}

// The ICRC continued from slot's saved state over the patched headers
// `hdr` (from AckReq on), in two pieces as the transmit path feeds it.
uint32_t resumed_icrc(const TxHeaderCache& c, int slot, const std::vector<uint8_t>& hdr,
                      const std::vector<uint8_t>& payload) {
  wire::IcrcAccumulator acc = c.icrc(slot);
  const uint32_t from = c.icrc_resume_offset(slot);
  acc.update({hdr.data() + from, hdr.size() - from});
  acc.update(payload);
  const uint8_t pad[3] = {};
  acc.update({pad, (4 - (payload.size() & 3u)) & 3u});
  return acc.value();
}

TxFields fields(Opcode op, bool se, uint32_t seed) {
  TxFields f;
  f.opcode = op;
  f.se = se;
  f.ack_req = (seed & 1) != 0;
  f.psn = wire::Psn(0xFFFFF0 + seed);
  f.reth_va = 0x1122334455667700ull + seed;
  f.reth_rkey = 0xCAFE0000 + seed;
  f.reth_dma_length = 65536 + seed;
  f.imm = 0xDEAD0000 + seed;
  return f;
}

// 1. Store one packet's headers, then patch them for another packet of the
//    same key. Expect: the same bytes as building that packet, every case.
TEST(TxHeaderCache, PatchedHeadersAreByteExact) {
  int cases = 0;
  for (const Opcode op : kCacheable) {
    for (int l3 = 0; l3 < 3; ++l3) {
      for (const bool vlan : {false, true}) {
        for (const bool se : {false, true}) {
          for (const uint32_t pl : {0u, 1u, 2u, 3u, 4u, 5u, 63u, 64u, 1024u, 4095u, 4096u}) {
            if (op == Opcode::kRcReadRequest && pl != 0) continue;
            const auto base = base_spec(l3, vlan);
            TxHeaderCache c;
            const auto first = reference(base, fields(op, se, 1), pl);
            ASSERT_FALSE(first.empty());
            EXPECT_EQ(c.find(op, se, pl), -1);
            ASSERT_TRUE(c.store(first.data(), first.size(), op, se, pl, ip_off_of(vlan, l3), layout_of(l3)));
            for (const uint32_t seed : {2u, 7u, 12u}) {
              const TxFields f = fields(op, se, seed);
              const int slot = c.find(op, se, pl);
              ASSERT_GE(slot, 0) << wire::to_string(op);
              const auto want = reference(base, f, pl);
              ASSERT_EQ(c.bytes(slot), want.size());
              std::vector<uint8_t> got(want.size(), 0xEE);
              c.apply(slot, got.data(), f);
              EXPECT_EQ(got, want) << wire::to_string(op) << " l3 " << l3 << " vlan " << vlan << " se " << se
                                   << " payload " << pl;
              const auto payload = payload_of(pl, seed);
              EXPECT_EQ(resumed_icrc(c, slot, got, payload), fresh_icrc(want, ip_off_of(vlan, l3), layout_of(l3), payload))
                  << wire::to_string(op) << " l3 " << l3 << " vlan " << vlan << " se " << se << " payload " << pl;
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, (12 * 11 + 1) * 3 * 2 * 2 * 3);
}

// 2. The saved ICRC state under each CRC implementation (the one chosen
//    when the entry was stored), against the ICRC of the whole frame built
//    by build_roce_frame: IPv4, IPv6 and SRv6, every cacheable opcode, three
//    packets per entry, PSNs across the 24-bit wrap. Expect: equal, and the
//    saved state stops exactly before the BTH's AckReq byte.
TEST(TxHeaderCache, SavedIcrcStateEqualsWholeFrameIcrcUnderEachImpl) {
  int cases = 0;
  for (const wire::Crc32Impl impl : {wire::Crc32Impl::kIsal, wire::Crc32Impl::kVpclmul}) {
    if (!wire::crc32_select_impl(impl)) continue;  // the CPU lacks VPCLMULQDQ
    for (const Opcode op : kCacheable) {
      for (int l3 = 0; l3 < 3; ++l3) {
        for (const bool vlan : {false, true}) {
          for (const uint32_t pl : {0u, 1u, 3u, 64u, 1025u, 4096u}) {
            if (op == Opcode::kRcReadRequest && pl != 0) continue;
            const auto base = base_spec(l3, vlan);
            TxHeaderCache c;
            const auto first = reference(base, fields(op, false, 1), pl);
            ASSERT_TRUE(c.store(first.data(), first.size(), op, false, pl, ip_off_of(vlan, l3), layout_of(l3)));
            const int slot = c.find(op, false, pl);
            ASSERT_GE(slot, 0);
            EXPECT_EQ(c.icrc(slot).impl(), impl);
            const std::size_t ext = (TxHeaderCache::has_reth(op) ? wire::Reth::kSize : 0) +
                                    (TxHeaderCache::has_imm(op) ? wire::ImmDt::kSize : 0);
            EXPECT_EQ(c.icrc_resume_offset(slot), first.size() - ext - wire::Bth::kSize + wire::Bth::kOffPsn - 1);
            for (const uint32_t seed : {2u, 15u, 40u}) {  // PSNs 0xFFFFF2, 0xFFFFFF, 0x000018
              const TxFields f = fields(op, false, seed);
              std::vector<uint8_t> got(c.bytes(slot));
              c.apply(slot, got.data(), f);
              const auto payload = payload_of(pl, seed);
              std::vector<uint8_t> frame(got.size() + pl + 8 + wire::kIcrcBytes);
              const wire::BuildResult r = wire::build_roce_frame(frame, f.spec(base), payload);
              ASSERT_TRUE(r.ok());
              frame.resize(r.frame_bytes);
              const wire::FrameInfo fi = wire::parse_frame(frame);
              ASSERT_TRUE(fi.ok());
              EXPECT_EQ(resumed_icrc(c, slot, got, payload), wire::load_le32(frame.data() + fi.icrc_offset))
                  << wire::to_string(impl) << " " << wire::to_string(op) << " l3 " << l3 << " vlan " << vlan
                  << " payload " << pl << " seed " << seed;
              ++cases;
            }
          }
        }
      }
    }
  }
  wire::crc32_select_impl(wire::crc32_best_impl());
  EXPECT_GE(cases, (12 * 6 + 1) * 3 * 2 * 3);
}

// 3. An entry stored under one implementation, continued after another is
//    selected. Expect: it keeps its own (the value is the same either way).
TEST(TxHeaderCache, SavedStateKeepsItsImplAcrossSelect) {
  if (!wire::crc32_impl_supported(wire::Crc32Impl::kVpclmul)) GTEST_SKIP() << "CPU lacks VPCLMULQDQ";
  const auto base = base_spec(0, false);
  const Opcode op = Opcode::kRcWriteMiddle;
  const auto h = reference(base, fields(op, false, 1), 4096);
  TxHeaderCache c;
  ASSERT_TRUE(wire::crc32_select_impl(wire::Crc32Impl::kVpclmul));
  ASSERT_TRUE(c.store(h.data(), h.size(), op, false, 4096, ip_off_of(false), layout_of(0)));
  ASSERT_TRUE(wire::crc32_select_impl(wire::Crc32Impl::kIsal));
  const int slot = c.find(op, false, 4096);
  EXPECT_EQ(c.icrc(slot).impl(), wire::Crc32Impl::kVpclmul);
  const auto payload = payload_of(4096, 3);
  std::vector<uint8_t> got(c.bytes(slot));
  c.apply(slot, got.data(), fields(op, false, 3));
  EXPECT_EQ(resumed_icrc(c, slot, got, payload), fresh_icrc(got, ip_off_of(false), layout_of(0), payload));
  wire::crc32_select_impl(wire::crc32_best_impl());
}

// 4. The key. Expect: another payload length, SE or opcode of the same slot
//    misses; FIRST / MIDDLE / LAST live in their own slots; clear() empties
//    all; opcodes with an AETH (read responses, ACK) are not cacheable.
TEST(TxHeaderCache, KeyAndSlots) {
  const auto base = base_spec(0, false);
  TxHeaderCache c;
  const Opcode ops[] = {Opcode::kRcWriteFirst, Opcode::kRcWriteMiddle, Opcode::kRcWriteLast};
  for (const Opcode op : ops) {
    const auto h = reference(base, fields(op, false, 1), 4096);
    ASSERT_TRUE(c.store(h.data(), h.size(), op, false, 4096, ip_off_of(false), layout_of(0)));
  }
  for (const Opcode op : ops) EXPECT_GE(c.find(op, false, 4096), 0) << wire::to_string(op);
  EXPECT_NE(c.find(Opcode::kRcWriteFirst, false, 4096), c.find(Opcode::kRcWriteMiddle, false, 4096));
  EXPECT_EQ(c.find(Opcode::kRcWriteFirst, false, 4092), -1);
  EXPECT_EQ(c.find(Opcode::kRcWriteFirst, true, 4096), -1);
  EXPECT_EQ(c.find(Opcode::kRcWriteOnly, false, 4096), -1);
  EXPECT_EQ(c.find(Opcode::kRcSendMiddle, false, 4096), -1);
  const auto only = reference(base, fields(Opcode::kRcWriteOnly, false, 1), 64);
  ASSERT_TRUE(c.store(only.data(), only.size(), Opcode::kRcWriteOnly, false, 64, ip_off_of(false), layout_of(0)));
  EXPECT_EQ(c.find(Opcode::kRcWriteFirst, false, 4096), -1);  // same slot, replaced
  EXPECT_GE(c.find(Opcode::kRcWriteOnly, false, 64), 0);
  EXPECT_GE(c.find(Opcode::kRcWriteMiddle, false, 4096), 0);
  c.clear();
  for (const Opcode op : ops) EXPECT_EQ(c.find(op, false, 4096), -1);
  EXPECT_EQ(c.find(Opcode::kRcWriteOnly, false, 64), -1);
  for (const Opcode op : {Opcode::kRcReadResponseFirst, Opcode::kRcReadResponseMiddle, Opcode::kRcReadResponseLast,
                          Opcode::kRcReadResponseOnly, Opcode::kRcAck, Opcode::kRcSendOnlyInv}) {
    EXPECT_FALSE(TxHeaderCache::cacheable(op)) << wire::to_string(op);
    EXPECT_EQ(c.find(op, false, 0), -1);
  }
  // 5. Headers too short for the opcode's ext headers. Expect: not stored.
  EXPECT_FALSE(c.store(only.data(), wire::Bth::kSize + 4, Opcode::kRcWriteOnly, false, 64, 0, layout_of(0)));
  EXPECT_EQ(c.find(Opcode::kRcWriteOnly, false, 64), -1);
}

}  // namespace
}  // namespace sf::nic::rc
