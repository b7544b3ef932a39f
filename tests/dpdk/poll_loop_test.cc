// PollLoop under a ManualClock with an in-memory PacketIo (suite `dpdk`: real
// mbufs from the test EAL). Checks the `now` handed to nodes, timers at
// next_wakeup, tx retry without loss, shaping and stall drops. No sleeping.
#include "common/dpdk/poll_loop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <deque>
#include <utility>
#include <vector>

#include "tests/support/eal_env.h"

namespace sf::dpdk {
namespace {

// In-memory PacketIo: rx from a queue the test fills; tx accepts at most
// tx_room packets per call (the test models a full ring with 0).
struct MemIo {
  std::deque<rte_mbuf*> rx;
  std::vector<rte_mbuf*> sent;
  uint16_t tx_room = 0xffff;
  uint16_t rx_burst(std::span<rte_mbuf*> pkts) {
    uint16_t n = 0;
    while (n < pkts.size() && !rx.empty()) {
      pkts[n++] = rx.front();
      rx.pop_front();
    }
    return n;
  }
  uint16_t tx_burst(std::span<rte_mbuf*> pkts) {
    const auto n = static_cast<uint16_t>(std::min<size_t>(pkts.size(), tx_room));
    sent.insert(sent.end(), pkts.begin(), pkts.begin() + n);
    return n;
  }
  ~MemIo() {
    for (auto* m : rx) rte_pktmbuf_free(m);
    for (auto* m : sent) rte_pktmbuf_free(m);
  }
};
static_assert(PacketIo<MemIo>);

// A node that records what the driver did and transmits `to_send` frames.
class RecordingNode : public Node {
 public:
  explicit RecordingNode(uint16_t ports, uint32_t frame_bytes = 60) : ports_(ports), frame_(frame_bytes) {}
  uint16_t num_ports() const override { return ports_; }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override {
    rx_calls.push_back({port, pkts.size(), now});
    for (auto* m : pkts) rte_pktmbuf_free(m);
  }
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) override {
    tx_asks.push_back({port, out.size(), now});
    uint16_t n = 0;
    while (n < out.size() && to_send > 0) {
      std::vector<uint8_t> bytes(frame_, static_cast<uint8_t>(n));
      out[n++] = sf::test::make_mbuf(bytes);
      --to_send;
    }
    return n;
  }
  TimeNs next_wakeup(TimeNs) const override { return wakeup; }
  void advance(TimeNs now) override {
    advanced_at.push_back(now);
    wakeup = TimeNs::max();
  }

  struct Call {
    PortId port;
    size_t n;
    TimeNs now;
  };
  std::vector<Call> rx_calls, tx_asks;
  std::vector<TimeNs> advanced_at;
  TimeNs wakeup = TimeNs::max();
  uint64_t to_send = 0;

