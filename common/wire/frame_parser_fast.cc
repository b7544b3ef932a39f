// parse_roce_fast(): straight-line decode of the NIC's common RoCE frames.
#include "common/wire/frame_parser_fast.h"

#include <algorithm>

namespace sf::wire {

namespace {

// Ext-header flags of the RC opcodes 0x00-0x17 (as opcode_layout(); the
// tests compare the results): bit 0 valid, 1 RETH, 2 AtomicETH, 3 AETH,
// 4 AtomicAckETH, 5 ImmDt, 6 IETH, 7 payload.
constexpr uint8_t kFV = 1, kFReth = 2, kFAtomic = 4, kFAeth = 8, kFAtomicAck = 16, kFImm = 32, kFIeth = 64,
                  kFPay = 128;
constexpr uint8_t kRcFlags[24] = {
    kFV | kFPay,                   // 0x00 SEND_FIRST
    kFV | kFPay,                   // 0x01 SEND_MIDDLE
    kFV | kFPay,                   // 0x02 SEND_LAST
    kFV | kFImm | kFPay,           // 0x03 SEND_LAST_IMM
    kFV | kFPay,                   // 0x04 SEND_ONLY
    kFV | kFImm | kFPay,           // 0x05 SEND_ONLY_IMM
    kFV | kFReth | kFPay,          // 0x06 WRITE_FIRST
    kFV | kFPay,                   // 0x07 WRITE_MIDDLE
    kFV | kFPay,                   // 0x08 WRITE_LAST
    kFV | kFImm | kFPay,           // 0x09 WRITE_LAST_IMM
    kFV | kFReth | kFPay,          // 0x0A WRITE_ONLY
    kFV | kFReth | kFImm | kFPay,  // 0x0B WRITE_ONLY_IMM
    kFV | kFReth,                  // 0x0C READ_REQUEST
    kFV | kFAeth | kFPay,          // 0x0D READ_RESPONSE_FIRST
    kFV | kFPay,                   // 0x0E READ_RESPONSE_MIDDLE
    kFV | kFAeth | kFPay,          // 0x0F READ_RESPONSE_LAST
    kFV | kFAeth | kFPay,          // 0x10 READ_RESPONSE_ONLY
    kFV | kFAeth,                  // 0x11 ACK
    kFV | kFAeth | kFAtomicAck,    // 0x12 ATOMIC_ACK
    kFV | kFAtomic,                // 0x13 COMPARE_SWAP
    kFV | kFAtomic,                // 0x14 FETCH_ADD
    0,                             // 0x15
    kFV | kFIeth | kFPay,          // 0x16 SEND_LAST_INV
    kFV | kFIeth | kFPay,          // 0x17 SEND_ONLY_INV
};

}  // namespace

bool parse_roce_fast(std::span<const uint8_t> head, uint32_t frame_bytes, FrameInfo& fi, bool mrc) {
  using detail::load_be16;
  const uint8_t* d = head.data();
  const uint64_t end = frame_bytes;
  const uint64_t contig = std::min<uint64_t>(head.size(), end);
  // Eth + IPv4 + UDP + BTH: what is read before the next check (at most
  // VLAN + the first 8 bytes of IPv6 are read before it too).
  if (contig < EthHeader::kSize + Ipv4Header::kSize + UdpHeader::kSize + Bth::kSize) return false;
  uint32_t off = EthHeader::kSize;
  uint16_t et = load_be16(d + EthHeader::kOffEtherType);
  const VlanTag* vlan = nullptr;
  if (et == kEtherTypeVlan) {
    vlan = reinterpret_cast<const VlanTag*>(d + off);
    et = load_be16(d + off + 2);
    off += VlanTag::kSize;
  }
  const uint8_t* ip = d + off;
  uint64_t ip_end;
  uint32_t udp;
  if (et == kEtherTypeIpv4) {
    if (ip[0] != 0x45) return false;
    const uint32_t total = load_be16(ip + 2);
    if (total < Ipv4Header::kSize || off + uint64_t{total} > end) return false;
    if (!detail::ipv4_ihl5_checksum_ok(ip)) return false;
    if ((load_be16(ip + 6) & 0x3FFFu) != 0 || ip[9] != kIpProtoUdp) return false;
    fi.ip_version = IpVersion::kV4;
    fi.ipv4 = reinterpret_cast<const Ipv4Header*>(ip);
    fi.ipv6 = nullptr;
    fi.ip_header_bytes = Ipv4Header::kSize;
    udp = off + static_cast<uint32_t>(Ipv4Header::kSize);
    ip_end = off + uint64_t{total};
  } else if (et == kEtherTypeIpv6) {
    if ((ip[0] >> 4) != 6 || ip[6] != kIpProtoUdp) return false;
    ip_end = off + Ipv6Header::kSize + uint64_t{load_be16(ip + 4)};
    if (ip_end > end) return false;
    fi.ip_version = IpVersion::kV6;
    fi.ipv4 = nullptr;
    fi.ipv6 = reinterpret_cast<const Ipv6Header*>(ip);
    fi.ip_header_bytes = Ipv6Header::kSize;
    udp = off + static_cast<uint32_t>(Ipv6Header::kSize);
  } else {
    return false;
  }
  if (udp + uint64_t{UdpHeader::kSize + Bth::kSize} > contig) return false;
  const uint8_t* u = d + udp;
  const uint32_t udp_len = load_be16(u + 4);
  if (load_be16(u + 2) != kRoceUdpPort) return false;
  if (udp_len < UdpHeader::kSize + Bth::kSize + kIcrcBytes || udp + uint64_t{udp_len} > ip_end) return false;
  const uint32_t bth_off = udp + static_cast<uint32_t>(UdpHeader::kSize);
  const auto* bth = reinterpret_cast<const Bth*>(d + bth_off);
  if (bth->tver() != 0) return false;
  const uint32_t udp_end = udp + udp_len;
  const uint32_t icrc_off = udp_end - static_cast<uint32_t>(kIcrcBytes);
  uint32_t p = bth_off + static_cast<uint32_t>(Bth::kSize);
  fi.mrc = MrcInfo{};
  // The extension headers none of the frames below has; each sets its own.
  fi.reth = nullptr;
  fi.immdt = nullptr;
  fi.atomic_eth = nullptr;
  fi.aeth = nullptr;
  fi.atomic_ack_eth = nullptr;
  fi.ieth = nullptr;
  if (bth->opcode >= sizeof(kRcFlags)) {
    // MRC data frames and SACKs (default MrcWireConfig: RoCE's port, opcode
    // base 0xC0, no trim code points): BTH METH RETH [ImmDt] payload pad
    // ICRC, or BTH SETH CC-state ICRC.
    const uint8_t op = bth->opcode & 0x1Fu;
    if (!mrc || bth->dest_qp.value() == kMrcEndpointQpn || (bth->opcode & 0xE0u) != kMrcDefaultOpcodeBase) {
      return false;
    }
    if (op == static_cast<uint8_t>(MrcOp::kSack)) {
      // SACK: BTH SETH CC-state ICRC, nothing else (as parse_mrc()).
      const uint32_t hdr_end = p + static_cast<uint32_t>(Seth::kSize + MrcCcState::kSize);
      if (hdr_end != icrc_off || hdr_end > contig) return false;
      const auto* seth = reinterpret_cast<const Seth*>(d + p);
      const auto* cc = reinterpret_cast<const MrcCcState*>(d + p + Seth::kSize);
      if (seth->skip_raw() == 3 || cc->rcv_cwnd_pen > MrcCcState::kMaxRcvCwndPen) return false;
      fi.mrc.op = MrcOp::kSack;
      fi.mrc.seth = seth;
      fi.mrc.cc = cc;
      fi.layout = OpcodeLayout{};
      fi.kind = FrameKind::kMrc;
      fi.payload_offset = hdr_end;
      fi.payload_bytes = 0;
      fi.pad_bytes = 0;
    } else {
      if (op < static_cast<uint8_t>(MrcOp::kWriteFirst) || op > static_cast<uint8_t>(MrcOp::kWriteOnlyImm)) {
        return false;
      }
      const auto mop = static_cast<MrcOp>(op);
      const bool imm = mrc_has_imm(mop);
      const uint32_t hdr_end = p + static_cast<uint32_t>(Meth::kSize + Reth::kSize + (imm ? ImmDt::kSize : 0));
      // Cut to its headers (trimmed) or headers past the head: parse_frame().
      if (hdr_end > icrc_off || hdr_end > contig) return false;
      const auto* meth = reinterpret_cast<const Meth*>(d + p);
      const auto* reth = reinterpret_cast<const Reth*>(d + p + Meth::kSize);
      const uint32_t rest = icrc_off - hdr_end;
      const uint32_t pad = bth->pad_count();
      if (pad > rest) return false;
      const uint64_t msg_off = meth->msg_offset.value();
      const uint64_t msg_end = msg_off + (rest - pad);
      const bool last = mrc_is_last(mop);
      if (meth->last() != last || (mrc_is_first(mop) && msg_off != 0)) return false;
      if (msg_end > reth->dma_length.value() || (last && msg_end != reth->dma_length.value())) return false;
      fi.mrc.op = mop;
      fi.mrc.meth = meth;
      fi.reth = reth;
      if (imm) fi.immdt = reinterpret_cast<const ImmDt*>(d + p + Meth::kSize + Reth::kSize);
      fi.layout = OpcodeLayout{.reth = true, .immdt = imm, .payload = true};
      fi.kind = FrameKind::kMrc;
      fi.payload_offset = hdr_end;
      fi.payload_bytes = rest - pad;
      fi.pad_bytes = pad;
    }
  } else {
    const uint8_t f = kRcFlags[bth->opcode];
    if (f == 0) return false;
    // In IBA order; the ext headers are read by the caller only, after the
    // contig check below.
    if (f & kFReth) {
      fi.reth = reinterpret_cast<const Reth*>(d + p);
      p += Reth::kSize;
    }
    if (f & kFAtomic) {
      fi.atomic_eth = reinterpret_cast<const AtomicEth*>(d + p);
      p += AtomicEth::kSize;
    }
    if (f & kFAeth) {
      fi.aeth = reinterpret_cast<const Aeth*>(d + p);
      p += Aeth::kSize;
    }
    if (f & kFAtomicAck) {
      fi.atomic_ack_eth = reinterpret_cast<const AtomicAckEth*>(d + p);
      p += AtomicAckEth::kSize;
    }
    if (f & kFImm) {
      fi.immdt = reinterpret_cast<const ImmDt*>(d + p);
      p += ImmDt::kSize;
    }
    if (f & kFIeth) {
      fi.ieth = reinterpret_cast<const Ieth*>(d + p);
      p += Ieth::kSize;
    }
    if (p > icrc_off || p > contig) return false;  // past the UDP payload / the head
    const uint32_t rest = icrc_off - p;
    uint32_t pad = 0;
    if (f & kFPay) {
      pad = bth->pad_count();
      if (pad > rest) return false;
    } else if (rest != 0) {
      return false;
    }
    fi.kind = FrameKind::kRoce;
    fi.layout = OpcodeLayout{.deth = false,
                             .reth = (f & kFReth) != 0,
                             .atomic_eth = (f & kFAtomic) != 0,
                             .aeth = (f & kFAeth) != 0,
                             .atomic_ack_eth = (f & kFAtomicAck) != 0,
                             .immdt = (f & kFImm) != 0,
                             .ieth = (f & kFIeth) != 0,
                             .payload = (f & kFPay) != 0,
                             .fixed_body_bytes = 0};
    fi.payload_offset = p;
    fi.payload_bytes = rest - pad;
    fi.pad_bytes = pad;
  }
  fi.reason = ParseReason::kOk;
  fi.frame_bytes = frame_bytes;
  fi.eth = reinterpret_cast<const EthHeader*>(d);
  fi.vlan = vlan;
  fi.ether_type = et;
  fi.outer_ipv6 = nullptr;
  fi.l3_offset = off;
  fi.ip_offset = off;
  fi.udp = reinterpret_cast<const UdpHeader*>(u);
  fi.udp_offset = udp;
  fi.udp_end = udp_end;
  fi.bth = bth;
  fi.bth_offset = bth_off;
  fi.deth = nullptr;
  fi.icrc_offset = icrc_off;
  fi.mac_opcode = MacControlOpcode::kPause;
  fi.pause = nullptr;
  fi.pfc = nullptr;
  fi.mac_control_dst_ok = false;
  return true;
}


bool same_frame_info(const FrameInfo& a, const FrameInfo& b) {
  const OpcodeLayout& x = a.layout;
  const OpcodeLayout& y = b.layout;
  const bool layout_eq = x.deth == y.deth && x.reth == y.reth && x.atomic_eth == y.atomic_eth && x.aeth == y.aeth &&
                         x.atomic_ack_eth == y.atomic_ack_eth && x.immdt == y.immdt && x.ieth == y.ieth &&
                         x.payload == y.payload && x.fixed_body_bytes == y.fixed_body_bytes;
  return layout_eq && a.reason == b.reason && a.kind == b.kind && a.frame_bytes == b.frame_bytes && a.eth == b.eth &&
         a.vlan == b.vlan && a.ether_type == b.ether_type && a.ip_version == b.ip_version && a.ipv4 == b.ipv4 &&
         a.ipv6 == b.ipv6 && a.outer_ipv6 == b.outer_ipv6 && a.l3_offset == b.l3_offset &&
         a.ip_offset == b.ip_offset && a.ip_header_bytes == b.ip_header_bytes && a.udp == b.udp &&
         a.udp_offset == b.udp_offset && a.udp_end == b.udp_end && a.bth == b.bth && a.bth_offset == b.bth_offset &&
         a.deth == b.deth && a.reth == b.reth && a.atomic_eth == b.atomic_eth && a.aeth == b.aeth &&
         a.atomic_ack_eth == b.atomic_ack_eth && a.immdt == b.immdt && a.ieth == b.ieth &&
         a.payload_offset == b.payload_offset && a.payload_bytes == b.payload_bytes && a.pad_bytes == b.pad_bytes &&
         a.icrc_offset == b.icrc_offset && a.mac_opcode == b.mac_opcode && a.pause == b.pause && a.pfc == b.pfc &&
         a.mac_control_dst_ok == b.mac_control_dst_ok && a.mrc.op == b.mrc.op && a.mrc.trimmed == b.mrc.trimmed &&
         a.mrc.meth == b.mrc.meth && a.mrc.seth == b.mrc.seth && a.mrc.cc == b.mrc.cc && a.mrc.neth == b.mrc.neth &&
         a.mrc.peth == b.mrc.peth && a.mrc.erth == b.mrc.erth && a.mrc.eeth == b.mrc.eeth;
}

}  // namespace sf::wire
