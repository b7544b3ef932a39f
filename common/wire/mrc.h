// MRC (Multipath Reliable Connection) wire format (endpoint.md 3.3-3.6,
// docs/mrc.md "Wire"): opcodes in the BTH transport range 110 (0xC0 + op by
// default), the MRC extended transport headers METH, SETH + CC state, NETH,
// PETH, ERTH, EETH as typed views, the per-op header layout, and the SACK
// bitmap arithmetic. RoCEv2 underneath: UDP (4791 by default), BTH, RETH,
// ImmDt, AETH and the ICRC are RoCEv2's. Where the public facts stop, the
// bits here are our choices; docs/mrc.md gives every field with its offset.
#pragma once

#include <cstdint>
#include <optional>

#include "common/wire/byte_order.h"
#include "common/wire/psn.h"
#include "common/wire/roce.h"
#include "common/wire/udp.h"

namespace sf::wire {

// ---------------------------------------------------------------- config

inline constexpr uint8_t kMrcDefaultOpcodeBase = 0xC0;  // BTH transport 110 (reserved by IBA)
inline constexpr uint16_t kMrcDefaultUdpPort = kRoceUdpPort;
// Reserved destination QPN of connectionless endpoint requests / responses.
inline constexpr uint32_t kMrcEndpointQpn = 0x2;
// Ports (planes) a port-status mask can name.
inline constexpr uint8_t kMrcMaxPorts = 32;

// How MRC frames are recognised and built. On the RoCEv2 port an MRC frame is
// told apart by its opcode (transport bits = opcode_base); on another port
// every frame must carry an MRC opcode.
struct MrcWireConfig {
  bool enabled = true;                          // parse_frame: false = MRC opcodes are unknown_opcode
  uint16_t udp_port = kMrcDefaultUdpPort;       // UDP destination port of MRC frames
  uint8_t opcode_base = kMrcDefaultOpcodeBase;  // 0xC0 (transport 110) or 0xE0 (vendor 111)
  // Bit d set: an MRC data frame whose IP DSCP (the ICRC-covered header's or,
  // for SRv6, the outer one's) is d was trimmed by a switch (payload and ICRC
  // are not to be trusted). 0: only a frame cut to its headers counts as trimmed.
  uint64_t trimmed_dscp_mask = 0;
};
// Null when `c` is usable, else what is wrong (opcode base not 0xC0 / 0xE0,
// UDP port 0).
const char* mrc_wire_config_error(const MrcWireConfig& c);

// ---------------------------------------------------------------- opcodes

// The operation: the low 5 bits of the BTH opcode (full opcode = base | op).
// Data ops use the RC WRITE values, feedback and endpoint ops those of the
// third-party reconstruction (endpoint.md 3.3).
enum class MrcOp : uint8_t {
  kWriteFirst = 0x06,
  kWriteMiddle = 0x07,
  kWriteLast = 0x08,
  kWriteLastImm = 0x09,
  kWriteOnly = 0x0A,
  kWriteOnlyImm = 0x0B,
  kAck = 0x11,               // transport ACK (AETH), kept for compatibility
  kEndpointRequest = 0x18,   // ERTH: port-status update or EV probe (QPN 2)
  kEndpointResponse = 0x19,  // EETH
  kSack = 0x1C,              // SETH + CC state (also the reliability-probe response)
  kNack = 0x1D,              // NETH
  kProbe = 0x1E,             // PETH: reliability probe
};
// "MRC_RDMA_WRITE_FIRST", "MRC_SACK", ...; "MRC_UNKNOWN" otherwise.
const char* to_string(MrcOp op);
inline constexpr MrcOp kAllMrcOps[] = {MrcOp::kWriteFirst,     MrcOp::kWriteMiddle,       MrcOp::kWriteLast,
                                       MrcOp::kWriteLastImm,   MrcOp::kWriteOnly,         MrcOp::kWriteOnlyImm,
                                       MrcOp::kAck,            MrcOp::kEndpointRequest,   MrcOp::kEndpointResponse,
                                       MrcOp::kSack,           MrcOp::kNack,              MrcOp::kProbe};

constexpr uint8_t mrc_opcode(MrcOp op, uint8_t base = kMrcDefaultOpcodeBase) {
  return static_cast<uint8_t>(base | static_cast<uint8_t>(op));
}
// The op of a BTH opcode, nullopt when the transport bits are not `base` or
// the op is not defined.
std::optional<MrcOp> mrc_op_of(uint8_t opcode, uint8_t base = kMrcDefaultOpcodeBase);

constexpr bool mrc_is_data(MrcOp op) { return op >= MrcOp::kWriteFirst && op <= MrcOp::kWriteOnlyImm; }
// FIRST or ONLY: the packet starts a message (METH msg_offset 0).
constexpr bool mrc_is_first(MrcOp op) {
  return op == MrcOp::kWriteFirst || op == MrcOp::kWriteOnly || op == MrcOp::kWriteOnlyImm;
}
// LAST or ONLY: the packet ends a message (METH LAST flag set).
constexpr bool mrc_is_last(MrcOp op) {
  return op == MrcOp::kWriteLast || op == MrcOp::kWriteLastImm || op == MrcOp::kWriteOnly ||
         op == MrcOp::kWriteOnlyImm;
}
constexpr bool mrc_has_imm(MrcOp op) { return op == MrcOp::kWriteLastImm || op == MrcOp::kWriteOnlyImm; }

// Headers after the BTH, in wire order METH, RETH, ImmDt, AETH, SETH,
// CC state, NETH, PETH, ERTH, EETH, then payload (data ops only).
struct MrcLayout {
  bool meth = false;
  bool reth = false;
  bool immdt = false;
  bool aeth = false;
  bool seth = false;
  bool cc_state = false;
  bool neth = false;
  bool peth = false;
  bool erth = false;
  bool eeth = false;
  bool payload = false;
  uint32_t ext_bytes() const;
};
MrcLayout mrc_layout(MrcOp op);

// ---------------------------------------------------------------- headers

// METH, MRC extended transport header: in every data packet, right after the
// BTH (before the RETH).
struct Meth {
  static constexpr std::size_t kSize = 20;
  static constexpr std::size_t kOffFlags = 0;
  static constexpr std::size_t kOffRqmsn = 2;
  static constexpr std::size_t kOffMsn = 4;
  static constexpr std::size_t kOffMsgOffset = 8;
  static constexpr std::size_t kOffEv = 12;
  static constexpr std::size_t kOffTxTs = 16;
  static constexpr uint8_t kFlagRtx = 0x80;   // a retransmission
  static constexpr uint8_t kFlagLast = 0x40;  // last packet of its message (== opcode LAST/ONLY)
  static constexpr uint8_t kFlagTs = 0x20;    // tx_ts is valid (to be echoed)

