// EAL bring-up with unique prefix and --no-huge fallback (see eal.h).
#include "common/dpdk/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

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

}  // namespace sf::dpdk
