// The partitioned simulator (simulator.h "Threading"): the same run, event for
// event, with 1, 2, 3 or 4 threads and any partition map, with faults of
// every kind on links between partitions; the lookahead; a zero-delay link
// between partitions refused; every mbuf given back.
#include <gtest/gtest.h>
#include <rte_mempool.h>

#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/sim/simulator.h"
#include "tests/support/eal_env.h"
#include "tests/unit/sim/sim_test_util.h"
#include "tests/unit/sim/test_nodes.h"

namespace sf::sim {
namespace {

using test::link;

// A small router: `ports` ports, a FIFO per port. Each frame carries a hop
// budget (byte 0) and a route byte (byte 1): on arrival the budget drops by
// one; at zero the frame is absorbed (recorded: time, the frame's id in bytes
// 2-3, the port it came in on), else it leaves by port (in + 1 + route) mod
// ports and the route byte turns. It starts with frames of its own on every
// port and asks for a wakeup every `tick` to send one more (a timer source),
// so equal-time events from several origins meet at one node.
class RelayNode : public Node {
 public:
  struct Absorbed {
    TimeNs at;
    uint16_t id;
    PortId port;
    bool operator==(const Absorbed&) const = default;
  };
  RelayNode(rte_mempool* pool, uint16_t ports, uint16_t first_id, TimeNs tick)
      : pool_(pool), queues_(ports), next_id_(first_id), tick_(tick) {
    for (PortId p = 0; p < ports; ++p) inject(p, make(static_cast<uint8_t>(5 + p), 0));
  }
  ~RelayNode() override { reset(TimeNs(0)); }
  uint16_t num_ports() const override { return static_cast<uint16_t>(queues_.size()); }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override {
    for (rte_mbuf* m : pkts) {
      auto* b = rte_pktmbuf_mtod(m, uint8_t*);
      if (--b[0] == 0) {
        absorbed.push_back({now, static_cast<uint16_t>(b[2] | (b[3] << 8)), port});
        rte_pktmbuf_free(m);
        continue;
      }
      const auto out = static_cast<PortId>((port + 1 + b[1]) % num_ports());
      b[1] = static_cast<uint8_t>(b[1] * 5 + 3);
      inject(out, m);
    }
  }
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs) override {
    std::vector<rte_mbuf*>& q = queues_[port];
    if (q.empty() || out.empty()) return 0;
    out[0] = q.front();
    q.erase(q.begin());
    return 1;
  }
  TimeNs next_wakeup(TimeNs) const override { return next_tick_ < kTicks * tick_.ns() ? TimeNs(next_tick_) : TimeNs::max(); }
  void advance(TimeNs now) override {
    while (next_tick_ <= now.ns() && next_tick_ < kTicks * tick_.ns()) {
      inject(static_cast<PortId>(ticks_ % num_ports()), make(7, static_cast<uint8_t>(ticks_)));
      ++ticks_;
      next_tick_ += tick_.ns();
    }
  }
  void reset(TimeNs) override {
    for (auto& q : queues_) {
      for (rte_mbuf* m : q) rte_pktmbuf_free(m);
      q.clear();
    }
  }

  std::vector<Absorbed> absorbed;

 private:
  static constexpr int64_t kTicks = 40;
  rte_mbuf* make(uint8_t hops, uint8_t route) {
    rte_mbuf* m = test::make_frame(pool_, 96 + (next_id_ % 7) * 100, next_id_);
    if (m == nullptr) return nullptr;
    auto* b = rte_pktmbuf_mtod(m, uint8_t*);
    b[0] = hops;
    b[1] = route;
    b[2] = static_cast<uint8_t>(next_id_);
    b[3] = static_cast<uint8_t>(next_id_ >> 8);
    ++next_id_;
    return m;
  }
  void inject(PortId p, rte_mbuf* m) {
    if (m != nullptr) queues_[p].push_back(m);
  }

