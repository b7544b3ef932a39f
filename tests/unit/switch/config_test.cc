// Switch config loader: the shipped profiles load to the seed's numbers, and
// bad documents fail naming the JSON path and the reason.
#include "switch/config/switch_config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "common/config/config_error.h"
#include "common/config/json_loader.h"
#include "tests/support/config_errors.h"

namespace sf::sw {
namespace {

std::string source_root() {
  const char* r = std::getenv("SF_SOURCE_ROOT");
  return r != nullptr ? r : ".";
}

constexpr const char* kMinimal = R"({
  "PORT": {"Ethernet0": {"devargs": "net_ring0", "speed": 100},
           "Ethernet4": {"devargs": "net_ring1", "speed": 100}}
})";

// A minimal document with `extra` tables merged in.
config::Json doc_with(const std::string& extra) { return sf::test::merged_doc(kMinimal, extra); }

std::string error_of(const config::Json& d) { return sf::test::config_error_of([&] { parse_switch_config(d); }); }

// 1. The seed-000 static lossless profile, as shipped.
TEST(SwitchConfig, SeedStaticProfileLoads) {
  const SwitchConfig c = load_switch_config(source_root() + "/config/switch/seed000-static-lossless.json");
  ASSERT_EQ(c.ports.ports.size(), 4u);
  const ProfileConfig* pg3 = &c.mmu.profiles[static_cast<size_t>(c.mmu.pg_profile[2][3])];
  EXPECT_EQ(pg3->name, "pg_lossless_p3_profile");
  EXPECT_EQ(pg3->mode, ThresholdMode::kStatic);
  EXPECT_EQ(pg3->static_th_bytes, 491520u);
  EXPECT_EQ(pg3->xoff_bytes, 262144u);
  EXPECT_EQ(c.mmu.pools[pg3->pool].size_bytes, 16777216u);
  EXPECT_EQ(c.wred[1][3].kmin_bytes, 122880u);
  EXPECT_EQ(c.wred[1][3].kmax_bytes, 368640u);
  EXPECT_DOUBLE_EQ(c.wred[1][3].pmax, 0.20);
  EXPECT_TRUE(c.wred[1][3].ecn);
  EXPECT_FALSE(c.wred[1][0].ecn);
  EXPECT_EQ(c.qos[0].dscp_to_tc[26], 3);
  EXPECT_EQ(c.qos[0].pfc_enable, 1u << 3);
  EXPECT_EQ(c.sched[0][6].type, SchedType::kStrict);
  EXPECT_EQ(c.sched[0][3].weight, 15u);
}

// 2. The dynamic profile differs only in the lossless PG threshold mode.
TEST(SwitchConfig, DynamicDriftProfileLoads) {
  const SwitchConfig c = load_switch_config(source_root() + "/config/switch/dynamic-drift.json");
  const ProfileConfig& pg3 = c.mmu.profiles[static_cast<size_t>(c.mmu.pg_profile[0][3])];
  EXPECT_EQ(pg3.mode, ThresholdMode::kDynamic);
  EXPECT_EQ(pg3.dynamic_th, -7);
  EXPECT_EQ(c.wred[0][3].kmin_bytes, 153600u);
  // The egress lossless queue's limit is alpha x free = free / 128: below Kmin
  // (150 KB) even with the whole 16 MiB pool free.
  const ProfileConfig& q3 = c.mmu.profiles[static_cast<size_t>(c.mmu.queue_profile[0][3])];
  EXPECT_EQ(q3.dynamic_th, -7);
  EXPECT_LT(c.mmu.pools[q3.pool].size_bytes / 128, c.wred[0][3].kmin_bytes);
}

// 3. Defaults with no buffer tables: every PG and queue has a profile.
TEST(SwitchConfig, DefaultsWithoutBufferTables) {
  const SwitchConfig c = parse_switch_config(config::parse_text(kMinimal));
  EXPECT_EQ(c.mmu.total_bytes, 32u << 20);
  for (const auto& a : c.mmu.pg_profile) {
    for (int16_t p : a) EXPECT_NE(p, kNoProfile);
  }
  EXPECT_EQ(c.qos[0].dscp_to_tc[26], 3);  // class selector default
}

