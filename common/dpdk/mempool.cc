// Packet mempool creation (see mempool.h for the sizing formula).
#include "common/dpdk/mempool.h"

#include <rte_errno.h>

#include "common/dpdk/burst_guard_pool.h"

namespace sf::dpdk {

Result<rte_mempool*> create_pktmbuf_pool(const std::string& name, uint32_t n, uint32_t cache,
                                         uint16_t data_room_bytes, int socket) {
  // The platform's handler, counted per thread (burst_guard_pool.h: a burst
  // the fault guard cuts short accounts for every mbuf it took or returned).
  const char* ops = counted_pool_ops_name();
  rte_mempool* mp = ops != nullptr ? rte_pktmbuf_pool_create_by_ops(name.c_str(), n, cache_size_for(n, cache), 0,
                                                                    data_room_bytes, socket, ops)
                                   : rte_pktmbuf_pool_create(name.c_str(), n, cache_size_for(n, cache), 0,
                                                             data_room_bytes, socket);
  if (mp == nullptr) {
    return Error{"mempool " + name + ": rte_pktmbuf_pool_create(n=" + std::to_string(n) +
                 ", data_room=" + std::to_string(data_room_bytes) + "): " + rte_strerror(rte_errno)};
  }
  return mp;
}

Result<rte_mempool*> create_pktmbuf_pool(const std::string& name, const MempoolSizing& s,
                                         uint16_t data_room_bytes, int socket) {
  return create_pktmbuf_pool(name, mbuf_count(s), s.cache, data_room_bytes, socket);
}

}  // namespace sf::dpdk
