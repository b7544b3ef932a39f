// TxHeaderCache: a QP's last request headers (Ethernet .. BTH and its RETH /
// ImmDt) per kind of request packet: FIRST / ONLY (SEND, WRITE, with or
// without immediate, and READ requests), MIDDLE, LAST. Two packets of the
// same opcode, SE and payload length differ only in PSN, AckReq, the RETH
// (va, rkey, DMA length) and the immediate, none of which the IPv4 checksum
// covers, so the transmit path copies the cached bytes and patches those
// fields instead of building every header from the RoceFrameSpec (and
// computing the IPv4 checksum) again. The key (opcode, SE, payload length)
// fixes everything else: the pad count, the IP / UDP lengths, the ext
// headers present. Each entry also keeps the ICRC accumulator after the
// bytes of its headers that every such packet shares (the pseudo-LRH, IP,
// UDP, BTH up to AckReq: IcrcLayout::constant_bytes()), so that a frame's
// ICRC folds only from its AckReq / PSN on. Emptied by the QP whenever its
// addressing (the spec) is rebuilt, saved ICRC states included.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "common/wire/icrc.h"
#include "common/wire/psn.h"
#include "common/wire/roce.h"

namespace sf::nic::rc {

// The per-packet fields of a request / read response header: what is not
// the QP's addressing (RoceFrameSpec).
struct TxFields {
  wire::Opcode opcode = wire::Opcode::kRcSendOnly;
  bool se = false;
  bool ack_req = false;
  wire::Psn psn;
  uint64_t reth_va = 0;
  uint32_t reth_rkey = 0;
  uint32_t reth_dma_length = 0;
  uint32_t imm = 0;
  uint8_t aeth_syndrome = 0;
  uint32_t aeth_msn = 0;
  // BTH kBthIntFlag (an INT shim follows, common/wire/int_shim.h): set by
  // Qp::build() after the headers are written, before the ICRC folds them.
  bool int_flag = false;

  // `base` (the QP's addressing) with this packet's fields: what
  // build_roce_headers is given when no cached header fits.
  wire::RoceFrameSpec spec(const wire::RoceFrameSpec& base) const {
    wire::RoceFrameSpec s = base;
    s.bth.opcode = opcode;
    s.bth.se = se;
    s.bth.ack_req = ack_req;
    s.bth.psn = psn;
    s.ext.reth_va = reth_va;
    s.ext.reth_rkey = reth_rkey;
    s.ext.reth_dma_length = reth_dma_length;
    s.ext.immdt = imm;
    s.ext.aeth_syndrome = aeth_syndrome;
    s.ext.aeth_msn = aeth_msn;
    return s;
  }
};

class TxHeaderCache {
 public:
  // Eth + VLAN + two IPv6 headers (SRv6) + UDP + BTH + RETH + ImmDt fit.
  static constexpr std::size_t kMaxBytes = 160;
  static constexpr int kSlots = 3;

  // The slot of an opcode whose ext headers are at most RETH and ImmDt; -1
  // for the others (read responses: AETH; ACKs, atomics: not requests here).
  static constexpr int slot_of(wire::Opcode op) {
    using wire::Opcode;
    switch (op) {
      case Opcode::kRcSendFirst:
      case Opcode::kRcSendOnly:
      case Opcode::kRcSendOnlyImm:
      case Opcode::kRcWriteFirst:
      case Opcode::kRcWriteOnly:
      case Opcode::kRcWriteOnlyImm:
      case Opcode::kRcReadRequest: return 0;
      case Opcode::kRcSendMiddle:
      case Opcode::kRcWriteMiddle: return 1;
      case Opcode::kRcSendLast:
      case Opcode::kRcSendLastImm:
      case Opcode::kRcWriteLast:
      case Opcode::kRcWriteLastImm: return 2;
      default: return -1;
    }
  }
  static constexpr bool cacheable(wire::Opcode op) { return slot_of(op) >= 0; }
  static constexpr bool has_reth(wire::Opcode op) {
    using wire::Opcode;
    return op == Opcode::kRcWriteFirst || op == Opcode::kRcWriteOnly || op == Opcode::kRcWriteOnlyImm ||
           op == Opcode::kRcReadRequest;
  }
  static constexpr bool has_imm(wire::Opcode op) {
    using wire::Opcode;
    return op == Opcode::kRcSendOnlyImm || op == Opcode::kRcSendLastImm || op == Opcode::kRcWriteOnlyImm ||
           op == Opcode::kRcWriteLastImm;
  }

