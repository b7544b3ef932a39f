// NicConfig from JSON: a full document parsed into hosts and ports, and each
// kind of error naming its JSON path.
#include <gtest/gtest.h>

#include <string>

#include "common/config/config_error.h"
#include "common/config/json_loader.h"
#include "nic/host/nic_config_json.h"

namespace sf::nic {
namespace {

const char* const kDoc = R"({
  "PORT": {"Ethernet0": {"devargs": "net_ring0", "speed": 100},
           "Ethernet4": {"devargs": "net_ring1", "speed": 400},
           "Ethernet8": {"devargs": "net_ring2", "speed": 100}},
  "NIC_HOST": {
    "h0": {"mac": "02:00:00:00:00:01", "ipv4": "10.0.0.1", "ports": ["Ethernet0", "Ethernet4"],
           "max_qps": 8, "rc": {"cnp_interval": "20us", "cnp_dscp": 46, "ack_req_every_pkts": 16}},
    "h1": {"mac": "02:00:00:00:00:02", "ipv6": "fd00::2", "ports": ["Ethernet8"]}
  },
  "NIC_PORT": {"Ethernet8": {"rx_drain_rate": "25G", "pfc_generate": [3, 4], "pfc_xoff": 131072, "pfc_xon": 65536}}
})";

// 1. A full document: hosts in order with their addresses and ports, line
//    rates from PORT, rc and NIC_PORT settings, defaults elsewhere.
TEST(NicConfigJson, ParsesHostsAndPorts) {
  const NicDocument d = parse_nic_config(config::parse_text(kDoc));
  ASSERT_EQ(d.nic.hosts.size(), 2u);
  const HostConfig& h0 = d.nic.hosts[0];
  EXPECT_EQ(h0.name, "h0");
  EXPECT_EQ(h0.mac.bytes[5], 1);
  ASSERT_TRUE(h0.ipv4.has_value());
  EXPECT_EQ(h0.ipv4->bytes[3], 1);
  EXPECT_FALSE(h0.ipv6.has_value());
  EXPECT_EQ(h0.ports, (std::vector<PortId>{0, 1}));
  EXPECT_EQ(h0.max_qps, 8u);
  EXPECT_EQ(h0.rc.cnp_interval, TimeNs::from_us(20));
  EXPECT_EQ(h0.rc.cnp_dscp, 46);
  EXPECT_EQ(h0.rc.ack_req_every_pkts, 16u);
  EXPECT_EQ(h0.rc.max_unacked_psns, 128u);
  const HostConfig& h1 = d.nic.hosts[1];
  ASSERT_TRUE(h1.ipv6.has_value());
  EXPECT_EQ(h1.ipv6->bytes[0], 0xFD);
  EXPECT_EQ(h1.ipv6->bytes[15], 2);
  EXPECT_EQ(h1.ports, (std::vector<PortId>{2}));
  ASSERT_EQ(d.nic.ports.size(), 3u);
  EXPECT_EQ(d.nic.ports[1].line_rate, BitRate::gbps(400));
  EXPECT_EQ(d.nic.ports[2].rx_drain_rate, BitRate::gbps(25));
  EXPECT_EQ(d.nic.ports[2].pfc_generate_mask, 0x18);
  EXPECT_EQ(d.nic.ports[2].pfc_backlog.xoff_at, 131072u);
  EXPECT_EQ(d.nic.ports[0].pfc_generate_mask, 0);
  EXPECT_EQ(d.ports.ports[2].devargs, "net_ring2");
}

std::string error_of(const std::string& doc) {
  try {
    parse_nic_config(config::parse_text(doc));
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string with(const std::string& from, const std::string& to) {
  std::string d = kDoc;
  const auto at = d.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  d.replace(at, from.size(), to);
  return d;
}

// 2. Errors name the JSON path: bad address, unknown port, a port shared or
//    unused, an unknown key, xon >= xoff, PFC generation without a backlog.
TEST(NicConfigJson, ErrorsNameThePath) {
  EXPECT_NE(error_of(with("\"10.0.0.1\"", "\"10.0.0\"")).find("NIC_HOST.h0.ipv4"), std::string::npos);
  EXPECT_NE(error_of(with("\"fd00::2\"", "\"fd00::zz\"")).find("NIC_HOST.h1.ipv6"), std::string::npos);
  EXPECT_NE(error_of(with("\"02:00:00:00:00:02\"", "\"01:00:00:00:00:02\"")).find("NIC_HOST.h1.mac"),
            std::string::npos);
  EXPECT_NE(error_of(with("[\"Ethernet8\"]", "[\"Ethernet9\"]")).find("NIC_HOST.h1.ports"), std::string::npos);
  const std::string shared = error_of(with("[\"Ethernet8\"]", "[\"Ethernet4\"]"));
  EXPECT_NE(shared.find("already belongs to NIC_HOST.h0"), std::string::npos) << shared;
  EXPECT_NE(error_of(with("\"ports\": [\"Ethernet0\", \"Ethernet4\"]", "\"ports\": [\"Ethernet0\"]"))
                .find("\"Ethernet4\" belongs to no host"),
            std::string::npos);
  const std::string unknown = error_of(with("\"max_qps\": 8", "\"max_qp\": 8"));
  EXPECT_NE(unknown.find("NIC_HOST.h0"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("max_qp"), std::string::npos) << unknown;
  EXPECT_NE(error_of(with("\"pfc_xon\": 65536", "\"pfc_xon\": 131072")).find("NIC_PORT.Ethernet8.pfc_xon"),
            std::string::npos);
  EXPECT_NE(error_of(with("\"rx_drain_rate\": \"25G\", ", "")).find("NIC_PORT.Ethernet8.pfc_generate"),
            std::string::npos);
  EXPECT_NE(error_of(with("\"pfc_generate\": [3, 4]", "\"pfc_generate\": [8]")).find("pfc_generate[0]"),
            std::string::npos);
}

}  // namespace
}  // namespace sf::nic
