// EAL bring-up (STYLE G14): EAL arguments before `--`, application arguments
// after; a unique --file-prefix by default so several processes can coexist;
// automatic --no-huge fallback when no huge pages are free. Returns an error,
// never calls rte_exit. Main thread only, once per process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/dpdk/result.h"

namespace sf::dpdk {

// argv split at the first "--". argv[0] is the first element of both halves.
// Without "--", every argument is an EAL argument (DPDK custom).
struct SplitArgs {
  std::vector<std::string> eal;
  std::vector<std::string> app;
};
SplitArgs split_args(int argc, const char* const* argv);

struct EalOptions {
  bool unique_file_prefix = true;  // add --file-prefix sf-<pid> unless given
  bool auto_no_huge = true;        // add --no-huge when no huge page is free
  uint32_t no_huge_mem_mb = 512;   // -m for the --no-huge case unless -m given
  bool no_telemetry = false;       // add --no-telemetry
  // Add --huge-unlink: huge page files are unlinked once mapped, so no process
  // (not even a crashed one) leaves pages behind. Secondary processes such as
  // dpdk-dumpcap cannot attach then; apps that offer capture turn it off and
  // cleanup_eal() removes their files.
  bool huge_unlink = true;
};

struct EalInfo {
  bool no_huge = false;          // running on anonymous memory
  bool no_huge_added = false;    // ... because init_eal added --no-huge
  uint64_t free_hugepages = 0;   // free pages of all sizes seen before init
  std::string file_prefix;
  std::vector<std::string> args;  // the arguments passed to rte_eal_init
};

// Free huge pages of all sizes (sysfs); 0 when none are reserved.
uint64_t free_hugepages();

// The argument list init_eal passes to rte_eal_init, given the number of free
// huge pages (pure; unit-tested): --file-prefix sf-<pid>, --no-huge and -m
// added as EalOptions says. Fills info (no_huge, file_prefix, args).
EalInfo compose_eal_args(std::vector<std::string> eal_args, const EalOptions& opts, uint64_t free_pages, int pid);

// Starts EAL with `eal_args` (argv[0] first) completed as EalOptions says.
Result<EalInfo> init_eal(std::vector<std::string> eal_args, const EalOptions& opts = {});

// Waits until EAL's interrupt thread has finished every callback it was
// running or had been woken for when this was called: a callback of our own
// on an eventfd, woken now, runs after them (the thread runs callbacks one at
// a time). Port::close() calls it between stop and close: memif's control
// channel callback, running when the peer hangs up as we stop, otherwise
// reaches the device after rte_eth_dev_close() freed it (seen as SIGSEGV in
// librte_net_memif on the interrupt thread, 1 run in ~10 of a short perftest).
// Bounded by `timeout_ms`; false when the barrier did not run in time or could
// not be set up (the caller goes on: a teardown never blocks forever).
bool interrupt_thread_barrier(uint32_t timeout_ms = 2000);

// rte_eal_cleanup(); call after every port is closed. Also removes the runtime
// directory (/var/run/dpdk/<prefix>) of a primary process, whether init_eal
// or the user (--file-prefix) chose the prefix, and this process's huge page
// files when they were kept (no --huge-unlink).
// `call_rte_cleanup` false skips rte_eal_cleanup() (the memory goes with the
// process anyway): after a secondary process (dpdk-dumpcap) attached, DPDK
// 22.11's cleanup can race its interrupt thread and crash.
void cleanup_eal(bool call_rte_cleanup = true);

}  // namespace sf::dpdk
