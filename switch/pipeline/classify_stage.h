// Receive stage A: parse and classify a burst (docs/architecture.md "Switch
// pipeline"). For each frame, wire::parse_fwd() (no FrameInfo) and the QoS
// maps of the ingress port (DSCP, or PCP on trusting ports -> TC -> PG and
// queue) give one RxMeta: which way stage C takes the frame (L2, IPv4 or
// IPv6 routing to the port's router MAC) and what it needs of its headers.
// What parse_fwd() does not decide (MAC control, credit frames, malformed,
// oversize, IPv4 options, fragments, SRv6 encapsulation) is marked kSlow and
// left to stage C's slow step (SwitchNode::slow_frame) at its place.
//
// Pure logic over frame bytes: no table, no state, no allocation. Inline so
// that SwitchNode::receive_stages compiles it into one loop (STYLE G4).
#pragma once

#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/wire/credit_frame.h"
#include "common/wire/frame_parser.h"
#include "switch/config/switch_config.h"
#include "switch/fwd/router_if.h"

namespace sf::sw {

// Frames per stage pass (the size of every hand-off array between stages)
// and how far ahead stage A prefetches frame data (chosen with
// bench/switch/switch_node_bench).
inline constexpr uint16_t kRxStageBurst = 32;
inline constexpr uint16_t kRxPrefetchAhead = 4;
// The switch verifies the IPv4 header checksum on receive (both paths).
inline constexpr bool kRxVerifyIpv4Checksum = true;

// Six-byte compare without a memcmp call (it showed up in profiles).
inline bool mac_eq(const std::array<uint8_t, 6>& a, const std::array<uint8_t, 6>& b) {
  uint32_t a4, b4;
  uint16_t a2, b2;
  std::memcpy(&a4, a.data(), 4);
  std::memcpy(&b4, b.data(), 4);
  std::memcpy(&a2, a.data() + 4, 2);
  std::memcpy(&b2, b.data() + 4, 2);
  return ((a4 ^ b4) | static_cast<uint32_t>(a2 ^ b2)) == 0;
}

// What stage A decided for one frame of a burst (10 bytes): the hand-off
// from stage A to stages B (lookups) and C (learn, forward, admit).
enum class RxStep : uint8_t { kSlow, kL2, kRoute4, kRoute6 };
struct RxMeta {
  RxStep step = RxStep::kSlow;
  uint8_t pg = 0;
  uint8_t queue = 0;
  uint8_t ip_version = 0;  // 0, 4, 6
  uint8_t l3_offset = 0;
  uint8_t pad_ = 0;
  uint16_t vlan = 0;        // the frame's VID; untagged / VID 0: the port's PVID (kDefaultVlan)
  uint16_t udp_offset = 0;  // 0: not UDP

