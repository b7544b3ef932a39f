// MRC wire format (common/wire/mrc.h, mrc_builder.h, parse_frame's MRC
// branch): sizes and offsets, opcode mapping, build/parse round trips of every
// op over IPv4 / IPv6 / SRv6 / VLAN with the ICRC, the byte layout against
// docs/mrc.md, configurable port and opcode base, SACK bitmaps across the PSN
// wrap, trimmed frames, and every truncated or malformed frame rejected with
// its reason.
#include <gtest/gtest.h>

#include <cstddef>
#include <functional>

#include "common/wire/frame_parser.h"
#include "common/wire/frame_parser_fast.h"
#include "common/wire/icrc.h"
#include "common/wire/trim.h"
#include "tests/unit/wire/mrc_test_util.h"

namespace sf::wire {
namespace {

using test::build_mrc;
using test::sample_mrc;

// ------------------------------------------------------------ sizes, offsets

TEST(Mrc, HeaderSizesAndOffsets) {
  EXPECT_EQ(sizeof(Meth), 20u);
  EXPECT_EQ(offsetof(Meth, flags), Meth::kOffFlags);
  EXPECT_EQ(offsetof(Meth, rqmsn), Meth::kOffRqmsn);
  EXPECT_EQ(offsetof(Meth, msn), Meth::kOffMsn);
  EXPECT_EQ(offsetof(Meth, msg_offset), Meth::kOffMsgOffset);
  EXPECT_EQ(offsetof(Meth, ev), Meth::kOffEv);
  EXPECT_EQ(offsetof(Meth, tx_ts), Meth::kOffTxTs);
  EXPECT_EQ(sizeof(Seth), 20u);
  EXPECT_EQ(offsetof(Seth, flags), Seth::kOffFlags);
  EXPECT_EQ(offsetof(Seth, ack_psn_offset), Seth::kOffAckPsnOffset);
  EXPECT_EQ(offsetof(Seth, ev), Seth::kOffEv);
  EXPECT_EQ(offsetof(Seth, sack_offset), Seth::kOffSackOffset);
  EXPECT_EQ(offsetof(Seth, mpr), Seth::kOffMpr);
  EXPECT_EQ(offsetof(Seth, bitmap), Seth::kOffBitmap);
  EXPECT_EQ(sizeof(MrcCcState), 16u);
  EXPECT_EQ(offsetof(MrcCcState, ts_echo), MrcCcState::kOffTsEcho);
  EXPECT_EQ(offsetof(MrcCcState, rcvd_bytes), MrcCcState::kOffRcvdBytes);
  EXPECT_EQ(offsetof(MrcCcState, ecn_count), MrcCcState::kOffEcnCount);
  EXPECT_EQ(offsetof(MrcCcState, ooo_count), MrcCcState::kOffOooCount);
  EXPECT_EQ(offsetof(MrcCcState, rcv_cwnd_pen), MrcCcState::kOffRcvCwndPen);
  EXPECT_EQ(offsetof(MrcCcState, cc_type), MrcCcState::kOffCcType);
  EXPECT_EQ(offsetof(MrcCcState, service_time), MrcCcState::kOffServiceTime);
  EXPECT_EQ(sizeof(Neth), 16u);
  EXPECT_EQ(offsetof(Neth, reason), Neth::kOffReason);
  EXPECT_EQ(offsetof(Neth, flags), Neth::kOffFlags);
  EXPECT_EQ(offsetof(Neth, vendor_code), Neth::kOffVendor);
  EXPECT_EQ(offsetof(Neth, ev), Neth::kOffEv);
  EXPECT_EQ(offsetof(Neth, nack_psn), Neth::kOffNackPsn);
  EXPECT_EQ(offsetof(Neth, ts_echo), Neth::kOffTsEcho);
  EXPECT_EQ(sizeof(Peth), 16u);
  EXPECT_EQ(offsetof(Peth, probe_id), Peth::kOffProbeId);
  EXPECT_EQ(offsetof(Peth, ev), Peth::kOffEv);
  EXPECT_EQ(offsetof(Peth, tx_ts), Peth::kOffTxTs);
  EXPECT_EQ(sizeof(Erth), 16u);
  EXPECT_EQ(offsetof(Erth, op), Erth::kOffOp);
  EXPECT_EQ(offsetof(Erth, num_ports), Erth::kOffNumPorts);
  EXPECT_EQ(offsetof(Erth, request_id), Erth::kOffRequestId);
  EXPECT_EQ(offsetof(Erth, ev), Erth::kOffEv);
  EXPECT_EQ(offsetof(Erth, port_status_mask), Erth::kOffPortStatus);
  EXPECT_EQ(offsetof(Erth, tx_ts), Erth::kOffTxTs);
  EXPECT_EQ(sizeof(Eeth), 16u);
  EXPECT_EQ(offsetof(Eeth, op), Eeth::kOffOp);
  EXPECT_EQ(offsetof(Eeth, status), Eeth::kOffStatus);
  EXPECT_EQ(offsetof(Eeth, request_id), Eeth::kOffRequestId);
  EXPECT_EQ(offsetof(Eeth, ev), Eeth::kOffEv);
  EXPECT_EQ(offsetof(Eeth, port_status_mask), Eeth::kOffPortStatus);
  EXPECT_EQ(offsetof(Eeth, ts_echo), Eeth::kOffTsEcho);
}

TEST(Mrc, OpcodesAndLayouts) {
  for (MrcOp op : kAllMrcOps) {
    for (uint8_t base : {uint8_t{0xC0}, uint8_t{0xE0}}) {
      const uint8_t code = mrc_opcode(op, base);
      ASSERT_EQ(mrc_op_of(code, base), op) << to_string(op);
      EXPECT_FALSE(mrc_op_of(code, static_cast<uint8_t>(base ^ 0x20)).has_value());
    }
    EXPECT_STRNE(to_string(op), "MRC_UNKNOWN");
    const MrcLayout l = mrc_layout(op);
    EXPECT_EQ(l.payload, mrc_is_data(op));
    EXPECT_EQ(l.meth && l.reth, mrc_is_data(op));
    EXPECT_EQ(l.immdt, mrc_has_imm(op));
  }
  EXPECT_EQ(mrc_opcode(MrcOp::kWriteFirst), 0xC6);
  EXPECT_EQ(mrc_opcode(MrcOp::kSack), 0xDC);
  EXPECT_EQ(mrc_opcode(MrcOp::kNack), 0xDD);
  EXPECT_EQ(mrc_opcode(MrcOp::kProbe), 0xDE);
  EXPECT_EQ(mrc_opcode(MrcOp::kEndpointRequest), 0xD8);
  EXPECT_EQ(mrc_opcode(MrcOp::kEndpointResponse), 0xD9);
  // Every RoCE opcode and every undefined MRC op is not an MRC op.
  int defined = 0;
  for (int c = 0; c < 256; ++c) {
    if (mrc_op_of(static_cast<uint8_t>(c)).has_value()) ++defined;
  }
  EXPECT_EQ(defined, 12);
  EXPECT_FALSE(mrc_op_of(0x06).has_value());
  EXPECT_FALSE(mrc_op_of(0xC0).has_value());
  EXPECT_EQ(mrc_layout(MrcOp::kSack).ext_bytes(), Seth::kSize + MrcCcState::kSize);
  EXPECT_EQ(mrc_layout(MrcOp::kWriteOnlyImm).ext_bytes(), Meth::kSize + Reth::kSize + ImmDt::kSize);
  EXPECT_TRUE(mrc_nack_fatal(MrcNackReason::kAccessError));
  EXPECT_FALSE(mrc_nack_fatal(MrcNackReason::kTrimmed));
  EXPECT_STREQ(to_string(MrcNackReason::kTrimmedLastHop), "TRIMMED_LASTHOP");
  EXPECT_STREQ(to_string(static_cast<MrcNackReason>(0x77)), "UNKNOWN");
  EXPECT_STREQ(to_string(FrameKind::kMrc), "mrc");
  EXPECT_STREQ(to_string(ParseReason::kMrcBadSack), "mrc_bad_sack");
}

TEST(Mrc, WireConfigChecked) {
  EXPECT_EQ(mrc_wire_config_error(MrcWireConfig{}), nullptr);
  EXPECT_EQ(mrc_wire_config_error(MrcWireConfig{.opcode_base = 0xE0}), nullptr);
  EXPECT_NE(mrc_wire_config_error(MrcWireConfig{.opcode_base = 0x00}), nullptr);
  EXPECT_NE(mrc_wire_config_error(MrcWireConfig{.opcode_base = 0xC6}), nullptr);
  EXPECT_NE(mrc_wire_config_error(MrcWireConfig{.udp_port = 0}), nullptr);
}

// ------------------------------------------------------------ round trips

void expect_mrc_fields(const FrameInfo& fi, const MrcFrameSpec& s, std::size_t payload_bytes) {
  ASSERT_TRUE(fi.ok()) << to_string(s.op) << ": " << to_string(fi.reason);
  ASSERT_EQ(fi.kind, FrameKind::kMrc);
  const MrcInfo& m = fi.mrc;
  EXPECT_EQ(m.op, s.op);
  EXPECT_FALSE(m.trimmed);
  EXPECT_EQ(fi.udp->src_port.value(), s.udp_src_port);
  EXPECT_EQ(fi.udp->dst_port.value(), s.wire.udp_port);
  EXPECT_EQ(fi.bth->opcode, mrc_opcode(s.op, s.wire.opcode_base));
  const bool ep = s.op == MrcOp::kEndpointRequest || s.op == MrcOp::kEndpointResponse;
  EXPECT_EQ(fi.bth->dest_qp.value(), ep ? kMrcEndpointQpn : s.bth.dest_qp);
  EXPECT_EQ(fi.bth->get_psn(), ep ? Psn(0) : s.bth.psn);
  EXPECT_EQ(fi.bth->ack_requested(), s.bth.ack_req);
  EXPECT_EQ(fi.bth->tver(), 0);
  const MrcLayout l = mrc_layout(s.op);
  EXPECT_EQ(fi.payload_bytes, l.payload ? payload_bytes : 0u);
  EXPECT_EQ(fi.bth->pad_count(), fi.pad_bytes);
  EXPECT_EQ((fi.payload_bytes + fi.pad_bytes) % 4, 0u);
  EXPECT_EQ(fi.payload_offset, fi.bth_offset + Bth::kSize + l.ext_bytes());
  EXPECT_EQ(m.meth != nullptr, l.meth);
  EXPECT_EQ(fi.reth != nullptr, l.reth);
  EXPECT_EQ(fi.immdt != nullptr, l.immdt);
  EXPECT_EQ(fi.aeth != nullptr, l.aeth);
  EXPECT_EQ(m.seth != nullptr, l.seth);
  EXPECT_EQ(m.cc != nullptr, l.cc_state);
  EXPECT_EQ(m.neth != nullptr, l.neth);
  EXPECT_EQ(m.peth != nullptr, l.peth);
  EXPECT_EQ(m.erth != nullptr, l.erth);
  EXPECT_EQ(m.eeth != nullptr, l.eeth);
  EXPECT_EQ(fi.layout.reth, l.reth);
  EXPECT_EQ(fi.layout.payload, l.payload);
  if (m.meth) {
    EXPECT_EQ(m.meth->rtx(), s.meth.rtx);
    EXPECT_EQ(m.meth->last(), mrc_is_last(s.op));
    EXPECT_EQ(m.meth->ts_valid(), s.meth.ts_valid);
    EXPECT_EQ(m.meth->rqmsn.value(), s.meth.rqmsn);
    EXPECT_EQ(m.meth->msn.value(), s.meth.msn);
    EXPECT_EQ(m.meth->msg_offset.value(), s.meth.msg_offset);
    EXPECT_EQ(m.meth->ev.value(), s.meth.ev);
    EXPECT_EQ(m.meth->tx_ts.value(), s.meth.tx_ts);
    EXPECT_EQ(fi.reth->va.value(), s.reth_va);
    EXPECT_EQ(fi.reth->rkey.value(), s.reth_rkey);
    EXPECT_EQ(fi.reth->dma_length.value(), s.reth_dma_length);
  }
  if (fi.immdt) {
    EXPECT_EQ(fi.immdt->imm.value(), s.immdt);
  }
  if (fi.aeth) {
    EXPECT_EQ(fi.aeth->syndrome, s.aeth_syndrome);
    EXPECT_EQ(fi.aeth->msn.value(), s.aeth_msn);
  }
  if (m.seth) {
    EXPECT_EQ(m.seth->skip(), s.sack.skip);
    EXPECT_EQ(m.seth->probe_response(), s.sack.probe_response);
    EXPECT_EQ(m.seth->ce(), s.sack.ce);
    EXPECT_EQ(m.seth->ack_offset(), s.sack.ack_psn_offset);
    EXPECT_EQ(m.seth->ev.value(), s.sack.ev);
    EXPECT_EQ(m.seth->base_offset(), s.sack.sack_offset);
    EXPECT_EQ(m.seth->mpr.value(), s.sack.mpr);
    EXPECT_EQ(m.seth->bitmap.value(), s.sack.bitmap);
    EXPECT_EQ(m.cc->ts_echo.value(), s.cc.ts_echo);
    EXPECT_EQ(m.cc->rcvd_bytes.value(), s.cc.rcvd_bytes);
    EXPECT_EQ(m.cc->ecn_count.value(), s.cc.ecn_count);
    EXPECT_EQ(m.cc->ooo_count.value(), s.cc.ooo_count);
    EXPECT_EQ(m.cc->rcv_cwnd_pen, s.cc.rcv_cwnd_pen);
    EXPECT_EQ(m.cc->cc_type, static_cast<uint8_t>(s.cc.cc_type));
    EXPECT_EQ(m.cc->service_time.value(), s.cc.service_time);
  }
  if (m.neth) {
    EXPECT_EQ(m.neth->get_reason(), s.nack.reason);
    EXPECT_EQ(m.neth->ce(), s.nack.ce);
    EXPECT_EQ(m.neth->rtx(), s.nack.rtx);
    EXPECT_EQ(m.neth->vendor_code, s.nack.vendor_code);
    EXPECT_EQ(m.neth->ev.value(), s.nack.ev);
    EXPECT_EQ(m.neth->get_nack_psn(), s.nack.nack_psn);
    EXPECT_EQ(m.neth->ts_echo.value(), s.nack.ts_echo);
  }
  if (m.peth) {
    EXPECT_EQ(m.peth->probe_id.value(), s.probe.probe_id);
    EXPECT_EQ(m.peth->ev.value(), s.probe.ev);
    EXPECT_EQ(m.peth->tx_ts.value(), s.probe.tx_ts);
  }
  if (m.erth) {
    EXPECT_EQ(m.erth->get_op(), s.ep_request.op);
    EXPECT_EQ(m.erth->num_ports, s.ep_request.num_ports);
    EXPECT_EQ(m.erth->request_id.value(), s.ep_request.request_id);
    EXPECT_EQ(m.erth->ev.value(), s.ep_request.ev);
    EXPECT_EQ(m.erth->port_status_mask.value(), s.ep_request.port_status_mask);
    EXPECT_EQ(m.erth->tx_ts.value(), s.ep_request.tx_ts);
  }
  if (m.eeth) {
    EXPECT_EQ(m.eeth->get_op(), s.ep_response.op);
    EXPECT_EQ(m.eeth->get_status(), s.ep_response.status);
    EXPECT_EQ(m.eeth->request_id.value(), s.ep_response.request_id);
    EXPECT_EQ(m.eeth->ev.value(), s.ep_response.ev);
    EXPECT_EQ(m.eeth->port_status_mask.value(), s.ep_response.port_status_mask);
    EXPECT_EQ(m.eeth->ts_echo.value(), s.ep_response.ts_echo);
  }
}

TEST(Mrc, EveryOpRoundTripsOverEveryL3WithIcrc) {
  const L3Spec l3s[] = {test::sample_v4(), test::sample_v6(), test::sample_srv6()};
  for (const L3Spec& l3 : l3s) {
    for (bool vlan : {false, true}) {
      for (MrcOp op : kAllMrcOps) {
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{1024}}) {
          if (!mrc_is_data(op) && n != 0) continue;
          MrcFrameSpec s = sample_mrc(op, l3);
          if (vlan) s.l2.vlan = VlanSpec{5, true, 321};
          const auto f = build_mrc(s, n);
          ASSERT_FALSE(f.empty()) << to_string(op);
          ASSERT_EQ(f.size(), mrc_frame_bytes(s, n));
          const FrameInfo fi = parse_frame(f);
          SCOPED_TRACE(std::string(to_string(op)) + " l3 " + std::to_string(l3.index()) + " n " + std::to_string(n));
          expect_mrc_fields(fi, s, n);
          EXPECT_EQ(icrc_verify(f, fi), IcrcStatus::kOk);
          EXPECT_EQ(fi.outer_ipv6 != nullptr, l3.index() == 2);
          // The fast path takes exactly the data frames and SACKs outside
          // SRv6, with parse_frame()'s result.
          FrameInfo fast;
          const bool fast_ok = parse_roce_fast(f, static_cast<uint32_t>(f.size()), fast);
          EXPECT_EQ(fast_ok, (mrc_is_data(op) || op == MrcOp::kSack) && l3.index() != 2);
          if (fast_ok) {
            EXPECT_TRUE(same_frame_info(fast, fi));
          }
        }
      }
    }
  }
}