  uint8_t flags;       // RTX(1) LAST(1) TS(1) reserved(5)
  uint8_t reserved;
  Be16 rqmsn;          // immediates sent before this message (IMM message: its index), mod 2^16
  Be32 msn;            // message sequence number on the QP, mod 2^32
  Be32 msg_offset;     // byte offset of this packet's payload in its message
  Be32 ev;             // entropy value the packet was sent on
  Be32 tx_ts;          // sender timestamp, ns mod 2^32 (flag TS)

  constexpr bool rtx() const { return flags & kFlagRtx; }
  constexpr bool last() const { return flags & kFlagLast; }
  constexpr bool ts_valid() const { return flags & kFlagTs; }
};
static_assert(sizeof(Meth) == Meth::kSize);

// SACK "M" (skip) code: what the responder asks the sender to do with the
// EV the SACK reflects (endpoint.md 3.4).
enum class MrcSkip : uint8_t { kNone = 0, kSkipOnce = 1, kAlwaysSkip = 2 };
const char* to_string(MrcSkip m);

// SETH, SACK extended transport header. The SACK's BTH PSN is the cumulative
// ack PSN (CACK: every PSN up to and including it was received).
struct Seth {
  static constexpr std::size_t kSize = 20;
  static constexpr std::size_t kOffFlags = 0;
  static constexpr std::size_t kOffAckPsnOffset = 2;
  static constexpr std::size_t kOffEv = 4;
  static constexpr std::size_t kOffSackOffset = 8;
  static constexpr std::size_t kOffMpr = 10;
  static constexpr std::size_t kOffBitmap = 12;
  static constexpr uint8_t kMaskSkip = 0xC0;     // M, 2 bits
  static constexpr uint8_t kFlagProbeResp = 0x20;  // PR: answers a reliability probe
  static constexpr uint8_t kFlagCe = 0x10;       // the triggering packet arrived CE-marked
  static constexpr unsigned kBitmapBits = 64;

