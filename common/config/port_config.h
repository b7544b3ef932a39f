// PortsConfig: the PORT table (SONiC style, one member per port, in file
// order), parsed into immutable structs for the port layer and the simulator.
//
//   "PORT": {
//     "Ethernet0": {"devargs": "net_ring0", "speed": 100, "mtu": 9100,
//                   "mac": "02:00:00:00:00:01", "admin_status": "up"},
//     ...
//   }
//
// Keys: devargs (string, required, unique across ports), speed (integer Gb/s,
// 1..800, required), mtu (integer bytes of L3 payload, 68..9216, default 9100),
// mac (optional unicast "aa:bb:cc:dd:ee:ff"), admin_status ("up"|"down",
// default "up").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/config/config_node.h"
#include "common/time.h"

namespace sf::config {

struct MacAddr {
  std::array<uint8_t, 6> bytes{};

  bool operator==(const MacAddr&) const = default;
  bool is_multicast() const { return (bytes[0] & 0x01) != 0; }
  bool is_zero() const { return bytes == std::array<uint8_t, 6>{}; }
  std::string to_string() const;  // "aa:bb:cc:dd:ee:ff", lower case
};

// Parses "aa:bb:cc:dd:ee:ff" (either case, exactly 6 colon-separated pairs).
std::optional<MacAddr> parse_mac(std::string_view text);

inline constexpr uint32_t kMinMtuBytes = 68;
inline constexpr uint32_t kMaxMtuBytes = 9216;
inline constexpr uint32_t kDefaultMtuBytes = 9100;
inline constexpr uint32_t kMinPortSpeedGbps = 1;
inline constexpr uint32_t kMaxPortSpeedGbps = 800;

struct PortConfig {
  std::string name;     // table key, e.g. "Ethernet0"
  std::string devargs;  // DPDK device: PCI address or vdev args ("net_ring0", "net_memif,role=server")
  uint32_t speed_gbps = 0;
  BitRate speed;        // == BitRate::gbps(speed_gbps), the line rate the driver enforces
  uint32_t mtu_bytes = kDefaultMtuBytes;
  std::optional<MacAddr> mac;  // none: the driver uses the device's own address
  bool admin_up = true;
};

struct PortsConfig {
  std::vector<PortConfig> ports;  // file order; PortId i is ports[i]

  // Index of the port named `name`, or -1.
  int find(std::string_view name) const;
};

// Parses a PORT table (an object of port name -> port object). Validates every
// port (unknown keys included) and cross-port uniqueness of devargs and mac.
// An empty table is an error.
PortsConfig parse_ports(ConfigNode table);

}  // namespace sf::config
