// Builders for RoCEv2 frames over Eth[/802.1Q]/IPv4 | IPv6 | SRv6 (IPv6-in-IPv6)
// /UDP. They write into a caller buffer (no allocation), set every length,
// the IPv4 checksum(s), UDP checksum 0, BTH PadCnt, zero pad and the ICRC.
// Frames are not padded to the 60-byte Ethernet minimum (the PMD does that).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <variant>

#include "common/wire/ethernet.h"
#include "common/wire/ipv4.h"
#include "common/wire/ipv6.h"
#include "common/wire/roce.h"

namespace sf::wire {

struct VlanSpec {
  uint8_t pcp = 0;   // 0..7
  bool dei = false;
  uint16_t vid = 0;  // 0..4095
};

struct L2Spec {
  MacAddr dst;
  MacAddr src;
  std::optional<VlanSpec> vlan;
};

struct Ipv4Spec {
  Ipv4Addr src;
  Ipv4Addr dst;
  uint8_t dscp = 0;
  Ecn ecn = Ecn::kNotEct;
  uint8_t ttl = 64;
  uint16_t id = 0;
  bool dont_fragment = true;  // rxe sets DF
};

struct Ipv6Spec {
  Ipv6Addr src;
  Ipv6Addr dst;
  uint8_t dscp = 0;
  Ecn ecn = Ecn::kNotEct;
  uint32_t flow_label = 0;  // 20 bits
  uint8_t hop_limit = 64;
};

// IPv6-in-IPv6 with an SRv6 uSID destination: outer.dst = block | uSIDs
// (see srv6.h), outer next header 41; the ICRC covers the inner header.
struct Srv6Spec {
  Ipv6Spec outer;
  Ipv6Spec inner;
};

using L3Spec = std::variant<Ipv4Spec, Ipv6Spec, Srv6Spec>;

struct BthSpec {
  Opcode opcode = Opcode::kRcSendOnly;
  bool se = false;
  bool mig_req = false;
  uint16_t pkey = Bth::kDefaultPkey;
  bool fecn = false;
  bool becn = false;
  uint32_t dest_qp = 0;  // 24 bits
  bool ack_req = false;
  Psn psn;
};

// Values of the ext headers; only those the opcode's layout has are written.
struct ExtSpec {
  uint64_t reth_va = 0;
  uint32_t reth_rkey = 0;
  uint32_t reth_dma_length = 0;  // bytes
  uint8_t aeth_syndrome = Aeth::make_syndrome(AethType::kAck, kAethCreditUnlimited);
  uint32_t aeth_msn = 0;         // 24 bits
  uint32_t immdt = 0;            // written big-endian as given
  uint32_t ieth_rkey = 0;
  uint32_t deth_qkey = 0;
  uint32_t deth_src_qp = 0;
  uint64_t atomic_va = 0;
  uint32_t atomic_rkey = 0;
  uint64_t atomic_swap_add = 0;
  uint64_t atomic_compare = 0;
  uint64_t atomic_ack_orig = 0;
};

struct RoceFrameSpec {
  L2Spec l2;
  L3Spec l3 = Ipv4Spec{};
  uint16_t udp_src_port = 0xC000;  // entropy
  BthSpec bth;
  ExtSpec ext;
};

enum class BuildError : uint8_t { kOk, kBufferTooSmall, kUnknownOpcode, kPayloadNotAllowed, kTooLong };
const char* to_string(BuildError e);

struct BuildResult {
  BuildError error = BuildError::kOk;
  std::size_t header_bytes = 0;  // Eth .. end of ext headers (payload offset)
  std::size_t frame_bytes = 0;   // whole frame incl. pad and ICRC
  bool ok() const { return error == BuildError::kOk; }
};

// Bytes the frame will take (headers + payload + pad + ICRC); 0 for an unknown opcode.
std::size_t roce_frame_bytes(const RoceFrameSpec& spec, std::size_t payload_bytes);

// Writes all headers for a frame with `payload_bytes` of payload, with every
// length and PadCnt set, but neither payload, pad nor ICRC (for mbuf chains:
// append payload + pad, then icrc_store_mbuf). `out` needs header_bytes.
BuildResult build_roce_headers(std::span<uint8_t> out, const RoceFrameSpec& spec, std::size_t payload_bytes);

// Writes a complete frame: headers, payload, zero pad, ICRC.
BuildResult build_roce_frame(std::span<uint8_t> out, const RoceFrameSpec& spec, std::span<const uint8_t> payload);

// A CNP (endpoint.md 1.6): opcode 0x81, BECN=1, P_Key 0xFFFF, PSN 0, 16 zero
// bytes. Uses spec.l2/l3/udp_src_port and spec.bth.dest_qp only.
BuildResult build_cnp_frame(std::span<uint8_t> out, const RoceFrameSpec& spec);

}  // namespace sf::wire
