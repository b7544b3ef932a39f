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
#include <type_traits>

#include "common/wire/credit_frame.h"
#include "common/wire/frame_parser.h"
#include "switch/config/switch_config.h"
#include "switch/fwd/router_if.h"

namespace sf::sw {

// Frames per stage pass (the size of every hand-off array between stages)
// and how far ahead stage A prefetches frame data (chosen with
// bench/switch/switch_node_bench).
inline constexpr uint16_t kRxStageBurst = 64;
inline constexpr uint16_t kRxPrefetchAhead = 4;

// Stage A's prefetch of frame data kRxPrefetchAhead frames ahead: the first
// ones before the loop, then frame i + kRxPrefetchAhead in iteration i.
inline void prefetch_first(rte_mbuf* const* pkts, uint16_t n) {
  for (uint16_t i = 0; i < std::min<uint16_t>(n, kRxPrefetchAhead); ++i) rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void*));
}
inline void prefetch_ahead(rte_mbuf* const* pkts, uint16_t i, uint16_t n) {
  if (i + kRxPrefetchAhead < n) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + kRxPrefetchAhead], void*));
}

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
  uint8_t l3_offset = 0;  // where the IP header starts; 0 when ip_version is 0
  uint8_t pad_ = 0;
  uint16_t vlan = 0;        // the frame's VID; untagged / VID 0: the port's PVID (kDefaultVlan)
  uint16_t udp_offset = 0;  // 0: not UDP

  // Sets the first eight bytes from `lo` (step | pg << 8 | queue << 16 |
  // ip_version << 24 | l3_offset << 32 | vlan << 48) and udp_offset: two
  // stores, not seven.
  void set(uint64_t lo, uint16_t udp) {
    static_assert(std::endian::native == std::endian::little);
    std::memcpy(this, &lo, 8);
    udp_offset = udp;
  }
  // pg | queue << 8 | ip_version << 16 (QueuedRun::add_plain), one load.
  uint32_t pg_q_ip() const {
    static_assert(std::endian::native == std::endian::little);
    uint32_t w;
    std::memcpy(&w, this, 4);
    return w >> 8;
  }
};
static_assert(sizeof(RxMeta) == 10);
static_assert(offsetof(RxMeta, pg) == 1 && offsetof(RxMeta, queue) == 2 && offsetof(RxMeta, ip_version) == 3 &&
              offsetof(RxMeta, l3_offset) == 4 && offsetof(RxMeta, pad_) == 5 && offsetof(RxMeta, vlan) == 6 &&
              offsetof(RxMeta, udp_offset) == 8);

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
// classify_v4_udp_at: the same with what it reads of the port passed in
// (the router MAC as wire::mac_word(), read once a burst), for a port without
// router interfaces. The header fields are read as words at their fixed
// offsets: bytes 12-15 (EtherType, version / IHL, DSCP) and 16-23 (total
// length, flags and fragment offset, protocol) in one load each.
// classify_v4_udp_word: the same, as the first eight bytes of RxMeta that
// classify_v4_udp_at stores (RxMeta::set; udp_offset is then always
// kRxV4UdpOffset), 0 when not this shape (never 0 otherwise: l3_offset is
// 14), for a caller that uses the step without reloading it.
inline constexpr uint16_t kRxV4UdpOffset = wire::EthHeader::kSize + wire::Ipv4Header::kSize;
[[gnu::always_inline]] inline uint64_t classify_v4_udp_word(const PortQos& qos, uint64_t mac48,
                                                            uint32_t max_frame_bytes, const uint8_t* d,
                                                            uint32_t head_bytes, uint32_t frame_bytes) {
  using wire::detail::load_be16;
  using wire::detail::load_u32;
  using wire::detail::load_u64;
  static_assert(std::endian::native == std::endian::little);
  constexpr uint32_t kEth = wire::EthHeader::kSize;
  constexpr uint32_t kUdp = kEth + wire::Ipv4Header::kSize;  // the UDP header's offset
  // Each bound as a difference that must not be negative (64-bit: none
  // overflows), all tested at once by the sign of their OR.
  auto any_negative = [](auto... v) {
    static_assert((std::is_same_v<decltype(v), int64_t> && ...));
    return (v | ...) < 0;
  };
  constexpr int64_t kEthBytes = kEth;
  constexpr int64_t kIpv4Bytes = wire::Ipv4Header::kSize;
  constexpr int64_t kUdpBytes = wire::UdpHeader::kSize;
  // The headers up to UDP's in the head, the head in the frame, the frame
  // within the port's maximum.
  if (any_negative(int64_t{head_bytes} - (kUdp + kUdpBytes), int64_t{frame_bytes} - head_bytes,
                   int64_t{max_frame_bytes} - frame_bytes)) [[unlikely]] {
    return 0;
  }
  // EtherType 0x0800 at 12, 0x45 (version 4, IHL 5) at 14; the DSCP byte at 15.
  const uint32_t w12 = load_u32(d + 12);
  // Total length at 16-17, flags + fragment offset at 20-21 (MF or an
  // offset: a fragment), protocol at 23.
  const uint64_t w16 = load_u64(d + 16);
  constexpr uint64_t kFragProtoMask = 0xFF00FF3F00000000ull;
  constexpr uint64_t kUnfragmentedUdp = uint64_t{wire::kIpProtoUdp} << 56;
  static_assert(wire::kEtherTypeIpv4 == 0x0800);
  if ((w12 & 0x00FFFFFFu) != 0x00450008u || (w16 & kFragProtoMask) != kUnfragmentedUdp) [[unlikely]] return 0;
  const int64_t total = __builtin_bswap16(static_cast<uint16_t>(w16));
  const int64_t len = load_be16(d + kUdp + 4);
  // The IPv4 packet in the frame, UDP's length at least its header and
  // within the IPv4 packet (which implies the IPv4 minimum, total >= 20).
  if (any_negative(int64_t{frame_bytes} - kEthBytes - total, len - kUdpBytes, total - kIpv4Bytes - len)) [[unlikely]] {
    return 0;
  }
  if (kRxVerifyIpv4Checksum && !wire::detail::ipv4_ihl5_checksum_ok(d + kEth)) [[unlikely]] return 0;
  const uint8_t tc = qos.dscp_to_tc[w12 >> 26];  // untagged: never PCP
  const bool routed = ((load_u64(d) ^ mac48) << 16) == 0;  // the destination is the router MAC
  const RxStep step = routed ? RxStep::kRoute4 : RxStep::kL2;
  static_assert(kUdp == kRxV4UdpOffset);
  return uint64_t{static_cast<uint8_t>(step)} | uint64_t{qos.tc_to_pg[tc]} << 8 | uint64_t{qos.tc_to_queue[tc]} << 16 |
         uint64_t{4} << 24 | uint64_t{kEth} << 32 | uint64_t{kDefaultVlan} << 48;
}
[[gnu::always_inline]] inline bool classify_v4_udp_at(const PortQos& qos, uint64_t mac48, uint32_t max_frame_bytes,
                                                      const uint8_t* d, uint32_t head_bytes, uint32_t frame_bytes,
                                                      RxMeta& r) {
  const uint64_t lo = classify_v4_udp_word(qos, mac48, max_frame_bytes, d, head_bytes, frame_bytes);
  if (lo == 0) return false;
  r.set(lo, kRxV4UdpOffset);
  return true;
}

