// TxHeaderCache: headers copied from the cache and patched (PSN, AckReq,
// RETH, immediate) are byte for byte what build_roce_headers() writes for
// the new packet, for every cacheable opcode, L3 (IPv4, IPv6, SRv6), VLAN,
// SE and payload length; the key (opcode, SE, payload length) and the slots.
#include <gtest/gtest.h>

#include <vector>

#include "common/wire/frame_builder.h"
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
            c.store(first.data(), first.size(), op, se, pl);
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
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, (12 * 11 + 1) * 3 * 2 * 2 * 3);
}

// 2. The key. Expect: another payload length, SE or opcode of the same slot
//    misses; FIRST / MIDDLE / LAST live in their own slots; clear() empties
//    all; opcodes with an AETH (read responses, ACK) are not cacheable.
TEST(TxHeaderCache, KeyAndSlots) {
  const auto base = base_spec(0, false);
  TxHeaderCache c;
  const Opcode ops[] = {Opcode::kRcWriteFirst, Opcode::kRcWriteMiddle, Opcode::kRcWriteLast};
  for (const Opcode op : ops) {
    const auto h = reference(base, fields(op, false, 1), 4096);
    c.store(h.data(), h.size(), op, false, 4096);
  }
  for (const Opcode op : ops) EXPECT_GE(c.find(op, false, 4096), 0) << wire::to_string(op);
  EXPECT_NE(c.find(Opcode::kRcWriteFirst, false, 4096), c.find(Opcode::kRcWriteMiddle, false, 4096));
  EXPECT_EQ(c.find(Opcode::kRcWriteFirst, false, 4092), -1);
  EXPECT_EQ(c.find(Opcode::kRcWriteFirst, true, 4096), -1);
  EXPECT_EQ(c.find(Opcode::kRcWriteOnly, false, 4096), -1);
  EXPECT_EQ(c.find(Opcode::kRcSendMiddle, false, 4096), -1);
  const auto only = reference(base, fields(Opcode::kRcWriteOnly, false, 1), 64);
  c.store(only.data(), only.size(), Opcode::kRcWriteOnly, false, 64);
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
  // 3. Headers too short for the opcode's ext headers. Expect: not stored.
  c.store(only.data(), wire::Bth::kSize + 4, Opcode::kRcWriteOnly, false, 64);
  EXPECT_EQ(c.find(Opcode::kRcWriteOnly, false, 64), -1);
}

}  // namespace
}  // namespace sf::nic::rc
