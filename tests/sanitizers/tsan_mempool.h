// ThreadSanitizer builds only (build-tsan): a mempool handler whose ring TSan
// can see. See tsan_mempool.cc.
#pragma once

namespace sf::test {

// The name to give EAL's --mbuf-pool-ops-name so rte_pktmbuf_pool_create uses it.
const char* tsan_mempool_ops_name();

}  // namespace sf::test