  rte_mempool* pool_;
  std::vector<std::vector<rte_mbuf*>> queues_;
  uint16_t next_id_;
  TimeNs tick_;
  int64_t next_tick_ = 0;
  int64_t ticks_ = 0;
};

struct Outcome {
  uint64_t hash;
  uint64_t events;
  std::vector<LinkStats> links;
  std::vector<std::vector<RelayNode::Absorbed>> absorbed;
  uint64_t windows;
};

constexpr uint32_t kNodes = 12;

// Twelve 3-port relays: a ring (port 1 -> the next one's port 0) and chords
// (port 2 <-> the node 6 ahead's port 2), 1 us links of two speeds, one lossy
// and corrupting, and faults: a flap, a port blackhole, a loss change, a
// reboot. `map` places node i in partition map[i] (empty: the default).
Outcome run(rte_mempool* pool, uint32_t threads, const std::vector<uint32_t>& map, bool faults = true) {
  std::vector<std::unique_ptr<RelayNode>> nodes;
  for (uint32_t i = 0; i < kNodes; ++i) {
    nodes.push_back(std::make_unique<RelayNode>(pool, 3, static_cast<uint16_t>(i * 1000), TimeNs(500 + 37 * i)));
  }
  Simulator sim(99, Partitioned{threads});
  for (uint32_t i = 0; i < kNodes; ++i) sim.add_node(*nodes[i], "r" + std::to_string(i));
  if (!map.empty()) {
    for (uint32_t i = 0; i < kNodes; ++i) sim.set_partition(i, map[i]);
  }
  std::vector<LinkId> links;
  for (uint32_t i = 0; i < kNodes; ++i) {
    links.push_back(sim.connect(i, 1, (i + 1) % kNodes, 0, link(i % 2 == 0 ? 100 : 25, 1000, i == 3 ? 0.05 : 0, i == 3 ? 0.02 : 0)));
  }
  for (uint32_t i = 0; i < kNodes / 2; ++i) links.push_back(sim.connect(i, 2, i + kNodes / 2, 2, link(40, 1500 + 100 * i)));
  if (faults) {
    sim.flap_link(links[1], TimeNs::from_us(3), TimeNs::from_us(12), TimeNs::from_us(3), TimeNs::from_us(1));
    sim.blackhole_port(5, 2, TimeNs::from_us(4), TimeNs::from_us(9));
    sim.set_link_loss_at(links[7], TimeNs::from_us(6), 0.1);
    sim.reboot_node(9, TimeNs::from_us(10), TimeNs::from_us(4));
  }
  sim.run_until(TimeNs::from_us(20));
  sim.run_until(TimeNs::from_us(60));  // a second run continues the first
  Outcome o{sim.trace_hash(), sim.events_processed(), {}, {}, sim.windows()};
  for (const LinkId l : links) o.links.push_back(sim.total_stats(l));
  for (const auto& n : nodes) o.absorbed.push_back(n->absorbed);
  return o;
}

using SimParallelTest = test::PoolBalanceTest;

void expect_same(const Outcome& a, const Outcome& b, const std::string& what) {
  EXPECT_EQ(a.hash, b.hash) << what;
  EXPECT_EQ(a.events, b.events) << what;
  ASSERT_EQ(a.links.size(), b.links.size());
  for (size_t i = 0; i < a.links.size(); ++i) EXPECT_EQ(a.links[i], b.links[i]) << what << " link " << i;
  for (size_t i = 0; i < a.absorbed.size(); ++i) EXPECT_EQ(a.absorbed[i], b.absorbed[i]) << what << " node " << i;
}

// One thread and one partition against 2, 3 and 4 threads with the default
// (id mod threads) and other maps: the same events, link counters and
// absorbed frames (times, ids, ports), the faults included.
TEST_F(SimParallelTest, SameRunWhateverThePartitions) {
  const Outcome one = run(pool(), 1, {});
  uint64_t absorbed = 0;
  for (const auto& v : one.absorbed) absorbed += v.size();
  LinkStats all;
  for (const LinkStats& s : one.links) all += s;
  // The run did what the test is about: traffic across every link, frames
  // absorbed, every fault acting.
  EXPECT_GT(absorbed, 300u);
  EXPECT_GT(one.events, 5000u);
  EXPECT_GT(all.lost_pkts, 0u);
  EXPECT_GT(all.corrupted_pkts, 0u);
  EXPECT_GT(all.down_dropped_pkts, 0u);
  EXPECT_GT(all.blackholed_pkts, 0u);
  for (const LinkStats& s : one.links) EXPECT_GT(s.delivered_pkts, 0u);
  EXPECT_EQ(one.windows, 2u);  // one partition waits for nobody: one window per run_until
  expect_same(one, run(pool(), 2, {}), "2 threads");
  expect_same(one, run(pool(), 3, {}), "3 threads");
  expect_same(one, run(pool(), 4, {}), "4 threads");
  expect_same(one, run(pool(), 4, {3, 3, 0, 1, 2, 2, 1, 0, 3, 0, 1, 2}), "4 threads, another map");
  expect_same(one, run(pool(), 2, {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}), "2 threads, halves");
  expect_same(one, run(pool(), 3, std::vector<uint32_t>(kNodes, 2)), "3 threads, all in one partition");
  // Partitioned, windows of the lookahead (1 us): about one per us of the run.
  const Outcome two = run(pool(), 2, {});
  EXPECT_GT(two.windows, 20u);
  // Without the faults the run differs (the faults acted in every map).
  EXPECT_NE(run(pool(), 2, {}, false).hash, one.hash);
}

// The lookahead is the shortest link between partitions; a link with no
// delay may join nodes of one partition, not two.
TEST_F(SimParallelTest, LookaheadAndZeroDelayLinks) {
  test::EchoNode a;
  test::EchoNode b(2);
  test::EchoNode c;
  a.inject(0, test::make_frame(pool(), 64, 0));
  c.inject(0, test::make_frame(pool(), 64, 1));
  {
    Simulator sim(1, Partitioned{2});
    const NodeId na = sim.add_node(a, "a");
    const NodeId nb = sim.add_node(b, "b");
    const NodeId nc = sim.add_node(c, "c");
    sim.set_partition(na, 0);
    sim.set_partition(nb, 0);
    sim.set_partition(nc, 1);
    sim.connect(na, 0, nb, 0, link(10, 0));    // inside partition 0: fine
    sim.connect(nb, 1, nc, 0, link(10, 700));  // between: the lookahead
    sim.run_until(TimeNs::from_us(20));
    EXPECT_EQ(sim.lookahead(), TimeNs(700));
    EXPECT_GT(a.received, 100u);
    EXPECT_GT(c.received, 10u);
    EXPECT_EQ(sim.threads(), 2u);
    EXPECT_THROW(sim.set_partition(na, 1), std::logic_error);
  }
  test::EchoNode d;
  test::EchoNode e;
  Simulator bad(1, Partitioned{2});
  const NodeId nd = bad.add_node(d, "d");  // partition 0
  const NodeId ne = bad.add_node(e, "e");  // partition 1
  bad.connect(nd, 0, ne, 0, link(10, 0));
  try {
    bad.run_until(TimeNs(10));
    ADD_FAILURE() << "a zero-delay link between partitions ran";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("d:0 - e:0 joins partitions 0 and 1 with no delay"), std::string::npos)
        << ex.what();
  }
  EXPECT_THROW(Simulator(1, Partitioned{0}), std::invalid_argument);
  EXPECT_THROW(Simulator(1, Partitioned{257}), std::invalid_argument);
  Simulator plain(1);
  test::EchoNode f;
  EXPECT_THROW(plain.set_partition(plain.add_node(f, "f"), 0), std::logic_error);
  EXPECT_EQ(plain.threads(), 0u);
  Simulator four(1, Partitioned{4});
  test::EchoNode g;
  EXPECT_THROW(four.set_partition(four.add_node(g, "g"), 4), std::invalid_argument);
}

