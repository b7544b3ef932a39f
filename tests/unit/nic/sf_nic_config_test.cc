// sf-nic's nic.json: a full document parses into the structs; every kind of
// mistake is rejected naming its JSON path.
#include "nic/app/sf_nic_config.h"

#include <gtest/gtest.h>

#include "common/config/config_error.h"
#include "common/config/json_loader.h"
#include "tests/support/config_errors.h"

namespace sf::nic::app {
namespace {

const char* kGood = R"({
  "hosts": {
    "h0": {"devargs": "net_memif0,role=client,socket=/tmp/a.sock", "mac": "02:10:00:00:00:01",
           "ip": "10.0.0.1", "speed": 10, "mtu": 1024, "pfc_enable": "3,4",
           "rx_drain_rate": "5G", "pfc_generate": "3", "pfc_xoff": "32KiB", "pfc_xon": 8192},
    "h1": {"devargs": "net_memif1", "mac": "02:10:00:00:00:02", "ip": "fd00::2"}
  },
  "workloads": [
    {"name": "w0", "host": "h0", "type": "write_bw", "role": "client", "oob": "127.0.0.1:18600",
     "size": "64KiB", "iterations": 100, "qps": 2, "cc": "dcqcn-paper", "verify": true},
    {"name": "w1", "host": "h1", "type": "read_lat", "role": "server", "oob": "0.0.0.0:18601",
     "iterations": 0, "duration_s": 2.5}
  ]
})";

AppConfig parse(const std::string& text) { return parse_app_config(config::parse_text(text)); }

// Replaces the first occurrence of `from` in kGood.
std::string good_with(const std::string& from, const std::string& to) {
  std::string s = kGood;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) { return sf::test::config_error_of([&] { parse(text); }); }

// 1. Every field lands where it belongs; defaults fill the rest.
TEST(SfNicConfig, ParsesEveryField) {
  const AppConfig c = parse(kGood);
  ASSERT_EQ(c.hosts.size(), 2u);
  EXPECT_EQ(c.hosts[0].name, "h0");
  EXPECT_EQ(c.hosts[0].mac.to_string(), "02:10:00:00:00:01");
  ASSERT_TRUE(c.hosts[0].ipv4.has_value());
  EXPECT_EQ((*c.hosts[0].ipv4)[3], 1);
  EXPECT_FALSE(c.hosts[0].ipv6.has_value());
  EXPECT_EQ(c.hosts[0].speed_gbps, 10u);
  EXPECT_EQ(c.hosts[0].mtu_bytes, 1024u);
  EXPECT_EQ(c.hosts[0].pfc_enable, 0x18);
  EXPECT_EQ(c.hosts[0].rx_drain_rate, BitRate::gbps(5));
  EXPECT_EQ(c.hosts[0].pfc_generate, 0x08);
  EXPECT_EQ(c.hosts[0].pfc_xoff_bytes, 32768u);
  EXPECT_EQ(c.hosts[0].pfc_xon_bytes, 8192u);
  EXPECT_EQ(c.hosts[1].rx_drain_rate, BitRate(0));
  EXPECT_EQ(c.hosts[1].pfc_generate, 0);
  EXPECT_EQ(c.hosts[1].speed_gbps, 100u);  // default
  EXPECT_EQ(c.hosts[1].mtu_bytes, 4096u);
  ASSERT_TRUE(c.hosts[1].ipv6.has_value());
  EXPECT_EQ((*c.hosts[1].ipv6)[15], 2);
  ASSERT_EQ(c.workloads.size(), 2u);
  const AppWorkload& w = c.workloads[0];
  EXPECT_EQ(w.host, 0u);
  EXPECT_EQ(w.type, WorkloadType::kWriteBw);
  EXPECT_EQ(w.role, Role::kClient);
  EXPECT_EQ(w.oob_host, "127.0.0.1");
  EXPECT_EQ(w.oob_port, 18600);
  EXPECT_EQ(w.size_bytes, 65536u);
  EXPECT_EQ(w.qps, 2u);
  EXPECT_EQ(w.cc.algorithm, CcAlgorithm::kDcqcn);
  EXPECT_EQ(w.cc.dcqcn_params, DcqcnParamSet::kPaper);
  EXPECT_TRUE(w.verify);
  EXPECT_EQ(c.workloads[1].host, 1u);
  EXPECT_EQ(c.workloads[1].type, WorkloadType::kReadLat);
  EXPECT_DOUBLE_EQ(c.workloads[1].duration_s, 2.5);
  EXPECT_EQ(c.workloads[1].cc.algorithm, CcAlgorithm::kNone);
}

