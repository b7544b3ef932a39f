// RoCEv2 opcode names and per-opcode header layout (endpoint.md 1.3).
#include "common/wire/roce.h"

namespace sf::wire {

const char* to_string(Opcode op) {
  switch (op) {
    case Opcode::kRcSendFirst: return "RC_SEND_FIRST";
    case Opcode::kRcSendMiddle: return "RC_SEND_MIDDLE";
    case Opcode::kRcSendLast: return "RC_SEND_LAST";
    case Opcode::kRcSendLastImm: return "RC_SEND_LAST_WITH_IMMEDIATE";
    case Opcode::kRcSendOnly: return "RC_SEND_ONLY";
    case Opcode::kRcSendOnlyImm: return "RC_SEND_ONLY_WITH_IMMEDIATE";
    case Opcode::kRcWriteFirst: return "RC_RDMA_WRITE_FIRST";
    case Opcode::kRcWriteMiddle: return "RC_RDMA_WRITE_MIDDLE";
    case Opcode::kRcWriteLast: return "RC_RDMA_WRITE_LAST";
    case Opcode::kRcWriteLastImm: return "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE";
    case Opcode::kRcWriteOnly: return "RC_RDMA_WRITE_ONLY";
    case Opcode::kRcWriteOnlyImm: return "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE";
    case Opcode::kRcReadRequest: return "RC_RDMA_READ_REQUEST";
    case Opcode::kRcReadResponseFirst: return "RC_RDMA_READ_RESPONSE_FIRST";
    case Opcode::kRcReadResponseMiddle: return "RC_RDMA_READ_RESPONSE_MIDDLE";
    case Opcode::kRcReadResponseLast: return "RC_RDMA_READ_RESPONSE_LAST";
    case Opcode::kRcReadResponseOnly: return "RC_RDMA_READ_RESPONSE_ONLY";
    case Opcode::kRcAck: return "RC_ACKNOWLEDGE";
    case Opcode::kRcAtomicAck: return "RC_ATOMIC_ACKNOWLEDGE";
    case Opcode::kRcCompareSwap: return "RC_COMPARE_SWAP";
    case Opcode::kRcFetchAdd: return "RC_FETCH_ADD";
    case Opcode::kRcSendLastInv: return "RC_SEND_LAST_WITH_INVALIDATE";
    case Opcode::kRcSendOnlyInv: return "RC_SEND_ONLY_WITH_INVALIDATE";
    case Opcode::kUdSendOnly: return "UD_SEND_ONLY";
    case Opcode::kUdSendOnlyImm: return "UD_SEND_ONLY_WITH_IMMEDIATE";
    case Opcode::kCnp: return "CNP";
  }
  return "UNKNOWN";
}

const char* to_string(AethType t) {
  switch (t) {
    case AethType::kAck: return "ack";
    case AethType::kRnrNak: return "rnr_nak";
    case AethType::kReserved: return "reserved";
    case AethType::kNak: return "nak";
  }
  return "?";
}

uint32_t OpcodeLayout::ext_bytes() const {
  uint32_t n = fixed_body_bytes;
  if (deth) n += Deth::kSize;
  if (reth) n += Reth::kSize;
  if (atomic_eth) n += AtomicEth::kSize;
  if (aeth) n += Aeth::kSize;
  if (atomic_ack_eth) n += AtomicAckEth::kSize;
  if (immdt) n += ImmDt::kSize;
  if (ieth) n += Ieth::kSize;
  return n;
}

std::optional<OpcodeLayout> opcode_layout(uint8_t opcode) {
  OpcodeLayout l;
  switch (static_cast<Opcode>(opcode)) {
    case Opcode::kRcSendFirst:
    case Opcode::kRcSendMiddle:
    case Opcode::kRcSendLast:
    case Opcode::kRcSendOnly:
    case Opcode::kRcWriteMiddle:
    case Opcode::kRcWriteLast:
    case Opcode::kRcReadResponseMiddle:
      l.payload = true;
      return l;
    case Opcode::kRcSendLastImm:
    case Opcode::kRcSendOnlyImm:
    case Opcode::kRcWriteLastImm:
      l.immdt = l.payload = true;
      return l;
    case Opcode::kRcWriteFirst:
    case Opcode::kRcWriteOnly:
      l.reth = l.payload = true;
      return l;
    case Opcode::kRcWriteOnlyImm:
      l.reth = l.immdt = l.payload = true;
      return l;
    case Opcode::kRcReadRequest:
      l.reth = true;
      return l;
    case Opcode::kRcReadResponseFirst:
    case Opcode::kRcReadResponseLast:
    case Opcode::kRcReadResponseOnly:
      l.aeth = l.payload = true;
      return l;
    case Opcode::kRcAck:
      l.aeth = true;
      return l;
    case Opcode::kRcAtomicAck:
      l.aeth = l.atomic_ack_eth = true;
      return l;
    case Opcode::kRcCompareSwap:
    case Opcode::kRcFetchAdd:
      l.atomic_eth = true;
      return l;
    case Opcode::kRcSendLastInv:
    case Opcode::kRcSendOnlyInv:
      l.ieth = l.payload = true;
      return l;
    case Opcode::kUdSendOnly:
      l.deth = l.payload = true;
      return l;
    case Opcode::kUdSendOnlyImm:
      l.deth = l.immdt = l.payload = true;
      return l;
    case Opcode::kCnp:
      l.fixed_body_bytes = CnpBody::kSize;
      return l;
  }
  return std::nullopt;
}

}  // namespace sf::wire
