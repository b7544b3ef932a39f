// STYLE G6: the poll loop allocates nothing in steady state. A counting
// global operator new watches 100k iterations of a shaped loopback run
// (suite `dpdk`: real mbufs, ManualClock).
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <new>

#include "common/dpdk/poll_loop.h"
#include "tests/support/eal_env.h"

namespace {
bool g_counting = false;
uint64_t g_allocs = 0;
}  // namespace

// The replacement new/delete pair over malloc/free is consistent; GCC's
// -Wmismatched-new-delete cannot see that once it inlines them (release builds).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (g_counting) ++g_allocs;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace sf::dpdk {
namespace {

// tx_burst feeds rx_burst through a fixed ring (a cable looped back).
struct LoopbackIo {
  std::array<rte_mbuf*, 1024> ring{};
  uint32_t head = 0, tail = 0;
  uint16_t rx_burst(std::span<rte_mbuf*> pkts) {
    uint16_t n = 0;
    while (n < pkts.size() && head != tail) pkts[n++] = ring[head++ % ring.size()];
    return n;
  }
  uint16_t tx_burst(std::span<rte_mbuf*> pkts) {
    uint16_t n = 0;
    while (n < pkts.size() && tail - head < ring.size()) ring[tail++ % ring.size()] = pkts[n++];
    return n;
  }
};

// Sends back whatever arrives, from a fixed queue.
class ReflectNode : public Node {
 public:
  uint16_t num_ports() const override { return 1; }
  void receive(PortId, std::span<rte_mbuf*> pkts, TimeNs) override {
    for (auto* m : pkts) q_[tail_++ % q_.size()] = m;
  }
  uint16_t transmit(PortId, std::span<rte_mbuf*> out, TimeNs) override {
    uint16_t n = 0;
    while (n < out.size() && head_ != tail_) out[n++] = q_[head_++ % q_.size()];
    return n;
  }
  TimeNs next_wakeup(TimeNs now) const override { return now + TimeNs::from_us(10); }
  void advance(TimeNs) override {}
  void drain() {
    while (head_ != tail_) rte_pktmbuf_free(q_[head_++ % q_.size()]);
  }

 private:
  std::array<rte_mbuf*, 1024> q_{};
  uint32_t head_ = 0, tail_ = 0;
};

// 1. 64 frames circulating through a 10G-shaped port for 100k iterations.
//    Expect: packets moved, zero heap allocations.
TEST(PollLoopAlloc, SteadyStateAllocatesNothing) {
  ManualClock clock;
  PollLoop<LoopbackIo, ManualClock> loop(clock);
  LoopbackIo io;
  ReflectNode node;
  LoopPortOptions o;
  o.rate = BitRate::gbps(10);
  ASSERT_TRUE(loop.add_port(io, node, 0, o));
  std::array<uint8_t, 1000> bytes{};
  std::array<rte_mbuf*, 64> pkts{};
  for (auto& m : pkts) m = sf::test::make_mbuf(bytes);
  ASSERT_EQ(io.tx_burst(pkts), 64);
  g_allocs = 0;
  g_counting = true;
  for (int i = 0; i < 100000; ++i) {
    clock.advance(TimeNs(100));
    loop.poll_once();
  }
  g_counting = false;
  EXPECT_EQ(g_allocs, 0u);
  EXPECT_GT(loop.counters(0).tx_pkts, 10000u);  // 10 ms at 10G / 1024 B ~ 12k frames
  std::array<rte_mbuf*, 1024> rest{};
  const uint16_t n = io.rx_burst(rest);
  rte_pktmbuf_free_bulk(rest.data(), n);
  loop.release();
  node.drain();
}

}  // namespace
}  // namespace sf::dpdk
