// Simulator: exact serialisation/propagation timing, pacing, timers, loss,
// corruption, link up/down, determinism, mbuf ownership.
#include "common/sim/simulator.h"

#include <gtest/gtest.h>
#include <rte_mempool.h>

#include <array>
#include <stdexcept>
#include <string>

#include "common/sim/topology_builder.h"
#include "common/config/json_loader.h"
#include "tests/support/eal_env.h"
#include "tests/unit/sim/sim_test_util.h"
#include "tests/unit/sim/test_nodes.h"

namespace sf::sim {
namespace {

using test::EchoNode;
using test::GeneratorNode;
using test::SinkNode;
using test::TimerNode;

using test::link;

// Every test must give back every mbuf it took (the simulator frees lost,
// dropped and in-flight frames).
using SimTest = test::PoolBalanceTest;

// 1. One 1514 B frame (a 1500 B IP packet) at 10 Gb/s with 1 us delay: 1538 B
// on the wire. Expect: arrival at ceil(1538 * 8 / 10) + 1000 = 1231 + 1000 ns.
TEST_F(SimTest, SerialisationPlusPropagationIsExact) {
  GeneratorNode gen(pool(), 1, 1514);
  SinkNode sink;
  Simulator sim;
  const NodeId g = sim.add_node(gen, "gen");
  const NodeId s = sim.add_node(sink, "sink");
  const LinkId l = sim.connect(g, 0, s, 0, link(10, 1000));
  sim.run_until(TimeNs::from_us(100));
  ASSERT_EQ(sink.arrivals.size(), 1u);
  EXPECT_EQ(BitRate::gbps(10).tx_time(1538), TimeNs(1231));
  EXPECT_EQ(sink.arrivals[0].at, TimeNs(1231 + 1000));
  EXPECT_EQ(sink.arrivals[0].bytes.size(), 1514u);
  const LinkStats& st = sim.stats(l, LinkDir::kAtoB);
  EXPECT_EQ(st.tx_pkts, 1u);
  EXPECT_EQ(st.tx_bytes, 1514u);
  EXPECT_EQ(st.delivered_pkts, 1u);
  EXPECT_EQ(st.delivered_bytes, 1514u);
  EXPECT_EQ(sim.stats(l, LinkDir::kBtoA), LinkStats{});
  EXPECT_EQ(sim.now(), TimeNs::from_us(100));
}

// 2. Five back-to-back 1514 B frames, then 60 B and 40 B frames (padded to the
// 60 B minimum).
// Expect: departures every serialisation time, arrivals shifted by the delay.
TEST_F(SimTest, BackToBackFramesArePacedByLinkRate) {
  for (const uint32_t len : {1514u, 60u, 40u}) {
    GeneratorNode gen(pool(), 5, len);
    SinkNode sink;
    Simulator sim;
    sim.connect(sim.add_node(gen, "gen"), 0, sim.add_node(sink, "sink"), 0, link(10, 500));
    sim.run_until(TimeNs::from_us(100));
    const int64_t ser_ns = BitRate::gbps(10).tx_time(wire_bytes(len)).ns();
    EXPECT_EQ(ser_ns, len == 1514 ? 1231 : 68);  // 84 B on the wire for 40 and 60 B frames
    ASSERT_EQ(sink.arrivals.size(), 5u);
    for (int64_t i = 0; i < 5; ++i) {
      EXPECT_EQ(gen.tx_times[static_cast<size_t>(i)], TimeNs(i * ser_ns));
      EXPECT_EQ(sink.arrivals[static_cast<size_t>(i)].at, TimeNs((i + 1) * ser_ns + 500));
    }
  }
}

// 3. Ping-pong over one link: the echo node answers on the wire it came in on.
// Expect: round trip = 2 x (serialisation + delay); both directions counted.
TEST_F(SimTest, PingPongRoundTrip) {
  EchoNode a;
  EchoNode b;
  a.inject(0, test::make_frame(pool(), 64, 0));
  Simulator sim;
  const LinkId l = sim.connect(sim.add_node(a, "a"), 0, sim.add_node(b, "b"), 0, link(100, 200));
  const int64_t rtt_ns = 2 * (BitRate::gbps(100).tx_time(88).ns() + 200);
  sim.run_until(TimeNs(10 * rtt_ns - 1));  // the 10th return arrives exactly at 10 RTT
  EXPECT_EQ(a.received, 9u);
  EXPECT_EQ(b.received, 10u);
  sim.run_until(TimeNs(10 * rtt_ns));
  EXPECT_EQ(a.received, 10u);
  EXPECT_EQ(sim.stats(l, LinkDir::kAtoB).delivered_pkts, 10u);
  EXPECT_EQ(sim.stats(l, LinkDir::kBtoA).delivered_pkts, 10u);
  // a sent its 11th ping at the instant the 10th pong arrived.
  EXPECT_EQ(sim.total_stats(l).tx_bytes, 21u * 64);
}

// 4. Timers: advance() runs at exactly each next_wakeup() time, once per
// distinct deadline, and not past run_until's end.
TEST_F(SimTest, TimerWakeupsAtExactTimes) {
  TimerNode t({TimeNs(100), TimeNs(250), TimeNs(250), TimeNs(1000), TimeNs(5000)});
  Simulator sim;
  sim.add_node(t, "t");
  sim.run_until(TimeNs(1000));
  EXPECT_EQ(t.advanced_at, (std::vector<TimeNs>{TimeNs(100), TimeNs(250), TimeNs(1000)}));
  sim.run_for(TimeNs(10000));
  EXPECT_EQ(t.advanced_at.back(), TimeNs(5000));
  EXPECT_EQ(sim.now(), TimeNs(11000));
}

// 5. Generator starting later via its wakeup: first departure at the start time.
TEST_F(SimTest, GeneratorStartsAtWakeup) {
  GeneratorNode gen(pool(), 2, 100, TimeNs(777));
  SinkNode sink;
  Simulator sim;
  sim.connect(sim.add_node(gen, "gen"), 0, sim.add_node(sink, "sink"), 0, link(10, 0));
  sim.run_until(TimeNs::from_us(10));
  ASSERT_EQ(gen.tx_times.size(), 2u);
  EXPECT_EQ(gen.tx_times[0], TimeNs(777));
  const int64_t ser_ns = BitRate::gbps(10).tx_time(124).ns();
  EXPECT_EQ(sink.arrivals[1].at, TimeNs(777 + 2 * ser_ns));
}

// 6. Loss 10% over 20000 frames with a fixed seed: roughly honoured; every
// frame is accounted for; lost frames still use the wire (pacing unchanged).
TEST_F(SimTest, LossProbabilityHonoured) {
  GeneratorNode gen(pool(), 20000, 64);
  SinkNode sink;
  Simulator sim(7);
  const LinkId l = sim.connect(sim.add_node(gen, "gen"), 0, sim.add_node(sink, "sink"), 0, link(100, 0, 0.1));
  sim.run_until(TimeNs::from_ms(10));
  const LinkStats& st = sim.stats(l, LinkDir::kAtoB);
  EXPECT_EQ(st.tx_pkts, 20000u);
  EXPECT_EQ(st.lost_pkts + st.delivered_pkts, 20000u);
  EXPECT_GT(st.lost_pkts, 1800u);
  EXPECT_LT(st.lost_pkts, 2200u);
  EXPECT_EQ(sink.arrivals.size(), st.delivered_pkts);
  EXPECT_EQ(gen.tx_times.back(), TimeNs(19999 * BitRate::gbps(100).tx_time(88).ns()));
}

// 7. Corruption probability 1: every frame delivered with exactly one bit
// flipped, never in the Ethernet header (first 14 bytes).
TEST_F(SimTest, CorruptionFlipsOneBitAfterEthernetHeader) {
  GeneratorNode gen(pool(), 200, 128);
  SinkNode sink;
  Simulator sim(3);
  const LinkId l = sim.connect(sim.add_node(gen, "gen"), 0, sim.add_node(sink, "sink"), 0, link(10, 0, 0, 1.0));
  sim.run_until(TimeNs::from_ms(1));
  ASSERT_EQ(sink.arrivals.size(), 200u);
  EXPECT_EQ(sim.stats(l, LinkDir::kAtoB).corrupted_pkts, 200u);
  std::vector<int> hits(128, 0);
  for (uint32_t seq = 0; seq < 200; ++seq) {
    const auto& bytes = sink.arrivals[seq].bytes;
    int flipped_bits = 0;
    for (uint32_t i = 0; i < 128; ++i) {
      const auto diff = static_cast<uint8_t>(bytes[i] ^ static_cast<uint8_t>(seq + i));
      flipped_bits += __builtin_popcount(diff);
      if (diff != 0) {
        EXPECT_GE(i, kDefaultCorruptSkipBytes);
        ++hits[i];
      }
    }
    EXPECT_EQ(flipped_bits, 1) << "frame " << seq;
  }
}

// 8. Corruption across a multi-segment frame stays within the frame.
TEST_F(SimTest, CorruptionWalksSegments) {
  class SegGen : public GeneratorNode {
   public:
    using GeneratorNode::GeneratorNode;
    uint16_t transmit(PortId, std::span<rte_mbuf*> out, TimeNs) override {
      if (done_) return 0;
      done_ = true;
      std::vector<uint8_t> bytes(300, 0);
      out[0] = sf::test::make_mbuf(bytes, 50);
      return 1;
    }
    bool done_ = false;
  };
  SegGen gen(pool(), 1, 300);
  SinkNode sink;
  Simulator sim(11);
  sim.connect(sim.add_node(gen, "gen"), 0, sim.add_node(sink, "sink"), 0, link(10, 0, 0, 1.0));
  sim.run_until(TimeNs::from_us(10));
  ASSERT_EQ(sink.arrivals.size(), 1u);
  int bits = 0;
  for (uint8_t b : sink.arrivals[0].bytes) bits += __builtin_popcount(b);
  EXPECT_EQ(bits, 1);
}

// 9. Link down at 10 us, up at 20 us under continuous traffic (820 ns per
// frame, 2 us delay). Expect: nothing arrives while down or from frames in
// flight at the cable pull; traffic resumes after up; all frames accounted.
TEST_F(SimTest, LinkDownAndUp) {
  GeneratorNode gen(pool(), 100, 1000);
  SinkNode sink;
  Simulator sim;
  const LinkId l = sim.connect(sim.add_node(gen, "gen"), 0, sim.add_node(sink, "sink"), 0, link(10, 2000));
  sim.set_link_state_at(l, TimeNs::from_us(10), false);
  sim.set_link_state_at(l, TimeNs::from_us(20), true);
  sim.run_until(TimeNs::from_us(15));
  EXPECT_FALSE(sim.link_up(l));
  sim.run_until(TimeNs::from_us(200));
  EXPECT_TRUE(sim.link_up(l));
  const int64_t ser_ns = 820;
  size_t before = 0;
  size_t after = 0;
  for (const auto& a : sink.arrivals) {
    if (a.at < TimeNs::from_us(10)) {
      ++before;
    } else {
      EXPECT_GE(a.at, TimeNs::from_us(20) + TimeNs(ser_ns + 2000));
      ++after;
    }
  }
  const LinkStats& st = sim.stats(l, LinkDir::kAtoB);
  EXPECT_EQ(st.tx_pkts, 100u);  // the sender kept transmitting at line rate
  EXPECT_EQ(before, 9u);        // arrivals at 2820, 3640, ... 9380
  EXPECT_GT(st.down_dropped_pkts, 12u);
  EXPECT_EQ(st.delivered_pkts + st.down_dropped_pkts, 100u);
  EXPECT_EQ(before + after, st.delivered_pkts);
}

// Runs a lossy, corrupting two-link scenario; returns its fingerprint.
struct Fingerprint {
  LinkStats l0;
  LinkStats l1;
  uint64_t hash;
  uint64_t events;
  std::vector<TimeNs> arrivals;
};
Fingerprint run_lossy(rte_mempool* pool, uint64_t seed) {
  GeneratorNode gen(pool, 3000, 200);
  SinkNode sink;
  EchoNode a;
  EchoNode b;
  for (uint32_t i = 0; i < 8; ++i) a.inject(0, test::make_frame(pool, 64 + i, i));
  Simulator sim(seed);
  const LinkId l0 = sim.connect(sim.add_node(gen, "gen"), 0, sim.add_node(sink, "sink"), 0, link(25, 300, 0.05, 0.05));
  const LinkId l1 = sim.connect(sim.add_node(a, "a"), 0, sim.add_node(b, "b"), 0, link(10, 700, 0.01));
  sim.set_link_state_at(l1, TimeNs::from_us(50), false);
  sim.set_link_state_at(l1, TimeNs::from_us(51), true);
  sim.run_until(TimeNs::from_us(300));
  Fingerprint f{sim.stats(l0, LinkDir::kAtoB), sim.total_stats(l1), sim.trace_hash(), sim.events_processed(), {}};
  for (const auto& ar : sink.arrivals) f.arrivals.push_back(ar.at);
  return f;
}

// 10. Determinism: same seed, identical stats, event trace and arrival times;
// another seed, a different loss pattern.
TEST_F(SimTest, DeterministicForSeed) {
  const Fingerprint x = run_lossy(pool(), 1234);
  const Fingerprint y = run_lossy(pool(), 1234);
  EXPECT_EQ(x.l0, y.l0);
  EXPECT_EQ(x.l1, y.l1);
  EXPECT_EQ(x.hash, y.hash);
  EXPECT_EQ(x.events, y.events);
  EXPECT_EQ(x.arrivals, y.arrivals);
  EXPECT_GT(x.l0.lost_pkts, 0u);
  EXPECT_GT(x.l0.corrupted_pkts, 0u);
  EXPECT_GT(x.l1.delivered_pkts, 100u);
  const Fingerprint z = run_lossy(pool(), 1235);
  EXPECT_NE(x.hash, z.hash);
  EXPECT_NE(x.arrivals, z.arrivals);
}

// 11. In-flight frames are freed when the simulator is destroyed (fixture
// checks the pool), and setup errors are reported.
TEST_F(SimTest, SetupErrorsAndCleanup) {
  EchoNode a(2);
  EchoNode b;
  a.inject(0, test::make_frame(pool(), 64, 0));
  Simulator sim;
  const NodeId na = sim.add_node(a, "a");
  const NodeId nb = sim.add_node(b, "b");
  EXPECT_THROW(sim.add_node(b, "a"), std::invalid_argument);
  EXPECT_THROW(sim.connect(na, 2, nb, 0, link(1, 0)), std::invalid_argument);
  EXPECT_THROW(sim.connect(na, 0, na, 0, link(1, 0)), std::invalid_argument);
  EXPECT_THROW(sim.connect(na, 0, nb, 0, link(1, 0, 1.5)), std::invalid_argument);
  sim.connect(na, 0, nb, 0, link(1, 1000000));
  EXPECT_THROW(sim.connect(na, 1, nb, 0, link(1, 0)), std::invalid_argument);
  EXPECT_EQ(sim.find_node("b"), nb);
  EXPECT_FALSE(sim.find_node("c").has_value());
  sim.run_until(TimeNs(10));  // the frame is now in flight for 1 ms
  EXPECT_THROW(sim.add_node(b, "late"), std::logic_error);
  EXPECT_THROW(sim.set_link_state_at(0, TimeNs(5), false), std::invalid_argument);
}

// 12. A topology from JSON: links and events come from the config.
TEST_F(SimTest, ConnectsParsedTopology) {
  const config::Json doc = config::parse_text(R"({"seed": 5,
      "nodes": {"gen": {"kind": "gen", "ports": 1}, "sink": {"kind": "sink", "ports": 1}},
      "links": [{"a": "gen:0", "b": "sink:0", "rate_gbps": 10, "delay_ns": 1000,
                 "events": [{"at_ns": 100000, "state": "down"}]}]})");
  config::ConfigNode root(doc, "");
  const config::TopologyConfig topo = config::parse_topology(root);
  GeneratorNode gen(pool(), 1000, 1514);
  SinkNode sink;
  Simulator sim(topo.seed);
  sim.add_node(gen, "gen");
  sim.add_node(sink, "sink");
  const std::vector<LinkId> links = connect_topology(sim, topo);
  ASSERT_EQ(links.size(), 1u);
  sim.run_until(TimeNs::from_ms(2));
  ASSERT_FALSE(sink.arrivals.empty());
  EXPECT_EQ(sink.arrivals[0].at, TimeNs(1231 + 1000));
  EXPECT_FALSE(sim.link_up(links[0]));
  EXPECT_GT(sim.stats(links[0], LinkDir::kAtoB).down_dropped_pkts, 0u);

