// Topology: good documents round trip; bad ones (including cross references)
// name the path and the reason.
#include "common/config/topology_config.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/config/json_loader.h"
#include "tests/support/config_errors.h"

namespace sf::config {
namespace {

TopologyConfig parse(std::string_view text) {
  const Json doc = parse_text(text);
  ConfigNode root(doc, "");
  TopologyConfig t = parse_topology(root);
  root.finish();
  return t;
}

std::string error_of(std::string_view text) { return sf::test::config_error_of([&] { parse(text); }); }

constexpr const char* kGood = R"({
  "seed": 42,
  "nodes": {
    "h0": {"kind": "nic", "ports": 1},
    "sw0": {"kind": "switch", "ports": 4, "config": {"profile": "lossless"}},
    "h1": {"kind": "nic", "ports": 2}
  },
  "links": [
    {"a": "h0:0", "b": "sw0:3", "rate_gbps": 100, "delay_ns": 1000, "loss": 0.001,
     "events": [{"at_ns": 1000000, "state": "down"}, {"at_ns": 2000000, "state": "up"}]},
    {"a": "sw0:0", "b": "h1:1", "rate_gbps": 2.5, "corrupt": 0.5}
  ]
})";

TEST(TopologyConfig, GoodDocumentRoundTrips) {
  const TopologyConfig t = parse(kGood);
  EXPECT_EQ(t.seed, 42u);
  ASSERT_EQ(t.nodes.size(), 3u);
  EXPECT_EQ(t.nodes[0].name, "h0");
  EXPECT_EQ(t.nodes[1].name, "sw0");
  EXPECT_EQ(t.nodes[1].kind, "switch");
  EXPECT_EQ(t.nodes[1].num_ports, 4);
  EXPECT_EQ(t.nodes[1].config["profile"], "lossless");
  EXPECT_TRUE(t.nodes[0].config.is_null());
  EXPECT_EQ(t.find_node("h1"), 2);
  EXPECT_EQ(t.find_node("h9"), -1);
  ASSERT_EQ(t.links.size(), 2u);
  const LinkConfig& l0 = t.links[0];
  EXPECT_EQ(l0.a.node, 0u);
  EXPECT_EQ(l0.a.port, 0);
  EXPECT_EQ(l0.b.node, 1u);
  EXPECT_EQ(l0.b.port, 3);
  EXPECT_EQ(l0.rate, BitRate::gbps(100));
  EXPECT_EQ(l0.delay, TimeNs(1000));
  EXPECT_DOUBLE_EQ(l0.loss, 0.001);
  EXPECT_DOUBLE_EQ(l0.corrupt, 0.0);
  ASSERT_EQ(l0.events.size(), 2u);
  EXPECT_EQ(l0.events[0].at, TimeNs::from_ms(1));
  EXPECT_FALSE(l0.events[0].up);
  EXPECT_EQ(l0.events[1].at, TimeNs::from_ms(2));
  EXPECT_TRUE(l0.events[1].up);
  const LinkConfig& l1 = t.links[1];
  EXPECT_EQ(l1.rate, BitRate(2500000000ull));
  EXPECT_EQ(l1.delay, TimeNs(0));
  EXPECT_EQ(l1.b.node, 2u);
  EXPECT_EQ(l1.b.port, 1);
  EXPECT_DOUBLE_EQ(l1.corrupt, 0.5);
}

TEST(TopologyConfig, DefaultsAndNoLinks) {
  const TopologyConfig t = parse(R"({"nodes": {"a": {"kind": "x", "ports": 1}}})");
  EXPECT_EQ(t.seed, 1u);
  EXPECT_TRUE(t.links.empty());
}

