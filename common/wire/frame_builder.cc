// RoCEv2 frame builders.
#include "common/wire/frame_builder.h"

#include <cstring>

#include "common/wire/icrc.h"
#include "common/wire/udp.h"

namespace sf::wire {

const char* to_string(BuildError e) {
  switch (e) {
    case BuildError::kOk: return "ok";
    case BuildError::kBufferTooSmall: return "buffer_too_small";
    case BuildError::kUnknownOpcode: return "unknown_opcode";
    case BuildError::kPayloadNotAllowed: return "payload_not_allowed";
    case BuildError::kTooLong: return "too_long";
  }
  return "?";
}

namespace {

constexpr std::size_t kMaxIpLength = 0xFFFF;

std::size_t l2_bytes(const L2Spec& l2) { return EthHeader::kSize + (l2.vlan ? VlanTag::kSize : 0); }

std::size_t l3_bytes(const L3Spec& l3) {
  if (std::holds_alternative<Ipv4Spec>(l3)) return Ipv4Header::kSize;
  if (std::holds_alternative<Ipv6Spec>(l3)) return Ipv6Header::kSize;
  return 2 * Ipv6Header::kSize;
}

std::size_t pad_for(std::size_t payload_bytes) { return (4 - (payload_bytes & 3u)) & 3u; }

void write_ipv6(uint8_t* p, const Ipv6Spec& s, uint8_t next_header, std::size_t payload_len) {
  auto* h = reinterpret_cast<Ipv6Header*>(p);
  h->set_vtc_flow(static_cast<uint8_t>(((s.dscp & 0x3Fu) << 2) | static_cast<uint8_t>(s.ecn)), s.flow_label);
  h->payload_length.set(static_cast<uint16_t>(payload_len));
  h->next_header = next_header;
  h->hop_limit = s.hop_limit;
  h->src = s.src;
  h->dst = s.dst;
}

}  // namespace

std::size_t roce_frame_bytes(const RoceFrameSpec& spec, std::size_t payload_bytes) {
  const auto layout = opcode_layout(static_cast<uint8_t>(spec.bth.opcode));
  if (!layout) return 0;
  return l2_bytes(spec.l2) + l3_bytes(spec.l3) + UdpHeader::kSize + Bth::kSize + layout->ext_bytes() +
         payload_bytes + pad_for(payload_bytes) + kIcrcBytes;
}

BuildResult build_roce_headers(std::span<uint8_t> out, const RoceFrameSpec& spec, std::size_t payload_bytes) {
  BuildResult r;
  const auto layout = opcode_layout(static_cast<uint8_t>(spec.bth.opcode));
  if (!layout) return {BuildError::kUnknownOpcode, 0, 0};
  if (!layout->payload && payload_bytes != 0) return {BuildError::kPayloadNotAllowed, 0, 0};
  const std::size_t pad = pad_for(payload_bytes);
  const std::size_t l2 = l2_bytes(spec.l2);
  const std::size_t l3 = l3_bytes(spec.l3);
  const std::size_t udp_len = UdpHeader::kSize + Bth::kSize + layout->ext_bytes() + payload_bytes + pad + kIcrcBytes;
  if (l3 + udp_len > kMaxIpLength) return {BuildError::kTooLong, 0, 0};
  r.header_bytes = l2 + l3 + UdpHeader::kSize + Bth::kSize + layout->ext_bytes();
  r.frame_bytes = l2 + l3 + udp_len;
  if (out.size() < r.header_bytes) return {BuildError::kBufferTooSmall, 0, 0};
  std::memset(out.data(), 0, r.header_bytes);

  uint8_t* p = out.data();
  auto* eth = reinterpret_cast<EthHeader*>(p);
  eth->dst = spec.l2.dst;
  eth->src = spec.l2.src;
  const uint16_t l3_type = std::holds_alternative<Ipv4Spec>(spec.l3) ? kEtherTypeIpv4 : kEtherTypeIpv6;
  if (spec.l2.vlan) {
    eth->ether_type.set(kEtherTypeVlan);
    auto* tag = reinterpret_cast<VlanTag*>(p + EthHeader::kSize);
    tag->set_tci(spec.l2.vlan->pcp, spec.l2.vlan->dei, spec.l2.vlan->vid);
    tag->ether_type.set(l3_type);
  } else {
    eth->ether_type.set(l3_type);
  }
  p += l2;

  if (const auto* v4 = std::get_if<Ipv4Spec>(&spec.l3)) {
    auto* h = reinterpret_cast<Ipv4Header*>(p);
    h->version_ihl = 0x45;
    h->set_dscp_ecn(v4->dscp, v4->ecn);
    h->total_length.set(static_cast<uint16_t>(Ipv4Header::kSize + udp_len));
    h->id.set(v4->id);
    h->flags_frag.set(v4->dont_fragment ? Ipv4Header::kFlagDf : 0);
    h->ttl = v4->ttl;
    h->protocol = kIpProtoUdp;
    h->src = v4->src;
    h->dst = v4->dst;
    ipv4_set_checksum(*h);
  } else if (const auto* v6 = std::get_if<Ipv6Spec>(&spec.l3)) {
    write_ipv6(p, *v6, kIpProtoUdp, udp_len);
  } else {
    const auto& sr = std::get<Srv6Spec>(spec.l3);
    write_ipv6(p, sr.outer, kIpProtoIpv6, Ipv6Header::kSize + udp_len);
    write_ipv6(p + Ipv6Header::kSize, sr.inner, kIpProtoUdp, udp_len);
  }
  p += l3;

  auto* udp = reinterpret_cast<UdpHeader*>(p);
  udp->src_port.set(spec.udp_src_port);
  udp->dst_port.set(kRoceUdpPort);
  udp->length.set(static_cast<uint16_t>(udp_len));
  udp->checksum.set(0);
  p += UdpHeader::kSize;

  auto* bth = reinterpret_cast<Bth*>(p);
  bth->opcode = static_cast<uint8_t>(spec.bth.opcode);
  bth->set_flags(spec.bth.se, spec.bth.mig_req, static_cast<uint8_t>(pad));
  bth->pkey.set(spec.bth.pkey);
  bth->set_fecn_becn(spec.bth.fecn, spec.bth.becn);
  bth->dest_qp.set(spec.bth.dest_qp);
  bth->set_ack_req(spec.bth.ack_req);
  bth->psn.set(spec.bth.psn.value());
  p += Bth::kSize;

  const ExtSpec& e = spec.ext;
  if (layout->deth) {
    auto* h = reinterpret_cast<Deth*>(p);
    h->qkey.set(e.deth_qkey);
    h->src_qp.set(e.deth_src_qp);
    p += Deth::kSize;
  }
  if (layout->reth) {
    auto* h = reinterpret_cast<Reth*>(p);
    h->va.set(e.reth_va);
    h->rkey.set(e.reth_rkey);
    h->dma_length.set(e.reth_dma_length);
    p += Reth::kSize;
  }
  if (layout->atomic_eth) {
    auto* h = reinterpret_cast<AtomicEth*>(p);
    h->va.set(e.atomic_va);
    h->rkey.set(e.atomic_rkey);
    h->swap_add.set(e.atomic_swap_add);
    h->compare.set(e.atomic_compare);
    p += AtomicEth::kSize;
  }
  if (layout->aeth) {
    auto* h = reinterpret_cast<Aeth*>(p);
    h->syndrome = e.aeth_syndrome;
    h->msn.set(e.aeth_msn);
    p += Aeth::kSize;
  }
  if (layout->atomic_ack_eth) {
    reinterpret_cast<AtomicAckEth*>(p)->orig.set(e.atomic_ack_orig);
    p += AtomicAckEth::kSize;
  }
  if (layout->immdt) {
    reinterpret_cast<ImmDt*>(p)->imm.set(e.immdt);
    p += ImmDt::kSize;
  }
  if (layout->ieth) {
    reinterpret_cast<Ieth*>(p)->rkey.set(e.ieth_rkey);
    p += Ieth::kSize;
  }
  // CNP body: the 16 reserved bytes were zeroed above.
  return r;
}

BuildResult build_roce_frame(std::span<uint8_t> out, const RoceFrameSpec& spec, std::span<const uint8_t> payload) {
  BuildResult r = build_roce_headers(out, spec, payload.size());
  if (!r.ok()) return r;
  if (out.size() < r.frame_bytes) return {BuildError::kBufferTooSmall, 0, 0};
  uint8_t* p = out.data() + r.header_bytes;
  if (!payload.empty()) std::memcpy(p, payload.data(), payload.size());
  const std::size_t pad = pad_for(payload.size());
  std::memset(p + payload.size(), 0, pad);
  const std::size_t ip_off = l2_bytes(spec.l2) + (std::holds_alternative<Srv6Spec>(spec.l3) ? Ipv6Header::kSize : 0);
  const IcrcLayout layout{std::holds_alternative<Ipv4Spec>(spec.l3) ? IpVersion::kV4 : IpVersion::kV6,
                          static_cast<uint32_t>(std::holds_alternative<Ipv4Spec>(spec.l3) ? Ipv4Header::kSize
                                                                                         : Ipv6Header::kSize)};
  const std::size_t icrc_off = r.frame_bytes - kIcrcBytes;
  store_le32(out.data() + icrc_off, icrc_compute(std::span<const uint8_t>(out.data() + ip_off, icrc_off - ip_off), layout));
  return r;
}

BuildResult build_cnp_frame(std::span<uint8_t> out, const RoceFrameSpec& spec) {
  RoceFrameSpec s = spec;
  s.bth = BthSpec{};
  s.bth.opcode = Opcode::kCnp;
  s.bth.becn = true;
  s.bth.dest_qp = spec.bth.dest_qp;
  return build_roce_frame(out, s, {});
}

}  // namespace sf::wire
