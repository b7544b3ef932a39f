// Ethernet II header, 802.1Q tag and MAC addresses (IEEE 802.3 / 802.1Q).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "common/wire/byte_order.h"

namespace sf::wire {

// EtherType values (host order).
inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;
inline constexpr uint16_t kEtherTypeMacControl = 0x8808;

struct MacAddr {
  std::array<uint8_t, 6> bytes{};
  constexpr bool operator==(const MacAddr&) const = default;
};
static_assert(sizeof(MacAddr) == 6);

// The six bytes of a MAC address as the low 48 bits of a word (little-endian:
// what a 64-bit load of a frame's first eight bytes holds there for its
// destination). Built in registers from a 4- and a 2-byte load: assembled in
// memory (two narrow stores, then a wide load) it stalls store forwarding.
inline uint64_t mac_word(const std::array<uint8_t, 6>& mac) {
  static_assert(std::endian::native == std::endian::little);
  uint32_t a;
  uint16_t b;
  std::memcpy(&a, mac.data(), 4);
  std::memcpy(&b, mac.data() + 4, 2);
  return uint64_t{a} | uint64_t{b} << 32;
}

// 01-80-C2-00-00-01: destination of PAUSE and PFC frames.
inline constexpr MacAddr kMacControlDst{{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01}};

struct EthHeader {
  static constexpr std::size_t kSize = 14;
  static constexpr std::size_t kOffDst = 0;
  static constexpr std::size_t kOffSrc = 6;
  static constexpr std::size_t kOffEtherType = 12;

  MacAddr dst;
  MacAddr src;
  Be16 ether_type;  // or TPID 0x8100 when a VLAN tag follows
};
static_assert(sizeof(EthHeader) == EthHeader::kSize);

// The 4 bytes after the source MAC when TPID = 0x8100 is seen: TCI + inner type.
// Viewed at frame offset 14 as {tci, ether_type} (the TPID is EthHeader::ether_type).
struct VlanTag {
  static constexpr std::size_t kSize = 4;
  Be16 tci;         // PCP(3) | DEI(1) | VID(12)
  Be16 ether_type;  // encapsulated EtherType

  constexpr uint8_t pcp() const { return static_cast<uint8_t>(tci.value() >> 13); }
  constexpr bool dei() const { return (tci.value() >> 12) & 1u; }
  constexpr uint16_t vid() const { return tci.value() & 0x0FFFu; }
  // pcp in 0..7, vid in 0..4095 (excess bits dropped).
  constexpr void set_tci(uint8_t pcp_v, bool dei_v, uint16_t vid_v) {
    tci.set(static_cast<uint16_t>(((pcp_v & 7u) << 13) | (dei_v ? 1u << 12 : 0u) | (vid_v & 0x0FFFu)));
  }
};
static_assert(sizeof(VlanTag) == VlanTag::kSize);

}  // namespace sf::wire