// The bytes of one data packet and one SACK, against the offsets in docs/mrc.md.
TEST(Mrc, ByteLayout) {
  MrcFrameSpec s = sample_mrc(MrcOp::kWriteLastImm);
  s.bth.psn = Psn(0x010203);
  const auto f = build_mrc(s, 8);
  ASSERT_FALSE(f.empty());
  const std::size_t bth = 14 + 20 + 8;
  EXPECT_EQ(f[14 + 20 + 2], 0x12);  // UDP dst 4791 = 0x12B7
  EXPECT_EQ(f[14 + 20 + 3], 0xB7);
  EXPECT_EQ(f[bth], 0xC9);
  EXPECT_EQ(f[bth + 9], 0x01);
  EXPECT_EQ(f[bth + 11], 0x03);
  const uint8_t meth[20] = {0xE0, 0x00, 0x12, 0x34, 0x89, 0xAB, 0xCD, 0xEF, 0x00, 0x00,
                            0x20, 0x00, 0x00, 0xC0, 0xFF, 0xEE, 0x0B, 0xAD, 0xCA, 0xFE};
  for (int i = 0; i < 20; ++i) EXPECT_EQ(f[bth + 12 + i], meth[i]) << "METH byte " << i;
  const std::size_t reth = bth + 12 + 20;
  EXPECT_EQ(f[reth + 0], 0x00);
  EXPECT_EQ(f[reth + 2], 0x7F);
  EXPECT_EQ(f[reth + 8], 0xCA);  // R_Key
  EXPECT_EQ(f[reth + 15], 8);    // DMA length 8192 + 8 = 0x2008
  EXPECT_EQ(f[reth + 14], 0x20);
  EXPECT_EQ(f[reth + 16], 0xDE);  // ImmDt
  EXPECT_EQ(f[reth + 19], 0xEF);

  MrcFrameSpec k = sample_mrc(MrcOp::kSack);
  k.bth.psn = Psn(0xFFFFF0);
  const auto g = build_mrc(k, 0);
  ASSERT_EQ(g.size(), 14u + 20 + 8 + 12 + 20 + 16 + 4);
  const uint8_t seth[20] = {0x50, 0x00, 0x00, 0x03, 0x00, 0xC0, 0xFF, 0xEE, 0x00, 0x01,
                            0x01, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05};
  for (int i = 0; i < 20; ++i) EXPECT_EQ(g[bth + 12 + i], seth[i]) << "SETH byte " << i;
  const uint8_t cc[16] = {0x0B, 0xAD, 0xCA, 0xFE, 0x01, 0x02, 0x03, 0x04,
                          0x05, 0x06, 0x00, 0x07, 0x40, 0x01, 0x08, 0x09};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(g[bth + 32 + i], cc[i]) << "CC state byte " << i;
  EXPECT_EQ(g[bth], 0xDC);
  EXPECT_EQ(g[bth + 9], 0xFF);  // CACK in the BTH PSN
  EXPECT_EQ(g[bth + 11], 0xF0);

  MrcFrameSpec n = sample_mrc(MrcOp::kNack);
  const auto h = build_mrc(n, 0);
  const uint8_t neth[16] = {0x02, 0xC0, 0x5A, 0x00, 0x12, 0x34, 0x56, 0x78,
                            0x00, 0x00, 0x00, 0x02, 0x11, 0x22, 0x33, 0x44};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(h[bth + 12 + i], neth[i]) << "NETH byte " << i;
  MrcFrameSpec e = sample_mrc(MrcOp::kEndpointRequest);
  const auto q = build_mrc(e, 0);
  const uint8_t erth[16] = {0x00, 0x08, 0x42, 0x42, 0x00, 0x00, 0x01, 0x03,
                            0x00, 0x00, 0x00, 0x7F, 0x99, 0xAA, 0xBB, 0xCC};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(q[bth + 12 + i], erth[i]) << "ERTH byte " << i;
  EXPECT_EQ(q[bth + 7], 0x02);  // DestQP 2
}

