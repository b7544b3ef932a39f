// In-process integration over net_ring (suite `integration`): the real
// PollLoop<Port, TscClock> runs sf-pktio's generator and sink over a net_ring
// loopback port opened by devargs. Every frame is verified by the sink.
#include <gtest/gtest.h>

#include "common/dpdk/clock.h"
#include "common/dpdk/poll_loop.h"
#include "common/dpdk/port.h"
#include "tests/support/eal_env.h"
#include "tools/sf-pktio/pktio_nodes.h"

namespace sf::dpdk {
namespace {

// One-port node: generated frames leave on the port, arrivals go to the sink.
class GenSinkNode : public Node {
 public:
  GenSinkNode(rte_mempool* pool, uint32_t size, uint64_t count) : gen_(1, pool, size, count), sink_(1) {}
  uint16_t num_ports() const override { return 1; }
  void receive(PortId p, std::span<rte_mbuf*> pkts, TimeNs now) override { sink_.receive(p, pkts, now); }
  uint16_t transmit(PortId p, std::span<rte_mbuf*> out, TimeNs now) override { return gen_.transmit(p, out, now); }
  TimeNs next_wakeup(TimeNs) const override { return TimeNs::max(); }
  void advance(TimeNs) override {}
  const pktio::SinkNode& sink() const { return sink_; }

 private:
  pktio::GenNode gen_;
  pktio::SinkNode sink_;
};

void run_ring(const char* devargs, uint32_t size, uint64_t count, BitRate rate) {
  PortConfig cfg;
  cfg.devargs = devargs;
  cfg.rx_desc = 512;
  cfg.tx_desc = 512;
  auto port = Port::open(cfg, sf::test::mbuf_pool());
  ASSERT_TRUE(port) << port.error();
  GenSinkNode node(sf::test::mbuf_pool(), size, count);
  TscClock clock;
  PollLoop<Port, TscClock> loop(clock);
  LoopPortOptions o;
  o.rate = rate;
  ASSERT_TRUE(loop.add_port(*port, node, 0, o));
  const TimeNs limit = TimeNs::from_s(20);  // bounded: fails rather than hangs
  loop.run([&](TimeNs now) { return node.sink().total_rx() >= count || now > limit; });
  const auto& r = node.sink().result(0);
  EXPECT_EQ(r.rx_pkts, count);
  EXPECT_EQ(r.payload_errors, 0u);
  EXPECT_EQ(r.lost, 0u);
  EXPECT_EQ(r.foreign, 0u);
  EXPECT_EQ(loop.counters(0).tx_pkts, count);
  EXPECT_EQ(loop.counters(0).tx_drops(), 0u);
  if (size > 2048) {
    EXPECT_EQ(r.multi_seg, count);
  }
  auto st = port->stats();
  ASSERT_TRUE(st);
  EXPECT_EQ(st->rx_pkts, count);
}

// 1. 100k minimum frames, unshaped. Expect: all arrive, verified.
TEST(RingIntegration, MinFramesUnshaped) { run_ring("net_ring_it0", 60, 100000, BitRate(0)); }

// 2. 5k 4000 B frames (chained 2 KiB mbufs), shaped at 10 Gb/s. Expect: all
//    arrive intact as multi-segment mbufs.
TEST(RingIntegration, ChainedFramesShaped) { run_ring("net_ring_it1", 4000, 5000, BitRate::gbps(10)); }

}  // namespace
}  // namespace sf::dpdk
