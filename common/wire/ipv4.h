// IPv4 header (RFC 791) with DSCP/ECN accessors (RFC 2474/3168) and the header
// checksum (RFC 1071).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "common/wire/byte_order.h"

namespace sf::wire {

inline constexpr uint8_t kIpProtoUdp = 17;
inline constexpr uint8_t kIpProtoIpv6 = 41;  // IPv6-in-IP (SRv6 encapsulation)

// ECN codepoints (2 low bits of TOS / traffic class).
enum class Ecn : uint8_t { kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3 };
const char* to_string(Ecn e);

struct Ipv4Addr {
  std::array<uint8_t, 4> bytes{};
  constexpr bool operator==(const Ipv4Addr&) const = default;
};

struct Ipv4Header {
  static constexpr std::size_t kSize = 20;  // without options
  static constexpr std::size_t kOffTos = 1;
  static constexpr std::size_t kOffTotalLength = 2;
  static constexpr std::size_t kOffTtl = 8;
  static constexpr std::size_t kOffProtocol = 9;
  static constexpr std::size_t kOffChecksum = 10;
  static constexpr uint16_t kFlagDf = 0x4000;
  static constexpr uint16_t kFlagMf = 0x2000;
  static constexpr uint16_t kFragOffsetMask = 0x1FFF;

  uint8_t version_ihl;  // version(4) | IHL in 32-bit words(4)
  uint8_t tos;          // DSCP(6) | ECN(2)
  Be16 total_length;    // bytes, header included
  Be16 id;
  Be16 flags_frag;      // flags(3) | fragment offset in 8-byte units(13)
  uint8_t ttl;
  uint8_t protocol;
  Be16 checksum;
  Ipv4Addr src;
  Ipv4Addr dst;

  constexpr uint8_t version() const { return version_ihl >> 4; }
  constexpr std::size_t header_bytes() const { return static_cast<std::size_t>(version_ihl & 0x0Fu) * 4; }
  constexpr uint8_t dscp() const { return tos >> 2; }
  constexpr Ecn ecn() const { return static_cast<Ecn>(tos & 3u); }
  constexpr void set_dscp_ecn(uint8_t dscp_v, Ecn e) {
    tos = static_cast<uint8_t>(((dscp_v & 0x3Fu) << 2) | static_cast<uint8_t>(e));
  }
  constexpr bool is_fragment() const {
    return (flags_frag.value() & (kFlagMf | kFragOffsetMask)) != 0;
  }
};
static_assert(sizeof(Ipv4Header) == Ipv4Header::kSize);

// One's-complement checksum of an IPv4 header of `header.size()` bytes, computed
// with the checksum field taken as zero. Returns the value to store (host order).
uint16_t ipv4_checksum(std::span<const uint8_t> header);
// True when the header (with its stored checksum) sums to 0xFFFF.
bool ipv4_checksum_ok(std::span<const uint8_t> header);
// Computes and stores the checksum of the header at `h` (header_bytes() long,
// all readable at `h`).
void ipv4_set_checksum(Ipv4Header& h);

}  // namespace sf::wire
