// RoCEv2 transport headers (endpoint.md 1.2-1.6): BTH, RETH, AETH, ImmDt, IETH,
// DETH, AtomicETH, AtomicAckETH, the CNP body, opcodes and per-opcode layout.
#pragma once

#include <cstdint>
#include <optional>

#include "common/wire/byte_order.h"
#include "common/wire/psn.h"

namespace sf::wire {

// The full 8-bit BTH opcode: transport (bits 7..5) | operation (bits 4..0).
enum class Opcode : uint8_t {
  kRcSendFirst = 0x00,
  kRcSendMiddle = 0x01,
  kRcSendLast = 0x02,
  kRcSendLastImm = 0x03,
  kRcSendOnly = 0x04,
  kRcSendOnlyImm = 0x05,
  kRcWriteFirst = 0x06,
  kRcWriteMiddle = 0x07,
  kRcWriteLast = 0x08,
  kRcWriteLastImm = 0x09,
  kRcWriteOnly = 0x0A,
  kRcWriteOnlyImm = 0x0B,
  kRcReadRequest = 0x0C,
  kRcReadResponseFirst = 0x0D,
  kRcReadResponseMiddle = 0x0E,
  kRcReadResponseLast = 0x0F,
  kRcReadResponseOnly = 0x10,
  kRcAck = 0x11,
  kRcAtomicAck = 0x12,
  kRcCompareSwap = 0x13,
  kRcFetchAdd = 0x14,
  kRcSendLastInv = 0x16,
  kRcSendOnlyInv = 0x17,
  kUdSendOnly = 0x64,
  kUdSendOnlyImm = 0x65,
  kCnp = 0x81,
};
// "RC_SEND_ONLY", "CNP", ... ; "UNKNOWN" for values not in the enum.
const char* to_string(Opcode op);

// Which headers follow the BTH for an opcode, in wire order
// DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH, then payload.
struct OpcodeLayout {
  bool deth = false;
  bool reth = false;
  bool atomic_eth = false;
  bool aeth = false;
  bool atomic_ack_eth = false;
  bool immdt = false;
  bool ieth = false;
  bool payload = false;   // may carry data bytes (+ pad)
  uint8_t fixed_body_bytes = 0;  // bytes after the ext headers that are not payload (CNP: 16)
  // Total bytes of ext headers (+ fixed body) after the BTH.
  uint32_t ext_bytes() const;
};
// Layout of a known opcode; nullopt for an unknown/unsupported one.
std::optional<OpcodeLayout> opcode_layout(uint8_t opcode);

struct Bth {
  static constexpr std::size_t kSize = 12;
  static constexpr std::size_t kOffFlags = 1;
  static constexpr std::size_t kOffBecnByte = 4;  // FECN|BECN|resv6a: masked out of the ICRC
  static constexpr std::size_t kOffDestQp = 5;
  static constexpr std::size_t kOffPsn = 9;
  static constexpr uint16_t kDefaultPkey = 0xFFFF;

  uint8_t opcode;
  uint8_t flags;      // SE(1) | MigReq(1) | PadCnt(2) | TVer(4)
  Be16 pkey;
  uint8_t fecn_becn;  // FECN(1) | BECN(1) | resv6a(6)
  Be24 dest_qp;
  uint8_t ack_req;    // AckReq(1) | resv7(7)
  Be24 psn;

  constexpr bool se() const { return flags & 0x80u; }
  constexpr bool mig_req() const { return flags & 0x40u; }
  constexpr uint8_t pad_count() const { return (flags >> 4) & 3u; }
  constexpr uint8_t tver() const { return flags & 0x0Fu; }
  constexpr bool fecn() const { return fecn_becn & 0x80u; }
  constexpr bool becn() const { return fecn_becn & 0x40u; }
  constexpr bool ack_requested() const { return ack_req & 0x80u; }
  constexpr Psn get_psn() const { return Psn(psn.value()); }
  constexpr void set_flags(bool se_v, bool mig_v, uint8_t pad_v) {
    flags = static_cast<uint8_t>((se_v ? 0x80u : 0u) | (mig_v ? 0x40u : 0u) | ((pad_v & 3u) << 4));
  }
  constexpr void set_fecn_becn(bool f, bool b) {
    fecn_becn = static_cast<uint8_t>((f ? 0x80u : 0u) | (b ? 0x40u : 0u));
  }
  constexpr void set_ack_req(bool a) { ack_req = a ? 0x80u : 0u; }
};
static_assert(sizeof(Bth) == Bth::kSize);

struct Reth {
  static constexpr std::size_t kSize = 16;
  Be64 va;
  Be32 rkey;
  Be32 dma_length;  // bytes: whole message on FIRST/ONLY and on READ requests
};
static_assert(sizeof(Reth) == Reth::kSize);

// AETH syndrome types (bits 6..5 of the syndrome).
enum class AethType : uint8_t { kAck = 0, kRnrNak = 1, kReserved = 2, kNak = 3 };
const char* to_string(AethType t);
// NAK codes (syndrome bits 4..0 when type is kNak).
enum class NakCode : uint8_t {
  kPsnSequenceError = 0,
  kInvalidRequest = 1,
  kRemoteAccessError = 2,
  kRemoteOperationalError = 3,
  kInvalidRdRequest = 4,
};
inline constexpr uint8_t kAethCreditUnlimited = 0x1F;

struct Aeth {
  static constexpr std::size_t kSize = 4;
  uint8_t syndrome;  // 0 | type(2) | value(5)
  Be24 msn;

  constexpr AethType type() const { return static_cast<AethType>((syndrome >> 5) & 3u); }
  constexpr uint8_t syndrome_value() const { return syndrome & 0x1Fu; }
  static constexpr uint8_t make_syndrome(AethType t, uint8_t value) {
    return static_cast<uint8_t>((static_cast<uint8_t>(t) << 5) | (value & 0x1Fu));
  }
};
static_assert(sizeof(Aeth) == Aeth::kSize);

struct ImmDt {
  static constexpr std::size_t kSize = 4;
  Be32 imm;  // opaque 32 bits
};
static_assert(sizeof(ImmDt) == ImmDt::kSize);

struct Ieth {
  static constexpr std::size_t kSize = 4;
  Be32 rkey;  // R_Key to invalidate
};
static_assert(sizeof(Ieth) == Ieth::kSize);

struct Deth {
  static constexpr std::size_t kSize = 8;
  Be32 qkey;
  uint8_t reserved;
  Be24 src_qp;
};
static_assert(sizeof(Deth) == Deth::kSize);

struct AtomicEth {
  static constexpr std::size_t kSize = 28;
  Be64 va;
  Be32 rkey;
  Be64 swap_add;
  Be64 compare;
};
static_assert(sizeof(AtomicEth) == AtomicEth::kSize);

struct AtomicAckEth {
  static constexpr std::size_t kSize = 8;
  Be64 orig;
};
static_assert(sizeof(AtomicAckEth) == AtomicAckEth::kSize);

// The 16 reserved zero bytes after a CNP's BTH.
struct CnpBody {
  static constexpr std::size_t kSize = 16;
  uint8_t reserved[16];
};
static_assert(sizeof(CnpBody) == CnpBody::kSize);

inline constexpr std::size_t kIcrcBytes = 4;

}  // namespace sf::wire
