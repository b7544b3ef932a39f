// CREDIT_FC table: a good table loads to the CreditFcConfig it describes, and
// every inconsistency is refused naming the JSON path (buffer under one MTU
// per VL, threshold over the pool, unknown VL in the SL->VL map or the
// arbitration table, zero weights everywhere, a used VL with weight 0, PFC on
// the same port, queues shared by VLs, buffers over the MMU, unknown ports).
#include <gtest/gtest.h>

#include <string>

#include "common/config/config_error.h"
#include "common/config/json_loader.h"
#include "switch/config/switch_config.h"
#include "tests/support/config_errors.h"

namespace sf::sw {
namespace {

constexpr const char* kPorts = R"({
  "PORT": {"Ethernet0": {"devargs": "net_ring0", "speed": 100},
           "Ethernet4": {"devargs": "net_ring1", "speed": 100},
           "Ethernet8": {"devargs": "net_ring2", "speed": 100}}
})";

config::Json doc_with(const std::string& extra) { return sf::test::merged_doc(kPorts, extra); }

// CREDIT_FC with one entry for Ethernet0,Ethernet4 whose body is `body`.
config::Json credit(const std::string& body) {
  return doc_with(R"({"CREDIT_FC": {"Ethernet0,Ethernet4": {)" + body + "}}}");
}

std::string error_of(const config::Json& d) { return sf::test::config_error_of([&] { parse_switch_config(d); }); }