  uint8_t flags;          // M(2) PR(1) CE(1) reserved(4)
  uint8_t reserved;
  Be16 ack_psn_offset;    // int16: triggering PSN - CACK; with PR: the probe id
  Be32 ev;                // reflected EV of the triggering packet / probe
  Be16 sack_offset;       // int16: bitmap base PSN - CACK
  Be16 mpr;               // PSNs past CACK the responder can track (its window)
  Be64 bitmap;            // bit i (LSB = 0): PSN base + i received

  constexpr uint8_t skip_raw() const { return static_cast<uint8_t>(flags >> 6); }
  constexpr MrcSkip skip() const { return static_cast<MrcSkip>(flags >> 6); }
  constexpr bool probe_response() const { return flags & kFlagProbeResp; }
  constexpr bool ce() const { return flags & kFlagCe; }
  constexpr int16_t ack_offset() const { return static_cast<int16_t>(ack_psn_offset.value()); }
  constexpr int16_t base_offset() const { return static_cast<int16_t>(sack_offset.value()); }
};
static_assert(sizeof(Seth) == Seth::kSize);

// CC state, after the SETH in every SACK (input of the congestion control,
// endpoint.md 3.7; counters are cumulative so a lost SACK loses nothing).
struct MrcCcState {
  static constexpr std::size_t kSize = 16;
  static constexpr std::size_t kOffTsEcho = 0;
  static constexpr std::size_t kOffRcvdBytes = 4;
  static constexpr std::size_t kOffEcnCount = 8;
  static constexpr std::size_t kOffOooCount = 10;
  static constexpr std::size_t kOffRcvCwndPen = 12;
  static constexpr std::size_t kOffCcType = 13;
  static constexpr std::size_t kOffServiceTime = 14;
  static constexpr uint8_t kMaxRcvCwndPen = 127;