// 4. Bad documents: the error names the JSON path and the reason.
TEST(SwitchConfig, BadDocumentsNamePathAndReason) {
  const std::string pool = R"("BUFFER_POOL": {"p": {"type": "ingress", "mode": "static", "size": "16777216"}})";
  EXPECT_EQ(error_of(doc_with("{" + pool + R"(, "BUFFER_PROFILE": {"lossless_p3": {"pool": "p", "static_th": "1000", "xoff": "900000000"}}})")),
            "BUFFER_PROFILE.lossless_p3.xoff: 900000000 exceeds pool size 16777216");
  EXPECT_EQ(error_of(doc_with("{" + pool + R"(, "BUFFER_PROFILE": {"x": {"pool": "nope", "static_th": "1"}}})")),
            "BUFFER_PROFILE.x.pool: unknown pool \"nope\" (not in BUFFER_POOL)");
  EXPECT_EQ(error_of(doc_with("{" + pool + R"(, "BUFFER_PROFILE": {"x": {"pool": "p", "dynamic_th": "1"}}})")),
            "BUFFER_PROFILE.x.dynamic_th: pool \"p\" is static; use static_th");
  EXPECT_EQ(error_of(doc_with(R"({"BUFFER_POOL": {"d": {"type": "ingress", "size": "1MiB"}}, "BUFFER_PROFILE": {"x": {"pool": "d", "dynamic_th": "9"}}})")),
            "BUFFER_PROFILE.x.dynamic_th: 9 out of range [-8, 7]");
  EXPECT_EQ(error_of(doc_with(R"({"BUFFER_POOL": {"d": {"type": "sideways", "size": "1MiB"}}})")),
            "BUFFER_POOL.d.type: \"sideways\" is not one of \"ingress\", \"egress\"");
  EXPECT_EQ(error_of(doc_with(R"({"BUFFER_PG": {"Ethernet9|3": {"profile": "x"}}})")),
            "BUFFER_PG.Ethernet9|3: unknown port \"Ethernet9\" (not in PORT)");
  EXPECT_EQ(error_of(doc_with(R"({"BUFFER_PG": {"Ethernet0|3-9": {"profile": "x"}}})")),
            "BUFFER_PG.Ethernet0|3-9: bad pg \"3-9\" (want 0..7, e.g. 3 or 3-4)");
  EXPECT_EQ(error_of(doc_with(R"({"WRED_PROFILE": {"w": {"green_min_threshold": "200", "green_max_threshold": "100"}}})")),
            "WRED_PROFILE.w.green_max_threshold: 100 must exceed green_min_threshold 200");
  // Packets are not coloured: yellow/red settings are refused, not ignored ("false" is true and accepted).
  const std::string green = R"("green_min_threshold": "100", "green_max_threshold": "200")";
  EXPECT_NO_THROW(parse_switch_config(
      doc_with(R"({"WRED_PROFILE": {"w": {)" + green + R"(, "wred_yellow_enable": "false", "wred_red_enable": "false"}}})")));
  EXPECT_EQ(error_of(doc_with(R"({"WRED_PROFILE": {"w": {)" + green + R"(, "wred_yellow_enable": "true"}}})")),
            "WRED_PROFILE.w.wred_yellow_enable: not supported: packets are not coloured (every packet is green); use "
            "the green_* fields");
  EXPECT_EQ(error_of(doc_with(R"({"WRED_PROFILE": {"w": {)" + green + R"(, "red_max_threshold": "300"}}})")),
            "WRED_PROFILE.w.red_max_threshold: not supported: packets are not coloured (every packet is green); use "
            "green_max_threshold");
  EXPECT_EQ(error_of(doc_with(R"({"QUEUE": {"Ethernet0|3": {"scheduler": "s9"}}})")),
            "QUEUE.Ethernet0|3.scheduler: unknown SCHEDULER \"s9\"");
  EXPECT_EQ(error_of(doc_with(R"({"SCHEDULER": {"s": {"type": "DWRR", "weight": "101"}}})")),
            "SCHEDULER.s.weight: 101 out of range [1, 100]");
  EXPECT_EQ(error_of(doc_with(R"({"SCHEDULER": {"s": {"type": "DWRR", "wieght": "10"}}})")).rfind("SCHEDULER.s: unknown key \"wieght\"", 0), 0u);
  EXPECT_EQ(error_of(doc_with(R"({"STATIC_ROUTE": {"10.0.0.0/8": {"nexthop": "10.0.0.1", "ifname": "Ethernet0"}}})")),
            "STATIC_ROUTE.10.0.0.0/8.nexthop: no NEIGH entry for 10.0.0.1 on Ethernet0, and it is on no INTERFACE "
            "subnet of Ethernet0 (where the switch would resolve it by ARP / ND)");
  EXPECT_EQ(error_of(doc_with(R"({"STATIC_ROUTE": {"10.0.0.0/33": {"nexthop": "10.0.0.1", "ifname": "Ethernet0"}}})")),
            "STATIC_ROUTE.10.0.0.0/33: key must be a prefix such as 10.0.0.0/8 or fd00::/16");
  EXPECT_EQ(error_of(doc_with(R"({"PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "NOPE"}}})")),
            "PORT_QOS_MAP.Ethernet0.dscp_to_tc_map: unknown map \"NOPE\"");
  EXPECT_EQ(error_of(doc_with(R"({"DSCP_TO_TC_MAP": {"M": {"64": "1"}}})")),
            "DSCP_TO_TC_MAP.M.64: key must be an integer 0..63");
  EXPECT_EQ(error_of(doc_with(R"({"FDB": {"02:00:00:00:00:01": {"port": "Ethernet0", "type": "dynamic"}}})")),
            "FDB.02:00:00:00:00:01.type: \"dynamic\" is not one of \"static\"");
  EXPECT_EQ(error_of(doc_with(R"({"SRV6": {"locator_block": "fcbb:bbbb::/48", "usid": "1"}})")),
            "SRV6.locator_block: expected a /32 IPv6 block such as fcbb:bbbb::/32");
  EXPECT_EQ(error_of(doc_with(R"({"BUFER_POOL": {}})")),
            "unknown key \"BUFER_POOL\" (did you mean \"BUFFER_POOL\"?)");
}

