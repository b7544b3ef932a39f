// STYLE G6 for congestion control: once constructed, a QP's controller
// (either variant alternative, either DCQCN parameter set, NP limiter too)
// allocates nothing while it handles CNPs, transmitted bytes and timers.
#include <gtest/gtest.h>

#include <array>

#include "nic/cc/cnp_limiter.h"
#include "nic/cc/congestion_control.h"
#include "tests/support/alloc_count.h"

namespace sf::nic {
namespace {

// 100 ms of virtual time: a 4 KB packet every 400 ns, a CE mark every 10th
// packet turned into CNPs by the limiter, advance() at every deadline.
// Expect: zero allocations, and the controller really worked (cuts and
// increases happened).
TEST(CcAlloc, NoAllocationPerEvent) {
  const BitRate line = BitRate::gbps(100);
  std::array<CongestionControl, 3> ccs{make_congestion_control(*cc_choice_from_string("none"), line),
                                       make_congestion_control(*cc_choice_from_string("dcqcn-paper"), line),
                                       make_congestion_control(*cc_choice_from_string("dcqcn-nvidia"), line)};
  CnpLimiter np(TimeNs::from_us(50), CnpCoalesce::kDeferred);
  const uint64_t before = sf::test::allocations();
  for (int64_t k = 0; k < 250'000; ++k) {
    const TimeNs now(k * 400);
    const bool marked = (k % 10) == 0 && (k / 50'000) % 2 == 0;  // congestion on and off
    const bool cnp = (marked && np.should_send(now)) || np.advance(now);
    for (CongestionControl& cc : ccs) {
      if (cc_next_deadline(cc) <= now) cc_advance(cc, now);
      if (cnp) cc_on_cnp(cc, now);
      cc_on_tx_bytes(cc, 4096, now);
    }
  }
  EXPECT_EQ(sf::test::allocations(), before);
  for (size_t i = 1; i < ccs.size(); ++i) {
    const Dcqcn& d = std::get<Dcqcn>(ccs[i]);
    EXPECT_GT(d.counters().cuts, 0u) << i;
    EXPECT_GT(d.counters().fast_recovery_steps + d.counters().additive_steps, 0u) << i;
  }
  EXPECT_GT(np.counters().deferred, 0u);
}

}  // namespace
}  // namespace sf::nic
