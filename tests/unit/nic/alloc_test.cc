// Steady-state allocation check for the NIC datapath (STYLE G6): two hosts
// move a 64 MiB WRITE (with 1% loss, so NAKs, go-back-N and timeouts run
// too) and once warmed up, the NICs (receive, ICRC, QP engine, wheel,
// transmit) allocate nothing but mbufs.
#include <gtest/gtest.h>

#include "common/sim/simulator.h"
#include "tests/support/alloc_count.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

// 1. Warm up 2 ms, then 6 ms of transfer. Expect: zero allocations in the
//    second window, and data really moved in it.
TEST(NicAlloc, NoAllocationInSteadyState) {
  NicNode a(one_host_cfg(0), sf::test::mbuf_pool());
  NicNode b(one_host_cfg(1), sf::test::mbuf_pool());
  sim::Simulator sim(4);
  sim.connect(sim.add_node(a, "a"), 0, sim.add_node(b, "b"), 0,
              {BitRate::gbps(100), TimeNs::from_us(1), 0.01});
  Endpoint ea = make_endpoint(a, 0, 64 << 20);
  Endpoint eb = make_endpoint(b, 0, 64 << 20);
  ConnParams p;
  p.timeout = 5;
  connect_pair(ea, eb, p);
  ASSERT_EQ(post_write(ea, 1, 0, 64 << 20, eb.addr(), eb.mr->rkey), 0);
  sim.run_for(TimeNs::from_ms(2));
  const uint64_t before = sf::test::allocations();
  const uint64_t pkts_before = ea.qp->counters().tx_data_pkts;
  const uint64_t goback_before = ea.qp->counters().go_back;
  sim.run_for(TimeNs::from_ms(6));
  EXPECT_EQ(sf::test::allocations(), before);
  EXPECT_GT(ea.qp->counters().tx_data_pkts - pkts_before, 5000u);
  EXPECT_GT(ea.qp->counters().go_back - goback_before, 10u);
}

}  // namespace
}  // namespace sf::nic::test