  Be32 ts_echo;           // METH tx_ts of the triggering packet (PETH tx_ts for a probe)
  Be32 rcvd_bytes;        // payload bytes received on the QP, mod 2^32
  Be16 ecn_count;         // CE-marked data packets received on the QP, mod 2^16
  Be16 ooo_count;         // PSNs received beyond CACK (held out of order)
  uint8_t rcv_cwnd_pen;   // responder back-pressure 0..127 (bit 7 reserved)
  uint8_t cc_type;        // MrcCcType
  Be16 service_time;      // ns from the trigger's arrival to this SACK (saturating)
};
static_assert(sizeof(MrcCcState) == MrcCcState::kSize);

enum class MrcCcType : uint8_t { kNone = 0, kNscc = 1 };

// NACK reasons: the UET PDS numbers (endpoint.md 3.4, 4.4) MRC shares, plus
// ours from 0x20 for what a write-only RC-like responder refuses.
enum class MrcNackReason : uint8_t {
  kTrimmed = 0x01,          // a switch trimmed the packet (congestion): resend now
  kTrimmedLastHop = 0x02,   // trimmed at the last hop (incast): resend, keep the EV
  kNoBitmap = 0x06,         // no PSN tracking state free
  kNoPktBuffer = 0x07,
  kNoResource = 0x0A,
  kPsnOutOfWindow = 0x0B,   // PSN beyond CACK + MPR: resend later
  kUnexpectedEvent = 0x19,  // fatal (UET UNEXP_EVENT)
  kAccessError = 0x20,      // ours: R_Key / MR bounds / access rights (fatal)
  kInvalidRequest = 0x21,   // ours: METH/RETH inconsistent with the message (fatal)
  kWimmOverflow = 0x22,     // ours: more WRITE_IMM in flight than max_wimm_inflight (fatal)
};
// "TRIMMED", ...; "UNKNOWN" for other values.
const char* to_string(MrcNackReason r);
// True for reasons after which the QP goes to error (no retransmission helps).
constexpr bool mrc_nack_fatal(MrcNackReason r) {
  return r == MrcNackReason::kUnexpectedEvent || r == MrcNackReason::kAccessError ||
         r == MrcNackReason::kInvalidRequest || r == MrcNackReason::kWimmOverflow;
}

// NETH, NACK extended transport header. The NACK's BTH PSN is the CACK.
struct Neth {
  static constexpr std::size_t kSize = 16;
  static constexpr std::size_t kOffReason = 0;
  static constexpr std::size_t kOffFlags = 1;
  static constexpr std::size_t kOffVendor = 2;
  static constexpr std::size_t kOffEv = 4;
  static constexpr std::size_t kOffNackPsn = 9;
  static constexpr std::size_t kOffTsEcho = 12;
  static constexpr uint8_t kFlagCe = 0x80;   // the NACKed packet arrived CE-marked
  static constexpr uint8_t kFlagRtx = 0x40;  // the NACKed packet was a retransmission

  uint8_t reason;         // MrcNackReason
  uint8_t flags;          // CE(1) RTX(1) reserved(6)
  uint8_t vendor_code;    // free for diagnostics
  uint8_t reserved;
  Be32 ev;                // reflected EV of the NACKed packet
  uint8_t reserved2;
  Be24 nack_psn;          // the PSN NACKed
  Be32 ts_echo;           // its METH tx_ts

  constexpr MrcNackReason get_reason() const { return static_cast<MrcNackReason>(reason); }
  constexpr bool ce() const { return flags & kFlagCe; }
  constexpr bool rtx() const { return flags & kFlagRtx; }
  constexpr Psn get_nack_psn() const { return Psn(nack_psn.value()); }
};
static_assert(sizeof(Neth) == Neth::kSize);

// PETH, reliability probe: to the peer QP, consumes no PSN (BTH PSN = the
// sender's next PSN), answered by a SACK with PR set whose ack_psn_offset is
// the probe id, ev the probe's EV and ts_echo its tx_ts.
struct Peth {
  static constexpr std::size_t kSize = 16;
  static constexpr std::size_t kOffFlags = 0;
  static constexpr std::size_t kOffProbeId = 2;
  static constexpr std::size_t kOffEv = 4;
  static constexpr std::size_t kOffTxTs = 8;

  uint8_t flags;          // reserved (0)
  uint8_t reserved;
  Be16 probe_id;
  Be32 ev;                // EV the probe was sent on (the path it tests)
  Be32 tx_ts;
  Be32 reserved2;
};
static_assert(sizeof(Peth) == Peth::kSize);

enum class MrcEndpointOp : uint8_t { kPortStatus = 0, kEvProbe = 1 };
const char* to_string(MrcEndpointOp op);
enum class MrcEndpointStatus : uint8_t { kOk = 0, kUnsupported = 1, kRejected = 2 };
const char* to_string(MrcEndpointStatus s);

// ERTH, endpoint request: connectionless (BTH DestQP = kMrcEndpointQpn, PSN 0).
// Port status: bit i of port_status_mask = the sender's port (plane) i is up.
struct Erth {
  static constexpr std::size_t kSize = 16;
  static constexpr std::size_t kOffOp = 0;
  static constexpr std::size_t kOffNumPorts = 1;
  static constexpr std::size_t kOffRequestId = 2;
  static constexpr std::size_t kOffEv = 4;
  static constexpr std::size_t kOffPortStatus = 8;
  static constexpr std::size_t kOffTxTs = 12;

