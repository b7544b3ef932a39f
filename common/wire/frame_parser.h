// One-call frame decoder: Eth[/802.1Q] / IPv4 | IPv6 [/ inner IPv6 for SRv6] /
// UDP / BTH / ext headers per opcode / payload / pad / ICRC (RoCEv2, or MRC:
// mrc.h), or MAC Control (PAUSE, PFC). Never reads past the given bytes, never allocates; every
// rejection carries a ParseReason. The ICRC is checked separately (icrc.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "common/wire/ethernet.h"
#include "common/wire/ipv4.h"
#include "common/wire/ipv6.h"
#include "common/wire/mac_control.h"
#include "common/wire/mrc.h"
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
  // MRC (mrc.h): the frame has an MRC opcode and a sound BTH, but
  kMrcBadMeth,             // METH LAST flag != opcode LAST/ONLY, or FIRST/ONLY with msg_offset != 0
  kMrcBadReth,             // msg_offset + payload past the RETH DMA length (or short of it on LAST/ONLY)
  kMrcBadSack,             // SETH M = 3 (reserved) or rcv_cwnd_pen > 127
  kMrcBadNack,             // NETH reason 0
  kMrcBadEndpoint,         // endpoint request/response not on QPN 2, unknown op, or num_ports > 32
};
const char* to_string(ParseReason r);

enum class FrameKind : uint8_t { kUnknown, kRoce, kMacControl, kMrc };
const char* to_string(FrameKind k);

enum class IpVersion : uint8_t { kNone = 0, kV4 = 4, kV6 = 6 };

struct ParseOptions {
  bool verify_ipv4_checksum = true;
  // Stop once UDP is sound (reason kOk, kind kUnknown, no RoCE fields): for
  // forwarders, to which BTH and what follows are payload.
  bool stop_at_udp = false;
  // MRC recognition (port, opcode range, trim code points); see mrc.h. A
  // config with mrc_wire_config_error() != null disables MRC parsing.
  MrcWireConfig mrc{};
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

  // kind kMrc: the MRC headers (bth/reth/immdt/aeth above as for RoCE).
  // `layout` then holds the RoCE-shaped part (reth, immdt, aeth, payload).
  MrcInfo mrc;

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

// What a forwarder needs of a frame, in 8 bytes (parse_fwd()).
struct FwdHeaders {
  uint16_t ether_type = 0;  // after the VLAN tag, host order
  uint8_t ip_version = 0;   // 0 (not IP), 4 or 6
  uint8_t l3_offset = 0;    // 14, or 18 behind a VLAN tag
  bool vlan = false;        // 802.1Q tag at offset 14
  uint8_t pad_ = 0;
  uint16_t udp_offset = 0;  // 0: the IP packet is not UDP
};

// The fast path of parse_frame(head, frame_bytes, {verify_ipv4_checksum,
// stop_at_udp = true}) for the common, well-formed frames of a forwarder:
// Ethernet [802.1Q], then IPv4 with IHL 5 (not a fragment) or IPv6 whose
// next header is not IPv6-in-IPv6, then UDP or another protocol; or any
// EtherType other than IPv4 / IPv6 / MAC Control. Returns true, with `out`
// set, only when parse_frame() would accept the frame with reason kOk (UDP
// sound), kNotUdp or kUnsupportedEtherType and the same headers; false for
// everything else (not decided here: call parse_frame()). Inline, no
// FrameInfo: the switch calls it for every packet.
namespace detail {
inline uint16_t load_be16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return __builtin_bswap16(v);
}
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t load_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
// RFC 1071 for an IHL-5 IPv4 header: true when its checksum is right, i.e.
// the one's complement sum of its ten 16-bit words is 0xFFFF (-0). Summed
// as two 64-bit words and one 32-bit word with end-around carry (add, adc),
// which keeps the sum mod 2^64 - 1 and so mod 0xFFFF (a divisor of it);
// byte-order independent. The folded 16-bit sum is 0xFFFF exactly when that
// sum is a non-zero multiple of 0xFFFF (zero only for an all-zero header),
// tested with one multiply (x % 0xFFFF == 0), not four folds.
[[gnu::always_inline]] inline bool ipv4_ihl5_checksum_ok(const uint8_t* ip) {
  uint64_t s;
  uint64_t t;
  const bool c1 = __builtin_add_overflow(load_u64(ip), load_u64(ip + 8), &s);
  const bool c2 = __builtin_add_overflow(s, uint64_t{load_u32(ip + 16)} + c1, &t);
  t += c2;  // no carry out: after a carry t < 2^32
  return t != 0 && t % 0xFFFFu == 0;
}
}  // namespace detail

[[gnu::always_inline]] inline bool parse_fwd(const uint8_t* head, uint32_t head_bytes, uint32_t frame_bytes,
                                             bool verify_ipv4_checksum, FwdHeaders& out) {
  using detail::load_be16;
  if (head_bytes > frame_bytes || head_bytes < EthHeader::kSize) return false;
  uint32_t off = EthHeader::kSize;
  uint16_t et = load_be16(head + EthHeader::kOffEtherType);
  out.vlan = et == kEtherTypeVlan;
  if (out.vlan) {
    if (head_bytes < off + VlanTag::kSize) return false;
    et = load_be16(head + off + 2);
    off += VlanTag::kSize;
  }
  out.ether_type = et;
  out.l3_offset = static_cast<uint8_t>(off);
  out.udp_offset = 0;
  uint64_t ip_end = 0;
  uint32_t udp = 0;
  const uint8_t* ip = head + off;
  if (et == kEtherTypeIpv4) {
    if (head_bytes < off + Ipv4Header::kSize) return false;
    if (ip[0] != 0x45) return false;  // version 4, IHL 5; longer headers: parse_frame()
    const uint32_t total = load_be16(ip + 2);
    if (total < Ipv4Header::kSize || uint64_t{off} + total > frame_bytes) return false;
    if (verify_ipv4_checksum && !detail::ipv4_ihl5_checksum_ok(ip)) return false;
    if ((load_be16(ip + 6) & 0x3FFFu) != 0) return false;  // MF or offset: a fragment
    out.ip_version = 4;
    if (ip[9] != kIpProtoUdp) return true;
    udp = off + static_cast<uint32_t>(Ipv4Header::kSize);
    ip_end = uint64_t{off} + total;
  } else if (et == kEtherTypeIpv6) {
    if (head_bytes < off + Ipv6Header::kSize) return false;
    if ((ip[0] >> 4) != 6) return false;
    ip_end = uint64_t{off} + Ipv6Header::kSize + load_be16(ip + 4);
    if (ip_end > frame_bytes) return false;
    const uint8_t nh = ip[6];
    if (nh == kIpProtoIpv6) return false;  // SRv6 encapsulation: parse_frame()
    out.ip_version = 6;
    if (nh != kIpProtoUdp) return true;
    udp = off + static_cast<uint32_t>(Ipv6Header::kSize);
  } else if (et == kEtherTypeMacControl) {
    return false;
  } else {
    out.ip_version = 0;
    return true;
  }
  if (head_bytes < udp + UdpHeader::kSize) return false;
  const uint32_t len = load_be16(head + udp + 4);
  if (len < UdpHeader::kSize || udp + len > ip_end) return false;
  out.udp_offset = static_cast<uint16_t>(udp);
  return true;
}

}  // namespace sf::wire