// ------------------------------------------------------------ configurable

TEST(Mrc, PortAndOpcodeBaseAreParameters) {
  MrcFrameSpec s = sample_mrc(MrcOp::kWriteOnly);
  s.wire.udp_port = 4792;
  s.wire.opcode_base = 0xE0;
  const auto f = build_mrc(s, 64);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(parse_frame(f).reason, ParseReason::kNotRoce);  // default options: 4791 only
  ParseOptions o;
  o.mrc = s.wire;
  FrameInfo fi = parse_frame(f, o);
  expect_mrc_fields(fi, s, 64);
  EXPECT_EQ(fi.bth->opcode, 0xEA);
  // On the MRC port an RC opcode is unknown; on 4791 RoCE still parses.
  RoceFrameSpec rc = test::sample_spec(Opcode::kRcWriteOnly);
  auto r = test::build(rc, 16);
  EXPECT_EQ(parse_frame(r, o).kind, FrameKind::kRoce);
  r[14 + 20 + 3] = 0xB8;  // UDP dst 4792 (ICRC not checked by the parser)
  EXPECT_EQ(parse_frame(r, o).reason, ParseReason::kUnknownOpcode);
  // Base 0xE0 on 4791: 0xC0-range opcodes are unknown.
  o.mrc.udp_port = 4791;
  MrcFrameSpec sack = sample_mrc(MrcOp::kSack);
  const auto d = build_mrc(sack, 0);
  EXPECT_EQ(parse_frame(d, o).reason, ParseReason::kUnknownOpcode);
  EXPECT_EQ(parse_frame(d).kind, FrameKind::kMrc);
  // MRC disabled: unknown opcode, BTH still decoded.
  ParseOptions off;
  off.mrc.enabled = false;
  fi = parse_frame(d, off);
  EXPECT_EQ(fi.reason, ParseReason::kUnknownOpcode);
  EXPECT_NE(fi.bth, nullptr);
  // An invalid config (base 0x00 would swallow RoCE) disables MRC parsing.
  ParseOptions bad;
  bad.mrc.opcode_base = 0x00;
  EXPECT_EQ(parse_frame(test::build(rc, 16), bad).kind, FrameKind::kRoce);
  EXPECT_EQ(parse_frame(d, bad).reason, ParseReason::kUnknownOpcode);
  // Builder refuses an invalid config.
  MrcFrameSpec b = sample_mrc(MrcOp::kProbe);
  b.wire.opcode_base = 0x20;
  std::vector<uint8_t> out(256);
  EXPECT_EQ(build_mrc_frame(out, b, {}).error, BuildError::kUnknownOpcode);
  EXPECT_EQ(mrc_frame_bytes(b, 0), 0u);
}

