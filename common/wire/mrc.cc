// MRC opcode names, per-op layout and wire config checks. See mrc.h.
#include "common/wire/mrc.h"

namespace sf::wire {

const char* mrc_wire_config_error(const MrcWireConfig& c) {
  if (c.opcode_base != 0xC0 && c.opcode_base != 0xE0) {
    return "MRC opcode base must be 0xC0 (BTH transport 110) or 0xE0 (vendor 111): other transports are IBA's";
  }
  if (c.udp_port == 0) return "MRC UDP port must not be 0";
  return nullptr;
}

const char* to_string(MrcOp op) {
  switch (op) {
    case MrcOp::kWriteFirst: return "MRC_RDMA_WRITE_FIRST";
    case MrcOp::kWriteMiddle: return "MRC_RDMA_WRITE_MIDDLE";
    case MrcOp::kWriteLast: return "MRC_RDMA_WRITE_LAST";
    case MrcOp::kWriteLastImm: return "MRC_RDMA_WRITE_LAST_WITH_IMMEDIATE";
    case MrcOp::kWriteOnly: return "MRC_RDMA_WRITE_ONLY";
    case MrcOp::kWriteOnlyImm: return "MRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE";
    case MrcOp::kAck: return "MRC_ACKNOWLEDGE";
    case MrcOp::kEndpointRequest: return "MRC_ENDPOINT_REQUEST";
    case MrcOp::kEndpointResponse: return "MRC_ENDPOINT_RESPONSE";
    case MrcOp::kSack: return "MRC_SACK";
    case MrcOp::kNack: return "MRC_NACK";
    case MrcOp::kProbe: return "MRC_PROBE";
  }
  return "MRC_UNKNOWN";
}

const char* to_string(MrcSkip m) {
  switch (m) {
    case MrcSkip::kNone: return "none";
    case MrcSkip::kSkipOnce: return "skip_once";
    case MrcSkip::kAlwaysSkip: return "always_skip";
  }
  return "reserved";
}

const char* to_string(MrcNackReason r) {
  switch (r) {
    case MrcNackReason::kTrimmed: return "TRIMMED";
    case MrcNackReason::kTrimmedLastHop: return "TRIMMED_LASTHOP";
    case MrcNackReason::kNoBitmap: return "NO_BITMAP";
    case MrcNackReason::kNoPktBuffer: return "NO_PKT_BUFFER";
    case MrcNackReason::kNoResource: return "NO_RESOURCE";
    case MrcNackReason::kPsnOutOfWindow: return "PSN_OOR_WINDOW";
    case MrcNackReason::kUnexpectedEvent: return "UNEXP_EVENT";
    case MrcNackReason::kAccessError: return "ACCESS_ERROR";
    case MrcNackReason::kInvalidRequest: return "INVALID_REQUEST";
    case MrcNackReason::kWimmOverflow: return "WIMM_OVERFLOW";
  }
  return "UNKNOWN";
}

const char* to_string(MrcEndpointOp op) {
  switch (op) {
    case MrcEndpointOp::kPortStatus: return "port_status";
    case MrcEndpointOp::kEvProbe: return "ev_probe";
  }
  return "unknown";
}

const char* to_string(MrcEndpointStatus s) {
  switch (s) {
    case MrcEndpointStatus::kOk: return "ok";
    case MrcEndpointStatus::kUnsupported: return "unsupported";
    case MrcEndpointStatus::kRejected: return "rejected";
  }
  return "unknown";
}

std::optional<MrcOp> mrc_op_of(uint8_t opcode, uint8_t base) {
  if ((opcode & 0xE0u) != base) return std::nullopt;
  const auto op = static_cast<MrcOp>(opcode & 0x1Fu);
  for (MrcOp o : kAllMrcOps) {
    if (o == op) return op;
  }
  return std::nullopt;
}

uint32_t MrcLayout::ext_bytes() const {
  uint32_t n = 0;
  if (meth) n += Meth::kSize;
  if (reth) n += Reth::kSize;
  if (immdt) n += ImmDt::kSize;
  if (aeth) n += Aeth::kSize;
  if (seth) n += Seth::kSize;
  if (cc_state) n += MrcCcState::kSize;
  if (neth) n += Neth::kSize;
  if (peth) n += Peth::kSize;
  if (erth) n += Erth::kSize;
  if (eeth) n += Eeth::kSize;
  return n;
}

MrcLayout mrc_layout(MrcOp op) {
  MrcLayout l;
  if (mrc_is_data(op)) {
    l.meth = l.reth = l.payload = true;
    l.immdt = mrc_has_imm(op);
    return l;
  }
  switch (op) {
    case MrcOp::kAck: l.aeth = true; break;
    case MrcOp::kSack: l.seth = l.cc_state = true; break;
    case MrcOp::kNack: l.neth = true; break;
    case MrcOp::kProbe: l.peth = true; break;
    case MrcOp::kEndpointRequest: l.erth = true; break;
    case MrcOp::kEndpointResponse: l.eeth = true; break;
    default: break;
  }
  return l;
}

}  // namespace sf::wire