// 1. Seed 003's case: MTU 8 KiB, 1 MiB per VL (128 credits), threshold 8,
// 4 data VLs + management VL15, SL 3 -> VL 1, SL 7 -> VL 15, weights.
// Expect: both listed ports in credit mode, the third not; defaults filled.
TEST(CreditFcConfig, SeedCaseLoads) {
  const SwitchConfig c = parse_switch_config(credit(R"(
      "mtu": "8192", "vls": 4, "management_vl": true, "vl_buffer": "1MiB", "update_threshold": 8,
      "sl_to_vl": {"3": 1, "7": "15"}, "vl_arbitration": {"0": 1, "1": 60, "2": 1, "3": 1, "15": 4})"));
  ASSERT_EQ(c.credit_fc.size(), 3u);
  ASSERT_TRUE(c.credit_fc[0] && c.credit_fc[1]);
  EXPECT_FALSE(c.credit_fc[2]);
  const CreditFcConfig& f = *c.credit_fc[1];
  EXPECT_EQ(f.mtu_bytes, 8192u);
  EXPECT_EQ(f.vl_mask, 0b1000'0000'0000'1111);
  EXPECT_EQ(f.credits(1), 128u);
  EXPECT_EQ(f.credits(15), 128u);
  EXPECT_EQ(f.credits(4), 0u);
  EXPECT_EQ(f.update_threshold, 8u);
  EXPECT_EQ(f.sl_to_vl[3], 1);
  EXPECT_EQ(f.sl_to_vl[7], 15);
  EXPECT_EQ(f.sl_to_vl[0], 0);  // unlisted SLs: VL 0
  EXPECT_EQ(f.vl_weight[1], 60u);
  EXPECT_EQ(f.vl_weight[15], 4u);
}

// 1b. The example of docs/config-reference.md "CREDIT_FC" loads.
TEST(CreditFcConfig, DocExampleLoads) {
  const SwitchConfig c = parse_switch_config(doc_with(R"({
    "CREDIT_FC": {"Ethernet0,Ethernet4": {"mtu": 4096, "vls": 4, "management_vl": true,
                                          "vl_buffer": "64KiB", "update_threshold": 2,
                                          "sl_to_vl": {"3": 1, "7": 15},
                                          "vl_arbitration": {"0": 1, "1": 8, "2": 1, "3": 1, "15": 1}}}})"));
  ASSERT_TRUE(c.credit_fc[0]);
  EXPECT_EQ(c.credit_fc[0]->credits(1), 16u);
  EXPECT_EQ(c.credit_fc[0]->vl_weight[1], 8u);
}

// 2. Defaults: MTU 4096, one VL, 1 MiB, threshold 1, weight 1.
TEST(CreditFcConfig, Defaults) {
  const SwitchConfig c = parse_switch_config(credit(""));
  const CreditFcConfig& f = *c.credit_fc[0];
  EXPECT_EQ(f.mtu_bytes, 4096u);
  EXPECT_EQ(f.vl_mask, 1u);
  EXPECT_EQ(f.credits(0), 256u);
  EXPECT_EQ(f.update_threshold, 1u);
  EXPECT_EQ(f.vl_weight[0], 1u);
  EXPECT_EQ(f.vl_weight[1], 0u);
  // No table: no port in credit mode.
  EXPECT_FALSE(parse_switch_config(doc_with("{}")).credit_fc[0]);
}

// 3. Inconsistent tables, each refused at its path.
TEST(CreditFcConfig, InconsistentTablesRejectedWithPath) {
  const std::string at = "CREDIT_FC.Ethernet0,Ethernet4";
  // Buffer smaller than one MTU per VL.
  EXPECT_EQ(error_of(credit(R"("mtu": 8192, "vl_buffer": 4096)")),
            at + ".vl_buffer: 4096 bytes per VL hold less than one MTU (8192 bytes = one credit)");
  // Threshold larger than the pool.
  EXPECT_EQ(error_of(credit(R"("mtu": 4096, "vl_buffer": "64KiB", "update_threshold": 17)")),
            at + ".update_threshold: 17 exceeds the pool of 16 credits per VL (vl_buffer / mtu): the receiver "
                 "would never advertise");
  // Unknown VL in the SL->VL map (only VLs 0-1 exist), and VL 15 without management_vl.
  EXPECT_EQ(error_of(credit(R"("vls": 2, "sl_to_vl": {"3": 5})")),
            at + ".sl_to_vl.3: unknown VL 5 (this port uses VLs 0,1; see vls and management_vl)");
  EXPECT_EQ(error_of(credit(R"("sl_to_vl": {"7": 15})")),
            at + ".sl_to_vl.7: unknown VL 15 (this port uses VLs 0; see vls and management_vl)");
  EXPECT_EQ(error_of(credit(R"("sl_to_vl": {"9": 0})")), at + ".sl_to_vl.9: key must be a service level (traffic class) 0..7");
  // Zero weights everywhere.
  EXPECT_EQ(error_of(credit(R"("vls": 2, "vl_arbitration": {"0": 0, "1": "0"})")),
            at + ".vl_arbitration: every weight is zero: no VL could ever send");
  // A VL that carries an SL but has weight 0.
  EXPECT_EQ(error_of(credit(R"("vls": 2, "sl_to_vl": {"3": 1}, "vl_arbitration": {"0": 1})")),
            at + ".vl_arbitration: VL 1 carries SL 3 but has weight 0: its packets would never leave");
  // Unknown VL in the arbitration table; weight out of range.
  EXPECT_EQ(error_of(credit(R"("vl_arbitration": {"3": 1})")), at + ".vl_arbitration.3: unknown VL 3 (this port uses VLs 0)");
  EXPECT_EQ(error_of(credit(R"("vl_arbitration": {"0": 256})")), at + ".vl_arbitration.0: 256 out of range [0, 255]");
  // Unknown key, unknown port, a port in two entries.
  EXPECT_EQ(error_of(credit(R"("threshold": 2)")), at + ": unknown key \"threshold\"");
  EXPECT_EQ(error_of(doc_with(R"({"CREDIT_FC": {"Ethernet9": {}}})")),
            "CREDIT_FC.Ethernet9: unknown port \"Ethernet9\" (not in PORT)");
  EXPECT_EQ(error_of(doc_with(R"({"CREDIT_FC": {"Ethernet0": {}, "Ethernet4,Ethernet0": {}}})")),
            "CREDIT_FC.Ethernet4,Ethernet0: port \"Ethernet0\" is already in another CREDIT_FC entry");
  // A PORT-mtu frame (9100 + 18 bytes) that needs more credits than the pool:
  // 2 credits of 4096 (+ 128) bytes, the frame takes 3.
  EXPECT_EQ(error_of(credit(R"("mtu": 4096, "vl_buffer": 8192)")),
            at + ".vl_buffer: port \"Ethernet0\": 2 credits per VL, but a 9118-byte frame (PORT mtu + 18) takes 3 "
                 "(one per mtu + 128 bytes)");
  // MTU out of range, vls out of range.
  EXPECT_EQ(error_of(credit(R"("mtu": 100)")), at + ".mtu: 100 out of range [256, 65536]");
  EXPECT_EQ(error_of(credit(R"("vls": 16)")), at + ".vls: 16 out of range [1, 15]");
}

// 4. Cross-table checks: PFC on a credit port; two TCs of one queue on
// different VLs; credit buffers over the MMU.
TEST(CreditFcConfig, CrossTableChecks) {
  config::Json d = credit("");
  d["PORT_QOS_MAP"] = config::parse_text(R"({"Ethernet4": {"pfc_enable": "3"}})");
  EXPECT_EQ(error_of(d), "CREDIT_FC.Ethernet0,Ethernet4: port \"Ethernet4\" has PFC enabled (PORT_QOS_MAP "
                         "pfc_enable); credit FC and PFC are alternative link modes");
  d = credit(R"("vls": 2, "sl_to_vl": {"3": 1})");
  d["TC_TO_QUEUE_MAP"] = config::parse_text(R"({"q": {"3": "0"}})");
  d["PORT_QOS_MAP"] = config::parse_text(R"({"global": {"tc_to_queue_map": "q"}})");
  EXPECT_EQ(error_of(d), "CREDIT_FC.Ethernet0,Ethernet4.sl_to_vl: port \"Ethernet0\": traffic classes of queue 0 "
                         "map to VLs 0 and 1");
  d = credit(R"("vls": 15, "vl_buffer": "2MiB")");
  d["DEVICE_METADATA"] = config::parse_text(R"({"localhost": {"mmu_size": "32MiB"}})");
  EXPECT_EQ(error_of(d), "CREDIT_FC.Ethernet0,Ethernet4.vl_buffer: credit buffers of the CREDIT_FC ports total "
                         "62914560 bytes, more than mmu_size 33554432");
}

}  // namespace
}  // namespace sf::sw