TEST(Mrc, BuilderErrors) {
  std::vector<uint8_t> out(512);
  const std::vector<uint8_t> pl(8);
  EXPECT_EQ(build_mrc_frame(out, sample_mrc(MrcOp::kSack), pl).error, BuildError::kPayloadNotAllowed);
  MrcFrameSpec s = sample_mrc(MrcOp::kWriteOnly);
  const std::size_t need = mrc_frame_bytes(s, pl.size());
  std::vector<uint8_t> small(need - 1);
  EXPECT_EQ(build_mrc_frame(small, s, pl).error, BuildError::kBufferTooSmall);
  std::vector<uint8_t> hdr_only(need - pl.size() - 4 - 1);  // one short of the headers
  EXPECT_EQ(build_mrc_headers(hdr_only, s, pl.size()).error, BuildError::kBufferTooSmall);
  std::vector<uint8_t> exact(need);
  EXPECT_TRUE(build_mrc_frame(exact, s, pl).ok());
  const BuildResult h = build_mrc_headers(exact, s, pl.size());
  EXPECT_EQ(h.header_bytes, 14u + 20 + 8 + 12 + 20 + 16);
  EXPECT_EQ(h.frame_bytes, need);
}

// ------------------------------------------------------------ SACK bitmap

TEST(Mrc, SackBitmapAcrossPsnWrap) {
  const Psn cack(0xFFFFF0);
  const int16_t off = 1;
  const Psn base = mrc_sack_base(cack, off);
  EXPECT_EQ(base, Psn(0xFFFFF1));
  uint64_t bm = 0;
  // Received: 0xFFFFF3, 0xFFFFFF (bit 14), 0x000000 (bit 15), 0x000030 (bit 63).
  for (uint32_t v : {0xFFFFF3u, 0xFFFFFFu, 0x000000u, 0x000030u}) bm = mrc_sack_set(bm, base, Psn(v));
  EXPECT_EQ(bm, (uint64_t{1} << 2) | (uint64_t{1} << 14) | (uint64_t{1} << 15) | (uint64_t{1} << 63));
  EXPECT_EQ(mrc_sack_set(bm, base, Psn(0x000031)), bm);  // past the window
  EXPECT_EQ(mrc_sack_set(bm, base, Psn(0xFFFFF0)), bm);  // before the base
  EXPECT_EQ(mrc_sack_bit(base, Psn(0x000000)), 15);
  EXPECT_EQ(mrc_sack_bit(base, Psn(0x000031)), -1);
  EXPECT_EQ(mrc_sack_state(cack, off, bm, Psn(0xFFFFE0)), MrcSackState::kReceived);
  EXPECT_EQ(mrc_sack_state(cack, off, bm, cack), MrcSackState::kReceived);
  EXPECT_EQ(mrc_sack_state(cack, off, bm, Psn(0xFFFFF1)), MrcSackState::kMissing);
  EXPECT_EQ(mrc_sack_state(cack, off, bm, Psn(0xFFFFF3)), MrcSackState::kReceived);
  EXPECT_EQ(mrc_sack_state(cack, off, bm, Psn(0x000000)), MrcSackState::kReceived);
  EXPECT_EQ(mrc_sack_state(cack, off, bm, Psn(0x000001)), MrcSackState::kMissing);
  EXPECT_EQ(mrc_sack_state(cack, off, bm, Psn(0x000030)), MrcSackState::kReceived);
  EXPECT_EQ(mrc_sack_state(cack, off, bm, Psn(0x000031)), MrcSackState::kUnknown);
  // A negative offset (base below CACK, UET-style 8 alignment) also wraps.
  EXPECT_EQ(mrc_sack_base(Psn(2), -8), Psn(0xFFFFFA));
  EXPECT_EQ(mrc_sack_state(Psn(2), -8, 0, Psn(1)), MrcSackState::kReceived);
  EXPECT_EQ(mrc_sack_state(Psn(2), -8, 0, Psn(3)), MrcSackState::kMissing);

  // Through a frame: the SACK carries CACK in the BTH PSN and the bitmap.
  MrcFrameSpec s = sample_mrc(MrcOp::kSack);
  s.bth.psn = cack;
  s.sack.sack_offset = off;
  s.sack.bitmap = bm;
  s.sack.ack_psn_offset = 16;  // the trigger: 0x000000
  const auto f = build_mrc(s, 0);
  const FrameInfo fi = parse_frame(f);
  ASSERT_TRUE(fi.ok());
  const Seth& h = *fi.mrc.seth;
  const Psn got_cack = fi.bth->get_psn();
  EXPECT_EQ(got_cack + static_cast<uint32_t>(static_cast<int32_t>(h.ack_offset())), Psn(0));
  for (uint32_t v = 0xFFFFE0; v != 0x40; v = (v + 1) & Psn::kMask) {
    EXPECT_EQ(mrc_sack_state(got_cack, h.base_offset(), h.bitmap.value(), Psn(v)),
              mrc_sack_state(cack, off, bm, Psn(v)));
  }
}