 private:
  uint16_t ports_;
  uint32_t frame_;
};

rte_mbuf* frame(uint32_t len) {
  std::vector<uint8_t> b(len, 0xab);
  return sf::test::make_mbuf(b);
}

// 1. Packets arrive on io 1 at t=5 us, one of them in 3 mbufs. Expect:
// receive(port 1, 3 pkts, now=5 us); 5 mbufs counted.
TEST(PollLoop, ReceiveGetsIterationNow) {
  ManualClock clock;
  PollLoop<MemIo, ManualClock> loop(clock);
  RecordingNode node(2);
  MemIo io0, io1;
  ASSERT_TRUE(loop.add_port(io0, node, 0));
  ASSERT_TRUE(loop.add_port(io1, node, 1));
  for (int i = 0; i < 2; ++i) io1.rx.push_back(frame(100));
  {
    std::vector<uint8_t> b(100, 0xab);
    io1.rx.push_back(sf::test::make_mbuf(b, 40));  // 40 + 40 + 20
    ASSERT_EQ(io1.rx.back()->nb_segs, 3);
  }
  clock.set(TimeNs::from_us(5));
  EXPECT_TRUE(loop.poll_once());
  ASSERT_EQ(node.rx_calls.size(), 1u);
  EXPECT_EQ(node.rx_calls[0].port, 1);
  EXPECT_EQ(node.rx_calls[0].n, 3u);
  EXPECT_EQ(node.rx_calls[0].now, TimeNs::from_us(5));
  EXPECT_EQ(loop.counters(1).rx_pkts, 3u);
  EXPECT_EQ(loop.counters(1).rx_bytes, 300u);
  EXPECT_EQ(loop.counters(1).rx_segs, 5u);
  // Unshaped ports ask the node every iteration, with the same `now`.
  ASSERT_EQ(node.tx_asks.size(), 2u);
  EXPECT_EQ(node.tx_asks[1].now, TimeNs::from_us(5));
  EXPECT_EQ(node.tx_asks[1].n, kDefaultBurst);
}

// 1b. LoopOptions::burst: 100 frames queued, bursts of 64, 8 and the
//     nearest to 0 / above kMaxBurst (1, kMaxBurst). Expect: each receive
//     call gets at most `burst` frames (the first exactly that many), and
//     the node is offered `burst` slots to transmit.
TEST(PollLoop, BurstOptionSetsRxBurstAndTxOffer) {
  const std::array<std::pair<uint16_t, uint16_t>, 4> cases{{{64, 64}, {8, 8}, {0, 1}, {500, kMaxBurst}}};
  for (const auto& [asked, used] : cases) {
    ManualClock clock;
    LoopOptions lo;
    lo.burst = asked;
    PollLoop<MemIo, ManualClock> loop(clock, lo);
    RecordingNode node(1);
    MemIo io;
    ASSERT_TRUE(loop.add_port(io, node, 0));
    for (int i = 0; i < 100; ++i) io.rx.push_back(frame(64));
    size_t got = 0;
    while (got < 100) {
      ASSERT_TRUE(loop.poll_once());
      got += node.rx_calls.back().n;
    }
    ASSERT_FALSE(node.rx_calls.empty());
    EXPECT_EQ(node.rx_calls[0].n, std::min<size_t>(used, 100)) << "burst " << asked;
    for (const auto& c : node.rx_calls) EXPECT_LE(c.n, used);
    EXPECT_EQ(node.tx_asks[0].n, used) << "burst " << asked;
  }
}

// 2. Node wants a timer at 10 us. Expect: no advance at 9.999 us, advance(10 us) at 10 us, once.
TEST(PollLoop, AdvanceAtNextWakeup) {
  ManualClock clock;
  PollLoop<MemIo, ManualClock> loop(clock);
  RecordingNode node(1);
  MemIo io;
  ASSERT_TRUE(loop.add_port(io, node, 0));
  node.wakeup = TimeNs::from_us(10);
  clock.set(TimeNs(9999));
  EXPECT_FALSE(loop.poll_once());
  EXPECT_TRUE(node.advanced_at.empty());
  EXPECT_EQ(loop.earliest_wakeup(), TimeNs::from_us(10));
  clock.set(TimeNs::from_us(10));
  EXPECT_TRUE(loop.poll_once());
  ASSERT_EQ(node.advanced_at.size(), 1u);
  EXPECT_EQ(node.advanced_at[0], TimeNs::from_us(10));
  clock.set(TimeNs::from_us(11));
  loop.poll_once();
  EXPECT_EQ(node.advanced_at.size(), 1u);
}

// 3. The io accepts nothing. Expect: packets kept in the retry buffer, the node
//    is not asked again, and once the io drains every packet leaves, none lost.
TEST(PollLoop, TxRetryKeepsPackets) {
  ManualClock clock;
  PollLoop<MemIo, ManualClock> loop(clock);
  RecordingNode node(1);
  node.to_send = 10;
  MemIo io;
  io.tx_room = 0;
  ASSERT_TRUE(loop.add_port(io, node, 0));
  loop.poll_once();
  EXPECT_EQ(loop.tx_buffered(0), 10);
  EXPECT_EQ(node.tx_asks.size(), 1u);
  clock.advance(TimeNs::from_us(1));
  loop.poll_once();
  EXPECT_EQ(node.tx_asks.size(), 1u);  // back-pressure: not asked while buffered
  io.tx_room = 4;
  loop.poll_once();
  EXPECT_EQ(io.sent.size(), 4u);
  EXPECT_EQ(loop.tx_buffered(0), 6);
  EXPECT_EQ(loop.counters(0).tx_bytes, 4u * 60);  // bytes of what was sent, not of what was buffered
  io.tx_room = 0xffff;
  loop.poll_once();
  EXPECT_EQ(io.sent.size(), 10u);
  EXPECT_EQ(loop.counters(0).tx_pkts, 10u);
  EXPECT_EQ(loop.counters(0).tx_bytes, 10u * 60);
  EXPECT_EQ(loop.counters(0).tx_drops(), 0u);
  EXPECT_GE(loop.counters(0).tx_retries, 2u);
}

// 4. Io stuck longer than tx_stall_drop. Expect: buffered packets dropped and counted.
TEST(PollLoop, StalledTxDroppedWithReason) {
  ManualClock clock;
  PollLoop<MemIo, ManualClock> loop(clock);
  RecordingNode node(1);
  node.to_send = 5;
  MemIo io;
  io.tx_room = 0;
  LoopPortOptions o;
  o.tx_stall_drop = TimeNs::from_ms(1);
  ASSERT_TRUE(loop.add_port(io, node, 0, o));
  loop.poll_once();
  clock.set(TimeNs::from_ms(1));
  loop.poll_once();
  EXPECT_EQ(loop.tx_buffered(0), 0);
  EXPECT_EQ(loop.counters(0).tx_drops_stalled, 5u);
  // The dropped packets' bytes are not counted as sent later.
  io.tx_room = 0xffff;
  node.to_send = 3;
  loop.poll_once();
  EXPECT_EQ(loop.counters(0).tx_pkts, 3u);
  EXPECT_EQ(loop.counters(0).tx_bytes, 3u * 60);
}

// 5. 10 Gb/s port, 1500 B frames, loop iterating every 100 ns for 1 ms of
//    virtual time. Expect: exactly floor(1.25 MB / 1524 B) = 820 packets sent,
//    node asked only when the wire is free, held time counted.
// A 10 Gb/s port offered 1500 B frames, the loop iterating every 100 ns for
// 1 ms of virtual time.
void run_shaped_1ms(ManualClock& clock, PollLoop<MemIo, ManualClock>& loop, RecordingNode& node, MemIo& io) {
  node.to_send = 1'000'000;
  LoopPortOptions o;
  o.rate = BitRate::gbps(10);
  ASSERT_TRUE(loop.add_port(io, node, 0, o));
  for (TimeNs t = TimeNs(100); t <= TimeNs::from_ms(1); t += TimeNs(100)) {
    clock.set(t);
    loop.poll_once();
  }
}

TEST(PollLoop, ShapedPortSendsExactRate) {
  ManualClock clock;
  PollLoop<MemIo, ManualClock> loop(clock);
  RecordingNode node(1, 1500);
  MemIo io;
  run_shaped_1ms(clock, loop, node, io);
  // The first ask estimates 84 B frames (2 x 84 <= credit), later asks know 1524 B.
  EXPECT_NEAR(static_cast<double>(io.sent.size()), 820.0, 1.0);
  EXPECT_LE(loop.counters(0).tx_wire_bytes, 1'250'000u + 1524u);
  EXPECT_GT(loop.counters(0).shaper_held, TimeNs::from_us(500));
  EXPECT_EQ(loop.counters(0).tx_wire_bytes, io.sent.size() * 1524u);
  // Held at the end: the loop knows when the port may send again.
  EXPECT_LE(loop.shaper_wakeup(), TimeNs::from_ms(1) + BitRate::gbps(10).tx_time(1524));
}

// 5b. byte_counters off (sf-switch: its node counts bytes): an unshaped port
//     forwards and counts packets, no bytes; a shaped 10 Gb/s port still
//     sends exactly as with them (the shaper reads the lengths). Expect:
//     rx/tx packets counted, the four byte counters 0, 820 +- 1 frames of
//     1500 B in 1 ms.
TEST(PollLoop, WithoutByteCountersPacketsAndShapingStay) {
  LoopOptions lo;
  lo.byte_counters = false;
  {
    ManualClock clock;
    PollLoop<MemIo, ManualClock> loop(clock, lo);
    RecordingNode node(1);
    node.to_send = 10;
    MemIo io;
    io.tx_room = 4;
    ASSERT_TRUE(loop.add_port(io, node, 0));
    for (int i = 0; i < 3; ++i) io.rx.push_back(frame(100));
    for (int i = 0; i < 4; ++i) loop.poll_once();
    EXPECT_EQ(loop.counters(0).rx_pkts, 3u);
    EXPECT_EQ(loop.counters(0).tx_pkts, 10u);
    EXPECT_EQ(io.sent.size(), 10u);
    EXPECT_EQ(loop.counters(0).rx_bytes, 0u);
    EXPECT_EQ(loop.counters(0).rx_segs, 0u);
    EXPECT_EQ(loop.counters(0).tx_bytes, 0u);
    EXPECT_EQ(loop.counters(0).tx_wire_bytes, 0u);
  }
  ManualClock clock;
  PollLoop<MemIo, ManualClock> loop(clock, lo);
  RecordingNode node(1, 1500);
  MemIo io;
  run_shaped_1ms(clock, loop, node, io);
  EXPECT_NEAR(static_cast<double>(io.sent.size()), 820.0, 1.0);
  EXPECT_EQ(loop.counters(0).tx_wire_bytes, 0u);
  EXPECT_GT(loop.counters(0).shaper_held, TimeNs::from_us(500));
}

// 6. Run with a stop predicate. Expect: run() returns when the predicate says so.
TEST(PollLoop, RunStopsOnPredicate) {
  ManualClock clock;
  LoopOptions lo;
  lo.stop_check_interval = 1;
  PollLoop<MemIo, ManualClock> loop(clock, lo);
  RecordingNode node(1);
  MemIo io;
  ASSERT_TRUE(loop.add_port(io, node, 0));
  int calls = 0;
  loop.run([&](TimeNs) {
    clock.advance(TimeNs::from_us(1));
    return ++calls == 5;
  });
  EXPECT_EQ(loop.iterations(), 5u);
}

}  // namespace
}  // namespace sf::dpdk
