// One-call frame decoder: Eth[/802.1Q] / IPv4 | IPv6 [/ inner IPv6 for SRv6] /
// UDP / BTH / ext headers per opcode / payload / pad / ICRC, or MAC Control
// (PAUSE, PFC). Never reads past the given bytes, never allocates; every
// rejection carries a ParseReason. The ICRC is checked separately (icrc.h).
#pragma once

#include <cstdint>
#include <span>

#include "common/wire/ethernet.h"
#include "common/wire/ipv4.h"
#include "common/wire/ipv6.h"
#include "common/wire/mac_control.h"
#include "common/wire/roce.h"
#include "common/wire/udp.h"

namespace sf::wire {

enum class ParseReason : uint8_t {
  kOk,
  kTruncated,              // a header or the IP/UDP length runs past the frame
  kNotContiguous,          // a header lies beyond the contiguous prefix (mbuf first segment)
  kUnsupportedEtherType,   // not IPv4 / IPv6 / MAC Control
  kBadVersion,             // IP version nibble wrong
  kBadIhl,                 // IPv4 IHL < 5
  kBadLength,              // IP/UDP length fields inconsistent or too short for the headers
  kBadChecksum,            // IPv4 header checksum
  kFragmented,             // IPv4 fragment (RoCE never fragments)
  kNotUdp,                 // IP protocol / next header not UDP (nor 41 for SRv6)
  kNotRoce,                // UDP destination port is not 4791
  kBadTver,                // BTH transport version != 0
  kUnknownOpcode,          // BTH opcode without a known header layout
  kBadPad,                 // BTH PadCnt larger than the payload
  kUnknownMacControlOpcode,
};
const char* to_string(ParseReason r);

enum class FrameKind : uint8_t { kUnknown, kRoce, kMacControl };
const char* to_string(FrameKind k);

enum class IpVersion : uint8_t { kNone = 0, kV4 = 4, kV6 = 6 };

struct ParseOptions {
  bool verify_ipv4_checksum = true;
  // Stop once UDP is sound (reason kOk, kind kUnknown, no RoCE fields): for
  // forwarders, to which BTH and what follows are payload.
  bool stop_at_udp = false;
};

// Result of parse_frame(). Pointers point into the parsed bytes (valid while
// they are) and are null when the header is absent or parsing stopped before
// it; offsets are bytes from the frame start. On a rejection the fields decoded
// before the failing header stay set (e.g. bth on kUnknownOpcode).
struct FrameInfo {
  ParseReason reason = ParseReason::kTruncated;
  FrameKind kind = FrameKind::kUnknown;
  uint32_t frame_bytes = 0;

  const EthHeader* eth = nullptr;
  const VlanTag* vlan = nullptr;      // null when untagged
  uint16_t ether_type = 0;            // after the VLAN tag, host order

  // IP: `ipv4`/`ipv6` is the header directly before UDP (the one the ICRC
  // covers). For SRv6 IPv6-in-IPv6, `outer_ipv6` is the encapsulating header.
  IpVersion ip_version = IpVersion::kNone;
  const Ipv4Header* ipv4 = nullptr;
  const Ipv6Header* ipv6 = nullptr;
  const Ipv6Header* outer_ipv6 = nullptr;
  uint32_t l3_offset = 0;             // outermost IP header
  uint32_t ip_offset = 0;             // ICRC-covered IP header
  uint32_t ip_header_bytes = 0;

  const UdpHeader* udp = nullptr;
  uint32_t udp_offset = 0;
  uint32_t udp_end = 0;               // one past the UDP payload (Ethernet pad excluded)

  const Bth* bth = nullptr;
  uint32_t bth_offset = 0;
  OpcodeLayout layout;
  const Deth* deth = nullptr;
  const Reth* reth = nullptr;
  const AtomicEth* atomic_eth = nullptr;
  const Aeth* aeth = nullptr;
  const AtomicAckEth* atomic_ack_eth = nullptr;
  const ImmDt* immdt = nullptr;
  const Ieth* ieth = nullptr;
  uint32_t payload_offset = 0;
  uint32_t payload_bytes = 0;         // data bytes, pad excluded
  uint32_t pad_bytes = 0;
  uint32_t icrc_offset = 0;           // 0 when no ICRC position is known

  MacControlOpcode mac_opcode = MacControlOpcode::kPause;
  const PauseBody* pause = nullptr;
  const PfcBody* pfc = nullptr;
  bool mac_control_dst_ok = false;    // DA == 01-80-C2-00-00-01

  bool ok() const { return reason == ParseReason::kOk; }
};

// Parses a frame whose first head.size() bytes are contiguous at head and
// whose total length is frame_bytes (>= head.size(); > for a multi-segment
// mbuf whose first segment is `head`). All headers must lie in `head`; the
// payload and ICRC only need to lie within frame_bytes.
FrameInfo parse_frame(std::span<const uint8_t> head, uint32_t frame_bytes, ParseOptions opt = {});
inline FrameInfo parse_frame(std::span<const uint8_t> frame, ParseOptions opt = {}) {
  return parse_frame(frame, static_cast<uint32_t>(frame.size()), opt);
}

}  // namespace sf::wire
