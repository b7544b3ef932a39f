// Interop helper for tests/interop/arp_nd_interop.py (common/wire/arp_nd.h):
//   arp-nd-interop-helper gen        one line per frame our builders make:
//                                    "<label> <hex>" (ARP request / reply,
//                                    tagged, NS, NA);
//   arp-nd-interop-helper parse HEX  parse_neighbor() of the frame: one JSON
//                                    line (error, kind, addresses, tag).
#include <arpa/inet.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/wire/arp_nd.h"

namespace {

using namespace sf::wire;

const MacAddr kA{{0x02, 0x4e, 0, 0, 0, 0x0a}};
const MacAddr kR{{0x02, 0x53, 0, 0, 0, 0x01}};

std::string hex(const uint8_t* b, size_t n) {
  std::string s;
  char t[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(t, sizeof(t), "%02x", b[i]);
    s += t;
  }
  return s;
}

std::string ip_text(bool v6, const std::array<uint8_t, 16>& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, a.data(), buf, sizeof(buf));
  return buf;
}

std::string mac_text(const MacAddr& m) {
  char t[18];
  std::snprintf(t, sizeof(t), "%02x:%02x:%02x:%02x:%02x:%02x", m.bytes[0], m.bytes[1], m.bytes[2], m.bytes[3],
                m.bytes[4], m.bytes[5]);
  return t;
}

Ipv6Addr v6(const char* s) {
  Ipv6Addr a;
  inet_pton(AF_INET6, s, a.bytes.data());
  return a;
}

int gen() {
  uint8_t f[kNeighborFrameMax];
  const Ipv4Addr a{{10, 0, 1, 2}}, r{{10, 0, 1, 1}};
  size_t n = write_arp(f, {kBroadcastMac, kA, std::nullopt}, kArpOpRequest, kA, a, {}, r);
  std::cout << "arp_request " << hex(f, n) << "\n";
  n = write_arp(f, {kA, kR, std::nullopt}, kArpOpReply, kR, r, kA, a);
  std::cout << "arp_reply " << hex(f, n) << "\n";
  n = write_arp(f, {kA, kR, uint16_t{3u << 13 | 5u}}, kArpOpReply, kR, r, kA, a);
  std::cout << "arp_reply_vlan5 " << hex(f, n) << "\n";
  const Ipv6Addr g = solicited_node(v6("fd00:1::1"));
  n = write_nd(f, {ipv6_multicast_mac(g), kA, std::nullopt}, false, v6("fd00:1::2"), g, v6("fd00:1::1"), kA, false);
  std::cout << "ns " << hex(f, n) << "\n";
  n = write_nd(f, {kA, kR, std::nullopt}, true, v6("fd00:1::1"), v6("fd00:1::2"), v6("fd00:1::1"), kR, true);
  std::cout << "na " << hex(f, n) << "\n";
  n = write_nd(f, {kA, kR, uint16_t{7}}, true, v6("fd00:1::1"), v6("fd00:1::2"), v6("fd00:1::1"), kR, true);
  std::cout << "na_vlan7 " << hex(f, n) << "\n";
  return 0;
}

int parse(const std::string& h) {
  std::vector<uint8_t> b;
  for (size_t i = 0; i + 1 < h.size(); i += 2) b.push_back(static_cast<uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
  NeighborMsg m;
  const NeighborError e = parse_neighbor(b.data(), b.size(), m);
  nlohmann::json j = {{"error", std::string(to_string(e))}};
  if (e == NeighborError::kNone) {
    j["kind"] = std::string(to_string(m.kind));
    j["sender_mac"] = mac_text(m.sender_mac);
    j["sender_ip"] = ip_text(m.v6(), m.sender_ip);
    j["target_ip"] = ip_text(m.v6(), m.target_ip);
    if (m.tci) j["vid"] = *m.tci & 0x0FFF;
    if (m.v6()) j["has_lla"] = m.has_lla;
    if (m.kind == NeighborKind::kNa) j["solicited"] = m.na_solicited;
  }
  std::cout << j.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "gen") return gen();
  if (mode == "parse" && argc > 2) return parse(argv[2]);
  std::cerr << "usage: arp-nd-interop-helper gen | parse HEX\n";
  return 2;
}