// A node that throws in a partition's thread: run_until rethrows it on the
// caller's thread (no thread is left waiting at a barrier), and the
// simulator refuses to run on.
TEST_F(SimParallelTest, NodeThatThrowsStopsTheRun) {
  class Thrower : public test::TimerNode {
   public:
    using TimerNode::TimerNode;
    void advance(TimeNs now) override {
      if (now >= TimeNs::from_us(5)) throw std::runtime_error("boom at " + std::to_string(now.ns()));
      TimerNode::advance(now);
    }
  };
  for (uint32_t threads : {1u, 2u}) {
    test::EchoNode a;
    Thrower t({TimeNs::from_us(1), TimeNs::from_us(5), TimeNs::from_us(9)});
    Simulator sim(1, Partitioned{threads});
    const NodeId na = sim.add_node(a, "a");
    const NodeId nt = sim.add_node(t, "t");  // partition 1 with 2 threads
    sim.connect(na, 0, nt, 0, link(10, 1000));
    try {
      sim.run_until(TimeNs::from_us(20));
      ADD_FAILURE() << threads << " threads: no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "boom at 5000") << threads;
    }
    EXPECT_EQ(t.advanced_at, std::vector<TimeNs>{TimeNs::from_us(1)}) << threads;
    EXPECT_THROW(sim.run_until(TimeNs::from_us(30)), std::logic_error) << threads;
  }
}

// Frames in flight between partitions when the simulator goes (in an outbox
// or a channel's queue) are freed: the fixture counts the pool.
TEST_F(SimParallelTest, FramesInFlightFreedAtDestruction) {
  test::EchoNode a;
  test::EchoNode b;
  for (uint32_t i = 0; i < 20; ++i) a.inject(0, test::make_frame(pool(), 1000, i));
  Simulator sim(1, Partitioned{2});
  const NodeId na = sim.add_node(a, "a");
  const NodeId nb = sim.add_node(b, "b");
  const LinkId l = sim.connect(na, 0, nb, 0, link(100, 50000));
  sim.run_until(TimeNs::from_us(1));  // 20 frames on a 50 us wire
  EXPECT_GE(sim.stats(l, LinkDir::kAtoB).tx_pkts, 10u);
  EXPECT_EQ(sim.stats(l, LinkDir::kAtoB).delivered_pkts, 0u);
}

}  // namespace
}  // namespace sf::sim
