// Switch config loader: the shipped profiles load to the seed's numbers, and
// bad documents fail naming the JSON path and the reason.
#include "switch/config/switch_config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "common/config/config_error.h"
#include "common/config/json_loader.h"

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
config::Json doc_with(const std::string& extra) {
  config::Json d = config::parse_text(kMinimal);
  const config::Json e = config::parse_text(extra);
  for (auto it = e.begin(); it != e.end(); ++it) d[it.key()] = it.value();
  return d;
}

std::string error_of(const config::Json& d) {
  try {
    parse_switch_config(d);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

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
  EXPECT_EQ(error_of(doc_with(R"({"QUEUE": {"Ethernet0|3": {"scheduler": "s9"}}})")),
            "QUEUE.Ethernet0|3.scheduler: unknown SCHEDULER \"s9\"");
  EXPECT_EQ(error_of(doc_with(R"({"SCHEDULER": {"s": {"type": "DWRR", "weight": "101"}}})")),
            "SCHEDULER.s.weight: 101 out of range [1, 100]");
  EXPECT_EQ(error_of(doc_with(R"({"SCHEDULER": {"s": {"type": "DWRR", "wieght": "10"}}})")).rfind("SCHEDULER.s: unknown key \"wieght\"", 0), 0u);
  EXPECT_EQ(error_of(doc_with(R"({"STATIC_ROUTE": {"10.0.0.0/8": {"nexthop": "10.0.0.1", "ifname": "Ethernet0"}}})")),
            "STATIC_ROUTE.10.0.0.0/8.nexthop: no NEIGH entry for 10.0.0.1 on Ethernet0");
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
  ASSERT_TRUE(c.srv6.has_value());
  EXPECT_EQ(c.srv6->my_usid, 0x100);
  EXPECT_EQ(c.srv6->block[0], 0xfc);
  EXPECT_EQ(c.srv6->table[0].usid, 0x200);
}

}  // namespace
}  // namespace sf::sw
