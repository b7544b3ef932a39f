// MRC frame fixtures shared by the MRC unit test, the wire interop helper and
// the fuzz seed writer: a spec with every header field set to a distinct value.
#pragma once

#include <cstdint>
#include <vector>

#include "common/wire/mrc_builder.h"
#include "tests/unit/wire/wire_test_util.h"

namespace sf::wire::test {

inline MrcFrameSpec sample_mrc(MrcOp op, L3Spec l3 = sample_v4()) {
  MrcFrameSpec s;
  s.l2.dst = mac(2);
  s.l2.src = mac(1);
  s.l3 = l3;
  s.udp_src_port = 0xD00D;
  s.op = op;
  s.bth.dest_qp = 0x00ABCD;
  s.bth.psn = Psn(0xFFFFFE);
  s.bth.ack_req = mrc_is_last(op);
  s.meth.rtx = true;
  s.meth.ts_valid = true;
  s.meth.rqmsn = 0x1234;
  s.meth.msn = 0x89ABCDEF;
  s.meth.msg_offset = mrc_is_first(op) ? 0 : 8192;
  s.meth.ev = 0x00C0FFEE;
  s.meth.tx_ts = 0x0BADCAFE;
  s.reth_va = 0x00007F0012340000ull + s.meth.msg_offset;
  s.reth_rkey = 0xCAFEBABE;
  s.reth_dma_length = 0;  // set by build_mrc() from the payload
  s.immdt = 0xDEADBEEF;
  s.aeth_msn = 0x123456;
  s.sack.skip = MrcSkip::kSkipOnce;
  s.sack.ce = true;
  s.sack.ack_psn_offset = 3;
  s.sack.ev = 0x00C0FFEE;
  s.sack.sack_offset = 1;
  s.sack.mpr = 256;
  s.sack.bitmap = 0x8000000000000005ull;
  s.cc.ts_echo = 0x0BADCAFE;
  s.cc.rcvd_bytes = 0x01020304;
  s.cc.ecn_count = 0x0506;
  s.cc.ooo_count = 7;
  s.cc.rcv_cwnd_pen = 64;
  s.cc.cc_type = MrcCcType::kNscc;
  s.cc.service_time = 0x0809;
  s.nack.reason = MrcNackReason::kTrimmedLastHop;
  s.nack.ce = true;
  s.nack.rtx = true;
  s.nack.vendor_code = 0x5A;
  s.nack.ev = 0x12345678;
  s.nack.nack_psn = Psn(0x000002);
  s.nack.ts_echo = 0x11223344;
  s.probe.probe_id = 0x7777;
  s.probe.ev = 0x00FACADE;
  s.probe.tx_ts = 0x55667788;
  s.ep_request.op = MrcEndpointOp::kPortStatus;
  s.ep_request.num_ports = 8;
  s.ep_request.request_id = 0x4242;
  s.ep_request.ev = 0x00000103;
  s.ep_request.port_status_mask = 0x7F;
  s.ep_request.tx_ts = 0x99AABBCC;
  s.ep_response.op = MrcEndpointOp::kEvProbe;
  s.ep_response.status = MrcEndpointStatus::kOk;
  s.ep_response.request_id = 0x4243;
  s.ep_response.ev = 0x00000104;
  s.ep_response.port_status_mask = 0xFF;
  s.ep_response.ts_echo = 0xDDEEFF00;
  return s;
}

// Builds a frame with `payload_bytes` of payload (data ops; 0 otherwise); for
// data ops the RETH DMA length is made consistent with the METH offset
// (msg_offset + payload). Empty vector on failure.
inline std::vector<uint8_t> build_mrc(MrcFrameSpec& s, std::size_t payload_bytes) {
  if (!mrc_is_data(s.op)) payload_bytes = 0;
  if (mrc_is_data(s.op)) s.reth_dma_length = s.meth.msg_offset + static_cast<uint32_t>(payload_bytes) +
                                              (mrc_is_last(s.op) ? 0u : 4096u);
  const auto pl = payload(payload_bytes);
  std::vector<uint8_t> out(mrc_frame_bytes(s, payload_bytes));
  const auto r = build_mrc_frame(out, s, pl);
  if (!r.ok()) return {};
  out.resize(r.frame_bytes);
  return out;
}

}  // namespace sf::wire::test