// 5. Routes, neighbours, FDB and SRv6 resolve to ports and MACs; ECMP keeps every member.
TEST(SwitchConfig, RoutesFdbSrv6Resolve) {
  const SwitchConfig c = parse_switch_config(doc_with(R"({
    "NEIGH": {"Ethernet0|10.0.0.1": {"neigh": "02:00:00:00:00:01", "family": "IPv4"},
              "Ethernet4|10.0.1.1": {"neigh": "02:00:00:00:00:02"},
              "Ethernet4|fd00::1": {"neigh": "02:00:00:00:00:03", "family": "IPv6"}},
    "STATIC_ROUTE": {"10.1.0.0/16": {"nexthop": "10.0.0.1,10.0.1.1", "ifname": "Ethernet0,Ethernet4"},
                     "default|fd01::/16": {"nexthop": "fd00::1", "ifname": "Ethernet4"}},
    "FDB": {"Vlan10|02:00:00:00:00:09": {"port": "Ethernet4"}},
    "SRV6": {"locator_block": "fcbb:bbbb::/32", "usid": "100",
             "next": {"200": {"port": "Ethernet4", "mac": "02:00:00:00:00:02"}}}
  })"));
  ASSERT_EQ(c.routes.size(), 2u);
  EXPECT_EQ(c.routes[0].next_hops.size(), 2u);
  EXPECT_EQ(c.routes[0].next_hops[1].port, 1);
  EXPECT_EQ(c.routes[0].next_hops[1].mac[5], 2);
  EXPECT_TRUE(c.routes[1].v6);
  EXPECT_EQ(c.routes[1].depth, 16);
  ASSERT_EQ(c.fdb.size(), 1u);
  EXPECT_EQ(c.fdb[0].vlan, 10);
  // A bare MAC is VLAN 1 (untagged frames' VLAN); 0 and 4095 are not VLANs.
  EXPECT_EQ(parse_switch_config(doc_with(R"({"FDB": {"02:00:00:00:00:09": {"port": "Ethernet4"}}})")).fdb[0].vlan,
            kDefaultVlan);
  EXPECT_EQ(error_of(doc_with(R"({"FDB": {"Vlan0|02:00:00:00:00:09": {"port": "Ethernet4"}}})")),
            "FDB.Vlan0|02:00:00:00:00:09: key must be [Vlan<id>|]<mac> with id 1..4094 (untagged frames are Vlan1)");
  EXPECT_NE(error_of(doc_with(R"({"FDB": {"Vlan4095|02:00:00:00:00:09": {"port": "Ethernet4"}}})")), "");
  ASSERT_TRUE(c.srv6.has_value());
  EXPECT_EQ(c.srv6->my_usid, 0x100);
  EXPECT_EQ(c.srv6->block[0], 0xfc);
  EXPECT_EQ(c.srv6->table[0].usid, 0x200);
  // One routing table: a route in another VRF is refused, not put in the default one.
  EXPECT_EQ(error_of(doc_with(R"({"NEIGH": {"Ethernet4|10.0.1.1": {"neigh": "02:00:00:00:00:02"}},
    "STATIC_ROUTE": {"Vrf_red|10.1.0.0/16": {"nexthop": "10.0.1.1", "ifname": "Ethernet4"}}})")),
            "STATIC_ROUTE.Vrf_red|10.1.0.0/16: VRF \"Vrf_red\" is not supported: only the default VRF (key \"PREFIX\" "
            "or \"default|PREFIX\")");
}

