// parse_roce_fast(): whenever it accepts a frame, its FrameInfo equals
// parse_frame()'s field by field; it accepts the common well-formed RC frames
// (IPv4 / IPv6, with and without 802.1Q); and everything else is left to
// parse_frame(). Frames: every opcode x L3 x VLAN x payload length, then each
// truncated at every byte, split at every byte (head shorter than the frame),
// and every byte mutated (IPv4 frames also with the checksum made good again,
// so that the length / flag / protocol fields are reached).
#include <gtest/gtest.h>

#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/frame_parser_fast.h"
#include "tests/unit/wire/mrc_test_util.h"
#include "tests/unit/wire/wire_test_util.h"

namespace sf::wire {
namespace {

using test::build;
using test::sample_spec;

using test::kAllOpcodes;

struct Tally {
  uint64_t fast_accepted = 0;
  uint64_t generic_ok = 0;
  uint64_t checked = 0;
};

// The property: fast accepts => generic accepts with the same FrameInfo.
void check(std::span<const uint8_t> head, uint32_t frame_bytes, Tally& t, const char* what, std::size_t at) {
  const FrameInfo generic = parse_frame(head, frame_bytes);
  FrameInfo fast;
  const bool accepted = parse_roce_fast(head, frame_bytes, fast);
  ++t.checked;
  if (generic.ok()) ++t.generic_ok;
  if (!accepted) return;
  ++t.fast_accepted;
  ASSERT_TRUE(generic.ok()) << what << " at " << at << ": fast accepted, generic said " << to_string(generic.reason);
  ASSERT_TRUE(same_frame_info(fast, generic)) << what << " at " << at;
}

std::vector<RoceFrameSpec> all_specs() {
  std::vector<RoceFrameSpec> out;
  const L3Spec l3s[] = {test::sample_v4(), test::sample_v6(), test::sample_srv6()};
  for (const Opcode op : kAllOpcodes) {
    for (const L3Spec& l3 : l3s) {
      for (const bool vlan : {false, true}) {
        RoceFrameSpec s = sample_spec(op, l3);
        if (vlan) s.l2.vlan = VlanSpec{.pcp = 3, .vid = 100};
        out.push_back(s);
      }
    }
  }
  return out;
}

bool is_rc(Opcode op) { return static_cast<uint8_t>(op) <= 0x17; }

void fix_ipv4_checksum(std::vector<uint8_t>& f, const RoceFrameSpec& s) {
  if (!std::holds_alternative<Ipv4Spec>(s.l3)) return;
  const std::size_t off = s.l2.vlan ? 18 : 14;
  if (f.size() < off + Ipv4Header::kSize || (f[off] & 0x0F) != 5) return;
  f[off + 10] = f[off + 11] = 0;
  auto* h = reinterpret_cast<Ipv4Header*>(f.data() + off);
  ipv4_set_checksum(*h);
}

// 1. Every valid frame. Expect: fast accepts each RC frame over IPv4 / IPv6,
//    and equals generic.
TEST(FrameParserFast, ValidFramesAcceptedAndEqual) {
  Tally t;
  uint64_t expected_fast = 0;
  for (const RoceFrameSpec& s : all_specs()) {
    for (const std::size_t pl : {0, 1, 2, 3, 4, 5, 63, 64, 100, 1024}) {
      const auto f = build(s, pl);
      if (f.empty()) {  // only a payload on an opcode without one fails to build
        ASSERT_TRUE(pl > 0 && !opcode_layout(static_cast<uint8_t>(s.bth.opcode))->payload);
        continue;
      }
      const uint64_t before = t.fast_accepted;
      check(f, static_cast<uint32_t>(f.size()), t, "valid", pl);
      if (HasFatalFailure()) return;
      const bool expect = is_rc(s.bth.opcode) && !std::holds_alternative<Srv6Spec>(s.l3);
      if (expect) ++expected_fast;
      EXPECT_EQ(t.fast_accepted - before, expect ? 1u : 0u)
          << to_string(s.bth.opcode) << " l3 " << s.l3.index() << " vlan " << s.l2.vlan.has_value() << " pl " << pl;
    }
  }
  EXPECT_GT(expected_fast, 250u);
  EXPECT_EQ(t.fast_accepted, expected_fast);
}

// 2. Each frame truncated at every byte, and split at every byte (the head
//    shorter than the frame, as a multi-segment mbuf). Expect: equal whenever
//    fast accepts; fast never accepts a truncated frame generic rejects; a
//    head of exactly the headers is accepted.
TEST(FrameParserFast, TruncatedAndSplitFrames) {
  Tally t;
  for (const RoceFrameSpec& s : all_specs()) {
    for (const std::size_t pl : {0, 3, 64}) {
      const auto f = build(s, pl);
      if (f.empty()) {  // only a payload on an opcode without one fails to build
        ASSERT_TRUE(pl > 0 && !opcode_layout(static_cast<uint8_t>(s.bth.opcode))->payload);
        continue;
      }
      const std::span<const uint8_t> all(f);
      // The head exactly the headers (a zero-copy chain). Expect: accepted.
      const FrameInfo whole = parse_frame(all);
      FrameInfo fi;
      if (is_rc(s.bth.opcode) && !std::holds_alternative<Srv6Spec>(s.l3)) {
        EXPECT_TRUE(parse_roce_fast(all.first(whole.payload_offset), static_cast<uint32_t>(f.size()), fi))
            << to_string(s.bth.opcode);
      }
      for (std::size_t n = 0; n <= f.size(); ++n) {
        check(all.first(n), static_cast<uint32_t>(n), t, "truncated", n);
        check(all.first(n), static_cast<uint32_t>(f.size()), t, "split", n);
        // A frame length shorter than the head (the head is clipped to it).
        check(all, static_cast<uint32_t>(n), t, "short frame_bytes", n);
        if (HasFatalFailure()) return;
      }
    }
  }
  EXPECT_GT(t.fast_accepted, 1000u);  // the splits after the headers
}

// 3. Every byte of every frame mutated (xor 0x01, 0x10, 0x80, 0xFF, set 0x00,
//    set 0xFF), IPv4 frames also with the header checksum recomputed after
//    the mutation. Expect: equal whenever fast accepts.
TEST(FrameParserFast, MutatedFrames) {
  Tally t;
  uint64_t rejected_by_both = 0;
  for (const RoceFrameSpec& s : all_specs()) {
    for (const std::size_t pl : {0, 5, 64}) {
      const auto f = build(s, pl);
      if (f.empty()) {  // only a payload on an opcode without one fails to build
        ASSERT_TRUE(pl > 0 && !opcode_layout(static_cast<uint8_t>(s.bth.opcode))->payload);
        continue;
      }
      for (std::size_t i = 0; i < f.size(); ++i) {
        for (int kind = 0; kind < 6; ++kind) {
          for (const bool fix : {false, true}) {
            auto g = f;
            switch (kind) {
              case 0: g[i] ^= 0x01; break;
              case 1: g[i] ^= 0x10; break;
              case 2: g[i] ^= 0x80; break;
              case 3: g[i] ^= 0xFF; break;
              case 4: g[i] = 0x00; break;
              default: g[i] = 0xFF; break;
            }
            if (fix) fix_ipv4_checksum(g, s);
            const uint64_t acc = t.fast_accepted;
            const uint64_t ok = t.generic_ok;
            check(g, static_cast<uint32_t>(g.size()), t, "mutated", i);
            if (HasFatalFailure()) return;
            if (t.fast_accepted == acc && t.generic_ok == ok) ++rejected_by_both;
          }
        }
      }
    }
  }
  EXPECT_GT(t.fast_accepted, 10000u);
  EXPECT_GT(rejected_by_both, 1000u);
}

// 4. Frames fast must leave to parse_frame (even though parse_frame may accept
//    them): UD and CNP opcodes, SRv6, IPv4 options, MAC Control, a bad ICRC is
//    not the parser's business (accepted, equal). Expect: false for each.
TEST(FrameParserFast, LeavesUncommonFramesToGenericParser) {
  FrameInfo fi;
  auto ud = build(sample_spec(Opcode::kUdSendOnly), 64);
  EXPECT_TRUE(parse_frame(ud).ok());
  EXPECT_FALSE(parse_roce_fast(ud, static_cast<uint32_t>(ud.size()), fi));
  auto cnp = build(sample_spec(Opcode::kCnp), 0);
  EXPECT_TRUE(parse_frame(cnp).ok());
  EXPECT_FALSE(parse_roce_fast(cnp, static_cast<uint32_t>(cnp.size()), fi));
  auto srv6 = build(sample_spec(Opcode::kRcWriteOnly, test::sample_srv6()), 64);
  EXPECT_TRUE(parse_frame(srv6).ok());
  EXPECT_FALSE(parse_roce_fast(srv6, static_cast<uint32_t>(srv6.size()), fi));
  auto wo = build(sample_spec(Opcode::kRcWriteOnly), 64);
  ASSERT_TRUE(parse_roce_fast(wo, static_cast<uint32_t>(wo.size()), fi));
  wo[14] = 0x46;  // IHL 6: an IPv4 option (the checksum is wrong too)
  EXPECT_FALSE(parse_roce_fast(wo, static_cast<uint32_t>(wo.size()), fi));
  MrcFrameSpec ms = test::sample_mrc(MrcOp::kWriteOnly);
  const auto mrc = test::build_mrc(ms, 64);
  EXPECT_TRUE(parse_roce_fast(mrc, static_cast<uint32_t>(mrc.size()), fi));
  // Options other than the default MrcWireConfig (parse_mbuf says so): MRC left to generic.
  EXPECT_FALSE(parse_roce_fast(mrc, static_cast<uint32_t>(mrc.size()), fi, false));
  EXPECT_TRUE(parse_roce_fast(wo, static_cast<uint32_t>(wo.size()), fi, false) ==
              parse_roce_fast(wo, static_cast<uint32_t>(wo.size()), fi));
  auto icrc = build(sample_spec(Opcode::kRcWriteOnly), 64);
  icrc.back() ^= 1;
  ASSERT_TRUE(parse_roce_fast(icrc, static_cast<uint32_t>(icrc.size()), fi));
  EXPECT_TRUE(same_frame_info(fi, parse_frame(icrc)));
}

// 5. MRC frames (every op x IPv4 / IPv6 / SRv6 x VLAN x payload), each valid,
//    truncated at every byte, split at every byte and with every byte mutated
//    (IPv4 checksum also made good again). Expect: fast accepts each valid
//    data frame and SACK outside SRv6 and no other op, and equals generic whenever it
//    accepts (the METH / RETH consistency checks included: a mutated offset,
//    LAST flag or DMA length is left to generic, which rejects it).
TEST(FrameParserFast, MrcFrames) {
  Tally t;
  uint64_t valid_fast = 0, expected = 0, rejected_by_both = 0;
  const L3Spec l3s[] = {test::sample_v4(), test::sample_v6(), test::sample_srv6()};
  for (const L3Spec& l3 : l3s) {
    for (const bool vlan : {false, true}) {
      for (const MrcOp op : kAllMrcOps) {
        for (const std::size_t pl : {0, 3, 64}) {
          if (!mrc_is_data(op) && pl != 0) continue;
          MrcFrameSpec s = test::sample_mrc(op, l3);
          if (vlan) s.l2.vlan = VlanSpec{.pcp = 3, .vid = 100};
          const auto f = test::build_mrc(s, pl);
          ASSERT_FALSE(f.empty());
          const uint64_t before = t.fast_accepted;
          check(f, static_cast<uint32_t>(f.size()), t, "mrc valid", pl);
          if (HasFatalFailure()) return;
          const bool expect = (mrc_is_data(op) || op == MrcOp::kSack) && l3.index() != 2;
          expected += expect ? 1 : 0;
          valid_fast += t.fast_accepted - before;
          EXPECT_EQ(t.fast_accepted - before, expect ? 1u : 0u) << to_string(op) << " l3 " << l3.index();
          const std::span<const uint8_t> all(f);
          for (std::size_t n = 0; n <= f.size(); ++n) {
            check(all.first(n), static_cast<uint32_t>(n), t, "mrc truncated", n);
            check(all.first(n), static_cast<uint32_t>(f.size()), t, "mrc split", n);
            if (HasFatalFailure()) return;
          }
          for (std::size_t i = 0; i < f.size(); ++i) {
            for (const uint8_t x : {uint8_t{0x01}, uint8_t{0x10}, uint8_t{0x40}, uint8_t{0x80}, uint8_t{0xFF}}) {
              for (const bool fix : {false, true}) {
                auto g = f;
                g[i] ^= x;
                if (fix && l3.index() == 0) {
                  const std::size_t off = vlan ? 18 : 14;
                  g[off + 10] = g[off + 11] = 0;
                  if ((g[off] & 0x0F) == 5) ipv4_set_checksum(*reinterpret_cast<Ipv4Header*>(g.data() + off));
                }
                const uint64_t acc = t.fast_accepted;
                const uint64_t ok = t.generic_ok;
                check(g, static_cast<uint32_t>(g.size()), t, "mrc mutated", i);
                if (HasFatalFailure()) return;
                if (t.fast_accepted == acc && t.generic_ok == ok) ++rejected_by_both;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(valid_fast, expected);
  EXPECT_GE(expected, 52u);  // 6 data ops x 2 L3 x 2 VLAN x 2 payloads at least, + 4 SACKs
  EXPECT_GT(t.fast_accepted, 5000u);
  EXPECT_GT(rejected_by_both, 1000u);
}

// 6. same_frame_info() itself. Expect: one differing field or layout flag is seen.
TEST(FrameParserFast, SameFrameInfoSeesOneField) {
  const auto f = build(sample_spec(Opcode::kRcWriteOnlyImm), 64);
  const FrameInfo a = parse_frame(f);
  FrameInfo b = a;
  EXPECT_TRUE(same_frame_info(a, b));
  b.payload_bytes += 1;
  EXPECT_FALSE(same_frame_info(a, b));
  b = a;
  b.layout.immdt = false;
  EXPECT_FALSE(same_frame_info(a, b));
  b = a;
  b.immdt = nullptr;
  EXPECT_FALSE(same_frame_info(a, b));
  b = a;
  b.mac_control_dst_ok = true;
  EXPECT_FALSE(same_frame_info(a, b));
  MrcFrameSpec ms = test::sample_mrc(MrcOp::kWriteFirst);
  const auto g = test::build_mrc(ms, 64);
  const FrameInfo m = parse_frame(g);
  ASSERT_TRUE(m.ok());
  FrameInfo n = m;
  EXPECT_TRUE(same_frame_info(m, n));
  n.mrc.meth = nullptr;
  EXPECT_FALSE(same_frame_info(m, n));
  n = m;
  n.mrc.op = MrcOp::kWriteMiddle;
  EXPECT_FALSE(same_frame_info(m, n));
  n = m;
  n.mrc.trimmed = true;
  EXPECT_FALSE(same_frame_info(m, n));
}

}  // namespace
}  // namespace sf::wire
