// Crafted-frame fixtures for the NIC tests that feed a NicNode frames built
// with common/wire (ICRC included) and read back what it transmits
// (rc_crafted_test, nic_safety_test): the AETH syndromes, a request spec
// between two harness hosts, a RETH added to a spec, a built frame in an mbuf,
// and every frame a node sends, parsed. Header-only; EAL must be up.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {

inline constexpr uint8_t kAck = wire::Aeth::make_syndrome(wire::AethType::kAck, wire::kAethCreditUnlimited);
inline constexpr uint8_t kNakSeq = 0x60;
inline constexpr uint8_t kNakInv = 0x61;
inline constexpr uint8_t kNakAcc = 0x62;
inline constexpr uint8_t kNakOp = 0x63;

// One frame a node sent, as parsed.
struct SentFrame {
  uint8_t opcode = 0;
  uint32_t psn = 0;
  bool ack_req = false;
  uint8_t syndrome = 0;
  uint32_t msn = 0;
  uint32_t dest_qp = 0;
  std::vector<uint8_t> payload;
  uint32_t payload_bytes = 0;
  uint64_t reth_va = 0;
  uint32_t reth_len = 0;
};

// Every frame `node` sends on port 0 at `now` (one frame per call, as the
// simulator asks), parsed; each must parse and carry a good ICRC.
inline std::vector<SentFrame> pull(NicNode& node, TimeNs now = TimeNs(0)) {
  std::vector<SentFrame> v;
  for (;;) {
    rte_mbuf* m = nullptr;
    if (node.transmit(0, {&m, 1}, now) == 0) break;
    std::vector<uint8_t> bytes(m->pkt_len);
    const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, bytes.data());
    if (p != bytes.data()) std::memcpy(bytes.data(), p, m->pkt_len);
    rte_pktmbuf_free(m);
    const wire::FrameInfo fi = wire::parse_frame(bytes);
    EXPECT_TRUE(fi.ok()) << wire::to_string(fi.reason);
    if (!fi.ok() || fi.bth == nullptr) continue;
    EXPECT_EQ(wire::icrc_verify(bytes, fi), wire::IcrcStatus::kOk);
    SentFrame o;
    o.opcode = fi.bth->opcode;
    o.psn = fi.bth->get_psn().value();
    o.ack_req = fi.bth->ack_requested();
    o.dest_qp = fi.bth->dest_qp.value();
    if (fi.aeth != nullptr) {
      o.syndrome = fi.aeth->syndrome;
      o.msn = fi.aeth->msn.value();
    }
    if (fi.reth != nullptr) {
      o.reth_va = fi.reth->va.value();
      o.reth_len = fi.reth->dma_length.value();
    }
    o.payload.assign(bytes.begin() + fi.payload_offset, bytes.begin() + fi.payload_offset + fi.payload_bytes);
    o.payload_bytes = static_cast<uint32_t>(fi.payload_bytes);
    v.push_back(o);
  }
  return v;
}

// A RoCEv2 frame over IPv4 from harness host `src` to harness host `dst`'s
// QP `dest_qp` (AckReq clear, no extension headers).
inline wire::RoceFrameSpec host_frame(int src, int dst, uint32_t dest_qp, wire::Opcode op, uint32_t psn) {
  wire::RoceFrameSpec s;
  s.l2.dst = host_mac(dst);
  s.l2.src = host_mac(src);
  wire::Ipv4Spec ip;
  ip.src = host_ip4(src);
  ip.dst = host_ip4(dst);
  s.l3 = ip;
  s.bth.opcode = op;
  s.bth.dest_qp = dest_qp;
  s.bth.psn = wire::Psn(psn);
  return s;
}

inline wire::RoceFrameSpec with_reth(wire::RoceFrameSpec s, uint64_t va, uint32_t rkey, uint32_t len) {
  s.ext.reth_va = va;
  s.ext.reth_rkey = rkey;
  s.ext.reth_dma_length = len;
  return s;
}

// The frame `s` with `payload` in an mbuf (chained in segments of at most
// `seg` bytes when seg > 0). A build error fails the test and gives nullptr.
inline rte_mbuf* craft(const wire::RoceFrameSpec& s, std::span<const uint8_t> payload, uint16_t seg = 0) {
  std::vector<uint8_t> buf(wire::roce_frame_bytes(s, payload.size()));
  const wire::BuildResult r = wire::build_roce_frame(buf, s, payload);
  EXPECT_TRUE(r.ok()) << wire::to_string(r.error);
  if (!r.ok()) return nullptr;
  return sf::test::make_mbuf(buf, seg);
}

}  // namespace sf::nic::test
