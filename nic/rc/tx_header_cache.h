// TxHeaderCache: a QP's last request headers (Ethernet .. BTH) of an opcode
// that carries no extension header (SEND/WRITE MIDDLE and LAST). The middle
// packets of a message differ only in PSN and AckReq, so the transmit path
// copies the cached bytes and patches those two fields instead of building
// every header from the RoceFrameSpec (and computing the IPv4 checksum)
// again; the IPv4 checksum covers neither. Keyed by opcode, SE and payload
// length (which fix the pad count and the IP / UDP lengths); emptied by the
// QP whenever its addressing (the spec) is rebuilt.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "common/wire/psn.h"
#include "common/wire/roce.h"

namespace sf::nic::rc {

class TxHeaderCache {
 public:
  // Eth + VLAN + two IPv6 headers (SRv6) + UDP + BTH fit.
  static constexpr std::size_t kMaxBytes = 128;

  // Opcodes whose headers end with the BTH (no RETH, ImmDt, AETH ...).
  static constexpr bool cacheable(wire::Opcode op) {
    return op == wire::Opcode::kRcWriteMiddle || op == wire::Opcode::kRcWriteLast ||
           op == wire::Opcode::kRcSendMiddle || op == wire::Opcode::kRcSendLast;
  }
  bool matches(wire::Opcode op, bool se, uint32_t payload_bytes) const {
    return len_ != 0 && op_ == op && se_ == se && payload_bytes_ == payload_bytes;
  }
  uint32_t bytes() const { return len_; }
  // Remembers `n` header bytes of a frame of `op` (cacheable(op)).
  void store(const uint8_t* hdr, std::size_t n, wire::Opcode op, bool se, uint32_t payload_bytes) {
    if (n > kMaxBytes || n < wire::Bth::kSize) {
      len_ = 0;
      return;
    }
    std::memcpy(bytes_.data(), hdr, n);
    len_ = static_cast<uint16_t>(n);
    op_ = op;
    se_ = se;
    payload_bytes_ = payload_bytes;
  }
  // Writes the cached headers with `psn` and `ack_req` to out (bytes() long).
  void apply(uint8_t* out, wire::Psn psn, bool ack_req) const {
    std::memcpy(out, bytes_.data(), len_);
    auto* bth = reinterpret_cast<wire::Bth*>(out + len_ - wire::Bth::kSize);
    bth->psn.set(psn.value());
    bth->set_ack_req(ack_req);
  }
  void clear() { len_ = 0; }

 private:
  std::array<uint8_t, kMaxBytes> bytes_{};
  uint16_t len_ = 0;  // 0 = empty
  wire::Opcode op_ = wire::Opcode::kRcSendOnly;
  bool se_ = false;
  uint32_t payload_bytes_ = 0;
};

}  // namespace sf::nic::rc
