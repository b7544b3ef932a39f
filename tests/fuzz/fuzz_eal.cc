#include "tests/fuzz/fuzz_eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sf::fuzz {

void fail(const char* target, const char* what) {
  std::fprintf(stderr, "%s: %s\n", target, what);
  std::abort();
}

rte_mempool* start_eal(const char* target, const char* argv0, uint32_t mbufs, uint16_t data_room,
                       std::span<rte_mbuf*> reserve) {
  // (--in-memory is refused together with --no-huge by DPDK 22.11.)
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  int cpu = 0;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
    while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &cpus)) ++cpu;
  }
  std::string prefix = std::string("--file-prefix=sf-") + target + "-" + std::to_string(getpid());
  std::replace(prefix.begin(), prefix.end(), '_', '-');
  std::vector<std::string> args = {argv0, "--no-huge", "-m", "256", "--no-pci", "--no-shconf",
                                   "--no-telemetry", prefix, "--log-level=*:error", "-l", std::to_string(cpu)};
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  if (rte_eal_init(static_cast<int>(cargs.size()), cargs.data()) < 0) {
    std::fprintf(stderr, "%s: rte_eal_init: %s\n", target, rte_strerror(rte_errno));
    std::abort();
  }
  rte_mempool* pool = rte_pktmbuf_pool_create(target, mbufs, 0, 0, data_room + RTE_PKTMBUF_HEADROOM, SOCKET_ID_ANY);
  if (pool == nullptr) fail(target, "cannot create the mbuf pool");
  for (rte_mbuf*& m : reserve) {
    m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) fail(target, "cannot take the reserve mbufs");
  }
  return pool;
}

void check_no_leak(const char* target, rte_mempool* pool, unsigned avail_before, const char* after) {
  const unsigned avail_after = rte_mempool_avail_count(pool);
  if (avail_after == avail_before) return;
  std::fprintf(stderr, "%s: mbuf leak: %u free before, %u after%s\n", target, avail_before, avail_after, after);
  std::abort();
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] == '1';
}

}  // namespace sf::fuzz
