// IPv6 fixed header (RFC 8200) with traffic class (DSCP/ECN) and flow label.
#pragma once

#include <array>
#include <cstdint>

#include "common/wire/byte_order.h"
#include "common/wire/ipv4.h"

namespace sf::wire {

struct Ipv6Addr {
  std::array<uint8_t, 16> bytes{};
  constexpr bool operator==(const Ipv6Addr&) const = default;
};

struct Ipv6Header {
  static constexpr std::size_t kSize = 40;
  static constexpr std::size_t kOffPayloadLength = 4;
  static constexpr std::size_t kOffNextHeader = 6;
  static constexpr std::size_t kOffHopLimit = 7;
  static constexpr std::size_t kOffDst = 24;
  static constexpr uint32_t kFlowLabelMask = 0xFFFFFu;

  Be32 vtc_flow;       // version(4) | traffic class(8) | flow label(20)
  Be16 payload_length; // bytes after this 40-byte header
  uint8_t next_header;
  uint8_t hop_limit;
  Ipv6Addr src;
  Ipv6Addr dst;

  constexpr uint8_t version() const { return static_cast<uint8_t>(vtc_flow.value() >> 28); }
  constexpr uint8_t traffic_class() const { return static_cast<uint8_t>(vtc_flow.value() >> 20); }
  constexpr uint8_t dscp() const { return traffic_class() >> 2; }
  constexpr Ecn ecn() const { return static_cast<Ecn>(traffic_class() & 3u); }
  constexpr uint32_t flow_label() const { return vtc_flow.value() & kFlowLabelMask; }
  // Sets version 6, traffic class and flow label (low 20 bits kept).
  constexpr void set_vtc_flow(uint8_t traffic_class_v, uint32_t flow_label_v) {
    vtc_flow.set((6u << 28) | (static_cast<uint32_t>(traffic_class_v) << 20) | (flow_label_v & kFlowLabelMask));
  }
  constexpr void set_dscp_ecn(uint8_t dscp_v, Ecn e) {
    set_vtc_flow(static_cast<uint8_t>(((dscp_v & 0x3Fu) << 2) | static_cast<uint8_t>(e)), flow_label());
  }
};
static_assert(sizeof(Ipv6Header) == Ipv6Header::kSize);

}  // namespace sf::wire
