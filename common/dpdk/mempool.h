// Packet mempools sized by formula (l2fwd style, STYLE G6): every mbuf the
// data path can hold at once is counted, so the pool never runs dry in steady
// state and no allocation happens after setup. Control path only.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <string>

#include "common/dpdk/packet_io.h"
#include "common/dpdk/result.h"

namespace sf::dpdk {

// Inputs of the sizing formula. Units are mbufs unless named otherwise.
struct MempoolSizing {
  uint32_t ports = 1;
  uint32_t rx_desc = 1024;  // per port (all rx queues together)
  uint32_t tx_desc = 1024;  // per port (all tx queues together)
  uint32_t lcores = 1;
  uint32_t cache = 256;                 // per-lcore mempool cache
  uint32_t burst = kMaxBurst;           // one rx burst in flight per lcore
  uint32_t held_per_port = 2 * kMaxBurst;  // driver tx buffer + one burst in the node
  uint32_t extra = 0;                   // what nodes queue (switch buffers, NIC windows)
};

// Rounds up to 2^k - 1, the optimum size for a ring-backed mempool.
constexpr uint32_t round_to_pow2_minus1(uint32_t n) {
  uint32_t p = 1;
  while (p - 1 < n) p <<= 1;
  return p - 1;
}

// mbufs = ports x (rx_desc + tx_desc)        descriptors filled by the PMD
//       + lcores x (cache + burst)           per-lcore caches and the rx burst
//       + ports x held_per_port              tx retry buffer, node-held burst
//       + extra                              application queues
// rounded up to 2^k - 1.
constexpr uint32_t mbuf_count(const MempoolSizing& s) {
  const uint64_t raw = uint64_t{s.ports} * (s.rx_desc + s.tx_desc) + uint64_t{s.lcores} * (s.cache + s.burst) +
                       uint64_t{s.ports} * s.held_per_port + s.extra;
  return round_to_pow2_minus1(static_cast<uint32_t>(raw));
}

// Per-lcore cache size for a pool of n mbufs: `wanted` clamped to the DPDK
// limits (<= RTE_MEMPOOL_CACHE_MAX_SIZE and <= n / 1.5).
constexpr uint32_t cache_size_for(uint32_t n, uint32_t wanted) {
  uint32_t c = wanted < RTE_MEMPOOL_CACHE_MAX_SIZE ? wanted : RTE_MEMPOOL_CACHE_MAX_SIZE;
  const uint32_t lim = static_cast<uint32_t>(n / 1.5);
  return c < lim ? c : lim;
}

// Creates a pktmbuf pool of `n` mbufs with `data_room_bytes` (headroom
// included; RTE_MBUF_DEFAULT_BUF_SIZE = 2 KiB + 128) on `socket`.
Result<rte_mempool*> create_pktmbuf_pool(const std::string& name, uint32_t n, uint32_t cache,
                                         uint16_t data_room_bytes = RTE_MBUF_DEFAULT_BUF_SIZE,
                                         int socket = SOCKET_ID_ANY);

// Convenience: pool sized by mbuf_count(s).
Result<rte_mempool*> create_pktmbuf_pool(const std::string& name, const MempoolSizing& s,
                                         uint16_t data_room_bytes = RTE_MBUF_DEFAULT_BUF_SIZE,
                                         int socket = SOCKET_ID_ANY);

}  // namespace sf::dpdk
