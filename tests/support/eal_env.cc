// gtest main for the `dpdk` tier: starts EAL once (no huge pages, no PCI, in
// memory, so it runs anywhere), creates the shared pool, runs all tests.
#include "tests/support/eal_env.h"

#include <gtest/gtest.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace sf::test {
namespace {
rte_mempool* g_pool = nullptr;
}  // namespace

rte_mempool* mbuf_pool() { return g_pool; }

rte_mbuf* make_mbuf(std::span<const uint8_t> bytes, uint16_t seg_bytes) {
  if (seg_bytes == 0) seg_bytes = static_cast<uint16_t>(rte_pktmbuf_data_room_size(g_pool) - RTE_PKTMBUF_HEADROOM);
  rte_mbuf* head = nullptr;
  rte_mbuf* tail = nullptr;
  size_t off = 0;
  do {
    rte_mbuf* m = rte_pktmbuf_alloc(g_pool);
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

}  // namespace sf::test

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  std::string prefix = "sf-test-" + std::to_string(getpid());
  std::vector<std::string> args = {argv[0], "--no-huge", "--no-shconf", "--no-pci", "-m", "512",
                                   "--file-prefix", prefix, "--log-level", "*:warning", "--no-telemetry"};
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  if (rte_eal_init(static_cast<int>(cargs.size()), cargs.data()) < 0) {
    std::fprintf(stderr, "EAL init failed: %s\n", rte_strerror(rte_errno));
    return 1;
  }
  sf::test::g_pool = rte_pktmbuf_pool_create("sf_test_pool", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                             SOCKET_ID_ANY);
  if (sf::test::g_pool == nullptr) {
    std::fprintf(stderr, "mbuf pool: %s\n", rte_strerror(rte_errno));
    return 1;
  }
  const int rc = RUN_ALL_TESTS();
  rte_eal_cleanup();
  return rc;
}
