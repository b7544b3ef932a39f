// NIC host addressing for tests, fuzz targets and interop helpers: host i has
// MAC 02:4e:49:43:00:i, IPv4 10.1.0.(i+1) and IPv6 fd00::(i+1); host_cfg and
// one_host_cfg build the NicConfig pieces around them. Header-only and
// gtest-free so the fuzz build can use it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nic/host/nic_config.h"

namespace sf::nic::test {

inline wire::MacAddr host_mac(int i) { return {{0x02, 0x4E, 0x49, 0x43, 0x00, static_cast<uint8_t>(i)}}; }
inline wire::Ipv4Addr host_ip4(int i) { return {{10, 1, 0, static_cast<uint8_t>(i + 1)}}; }
inline wire::Ipv6Addr host_ip6(int i) {
  wire::Ipv6Addr a{};
  a.bytes[0] = 0xFD;
  a.bytes[15] = static_cast<uint8_t>(i + 1);
  return a;
}

// Host i ("host<i>", the addresses above) on node ports `ports`.
inline HostConfig host_cfg(int i, std::vector<PortId> ports) {
  HostConfig h;
  h.name = "host" + std::to_string(i);
  h.mac = host_mac(i);
  h.ipv4 = host_ip4(i);
  h.ipv6 = host_ip6(i);
  h.ports = std::move(ports);
  return h;
}

// A node of host i alone, on one port at `rate`.
inline NicConfig one_host_cfg(int i, BitRate rate = BitRate::gbps(100)) {
  NicConfig c;
  c.hosts.push_back(host_cfg(i, {0}));
  NicPortConfig p;
  p.line_rate = rate;
  c.ports.push_back(p);
  return c;
}

}  // namespace sf::nic::test
