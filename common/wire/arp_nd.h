// ARP (RFC 826, Ethernet / IPv4) and IPv6 Neighbor Discovery (RFC 4861:
// Neighbor Solicitation and Advertisement) frames: a parser that names why a
// frame is refused, and builders, with or without an 802.1Q tag. Shared by
// sf-switch's router interfaces (switch/fwd/router_if.h) and usable by any
// endpoint; no DPDK, no allocation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/wire/ethernet.h"
#include "common/wire/ipv4.h"
#include "common/wire/ipv6.h"

namespace sf::wire {

inline constexpr uint16_t kEtherTypeArp = 0x0806;
inline constexpr uint8_t kIpProtoIcmp6 = 58;
inline constexpr uint8_t kIcmp6NeighborSolicit = 135;
inline constexpr uint8_t kIcmp6NeighborAdvert = 136;
inline constexpr uint16_t kArpOpRequest = 1;
inline constexpr uint16_t kArpOpReply = 2;
inline constexpr size_t kArpBodyBytes = 28;
// ICMPv6 NS / NA body the builders write: type..target (24) + one link-layer address option (8).
inline constexpr size_t kNdBodyBytes = 32;
// The longest frame the builders write: Ethernet + tag + IPv6 + NS/NA body.
inline constexpr size_t kNeighborFrameMax = EthHeader::kSize + VlanTag::kSize + Ipv6Header::kSize + kNdBodyBytes;
inline constexpr size_t kMinFrameBytes = 60;  // without FCS: shorter frames are padded

enum class NeighborKind : uint8_t { kArpRequest, kArpReply, kNs, kNa };
std::string_view to_string(NeighborKind k);

// Why parse_neighbor() refused a frame. kNotNeighbor: not ARP and not an
// ICMPv6 NS / NA at all (the caller's business); the others are a bad ARP /
// NS / NA (a receiver counts and drops it).
enum class NeighborError : uint8_t {
  kNone,
  kNotNeighbor,
  kTruncated,      // shorter than its headers / IPv6 payload length
  kArpFormat,      // hardware type not Ethernet, protocol not IPv4, or lengths not 6 / 4
  kArpOpcode,      // neither request nor reply
  kNdHopLimit,     // hop limit not 255 (RFC 4861 7.1.1: from off-link)
  kNdCode,         // ICMPv6 code not 0
  kNdChecksum,     // ICMPv6 checksum wrong
  kNdOption,       // an option of length 0, or past the payload
  kNdTarget,       // target multicast, or an NS from :: to a unicast address (DAD) with a source LLA option
  kCount,
};
std::string_view to_string(NeighborError e);
inline constexpr size_t kNumNeighborErrors = static_cast<size_t>(NeighborError::kCount);

// A parsed ARP / NS / NA. IPv4 addresses fill the first 4 bytes of the 16.
struct NeighborMsg {
  NeighborKind kind = NeighborKind::kArpRequest;
  std::optional<uint16_t> tci;  // 802.1Q tag control (PCP, DEI, VID) when tagged
  MacAddr eth_dst;
  MacAddr eth_src;
  // ARP: sender hardware address. NS: source link-layer address option,
  // NA: target link-layer address option; else the Ethernet source.
  MacAddr sender_mac;
  bool has_lla = false;              // NS / NA carried the option
  std::array<uint8_t, 16> sender_ip{};  // ARP SPA, IPv6 source address
  std::array<uint8_t, 16> target_ip{};  // ARP TPA, NS / NA target address
  std::array<uint8_t, 16> ip_dst{};     // IPv6 destination (NS / NA)
  bool na_solicited = false;
  bool na_override = false;
  bool v6() const { return kind == NeighborKind::kNs || kind == NeighborKind::kNa; }
};

// Parses the `len` bytes of `frame` (the whole frame in one buffer).
NeighborError parse_neighbor(const uint8_t* frame, size_t len, NeighborMsg& out);

// Cheap test on a parsed frame's EtherType (after a tag) and L3 header: ARP,
// or IPv6 carrying ICMPv6 straight after the fixed header (NDP never has
// extension headers). `l3` must hold 40 bytes when ether_type is IPv6.
inline bool maybe_neighbor(uint16_t ether_type, const uint8_t* l3) {
  return ether_type == kEtherTypeArp || (ether_type == kEtherTypeIpv6 && l3[6] == kIpProtoIcmp6);
}

// The Ethernet part of a built frame.
struct NeighborL2 {
  MacAddr dst;
  MacAddr src;
  std::optional<uint16_t> tci;  // 802.1Q tag control to carry, if any
};

// Writes an ARP frame into `out` (kNeighborFrameMax bytes), padded to
// kMinFrameBytes; returns its length.
size_t write_arp(uint8_t* out, const NeighborL2& l2, uint16_t op, const MacAddr& sha, const Ipv4Addr& spa,
                 const MacAddr& tha, const Ipv4Addr& tpa);
// Writes an NS (na false; option: source LLA) or NA (na true; flags S
// when `solicited`, and O; option: target LLA) with hop limit 255 and the
// ICMPv6 checksum; returns its length.
size_t write_nd(uint8_t* out, const NeighborL2& l2, bool na, const Ipv6Addr& src, const Ipv6Addr& dst,
                const Ipv6Addr& target, const MacAddr& lla, bool solicited);

// ICMPv6 checksum (RFC 4443 2.3) over the pseudo header and `len` bytes at
// `icmp`; 0 over a packet whose checksum field is right.
uint16_t icmp6_checksum(const uint8_t* src, const uint8_t* dst, const uint8_t* icmp, size_t len);
// ff02::1:ffXX:XXXX, the solicited-node group of `a`, and its MAC 33:33:ff:XX:XX:XX.
Ipv6Addr solicited_node(const Ipv6Addr& a);
MacAddr ipv6_multicast_mac(const Ipv6Addr& a);
inline constexpr Ipv6Addr kIpv6AllNodes{{0xFF, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01}};
inline constexpr MacAddr kBroadcastMac{{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}};

}  // namespace sf::wire
