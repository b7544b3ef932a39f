// Hosts for perftest-engine tests: host i (0, 1, ...) on net_null<i> with
// MAC 02:50:46:00:00:<i+1> and IPv4 10.9.0.<i+1>, and the one-port NicNode
// configuration that runs it.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "nic/app/perftest_engine.h"

namespace sf::nic::app::test {

inline AppHost app_host(int i, uint32_t mtu_bytes) {
  AppHost h;
  h.name = "h" + std::to_string(i);
  h.devargs = "net_null" + std::to_string(i);
  h.mac.bytes = {0x02, 0x50, 0x46, 0, 0, static_cast<uint8_t>(i + 1)};
  h.ipv4 = std::array<uint8_t, 4>{10, 9, 0, static_cast<uint8_t>(i + 1)};
  h.mtu_bytes = mtu_bytes;
  return h;
}

inline NicConfig node_cfg(const AppHost& h, bool zero_copy = false) {
  NicConfig c;
  HostConfig hc;
  hc.tx_zero_copy = zero_copy;
  hc.name = h.name;
  hc.mac.bytes = h.mac.bytes;
  hc.ipv4 = wire::Ipv4Addr{*h.ipv4};
  hc.ports = {0};
  c.hosts.push_back(hc);
  NicPortConfig p;
  p.line_rate = BitRate::gbps(h.speed_gbps);
  c.ports.push_back(p);
  return c;
}

}  // namespace sf::nic::app::test