// 6. PFC_WD: SONiC's millisecond numbers and microsecond strings; restoration
// defaults to 2 x detection; guarded queues are the pfcwd_sw_enable (or
// pfc_enable) priorities through pfc_to_queue_map; GLOBAL is validated.
TEST(SwitchConfig, PfcWatchdogTable) {
  const SwitchConfig c = parse_switch_config(doc_with(R"({
    "PORT_QOS_MAP": {"global": {"pfc_enable": "3-4", "pfcwd_sw_enable": "3"}, "Ethernet4": {"pfcwd_sw_enable": "3-4"}},
    "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "200"},
               "Ethernet0": {"action": "drop", "detection_time": "200us", "restoration_time": "50us"},
               "Ethernet4": {"action": "forward", "detection_time": "400", "pfc_stat_history": "disable"}}})"));
  ASSERT_EQ(c.pfcwd.size(), 2u);
  EXPECT_EQ(c.pfcwd[0].action, PfcWdAction::kDrop);
  EXPECT_EQ(c.pfcwd[0].detection, TimeNs::from_us(200));
  EXPECT_EQ(c.pfcwd[0].restoration, TimeNs::from_us(50));
  EXPECT_EQ(c.pfcwd[0].queues, 1u << 3);
  EXPECT_EQ(c.pfcwd[1].action, PfcWdAction::kForward);
  EXPECT_EQ(c.pfcwd[1].detection, TimeNs::from_ms(400));
  EXPECT_EQ(c.pfcwd[1].restoration, TimeNs::from_ms(800));
  EXPECT_EQ(c.pfcwd[1].queues, (1u << 3) | (1u << 4));
  // No PFC_WD entry: off.
  EXPECT_EQ(parse_switch_config(config::parse_text(kMinimal)).pfcwd[0].queues, 0u);

  const std::string qos = R"("PORT_QOS_MAP": {"global": {"pfc_enable": "3"}})";
  EXPECT_EQ(error_of(doc_with("{" + qos + R"(, "PFC_WD": {"Ethernet0": {"action": "panic"}}})")),
            "PFC_WD.Ethernet0.action: \"panic\" is not one of \"drop\", \"forward\", \"alert\"");
  EXPECT_EQ(error_of(doc_with("{" + qos + R"(, "PFC_WD": {"Ethernet0": {"detection_time": "0"}}})")),
            "PFC_WD.Ethernet0.detection_time: must be 1us .. 60s (a number is milliseconds)");
  EXPECT_EQ(error_of(doc_with("{" + qos + R"(, "PFC_WD": {"Ethernet0": {"restoration_time": "5 parsecs"}}})")).rfind(
                "PFC_WD.Ethernet0.restoration_time: ", 0),
            0u);
  EXPECT_EQ(error_of(doc_with("{" + qos + R"(, "PFC_WD": {"Ethernet9": {}}})")),
            "PFC_WD.Ethernet9: unknown port \"Ethernet9\" (not in PORT)");
  EXPECT_EQ(error_of(doc_with(R"({"PFC_WD": {"Ethernet0": {}}})")),
            "PFC_WD.Ethernet0: port Ethernet0 has no pfc_enable priority for the watchdog to guard");
  EXPECT_EQ(error_of(doc_with(R"({"PORT_QOS_MAP": {"global": {"pfc_enable": "3", "pfcwd_sw_enable": "3-4"}}})")),
            "PORT_QOS_MAP.global.pfcwd_sw_enable: watchdog priorities of Ethernet0 must be lossless (in pfc_enable)");
  EXPECT_EQ(error_of(doc_with("{" + qos + R"(, "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "5000"}}})")),
            "PFC_WD.GLOBAL.POLL_INTERVAL: 5000 out of range [1, 1000]");
  // POLL_INTERVAL is every port's poll period (GLOBAL may come after the ports);
  // absent: exact (0). A duration string works too.
  EXPECT_EQ(c.pfcwd[0].poll, TimeNs::from_ms(200));
  EXPECT_EQ(c.pfcwd[1].poll, TimeNs::from_ms(200));
  const SwitchConfig late = parse_switch_config(doc_with("{" + qos + R"(, "PFC_WD": {"Ethernet0": {},
    "GLOBAL": {"POLL_INTERVAL": "50us"}}})"));
  EXPECT_EQ(late.pfcwd[0].poll, TimeNs::from_us(50));
  EXPECT_EQ(parse_switch_config(doc_with("{" + qos + R"(, "PFC_WD": {"Ethernet0": {}}})")).pfcwd[0].poll, TimeNs(0));
  EXPECT_EQ(error_of(doc_with("{" + qos + R"(, "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "2s"}}})")),
            "PFC_WD.GLOBAL.POLL_INTERVAL: must be 1us .. 1s (a number is milliseconds)");
  // Storm history is not kept: enable is refused, not ignored.
  EXPECT_EQ(error_of(doc_with("{" + qos + R"(, "PFC_WD": {"Ethernet0": {"pfc_stat_history": "enable"}}})")),
            "PFC_WD.Ethernet0.pfc_stat_history: enable is not supported (no storm history is kept; the watchdog's "
            "counters are in the report and telemetry); use disable or leave it out");
}

