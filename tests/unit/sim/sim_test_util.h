// Shared by the simulator's tests: a link's parameters in one call, and a
// fixture that fails a test which did not give back every mbuf it took (the
// simulator frees lost, dropped and in-flight frames).
#pragma once

#include <gtest/gtest.h>
#include <rte_mempool.h>

#include <cstdint>

#include "common/sim/simulator.h"
#include "tests/support/eal_env.h"

namespace sf::sim::test {

inline LinkParams link(double gbps, int64_t delay_ns, double loss = 0, double corrupt = 0) {
  LinkParams p;
  p.rate = BitRate::gbps(gbps);
  p.delay = TimeNs(delay_ns);
  p.loss = loss;
  p.corrupt = corrupt;
  return p;
}

class PoolBalanceTest : public ::testing::Test {
 protected:
  void SetUp() override { avail_before_ = rte_mempool_avail_count(sf::test::mbuf_pool()); }
  void TearDown() override { EXPECT_EQ(rte_mempool_avail_count(sf::test::mbuf_pool()), avail_before_); }
  rte_mempool* pool() { return sf::test::mbuf_pool(); }

 private:
  unsigned avail_before_ = 0;
};

}  // namespace sf::sim::test
