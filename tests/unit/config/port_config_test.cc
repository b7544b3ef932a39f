// PORT table: good tables round trip; each bad one names path and reason.
#include "common/config/port_config.h"

#include <gtest/gtest.h>

#include "common/config/json_loader.h"
#include "tests/support/config_errors.h"

namespace sf::config {
namespace {

PortsConfig parse(std::string_view text) {
  const Json doc = parse_text(text);
  ConfigNode root(doc, "");
  PortsConfig ports = parse_ports(root.child("PORT"));
  root.finish();
  return ports;
}

std::string error_of(std::string_view text) { return sf::test::config_error_of([&] { parse(text); }); }

TEST(PortConfig, GoodTableRoundTrips) {
  const PortsConfig c = parse(R"({"PORT": {
      "Ethernet8": {"devargs": "net_ring0", "speed": 400, "mtu": 4200, "mac": "02:AA:bb:00:00:01"},
      "Ethernet0": {"devargs": "0000:3b:00.0", "speed": 100, "admin_status": "down"}}})");
  ASSERT_EQ(c.ports.size(), 2u);
  const PortConfig& a = c.ports[0];  // file order, not sorted
  EXPECT_EQ(a.name, "Ethernet8");
  EXPECT_EQ(a.devargs, "net_ring0");
  EXPECT_EQ(a.speed_gbps, 400u);
  EXPECT_EQ(a.speed, BitRate::gbps(400));
  EXPECT_EQ(a.mtu_bytes, 4200u);
  ASSERT_TRUE(a.mac.has_value());
  EXPECT_EQ(a.mac->to_string(), "02:aa:bb:00:00:01");
  EXPECT_TRUE(a.admin_up);
  const PortConfig& b = c.ports[1];
  EXPECT_EQ(b.mtu_bytes, kDefaultMtuBytes);
  EXPECT_FALSE(b.mac.has_value());
  EXPECT_FALSE(b.admin_up);
  EXPECT_EQ(c.find("Ethernet0"), 1);
  EXPECT_EQ(c.find("Ethernet4"), -1);
}

TEST(PortConfig, BadTablesNamePathAndReason) {
  struct Case {
    const char* json;
    const char* error;
  };
  const Case cases[] = {
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": "100G"}}})",
       "PORT.Ethernet0.speed: expected integer, got string"},
      {R"({"PORT": {"Ethernet4": {"devargs": "r0", "speed": 100, "sped": 100}}})",
       "PORT.Ethernet4: unknown key \"sped\" (did you mean \"speed\"?)"},
      {R"({"PORT": {"Ethernet0": {"speed": 100}}})", "PORT.Ethernet0: missing required key \"devargs\""},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0"}}})", "PORT.Ethernet0: missing required key \"speed\""},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": 0}}})", "PORT.Ethernet0.speed: 0 out of range [1, 800]"},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": 1000}}})",
       "PORT.Ethernet0.speed: 1000 out of range [1, 800]"},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": 100, "mtu": 67}}})",
       "PORT.Ethernet0.mtu: 67 out of range [68, 9216]"},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": 100, "mtu": 9217}}})",
       "PORT.Ethernet0.mtu: 9217 out of range [68, 9216]"},
      {R"({"PORT": {"Ethernet0": {"devargs": "", "speed": 100}}})", "PORT.Ethernet0.devargs: must not be empty"},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": 100, "mac": "02:00:00:00:00"}}})",
       "PORT.Ethernet0.mac: \"02:00:00:00:00\" is not a MAC address (expected aa:bb:cc:dd:ee:ff)"},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": 100, "mac": "02:00:00:00:00:0g"}}})",
       "PORT.Ethernet0.mac: \"02:00:00:00:00:0g\" is not a MAC address (expected aa:bb:cc:dd:ee:ff)"},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": 100, "mac": "02-00-00-00-00-01"}}})",
       "PORT.Ethernet0.mac: \"02-00-00-00-00-01\" is not a MAC address (expected aa:bb:cc:dd:ee:ff)"},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": 100, "mac": "01:00:5e:00:00:01"}}})",
       "PORT.Ethernet0.mac: \"01:00:5e:00:00:01\" is not a unicast address"},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": 100, "mac": "00:00:00:00:00:00"}}})",
       "PORT.Ethernet0.mac: \"00:00:00:00:00:00\" is not a unicast address"},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": 100, "mac": 12}}})",
       "PORT.Ethernet0.mac: expected string, got integer"},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": 100, "admin_status": "on"}}})",
       "PORT.Ethernet0.admin_status: \"on\" is not one of \"up\", \"down\""},
      {R"({"PORT": {"Ethernet0": {"devargs": "r0", "speed": 100}, "Ethernet4": {"devargs": "r0", "speed": 100}}})",
       "PORT.Ethernet4.devargs: \"r0\" already used by PORT.Ethernet0"},
      {R"({"PORT": {"E0": {"devargs": "r0", "speed": 1, "mac": "02:00:00:00:00:01"},
                    "E1": {"devargs": "r1", "speed": 1, "mac": "02:00:00:00:00:01"}}})",
       "PORT.E1.mac: \"02:00:00:00:00:01\" already used by PORT.E0"},
      {R"({"PORT": {}})", "PORT: at least one port is required"},
      {R"({"PORT": []})", "PORT: expected object, got array"},
      {R"({"PORT": {"Ethernet0": 5}})", "PORT.Ethernet0: expected object, got integer"},
      {R"({})", "missing required key \"PORT\""},
      {R"({"PORT": {"E0": {"devargs": "r0", "speed": 1}}, "PROT": {}})", "unknown key \"PROT\" (did you mean \"PORT\"?)"},
  };
  for (const Case& c : cases) EXPECT_EQ(error_of(c.json), c.error) << c.json;
}

TEST(PortConfig, ParseMac) {
  EXPECT_EQ(parse_mac("ff:FF:00:11:22:33")->to_string(), "ff:ff:00:11:22:33");
  EXPECT_FALSE(parse_mac("ff:ff:00:11:22:33:44").has_value());
  EXPECT_FALSE(parse_mac("ff:ff:00:11:22;33").has_value());
  EXPECT_FALSE(parse_mac("").has_value());
}

}  // namespace
}  // namespace sf::config