// 7. SWITCH_TRIMMING and packet_discard_action trim.
TEST(SwitchConfig, TrimmingTable) {
  const std::string bufs = R"("BUFFER_POOL": {"e": {"type": "egress", "size": "1MiB"}},
    "BUFFER_PROFILE": {"qt": {"pool": "e", "dynamic_th": "0", "packet_discard_action": "trim"}},
    "BUFFER_QUEUE": {"Ethernet0|0": {"profile": "qt"}})";
  const SwitchConfig c = parse_switch_config(doc_with(
      "{" + bufs + R"(, "SWITCH_TRIMMING": {"GLOBAL": {"size": "256", "dscp_value": "11", "queue_index": "6"}}})"));
  ASSERT_TRUE(c.trim.has_value());
  EXPECT_EQ(c.trim->size_bytes, 256u);
  EXPECT_EQ(c.trim->dscp, 11);
  EXPECT_EQ(c.trim->queue, 6);
  EXPECT_FALSE(c.trim->dynamic_queue);
  EXPECT_EQ(c.mmu.profiles[static_cast<size_t>(c.mmu.queue_profile[0][0])].discard, DiscardAction::kTrim);
  EXPECT_TRUE(parse_switch_config(doc_with(R"({"SWITCH_TRIMMING": {"GLOBAL": {"dscp_value": "48", "queue_index": "dynamic"}}})"))
                  .trim->dynamic_queue);

  EXPECT_EQ(error_of(doc_with("{" + bufs + "}")),
            "BUFFER_PROFILE.qt.packet_discard_action: \"trim\" needs a SWITCH_TRIMMING.GLOBAL entry (size, dscp_value, "
            "queue_index)");
  EXPECT_EQ(error_of(doc_with(R"({"SWITCH_TRIMMING": {"GLOBAL": {"dscp_value": "from-tc", "tc_value": "5", "queue_index": "6"}}})")),
            "SWITCH_TRIMMING.GLOBAL.dscp_value: \"from-tc\" (asymmetric DSCP via TC_TO_DSCP_MAP) is not supported; give a "
            "DSCP 0..63");
  EXPECT_EQ(error_of(doc_with(R"({"SWITCH_TRIMMING": {"GLOBAL": {"dscp_value": "64", "queue_index": "6"}}})")),
            "SWITCH_TRIMMING.GLOBAL.dscp_value: 64 out of range [0, 63]");
  EXPECT_EQ(error_of(doc_with(R"({"SWITCH_TRIMMING": {"GLOBAL": {"dscp_value": "8", "queue_index": "8"}}})")),
            "SWITCH_TRIMMING.GLOBAL.queue_index: 8 out of range [0, 7]");
  EXPECT_EQ(error_of(doc_with(R"({"SWITCH_TRIMMING": {"GLOBAL": {"size": "16", "dscp_value": "8", "queue_index": "6"}}})")),
            "SWITCH_TRIMMING.GLOBAL.size: 16 bytes out of range [64, 9216]");
  EXPECT_EQ(error_of(doc_with(R"({"SWITCH_TRIMMING": {"Ethernet0": {}}})")),
            "SWITCH_TRIMMING.Ethernet0: only \"GLOBAL\" is supported");
  EXPECT_EQ(error_of(doc_with(R"({"BUFFER_QUEUE": {"Ethernet4|6": {"profile": "NULL"}},
                                  "SWITCH_TRIMMING": {"GLOBAL": {"dscp_value": "8", "queue_index": "6"}}})")),
            "SWITCH_TRIMMING.GLOBAL.queue_index: queue 6 of Ethernet4 has no buffer (BUFFER_QUEUE profile NULL)");
}

