// Stage A (classify_frame, switch/pipeline/classify_stage.h) against a
// frame-by-frame reference of the classification that lives here, in the
// tests: the full parse (wire::parse_frame, stop at UDP) and the QoS maps as
// stage C's slow step (SwitchNode::slow_frame) applies them. With one
// receive path the product has no second classifier to compare with (the
// equivalence tests of node_pair.h drive both nodes through stage A), so
// this is where the fast parse's decisions are checked against the full
// one: for every frame stage A takes (not kSlow), the reference takes it too
// and gives the same step (L2 / routed IPv4 / routed IPv6), PG, queue, VLAN,
// IP version and L3 / UDP offsets. Frames: RoCE over IPv4 and IPv6, tagged
// or not, to the router MAC, a host or broadcast, random QoS maps (trusting
// PCP or DSCP), random byte flips and truncations, long frames.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/rng.h"
#include "common/wire/credit_frame.h"
#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "switch/pipeline/classify_stage.h"
#include "tests/support/roce_frame.h"

namespace sf::sw {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr std::array<uint8_t, 6> kRouterMac{0x02, 0x53, 0x46, 0, 0, 0x01};

// What the slow step decides for a frame, or nullopt where it ends it
// (oversize, malformed, credit or MAC control frame: no forwarding step).
std::optional<RxMeta> reference(const std::array<uint8_t, 6>& mac, uint32_t max_frame, const PortQos& qos,
                                const uint8_t* d, uint32_t head, uint32_t frame_bytes) {
  if (frame_bytes > max_frame) return std::nullopt;
  const wire::FrameInfo f =
      wire::parse_frame({d, head}, frame_bytes, {.verify_ipv4_checksum = kRxVerifyIpv4Checksum, .stop_at_udp = true});
  if (f.eth == nullptr || wire::is_credit_frame(*f.eth, f.ether_type) || f.kind == wire::FrameKind::kMacControl) {
    return std::nullopt;
  }
  const bool is_ip = f.ip_version != wire::IpVersion::kNone;
  using wire::ParseReason;
  const bool l3_ok = f.reason == ParseReason::kOk || f.reason == ParseReason::kNotUdp ||
                     f.reason == ParseReason::kNotRoce || f.reason == ParseReason::kFragmented || f.udp_end != 0;
  if (is_ip && !l3_ok) return std::nullopt;
  if (!is_ip && f.reason != ParseReason::kUnsupportedEtherType) return std::nullopt;
  const wire::Ipv4Header* v4 = f.ipv4;
  const wire::Ipv6Header* v6 = f.outer_ipv6 != nullptr ? f.outer_ipv6 : f.ipv6;
  uint8_t tc = 0;
  if (qos.trust_dot1p && f.vlan != nullptr) {
    tc = qos.dot1p_to_tc[f.vlan->pcp()];
  } else if (v4 != nullptr) {
    tc = qos.dscp_to_tc[v4->dscp()];
  } else if (v6 != nullptr) {
    tc = qos.dscp_to_tc[v6->dscp()];
  } else if (f.vlan != nullptr) {
    tc = qos.dot1p_to_tc[f.vlan->pcp()];
  }
  RxMeta r;
  r.pg = qos.tc_to_pg[tc];
  r.queue = qos.tc_to_queue[tc];
  const uint16_t vid = f.vlan != nullptr ? f.vlan->vid() : 0;
  r.vlan = vid != 0 ? vid : kDefaultVlan;
  if (v4 != nullptr || v6 != nullptr) {
    r.ip_version = v4 != nullptr ? 4 : 6;
    r.l3_offset = static_cast<uint8_t>(f.l3_offset);
  }
  r.udp_offset = f.udp != nullptr ? static_cast<uint16_t>(f.udp_offset) : 0;
  if (is_ip && mac_eq(f.eth->dst.bytes, mac)) {
    r.step = v4 != nullptr ? RxStep::kRoute4 : RxStep::kRoute6;
  } else {
    r.step = RxStep::kL2;
  }
  return r;
}

Bytes random_frame(Rng& rng) {
  auto r32 = [&] { return static_cast<uint32_t>(rng.next_u64()); };
  wire::RoceFrameSpec s;
  const uint32_t to = r32() % 3;
  s.l2.dst = to == 0 ? wire::MacAddr{kRouterMac} : to == 1 ? wire::MacAddr{{0x02, 0, 0, 0, 0, 0x0D}}
                                                           : wire::MacAddr{{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}};
  s.l2.src = wire::MacAddr{{0x02, 0, 0, 0, 0, 0x0A}};
  if (r32() % 2 == 0) s.l2.vlan = wire::VlanSpec{static_cast<uint8_t>(r32() % 8), false, static_cast<uint16_t>(r32() % 3 == 0 ? 0 : r32() % 4095)};
  if (r32() % 2 == 0) {
    wire::Ipv4Spec ip;
    ip.src.bytes = {10, 0, 0, 1};
    ip.dst.bytes = {10, 9, 0, static_cast<uint8_t>(r32())};
    ip.dscp = static_cast<uint8_t>(r32() % 64);
    ip.ttl = static_cast<uint8_t>(1 + r32() % 64);
    s.l3 = ip;
  } else {
    wire::Ipv6Spec ip;
    ip.src.bytes = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x09};
    ip.dst.bytes = {0xfd, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, static_cast<uint8_t>(r32())};
    ip.dscp = static_cast<uint8_t>(r32() % 64);
    ip.hop_limit = static_cast<uint8_t>(1 + r32() % 64);
    s.l3 = ip;
  }
  s.udp_src_port = static_cast<uint16_t>(0xC000 + r32() % 1024);
  Bytes b = test::roce_frame_bytes(s, r32() % 8 == 0 ? 1400 + r32() % 200 : 16 + r32() % 256);
  if (r32() % 2 == 0) {  // flips in the headers
    for (int k = 0; k < 3; ++k) b[r32() % std::min<size_t>(b.size(), 64)] ^= static_cast<uint8_t>(1u << (r32() % 8));
  }
  if (r32() % 7 == 0 && b.size() > 20) b.resize(14 + r32() % (b.size() - 14));
  return b;
}

