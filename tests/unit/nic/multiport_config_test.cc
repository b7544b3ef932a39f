// nic.json's multi-port hosts (docs/nic-app.md "Multi-port hosts"): a host
// with "ports" (each its own devargs, MAC, IP, speed, gateway), the
// single-port form's gateway_mac, a workload's "port", and the mistakes each
// of them can hold, rejected naming the JSON path. nic_config_of lays the
// ports out as node ports with their own addresses.
#include <gtest/gtest.h>

#include "common/config/config_error.h"
#include "common/config/json_loader.h"
#include "nic/app/perftest_engine.h"
#include "nic/app/sf_nic_config.h"
#include "tests/support/config_errors.h"

namespace sf::nic::app {
namespace {

const char* kTwoPort = R"({
  "hosts": {
    "a": {"ports": [
            {"devargs": "net_memif0", "mac": "02:00:00:00:01:01", "ip": "10.1.0.1", "speed_gbps": 100},
            {"devargs": "net_memif1", "mac": "02:00:00:00:01:02", "ip": "10.2.0.1", "speed_gbps": 50,
             "gateway_mac": "02:aa:00:00:00:02"}],
          "mtu": 1024, "dscp": 24, "pfc_enable": "3"},
    "b": {"devargs": "net_memif2", "mac": "02:00:00:00:02:01", "ip": "fd00::2", "gateway_mac": "02:aa:00:00:00:09"}
  },
  "workloads": [
    {"name": "w1", "host": "a", "type": "write_bw", "role": "client", "oob": "127.0.0.1:18600", "port": 2},
    {"name": "w2", "host": "a", "type": "write_bw", "role": "server", "oob": "0.0.0.0:18601"},
    {"name": "w3", "host": "b", "type": "write_bw", "role": "server", "oob": "0.0.0.0:18602"}
  ]
})";

AppConfig parse(const std::string& text) { return parse_app_config(config::parse_text(text)); }

std::string with(const std::string& from, const std::string& to) {
  std::string s = kTwoPort;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) { return sf::test::config_error_of([&] { parse(text); }); }

TEST(MultiPortConfig, PortsParse) {
  const AppConfig c = parse(kTwoPort);
  ASSERT_EQ(c.hosts.size(), 2u);
  const AppHost& a = c.hosts[0];
  EXPECT_EQ(a.num_ports(), 2);
  EXPECT_EQ(a.port(1).devargs, "net_memif0");
  EXPECT_EQ(a.port(1).mac.to_string(), "02:00:00:00:01:01");
  ASSERT_TRUE(a.port(1).ipv4.has_value());
  EXPECT_EQ((*a.port(1).ipv4)[1], 1);
  EXPECT_EQ(a.port(1).speed_gbps, 100u);
  EXPECT_FALSE(a.port(1).gateway_mac.has_value());
  EXPECT_EQ(a.port(2).devargs, "net_memif1");
  EXPECT_EQ(a.port(2).mac.to_string(), "02:00:00:00:01:02");
  EXPECT_EQ((*a.port(2).ipv4)[1], 2);
  EXPECT_EQ(a.port(2).speed_gbps, 50u);
  ASSERT_TRUE(a.port(2).gateway_mac.has_value());
  EXPECT_EQ(a.port(2).gateway_mac->to_string(), "02:aa:00:00:00:02");
  // Host-level settings apply to every port.
  EXPECT_EQ(a.mtu_bytes, 1024u);
  EXPECT_EQ(a.dscp, 24);
  // The single-port form keeps working and takes a gateway_mac too.
  const AppHost& b = c.hosts[1];
  EXPECT_EQ(b.num_ports(), 1);
  EXPECT_EQ(b.port(1).devargs, "net_memif2");
  ASSERT_TRUE(b.port(1).ipv6.has_value());
  EXPECT_EQ(b.port(1).gateway_mac->to_string(), "02:aa:00:00:00:09");
  // The line rate under either spelling, at host level too.
  EXPECT_EQ(parse(with("\"ip\": \"fd00::2\",", "\"ip\": \"fd00::2\", \"speed_gbps\": 25,")).hosts[1].port(1).speed_gbps,
            25u);
  EXPECT_EQ(parse(with("\"speed_gbps\": 50", "\"speed\": 40")).hosts[0].port(2).speed_gbps, 40u);
  // Workloads: port 2 given, port 1 by default.
  EXPECT_EQ(c.workloads[0].port, 2);
  EXPECT_EQ(c.workloads[1].port, 1);
  EXPECT_EQ(c.workloads[2].port, 1);
}

TEST(MultiPortConfig, NicConfigHasAPortPerPlane) {
  const AppConfig c = parse(kTwoPort);
  const NicConfig nc = nic_config_of(c);
  ASSERT_EQ(nc.ports.size(), 3u);  // a's two, b's one
  ASSERT_EQ(nc.hosts.size(), 2u);
  EXPECT_EQ(nc.hosts[0].ports, (std::vector<PortId>{0, 1}));
  EXPECT_EQ(nc.hosts[1].ports, (std::vector<PortId>{2}));
  ASSERT_EQ(nc.hosts[0].port_addrs.size(), 2u);
  EXPECT_EQ(nc.hosts[0].port_addrs[1].mac.bytes[5], 0x02);
  EXPECT_EQ(nc.hosts[0].port_addrs[1].ipv4->bytes[1], 2);
  EXPECT_FALSE(nc.hosts[0].port_addrs[0].gateway_mac.has_value());
  EXPECT_EQ(nc.hosts[0].port_addrs[1].gateway_mac->bytes[1], 0xaa);
  EXPECT_EQ(nc.hosts[1].port_addrs[0].gateway_mac->bytes[5], 0x09);
  EXPECT_EQ(nc.ports[0].line_rate, BitRate::gbps(100));
  EXPECT_EQ(nc.ports[1].line_rate, BitRate::gbps(50));
  EXPECT_EQ(nc.ports[1].mtu_bytes, 1024u);
  EXPECT_TRUE(nc.ports[1].pfc_honour);  // the host's pfc_enable on every port
  const auto np = node_ports_of(c);
  ASSERT_EQ(np.size(), 3u);
  EXPECT_EQ(np[1], (std::pair<size_t, uint8_t>{0, 2}));
  EXPECT_EQ(np[2], (std::pair<size_t, uint8_t>{1, 1}));
}