  uint8_t op;             // MrcEndpointOp
  uint8_t num_ports;      // valid bits of port_status_mask, 0..32
  Be16 request_id;        // echoed in the response
  Be32 ev;                // EV the request was sent on
  Be32 port_status_mask;
  Be32 tx_ts;

  constexpr MrcEndpointOp get_op() const { return static_cast<MrcEndpointOp>(op); }
};
static_assert(sizeof(Erth) == Erth::kSize);

// EETH, endpoint response (DestQP = kMrcEndpointQpn, PSN 0).
struct Eeth {
  static constexpr std::size_t kSize = 16;
  static constexpr std::size_t kOffOp = 0;
  static constexpr std::size_t kOffStatus = 1;
  static constexpr std::size_t kOffRequestId = 2;
  static constexpr std::size_t kOffEv = 4;
  static constexpr std::size_t kOffPortStatus = 8;
  static constexpr std::size_t kOffTsEcho = 12;

  uint8_t op;             // echo of the request's op
  uint8_t status;         // MrcEndpointStatus
  Be16 request_id;        // echo
  Be32 ev;                // echo of the request's EV (the path that was tested)
  Be32 port_status_mask;  // the responder's own ports
  Be32 ts_echo;           // the request's tx_ts

  constexpr MrcEndpointOp get_op() const { return static_cast<MrcEndpointOp>(op); }
  constexpr MrcEndpointStatus get_status() const { return static_cast<MrcEndpointStatus>(status); }
};
static_assert(sizeof(Eeth) == Eeth::kSize);

// ---------------------------------------------------------------- parse result

// What parse_frame() found of an MRC frame (FrameInfo::mrc, kind kMrc). The
// BTH, RETH, ImmDt and AETH are FrameInfo's usual pointers.
struct MrcInfo {
  MrcOp op = MrcOp::kWriteOnly;
  // A data frame cut by a switch: headers only are valid; payload_bytes 0,
  // no ICRC (icrc_offset 0). Classified by length (headers but no room for
  // the ICRC) or by MrcWireConfig::trimmed_dscp_mask.
  bool trimmed = false;
  const Meth* meth = nullptr;
  const Seth* seth = nullptr;
  const MrcCcState* cc = nullptr;
  const Neth* neth = nullptr;
  const Peth* peth = nullptr;
  const Erth* erth = nullptr;
  const Eeth* eeth = nullptr;
};

// ---------------------------------------------------------------- SACK bitmap

// First PSN the bitmap covers.
constexpr Psn mrc_sack_base(Psn cack, int16_t sack_offset) {
  return Psn(cack.value() + static_cast<uint32_t>(static_cast<int32_t>(sack_offset)));
}
// Bit index of `psn` in a bitmap starting at `base`, -1 when outside [base, base + 64).
constexpr int mrc_sack_bit(Psn base, Psn psn) {
  const int32_t d = Psn::diff(psn, base);
  return d >= 0 && d < static_cast<int32_t>(Seth::kBitmapBits) ? d : -1;
}
// Bitmap with `psn`'s bit set (unchanged when outside the window).
constexpr uint64_t mrc_sack_set(uint64_t bitmap, Psn base, Psn psn) {
  const int b = mrc_sack_bit(base, psn);
  return b < 0 ? bitmap : bitmap | (uint64_t{1} << b);
}
// What a SACK says about `psn`: received when at or before CACK or its bit is
// set; not received when in the bitmap with its bit clear; unknown otherwise.
enum class MrcSackState : uint8_t { kReceived, kMissing, kUnknown };
constexpr MrcSackState mrc_sack_state(Psn cack, int16_t sack_offset, uint64_t bitmap, Psn psn) {
  if (!psn.after(cack)) return MrcSackState::kReceived;
  const int b = mrc_sack_bit(mrc_sack_base(cack, sack_offset), psn);
  if (b < 0) return MrcSackState::kUnknown;
  return (bitmap >> b) & 1u ? MrcSackState::kReceived : MrcSackState::kMissing;
}

}  // namespace sf::wire