PortQos random_qos(Rng& rng) {
  auto r32 = [&] { return static_cast<uint32_t>(rng.next_u64()); };
  PortQos q;
  for (auto& t : q.dscp_to_tc) t = static_cast<uint8_t>(r32() % 8);
  for (auto& t : q.dot1p_to_tc) t = static_cast<uint8_t>(r32() % 8);
  for (auto& p : q.tc_to_pg) p = static_cast<uint8_t>(r32() % 8);
  for (auto& p : q.tc_to_queue) p = static_cast<uint8_t>(r32() % 8);
  q.trust_dot1p = r32() % 2 == 0;
  return q;
}

// 1. Random frames and QoS maps, a 1500 B port (longer frames oversize),
// some frames seen through a short first segment. Expect: every frame stage
// A classifies, the reference forwards with the same RxMeta; stage A takes
// most of the intact frames (the fast path is the common one).
TEST(ClassifyReference, StageAAgreesWithTheFullParse) {
  Rng rng(2026);
  uint32_t fast = 0, slow = 0;
  for (int round = 0; round < 20000; ++round) {
    const PortQos qos = random_qos(rng);
    const Bytes b = random_frame(rng);
    if (b.empty()) continue;
    const auto frame_bytes = static_cast<uint32_t>(b.size());
    const uint32_t head = round % 5 == 4 && b.size() > 30 ? static_cast<uint32_t>(30 + rng.next_u64() % (b.size() - 30)) : frame_bytes;
    constexpr uint32_t kMaxFrame = 1500 + 18;
    RxMeta got;
    const bool taken = classify_frame(ClassifyPort{kRouterMac, kMaxFrame, qos, nullptr, 0}, b.data(), head, frame_bytes, got);
    if (!taken) {
      ++slow;
      EXPECT_EQ(got.step, RxStep::kSlow);
      continue;
    }
    ++fast;
    const std::optional<RxMeta> want = reference(kRouterMac, kMaxFrame, qos, b.data(), head, frame_bytes);
    ASSERT_TRUE(want.has_value()) << "round " << round << ": stage A took a frame the slow step ends";
    EXPECT_EQ(static_cast<int>(got.step), static_cast<int>(want->step)) << "round " << round;
    EXPECT_EQ(got.pg, want->pg) << "round " << round;
    EXPECT_EQ(got.queue, want->queue) << "round " << round;
    EXPECT_EQ(got.vlan, want->vlan) << "round " << round;
    EXPECT_EQ(got.ip_version, want->ip_version) << "round " << round;
    EXPECT_EQ(got.l3_offset, want->l3_offset) << "round " << round;  // 0 when not IP
    EXPECT_EQ(got.udp_offset, want->udp_offset) << "round " << round;
    if (testing::Test::HasFailure()) return;
  }
  EXPECT_GT(fast, 8000u);
  EXPECT_GT(slow, 1000u);
}

}  // namespace
}  // namespace sf::sw