TEST(TopologyConfig, BadDocumentsNamePathAndReason) {
  // Two nodes (h0 one port, sw two ports) and one link slot to fill in.
  const std::string pre = R"({"nodes": {"h0": {"kind": "nic", "ports": 1}, "sw": {"kind": "switch", "ports": 2}},
                             "links": [)";
  struct Case {
    std::string json;
    const char* error;
  };
  const Case cases[] = {
      {R"({"links": []})", "missing required key \"nodes\""},
      {R"({"nodes": {}})", "nodes: at least one node is required"},
      {R"({"nodes": []})", "nodes: expected object, got array"},
      {R"({"nodes": {"a": {"kind": "x"}}})", "nodes.a: missing required key \"ports\""},
      {R"({"nodes": {"a": {"kind": "x", "ports": 0}}})", "nodes.a.ports: 0 out of range [1, 1024]"},
      {R"({"nodes": {"a": {"kind": "", "ports": 1}}})", "nodes.a.kind: must not be empty"},
      {R"({"nodes": {"a:b": {"kind": "x", "ports": 1}}})", "nodes.a:b: node name must not contain ':'"},
      {R"({"nodes": {"a": {"kind": "x", "ports": 1, "config": 3}}})", "nodes.a.config: expected object, got integer"},
      {R"({"nodes": {"a": {"kind": "x", "prots": 1}}})", "nodes.a: missing required key \"ports\""},
      {R"({"nodes": {"a": {"kind": "x", "ports": 1, "prots": 1}}})",
       "nodes.a: unknown key \"prots\" (did you mean \"ports\"?)"},
      {R"({"seed": -1, "nodes": {"a": {"kind": "x", "ports": 1}}})",
       "seed: -1 out of range [0, 18446744073709551615]"},
      {R"({"nodes": {"a": {"kind": "x", "ports": 1}}, "links": {}})", "links: expected array, got object"},
      {R"({"nodes": {"a": {"kind": "x", "ports": 1}}, "extra": 1})", "unknown key \"extra\""},
      {pre + R"({"a": "h9:0", "b": "sw:0", "rate_gbps": 100}]})", "links[0].a: unknown node \"h9\""},
      {pre + R"({"a": "h0:0", "b": "sw:2", "rate_gbps": 100}]})",
       "links[0].b: port 2 out of range for node \"sw\" (ports 0..1)"},
      {pre + R"({"a": "h0", "b": "sw:0", "rate_gbps": 100}]})", "links[0].a: \"h0\" is not \"node:port\""},
      {pre + R"({"a": "h0:x", "b": "sw:0", "rate_gbps": 100}]})", "links[0].a: \"h0:x\": port is not a number"},
      {pre + R"({"a": "h0:-1", "b": "sw:0", "rate_gbps": 100}]})", "links[0].a: \"h0:-1\": port is not a number"},
      {pre + R"({"a": 5, "b": "sw:0", "rate_gbps": 100}]})", "links[0].a: expected string, got integer"},
      {pre + R"({"a": "h0:0", "b": "sw:0", "rate_gbps": 100}, {"a": "sw:1", "b": "h0:0", "rate_gbps": 100}]})",
       "links[1].b: port h0:0 already used by links[0].a"},
      {pre + R"({"a": "sw:1", "b": "sw:1", "rate_gbps": 100}]})", "links[0].b: port sw:1 already used by links[0].a"},
      {pre + R"({"a": "h0:0", "b": "sw:0"}]})", "links[0]: missing required key \"rate_gbps\""},
      {pre + R"({"a": "h0:0", "b": "sw:0", "rate_gbps": 0}]})", "links[0].rate_gbps: 0 out of range (0, 1600]"},
      {pre + R"({"a": "h0:0", "b": "sw:0", "rate_gbps": "100G"}]})",
       "links[0].rate_gbps: expected number, got string"},
      {pre + R"({"a": "h0:0", "b": "sw:0", "rate_gbps": 10, "delay_ns": -5}]})",
       "links[0].delay_ns: -5 out of range [0, 1000000000000]"},
      {pre + R"({"a": "h0:0", "b": "sw:0", "rate_gbps": 10, "delay_ns": 1.5}]})",
       "links[0].delay_ns: expected integer, got number 1.5"},
      {pre + R"({"a": "h0:0", "b": "sw:0", "rate_gbps": 10, "loss": 1.5}]})", "links[0].loss: 1.5 out of range [0, 1]"},
      {pre + R"({"a": "h0:0", "b": "sw:0", "rate_gbps": 10, "corrupt": -0.1}]})",
       "links[0].corrupt: -0.1 out of range [0, 1]"},
      {pre + R"({"a": "h0:0", "b": "sw:0", "rate_gbps": 10, "lost": 0.1}]})",
       "links[0]: unknown key \"lost\" (did you mean \"loss\"?)"},
      {pre + R"({"a": "h0:0", "b": "sw:0", "rate_gbps": 10, "events": [{"at_ns": 5, "state": "off"}]}]})",
       "links[0].events[0].state: \"off\" is not one of \"up\", \"down\""},
      {pre + R"({"a": "h0:0", "b": "sw:0", "rate_gbps": 10, "events": [{"at_ns": 5, "state": "down"},
                                                                        {"at_ns": 5, "state": "up"}]}]})",
       "links[0].events[1].at_ns: 5 is not after the previous event at 5"},
      {pre + R"({"a": "h0:0", "b": "sw:0", "rate_gbps": 10, "events": [{"state": "down"}]}]})",
       "links[0].events[0]: missing required key \"at_ns\""},
      {pre + R"({"a": "h0:0", "b": "sw:0", "rate_gbps": 10, "events": [{"at_ns": 1, "state": "up", "x": 1}]}]})",
       "links[0].events[0]: unknown key \"x\""},
      {pre + R"(3]})", "links[0]: expected object, got integer"},
  };
  for (const Case& c : cases) EXPECT_EQ(error_of(c.json), c.error) << c.json;
}

TEST(TopologyConfig, LoadFileRejectsUnknownTopLevelKeys) {
  const std::string path = testing::TempDir() + "sf_topology_test.json";
  {
    std::ofstream out(path);
    out << kGood;
  }
  EXPECT_EQ(load_topology_file(path).links.size(), 2u);
  {
    std::ofstream out(path);
    out << R"({"nodes": {"a": {"kind": "x", "ports": 1}}, "scenario": {}})";
  }
  try {
    load_topology_file(path);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "unknown key \"scenario\"");
  }
}

}  // namespace
}  // namespace sf::config
