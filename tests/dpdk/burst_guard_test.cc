// BurstGuard (common/dpdk/burst_guard.h): a fault on unmapped memory (or
// past the end of a mapped file) inside a guarded call returns from it
// instead of killing the process, every time; any other fault, a fault
// outside a guarded call and a SIGSEGV sent with raise() still kill it. The
// faults are real: writes to a page that was unmapped, as memif's regions
// are under a burst when its peer leaves.
#include "common/dpdk/burst_guard.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "common/dpdk/burst_guard_pool.h"
#include "tests/support/eal_env.h"
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

// 4. A counted pool (every pool create_pktmbuf_pool makes): this thread's
// balance follows every mbuf it allocates and frees, through the lcore
// cache, its refills from the handler and its flushes back (1,000 mbufs, 4x
// the 256-mbuf cache), and agrees with the pool's in-use count.
TEST(BurstGuardPool, BalanceCountsEveryMbufThroughCacheRefillsAndFlushes) {
  rte_mempool* mp = sf::test::mbuf_pool();
  ASSERT_TRUE(sf::dpdk::pool_is_counted(mp));
  ASSERT_GT(mp->cache_size, 0u);
  const int64_t b0 = sf::dpdk::thread_pool_balance();
  const unsigned used0 = rte_mempool_in_use_count(mp);
  std::vector<rte_mbuf*> held;
  for (int i = 0; i < 1000; ++i) held.push_back(rte_pktmbuf_alloc(mp));
  EXPECT_EQ(sf::dpdk::thread_pool_balance() - b0, 1000);
  EXPECT_EQ(rte_mempool_in_use_count(mp) - used0, 1000u);
  for (int i = 0; i < 700; ++i) {
    rte_pktmbuf_free(held.back());
    held.pop_back();
  }
  EXPECT_EQ(sf::dpdk::thread_pool_balance() - b0, 300);
  rte_pktmbuf_free_bulk(held.data(), static_cast<unsigned>(held.size()));
  EXPECT_EQ(sf::dpdk::thread_pool_balance() - b0, 0);
  EXPECT_EQ(rte_mempool_in_use_count(mp), used0);
}

// 5. A PMD-like rx burst cut short by a fault (memif's copy path: it
// allocates every mbuf it delivers; a packet's slot is written once the
// packet is complete): two packets done (1 and 3 segments), a third being
// built (2 mbufs chained) when the region goes. Expect: the balance moved
// by the 6 mbufs allocated; 6 - the delivered 4 segments = exactly the 2
// that no slot names and that stay out of the pool once the delivered
// packets are freed (Port::rx_burst counts them: burst_fault_leaked_mbufs).
struct RxSim {
  rte_mempool* mp;
  volatile uint8_t* unmapped;
  rte_mbuf* slots[4] = {};
  rte_mbuf* building = nullptr;
};
void rx_sim(void* x) {
  auto* s = static_cast<RxSim*>(x);
  auto chain = [&](int segs) {
    rte_mbuf* head = rte_pktmbuf_alloc(s->mp);
    for (int i = 1; i < segs; ++i) rte_pktmbuf_chain(head, rte_pktmbuf_alloc(s->mp));
    return head;
  };
  s->slots[0] = chain(1);
  s->slots[1] = chain(3);
  s->building = chain(2);
  s->unmapped[0] = 1;  // the region is gone: faults
  s->slots[2] = s->building;
}

TEST(BurstGuardPool, FaultedRxBurstLeavesExactlyTheUnfinishedPacket) {
  install_burst_fault_handler();
  rte_mempool* mp = sf::test::mbuf_pool();
  const unsigned used0 = rte_mempool_in_use_count(mp);
  RxSim s{mp, unmapped_page()};
  const int64_t b0 = sf::dpdk::thread_pool_balance();
  EXPECT_TRUE(run_guarded(rx_sim, &s));
  const int64_t moved = sf::dpdk::thread_pool_balance() - b0;
  EXPECT_EQ(moved, 6);
  int64_t delivered = 0;
  for (rte_mbuf* m : s.slots) delivered += m != nullptr ? m->nb_segs : 0;
  EXPECT_EQ(delivered, 4);
  EXPECT_EQ(s.slots[2], nullptr);
  for (rte_mbuf* m : s.slots) rte_pktmbuf_free(m);
  EXPECT_EQ(rte_mempool_in_use_count(mp) - used0, static_cast<unsigned>(moved - delivered));
  rte_pktmbuf_free(s.building);  // the test kept the pointer a PMD's stack would have lost
  EXPECT_EQ(rte_mempool_in_use_count(mp), used0);
}

}  // namespace
