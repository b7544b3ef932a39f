// Simulator fault injection (docs/sf-sim.md "Events"): endpoints told of link
// changes, flapping on schedule, silent blackholes of a port and a node, a
// link's loss rate changed at t, a reboot (links down, reset(), links up),
// bad arguments refused, and the whole run deterministic for a seed.
#include <gtest/gtest.h>
#include <rte_mempool.h>

#include <stdexcept>
#include <vector>

#include "common/sim/simulator.h"
#include "tests/support/eal_env.h"
#include "tests/unit/sim/sim_test_util.h"
#include "tests/unit/sim/test_nodes.h"

namespace sf::sim {
namespace {

using test::GeneratorNode;
using test::SinkNode;

using test::link;

// Records the link changes and resets it is told of; sends `count` frames.
class WatchNode : public GeneratorNode {
 public:
  using GeneratorNode::GeneratorNode;
  struct Change {
    TimeNs at;
    bool up;
  };
  void set_port_link(PortId, bool up, TimeNs now) override { changes.push_back({now, up}); }
  void reset(TimeNs now) override { resets.push_back(now); }
  std::vector<Change> changes;
  std::vector<TimeNs> resets;
};

using SimFaultTest = test::PoolBalanceTest;

// Flap 10..50 us, period 10 us, down 3 us: the endpoints are told of every
// change at its time (both ends), the link is up at the end, and nothing is
// delivered while down.
TEST_F(SimFaultTest, FlapScheduleAndEndpointsTold) {
  WatchNode gen(pool(), 1000, 200);
  WatchNode peer(pool(), 0, 200);
  Simulator sim;
  const LinkId l = sim.connect(sim.add_node(gen, "gen"), 0, sim.add_node(peer, "peer"), 0, link(10, 500));
  sim.flap_link(l, TimeNs::from_us(10), TimeNs::from_us(50), TimeNs::from_us(10), TimeNs::from_us(3));
  sim.run_until(TimeNs::from_us(11));
  EXPECT_FALSE(sim.link_up(l));
  sim.run_until(TimeNs::from_us(14));
  EXPECT_TRUE(sim.link_up(l));
  sim.run_until(TimeNs::from_us(400));
  EXPECT_TRUE(sim.link_up(l));
  ASSERT_EQ(gen.changes.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const int64_t k = static_cast<int64_t>(i / 2);
    const TimeNs want = TimeNs::from_us(10 + 10 * k + (i % 2 == 0 ? 0 : 3));
    EXPECT_EQ(gen.changes[i].at, want) << i;
    EXPECT_EQ(gen.changes[i].up, i % 2 == 1) << i;
  }
  EXPECT_EQ(peer.changes.size(), 8u);
  const LinkStats& st = sim.stats(l, LinkDir::kAtoB);
  EXPECT_GT(st.down_dropped_pkts, 0u);
  EXPECT_EQ(st.tx_pkts, st.delivered_pkts + st.down_dropped_pkts);
}

// A port blackhole: the link stays up, nobody is told, frames both ways are
// counted as blackholed for its duration only.
TEST_F(SimFaultTest, BlackholePortSilent) {
  WatchNode gen(pool(), 200, 1000);
  SinkNode sink;
  Simulator sim;
  const NodeId g = sim.add_node(gen, "gen");
  const NodeId s = sim.add_node(sink, "sink");
  const LinkId l = sim.connect(g, 0, s, 0, link(10, 1000));
  sim.blackhole_port(s, 0, TimeNs::from_us(20), TimeNs::from_us(60));
  sim.run_until(TimeNs::from_us(30));
  EXPECT_TRUE(sim.blackholed(l, LinkDir::kAtoB));
  EXPECT_TRUE(sim.blackholed(l, LinkDir::kBtoA));
  EXPECT_TRUE(sim.link_up(l));
  sim.run_until(TimeNs::from_us(500));
  EXPECT_FALSE(sim.blackholed(l, LinkDir::kAtoB));
  EXPECT_TRUE(gen.changes.empty());
  const LinkStats& st = sim.stats(l, LinkDir::kAtoB);
  EXPECT_EQ(st.tx_pkts, 200u);
  // 40 us at 820 ns a frame: ~48 frames.
  EXPECT_NEAR(static_cast<double>(st.blackholed_pkts), 40000.0 / 820, 2);
  EXPECT_EQ(st.delivered_pkts + st.blackholed_pkts, 200u);
  for (const auto& a : sink.arrivals) {
    EXPECT_TRUE(a.at < TimeNs::from_us(20) + TimeNs(1000 + 820) || a.at >= TimeNs::from_us(60)) << a.at.ns();
  }
}

// A node blackhole covers every connected port; overlapping blackholes nest.
TEST_F(SimFaultTest, BlackholeNodeAndOverlap) {
  WatchNode a(pool(), 0, 100);
  test::EchoNode sw(2);
  WatchNode b(pool(), 0, 100);
  Simulator sim;
  const NodeId na = sim.add_node(a, "a");
  const NodeId ns = sim.add_node(sw, "sw");
  const NodeId nb = sim.add_node(b, "b");
  const LinkId l0 = sim.connect(na, 0, ns, 0, link(10, 100));
  const LinkId l1 = sim.connect(ns, 1, nb, 0, link(10, 100));
  sim.blackhole_node(ns, TimeNs::from_us(1), TimeNs::from_us(10));
  sim.blackhole_port(ns, 1, TimeNs::from_us(5), TimeNs::max());
  sim.run_until(TimeNs::from_us(6));
  EXPECT_TRUE(sim.blackholed(l0, LinkDir::kAtoB));
  EXPECT_TRUE(sim.blackholed(l1, LinkDir::kAtoB));
  sim.run_until(TimeNs::from_us(20));
  EXPECT_FALSE(sim.blackholed(l0, LinkDir::kAtoB));
  EXPECT_TRUE(sim.blackholed(l1, LinkDir::kBtoA));  // the port one is for good
  EXPECT_THROW(sim.blackhole_node(7, TimeNs::from_us(30), TimeNs::from_us(40)), std::invalid_argument);
}

// Loss changed at t: none before, all after (rate 1), none again after 0.
TEST_F(SimFaultTest, LossRateChangedAtTime) {
  GeneratorNode gen(pool(), 300, 1000);
  SinkNode sink;
  Simulator sim;
  const LinkId l = sim.connect(sim.add_node(gen, "gen"), 0, sim.add_node(sink, "sink"), 0, link(10, 0));
  sim.set_link_loss_at(l, TimeNs::from_us(82), 1.0);
  sim.set_link_loss_at(l, TimeNs::from_us(164), 0.0);
  sim.run_until(TimeNs::from_us(1000));
  const LinkStats& st = sim.stats(l, LinkDir::kAtoB);
  EXPECT_NEAR(static_cast<double>(st.lost_pkts), 100, 1);
  EXPECT_EQ(st.lost_pkts + st.delivered_pkts, 300u);
  EXPECT_DOUBLE_EQ(sim.link_loss(l), 0.0);
  EXPECT_THROW(sim.set_link_loss_at(l, TimeNs::from_us(2000), 1.5), std::invalid_argument);
}

// Reboot: links down at t (ends told), reset() at t, links up at t + down.
TEST_F(SimFaultTest, RebootDownResetUp) {
  WatchNode a(pool(), 100, 500);
  WatchNode sw(pool(), 0, 500);
  Simulator sim;
  const NodeId na = sim.add_node(a, "a");
  const NodeId ns = sim.add_node(sw, "sw");
  const LinkId l = sim.connect(na, 0, ns, 0, link(10, 100));
  sim.reboot_node(ns, TimeNs::from_us(10), TimeNs::from_us(30));
  sim.run_until(TimeNs::from_us(20));
  EXPECT_FALSE(sim.link_up(l));
  ASSERT_EQ(sw.resets.size(), 1u);
  EXPECT_EQ(sw.resets[0], TimeNs::from_us(10));
  sim.run_until(TimeNs::from_us(100));
  EXPECT_TRUE(sim.link_up(l));
  ASSERT_EQ(a.changes.size(), 2u);
  EXPECT_EQ(a.changes[0].at, TimeNs::from_us(10));
  EXPECT_FALSE(a.changes[0].up);
  EXPECT_EQ(a.changes[1].at, TimeNs::from_us(40));
  EXPECT_TRUE(a.changes[1].up);
  EXPECT_EQ(sw.changes.size(), 2u);
  EXPECT_THROW(sim.reboot_node(ns, TimeNs::from_us(200), TimeNs(0)), std::invalid_argument);
}

TEST_F(SimFaultTest, BadArgumentsRefused) {
  GeneratorNode gen(pool(), 0, 100);
  SinkNode sink;
  Simulator sim;
  const NodeId g = sim.add_node(gen, "gen");
  const NodeId s = sim.add_node(sink, "sink");
  const LinkId l = sim.connect(g, 0, s, 0, link(10, 0));
  EXPECT_THROW(sim.flap_link(l, TimeNs(0), TimeNs(100), TimeNs(10), TimeNs(10)), std::invalid_argument);
  EXPECT_THROW(sim.flap_link(l, TimeNs(100), TimeNs(100), TimeNs(10), TimeNs(5)), std::invalid_argument);
  EXPECT_THROW(sim.flap_link(9, TimeNs(0), TimeNs(100), TimeNs(10), TimeNs(5)), std::invalid_argument);
  EXPECT_THROW(sim.blackhole_port(g, 1, TimeNs(0), TimeNs(10)), std::invalid_argument);
  sim.run_until(TimeNs(1000));
  EXPECT_THROW(sim.blackhole_port(g, 0, TimeNs(10), TimeNs(2000)), std::invalid_argument);  // in the past
}

// The same faults and seed: the same run, event for event.
uint64_t run_faulty(rte_mempool* pool, uint64_t seed, LinkStats* out) {
  GeneratorNode gen(pool, 2000, 300);
  SinkNode sink;
  Simulator sim(seed);
  const NodeId g = sim.add_node(gen, "gen");
  const NodeId s = sim.add_node(sink, "sink");
  const LinkId l = sim.connect(g, 0, s, 0, link(25, 300, 0.01));
  sim.flap_link(l, TimeNs::from_us(20), TimeNs::from_us(80), TimeNs::from_us(7), TimeNs::from_us(2));
  sim.blackhole_port(s, 0, TimeNs::from_us(90), TimeNs::from_us(95));
  sim.set_link_loss_at(l, TimeNs::from_us(100), 0.2);
  sim.reboot_node(s, TimeNs::from_us(120), TimeNs::from_us(5));
  sim.run_until(TimeNs::from_us(400));
  *out = sim.stats(l, LinkDir::kAtoB);
  return sim.trace_hash();
}

TEST_F(SimFaultTest, Deterministic) {
  LinkStats a, b, c;
  const uint64_t ha = run_faulty(pool(), 7, &a);
  const uint64_t hb = run_faulty(pool(), 7, &b);
  const uint64_t hc = run_faulty(pool(), 8, &c);
  EXPECT_EQ(ha, hb);
  EXPECT_EQ(a, b);
  EXPECT_NE(a.lost_pkts, 0u);
  EXPECT_NE(a.blackholed_pkts, 0u);
  EXPECT_NE(a.down_dropped_pkts, 0u);
  EXPECT_NE(ha, hc);
}

}  // namespace
}  // namespace sf::sim
