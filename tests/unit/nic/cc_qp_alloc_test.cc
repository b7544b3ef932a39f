// Steady-state allocation check for the ACK-driven CC in the RC QP (STYLE
// G6): the per-packet transmit stamp, the per-ACK AckEvent and controller
// call, window and pacing, NAK / go-back-N / timeout paths, for each of
// Swift, BBR and HPCC: after warm-up nothing is allocated but mbufs.
#include <gtest/gtest.h>

#include "common/sim/simulator.h"
#include "tests/support/alloc_count.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

// 1. Per algorithm: a 32 MiB WRITE over a 100 G link with 1 % loss; warm
//    up 1 ms, then 3 ms. Expect: zero allocations in the second window,
//    ACKs delivered to the CC and go-back-N run in it.
TEST(CcQpAlloc, NoAllocationPerAck) {
  for (const char* name : {"swift", "bbr", "hpcc"}) {
    NicNode a(one_host_cfg(0), sf::test::mbuf_pool());
    NicNode b(one_host_cfg(1), sf::test::mbuf_pool());
    sim::Simulator sim(4);
    sim.connect(sim.add_node(a, "a"), 0, sim.add_node(b, "b"), 0, {BitRate::gbps(100), TimeNs::from_us(1), 0.01});
    Endpoint ea = make_endpoint(a, 0, 32 << 20);
    Endpoint eb = make_endpoint(b, 0, 32 << 20);
    ConnParams p;
    p.timeout = 5;
    connect_pair(ea, eb, p);
    ASSERT_TRUE(ea.qp->set_congestion_control(*cc_choice_from_string(name, CcEvents::kAckDriven), BitRate::gbps(100)));
    ASSERT_EQ(post_write(ea, 1, 0, 32 << 20, eb.addr(), eb.mr->rkey), 0);
    sim.run_for(TimeNs::from_ms(1));
    const uint64_t before = sf::test::allocations();
    const uint64_t acks_before = ea.qp->cc_stats().acks;
    const uint64_t goback_before = ea.qp->counters().go_back;
    sim.run_for(TimeNs::from_ms(3));
    EXPECT_EQ(sf::test::allocations(), before) << name;
    EXPECT_GT(ea.qp->cc_stats().acks - acks_before, 1000u) << name;
    EXPECT_GT(ea.qp->counters().go_back - goback_before, 5u) << name;
  }
}

}  // namespace
}  // namespace sf::nic::test
