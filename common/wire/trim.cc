// Packet trimming. See trim.h.
#include "common/wire/trim.h"

#include <algorithm>

namespace sf::wire {

std::string_view to_string(TrimRefusal r) {
  switch (r) {
    case TrimRefusal::kNone: return "none";
    case TrimRefusal::kNotIp: return "not_ip";
    case TrimRefusal::kHeadersNotInHead: return "headers_not_in_head";
  }
  return "unknown";
}

uint32_t trim_header_end(const FrameInfo& f) {
  if (f.bth != nullptr && f.payload_offset != 0) return f.payload_offset;
  if (f.bth != nullptr) return f.bth_offset + static_cast<uint32_t>(Bth::kSize);
  if (f.udp != nullptr) return f.udp_offset + static_cast<uint32_t>(UdpHeader::kSize);
  return f.ip_offset + f.ip_header_bytes;
}

TrimResult trim_frame(std::span<uint8_t> head, const FrameInfo& f, uint32_t size, uint8_t dscp) {
  TrimResult r;
  if (f.ip_version == IpVersion::kNone) {
    r.refusal = TrimRefusal::kNotIp;
    return r;
  }
  const uint32_t hdr_end = trim_header_end(f);
  if (hdr_end > head.size()) {
    r.refusal = TrimRefusal::kHeadersNotInHead;
    return r;
  }
  const uint32_t keep = std::min(f.frame_bytes, std::max(size, hdr_end));
  r.cut = keep < f.frame_bytes;
  r.frame_bytes = keep;
  // Every header below was parsed from `head`, so these casts stay inside it.
  auto* outer6 = const_cast<Ipv6Header*>(f.outer_ipv6);
  auto* ip4 = const_cast<Ipv4Header*>(f.ipv4);
  auto* ip6 = const_cast<Ipv6Header*>(f.ipv6);
  auto* udp = const_cast<UdpHeader*>(f.udp);
  if (outer6 != nullptr) {
    outer6->payload_length.set(static_cast<uint16_t>(keep - f.l3_offset - Ipv6Header::kSize));
    outer6->set_dscp_ecn(dscp, outer6->ecn());
  }
  if (ip4 != nullptr) {
    ip4->total_length.set(static_cast<uint16_t>(keep - f.ip_offset));
    ip4->set_dscp_ecn(dscp, ip4->ecn());
    ipv4_set_checksum(*ip4);
  } else if (ip6 != nullptr) {
    ip6->payload_length.set(static_cast<uint16_t>(keep - f.ip_offset - Ipv6Header::kSize));
    ip6->set_dscp_ecn(dscp, ip6->ecn());
  }
  if (udp != nullptr) {
    udp->length.set(static_cast<uint16_t>(keep - f.udp_offset));
    udp->checksum.set(0);  // the payload it covered is gone (RoCE sends 0 anyway)
  }
  return r;
}

}  // namespace sf::wire
