// Shared fixtures for common/wire tests: sample addresses and frame specs.
#pragma once

#include <cstdint>
#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/srv6.h"

namespace sf::wire::test {

// Every opcode the wire layer knows.
inline constexpr const Opcode kAllOpcodes[] = {
    Opcode::kRcSendFirst, Opcode::kRcSendMiddle, Opcode::kRcSendLast, Opcode::kRcSendLastImm,
    Opcode::kRcSendOnly, Opcode::kRcSendOnlyImm, Opcode::kRcWriteFirst, Opcode::kRcWriteMiddle,
    Opcode::kRcWriteLast, Opcode::kRcWriteLastImm, Opcode::kRcWriteOnly, Opcode::kRcWriteOnlyImm,
    Opcode::kRcReadRequest, Opcode::kRcReadResponseFirst, Opcode::kRcReadResponseMiddle,
    Opcode::kRcReadResponseLast, Opcode::kRcReadResponseOnly, Opcode::kRcAck, Opcode::kRcAtomicAck,
    Opcode::kRcCompareSwap, Opcode::kRcFetchAdd, Opcode::kRcSendLastInv, Opcode::kRcSendOnlyInv,
    Opcode::kUdSendOnly, Opcode::kUdSendOnlyImm, Opcode::kCnp};

inline MacAddr mac(uint8_t last) { return MacAddr{{0x02, 0x00, 0x00, 0x00, 0x00, last}}; }
inline Ipv4Addr ip4(uint8_t last) { return Ipv4Addr{{10, 0, 0, last}}; }
inline Ipv6Addr ip6(uint8_t last) {
  Ipv6Addr a{};
  a.bytes[0] = 0xFD;
  a.bytes[15] = last;
  return a;
}

inline Ipv4Spec sample_v4() {
  Ipv4Spec s;
  s.src = ip4(1);
  s.dst = ip4(2);
  s.dscp = 26;
  s.ecn = Ecn::kEct0;
  s.ttl = 63;
  s.id = 0x1234;
  return s;
}

inline Ipv6Spec sample_v6() {
  Ipv6Spec s;
  s.src = ip6(1);
  s.dst = ip6(2);
  s.dscp = 26;
  s.ecn = Ecn::kEct1;
  s.flow_label = 0xABCDE;
  s.hop_limit = 17;
  return s;
}

inline Srv6Spec sample_srv6() {
  Srv6Spec s;
  s.outer = sample_v6();
  const uint8_t block[4] = {0xFC, 0xBB, 0x00, 0x00};
  const uint16_t usids[3] = {0x0020, 0x0010, 0x0022};
  make_usid_address(s.outer.dst, block, usids);
  s.inner = sample_v6();
  s.inner.src = ip6(11);
  s.inner.dst = ip6(12);
  return s;
}

inline RoceFrameSpec sample_spec(Opcode op, L3Spec l3 = sample_v4()) {
  RoceFrameSpec s;
  s.l2.dst = mac(2);
  s.l2.src = mac(1);
  s.l3 = l3;
  s.udp_src_port = 0xC123;
  s.bth.opcode = op;
  s.bth.dest_qp = 0x00ABCD;
  s.bth.psn = Psn(0xFFFFFE);
  s.bth.ack_req = true;
  s.bth.se = true;
  s.ext.reth_va = 0x1122334455667788ull;
  s.ext.reth_rkey = 0xCAFEBABE;
  s.ext.reth_dma_length = 4096;
  s.ext.aeth_syndrome = Aeth::make_syndrome(AethType::kNak, 0);
  s.ext.aeth_msn = 0x123456;
  s.ext.immdt = 0xDEADBEEF;
  s.ext.ieth_rkey = 0x0BADF00D;
  s.ext.deth_qkey = 0x11111111;
  s.ext.deth_src_qp = 0x654321;
  s.ext.atomic_va = 0x1000;
  s.ext.atomic_rkey = 0x77;
  s.ext.atomic_swap_add = 5;
  s.ext.atomic_compare = 9;
  s.ext.atomic_ack_orig = 0x42;
  return s;
}

inline std::vector<uint8_t> payload(std::size_t n) {
  std::vector<uint8_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i * 7 + 3);
  return p;
}

// Builds a frame; empty vector on failure.
inline std::vector<uint8_t> build(const RoceFrameSpec& s, std::size_t payload_bytes) {
  const auto pl = payload(payload_bytes);
  std::vector<uint8_t> out(roce_frame_bytes(s, payload_bytes));
  const auto r = build_roce_frame(out, s, pl);
  if (!r.ok()) return {};
  out.resize(r.frame_bytes);
  return out;
}

}  // namespace sf::wire::test
