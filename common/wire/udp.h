// UDP header (RFC 768). RoCEv2 uses destination port 4791.
#pragma once

#include <cstdint>

#include "common/wire/byte_order.h"

namespace sf::wire {

inline constexpr uint16_t kRoceUdpPort = 4791;

struct UdpHeader {
  static constexpr std::size_t kSize = 8;
  static constexpr std::size_t kOffChecksum = 6;

  Be16 src_port;  // RoCEv2: flow entropy (0xC000..0xFFFF by convention)
  Be16 dst_port;
  Be16 length;    // bytes, header + payload (incl. ICRC for RoCE)
  Be16 checksum;  // 0 = not computed (what RoCE senders write)
};
static_assert(sizeof(UdpHeader) == UdpHeader::kSize);

}  // namespace sf::wire
