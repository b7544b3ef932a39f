// Placement probe: the cache-line round trip between two threads pinned to two
// CPUs tells whether the hypervisor has put those two vCPUs on cores that share
// an L3 (tens of ns) or not (hundreds of ns). Run it before and after a
// two-process benchmark round to say which placement the round ran in
// (docs/performance.md, "### nic", "Placements of the two vCPUs").
//
// One sample = `batches` timed batches of `trips` round trips after one
// untimed warm-up batch; its figure is the median batch's ns per round trip
// (a batch in which the OS took either CPU away is slow and lands above the
// median). Prints one JSON line per sample:
//   {"probe":"core_rtt","cpus":[0,1],"rtt_ns":114.1,"min_ns":..,"max_ns":..,
//    "batch_ns":[..],"smt_threshold_ns":80,"threshold_ns":250,"placement":"shared_l3",
//    "probe_us":812,"t_s":0.0}
// placement: same_core (median below smt_threshold_ns: most likely SMT
// siblings of one physical core, which share L1/L2 and the core's pipeline),
// shared_l3 (below threshold_ns), split_l3 (at or above it and below
// kUnclearNs), unclear (a median that slow means a CPU was taken away, not a
// placement). On the development VM the three sit at ~67, 90-140 and
// 380-600 ns with nothing between 70 and 90 or 150 and 350 (docs/performance.md).
//
// usage: core_rtt [--cpus A,B] [--batches N] [--trips N] [--threshold-ns NS]
//                 [--smt-threshold-ns NS] [--samples N] [--interval-ms MS]
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

// A median this slow is a descheduled thread, not a cache-line transfer.
constexpr double kUnclearNs = 3000.0;
constexpr uint32_t kWarmupTrips = 200;
constexpr uint64_t kMaxTripsPerSample = 100'000'000;
constexpr std::size_t kCacheLineBytes = 64;

enum class Placement { kSameCore, kSharedL3, kSplitL3, kUnclear };

const char* to_string(Placement p) {
  switch (p) {
    case Placement::kSameCore: return "same_core";
    case Placement::kSharedL3: return "shared_l3";
    case Placement::kSplitL3: return "split_l3";
    case Placement::kUnclear: return "unclear";
  }
  return "?";
}

struct ProbeOptions {
  int cpu_a = 0;
  int cpu_b = 1;
  uint32_t batches = 5;
  uint32_t trips = 1000;
  double smt_threshold_ns = 80.0;
  double threshold_ns = 250.0;
  uint32_t samples = 1;
  uint32_t interval_ms = 0;
};

struct ProbeSample {
  std::vector<double> batch_ns;  // ns per round trip, one per batch, in order
  double median_ns = 0;
  double probe_us = 0;           // wall time of the whole sample, threads included
};

// The one cache line the two threads bounce. Odd values: the initiator's turn
// is done; even: the responder's.
struct alignas(kCacheLineBytes) PingLine {
  std::atomic<uint32_t> seq{0};
};

bool pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// Runs one sample: the responder on cpu_b, the initiator (this thread, which
// the caller has pinned to cpu_a) timing each batch. Returns nullopt when the
// responder could not be pinned.
std::optional<ProbeSample> run_sample(const ProbeOptions& opt) {
  const auto t_start = std::chrono::steady_clock::now();
  PingLine line;
  const uint32_t total = kWarmupTrips + opt.batches * opt.trips;
  std::atomic<int> pinned{0};  // 0 pending, 1 ok, -1 failed
  std::thread responder([&] {
    if (!pin_self(opt.cpu_b)) {
      pinned.store(-1, std::memory_order_release);
      return;
    }
    pinned.store(1, std::memory_order_release);
    for (uint32_t i = 0; i < total; ++i) {
      while (line.seq.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      line.seq.store(2 * i + 2, std::memory_order_release);
    }
  });
  while (pinned.load(std::memory_order_acquire) == 0) {
  }
  if (pinned.load(std::memory_order_acquire) < 0) {
    responder.join();
    return std::nullopt;
  }
  auto trip = [&](uint32_t i) {
    line.seq.store(2 * i + 1, std::memory_order_release);
    while (line.seq.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  };
  uint32_t i = 0;
  for (; i < kWarmupTrips; ++i) trip(i);
  ProbeSample s;
  s.batch_ns.reserve(opt.batches);
  for (uint32_t b = 0; b < opt.batches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (uint32_t k = 0; k < opt.trips; ++k, ++i) trip(i);
    const auto t1 = std::chrono::steady_clock::now();
    s.batch_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / opt.trips);
  }
  responder.join();
  std::vector<double> sorted = s.batch_ns;
  std::sort(sorted.begin(), sorted.end());
  s.median_ns = sorted[sorted.size() / 2];
  s.probe_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t_start).count();
  return s;
}

