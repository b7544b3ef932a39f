// SharedBuffer: the one piece of MMU state that the shards of a sharded
// switch share (docs/architecture.md "Sharding"): the physical buffer's used
// cells and, per pool, the shared and headroom cells in use. Each shard's Mmu
// keeps its own ports' PG and queue counters and charges the pool here, so the
// dynamic threshold (alpha x free) of every shard sees the whole switch's
// free count. Relaxed atomics: the counters are the only shared state and
// carry no ordering for other data.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace sf::sw {

struct SharedBuffer {
  struct Pool {
    std::atomic<uint32_t> shared_used{0};
    std::atomic<uint32_t> hdrm_used{0};
    std::atomic<uint32_t> watermark{0};
  };
  explicit SharedBuffer(size_t num_pools) : pools(std::make_unique<Pool[]>(num_pools)), num_pools(num_pools) {}

  std::atomic<uint32_t> total_used{0};
  std::unique_ptr<Pool[]> pools;
  size_t num_pools = 0;
};

// Adds `n` to `c` if the sum stays within `cap`; false (nothing added) otherwise.
// Concurrent callers never take `c` past `cap`.
inline bool try_add(std::atomic<uint32_t>& c, uint32_t n, uint32_t cap) {
  uint32_t cur = c.load(std::memory_order_relaxed);
  do {
    if (uint64_t{cur} + n > cap) return false;
  } while (!c.compare_exchange_weak(cur, cur + n, std::memory_order_relaxed));
  return true;
}

inline void raise_to(std::atomic<uint32_t>& c, uint32_t v) {
  uint32_t cur = c.load(std::memory_order_relaxed);
  while (v > cur && !c.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

}  // namespace sf::sw
