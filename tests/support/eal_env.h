// Test support for the `dpdk` tier (STYLE G12): EAL brought up once per test
// binary through sf::dpdk::init_eal (--no-huge, unique file prefix, --no-pci),
// and a shared mbuf pool.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <span>

namespace sf::test {

// The pool every test in the binary may allocate from (8191 mbufs of 2 KiB
// data room). Valid after main() has started EAL.
rte_mempool* mbuf_pool();

// An mbuf holding a copy of `bytes`, chained over several segments of at most
// `seg_bytes` each when seg_bytes > 0 (tests of multi-segment receive paths).
rte_mbuf* make_mbuf(std::span<const uint8_t> bytes, uint16_t seg_bytes = 0);

}  // namespace sf::test
