// MRC frame builders. The Eth / IP / UDP / BTH part is build_roce_headers()'s
// (as a SEND_ONLY whose payload is the MRC headers + the data: every length
// and the IPv4 checksums come out right, and since every MRC header is a
// multiple of 4 bytes, so does PadCnt); then the opcode and the UDP port are
// set and the MRC headers written.
#include "common/wire/mrc_builder.h"

#include <cstring>

#include "common/wire/icrc.h"

namespace sf::wire {

namespace {

static_assert(Meth::kSize % 4 == 0 && Seth::kSize % 4 == 0 && MrcCcState::kSize % 4 == 0 && Neth::kSize % 4 == 0 &&
                  Peth::kSize % 4 == 0 && Erth::kSize % 4 == 0 && Eeth::kSize % 4 == 0,
              "PadCnt of the carrier SEND_ONLY equals the data's only if every MRC header is 4-byte aligned");

bool is_endpoint(MrcOp op) { return op == MrcOp::kEndpointRequest || op == MrcOp::kEndpointResponse; }

RoceFrameSpec carrier(const MrcFrameSpec& s) {
  RoceFrameSpec r;
  r.l2 = s.l2;
  r.l3 = s.l3;
  r.udp_src_port = s.udp_src_port;
  r.bth.opcode = Opcode::kRcSendOnly;
  r.bth.se = s.bth.se;
  r.bth.pkey = s.bth.pkey;
  r.bth.fecn = s.bth.fecn;
  r.bth.becn = s.bth.becn;
  r.bth.ack_req = s.bth.ack_req;
  r.bth.dest_qp = is_endpoint(s.op) ? kMrcEndpointQpn : s.bth.dest_qp;
  r.bth.psn = is_endpoint(s.op) ? Psn(0) : s.bth.psn;
  return r;
}

std::size_t l2_bytes(const L2Spec& l2) { return EthHeader::kSize + (l2.vlan ? VlanTag::kSize : 0); }

}  // namespace

std::size_t mrc_frame_bytes(const MrcFrameSpec& spec, std::size_t payload_bytes) {
  if (mrc_wire_config_error(spec.wire) != nullptr) return 0;
  return roce_frame_bytes(carrier(spec), mrc_layout(spec.op).ext_bytes() + payload_bytes);
}

BuildResult build_mrc_headers(std::span<uint8_t> out, const MrcFrameSpec& spec, std::size_t payload_bytes) {
  if (mrc_wire_config_error(spec.wire) != nullptr) return {BuildError::kUnknownOpcode, 0, 0};
  const MrcLayout ml = mrc_layout(spec.op);
  if (!ml.payload && payload_bytes != 0) return {BuildError::kPayloadNotAllowed, 0, 0};
  const std::size_t ext = ml.ext_bytes();
  BuildResult r = build_roce_headers(out, carrier(spec), ext + payload_bytes);
  if (!r.ok()) return r;
  const std::size_t bth_off = r.header_bytes - Bth::kSize;
  if (out.size() < r.header_bytes + ext) return {BuildError::kBufferTooSmall, 0, 0};
  reinterpret_cast<UdpHeader*>(out.data() + bth_off - UdpHeader::kSize)->dst_port.set(spec.wire.udp_port);
  out[bth_off] = mrc_opcode(spec.op, spec.wire.opcode_base);
  uint8_t* p = out.data() + r.header_bytes;
  std::memset(p, 0, ext);
  r.header_bytes += ext;

  if (ml.meth) {
    auto* h = reinterpret_cast<Meth*>(p);
    const MethSpec& m = spec.meth;
    h->flags = static_cast<uint8_t>((m.rtx ? Meth::kFlagRtx : 0u) | (mrc_is_last(spec.op) ? Meth::kFlagLast : 0u) |
                                    (m.ts_valid ? Meth::kFlagTs : 0u));
    h->rqmsn.set(m.rqmsn);
    h->msn.set(m.msn);
    h->msg_offset.set(m.msg_offset);
    h->ev.set(m.ev);
    h->tx_ts.set(m.tx_ts);
    p += Meth::kSize;
  }
  if (ml.reth) {
    auto* h = reinterpret_cast<Reth*>(p);
    h->va.set(spec.reth_va);
    h->rkey.set(spec.reth_rkey);
    h->dma_length.set(spec.reth_dma_length);
    p += Reth::kSize;
  }
  if (ml.immdt) {
    reinterpret_cast<ImmDt*>(p)->imm.set(spec.immdt);
    p += ImmDt::kSize;
  }
  if (ml.aeth) {
    auto* h = reinterpret_cast<Aeth*>(p);
    h->syndrome = spec.aeth_syndrome;
    h->msn.set(spec.aeth_msn);
    p += Aeth::kSize;
  }
  if (ml.seth) {
    auto* h = reinterpret_cast<Seth*>(p);
    const SackSpec& k = spec.sack;
    h->flags = static_cast<uint8_t>(((static_cast<uint8_t>(k.skip) & 3u) << 6) |
                                    (k.probe_response ? Seth::kFlagProbeResp : 0u) | (k.ce ? Seth::kFlagCe : 0u));
    h->ack_psn_offset.set(static_cast<uint16_t>(k.ack_psn_offset));
    h->ev.set(k.ev);
    h->sack_offset.set(static_cast<uint16_t>(k.sack_offset));
    h->mpr.set(k.mpr);
    h->bitmap.set(k.bitmap);
    p += Seth::kSize;
  }
  if (ml.cc_state) {
    auto* h = reinterpret_cast<MrcCcState*>(p);
    const MrcCcStateSpec& c = spec.cc;
    h->ts_echo.set(c.ts_echo);
    h->rcvd_bytes.set(c.rcvd_bytes);
    h->ecn_count.set(c.ecn_count);
    h->ooo_count.set(c.ooo_count);
    h->rcv_cwnd_pen = static_cast<uint8_t>(c.rcv_cwnd_pen & MrcCcState::kMaxRcvCwndPen);
    h->cc_type = static_cast<uint8_t>(c.cc_type);
    h->service_time.set(c.service_time);
    p += MrcCcState::kSize;
  }
  if (ml.neth) {
    auto* h = reinterpret_cast<Neth*>(p);
    const NackSpec& n = spec.nack;
    h->reason = static_cast<uint8_t>(n.reason);
    h->flags = static_cast<uint8_t>((n.ce ? Neth::kFlagCe : 0u) | (n.rtx ? Neth::kFlagRtx : 0u));
    h->vendor_code = n.vendor_code;
    h->ev.set(n.ev);
    h->nack_psn.set(n.nack_psn.value());
    h->ts_echo.set(n.ts_echo);
    p += Neth::kSize;
  }
  if (ml.peth) {
    auto* h = reinterpret_cast<Peth*>(p);
    h->probe_id.set(spec.probe.probe_id);
    h->ev.set(spec.probe.ev);
    h->tx_ts.set(spec.probe.tx_ts);
    p += Peth::kSize;
  }
  if (ml.erth) {
    auto* h = reinterpret_cast<Erth*>(p);
    const EndpointRequestSpec& e = spec.ep_request;
    h->op = static_cast<uint8_t>(e.op);
    h->num_ports = e.num_ports;
    h->request_id.set(e.request_id);
    h->ev.set(e.ev);
    h->port_status_mask.set(e.port_status_mask);
    h->tx_ts.set(e.tx_ts);
    p += Erth::kSize;
  }
  if (ml.eeth) {
    auto* h = reinterpret_cast<Eeth*>(p);
    const EndpointResponseSpec& e = spec.ep_response;
    h->op = static_cast<uint8_t>(e.op);
    h->status = static_cast<uint8_t>(e.status);
    h->request_id.set(e.request_id);
    h->ev.set(e.ev);
    h->port_status_mask.set(e.port_status_mask);
    h->ts_echo.set(e.ts_echo);
    p += Eeth::kSize;
  }
  return r;
}

BuildResult build_mrc_frame(std::span<uint8_t> out, const MrcFrameSpec& spec, std::span<const uint8_t> payload) {
  BuildResult r = build_mrc_headers(out, spec, payload.size());
  if (!r.ok()) return r;
  if (out.size() < r.frame_bytes) return {BuildError::kBufferTooSmall, 0, 0};
  uint8_t* p = out.data() + r.header_bytes;
  if (!payload.empty()) std::memcpy(p, payload.data(), payload.size());
  const std::size_t pad = (4 - (payload.size() & 3u)) & 3u;
  std::memset(p + payload.size(), 0, pad);
  const bool v4 = std::holds_alternative<Ipv4Spec>(spec.l3);
  const std::size_t ip_off = l2_bytes(spec.l2) + (std::holds_alternative<Srv6Spec>(spec.l3) ? Ipv6Header::kSize : 0);
  const IcrcLayout layout{v4 ? IpVersion::kV4 : IpVersion::kV6,
                          static_cast<uint32_t>(v4 ? Ipv4Header::kSize : Ipv6Header::kSize)};
  const std::size_t icrc_off = r.frame_bytes - kIcrcBytes;
  store_le32(out.data() + icrc_off,
             icrc_compute(std::span<const uint8_t>(out.data() + ip_off, icrc_off - ip_off), layout));
  return r;
}

}  // namespace sf::wire