  Simulator missing;
  missing.add_node(gen, "gen");
  EXPECT_THROW(connect_topology(missing, topo), std::invalid_argument);
}


// 15. A node that tracks_tx_ports() is offered transmit only on the idle
// ports next_tx_port() names, in port order; the others are never asked.
// Four ports, each with one frame queued; the node names ports 1 and 3 only
// (0 and 2 "have nothing"): frames leave 1 and 3, never 0 or 2, and once
// port 0 is named at a wakeup it sends too.
TEST_F(SimTest, TracksTxPortsOffersOnlyNamedPorts) {
  class Named : public Node {
   public:
    explicit Named(rte_mempool* pool) : pool_(pool) {}
    uint16_t num_ports() const override { return 4; }
    void receive(PortId, std::span<rte_mbuf*> pkts, TimeNs) override {
      for (rte_mbuf* m : pkts) rte_pktmbuf_free(m);
    }
    uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs) override {
      asked.push_back(port);
      if (sent[port] || !named[port]) return 0;
      out[0] = test::make_frame(pool_, 100, port);
      sent[port] = true;
      return 1;
    }
    TimeNs next_wakeup(TimeNs now) const override { return now < TimeNs(5000) ? TimeNs(5000) : TimeNs::max(); }
    void advance(TimeNs now) override {
      if (now >= TimeNs(5000)) named[0] = true;
    }
    bool tracks_tx_ports() const override { return true; }
    PortId next_tx_port(PortId from, TimeNs) override {
      while (from < 4 && !named[from]) ++from;
      return from;
    }
    std::vector<PortId> asked;
    std::array<bool, 4> named{false, true, false, true};
    std::array<bool, 4> sent{};

   private:
    rte_mempool* pool_;
  };
  Simulator sim;
  Named node(pool());
  std::array<SinkNode, 4> sinks;
  const NodeId n = sim.add_node(node, "named");
  std::array<LinkId, 4> links{};
  for (PortId p = 0; p < 4; ++p) {
    links[p] = sim.connect(n, p, sim.add_node(sinks[p], "sink" + std::to_string(p)), 0, link(100, 1000));
  }
  sim.run_until(TimeNs(4000));
  // At start the named ports in order; then each again when its wire frees.
  ASSERT_GE(node.asked.size(), 2u);
  EXPECT_EQ(node.asked[0], 1);
  EXPECT_EQ(node.asked[1], 3);
  for (const PortId p : node.asked) EXPECT_TRUE(p == 1 || p == 3) << "port " << p << " was offered though not named";
  EXPECT_EQ(sinks[1].arrivals.size(), 1u);
  EXPECT_EQ(sinks[3].arrivals.size(), 1u);
  EXPECT_TRUE(sinks[0].arrivals.empty());
  sim.run_until(TimeNs::from_us(20));
  ASSERT_EQ(sinks[0].arrivals.size(), 1u) << "named at the 5 us wakeup: offered then";
  EXPECT_EQ(sinks[0].arrivals[0].at, TimeNs(5000 + 1000 + BitRate::gbps(100).tx_time(wire_bytes(100)).ns()));
  EXPECT_TRUE(sinks[2].arrivals.empty());
  EXPECT_EQ(sim.stats(links[2], LinkDir::kAtoB).tx_pkts, 0u);
}

