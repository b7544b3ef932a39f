// BurstGuard (common/dpdk/burst_guard.h): a fault on unmapped memory (or
// past the end of a mapped file) inside a guarded call returns from it
// instead of killing the process, every time; any other fault, a fault
// outside a guarded call and a SIGSEGV sent with raise() still kill it. The
// faults are real: writes to a page that was unmapped, as memif's regions
// are under a burst when its peer leaves.
#include "common/dpdk/burst_guard.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "tests/support/unmapped_page.h"

namespace {

using sf::dpdk::guarded_faults;
using sf::dpdk::install_burst_fault_handler;
using sf::dpdk::run_guarded;
using sf::test::unmapped_page;

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

// 1. Three faulting calls in a row, a normal one after each. Expect: each
// faulting call returns true, stops at the fault (before set, after not),
// and is counted; the normal one returns false and ran to its end.
TEST(BurstGuard, UnmappedFaultInsideAGuardedCallReturnsEachTime) {
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

// 2. A shared file mapping of two pages over a one-page file: the second
// page is past its end (SIGBUS, as a truncated memif region gives). Expect:
// caught like an unmapped page.
TEST(BurstGuard, PastTheEndOfAFileInsideAGuardedCallReturns) {
  install_burst_fault_handler();
  const int fd = memfd_create("burst-guard-test", 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 4096), 0);
  auto* p = static_cast<uint8_t*>(mmap(nullptr, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(p, MAP_FAILED);
  const unsigned long f0 = guarded_faults();
  Ctx c{p + 4096};
  EXPECT_TRUE(run_guarded(touch, &c));
  EXPECT_EQ(c.after, 0);
  EXPECT_EQ(guarded_faults(), f0 + 1);
  munmap(p, 2 * 4096);
  close(fd);
}

// 3. Faults that are not the race. Expect: each kills the process with
// SIGSEGV as without the guard: outside a guarded call; a write to a mapped
// read-only page inside one (SEGV_ACCERR, a bug, not an unmap); a SIGSEGV
// sent with raise() inside one.
TEST(BurstGuardDeathTest, OtherFaultsStillKill) {
  install_burst_fault_handler();
  EXPECT_EXIT(
      {
        volatile uint8_t* p = unmapped_page();
        p[0] = 1;
      },
      testing::KilledBySignal(SIGSEGV), "");
  EXPECT_EXIT(
      {
        auto* p = static_cast<uint8_t*>(mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        Ctx c{p};
        run_guarded(touch, &c);
      },
      testing::KilledBySignal(SIGSEGV), "");
  EXPECT_EXIT(run_guarded([](void*) { raise(SIGSEGV); }, nullptr), testing::KilledBySignal(SIGSEGV), "");
}

}  // namespace