Placement classify(double median_ns, const ProbeOptions& opt) {
  if (median_ns >= kUnclearNs) return Placement::kUnclear;
  if (median_ns < opt.smt_threshold_ns) return Placement::kSameCore;
  return median_ns < opt.threshold_ns ? Placement::kSharedL3 : Placement::kSplitL3;
}

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr,
               "core_rtt: %s\nusage: core_rtt [--cpus A,B] [--batches N] [--trips N] "
               "[--threshold-ns NS] [--smt-threshold-ns NS] [--samples N] [--interval-ms MS]\n",
               what.c_str());
  std::exit(2);
}

// A whole decimal number in [lo, hi], or a usage error naming the flag.
long parse_int(std::string_view flag, const char* text, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
    usage_error(std::string(flag) + ": expected an integer in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "], got '" + text + "'");
  }
  return v;
}

ProbeOptions parse_args(int argc, char** argv) {
  ProbeOptions opt;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::printf("usage: core_rtt [--cpus A,B] [--batches N] [--trips N] [--threshold-ns NS] "
                  "[--smt-threshold-ns NS] [--samples N] [--interval-ms MS]\n");
      std::exit(0);
    }
    if (i + 1 >= argc) usage_error(std::string(flag) + " needs a value");
    const char* val = argv[++i];
    if (flag == "--cpus") {
      const char* comma = std::strchr(val, ',');
      if (comma == nullptr) usage_error(std::string("--cpus: expected A,B, got '") + val + "'");
      const std::string a(val, comma);
      opt.cpu_a = static_cast<int>(parse_int("--cpus", a.c_str(), 0, CPU_SETSIZE - 1));
      opt.cpu_b = static_cast<int>(parse_int("--cpus", comma + 1, 0, CPU_SETSIZE - 1));
      if (opt.cpu_a == opt.cpu_b) usage_error("--cpus: the two CPUs must differ");
    } else if (flag == "--batches") {
      opt.batches = static_cast<uint32_t>(parse_int(flag, val, 1, 1'000'000));
    } else if (flag == "--trips") {
      opt.trips = static_cast<uint32_t>(parse_int(flag, val, 1, 10'000'000));
    } else if (flag == "--threshold-ns") {
      opt.threshold_ns = static_cast<double>(parse_int(flag, val, 1, 100'000));
    } else if (flag == "--smt-threshold-ns") {
      opt.smt_threshold_ns = static_cast<double>(parse_int(flag, val, 0, 100'000));
    } else if (flag == "--samples") {
      opt.samples = static_cast<uint32_t>(parse_int(flag, val, 1, 10'000'000));
    } else if (flag == "--interval-ms") {
      opt.interval_ms = static_cast<uint32_t>(parse_int(flag, val, 0, 3'600'000));
    } else {
      usage_error("unknown option '" + std::string(flag) + "'");
    }
  }
  if (opt.smt_threshold_ns >= opt.threshold_ns) usage_error("--smt-threshold-ns must be below --threshold-ns");
  // The sequence word counts 2 per round trip in 32 bits.
  if (uint64_t{opt.batches} * opt.trips > kMaxTripsPerSample) {
    usage_error("--batches x --trips must be at most " + std::to_string(kMaxTripsPerSample));
  }
  return opt;
}

void print_sample(const ProbeOptions& opt, const ProbeSample& s, double t_s) {
  const auto [lo, hi] = std::minmax_element(s.batch_ns.begin(), s.batch_ns.end());
  std::printf("{\"probe\": \"core_rtt\", \"cpus\": [%d, %d], \"rtt_ns\": %.1f, \"min_ns\": %.1f, "
              "\"max_ns\": %.1f, \"batch_ns\": [",
              opt.cpu_a, opt.cpu_b, s.median_ns, *lo, *hi);
  for (std::size_t k = 0; k < s.batch_ns.size(); ++k) {
    std::printf("%s%.1f", k ? ", " : "", s.batch_ns[k]);
  }
  std::printf("], \"smt_threshold_ns\": %.0f, \"threshold_ns\": %.0f, \"placement\": \"%s\", \"probe_us\": %.0f, "
              "\"t_s\": %.3f}\n",
              opt.smt_threshold_ns, opt.threshold_ns, to_string(classify(s.median_ns, opt)), s.probe_us, t_s);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const ProbeOptions opt = parse_args(argc, argv);
  if (!pin_self(opt.cpu_a)) {
    std::fprintf(stderr, "core_rtt: cannot pin to CPU %d (not in this process's CPU set?)\n", opt.cpu_a);
    return 1;
  }
  const auto t_origin = std::chrono::steady_clock::now();
  for (uint32_t n = 0; n < opt.samples; ++n) {
    if (n > 0 && opt.interval_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(opt.interval_ms));
    const double t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_origin).count();
    const std::optional<ProbeSample> s = run_sample(opt);
    if (!s) {
      std::fprintf(stderr, "core_rtt: cannot pin to CPU %d (not in this process's CPU set?)\n", opt.cpu_b);
      return 1;
    }
    print_sample(opt, *s, t_s);
  }
  return 0;
}
