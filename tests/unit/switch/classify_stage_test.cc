// Receive stage A (switch/pipeline/classify_stage.h) on its own: frame bytes
// in plain memory (mbuf headers on the stack, no EAL), one ingress port's QoS
// maps, the RxMeta records it hands to stages B and C.
#include "switch/pipeline/classify_stage.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/mac_control.h"
#include "switch/config/switch_config.h"
#include "switch/fwd/router_if.h"
#include "tests/support/roce_frame.h"

namespace sf::sw {
namespace {

constexpr std::array<uint8_t, 6> kRouter{0x02, 0x53, 0x46, 0, 0, 0x01};
const wire::MacAddr kHost{{0x02, 0, 0, 0, 0, 0x0A}};
const wire::MacAddr kPeer{{0x02, 0, 0, 0, 0, 0x0B}};

// DSCP 26 -> TC 3, PCP 5 -> TC 5; TC t -> PG t, queue 7 - t (so PG and queue differ).
PortQos qos_maps(bool trust_dot1p = false) {
  PortQos q;
  q.dscp_to_tc[26] = 3;
  q.dot1p_to_tc[5] = 5;
  for (uint8_t t = 0; t < 8; ++t) {
    q.tc_to_pg[t] = t;
    q.tc_to_queue[t] = static_cast<uint8_t>(7 - t);
  }
  q.trust_dot1p = trust_dot1p;
  return q;
}

wire::RoceFrameSpec spec(wire::MacAddr dst, bool v6 = false, std::optional<wire::VlanSpec> vlan = std::nullopt) {
  wire::RoceFrameSpec s;
  s.l2 = {dst, kHost, vlan};
  if (v6) {
    wire::Ipv6Spec ip;
    ip.src.bytes[15] = 1;
    ip.dst.bytes[15] = 2;
    ip.dscp = 26;
    s.l3 = ip;
  } else {
    wire::Ipv4Spec ip;
    ip.src.bytes = {10, 0, 0, 1};
    ip.dst.bytes = {10, 1, 0, 2};
    ip.dscp = 26;
    s.l3 = ip;
  }
  s.bth.opcode = wire::Opcode::kRcWriteOnly;
  s.ext.reth_dma_length = 64;
  return s;
}

// An mbuf header over `bytes` (one segment), enough for rte_pktmbuf_mtod
// (on the heap: rte_mbuf's zero-size marker arrays make it no member).
struct FakeMbuf {
  explicit FakeMbuf(std::vector<uint8_t> b) : bytes(std::move(b)), m(std::make_unique<rte_mbuf>()) {
    m->buf_addr = bytes.data();
    m->data_off = 0;
    m->data_len = static_cast<uint16_t>(bytes.size());
    m->pkt_len = static_cast<uint32_t>(bytes.size());
    m->nb_segs = 1;
  }
  std::vector<uint8_t> bytes;
  std::unique_ptr<rte_mbuf> m;
};

RxMeta classify(const PortQos& qos, const std::vector<uint8_t>& b, uint32_t max_frame = 1518) {
  const ClassifyPort port{kRouter, max_frame, qos};
  RxMeta r;
  r.step = RxStep::kL2;  // classify_frame must set it either way
  classify_frame(port, b.data(), static_cast<uint32_t>(b.size()), static_cast<uint32_t>(b.size()), r);
  return r;
}

TEST(ClassifyStage, L2FrameGetsPgQueueAndPvid) {
  const PortQos q = qos_maps();
  const RxMeta r = classify(q, test::roce_frame_bytes(spec(kPeer), 64));
  EXPECT_EQ(r.step, RxStep::kL2);
  EXPECT_EQ(r.pg, 3);
  EXPECT_EQ(r.queue, 4);
  EXPECT_EQ(r.ip_version, 4);
  EXPECT_EQ(r.l3_offset, 14);
  EXPECT_EQ(r.udp_offset, 34);
  EXPECT_EQ(r.vlan, kDefaultVlan);
}

TEST(ClassifyStage, IpToTheRouterMacIsRouted) {
  const PortQos q = qos_maps();
  EXPECT_EQ(classify(q, test::roce_frame_bytes(spec(wire::MacAddr{kRouter}), 64)).step, RxStep::kRoute4);
  const RxMeta r6 = classify(q, test::roce_frame_bytes(spec(wire::MacAddr{kRouter}, true), 64));
  EXPECT_EQ(r6.step, RxStep::kRoute6);
  EXPECT_EQ(r6.pg, 3);  // IPv6 traffic class DSCP 26
  EXPECT_EQ(r6.udp_offset, 14 + 40);
}

TEST(ClassifyStage, VlanTagGivesVidAndPcpOnTrustingPorts) {
  const auto tagged = test::roce_frame_bytes(spec(kPeer, false, wire::VlanSpec{5, false, 100}), 64);
  const RxMeta by_dscp = classify(qos_maps(false), tagged);
  EXPECT_EQ(by_dscp.vlan, 100);
  EXPECT_EQ(by_dscp.pg, 3);  // DSCP wins on a port that does not trust 802.1p
  EXPECT_EQ(by_dscp.l3_offset, 18);
  const RxMeta by_pcp = classify(qos_maps(true), tagged);
  EXPECT_EQ(by_pcp.pg, 5);
  EXPECT_EQ(by_pcp.queue, 2);
  // Priority-tagged (VID 0): the port's PVID.
  const auto prio = test::roce_frame_bytes(spec(kPeer, false, wire::VlanSpec{5, false, 0}), 64);
  EXPECT_EQ(classify(qos_maps(true), prio).vlan, kDefaultVlan);
}

TEST(ClassifyStage, WhatTheFastParseDoesNotDecideIsSlow) {
  const PortQos q = qos_maps();
  auto frame = test::roce_frame_bytes(spec(kPeer), 64);
  EXPECT_EQ(classify(q, frame, static_cast<uint32_t>(frame.size()) - 1).step, RxStep::kSlow);  // oversize
  auto bad_csum = frame;
  bad_csum[14 + 10] ^= 0xFF;  // IPv4 header checksum
  EXPECT_EQ(classify(q, bad_csum).step, RxStep::kSlow);
  std::vector<uint8_t> pfc(60);
  std::array<uint16_t, 8> quanta{};
  wire::build_pfc_frame(pfc, kHost, 0x08, quanta);
  EXPECT_EQ(classify(q, pfc).step, RxStep::kSlow);  // MAC control
  EXPECT_EQ(classify(q, std::vector<uint8_t>(10)).step, RxStep::kSlow);  // runt
}

TEST(ClassifyStage, BurstCountsWhatItClassifiedAndMarksTheRest) {
  const PortQos q = qos_maps();
  const ClassifyPort port{kRouter, 1518, q};
  std::vector<FakeMbuf> frames;
  frames.emplace_back(test::roce_frame_bytes(spec(kPeer), 64));
  frames.emplace_back(std::vector<uint8_t>(10));  // runt: kSlow, not counted here
  frames.emplace_back(test::roce_frame_bytes(spec(wire::MacAddr{kRouter}), 128));
  std::vector<rte_mbuf*> pkts;
  for (FakeMbuf& f : frames) pkts.push_back(f.m.get());
  std::array<RxMeta, kRxStageBurst> meta;
  const ClassifyCounts c = classify_burst(port, pkts.data(), static_cast<uint16_t>(pkts.size()), meta.data());
  EXPECT_EQ(c.packets, 2u);
  EXPECT_EQ(c.bytes, frames[0].bytes.size() + frames[2].bytes.size());
  EXPECT_EQ(meta[0].step, RxStep::kL2);
  EXPECT_EQ(meta[1].step, RxStep::kSlow);
  EXPECT_EQ(meta[2].step, RxStep::kRoute4);
}

// classify_v4_udp (the common shape decided straight) against the general
// path (parse_fwd + classify: a port with a RouterIf that traps nothing
// never takes the straight path) on frames mutated around their headers,
// cut heads, short or long frame lengths and small MTUs: the same verdict and
// the same RxMeta for every one; and the straight path takes a good share.
TEST(ClassifyStage, StraightV4UdpPathEqualsTheGeneralPath) {
  const PortQos q = qos_maps();
  const SwitchConfig empty;
  const RouterIf none(empty, {});
  std::mt19937 rng(20);
  const std::vector<std::vector<uint8_t>> bases{
      test::roce_frame_bytes(spec(kPeer), 64), test::roce_frame_bytes(spec(wire::MacAddr{kRouter}), 128),
      test::roce_frame_bytes(spec(kPeer, false, wire::VlanSpec{5, false, 10}), 80),
      test::roce_frame_bytes(spec(kPeer, true), 96)};
  auto fix_checksum = [](std::vector<uint8_t>& f) {
    if (f.size() < 34) return;
    f[24] = f[25] = 0;
    uint32_t sum = 0;
    for (int i = 14; i < 34; i += 2) sum += uint32_t{f[i]} << 8 | f[i + 1];
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    f[24] = static_cast<uint8_t>(~sum >> 8);
    f[25] = static_cast<uint8_t>(~sum);
  };
  int straight = 0;
  for (int it = 0; it < 200000; ++it) {
    std::vector<uint8_t> f = bases[rng() % bases.size()];
    const int muts = static_cast<int>(rng() % 4);
    for (int k = 0; k < muts; ++k) {
      const size_t at = rng() % 50;
      const uint32_t how = rng() % 4;
      if (how == 0) {
        f[at] = static_cast<uint8_t>(rng());
      } else if (how == 1) {
        f[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      } else if (how == 2) {
        f[at] = 0;
      } else {
        f[at] = 0xFF;
      }
    }
    if (rng() % 2 == 0) fix_checksum(f);
    const auto size = static_cast<uint32_t>(f.size());
    const uint32_t head = rng() % 4 == 0 ? static_cast<uint32_t>(rng() % (size + 1)) : size;
    const uint32_t frame = rng() % 4 == 0 ? head + static_cast<uint32_t>(rng() % 40) - 20u * (head >= 20) : size;
    const uint32_t mtu = rng() % 8 == 0 ? static_cast<uint32_t>(rng() % (size + 2)) : 1518;
    const ClassifyPort fast{kRouter, mtu, q};
    const ClassifyPort general{kRouter, mtu, q, &none, 0};
    RxMeta a{};
    RxMeta b{};
    const bool oka = classify_frame(fast, f.data(), head, frame, a);
    const bool okb = classify_frame(general, f.data(), head, frame, b);
    RxMeta s{};
    if (classify_v4_udp(fast, f.data(), head, frame, s)) ++straight;
    ASSERT_EQ(oka, okb) << "iteration " << it;
    ASSERT_EQ(a.step, b.step) << "iteration " << it;
    if (!oka) continue;
    ASSERT_EQ(a.pg, b.pg);
    ASSERT_EQ(a.queue, b.queue);
    ASSERT_EQ(a.ip_version, b.ip_version);
    ASSERT_EQ(a.l3_offset, b.l3_offset);
    ASSERT_EQ(a.vlan, b.vlan);
    ASSERT_EQ(a.udp_offset, b.udp_offset);
  }
  EXPECT_GT(straight, 20000);
}

}  // namespace
}  // namespace sf::sw
