// EAL bring-up with unique prefix and --no-huge fallback (see eal.h).
#include "common/dpdk/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_interrupts.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace sf::dpdk {
namespace {

bool has_arg(const std::vector<std::string>& a, const std::string& flag) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& s) {
    return s == flag || s.rfind(flag + "=", 0) == 0;
  });
}

std::string arg_value(const std::vector<std::string>& a, const std::string& flag) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == flag && i + 1 < a.size()) return a[i + 1];
    if (a[i].rfind(flag + "=", 0) == 0) return a[i].substr(flag.size() + 1);
  }
  return {};
}

}  // namespace

SplitArgs split_args(int argc, const char* const* argv) {
  SplitArgs out;
  const std::string prog = argc > 0 ? argv[0] : "sf";
  out.eal.push_back(prog);
  out.app.push_back(prog);
  bool after = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (!after && a == "--") {
      after = true;
      continue;
    }
    (after ? out.app : out.eal).push_back(a);
  }
  return out;
}

uint64_t free_hugepages() {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/kernel/mm/hugepages", ec)) {
    std::ifstream f(e.path() / "free_hugepages");
    uint64_t n = 0;
    if (f >> n) total += n;
  }
  return total;
}

namespace {
std::string g_owned_runtime_dir;  // removed at cleanup when init_eal chose the prefix
std::string g_owned_prefix;

// Removes "<prefix>map_*" from every hugetlbfs mount (files EAL leaves behind
// without --huge-unlink).
void remove_hugepage_files(const std::string& prefix) {
  std::ifstream mounts("/proc/mounts");
  std::string dev, dir, type, rest;
  while (mounts >> dev >> dir >> type && std::getline(mounts, rest)) {
    if (type != "hugetlbfs") continue;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(prefix + "map_", 0) == 0) std::filesystem::remove(e.path(), ec);
    }
  }
}
}  // namespace

EalInfo compose_eal_args(std::vector<std::string> eal_args, const EalOptions& opts, uint64_t free_pages, int pid) {
  EalInfo info;
  if (eal_args.empty()) eal_args.push_back("sf");
  info.free_hugepages = free_pages;
  if (opts.unique_file_prefix && !has_arg(eal_args, "--file-prefix")) {
    eal_args.push_back("--file-prefix=sf-" + std::to_string(pid));
  }
  info.file_prefix = arg_value(eal_args, "--file-prefix");
  info.no_huge = has_arg(eal_args, "--no-huge");
  if (opts.auto_no_huge && !info.no_huge && free_pages == 0) {
    eal_args.push_back("--no-huge");
    info.no_huge = info.no_huge_added = true;
  }
  if (info.no_huge && !has_arg(eal_args, "-m") && !has_arg(eal_args, "--socket-mem")) {
    eal_args.push_back("-m");
    eal_args.push_back(std::to_string(opts.no_huge_mem_mb));
  }
  if (opts.no_telemetry && !has_arg(eal_args, "--no-telemetry")) eal_args.push_back("--no-telemetry");
  if (opts.huge_unlink && !info.no_huge && !has_arg(eal_args, "--huge-unlink") && !has_arg(eal_args, "--in-memory")) {
    eal_args.push_back("--huge-unlink");
  }
  info.args = std::move(eal_args);
  return info;
}

Result<EalInfo> init_eal(std::vector<std::string> eal_args, const EalOptions& opts) {
  const bool own_prefix = opts.unique_file_prefix && !has_arg(eal_args, "--file-prefix");
  EalInfo info = compose_eal_args(std::move(eal_args), opts, free_hugepages(), getpid());
  eal_args = info.args;

  // EAL may keep pointers into argv for the life of the process.
  static std::vector<std::string> keep;
  static std::vector<char*> argv;
  keep = std::move(eal_args);
  argv.clear();
  for (auto& s : keep) argv.push_back(s.data());
  argv.push_back(nullptr);
  if (rte_eal_init(static_cast<int>(keep.size()), argv.data()) < 0) {
    std::string joined;
    for (const auto& s : info.args) joined += " " + s;
    return Error{std::string("EAL: rte_eal_init failed: ") + rte_strerror(rte_errno) + " (args:" + joined + ")"};
  }
  // The runtime directory (/var/run/dpdk/<prefix>) belongs to the primary
  // process, whoever chose the prefix: a primary leaves none behind.
  if (own_prefix || rte_eal_process_type() == RTE_PROC_PRIMARY) g_owned_runtime_dir = rte_eal_get_runtime_dir();
  // Without --huge-unlink our huge page files stay in hugetlbfs after exit;
  // they are this primary's alone whoever chose the prefix.
  if (!info.no_huge && !has_arg(info.args, "--huge-unlink")) g_owned_prefix = info.file_prefix;
  return info;
}

void cleanup_eal(bool call_rte_cleanup) {
  if (call_rte_cleanup) rte_eal_cleanup();
  if (!g_owned_runtime_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(g_owned_runtime_dir, ec);
    g_owned_runtime_dir.clear();
  }
  if (!g_owned_prefix.empty()) {
    remove_hugepage_files(g_owned_prefix);
    g_owned_prefix.clear();
  }
}

bool interrupt_thread_barrier(uint32_t timeout_ms) {
  struct Barrier {
    int fd = -1;
    std::atomic<bool> ran{false};
  };
  Barrier b;
  b.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (b.fd < 0) return false;
  rte_intr_handle* h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
  bool ok = h != nullptr && rte_intr_fd_set(h, b.fd) == 0 && rte_intr_type_set(h, RTE_INTR_HANDLE_EXT) == 0;
  auto on_wake = [](void* arg) {
    auto* self = static_cast<Barrier*>(arg);
    uint64_t v = 0;
    (void)!read(self->fd, &v, sizeof v);
    self->ran.store(true, std::memory_order_release);
  };
  ok = ok && rte_intr_callback_register(h, on_wake, &b) == 0;
  if (ok) {
    const uint64_t one = 1;
    ok = write(b.fd, &one, sizeof one) == static_cast<ssize_t>(sizeof one);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (ok && !b.ran.load(std::memory_order_acquire)) {
      if (std::chrono::steady_clock::now() >= until) ok = false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    // Waits while the callback is still running (it may have set `ran` and
    // not yet returned); afterwards nothing on that thread touches `b`.
    (void)rte_intr_callback_unregister_sync(h, on_wake, &b);
  }
  if (h != nullptr) rte_intr_instance_free(h);
  close(b.fd);
  return ok;
}

}  // namespace sf::dpdk
