// PORT table parsing and validation.
#include "common/config/port_config.h"

#include <array>
#include <cstdio>

namespace sf::config {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr std::array<EnumName<bool>, 2> kAdminStatus{{{"up", true}, {"down", false}}};

}  // namespace

std::string MacAddr::to_string() const {
  char buf[18];
  std::snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", bytes[0], bytes[1], bytes[2], bytes[3], bytes[4],
                bytes[5]);
  return buf;
}

std::optional<MacAddr> parse_mac(std::string_view text) {
  if (text.size() != 17) return std::nullopt;
  MacAddr mac;
  for (size_t i = 0; i < 6; ++i) {
    const int hi = hex_digit(text[i * 3]);
    const int lo = hex_digit(text[i * 3 + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    if (i < 5 && text[i * 3 + 2] != ':') return std::nullopt;
    mac.bytes[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return mac;
}

int PortsConfig::find(std::string_view name) const {
  for (size_t i = 0; i < ports.size(); ++i) {
    if (ports[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

PortsConfig parse_ports(ConfigNode table) {
  table.expect_object();
  PortsConfig out;
  for (auto& [name, node] : table.members()) {
    node.expect_object();
    PortConfig p;
    p.name = name;
    if (name.empty()) node.fail("port name must not be empty");
    p.devargs = node.req<std::string>("devargs");
    if (p.devargs.empty()) node.fail_key("devargs", "must not be empty");
    p.speed_gbps = node.req<uint32_t>("speed", in_range(kMinPortSpeedGbps, kMaxPortSpeedGbps));
    p.speed = BitRate::gbps(p.speed_gbps);
    p.mtu_bytes = node.opt<uint32_t>("mtu", kDefaultMtuBytes, in_range(kMinMtuBytes, kMaxMtuBytes));
    if (node.has("mac")) {
      const std::string text = node.req<std::string>("mac");
      p.mac = parse_mac(text);
      if (!p.mac) node.fail_key("mac", "\"" + text + "\" is not a MAC address (expected aa:bb:cc:dd:ee:ff)");
      if (p.mac->is_multicast() || p.mac->is_zero()) {
        node.fail_key("mac", "\"" + text + "\" is not a unicast address");
      }
    }
    p.admin_up = node.opt_enum<bool>("admin_status", true, kAdminStatus);
    node.finish();
    // Cross-port checks: a device or an address belongs to one port only.
    for (const auto& q : out.ports) {
      if (q.devargs == p.devargs) {
        node.fail_key("devargs", "\"" + p.devargs + "\" already used by " + table.key_path(q.name));
      }
      if (p.mac && q.mac == p.mac) {
        node.fail_key("mac", "\"" + p.mac->to_string() + "\" already used by " + table.key_path(q.name));
      }
    }
    out.ports.push_back(std::move(p));
  }
  if (out.ports.empty()) table.fail("at least one port is required");
  return out;
}

}  // namespace sf::config