  // The cached headers for this key (bytes() of them), or -1.
  int find(wire::Opcode op, bool se, uint32_t payload_bytes) const {
    const int s = slot_of(op);
    if (s < 0) return -1;
    const Entry& e = slots_[s];
    return e.len != 0 && e.op == op && e.se == se && e.payload_bytes == payload_bytes ? s : -1;
  }
  uint32_t bytes(int slot) const { return slots_[slot].len; }
  // The ICRC accumulator after the shared bytes of `slot`'s headers, and
  // where in the headers it continues (update() from there to the end of
  // the headers, then the payload and pad).
  const wire::IcrcAccumulator& icrc(int slot) const { return slots_[slot].icrc; }
  uint32_t icrc_resume_offset(int slot) const { return slots_[slot].icrc_from; }
  // Remembers `n` header bytes of a frame of `op` (cacheable(op)); `n`
  // ends with the BTH and the ext headers of `op`, and the ICRC's masked
  // block (per `layout`) starts at hdr + ip_off. Returns false (the slot
  // emptied) if the headers do not fit or do not match the layout.
  bool store(const uint8_t* hdr, std::size_t n, wire::Opcode op, bool se, uint32_t payload_bytes, uint32_t ip_off,
             wire::IcrcLayout layout) {
    const int s = slot_of(op);
    if (s < 0) return false;
    Entry& e = slots_[s];
    const std::size_t ext = (has_reth(op) ? wire::Reth::kSize : 0) + (has_imm(op) ? wire::ImmDt::kSize : 0);
    // The saved state must stop at or before the BTH's AckReq byte (it
    // stops exactly there when the BTH ends the masked block, as it does
    // for every frame Qp::build makes).
    if (n > kMaxBytes || n < wire::Bth::kSize + ext ||
        ip_off + layout.constant_bytes() > n - ext - (wire::Bth::kSize - (wire::Bth::kOffPsn - 1)) ||
        !e.icrc.begin_prefix({hdr + ip_off, n - ip_off}, layout)) {
      e.len = 0;
      return false;
    }
    e.icrc_from = static_cast<uint16_t>(ip_off + layout.constant_bytes());
    std::memcpy(e.bytes.data(), hdr, n);
    e.len = static_cast<uint16_t>(n);
    e.bth_off = static_cast<uint16_t>(n - ext - wire::Bth::kSize);
    e.op = op;
    e.se = se;
    e.reth = has_reth(op);
    e.imm = has_imm(op);
    e.payload_bytes = payload_bytes;
    return true;
  }
  // Writes the cached headers of `slot` (from find()) with f's PSN, AckReq,
  // RETH and immediate to out (bytes(slot) long).
  void apply(int slot, uint8_t* out, const TxFields& f) const {
    const Entry& e = slots_[slot];
    std::memcpy(out, e.bytes.data(), e.len);
    uint8_t* p = out + e.bth_off;
    auto* bth = reinterpret_cast<wire::Bth*>(p);
    bth->psn.set(f.psn.value());
    bth->set_ack_req(f.ack_req);
    p += wire::Bth::kSize;
    if (e.reth) {
      auto* reth = reinterpret_cast<wire::Reth*>(p);
      reth->va.set(f.reth_va);
      reth->rkey.set(f.reth_rkey);
      reth->dma_length.set(f.reth_dma_length);
      p += wire::Reth::kSize;
    }
    if (e.imm) reinterpret_cast<wire::ImmDt*>(p)->imm.set(f.imm);
  }
  void clear() {
    for (Entry& e : slots_) e.len = 0;
  }

 private:
  struct Entry {
    std::array<uint8_t, kMaxBytes> bytes{};
    uint16_t len = 0;  // 0 = empty
    uint16_t bth_off = 0;
    wire::Opcode op = wire::Opcode::kRcSendOnly;
    bool se = false;
    bool reth = false;  // has_reth(op), has_imm(op): kept so apply() need not decode op
    bool imm = false;
    uint16_t icrc_from = 0;  // offset in bytes of the first byte icrc has not seen
    uint32_t payload_bytes = 0;
    wire::IcrcAccumulator icrc;  // after bytes [ip_off, icrc_from), from begin_prefix()
  };
  std::array<Entry, kSlots> slots_{};
};

}  // namespace sf::nic::rc
