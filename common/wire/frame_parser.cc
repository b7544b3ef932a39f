// parse_frame(): bounds-checked decode of RoCEv2 and MAC Control frames.
#include "common/wire/frame_parser.h"

#include <algorithm>

#include "common/wire/int_shim.h"

namespace sf::wire {

const char* to_string(ParseReason r) {
  switch (r) {
    case ParseReason::kOk: return "ok";
    case ParseReason::kTruncated: return "truncated";
    case ParseReason::kNotContiguous: return "not_contiguous";
    case ParseReason::kUnsupportedEtherType: return "unsupported_ether_type";
    case ParseReason::kBadVersion: return "bad_version";
    case ParseReason::kBadIhl: return "bad_ihl";
    case ParseReason::kBadLength: return "bad_length";
    case ParseReason::kBadChecksum: return "bad_checksum";
    case ParseReason::kFragmented: return "fragmented";
    case ParseReason::kNotUdp: return "not_udp";
    case ParseReason::kNotRoce: return "not_roce";
    case ParseReason::kBadTver: return "bad_tver";
    case ParseReason::kUnknownOpcode: return "unknown_opcode";
    case ParseReason::kBadPad: return "bad_pad";
    case ParseReason::kUnknownMacControlOpcode: return "unknown_mac_control_opcode";
    case ParseReason::kMrcBadMeth: return "mrc_bad_meth";
    case ParseReason::kMrcBadReth: return "mrc_bad_reth";
    case ParseReason::kMrcBadSack: return "mrc_bad_sack";
    case ParseReason::kMrcBadNack: return "mrc_bad_nack";
    case ParseReason::kMrcBadEndpoint: return "mrc_bad_endpoint";
  }
  return "?";
}

const char* to_string(FrameKind k) {
  switch (k) {
    case FrameKind::kUnknown: return "unknown";
    case FrameKind::kRoce: return "roce";
    case FrameKind::kMacControl: return "mac_control";
    case FrameKind::kMrc: return "mrc";
  }
  return "?";
}

namespace {

// Bounds for one parse: `end` = frame length, `contig` = readable prefix.
class Bounds {
 public:
  Bounds(std::span<const uint8_t> head, uint32_t frame_bytes)
      : data_(head.data()),
        end_(frame_bytes),
        contig_(std::min<uint64_t>(head.size(), frame_bytes)) {}

  // A header of `size` bytes at `off`, or null with `why` set.
  template <typename T>
  const T* view(uint64_t off, ParseReason& why, uint64_t size = sizeof(T)) const {
    if (off + size > end_) {
      why = ParseReason::kTruncated;
      return nullptr;
    }
    if (off + size > contig_) {
      why = ParseReason::kNotContiguous;
      return nullptr;
    }
    return reinterpret_cast<const T*>(data_ + off);
  }
  uint64_t end() const { return end_; }