// 8. Inconsistent thresholds are rejected with the path: xon above xoff,
// xoff above the shared headroom pool, a PFC threshold at or below Kmax.
TEST(SwitchConfig, InconsistentLosslessThresholds) {
  const std::string pool = R"("BUFFER_POOL": {"p": {"type": "ingress", "mode": "static", "size": "16777216", "xoff": "100000"}})";
  EXPECT_EQ(error_of(doc_with("{" + pool + R"(, "BUFFER_PROFILE": {"p3": {"pool": "p", "static_th": "500000", "xoff": "50000", "xon": "60000"}}})")),
            "BUFFER_PROFILE.p3.xon: 60000 exceeds xoff 50000 (XON must resume below the XOFF point)");
  EXPECT_EQ(error_of(doc_with("{" + pool + R"(, "BUFFER_PROFILE": {"p3": {"pool": "p", "static_th": "500000", "xoff": "200000"}}})")),
            "BUFFER_PROFILE.p3.xoff: 200000 exceeds the shared headroom pool (BUFFER_POOL.p.xoff 100000)");
  const std::string lossless = "{" + pool + R"(,
    "BUFFER_PROFILE": {"p3": {"pool": "p", "static_th": "300000", "xoff": "50000"}},
    "BUFFER_PG": {"Ethernet0,Ethernet4|3": {"profile": "p3"}},
    "PORT_QOS_MAP": {"global": {"pfc_enable": "3"}},
    "WRED_PROFILE": {"W": {"ecn": "ecn_all", "green_min_threshold": "120000", "green_max_threshold": "360000"}},
    "QUEUE": {"Ethernet4|3": {"wred_profile": "W"}}})";
  EXPECT_EQ(error_of(doc_with(lossless)),
            "QUEUE.Ethernet4|3.wred_profile: PFC threshold 300000 of Ethernet0 PG 3 (profile \"p3\") is not above Kmax "
            "360000: PFC would pause before ECN marks fully");
  // The same with the threshold above Kmax loads.
  std::string ok = lossless;
  ok.replace(ok.find("300000"), 6, "480000");
  EXPECT_EQ(error_of(doc_with(ok)), "no error");
}