// ------------------------------------------------------------ trimmed

TEST(Mrc, TrimmedDataFramesAreClassified) {
  const L3Spec l3s[] = {test::sample_v4(), test::sample_v6(), test::sample_srv6()};
  for (const L3Spec& l3 : l3s) {
    MrcFrameSpec s = sample_mrc(MrcOp::kWriteMiddle, l3);
    auto f = build_mrc(s, 1024);
    const FrameInfo whole = parse_frame(f);
    ASSERT_TRUE(whole.ok());
    // A switch trims it to its headers (trim.h keeps every MRC header).
    EXPECT_EQ(trim_header_end(whole), whole.payload_offset);
    auto cut = f;
    const TrimResult tr = trim_frame(cut, parse_frame(cut), 64, 46);
    ASSERT_TRUE(tr.ok());
    cut.resize(tr.frame_bytes);
    FrameInfo fi = parse_frame(cut);
    ASSERT_TRUE(fi.ok()) << to_string(fi.reason);
    EXPECT_EQ(fi.kind, FrameKind::kMrc);
    EXPECT_TRUE(fi.mrc.trimmed);
    EXPECT_EQ(fi.payload_bytes, 0u);
    EXPECT_EQ(fi.icrc_offset, 0u);
    EXPECT_EQ(icrc_verify(cut, fi), IcrcStatus::kNotRoce);
    EXPECT_EQ(fi.mrc.meth->msn.value(), s.meth.msn);
    EXPECT_EQ(fi.reth->va.value(), s.reth_va);
    // Trimmed to a size past the headers: only the DSCP tells.
    auto part = f;
    const TrimResult tp = trim_frame(part, parse_frame(part), static_cast<uint32_t>(whole.payload_offset + 40), 46);
    part.resize(tp.frame_bytes);
    fi = parse_frame(part);
    ASSERT_TRUE(fi.ok());
    EXPECT_FALSE(fi.mrc.trimmed);
    EXPECT_EQ(icrc_verify(part, fi), IcrcStatus::kBad);
    ParseOptions o;
    o.mrc.trimmed_dscp_mask = uint64_t{1} << 46;
    fi = parse_frame(part, o);
    ASSERT_TRUE(fi.ok());
    EXPECT_TRUE(fi.mrc.trimmed);
    EXPECT_EQ(fi.payload_bytes, 0u);
    // Not the trim code point: an untrimmed frame is not classified.
    EXPECT_FALSE(parse_frame(f, o).mrc.trimmed);
  }
  // Control frames are never "trimmed": a SACK cut short is bad.
  MrcFrameSpec k = sample_mrc(MrcOp::kSack);
  auto g = build_mrc(k, 0);
  const FrameInfo gi = parse_frame(g);
  ASSERT_TRUE(gi.ok());
  const TrimResult tr = trim_frame(g, gi, 0, 46);
  g.resize(tr.frame_bytes);
  EXPECT_EQ(parse_frame(g).reason, ParseReason::kBadLength);
}