 private:
  const uint8_t* data_;
  uint64_t end_;
  uint64_t contig_;
};

ParseReason parse_mac_control(const Bounds& b, uint32_t off, FrameInfo& fi) {
  ParseReason why = ParseReason::kOk;
  const auto* op = b.view<Be16>(off, why);
  if (op == nullptr) return why;
  fi.kind = FrameKind::kMacControl;
  fi.mac_control_dst_ok = fi.eth->dst == kMacControlDst;
  switch (op->value()) {
    case static_cast<uint16_t>(MacControlOpcode::kPause):
      fi.mac_opcode = MacControlOpcode::kPause;
      fi.pause = b.view<PauseBody>(off, why);
      return fi.pause ? ParseReason::kOk : why;
    case static_cast<uint16_t>(MacControlOpcode::kPfc):
      fi.mac_opcode = MacControlOpcode::kPfc;
      fi.pfc = b.view<PfcBody>(off, why);
      return fi.pfc ? ParseReason::kOk : why;
    default:
      return ParseReason::kUnknownMacControlOpcode;
  }
}

// DSCP of the header a switch marks when it trims: the outer one for SRv6
// (trim.h rewrites both).
uint8_t trim_dscp(const FrameInfo& fi) {
  if (fi.outer_ipv6 != nullptr) return fi.outer_ipv6->dscp();
  return fi.ipv4 != nullptr ? fi.ipv4->dscp() : fi.ipv6->dscp();
}

// MRC: BTH at `off` (viewed, TVer 0), opcode in the MRC range.
ParseReason parse_mrc(const Bounds& b, uint32_t off, FrameInfo& fi, const ParseOptions& opt) {
  ParseReason why = ParseReason::kOk;
  const auto op = mrc_op_of(fi.bth->opcode, opt.mrc.opcode_base);
  if (!op) return ParseReason::kUnknownOpcode;
  MrcInfo& m = fi.mrc;
  m.op = *op;
  const MrcLayout ml = mrc_layout(*op);
  fi.layout = OpcodeLayout{};
  fi.layout.reth = ml.reth;
  fi.layout.immdt = ml.immdt;
  fi.layout.aeth = ml.aeth;
  fi.layout.payload = ml.payload;
  const uint64_t hdr_end = off + Bth::kSize + ml.ext_bytes();
  if (hdr_end > fi.udp_end) return ParseReason::kBadLength;
  // A data frame with its headers but no room for the ICRC was cut to its
  // headers by a trimming switch; one whose DSCP is a trim code point was
  // trimmed to a size past them.
  const bool cut = hdr_end + kIcrcBytes > fi.udp_end;
  const uint64_t dscp_bit = uint64_t{1} << trim_dscp(fi);
  m.trimmed = ml.payload && (cut || (opt.mrc.trimmed_dscp_mask & dscp_bit) != 0);
  if (cut && !m.trimmed) return ParseReason::kBadLength;
  uint64_t p = off + Bth::kSize;
  auto take = [&](auto*& dst, bool present) {
    if (!present || why != ParseReason::kOk) return;
    using T = std::remove_const_t<std::remove_pointer_t<std::remove_reference_t<decltype(dst)>>>;
    dst = b.view<T>(p, why);
    p += sizeof(T);
  };
  take(m.meth, ml.meth);
  take(fi.reth, ml.reth);
  take(fi.immdt, ml.immdt);
  take(fi.aeth, ml.aeth);
  take(m.seth, ml.seth);
  take(m.cc, ml.cc_state);
  take(m.neth, ml.neth);
  take(m.peth, ml.peth);
  take(m.erth, ml.erth);
  take(m.eeth, ml.eeth);
  if (why != ParseReason::kOk) return why;
  fi.payload_offset = static_cast<uint32_t>(p);
  if (m.trimmed) {
    fi.icrc_offset = 0;  // gone with the payload
  } else {
    const uint64_t rest = fi.icrc_offset - p;
    if (!ml.payload) {
      if (rest != 0) return ParseReason::kBadLength;
    } else {
      fi.pad_bytes = fi.bth->pad_count();
      if (fi.pad_bytes > rest) return ParseReason::kBadPad;
    }
    fi.payload_bytes = static_cast<uint32_t>(rest - fi.pad_bytes);
  }
  if (m.meth != nullptr) {
    const uint64_t msg_off = m.meth->msg_offset.value();
    const uint64_t dma_len = fi.reth->dma_length.value();
    if (m.meth->last() != mrc_is_last(*op) || (mrc_is_first(*op) && msg_off != 0)) return ParseReason::kMrcBadMeth;
    const uint64_t end = msg_off + fi.payload_bytes;
    if (end > dma_len || (!m.trimmed && mrc_is_last(*op) && end != dma_len)) return ParseReason::kMrcBadReth;
  }
  if (m.seth != nullptr &&
      (m.seth->skip_raw() == 3 || m.cc->rcv_cwnd_pen > MrcCcState::kMaxRcvCwndPen)) {
    return ParseReason::kMrcBadSack;
  }
  if (m.neth != nullptr && m.neth->reason == 0) return ParseReason::kMrcBadNack;
  // DestQP 2 is the endpoint's: only ERTH / EETH frames go there (a data,
  // SACK, NACK or probe frame to it has neither: refused, never handed on).
  if (fi.bth->dest_qp.value() == kMrcEndpointQpn && m.erth == nullptr && m.eeth == nullptr) {
    return ParseReason::kMrcBadEndpoint;
  }
  if (m.erth != nullptr || m.eeth != nullptr) {
    const uint8_t ep_op = m.erth != nullptr ? m.erth->op : m.eeth->op;
    if (fi.bth->dest_qp.value() != kMrcEndpointQpn || ep_op > static_cast<uint8_t>(MrcEndpointOp::kEvProbe) ||
        (m.erth != nullptr && m.erth->num_ports > kMrcMaxPorts)) {
      return ParseReason::kMrcBadEndpoint;
    }
  }
  fi.kind = FrameKind::kMrc;
  return ParseReason::kOk;
}

// Decodes BTH + ext headers + payload inside UDP payload [off, udp_end):
// RoCEv2 when the UDP port is RoCE's, MRC (parse_mrc) when it is MRC's and
// the opcode's transport bits are the MRC opcode base.
ParseReason parse_roce(const Bounds& b, uint32_t off, FrameInfo& fi, const ParseOptions& opt, bool roce_port,
                       bool mrc_port) {
  ParseReason why = ParseReason::kOk;
  const uint64_t udp_payload = fi.udp_end - off;
  if (udp_payload < Bth::kSize + kIcrcBytes) return ParseReason::kBadLength;
  fi.bth = b.view<Bth>(off, why);
  if (fi.bth == nullptr) return why;
  fi.bth_offset = off;
  fi.icrc_offset = fi.udp_end - static_cast<uint32_t>(kIcrcBytes);
  if (fi.bth->tver() != 0) return ParseReason::kBadTver;
  if (mrc_port && (fi.bth->opcode & 0xE0u) == opt.mrc.opcode_base) return parse_mrc(b, off, fi, opt);
  if (!roce_port) return ParseReason::kUnknownOpcode;  // the MRC port carries MRC opcodes only
  const auto layout = opcode_layout(fi.bth->opcode);
  if (!layout) return ParseReason::kUnknownOpcode;
  fi.layout = *layout;
  const uint64_t body = udp_payload - Bth::kSize - kIcrcBytes;  // ext headers + payload + pad
  if (layout->ext_bytes() > body) return ParseReason::kBadLength;
  uint64_t p = off + Bth::kSize;
  // Ext headers in IBA order; each view also proves contiguity.
  auto take = [&](auto*& dst, bool present) {
    if (!present || why != ParseReason::kOk) return;
    using T = std::remove_const_t<std::remove_pointer_t<std::remove_reference_t<decltype(dst)>>>;
    dst = b.view<T>(p, why);
    p += sizeof(T);
  };
  take(fi.deth, layout->deth);
  take(fi.reth, layout->reth);
  take(fi.atomic_eth, layout->atomic_eth);
  take(fi.aeth, layout->aeth);
  take(fi.atomic_ack_eth, layout->atomic_ack_eth);
  take(fi.immdt, layout->immdt);
  take(fi.ieth, layout->ieth);
  if (why != ParseReason::kOk) return why;
  if (layout->fixed_body_bytes != 0) {
    if (b.view<uint8_t>(p, why, layout->fixed_body_bytes) == nullptr) return why;
    p += layout->fixed_body_bytes;
  }
  const uint64_t rest = fi.icrc_offset - p;
  fi.payload_offset = static_cast<uint32_t>(p);
  if (!layout->payload) {
    // Nothing may follow the headers but an INT shim (int_shim.h: an ACK's
    // echo), announced by the BTH INT flag; the receiver strips it.
    if (rest != 0 && !bth_int_flag(*fi.bth)) return ParseReason::kBadLength;
    fi.payload_bytes = 0;
  } else {
    fi.pad_bytes = fi.bth->pad_count();
    if (fi.pad_bytes > rest) return ParseReason::kBadPad;
    fi.payload_bytes = static_cast<uint32_t>(rest - fi.pad_bytes);
  }
  fi.kind = FrameKind::kRoce;
  return ParseReason::kOk;
}

// IP header at `off` (ICRC-covered one), then UDP and RoCE. `ip_end` bounds
// the IP packet (its total length, or the outer header's payload).
ParseReason parse_udp(const Bounds& b, uint64_t off, uint64_t ip_end, FrameInfo& fi, const ParseOptions& opt) {
  ParseReason why = ParseReason::kOk;
  fi.udp = b.view<UdpHeader>(off, why);
  if (fi.udp == nullptr) return why;
  fi.udp_offset = static_cast<uint32_t>(off);
  const uint64_t len = fi.udp->length.value();
  if (len < UdpHeader::kSize || off + len > ip_end) return ParseReason::kBadLength;
  fi.udp_end = static_cast<uint32_t>(off + len);
  if (opt.stop_at_udp) return ParseReason::kOk;
  const uint16_t port = fi.udp->dst_port.value();
  const bool roce_port = port == kRoceUdpPort;
  const bool mrc_port = opt.mrc.enabled && port == opt.mrc.udp_port && mrc_wire_config_error(opt.mrc) == nullptr;
  if (!roce_port && !mrc_port) return ParseReason::kNotRoce;
  return parse_roce(b, static_cast<uint32_t>(off + UdpHeader::kSize), fi, opt, roce_port, mrc_port);
}

ParseReason parse_ipv6(const Bounds& b, uint64_t off, uint64_t limit, bool outer, FrameInfo& fi,
                       const ParseOptions& opt);

ParseReason parse_ipv4(const Bounds& b, uint64_t off, FrameInfo& fi, const ParseOptions& opt) {
  ParseReason why = ParseReason::kOk;
  const auto* ip = b.view<Ipv4Header>(off, why);
  if (ip == nullptr) return why;
  if (ip->version() != 4) return ParseReason::kBadVersion;
  const uint64_t hlen = ip->header_bytes();
  if (hlen < Ipv4Header::kSize) return ParseReason::kBadIhl;
  const auto* raw = b.view<uint8_t>(off, why, hlen);
  if (raw == nullptr) return why;
  fi.ip_version = IpVersion::kV4;
  fi.ipv4 = ip;
  fi.ip_offset = static_cast<uint32_t>(off);
  fi.ip_header_bytes = static_cast<uint32_t>(hlen);
  const uint64_t total = ip->total_length.value();
  if (total < hlen) return ParseReason::kBadLength;
  if (off + total > b.end()) return ParseReason::kTruncated;
  if (opt.verify_ipv4_checksum && !ipv4_checksum_ok(std::span<const uint8_t>(raw, hlen))) {
    return ParseReason::kBadChecksum;
  }
  if (ip->is_fragment()) return ParseReason::kFragmented;
  if (ip->protocol != kIpProtoUdp) return ParseReason::kNotUdp;
  return parse_udp(b, off + hlen, off + total, fi, opt);
}

ParseReason parse_ipv6(const Bounds& b, uint64_t off, uint64_t limit, bool outer, FrameInfo& fi,
                       const ParseOptions& opt) {
  ParseReason why = ParseReason::kOk;
  const auto* ip = b.view<Ipv6Header>(off, why);
  if (ip == nullptr) return why;
  if (ip->version() != 6) return ParseReason::kBadVersion;
  const uint64_t end = off + Ipv6Header::kSize + ip->payload_length.value();
  if (end > b.end()) return ParseReason::kTruncated;
  if (end > limit) return ParseReason::kBadLength;  // inner longer than the outer payload
  if (outer && ip->next_header == kIpProtoIpv6) {
    fi.outer_ipv6 = ip;
    return parse_ipv6(b, off + Ipv6Header::kSize, end, false, fi, opt);
  }
  fi.ip_version = IpVersion::kV6;
  fi.ipv6 = ip;
  fi.ip_offset = static_cast<uint32_t>(off);
  fi.ip_header_bytes = Ipv6Header::kSize;
  if (ip->next_header != kIpProtoUdp) return ParseReason::kNotUdp;
  return parse_udp(b, off + Ipv6Header::kSize, end, fi, opt);
}

}  // namespace

FrameInfo parse_frame(std::span<const uint8_t> head, uint32_t frame_bytes, ParseOptions opt) {
  FrameInfo fi;
  const Bounds b(head, frame_bytes);
  fi.frame_bytes = static_cast<uint32_t>(b.end());
  ParseReason why = ParseReason::kOk;
  fi.eth = b.view<EthHeader>(0, why);
  if (fi.eth == nullptr) {
    fi.reason = why;
    return fi;
  }
  uint32_t off = EthHeader::kSize;
  fi.ether_type = fi.eth->ether_type.value();
  if (fi.ether_type == kEtherTypeVlan) {
    fi.vlan = b.view<VlanTag>(off, why);
    if (fi.vlan == nullptr) {
      fi.reason = why;
      return fi;
    }
    fi.ether_type = fi.vlan->ether_type.value();
    off += VlanTag::kSize;
  }
  fi.l3_offset = off;
  switch (fi.ether_type) {
    case kEtherTypeIpv4: fi.reason = parse_ipv4(b, off, fi, opt); break;
    case kEtherTypeIpv6: fi.reason = parse_ipv6(b, off, b.end(), true, fi, opt); break;
    case kEtherTypeMacControl: fi.reason = parse_mac_control(b, off, fi); break;
    default: fi.reason = ParseReason::kUnsupportedEtherType; break;
  }
  return fi;
}

}  // namespace sf::wire
