// BurstGuard (common/dpdk/burst_guard.h): a memory fault inside a guarded
// call returns from it instead of killing the process, every time; a fault
// outside one still kills it. The fault is real: a write to a page that was
// unmapped, as memif's regions are under a burst when its peer leaves.
#include "common/dpdk/burst_guard.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>

namespace {

using sf::dpdk::guarded_faults;
using sf::dpdk::install_burst_fault_handler;
using sf::dpdk::run_guarded;

volatile uint8_t* unmapped_page() {
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  munmap(p, 4096);
  return static_cast<volatile uint8_t*>(p);
}

struct Ctx {
  volatile uint8_t* target;
  volatile int before = 0;
  volatile int after = 0;
};

void touch(void* x) {
  auto* c = static_cast<Ctx*>(x);
  c->before = 1;
  c->target[0] = 1;  // faults
  c->after = 1;
}

// 1. Three faulting calls in a row, a normal one between. Expect: each
// faulting call returns true, stops at the fault (before set, after not),
// and is counted; the normal one returns false and ran to its end.
TEST(BurstGuard, FaultInsideAGuardedCallReturnsEachTime) {
  install_burst_fault_handler();
  install_burst_fault_handler();  // idempotent
  const unsigned long f0 = guarded_faults();
  for (int i = 0; i < 3; ++i) {
    Ctx c{unmapped_page()};
    EXPECT_TRUE(run_guarded(touch, &c)) << "call " << i;
    EXPECT_EQ(c.before, 1);
    EXPECT_EQ(c.after, 0);
    EXPECT_EQ(guarded_faults(), f0 + i + 1);
    int v = 0;
    EXPECT_FALSE(run_guarded([](void* x) { *static_cast<int*>(x) = 7; }, &v));
    EXPECT_EQ(v, 7);
  }
}

// 2. A fault with no guarded call running. Expect: the process dies of it
// (the disposition from before the handler), as without the guard.
TEST(BurstGuardDeathTest, FaultOutsideAGuardStillKills) {
  install_burst_fault_handler();
  EXPECT_DEATH(
      {
        volatile uint8_t* p = unmapped_page();
        p[0] = 1;
      },
      "");
}

}  // namespace
