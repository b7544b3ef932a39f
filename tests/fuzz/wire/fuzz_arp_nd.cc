// libFuzzer target: ARP / IPv6 ND parsing (common/wire/arp_nd.h). The first
// input byte picks the frame's head (ARP, or IPv6 + ICMPv6 NS/NA, either
// optionally VLAN-tagged), the rest follows it; a frame that parses is
// rebuilt by the builders and must parse back to the same message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/wire/arp_nd.h"

using namespace sf::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::vector<uint8_t> f = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0, 0, 1};
  if (data[0] & 1) f.insert(f.end(), {0x81, 0x00, 0x60, 0x05});
  if (data[0] & 2) {
    f.insert(f.end(), {0x86, 0xDD});
  } else {
    f.insert(f.end(), {0x08, 0x06});
  }
  f.insert(f.end(), data + 1, data + size);
  NeighborMsg m;
  const NeighborError e = parse_neighbor(f.data(), f.size(), m);
  if (e != NeighborError::kNone) return 0;
  uint8_t out[kNeighborFrameMax];
  size_t n = 0;
  const NeighborL2 l2{m.eth_dst, m.eth_src, m.tci};
  if (!m.v6()) {
    n = write_arp(out, l2, m.kind == NeighborKind::kArpRequest ? kArpOpRequest : kArpOpReply, m.sender_mac,
                  Ipv4Addr{{m.sender_ip[0], m.sender_ip[1], m.sender_ip[2], m.sender_ip[3]}}, {},
                  Ipv4Addr{{m.target_ip[0], m.target_ip[1], m.target_ip[2], m.target_ip[3]}});
  } else {
    if (m.sender_ip == std::array<uint8_t, 16>{} && m.kind == NeighborKind::kNs) return 0;  // DAD: no LLA option allowed
    n = write_nd(out, l2, m.kind == NeighborKind::kNa, Ipv6Addr{m.sender_ip}, Ipv6Addr{m.ip_dst},
                 Ipv6Addr{m.target_ip}, m.sender_mac, m.na_solicited);
  }
  if (n > sizeof(out)) std::abort();
  NeighborMsg back;
  if (parse_neighbor(out, n, back) != NeighborError::kNone) std::abort();
  if (back.kind != m.kind || back.sender_mac != m.sender_mac || back.sender_ip != m.sender_ip ||
      back.target_ip != m.target_ip || back.tci != m.tci) {
    std::abort();
  }
  return 0;
}