// ------------------------------------------------------------ bad frames

ParseReason reason_after(MrcOp op, const std::function<void(std::vector<uint8_t>&, std::size_t bth)>& mutate,
                         std::size_t n = 64) {
  MrcFrameSpec s = sample_mrc(op);
  auto f = build_mrc(s, n);
  mutate(f, 14 + 20 + 8);
  return parse_frame(f).reason;
}

TEST(Mrc, MalformedFramesRejectedWithReasons) {
  const std::size_t x = 12;  // first MRC header, from the BTH
  // METH: LAST flag contradicting the opcode, FIRST with an offset.
  EXPECT_EQ(reason_after(MrcOp::kWriteMiddle, [&](auto& f, std::size_t b) { f[b + x] |= Meth::kFlagLast; }),
            ParseReason::kMrcBadMeth);
  EXPECT_EQ(reason_after(MrcOp::kWriteOnly, [&](auto& f, std::size_t b) { f[b + x] &= ~Meth::kFlagLast; }),
            ParseReason::kMrcBadMeth);
  EXPECT_EQ(reason_after(MrcOp::kWriteFirst, [&](auto& f, std::size_t b) { f[b + x + Meth::kOffMsgOffset + 3] = 4; }),
            ParseReason::kMrcBadMeth);
  // RETH: payload past the DMA length; LAST short of it.
  EXPECT_EQ(reason_after(MrcOp::kWriteMiddle,
                         [&](auto& f, std::size_t b) { f[b + x + Meth::kSize + 14] = 0x20; f[b + x + Meth::kSize + 15] = 0x01; }),
            ParseReason::kMrcBadReth);
  EXPECT_EQ(reason_after(MrcOp::kWriteLast, [&](auto& f, std::size_t b) { f[b + x + Meth::kSize + 12] = 0x01; }),
            ParseReason::kMrcBadReth);
  // SETH M = 3; CC state rcv_cwnd_pen > 127.
  EXPECT_EQ(reason_after(MrcOp::kSack, [&](auto& f, std::size_t b) { f[b + x] |= 0xC0; }), ParseReason::kMrcBadSack);
  EXPECT_EQ(reason_after(MrcOp::kSack, [&](auto& f, std::size_t b) { f[b + x + Seth::kSize + 12] = 0x80; }),
            ParseReason::kMrcBadSack);
  // NETH reason 0.
  EXPECT_EQ(reason_after(MrcOp::kNack, [&](auto& f, std::size_t b) { f[b + x] = 0; }), ParseReason::kMrcBadNack);
  // Endpoint: wrong QPN, unknown op, too many ports.
  EXPECT_EQ(reason_after(MrcOp::kEndpointRequest, [&](auto& f, std::size_t b) { f[b + 7] = 3; }),
            ParseReason::kMrcBadEndpoint);
  EXPECT_EQ(reason_after(MrcOp::kEndpointResponse, [&](auto& f, std::size_t b) { f[b + x] = 2; }),
            ParseReason::kMrcBadEndpoint);
  EXPECT_EQ(reason_after(MrcOp::kEndpointRequest, [&](auto& f, std::size_t b) { f[b + x + 1] = 33; }),
            ParseReason::kMrcBadEndpoint);
  // Undefined op in the MRC range; TVer != 0.
  EXPECT_EQ(reason_after(MrcOp::kProbe, [&](auto& f, std::size_t b) { f[b] = 0xC0; }), ParseReason::kUnknownOpcode);
  EXPECT_EQ(reason_after(MrcOp::kProbe, [&](auto& f, std::size_t b) { f[b + 1] |= 1; }), ParseReason::kBadTver);
  // PadCnt larger than the payload.
  EXPECT_EQ(reason_after(MrcOp::kWriteOnly, [&](auto& f, std::size_t b) { f[b + 1] |= 0x30; }, 0),
            ParseReason::kBadPad);
}

