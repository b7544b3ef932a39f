// ThreadSanitizer builds only (build-tsan, tests/support/meson.build): the
// mbuf pool of the real-thread tests on a handler TSan can see.
//
// DPDK's own mempool handler (ring_mp_mc) lives in librte_mempool_ring, which
// is not instrumented: an mbuf one lcore frees and another allocates passes
// through a ring TSan cannot see, and every byte the second lcore writes
// would be reported as racing with the first lcore's last read. This handler
// keeps the free objects in a mutex-guarded stack compiled into the test, so
// TSan sees every hand-off and a report left is one in our code. (An inline
// rte_ring would not do: its multi-consumer tail wait is a relaxed load, and
// the HTS mode mixes 4- and 8-byte atomics on one word, which TSan cannot
// follow either.)
//
// One more edge is missing in DPDK itself: a flooded mbuf has one reference
// per copy (SwitchNode::forward_l2), each shard drops its own, and the last
// one frees the mbuf on rte_pktmbuf_prefree_seg's fast path, a relaxed
// `refcnt == 1` load, so nothing orders the other shards' reads of the mbuf
// before its reuse (x86 orders them; C11 and TSan do not). The enqueue
// below makes that load an acquire: it reads the count the last dropped
// reference released. For it to see every free, the test pool has no
// per-lcore cache in this build (tests/support/eal_env.cc).
#include "tests/sanitizers/tsan_mempool.h"

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <new>
#include <vector>

namespace sf::test {
namespace {

constexpr const char* kOpsName = "sf_tsan_stack";

struct Stack {
  std::mutex mu;
  std::vector<void*> objs;
};

Stack* stack_of(const rte_mempool* mp) { return static_cast<Stack*>(mp->pool_data); }

int stack_alloc(rte_mempool* mp) {
  auto* s = new (std::nothrow) Stack;
  if (s == nullptr) return -ENOMEM;
  s->objs.reserve(mp->size);
  mp->pool_data = s;
  return 0;
}

void stack_free(rte_mempool* mp) { delete stack_of(mp); }

// Only pktmbuf pools take the EAL's --mbuf-pool-ops-name: every object is an mbuf.
int stack_enqueue(rte_mempool* mp, void* const* objs, unsigned int n) {
  Stack& s = *stack_of(mp);
  for (unsigned int i = 0; i < n; ++i) {
    (void)__atomic_load_n(&static_cast<rte_mbuf*>(objs[i])->refcnt, __ATOMIC_ACQUIRE);
  }
  const std::lock_guard<std::mutex> lock(s.mu);
  if (s.objs.size() + n > s.objs.capacity()) return -ENOBUFS;  // never: the pool holds mp->size objects
  s.objs.insert(s.objs.end(), objs, objs + n);
  return 0;
}

int stack_dequeue(rte_mempool* mp, void** objs, unsigned int n) {
  Stack& s = *stack_of(mp);
  const std::lock_guard<std::mutex> lock(s.mu);
  if (s.objs.size() < n) return -ENOBUFS;
  for (unsigned int i = 0; i < n; ++i) {
    objs[i] = s.objs.back();
    s.objs.pop_back();
  }
  return 0;
}

unsigned int stack_count(const rte_mempool* mp) {
  Stack& s = *stack_of(mp);
  const std::lock_guard<std::mutex> lock(s.mu);
  return static_cast<unsigned int>(s.objs.size());
}

rte_mempool_ops make_ops() {
  rte_mempool_ops o{};
  std::snprintf(o.name, sizeof(o.name), "%s", kOpsName);
  o.alloc = stack_alloc;
  o.free = stack_free;
  o.enqueue = stack_enqueue;
  o.dequeue = stack_dequeue;
  o.get_count = stack_count;
  return o;
}

const rte_mempool_ops g_ops = make_ops();

}  // namespace

const char* tsan_mempool_ops_name() {
  // Registered on first use, before rte_eal_init (the ops table is static in librte_mempool).
  static const int index = rte_mempool_register_ops(&g_ops);
  return index >= 0 ? kOpsName : nullptr;
}

}  // namespace sf::test
