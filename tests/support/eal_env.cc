// gtest main for the `dpdk` tier: starts EAL once (--no-huge, no PCI), creates the shared pool, runs all tests.
#include "tests/support/eal_env.h"
#include "tests/support/mbuf_chain.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/dpdk/eal.h"
#include "common/dpdk/mempool.h"
#ifdef SF_TSAN_MEMPOOL
#include "tests/sanitizers/tsan_mempool.h"
#endif

namespace sf::test {
namespace {
rte_mempool* g_pool = nullptr;
}  // namespace

rte_mempool* mbuf_pool() { return g_pool; }

rte_mbuf* make_mbuf(std::span<const uint8_t> bytes, uint16_t seg_bytes) {
  return make_mbuf_chain(g_pool, bytes, seg_bytes);
}

}  // namespace sf::test

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  // Anonymous memory (--no-huge) so a crashed test never leaks huge pages;
  // init_eal adds a unique --file-prefix; --no-pci keeps tests off devices.
  sf::dpdk::EalOptions opts;
  opts.no_telemetry = true;
  // Multi-switch scenarios need more than the default (each SwitchNode's
  // route tables take ~65 MB per address family with routes): SF_TEST_EAL_MB raises the --no-huge memory.
  if (const char* mb = std::getenv("SF_TEST_EAL_MB"); mb != nullptr && std::atoi(mb) > 0) {
    opts.no_huge_mem_mb = static_cast<uint32_t>(std::atoi(mb));
  }
  std::vector<std::string> args{argv[0], "--no-huge", "--no-pci", "--log-level", "*:warning"};
#ifdef SF_TSAN_MEMPOOL
  // build-tsan: mbufs handed between lcores through a pool ring TSan sees.
  const char* ops = sf::test::tsan_mempool_ops_name();
  if (ops == nullptr) {
    std::fprintf(stderr, "tests/sanitizers/tsan_mempool.cc: rte_mempool_register_ops failed\n");
    return 1;
  }
  args.insert(args.end(), {"--mbuf-pool-ops-name", ops});
#endif
  auto eal = sf::dpdk::init_eal(args, opts);
  if (!eal) {
    std::fprintf(stderr, "%s\n", eal.error().c_str());
    return 1;
  }
#ifdef SF_TSAN_MEMPOOL
  constexpr uint32_t kPoolCache = 0;  // every free reaches the pool's handler (tsan_mempool.cc)
#else
  constexpr uint32_t kPoolCache = 256;
#endif
  auto mp = sf::dpdk::create_pktmbuf_pool("sf_test_pool", 8191, kPoolCache);
  if (!mp) {
    std::fprintf(stderr, "%s\n", mp.error().c_str());
    return 1;
  }
  sf::test::g_pool = *mp;
  const int rc = RUN_ALL_TESTS();
  sf::dpdk::cleanup_eal();
  return rc;
}