// 2. Each mistake names its path.
TEST(SfNicConfig, ErrorsNameThePath) {
  EXPECT_EQ(error_of(good_with("\"mac\": \"02:10:00:00:00:01\"", "\"mac\": \"02:10:00\"")),
            "hosts.h0.mac: \"02:10:00\" is not a MAC address (aa:bb:cc:dd:ee:ff)");
  EXPECT_EQ(error_of(good_with("\"mac\": \"02:10:00:00:00:01\"", "\"mac\": \"01:00:00:00:00:01\"")),
            "hosts.h0.mac: must be a unicast, non-zero address");
  EXPECT_EQ(error_of(good_with("\"ip\": \"10.0.0.1\"", "\"ip\": \"10.0.0.300\"")),
            "hosts.h0.ip: \"10.0.0.300\" is neither an IPv4 nor an IPv6 address");
  EXPECT_EQ(error_of(good_with("\"mtu\": 1024", "\"mtu\": 1500")),
            "hosts.h0.mtu: 1500 is not a RoCE MTU (256, 512, 1024, 2048, 4096)");
  EXPECT_EQ(error_of(good_with("\"pfc_enable\": \"3,4\"", "\"pfc_enable\": \"3,9\"")),
            "hosts.h0.pfc_enable: \"3,9\": want priorities 0-7 separated by commas, e.g. \"3,4\"");
  EXPECT_EQ(error_of(good_with("\"speed\": 10", "\"speed\": 0")), "hosts.h0.speed: 0 out of range [1, 800]");
  EXPECT_EQ(error_of(good_with("\"rx_drain_rate\": \"5G\", ", "")),
            "hosts.h0.pfc_generate: needs rx_drain_rate (there is no receive backlog without it)");
  EXPECT_EQ(error_of(good_with("\"pfc_xon\": 8192", "\"pfc_xon\": 65536")), "hosts.h0.pfc_xon: must be below pfc_xoff");
  EXPECT_EQ(error_of(good_with("\"host\": \"h0\"", "\"host\": \"h9\"")), "workloads[0].host: unknown host \"h9\"");
  EXPECT_EQ(error_of(good_with("\"type\": \"write_bw\"", "\"type\": \"write\"")),
            "workloads[0].type: \"write\" is not one of write_bw, write_lat, read_bw, read_lat, send_bw, send_lat");
  EXPECT_EQ(error_of(good_with("\"oob\": \"127.0.0.1:18600\"", "\"oob\": \"127.0.0.1\"")),
            "workloads[0].oob: \"127.0.0.1\": want HOST:PORT");
  EXPECT_EQ(error_of(good_with("\"oob\": \"127.0.0.1:18600\"", "\"oob\": \"127.0.0.1:99999\"")),
            "workloads[0].oob: \"127.0.0.1:99999\": the port must be 1-65535");
  EXPECT_EQ(error_of(good_with("\"cc\": \"dcqcn-paper\"", "\"cc\": \"bbrv2\"")),
            "workloads[0].cc: \"bbrv2\" is not one of none, dcqcn, dcqcn-nvidia, dcqcn-paper, swift, bbr, hpcc, nscc");
  EXPECT_EQ(error_of(good_with("\"iterations\": 0, \"duration_s\": 2.5", "\"iterations\": 0")),
            "workloads[1]: needs \"iterations\" > 0 or \"duration_s\" > 0");
  EXPECT_EQ(error_of(good_with("\"qps\": 2", "\"qsp\": 2")).rfind("workloads[0]: unknown key \"qsp\"", 0), 0u);
}