[[gnu::always_inline]] inline bool classify_v4_udp(const ClassifyPort& port, const uint8_t* d, uint32_t head_bytes,
                                                   uint32_t frame_bytes, RxMeta& r) {
  return port.rif == nullptr &&
         classify_v4_udp_at(port.qos, wire::mac_word(port.mac), port.max_frame_bytes, d, head_bytes, frame_bytes, r);
}

// The general path of classify_frame: parse_fwd, then classify.
[[gnu::always_inline]] inline bool classify_general(const ClassifyPort& port, const uint8_t* d, uint32_t head_bytes,
                                                    uint32_t frame_bytes, RxMeta& r) {
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
  r.l3_offset = h.ip_version != 0 ? h.l3_offset : 0;
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

[[gnu::always_inline]] inline bool classify_frame(const ClassifyPort& port, const uint8_t* d, uint32_t head_bytes,
                                                  uint32_t frame_bytes, RxMeta& r) {
  return classify_v4_udp(port, d, head_bytes, frame_bytes, r) || classify_general(port, d, head_bytes, frame_bytes, r);
}

// Stage A over pkts[0, n), n <= kRxStageBurst: meta[i] for pkts[i],
// prefetching kRxPrefetchAhead frames ahead; on_frame(i, data, meta[i])
// after each frame it classified (stage B's per-frame lookup in
// classify_lookup_burst, lookup_stage.h; nothing in classify_burst).
template <class OnFrame>
[[gnu::always_inline]] inline ClassifyCounts classify_each(const ClassifyPort& port, rte_mbuf* const* pkts, uint16_t n,
                                                           RxMeta* meta, OnFrame&& on_frame) {
  ClassifyCounts c;
  // What the straight path reads of the port, in registers for the burst
  // (the byte stores into meta may alias the port's MAC).
  const bool straight = port.rif == nullptr;
  const uint64_t mac48 = wire::mac_word(port.mac);
  const uint32_t max_frame = port.max_frame_bytes;
  const PortQos& qos = port.qos;
  prefetch_first(pkts, n);
  for (uint16_t i = 0; i < n; ++i) {
    prefetch_ahead(pkts, i, n);
    const rte_mbuf* m = pkts[i];
    const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
    const uint32_t frame_bytes = m->pkt_len;
    if (!(straight && classify_v4_udp_at(qos, mac48, max_frame, d, m->data_len, frame_bytes, meta[i])) &&
        !classify_general(port, d, m->data_len, frame_bytes, meta[i])) {
      continue;
    }
    ++c.packets;
    c.bytes += frame_bytes;
    on_frame(i, d, meta[i]);
  }
  return c;
}

[[gnu::always_inline]] inline ClassifyCounts classify_burst(const ClassifyPort& port, rte_mbuf* const* pkts, uint16_t n,
                                                            RxMeta* meta) {
  return classify_each(port, pkts, n, meta, [](uint16_t, const uint8_t*, const RxMeta&) {});
}

}  // namespace sf::sw
