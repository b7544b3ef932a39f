// ARP and IPv6 NS / NA parser and builders. See arp_nd.h.
#include "common/wire/arp_nd.h"

#include <cstring>

namespace sf::wire {

namespace {

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// Ethernet header (and tag) of a built frame; returns the L3 offset.
size_t write_l2(uint8_t* out, const NeighborL2& l2, uint16_t ether_type) {
  std::memcpy(out, l2.dst.bytes.data(), 6);
  std::memcpy(out + 6, l2.src.bytes.data(), 6);
  size_t off = 12;
  if (l2.tci) {
    put16(out + off, kEtherTypeVlan);
    put16(out + off + 2, *l2.tci);
    off += 4;
  }
  put16(out + off, ether_type);
  return off + 2;
}

}  // namespace

std::string_view to_string(NeighborKind k) {
  switch (k) {
    case NeighborKind::kArpRequest: return "arp_request";
    case NeighborKind::kArpReply: return "arp_reply";
    case NeighborKind::kNs: return "ns";
    case NeighborKind::kNa: return "na";
  }
  return "?";
}

std::string_view to_string(NeighborError e) {
  switch (e) {
    case NeighborError::kNone: return "none";
    case NeighborError::kNotNeighbor: return "not_neighbor";
    case NeighborError::kTruncated: return "truncated";
    case NeighborError::kArpFormat: return "arp_format";
    case NeighborError::kArpOpcode: return "arp_opcode";
    case NeighborError::kNdHopLimit: return "nd_hop_limit";
    case NeighborError::kNdCode: return "nd_code";
    case NeighborError::kNdChecksum: return "nd_checksum";
    case NeighborError::kNdOption: return "nd_option";
    case NeighborError::kNdTarget: return "nd_target";
    case NeighborError::kCount: break;
  }
  return "?";
}

uint16_t icmp6_checksum(const uint8_t* src, const uint8_t* dst, const uint8_t* icmp, size_t len) {
  uint32_t s = 0;
  auto add = [&](const uint8_t* p, size_t n) {
    for (size_t i = 0; i + 1 < n; i += 2) s += be16(p + i);
    if (n & 1) s += static_cast<uint32_t>(p[n - 1]) << 8;
  };
  add(src, 16);
  add(dst, 16);
  s += static_cast<uint32_t>(len);
  s += kIpProtoIcmp6;
  add(icmp, len);
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return static_cast<uint16_t>(~s);
}

Ipv6Addr solicited_node(const Ipv6Addr& t) {
  return Ipv6Addr{{0xFF, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xFF, t.bytes[13], t.bytes[14], t.bytes[15]}};
}

MacAddr ipv6_multicast_mac(const Ipv6Addr& a) {
  return MacAddr{{0x33, 0x33, a.bytes[12], a.bytes[13], a.bytes[14], a.bytes[15]}};
}

NeighborError parse_neighbor(const uint8_t* b, size_t len, NeighborMsg& out) {
  if (len < EthHeader::kSize) return NeighborError::kNotNeighbor;
  size_t off = 12;
  uint16_t et = be16(b + off);
  out.tci.reset();
  if (et == kEtherTypeVlan) {
    if (len < off + 6) return NeighborError::kNotNeighbor;
    out.tci = be16(b + off + 2);
    et = be16(b + off + 4);
    off += 4;
  }
  off += 2;  // L3
  std::memcpy(out.eth_dst.bytes.data(), b, 6);
  std::memcpy(out.eth_src.bytes.data(), b + 6, 6);
  out.sender_ip.fill(0);
  out.target_ip.fill(0);
  out.ip_dst.fill(0);
  out.has_lla = false;
  out.na_solicited = out.na_override = false;
  if (et == kEtherTypeArp) {
    if (len < off + kArpBodyBytes) return NeighborError::kTruncated;
    const uint8_t* a = b + off;
    if (be16(a) != 1 || be16(a + 2) != kEtherTypeIpv4 || a[4] != 6 || a[5] != 4) return NeighborError::kArpFormat;
    const uint16_t op = be16(a + 6);
    if (op != kArpOpRequest && op != kArpOpReply) return NeighborError::kArpOpcode;
    out.kind = op == kArpOpRequest ? NeighborKind::kArpRequest : NeighborKind::kArpReply;
    std::memcpy(out.sender_mac.bytes.data(), a + 8, 6);
    std::memcpy(out.sender_ip.data(), a + 14, 4);
    std::memcpy(out.target_ip.data(), a + 24, 4);
    return NeighborError::kNone;
  }
  if (et != kEtherTypeIpv6 || len < off + Ipv6Header::kSize) return NeighborError::kNotNeighbor;
  const uint8_t* ip = b + off;
  if ((ip[0] >> 4) != 6 || ip[6] != kIpProtoIcmp6) return NeighborError::kNotNeighbor;
  const size_t plen = be16(ip + 4);
  if (len < off + Ipv6Header::kSize + 1) return NeighborError::kNotNeighbor;
  const uint8_t* icmp = ip + Ipv6Header::kSize;
  if (icmp[0] != kIcmp6NeighborSolicit && icmp[0] != kIcmp6NeighborAdvert) return NeighborError::kNotNeighbor;
  if (plen < 24 || off + Ipv6Header::kSize + plen > len) return NeighborError::kTruncated;
  if (ip[7] != 255) return NeighborError::kNdHopLimit;
  if (icmp[1] != 0) return NeighborError::kNdCode;
  if (icmp6_checksum(ip + 8, ip + 24, icmp, plen) != 0) return NeighborError::kNdChecksum;
  const bool ns = icmp[0] == kIcmp6NeighborSolicit;
  out.kind = ns ? NeighborKind::kNs : NeighborKind::kNa;
  std::memcpy(out.sender_ip.data(), ip + 8, 16);
  std::memcpy(out.ip_dst.data(), ip + 24, 16);
  std::memcpy(out.target_ip.data(), icmp + 8, 16);
  if (out.target_ip[0] == 0xFF) return NeighborError::kNdTarget;
  if (!ns) {
    out.na_solicited = (icmp[4] & 0x40) != 0;
    out.na_override = (icmp[4] & 0x20) != 0;
  }
  out.sender_mac = out.eth_src;
  const uint8_t want = ns ? 1 : 2;  // source / target link-layer address
  for (size_t o = 24; o < plen;) {
    if (o + 2 > plen) return NeighborError::kNdOption;
    const size_t olen = size_t{icmp[o + 1]} * 8;
    if (olen == 0 || o + olen > plen) return NeighborError::kNdOption;
    if (icmp[o] == want && olen == 8) {
      std::memcpy(out.sender_mac.bytes.data(), icmp + o + 2, 6);
      out.has_lla = true;
    }
    o += olen;
  }
  static constexpr uint8_t kUnspecified[16] = {};
  if (ns && out.has_lla && std::memcmp(out.sender_ip.data(), kUnspecified, 16) == 0) return NeighborError::kNdTarget;
  return NeighborError::kNone;
}

size_t write_arp(uint8_t* out, const NeighborL2& l2, uint16_t op, const MacAddr& sha, const Ipv4Addr& spa,
                 const MacAddr& tha, const Ipv4Addr& tpa) {
  std::memset(out, 0, kNeighborFrameMax);
  uint8_t* a = out + write_l2(out, l2, kEtherTypeArp);
  put16(a, 1);
  put16(a + 2, kEtherTypeIpv4);
  a[4] = 6;
  a[5] = 4;
  put16(a + 6, op);
  std::memcpy(a + 8, sha.bytes.data(), 6);
  std::memcpy(a + 14, spa.bytes.data(), 4);
  std::memcpy(a + 18, tha.bytes.data(), 6);
  std::memcpy(a + 24, tpa.bytes.data(), 4);
  const size_t len = static_cast<size_t>(a - out) + kArpBodyBytes;
  return len < kMinFrameBytes ? kMinFrameBytes : len;
}

size_t write_nd(uint8_t* out, const NeighborL2& l2, bool na, const Ipv6Addr& src, const Ipv6Addr& dst,
                const Ipv6Addr& target, const MacAddr& lla, bool solicited) {
  std::memset(out, 0, kNeighborFrameMax);
  uint8_t* ip = out + write_l2(out, l2, kEtherTypeIpv6);
  ip[0] = 0x60;
  put16(ip + 4, kNdBodyBytes);
  ip[6] = kIpProtoIcmp6;
  ip[7] = 255;
  std::memcpy(ip + 8, src.bytes.data(), 16);
  std::memcpy(ip + 24, dst.bytes.data(), 16);
  uint8_t* icmp = ip + Ipv6Header::kSize;
  icmp[0] = na ? kIcmp6NeighborAdvert : kIcmp6NeighborSolicit;
  if (na) icmp[4] = static_cast<uint8_t>((solicited ? 0x40 : 0) | 0x20);  // S, O
  std::memcpy(icmp + 8, target.bytes.data(), 16);
  icmp[24] = na ? 2 : 1;  // target / source link-layer address
  icmp[25] = 1;
  std::memcpy(icmp + 26, lla.bytes.data(), 6);
  put16(icmp + 2, icmp6_checksum(ip + 8, ip + 24, icmp, kNdBodyBytes));
  return static_cast<size_t>(icmp - out) + kNdBodyBytes;
}

}  // namespace sf::wire