TEST(Mrc, PayloadOnControlFrameIsBadLength) {
  // A SACK built as a data frame of the same size, relabelled: 8 bytes too many.
  MrcFrameSpec s = sample_mrc(MrcOp::kProbe);
  auto f = build_mrc(s, 0);
  std::vector<uint8_t> longer = f;
  longer.insert(longer.end() - 4, 8, 0);
  // Fix the lengths (IPv4 total, checksum, UDP): the parser must still refuse.
  auto* ip = reinterpret_cast<Ipv4Header*>(longer.data() + 14);
  ip->total_length.set(static_cast<uint16_t>(ip->total_length.value() + 8));
  ipv4_set_checksum(*ip);
  auto* udp = reinterpret_cast<UdpHeader*>(longer.data() + 34);
  udp->length.set(static_cast<uint16_t>(udp->length.value() + 8));
  EXPECT_EQ(parse_frame(longer).reason, ParseReason::kBadLength);
}

TEST(Mrc, EveryTruncationAndEveryByteMutationIsSafe) {
  for (MrcOp op : kAllMrcOps) {
    MrcFrameSpec s = sample_mrc(op, test::sample_srv6());
    const auto f = build_mrc(s, 40);
    // Shorter frames (the IP length then runs past them), and a head split.
    for (std::size_t len = 0; len < f.size(); ++len) {
      const std::span<const uint8_t> part(f.data(), len);
      const FrameInfo fi = parse_frame(part);
      EXPECT_FALSE(fi.ok()) << to_string(op) << " len " << len;
      const FrameInfo split = parse_frame(part, static_cast<uint32_t>(f.size()));
      if (split.ok()) {
        EXPECT_GE(len, split.payload_offset);
      }
    }
    // Any single byte changed: parsed or rejected, never past the frame.
    for (std::size_t i = 0; i < f.size(); ++i) {
      for (uint8_t v : {uint8_t{0x00}, uint8_t{0xFF}, static_cast<uint8_t>(f[i] ^ 0x5A)}) {
        auto g = f;
        g[i] = v;
        const FrameInfo fi = parse_frame(g);
        if (fi.ok() && fi.kind == FrameKind::kMrc) {
          EXPECT_LE(fi.payload_offset + fi.payload_bytes + fi.pad_bytes, g.size());
          (void)icrc_verify(g, fi);
        }
      }
    }
  }
}

}  // namespace
}  // namespace sf::wire