  // pg | queue << 8 | ip_version << 16 (QueuedRun::add_plain), one load.
  uint32_t pg_q_ip() const {
    static_assert(std::endian::native == std::endian::little);
    uint32_t w;
    std::memcpy(&w, this, 4);
    return w >> 8;
  }
};
static_assert(sizeof(RxMeta) == 10);
static_assert(offsetof(RxMeta, pg) == 1 && offsetof(RxMeta, queue) == 2 && offsetof(RxMeta, ip_version) == 3);

// What stage A reads of the ingress port.
struct ClassifyPort {
  const std::array<uint8_t, 6>& mac;  // router MAC: IP frames to it are routed
  uint32_t max_frame_bytes;           // MTU + Ethernet header + VLAN tag; longer: kSlow (oversize)
  const PortQos& qos;
  // router_if: ARP / ND a router port may take goes to the slow path
  // (SwitchNode::slow_frame -> router_rx); null = no router interfaces.
  const RouterIf* rif = nullptr;
  uint16_t port_id = 0;
};

// Frames and bytes stage A classified (the port's rx counters; kSlow frames
// are counted by the slow path).
struct ClassifyCounts {
  uint32_t packets = 0;
  uint64_t bytes = 0;
};

// One frame: `d` its first `head_bytes` (the first segment) of `frame_bytes`.
// Returns false (r.step = kSlow, nothing else set) when the slow path decides it.
// The most common shape, straight: untagged IPv4 with IHL 5 (checksum
// right, not a fragment) carrying sound UDP, all of it in the head, on a
// port without router interfaces. Returns true with r set exactly as
// classify_frame's general path would set it (parse_fwd, then classify);
// false: not this shape (nothing set), the general path decides.
[[gnu::always_inline]] inline bool classify_v4_udp(const ClassifyPort& port, const uint8_t* d, uint32_t head_bytes,
                                                   uint32_t frame_bytes, RxMeta& r) {
  using wire::detail::load_be16;
  constexpr uint32_t kEth = wire::EthHeader::kSize;
  constexpr uint32_t kUdp = kEth + wire::Ipv4Header::kSize;  // the UDP header's offset
  if (port.rif != nullptr || head_bytes < kUdp + wire::UdpHeader::kSize || head_bytes > frame_bytes ||
      frame_bytes > port.max_frame_bytes) {
    return false;
  }
  const uint8_t* ip = d + kEth;
  if (load_be16(d + wire::EthHeader::kOffEtherType) != wire::kEtherTypeIpv4 || ip[0] != 0x45 ||
      ip[9] != wire::kIpProtoUdp) {
    return false;
  }
  const uint32_t total = load_be16(ip + 2);
  const uint32_t len = load_be16(d + kUdp + 4);
  if (total < wire::Ipv4Header::kSize || kEth + total > frame_bytes || (load_be16(ip + 6) & 0x3FFFu) != 0 ||
      len < wire::UdpHeader::kSize || kUdp + len > kEth + total) {
    return false;
  }
  if (kRxVerifyIpv4Checksum && !wire::detail::ipv4_ihl5_checksum_ok(ip)) return false;
  const PortQos& qos = port.qos;
  const uint8_t tc = qos.dscp_to_tc[ip[1] >> 2];  // untagged: never PCP
  r.pg = qos.tc_to_pg[tc];
  r.queue = qos.tc_to_queue[tc];
  r.ip_version = 4;
  r.l3_offset = kEth;
  r.udp_offset = kUdp;
  r.vlan = kDefaultVlan;
  r.step = mac_eq(*reinterpret_cast<const std::array<uint8_t, 6>*>(d), port.mac) ? RxStep::kRoute4 : RxStep::kL2;
  return true;
}

[[gnu::always_inline]] inline bool classify_frame(const ClassifyPort& port, const uint8_t* d, uint32_t head_bytes,
                                                  uint32_t frame_bytes, RxMeta& r) {
  if (classify_v4_udp(port, d, head_bytes, frame_bytes, r)) return true;
  wire::FwdHeaders h;
  if (frame_bytes > port.max_frame_bytes || !wire::parse_fwd(d, head_bytes, frame_bytes, kRxVerifyIpv4Checksum, h) ||
      h.ether_type == wire::kEtherTypeCreditFc ||
      (port.rif != nullptr && port.rif->traps(port.port_id, h.ether_type, d + h.l3_offset))) {  // router_if
    r.step = RxStep::kSlow;
    return false;
  }
  const PortQos& qos = port.qos;
  const uint8_t* l3 = d + h.l3_offset;
  // Classify: DSCP (or PCP on trusting ports) -> TC -> PG and queue.
  const uint8_t pcp = h.vlan ? static_cast<uint8_t>(d[wire::EthHeader::kSize] >> 5) : 0;  // tag in the head
  uint8_t tc = 0;
  if (qos.trust_dot1p && h.vlan) {
    tc = qos.dot1p_to_tc[pcp];
  } else if (h.ip_version == 4) {
    tc = qos.dscp_to_tc[l3[1] >> 2];
  } else if (h.ip_version == 6) {
    tc = qos.dscp_to_tc[((l3[0] & 0x0Fu) << 2) | (l3[1] >> 6)];
  } else if (h.vlan) {
    tc = qos.dot1p_to_tc[pcp];
  }
  r.pg = qos.tc_to_pg[tc];
  r.queue = qos.tc_to_queue[tc];
  r.ip_version = h.ip_version;
  r.l3_offset = h.l3_offset;
  r.udp_offset = h.udp_offset;
  // Untagged and priority-tagged (VID 0) frames belong to the port's PVID.
  const uint16_t vid = h.vlan ? static_cast<uint16_t>((d[14] << 8 | d[15]) & 0x0FFFu) : 0;
  r.vlan = vid != 0 ? vid : kDefaultVlan;
  const auto& dst = *reinterpret_cast<const std::array<uint8_t, 6>*>(d);
  if (h.ip_version != 0 && mac_eq(dst, port.mac)) {
    r.step = h.ip_version == 4 ? RxStep::kRoute4 : RxStep::kRoute6;
  } else {
    r.step = RxStep::kL2;
  }
  return true;
}

// Stage A over pkts[0, n), n <= kRxStageBurst: meta[i] for pkts[i],
// prefetching kRxPrefetchAhead frames ahead.
[[gnu::always_inline]] inline ClassifyCounts classify_burst(const ClassifyPort& port, rte_mbuf* const* pkts, uint16_t n,
                                                            RxMeta* meta) {
  ClassifyCounts c;
  for (uint16_t i = 0; i < std::min<uint16_t>(n, kRxPrefetchAhead); ++i) rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
  for (uint16_t i = 0; i < n; ++i) {
    if (i + kRxPrefetchAhead < n) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + kRxPrefetchAhead], void*));
    const rte_mbuf* m = pkts[i];
    if (!classify_frame(port, rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, m->pkt_len, meta[i])) continue;
    ++c.packets;
    c.bytes += m->pkt_len;
  }
  return c;
}

}  // namespace sf::sw