// 9. Headroom from the calculator (SONiC dynamic model): a PG profile with
// headroom_type dynamic gets xoff / xon per port from speed, CABLE_LENGTH and
// MTU. With Spectrum-1's 96 B cells the numbers are the reference's worked
// table (shared/reference/switch.md 2.3): 100G 40 m xoff 80896, 300 m 144384.
TEST(SwitchConfig, HeadroomFromCableLength) {
  const SwitchConfig c = parse_switch_config(doc_with(R"({
    "DEVICE_METADATA": {"localhost": {"cell_size": "96"}},
    "BUFFER_POOL": {"ip": {"type": "ingress", "size": "16MiB"}},
    "BUFFER_PROFILE": {"pg_dyn": {"pool": "ip", "size": "0", "dynamic_th": "0", "headroom_type": "dynamic", "xon_offset": "2288"}},
    "BUFFER_PG": {"Ethernet0,Ethernet4|3": {"profile": "pg_dyn"}},
    "CABLE_LENGTH": {"AZURE": {"Ethernet0": "40m", "Ethernet4": "300m"}},
    "LOSSLESS_TRAFFIC_PATTERN": {"AZURE": {"mtu": "1500", "small_packet_percentage": "100"}}})"));
  const ProfileConfig& p0 = c.mmu.profiles[static_cast<size_t>(c.mmu.pg_profile[0][3])];
  const ProfileConfig& p1 = c.mmu.profiles[static_cast<size_t>(c.mmu.pg_profile[1][3])];
  EXPECT_EQ(p0.xoff_bytes, 80896u);
  EXPECT_EQ(p0.xon_bytes, 18432u);
  EXPECT_EQ(p0.xon_offset_bytes, 2288u);
  EXPECT_EQ(p0.name, "pg_lossless_100000_40m_mtu9100_pg_dyn");
  EXPECT_EQ(p1.xoff_bytes, 144384u);
  EXPECT_TRUE(p1.lossless());
  EXPECT_EQ(error_of(doc_with(R"({"CABLE_LENGTH": {"AZURE": {"Ethernet0": "far"}}})")),
            "CABLE_LENGTH.AZURE.Ethernet0: expected a cable length such as \"5m\" (0..100000 m)");
  EXPECT_EQ(error_of(doc_with(R"({"BUFFER_POOL": {"ip": {"type": "ingress", "size": "16MiB"}},
    "BUFFER_PROFILE": {"x": {"pool": "ip", "dynamic_th": "0", "headroom_type": "dynamic", "xoff": "1000"}}})")),
            "BUFFER_PROFILE.x.headroom_type: dynamic headroom is computed; drop xoff / xon");
}

}  // namespace
}  // namespace sf::sw