TEST(MultiPortConfig, ErrorsNameThePath) {
  // Host-level device / address keys next to "ports".
  EXPECT_EQ(error_of(with("\"mtu\": 1024,", "\"mtu\": 1024, \"mac\": \"02:00:00:00:00:09\",")),
            "hosts.a.mac: not with \"ports\" (give it in each ports[i] entry)");
  EXPECT_EQ(error_of(with("\"mtu\": 1024,", "\"mtu\": 1024, \"devargs\": \"net_null0\",")),
            "hosts.a.devargs: not with \"ports\" (give it in each ports[i] entry)");
  EXPECT_EQ(error_of(with("\"mtu\": 1024,", "\"mtu\": 1024, \"ip\": \"10.0.0.1\",")),
            "hosts.a.ip: not with \"ports\" (give it in each ports[i] entry)");
  EXPECT_EQ(error_of(with("\"mtu\": 1024,", "\"mtu\": 1024, \"speed_gbps\": 10,")),
            "hosts.a.speed_gbps: not with \"ports\" (give it in each ports[i] entry)");
  EXPECT_EQ(error_of(with("\"mtu\": 1024,", "\"mtu\": 1024, \"gateway_mac\": \"02:aa:00:00:00:01\",")),
            "hosts.a.gateway_mac: not with \"ports\" (give it in each ports[i] entry)");
  // Entries.
  EXPECT_EQ(error_of(with("\"mac\": \"02:00:00:00:01:02\"", "\"mac\": \"02:00\"")),
            "hosts.a.ports[1].mac: \"02:00\" is not a MAC address (aa:bb:cc:dd:ee:ff)");
  EXPECT_EQ(error_of(with("\"gateway_mac\": \"02:aa:00:00:00:02\"", "\"gateway_mac\": \"ff:ff:ff:ff:ff:ff\"")),
            "hosts.a.ports[1].gateway_mac: must be a unicast, non-zero address");
  EXPECT_EQ(error_of(with("\"gateway_mac\": \"02:aa:00:00:00:09\"", "\"gateway_mac\": \"00:00:00:00:00:00\"")),
            "hosts.b.gateway_mac: must be a unicast, non-zero address");
  EXPECT_EQ(error_of(with("\"ip\": \"10.2.0.1\", ", "")),
            "hosts.a.ports[1]: needs \"ip\" (IPv4 or IPv6) or \"ipv6\"");
  EXPECT_EQ(error_of(with("\"speed_gbps\": 50", "\"speed_gbps\": 900")),
            "hosts.a.ports[1].speed_gbps: 900 out of range [1, 800]");
  EXPECT_EQ(error_of(with("\"speed_gbps\": 50", "\"speed_gbps\": 50, \"speed\": 50")),
            "hosts.a.ports[1]: give \"speed_gbps\" or \"speed\", not both");
  EXPECT_EQ(error_of(with("\"speed_gbps\": 50", "\"sped\": 50")).rfind("hosts.a.ports[1]: unknown key \"sped\"", 0),
            0u);
  EXPECT_EQ(error_of(with("\"ip\": \"fd00::2\",", "\"ip\": \"fd00::2\", \"speed_gbps\": 25, \"speed\": 25,")),
            "hosts.b: give \"speed_gbps\" or \"speed\", not both");
  EXPECT_EQ(error_of(with("\"devargs\": \"net_memif1\"", "\"devargs\": \"net_memif0\"")),
            "hosts.a.ports[1].devargs: \"net_memif0\" is used by another port of this host");
  EXPECT_EQ(error_of(with("\"mac\": \"02:00:00:00:02:01\"", "\"mac\": \"02:00:00:00:01:02\"")),
            "hosts.b.mac: 02:00:00:00:01:02 is used by another host");
  std::string empty = kTwoPort;
  const size_t from = empty.find("[\n            {\"devargs\": \"net_memif0\"");
  const size_t to = empty.find("}],", from);
  empty.replace(from, to + 2 - from, "[]");
  EXPECT_EQ(error_of(empty), "hosts.a.ports: at least one port");
  // The workload's port.
  EXPECT_EQ(error_of(with("\"port\": 2", "\"port\": 3")),
            "workloads[0].port: host \"a\" has 2 ports (port is 1-based)");
  EXPECT_EQ(error_of(with("\"port\": 2", "\"port\": 0")), "workloads[0].port: 0 out of range [1, 32]");
  EXPECT_EQ(error_of(with("\"oob\": \"0.0.0.0:18602\"", "\"oob\": \"0.0.0.0:18602\", \"port\": 2")),
            "workloads[2].port: host \"b\" has 1 port (port is 1-based)");
}

// validate_app_config (the flags front end's check too) refuses a port the
// host does not have.
TEST(MultiPortConfig, ValidateChecksThePort) {
  AppConfig c = parse(kTwoPort);
  c.workloads[2].port = 2;
  EXPECT_EQ(sf::test::config_error_of([&] { validate_app_config(c); }),
            "workloads[2].port: host b has no port 2 (port is 1-based)");
}

}  // namespace
}  // namespace sf::nic::app
