// Exact accounting of the mbufs a guarded burst (burst_guard.h) takes from
// or returns to its pools, so that a burst cut short by a fault leaves no
// mbuf uncounted.
//
// A pool created with counted_pool_ops_name() runs the platform's mempool
// handler (rte_mbuf_best_mempool_ops(): ring_mp_mc, or what
// --mbuf-pool-ops-name chose) with every enqueue and dequeue counted per
// thread. thread_pool_balance() is then this thread's net take from all
// counted pools: handler dequeues - handler enqueues - the objects in this
// lcore's caches. Every way an object moves keeps the identity
//   balance = objects this thread took out (alloc) - objects it put back (free)
// (a cache refill or flush moves both terms), so the difference of two
// readings around a guarded call is exactly what the call allocated minus
// what it freed, on this thread, whatever other lcores do to the same pools.
//
// Cost: one thread-local add per handler call (a cache refill or flush, not
// per mbuf); a reading is two thread-local loads and one cache length per
// counted pool (at most kMaxCountedPools).
// Limits: the handler is registered after the built-in ones (its index is
// appended to this process's table): a secondary process does not have it
// and must not run handler operations on these pools.
// Threading: any thread; counters are per thread, the pool table is
// written at pool creation and removal (control path).
#pragma once

#include <rte_mempool.h>

#include <cstdint>

namespace sf::dpdk {

inline constexpr unsigned kMaxCountedPools = 16;

// The handler's name for rte_pktmbuf_pool_create_by_ops (registered on first
// call); nullptr if registration failed.
const char* counted_pool_ops_name();

// Whether `mp` runs the counted handler.
bool pool_is_counted(const rte_mempool* mp);

// This thread's net take from every counted pool (see above).
int64_t thread_pool_balance();

}  // namespace sf::dpdk
