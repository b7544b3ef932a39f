// Failure injection in virtual time (docs/switch.md "Port state",
// docs/sf-sim.md "Events"): an ECMP fabric losing one uplink, and a spine
// rebooting.
//   sender0..3 -100G- leaf0 =25G x2= spine0 / spine1 -25G- leaf1 -100G- sink
// leaf0 routes the sink's /24 over an ECMP group of its two uplinks (UDP
// source port entropy), the spines and leaf1 route it on. Four lossless RoCE
// senders (DSCP 26, priority 3, 20 Gb/s each, honouring PFC) overload both
// uplinks, so queues stand on them. The simulator tells both ends of a link
// that goes down; leaf0 flushes the dead uplink's queue (counted link_down),
// takes it out of the ECMP group, and every later frame goes up the live one.
// Every frame is accounted: sent = delivered + switch drops (link_down only)
// + frames the dead link lost (down_dropped). The simulator's partitioned
// engine runs the same fabric with 1, 2 and 4 threads, event for event the
// same. Writes scenario_link_failure_<case>.json.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "tests/scenario/fabric.h"
#include "tests/scenario/scenario.h"

namespace sf::scenario {
namespace {

constexpr size_t kSenders = 4;
constexpr uint64_t kFramesPerSender = 400;
enum Sw : size_t { kLeaf0, kSpine0, kSpine1, kLeaf1 };
constexpr PortId kUp0 = 4, kUp1 = 5;  // leaf0's uplinks
const char* kFile = "config/switch/seed000-static-lossless.json";

std::array<uint8_t, 6> port_mac(size_t sw, PortId p) {
  return {0x02, 0x53, 0x46, static_cast<uint8_t>(sw), 0, static_cast<uint8_t>(p)};  // Fabric::add_switch
}

void add_route(sw::SwitchConfig& c, std::vector<sw::RouteNextHop> nhs) {
  sw::StaticRoute r;
  r.prefix = {10, 0, 3, 0};
  r.depth = 24;
  r.next_hops = std::move(nhs);
  c.routes.push_back(r);
}

struct Result {
  uint64_t sent = 0, delivered = 0, drops = 0, link_down = 0, port_down = 0, down_dropped = 0;
  uint64_t up0_before = 0, up1_before = 0, up0_after = 0, up1_after = 0;
  uint64_t delivered_after = 0;
  uint64_t hash = 0, events = 0;
  TimeNs end;
  std::vector<sim::LinkId> uplinks;
  std::vector<sim::LinkId> links;  // every switch-switch link
};

// `fail(fab, uplink links)` schedules the failure; `t_fail` is when it starts.
template <class Fail>
Result run(const std::string& name, TimeNs t_fail, TimeNs t_after, Fail&& fail, uint32_t threads = 0) {
  Fabric fab(11, threads);
  const wire::MacAddr sink = host_mac(kSenders);
  sw::SwitchConfig leaf0 = sw::parse_switch_config(sized_doc(kFile, {100, 100, 100, 100, 25, 25}));
  add_route(leaf0, {{kUp0, port_mac(kSpine0, 0)}, {kUp1, port_mac(kSpine1, 0)}});
  fab.add_switch("leaf0", std::move(leaf0));
  for (size_t s : {kSpine0, kSpine1}) {
    sw::SwitchConfig c = sw::parse_switch_config(sized_doc(kFile, {25, 25}));
    add_route(c, {{1, port_mac(kLeaf1, static_cast<PortId>(s - kSpine0))}});
    fab.add_switch(s == kSpine0 ? "spine0" : "spine1", std::move(c));
  }
  sw::SwitchConfig leaf1 = sw::parse_switch_config(sized_doc(kFile, {25, 25, 100}));
  add_route(leaf1, {{2, sink.bytes}});
  fab.add_switch("leaf1", std::move(leaf1));

  const TimeNs delay = TimeNs::from_us(1);
  for (size_t i = 0; i < kSenders; ++i) {
    SenderConfig sc;
    sc.src_mac = host_mac(i);
    sc.src_ip = host_ip(i);
    sc.dst_mac = wire::MacAddr{port_mac(kLeaf0, static_cast<PortId>(i))};  // the router MAC of its leaf port
    sc.dst_ip = host_ip(kSenders);
    sc.udp_src_port = static_cast<uint16_t>(0xC000 + 7 * i);
    sc.budget_bytes = kFramesPerSender * 1098;
    sc.rate = BitRate::gbps(20);
    sc.link_speed = BitRate::gbps(100);
    fab.add_sender("sender" + std::to_string(i), sc);
    fab.link(kLeaf0, static_cast<PortId>(i), fab.sender_id(i), 0, delay);
  }
  fab.add_sink("sink");
  Result r;
  r.uplinks.push_back(fab.link(kLeaf0, kUp0, fab.switch_id(kSpine0), 0, delay));
  r.uplinks.push_back(fab.link(kLeaf0, kUp1, fab.switch_id(kSpine1), 0, delay));
  r.links = r.uplinks;
  r.links.push_back(fab.link(kSpine0, 1, fab.switch_id(kLeaf1), 0, delay));
  r.links.push_back(fab.link(kSpine1, 1, fab.switch_id(kLeaf1), 1, delay));
  fab.link(kLeaf1, 2, fab.sink_id(0), 0, delay);
  fail(fab, r.uplinks);

  auto tx = [&](PortId p) { return fab.sw(kLeaf0).counters(p).tx_packets; };
  fab.sim().run_until(t_fail);
  r.up0_before = tx(kUp0);
  r.up1_before = tx(kUp1);
  fab.sim().run_until(t_after);
  const uint64_t delivered_at = fab.delivered_frames();
  const uint64_t up0_at = tx(kUp0), up1_at = tx(kUp1);
  for (TimeNs t = t_after; t <= TimeNs::from_ms(5); t += TimeNs::from_us(10)) {
    fab.sim().run_until(t);
    uint64_t lost = 0;
    for (sim::LinkId l : r.links) lost += fab.sim().total_stats(l).down_dropped_pkts;
    if (fab.senders_done() && fab.delivered_frames() + fab.switch_drops() + lost == fab.sent_frames()) break;
  }
  r.end = fab.sim().now();
  r.up0_after = tx(kUp0) - up0_at;
  r.up1_after = tx(kUp1) - up1_at;
  r.delivered_after = fab.delivered_frames() - delivered_at;
  r.sent = fab.sent_frames();
  r.delivered = fab.delivered_frames();
  r.drops = fab.switch_drops();
  r.link_down = fab.drops(sw::DropCause::kLinkDown);
  r.port_down = fab.drops(sw::DropCause::kPortDown);
  for (sim::LinkId l : r.links) r.down_dropped += fab.sim().total_stats(l).down_dropped_pkts;
  r.hash = fab.sim().trace_hash();
  r.events = fab.sim().events_processed();
  const config::Json j = {{"sent_frames", r.sent},          {"delivered_frames", r.delivered},
                          {"switch_drops", r.drops},        {"link_down_drops", r.link_down},
                          {"port_down_drops", r.port_down}, {"link_down_dropped_on_wire", r.down_dropped},
                          {"uplink0_tx_before", r.up0_before}, {"uplink1_tx_before", r.up1_before},
                          {"uplink0_tx_after", r.up0_after}, {"uplink1_tx_after", r.up1_after},
                          {"end_us", r.end.us()}};
  std::printf("[%s] %s\n  result: %s\n", name.c_str(), j.dump().c_str(), write_result(name, j).c_str());
  return r;
}

// Uplink 1 goes down at 60 us for good: its queue is flushed (counted), the
// flows move to uplink 0, every frame is accounted for.
TEST(LinkFailure, EcmpUplinkDownMovesTraffic) {
  const Result r = run("link_failure_uplink_down", TimeNs::from_us(60), TimeNs::from_us(61),
                       [](Fabric& fab, const std::vector<sim::LinkId>& up) {
                         fab.sim().set_link_state_at(up[1], TimeNs::from_us(60), false);
                       });
  EXPECT_GT(r.up0_before, 0u);  // both uplinks carried flows before
  EXPECT_GT(r.up1_before, 0u);
  EXPECT_EQ(r.up1_after, 0u);   // nothing more up the dead one
  EXPECT_GT(r.up0_after, 0u);
  EXPECT_GT(r.delivered_after, 0u);
  EXPECT_GT(r.link_down, 0u);   // its standing queue, flushed
  EXPECT_EQ(r.drops, r.link_down);  // lossless otherwise; nothing routed to the dead port
  EXPECT_EQ(r.sent, kSenders * kFramesPerSender);
  EXPECT_EQ(r.sent, r.delivered + r.drops + r.down_dropped);
}

// Spine1 reboots at 60 us for 100 us: leaf0 routes around it meanwhile,
// uses both uplinks again afterwards; every frame accounted.
TEST(LinkFailure, SpineRebootRoutesAroundThenBack) {
  const Result r = run("link_failure_spine_reboot", TimeNs::from_us(60), TimeNs::from_us(170),
                       [](Fabric& fab, const std::vector<sim::LinkId>&) {
                         fab.sim().reboot_node(fab.switch_id(kSpine1), TimeNs::from_us(60), TimeNs::from_us(100));
                       });
  EXPECT_GT(r.up1_before, 0u);
  EXPECT_GT(r.up1_after, 0u);  // back in the group after the reboot
  EXPECT_GT(r.up0_after, 0u);
  EXPECT_EQ(r.drops, r.link_down);
  EXPECT_EQ(r.sent, kSenders * kFramesPerSender);
  EXPECT_EQ(r.sent, r.delivered + r.drops + r.down_dropped);
}

// The partitioned engine: an uplink down and the other spine rebooting on
// this fabric of four switches, four senders and a sink, run with 1, 2 and 4
// threads (nodes spread over the partitions: every link joins two): the same
// run, event for event, and every frame accounted in each.
TEST(LinkFailure, PartitionedEngineSameRunWithAnyThreads) {
  const auto faults = [](Fabric& fab, const std::vector<sim::LinkId>& up) {
    fab.sim().set_link_state_at(up[0], TimeNs::from_us(40), false);
    fab.sim().set_link_state_at(up[0], TimeNs::from_us(90), true);
    fab.sim().reboot_node(fab.switch_id(kSpine1), TimeNs::from_us(60), TimeNs::from_us(100));
  };
  std::vector<Result> runs;
  for (uint32_t t : {1u, 2u, 4u}) {
    runs.push_back(run("link_failure_partitioned_" + std::to_string(t), TimeNs::from_us(60), TimeNs::from_us(170),
                       faults, t));
  }
  const Result& one = runs[0];
  EXPECT_EQ(one.sent, kSenders * kFramesPerSender);
  EXPECT_EQ(one.sent, one.delivered + one.drops + one.down_dropped);
  EXPECT_GT(one.link_down, 0u);
  EXPECT_GT(one.up0_after, 0u);
  EXPECT_GT(one.up1_after, 0u);
  for (size_t i = 1; i < runs.size(); ++i) {
    const Result& r = runs[i];
    EXPECT_EQ(r.hash, one.hash) << i;
    EXPECT_EQ(r.events, one.events) << i;
    EXPECT_EQ(std::tie(r.sent, r.delivered, r.drops, r.link_down, r.port_down, r.down_dropped, r.up0_before,
                       r.up1_before, r.up0_after, r.up1_after, r.end),
              std::tie(one.sent, one.delivered, one.drops, one.link_down, one.port_down, one.down_dropped,
                       one.up0_before, one.up1_before, one.up0_after, one.up1_after, one.end))
        << i;
  }
}

}  // namespace
}  // namespace sf::scenario