// 16. Many frames in flight on one link direction (a 10 us link at 100 Gb/s
// holds ~80 MTU frames; the simulator files only the earliest in its event
// heap and queues the others per channel). Two generators feed two ports of
// one recorder over identical links, so their frames arrive at equal times.
// Expect: every arrival at its exact time; at each time the first
// generator's frame first (its wakeup, transmits and so deliveries were
// scheduled first: (time, seq) order holds for queued deliveries); frames
// still in flight when the simulator is destroyed are freed (fixture), and
// a link that goes down drops those in flight.
TEST_F(SimTest, FramesInFlightKeepTheirOrder) {
  class Recorder : public Node {
   public:
    uint16_t num_ports() const override { return 2; }
    void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override {
      for (rte_mbuf* m : pkts) {
        got.push_back({port, now});
        rte_pktmbuf_free(m);
      }
    }
    uint16_t transmit(PortId, std::span<rte_mbuf*>, TimeNs) override { return 0; }
    TimeNs next_wakeup(TimeNs) const override { return TimeNs::max(); }
    void advance(TimeNs) override {}
    std::vector<std::pair<PortId, TimeNs>> got;
  };
  constexpr uint32_t kFrames = 200;
  const int64_t ser_ns = BitRate::gbps(100).tx_time(wire_bytes(1514)).ns();
  {
    GeneratorNode g0(pool(), kFrames, 1514);
    GeneratorNode g1(pool(), kFrames, 1514);
    Recorder r;
    Simulator sim;
    const NodeId n0 = sim.add_node(g0, "g0");
    const NodeId n1 = sim.add_node(g1, "g1");
    const NodeId nr = sim.add_node(r, "r");
    sim.connect(n0, 0, nr, 0, link(100, 10000));
    const LinkId l1 = sim.connect(n1, 0, nr, 1, link(100, 10000));
    sim.run_until(TimeNs(10000));  // ~81 frames each in flight, none arrived
    EXPECT_TRUE(r.got.empty());
    EXPECT_EQ(sim.stats(l1, LinkDir::kAtoB).tx_pkts, static_cast<uint64_t>(10000 / ser_ns + 1));
    sim.run_until(TimeNs::from_ms(1));
    ASSERT_EQ(r.got.size(), 2u * kFrames);
    for (uint32_t i = 0; i < 2 * kFrames; ++i) {
      EXPECT_EQ(r.got[i].first, i % 2) << "arrival " << i;
      EXPECT_EQ(r.got[i].second, TimeNs((i / 2 + 1) * ser_ns + 10000)) << "arrival " << i;
    }
  }
  {
    GeneratorNode g0(pool(), kFrames, 1514);
    SinkNode sink;
    Simulator sim;
    const LinkId l = sim.connect(sim.add_node(g0, "g0"), 0, sim.add_node(sink, "sink"), 0, link(100, 10000));
    sim.set_link_state_at(l, TimeNs(12000), false);  // ~16 delivered, ~64 in flight dropped
    sim.run_until(TimeNs(11000));
    EXPECT_EQ(sink.arrivals.size(), static_cast<size_t>((11000 - 10000) / ser_ns));
    sim.run_until(TimeNs::from_ms(1));
    const LinkStats& st = sim.stats(l, LinkDir::kAtoB);
    EXPECT_EQ(st.delivered_pkts, static_cast<uint64_t>((12000 - 10000) / ser_ns));
    EXPECT_EQ(st.delivered_pkts + st.down_dropped_pkts, kFrames);
  }
  {
    GeneratorNode g0(pool(), kFrames, 1514);
    SinkNode sink;
    Simulator sim;
    sim.connect(sim.add_node(g0, "g0"), 0, sim.add_node(sink, "sink"), 0, link(100, 10000));
    sim.run_until(TimeNs(15000));  // destroyed with ~80 frames in flight: all freed
    EXPECT_FALSE(sink.arrivals.empty());
  }
}

}  // namespace
}  // namespace sf::sim