// 2a. The MRC responder back-pressure keys land in the QP attributes and are
//     range-checked naming the path.
TEST(SfNicConfig, MrcBackPressureKeys) {
  auto doc = [](const std::string& mrc) {
    return R"({"hosts": {"h0": {"devargs": "net_memif0", "mac": "02:10:00:00:00:01", "ip": "10.0.0.1"}},
               "workloads": [{"name": "w0", "host": "h0", "type": "write_bw", "role": "client",
                              "oob": "127.0.0.1:18600", "iterations": 10, "transport": "mrc", "mrc": )" +
           mrc + "}]}";
  };
  const AppConfig c = parse(doc(R"({"rcv_pen_rq": 100, "rcv_pen_ooo_pct": 90})"));
  EXPECT_EQ(c.workloads[0].mrc.rcv_pen_rq, 100);
  EXPECT_EQ(c.workloads[0].mrc.rcv_pen_ooo_pct, 90);
  const AppConfig d = parse(doc("{}"));
  EXPECT_EQ(d.workloads[0].mrc.rcv_pen_rq, 64);
  EXPECT_EQ(d.workloads[0].mrc.rcv_pen_ooo_pct, 75);
  EXPECT_EQ(error_of(doc(R"({"rcv_pen_rq": 128})")), "workloads[0].mrc.rcv_pen_rq: 128 out of range [0, 127]");
  EXPECT_EQ(error_of(doc(R"({"rcv_pen_ooo_pct": 0})")), "workloads[0].mrc.rcv_pen_ooo_pct: 0 out of range [1, 100]");
}

// 2a'. The SACK window (mpr up to 256) and the SACK base alignment (1 or 8);
//      an MRC QP takes a rate_limit (each port paced at rate / ports).
TEST(SfNicConfig, MrcSackWindowAlignAndRate) {
  auto doc = [](const std::string& mrc, const std::string& extra = "") {
    return R"({"hosts": {"h0": {"devargs": "net_memif0", "mac": "02:10:00:00:00:01", "ip": "10.0.0.1"}},
               "workloads": [{"name": "w0", "host": "h0", "type": "write_bw", "role": "client",
                              "oob": "127.0.0.1:18600", "iterations": 10, "transport": "mrc", )" +
           extra + R"("mrc": )" + mrc + "}]}";
  };
  const AppConfig c = parse(doc(R"({"mpr": 256, "sack_align": 8})", R"("rate_limit": "20G", )"));
  EXPECT_EQ(c.workloads[0].mrc.mpr, 256);
  EXPECT_EQ(c.workloads[0].mrc.sack_align, 8);
  EXPECT_EQ(c.workloads[0].rate_limit, BitRate::gbps(20));
  EXPECT_EQ(parse(doc("{}")).workloads[0].mrc.sack_align, 1);
  EXPECT_EQ(error_of(doc(R"({"mpr": 257})")), "workloads[0].mrc.mpr: 257 out of range [1, 256]");
  EXPECT_EQ(error_of(doc(R"({"sack_align": 4})")),
            "workloads[0].mrc.sack_align: 1 (CACK + 1) or 8 (UET's 8-aligned base)");
}

// 2b. The pacing fields: rate_limit and its burst bucket (burst_size, bytes
//     or a size string); a bucket without a rate, or beyond 32 bits, is
//     refused naming the path.
TEST(SfNicConfig, RateLimitAndBurstSize) {
  const AppConfig c = parse(good_with("\"verify\": true", "\"verify\": true, \"rate_limit\": \"10G\", \"burst_size\": \"64KiB\""));
  EXPECT_EQ(c.workloads[0].rate_limit, BitRate::gbps(10));
  EXPECT_EQ(c.workloads[0].burst_bytes, 65536u);
  EXPECT_EQ(c.workloads[1].burst_bytes, 0u);  // default: strict
  EXPECT_EQ(parse(good_with("\"verify\": true", "\"verify\": true, \"rate_limit\": 1, \"burst_size\": 1250000"))
                .workloads[0].burst_bytes,
            1250000u);
  EXPECT_EQ(error_of(good_with("\"verify\": true", "\"verify\": true, \"burst_size\": 65536")),
            "workloads[0].burst_size: needs \"rate_limit\" (a burst bucket of an unpaced QP; EINVAL in "
            "ibv_modify_qp_rate_limit)");
  EXPECT_EQ(error_of(good_with("\"verify\": true", "\"verify\": true, \"rate_limit\": 1, \"burst_size\": \"8GiB\""))
                .rfind("workloads[0].burst_size: ", 0),
            0u);
  EXPECT_EQ(error_of(good_with("\"verify\": true", "\"verify\": true, \"rate_limit\": 1, \"burst_size\": -1"))
                .rfind("workloads[0].burst_size: ", 0),
            0u);
}

// 3. Cross-checks: a port or a listening OOB endpoint used twice.
TEST(SfNicConfig, CrossChecks) {
  EXPECT_EQ(error_of(good_with("\"devargs\": \"net_memif1\"", "\"devargs\": \"net_memif0,role=client,socket=/tmp/a.sock\"")),
            "hosts.h1.devargs: \"net_memif0,role=client,socket=/tmp/a.sock\" is used by another host");
  EXPECT_EQ(error_of(good_with("\"mac\": \"02:10:00:00:00:02\"", "\"mac\": \"02:10:00:00:00:01\"")),
            "hosts.h1.mac: 02:10:00:00:00:01 is used by another host");
  std::string two_servers = good_with("\"role\": \"client\"", "\"role\": \"server\"");
  const size_t at = two_servers.find("0.0.0.0:18601");
  two_servers.replace(at, 13, "127.0.0.1:18600");
  EXPECT_EQ(error_of(two_servers), "workloads[1].oob: two server workloads listen on 127.0.0.1:18600");
  EXPECT_EQ(error_of(R"({"hosts": {}, "workloads": []})"), "hosts: at least one host is needed");
}

// Verbs object limits: the defaults hold 64 perftest workloads; the keys
// raise them (a 64:1 receiver with a probe, incast rounds), honoured by
// nic_config_of, and refused out of range naming the key.
TEST(SfNicConfig, HostObjectLimits) {
  const AppConfig d = parse(kGood);
  EXPECT_EQ(d.hosts[0].max_qps, 64u);
  EXPECT_EQ(d.hosts[0].max_mrs, 64u);
  EXPECT_EQ(d.hosts[0].max_cqs, 128u);
  EXPECT_EQ(d.hosts[0].max_pds, 64u);
  const AppConfig c = parse(good_with("\"pfc_xon\": 8192", "\"pfc_xon\": 8192, \"max_qps\": 200, \"max_mrs\": 193, "
                                      "\"max_cqs\": 386, \"max_pds\": 193"));
  EXPECT_EQ(c.hosts[0].max_qps, 200u);
  EXPECT_EQ(c.hosts[0].max_mrs, 193u);
  EXPECT_EQ(c.hosts[0].max_cqs, 386u);
  EXPECT_EQ(c.hosts[0].max_pds, 193u);
  EXPECT_EQ(c.hosts[1].max_pds, 64u);
  EXPECT_EQ(error_of(good_with("\"pfc_xon\": 8192", "\"pfc_xon\": 8192, \"max_qps\": 0")),
            "hosts.h0.max_qps: 0 out of range [1, 16384]");
  EXPECT_EQ(error_of(good_with("\"pfc_xon\": 8192", "\"pfc_xon\": 8192, \"max_pds\": 20000")),
            "hosts.h0.max_pds: 20000 out of range [1, 16384]");
  EXPECT_EQ(error_of(good_with("\"pfc_xon\": 8192", "\"pfc_xon\": 8192, \"max_cqs\": -1")).rfind("hosts.h0.max_cqs", 0),
            0u);
}

// 3. The routed form (docs/nic-app.md "Routed fabrics"): ADDRESS/PREFIX and a
// gateway on link; mistakes name the path.
TEST(SfNicConfig, RoutedPortGatewayAndPrefix) {
  const AppConfig c = parse(good_with("\"ip\": \"10.0.0.1\"", "\"ip\": \"10.0.0.1/24\", \"gateway\": \"10.0.0.254\""));
  EXPECT_EQ(c.hosts[0].ipv4_prefix, 24);
  ASSERT_TRUE(c.hosts[0].gateway4.has_value());
  EXPECT_EQ((*c.hosts[0].gateway4)[3], 254);
  EXPECT_EQ(error_of(good_with("\"ip\": \"10.0.0.1\"", "\"ip\": \"10.0.0.1/33\"")),
            "hosts.h0.ip: \"10.0.0.1/33\": the prefix length after '/' must be 1..32");
  EXPECT_EQ(error_of(good_with("\"ip\": \"10.0.0.1\"", "\"ip\": \"10.0.0.1/24\", \"gateway\": \"10.0.1.254\"")),
            "hosts.h0.gateway: \"10.0.1.254\" is outside the port's subnet (/24): a gateway must be on link");
  EXPECT_EQ(error_of(good_with("\"ip\": \"10.0.0.1\"", "\"ip\": \"10.0.0.1\", \"gateway\": \"fd00::1\"")),
            "hosts.h0.gateway: \"fd00::1\" is an IPv6 address but the port has none");
  EXPECT_EQ(error_of(good_with("\"ip\": \"10.0.0.1\"", "\"ip\": \"10.0.0.1\", \"gateway\": \"10.0.0.1\"")),
            "hosts.h0.gateway: \"10.0.0.1\" is the port's own address");
  EXPECT_EQ(error_of(good_with("\"ip\": \"10.0.0.1\"",
                               "\"ip\": \"10.0.0.1\", \"gateway\": \"10.0.0.9\", \"gateway_mac\": \"02:00:00:00:00:09\"")),
            "hosts.h0.gateway: give \"gateway\" (resolved by ARP / ND) or \"gateway_mac\" (static), not both");
}

// perftest's exchange (--oob-format perftest): bw tests of RC, no --verify,
// and a next hop on the workload's port (it carries no MAC).
TEST(SfNicConfig, PerftestOobFormat) {
  const std::string routed = good_with("\"ip\": \"10.0.0.1\",", "\"ip\": \"10.0.0.1\", \"gateway_mac\": \"02:10:00:00:00:09\",");
  auto with_format = [](std::string doc, const std::string& extra) {
    const std::string from = "\"verify\": true";
    return doc.replace(doc.find(from), from.size(), extra + "\"oob_format\": \"perftest\"");
  };
  const AppConfig c = parse(with_format(routed, ""));
  EXPECT_EQ(c.workloads[0].oob_format, OobFormat::kPerftest);
  EXPECT_EQ(c.workloads[1].oob_format, OobFormat::kSf);
  EXPECT_EQ(error_of(with_format(kGood, "")).rfind("workloads[0].oob_format: perftest's exchange carries no MAC", 0), 0u);
  EXPECT_EQ(error_of(with_format(routed, "\"verify\": true, ")).rfind("workloads[0].oob_format: --verify", 0), 0u);
  std::string mrc = with_format(routed, "\"transport\": \"mrc\", ");
  mrc.replace(mrc.find("\"dcqcn-paper\""), 13, "\"none\"");
  EXPECT_EQ(parse(mrc).workloads[0].transport, Transport::kMrc);  // one port: MRC speaks it too
  EXPECT_EQ(error_of(good_with("\"verify\": true", "\"oob_format\": \"perftest2\"")).rfind("workloads[0].oob_format: \"perftest2\"", 0), 0u);
  std::string send = with_format(routed, "");
  send.replace(send.find("\"write_bw\""), 10, "\"send_bw\"");
  EXPECT_EQ(parse(send).workloads[0].type, WorkloadType::kSendBw);  // send_bw speaks it
  std::string lat = with_format(routed, "");
  lat.replace(lat.find("\"write_bw\""), 10, "\"read_lat\"");
  lat.replace(lat.find("\"qps\": 2"), 8, "\"qps\": 1");
  EXPECT_EQ(parse(lat).workloads[0].type, WorkloadType::kReadLat);
  lat.replace(lat.find("\"read_lat\""), 10, "\"write_lat\"");
  EXPECT_EQ(parse(lat).workloads[0].type, WorkloadType::kWriteLat);  // its server starts (Workload::lat_starter)
  std::string timed = lat;
  timed.replace(timed.find("\"oob_format\""), 12, "\"duration_s\": 2, \"oob_format\"");
  EXPECT_EQ(error_of(timed).rfind("workloads[0].oob_format: write_lat with perftest's exchange: its server starts the "
                                  "ping-pong and the client answers, so no duration_s", 0), 0u);
}

}  // namespace
}  // namespace sf::nic::app
