// Steady-state allocation check (STYLE G6): once the event heap has reached its
// high-water mark, running the simulator allocates nothing.
#include <gtest/gtest.h>

#include "common/sim/simulator.h"
#include "tests/support/alloc_count.h"
#include "tests/support/eal_env.h"
#include "tests/unit/sim/test_nodes.h"

namespace sf::sim {
namespace {

// Ping-pong with 16 frames in flight and a timer node: warm up 1 ms, then
// 10 ms of virtual time. Expect: zero allocations in the second run.
TEST(SimAlloc, NoAllocationInSteadyState) {
  test::EchoNode a;
  test::EchoNode b;
  for (uint32_t i = 0; i < 16; ++i) a.inject(0, test::make_frame(sf::test::mbuf_pool(), 64 + i, i));
  Simulator sim(9);
  LinkParams p;
  p.rate = BitRate::gbps(100);
  p.delay = TimeNs(300);
  p.loss = 1e-7;  // draws from the RNG without draining the frames
  p.corrupt = 0.01;
  sim.connect(sim.add_node(a, "a"), 0, sim.add_node(b, "b"), 0, p);
  sim.run_for(TimeNs::from_ms(1));
  const uint64_t before = sf::test::allocations();
  const uint64_t events_before = sim.events_processed();
  sim.run_for(TimeNs::from_ms(10));
  EXPECT_EQ(sf::test::allocations(), before);
  EXPECT_GT(sim.events_processed() - events_before, 100000u);
}

}  // namespace
}  // namespace sf::sim
