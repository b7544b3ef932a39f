// Credit update frame: softfabric's in-band advertisement of receive-buffer
// credits for credit-based link flow control (InfiniBand style, seed 003;
// docs/wire-formats.md "Credit update frame"). Link-local like PFC: it ends at
// the next hop, is never forwarded and never spends a credit itself.
//
// Layout (untagged Ethernet II to DA 03-53-46-43-46-00, EtherType 0x88B5 =
// IEEE 802 Local Experimental EtherType 1, zero-padded to the 60-byte
// minimum). The local experimental EtherType is shared with sf-pktio's test
// frames (tools/sf-pktio), so a credit frame is recognised by EtherType *and*
// destination address (is_credit_frame); other 0x88B5 frames are plain L2
// traffic.
//   Eth(14) | CreditUpdateHeader(4) | CreditEntry(8) x count | pad
// Each entry carries a VL and the cumulative number of credits the receiver
// has granted on it since the link came up (mod 2^32; IB's FCCL), so a lost
// update is healed by the next one and a reordered one takes nothing back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/wire/byte_order.h"
#include "common/wire/ethernet.h"

namespace sf::wire {

inline constexpr uint16_t kEtherTypeCreditFc = 0x88B5;
// Locally administered group address ("SFCF"), never a station address.
inline constexpr MacAddr kCreditFcDst{{0x03, 0x53, 0x46, 0x43, 0x46, 0x00}};
inline constexpr uint8_t kCreditFcVersion = 1;
inline constexpr uint8_t kCreditFcMaxVl = 15;
inline constexpr std::size_t kCreditFcMaxEntries = 16;  // one per VL

enum class CreditOpcode : uint8_t { kUpdate = 0x01 };
std::string_view to_string(CreditOpcode op);

struct CreditUpdateHeader {
  static constexpr std::size_t kSize = 4;
  static constexpr std::size_t kOffVersion = 0;
  static constexpr std::size_t kOffOpcode = 1;
  static constexpr std::size_t kOffCount = 2;
  uint8_t version;   // kCreditFcVersion
  uint8_t opcode;    // CreditOpcode
  uint8_t count;     // entries that follow, 1..16
  uint8_t reserved;  // 0 on send, ignored on receive
};
static_assert(sizeof(CreditUpdateHeader) == CreditUpdateHeader::kSize);

struct CreditEntry {
  static constexpr std::size_t kSize = 8;
  static constexpr std::size_t kOffVl = 0;
  static constexpr std::size_t kOffGranted = 4;
  uint8_t vl;         // 0..15 (low nibble; the high nibble must be 0)
  uint8_t reserved0;  // 0 on send, ignored
  Be16 reserved1;     // 0 on send, ignored
  Be32 granted_total; // cumulative credits granted on `vl` (mod 2^32)
};
static_assert(sizeof(CreditEntry) == CreditEntry::kSize);

inline constexpr std::size_t kCreditFrameMaxBytes =
    EthHeader::kSize + CreditUpdateHeader::kSize + kCreditFcMaxEntries * CreditEntry::kSize;  // 146
// Frame bytes (before the 60-byte minimum) for `count` entries.
constexpr std::size_t credit_frame_bytes(std::size_t count) {
  const std::size_t n = EthHeader::kSize + CreditUpdateHeader::kSize + count * CreditEntry::kSize;
  return n < 60 ? 60 : n;
}

// Whether an Ethernet frame is a credit frame: EtherType (after any VLAN tag,
// `ether_type`) 0x88B5 and DA kCreditFcDst. Its body is then parse_credit_frame's.
constexpr bool is_credit_frame(const EthHeader& eth, uint16_t ether_type) {
  return ether_type == kEtherTypeCreditFc && eth.dst == kCreditFcDst;
}

enum class CreditParseReason : uint8_t {
  kOk,
  kTruncated,        // shorter than Eth + header, or than `count` entries
  kNotCreditFrame,   // EtherType is not 0x88B5 (a VLAN tag in front counts: credit frames are untagged) or DA is not kCreditFcDst
  kBadVersion,       // version != 1
  kUnknownOpcode,    // opcode != update
  kBadCount,         // count 0 or > 16
  kBadVl,            // an entry's VL byte > 15
  kCount,
};
std::string_view to_string(CreditParseReason r);

struct CreditFrameInfo {
  CreditParseReason reason = CreditParseReason::kTruncated;
  const CreditUpdateHeader* header = nullptr;
  std::span<const CreditEntry> entries;  // valid when ok()
  bool ok() const { return reason == CreditParseReason::kOk; }
};

// Decodes a credit frame (first `frame.size()` bytes contiguous). Never reads
// past `frame`; pointers point into it.
CreditFrameInfo parse_credit_frame(std::span<const uint8_t> frame);

struct CreditGrant {
  uint8_t vl = 0;
  uint32_t granted_total = 0;
};

// Writes a credit update from `src` with one entry per grant (1..16 grants)
// into `out`, zero padding to 60 bytes. Returns the frame bytes, or 0 when
// `out` is too small or the grant count or a VL is out of range.
std::size_t build_credit_frame(std::span<uint8_t> out, const MacAddr& src, std::span<const CreditGrant> grants);

}  // namespace sf::wire
