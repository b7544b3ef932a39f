// sf-sim: a lab (switch configs, nic.json files, links) in virtual time. The
// same configs that sf-switch and sf-nic run in real time, here as nodes of
// the deterministic simulator at any link speed (400G for the seed
// scenarios); writes the files the real processes write, so tools/lab makes
// the same report. Exit 0: every workload finished; 1: a workload failed or
// the run limit came first; 2: a bad plan or config (the message names it).
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "common/config/config_error.h"
#include "common/dpdk/eal.h"
#include "tools/sf-sim/sim_lab.h"

namespace {

constexpr const char* kUsage =
    "usage: sf-sim PLAN.json --out DIR\n"
    "  PLAN.json: {\"seed\", \"run_limit_s\", \"ts_period_us\", \"switches\": {name: switch.json},\n"
    "              \"nics\": {process: nic.json}, \"links\": [{\"a\", \"b\", \"speed_gbps\", \"delay_ns\"}]}\n"
    "  (docs/sf-sim.md)\n";

constexpr uint32_t kMbPerSwitch = 256;

// Switches the plan names (0 when it cannot be read: SimLab reports why).
uint32_t switches_in(const std::string& plan) {
  try {
    std::ifstream f(plan);
    const nlohmann::json doc = nlohmann::json::parse(f);
    const auto it = doc.find("switches");
    return it != doc.end() && it->is_object() ? static_cast<uint32_t>(it->size()) : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string plan, out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--out" && i + 1 < argc) {
      if (!out.empty()) {
        std::cerr << "sf-sim: --out given twice\n" << kUsage;
        return 2;
      }
      out = argv[++i];
    } else if (plan.empty() && a.rfind("--", 0) != 0) {
      plan = a;
    } else {
      std::cerr << "sf-sim: unexpected argument " << a << "\n" << kUsage;
      return 2;
    }
  }
  if (plan.empty() || out.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  sf::dpdk::EalOptions eo;
  // The mbuf pool (~470 MiB) and every switch's tables (LPM, MMU): 1 GiB
  // holds two switches; a ring of five needs more. DPDK touches all of -m.
  // Sharded switches add their rings.
  const uint32_t switches = switches_in(plan);
  const auto ring_mb = static_cast<uint32_t>((sf::simlab::SimLab::shard_ring_bytes(plan) + (1u << 20) - 1) >> 20);
  eo.no_huge_mem_mb = 1024 + kMbPerSwitch * std::max<uint32_t>(switches, 2) - 2 * kMbPerSwitch + ring_mb;
  auto eal = sf::dpdk::init_eal({argv[0], "--no-huge", "--no-pci", "--log-level", "*:error", "--no-telemetry"}, eo);
  if (!eal) {
    std::cerr << "sf-sim: " << eal.error() << "\n";
    return 1;
  }
  // Every frame in flight, queued in switches or waiting in NICs: 4 KiB
  // frames take two 2 KiB mbufs.
  rte_mempool* pool = rte_pktmbuf_pool_create("sf_sim", 196607, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  if (pool == nullptr) {
    std::cerr << "sf-sim: cannot create the mbuf pool\n";
    return 1;
  }
  int rc = 0;
  try {
    sf::simlab::SimLab lab(plan, pool);
    const sf::simlab::SimResult r = lab.run(out);
    nlohmann::json j = {{"finished", r.finished},      {"end_s", r.end.sec()},
                        {"events", r.events},          {"trace_hash", r.trace_hash},
                        {"failed_workloads", r.failed_workloads}, {"seed", lab.seed()}};
    std::cout << j.dump() << std::endl;
    rc = r.finished && r.failed_workloads == 0 ? 0 : 1;
  } catch (const sf::config::ConfigError& e) {
    std::cerr << "sf-sim: " << plan << ": " << e.what() << "\n";
    rc = 2;
  } catch (const std::exception& e) {
    std::cerr << "sf-sim: " << e.what() << "\n";
    rc = 1;
  }
  rte_mempool_free(pool);
  sf::dpdk::cleanup_eal();
  return rc;
}
