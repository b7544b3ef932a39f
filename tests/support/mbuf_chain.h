// Builds an mbuf (chain) holding given bytes, for tests and fuzz targets that
// feed frames to nodes. Header-only and gtest-free so the fuzz build can use it.
#pragma once

#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace sf::test {

// A copy of `bytes` from `pool`, chained over segments of at most `seg_bytes`
// (0 = the pool's data room). nullptr when the pool runs dry.
inline rte_mbuf* make_mbuf_chain(rte_mempool* pool, std::span<const uint8_t> bytes, uint32_t seg_bytes = 0) {
  const uint32_t room = rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM;
  if (seg_bytes == 0 || seg_bytes > room) seg_bytes = room;
  rte_mbuf* head = nullptr;
  rte_mbuf* tail = nullptr;
  size_t off = 0;
  do {
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) {
      rte_pktmbuf_free(head);
      return nullptr;
    }
    const size_t n = std::min<size_t>(seg_bytes, bytes.size() - off);
    char* dst = rte_pktmbuf_append(m, static_cast<uint16_t>(n));
    if (n > 0) std::memcpy(dst, bytes.data() + off, n);
    off += n;
    if (head == nullptr) {
      head = m;
    } else {
      tail->next = m;
      head->nb_segs++;
      head->pkt_len += static_cast<uint32_t>(n);
    }
    tail = m;
  } while (off < bytes.size());
  return head;
}

// The bytes of a frame a node handed back (any chain), and the frame freed.
inline std::vector<uint8_t> take_bytes(rte_mbuf* m) {
  std::vector<uint8_t> b(m->pkt_len);
  const void* d = rte_pktmbuf_read(m, 0, m->pkt_len, b.data());
  if (d != b.data()) std::memcpy(b.data(), d, b.size());
  rte_pktmbuf_free(m);
  return b;
}

}  // namespace sf::test
