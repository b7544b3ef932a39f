// nic.json "mrc": "ev_mode": "srv6" with its uSID path template "srv6"
// (docs/nic-app.md, docs/mrc.md "SRv6 uSID paths"): parsed into
// verbs::MrcQpAttr::srv6, and every bad template refused naming the JSON path;
// "ev_probe_endpoint" (retired EVs probed with ENDPOINT EV_PROBE).
#include <gtest/gtest.h>

#include "common/config/config_error.h"
#include "common/config/json_loader.h"
#include "nic/app/sf_nic_config.h"
#include "tests/support/config_errors.h"

namespace sf::nic::app {
namespace {

const char* kSrv6 = R"({
  "hosts": {
    "a": {"devargs": "net_memif0", "mac": "02:00:00:00:01:01", "ip": "fd00::1", "gateway_mac": "02:aa:00:00:00:01"}
  },
  "workloads": [
    {"name": "w1", "host": "a", "type": "write_bw", "role": "client", "oob": "127.0.0.1:18600",
     "transport": "mrc", "mrc": {"num_evs": 16, "ev_mode": "srv6", "ev_probe_endpoint": true,
       "srv6": {"block": "fcbb:bbbb::/32", "hop_limit": 16,
                "planes": [{"before": ["1"], "uplinks": ["3", "4"], "after": ["2", "8003"]}]}}}
  ]
})";

AppConfig parse(const std::string& text) { return parse_app_config(config::parse_text(text)); }

std::string with(const std::string& from, const std::string& to) {
  std::string s = kSrv6;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) { return sf::test::config_error_of([&] { parse(text); }); }

TEST(MrcSrv6Config, TemplateParsed) {
  const AppConfig c = parse(kSrv6);
  const verbs::MrcQpAttr& m = c.workloads[0].mrc;
  EXPECT_EQ(m.ev_mode, verbs::MrcEvMode::kSrv6);
  EXPECT_TRUE(m.ev_probe_endpoint);
  EXPECT_EQ(m.srv6.block[0], 0xFC);
  EXPECT_EQ(m.srv6.block[3], 0xBB);
  EXPECT_EQ(m.srv6.hop_limit, 16);
  EXPECT_EQ(m.srv6.num_planes, 1);
  const verbs::MrcSrv6Plane& p = m.srv6.plane[0];
  ASSERT_EQ(p.num_before, 1);
  ASSERT_EQ(p.num_uplinks, 2);
  ASSERT_EQ(p.num_after, 2);
  EXPECT_EQ(p.before[0], 0x1);
  EXPECT_EQ(p.uplinks[0], 0x3);
  EXPECT_EQ(p.uplinks[1], 0x4);
  EXPECT_EQ(p.after[0], 0x2);
  EXPECT_EQ(p.after[1], 0x8003);
}

// The inner header of an SRv6 frame is IPv6: a host without an IPv6 address
// is refused in the config, not at connect.
TEST(MrcSrv6Config, NeedsIpv6OnTheHost) {
  EXPECT_EQ(error_of(with("\"ip\": \"fd00::1\"", "\"ip\": \"10.0.0.1\"")),
            "workloads[0].mrc.ev_mode: \"srv6\" needs an IPv6 address on every port of host \"a\" (the inner "
            "header is IPv6); port 1 has none");
}

TEST(MrcSrv6Config, ErrorsNameTheKey) {
  const std::string w = "workloads[0].mrc";
  EXPECT_EQ(error_of(with("\"ev_mode\": \"srv6\",", "\"ev_mode\": \"sr\",")),
            w + ".ev_mode: \"sr\" is not one of udp_sport, srv6");
  EXPECT_EQ(error_of(with("\"ev_mode\": \"srv6\",", "")), w + ".srv6: needs \"ev_mode\": \"srv6\"");
  EXPECT_EQ(error_of(with("\"ev_mode\": \"srv6\",", "\"ev_mode\": \"udp_sport\",")), w + ".srv6: needs \"ev_mode\": \"srv6\"");
  std::string no_template = kSrv6;
  const size_t from = no_template.find(",\n       \"srv6\"");
  no_template.replace(from, no_template.find("]}}}") + 3 - from, "}");
  EXPECT_EQ(error_of(no_template), w + ".ev_mode: \"srv6\" needs the uSID path template \"srv6\" (block, planes)");
  EXPECT_EQ(error_of(with("fcbb:bbbb::/32", "fcbb:bbbb::/48")),
            w + ".srv6.block: \"fcbb:bbbb::/48\": expected a non-zero /32 IPv6 locator block such as fcbb:bbbb::/32 (F3216)");
  EXPECT_EQ(error_of(with("fcbb:bbbb::/32", "::/32")),
            w + ".srv6.block: \"::/32\": expected a non-zero /32 IPv6 locator block such as fcbb:bbbb::/32 (F3216)");
  EXPECT_EQ(error_of(with("\"hop_limit\": 16", "\"hop_limit\": 0")), w + ".srv6.hop_limit: 0 out of range [1, 255]");
  EXPECT_EQ(error_of(with("\"after\": [\"2\", \"8003\"]", "\"after\": [\"2\", \"8003\", \"5\", \"6\", \"7\"]")),
            w + ".srv6.planes[0]: before (1) + 1 uplink + after (5) uSIDs: at most 6 fit one address after a 32-bit block");
  EXPECT_EQ(error_of(with("\"uplinks\": [\"3\", \"4\"]", "\"uplinks\": []")), w + ".srv6.planes[0].uplinks: 0 uSID(s): 1..16");
  EXPECT_EQ(error_of(with("\"uplinks\": [\"3\", \"4\"]", "\"uplinks\": [\"3\", \"0\"]")),
            w + ".srv6.planes[0].uplinks[1]: \"0\": a uSID is 1..4 hex digits, not 0");
  EXPECT_EQ(error_of(with("\"before\": [\"1\"]", "\"before\": [\"1x\"]")),
            w + ".srv6.planes[0].before[0]: \"1x\": a uSID is 1..4 hex digits, not 0");
  EXPECT_EQ(error_of(with("\"after\": [\"2\", \"8003\"]", "\"after\": [\"2\", \"18003\"]")),
            w + ".srv6.planes[0].after[1]: \"18003\": a uSID is 1..4 hex digits, not 0");
  EXPECT_EQ(error_of(with("\"num_evs\": 16", "\"num_evs\": 1")),
            w + ".srv6.planes[0].uplinks: 2 uplinks but only 1 EV(s) per plane: some would never be used");
  EXPECT_EQ(error_of(with("\"after\": [\"2\", \"8003\"]}]", "\"after\": [\"2\", \"8003\"]}, {\"uplinks\": [\"3\"]}]")),
            w + ".srv6.planes: 2 plane template(s), the QP has 1 plane(s): one per plane");
  EXPECT_EQ(error_of(with("\"hop_limit\": 16", "\"hop_limit\": 16, \"hops\": 1")).rfind(w + ".srv6: unknown key \"hops\"", 0),
            0u);
  EXPECT_EQ(error_of(with("\"before\": [\"1\"]", "\"befor\": [\"1\"]")).rfind(w + ".srv6.planes[0]: unknown key \"befor\"", 0),
            0u);
}

}  // namespace
}  // namespace sf::nic::app
