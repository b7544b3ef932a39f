// Per-frame CPU cost of the two things a RoCE endpoint does to a data frame's
// payload on top of what a raw memif forwarder (testpmd txonly -> rxonly)
// does: the ICRC over the covered bytes (sender: compute; receiver: verify)
// and, on the receiver, the copy of the payload into the MR. Hot caches, one
// thread, so these are the least each costs; nic_bench.py turns them into the
// ceiling ratio any correct endpoint could reach against testpmd
// (docs/performance.md, "### nic", "Placements of the two vCPUs").
//
// Prints one JSON line:
//   {"probe":"frame_cost","payload_bytes":4096,"icrc_ns":..,"memcpy_ns":..,
//    "rte_memcpy_ns":..,"memcpy_alias_ns":..,"crc_impl":"vpclmul","iterations":..}
// each figure the best (least) of `batches` batches of `iterations` frames.
//
// usage: frame_cost [--payload-bytes N] [--iterations N] [--batches N]
#include <rte_memcpy.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>  // the ICRC's frame

#include "common/wire/icrc.h"

namespace {

// IPv4 (20) + UDP (8) + BTH (12) masked, as a WRITE_MIDDLE frame has them.
constexpr uint32_t kIpv4HeaderBytes = 20;
constexpr uint32_t kUdpBthBytes = 8 + 12;

struct CostOptions {
  uint32_t payload_bytes = 4096;
  uint32_t iterations = 20000;
  uint32_t batches = 7;
};

// A result the compiler cannot drop.
volatile uint32_t g_sink = 0;

template <class Fn>
double best_ns_per_iteration(const CostOptions& opt, Fn&& fn) {
  double best = 1e30;
  for (uint32_t b = 0; b < opt.batches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (uint32_t i = 0; i < opt.iterations; ++i) fn(i);
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / opt.iterations);
  }
  return best;
}

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "frame_cost: %s\nusage: frame_cost [--payload-bytes N] [--iterations N] [--batches N]\n",
               what.c_str());
  std::exit(2);
}

uint32_t parse_u32(std::string_view flag, const char* text, uint32_t lo, uint32_t hi) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
    usage_error(std::string(flag) + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                "], got '" + text + "'");
  }
  return static_cast<uint32_t>(v);
}

}  // namespace

int main(int argc, char** argv) {
  CostOptions opt;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) usage_error(std::string(flag) + " needs a value");
    const char* val = argv[++i];
    if (flag == "--payload-bytes") {
      opt.payload_bytes = parse_u32(flag, val, 64, 1u << 20);
    } else if (flag == "--iterations") {
      opt.iterations = parse_u32(flag, val, 1, 100'000'000);
    } else if (flag == "--batches") {
      opt.batches = parse_u32(flag, val, 1, 1000);
    } else {
      usage_error("unknown option '" + std::string(flag) + "'");
    }
  }
  const uint32_t covered_bytes = kIpv4HeaderBytes + kUdpBthBytes + opt.payload_bytes;
  std::vector<uint8_t> frame(covered_bytes);
  for (std::size_t k = 0; k < frame.size(); ++k) frame[k] = static_cast<uint8_t>(k * 131 + 7);
  frame[0] = 0x45;  // IPv4, IHL 5
  // The copy's source sits where a received frame's payload does in an mbuf
  // (128 B headroom + 54 B of headers), its destination page-aligned as an MR
  // page. glibc's memcpy above 2 KiB (rep movsb) is 30-50x slower on this
  // CPU when (dst - src) mod 4096 is in [2, 30]; memcpy_alias_ns is that case
  // (dst 16 B behind the source's page offset), which an endpoint must avoid.
  constexpr std::size_t kPageBytes = 4096;
  constexpr std::size_t kMbufPayloadOffset = 128 + 54;
  constexpr std::size_t kAliasBytes = 16;
  const std::size_t buf_bytes = (opt.payload_bytes + 2 * kPageBytes) / kPageBytes * kPageBytes;
  auto* src_buf = static_cast<uint8_t*>(std::aligned_alloc(kPageBytes, buf_bytes));
  auto* mr_buf = static_cast<uint8_t*>(std::aligned_alloc(kPageBytes, buf_bytes));
  if (src_buf == nullptr || mr_buf == nullptr) {
    std::fprintf(stderr, "frame_cost: out of memory\n");
    return 1;
  }
  std::memset(src_buf, 0x5a, buf_bytes);
  std::memset(mr_buf, 0, buf_bytes);
  const uint8_t* src = src_buf + kMbufPayloadOffset;
  const sf::wire::IcrcLayout layout{sf::wire::IpVersion::kV4, kIpv4HeaderBytes};

  const double icrc_ns = best_ns_per_iteration(opt, [&](uint32_t i) {
    frame[kIpv4HeaderBytes + kUdpBthBytes] = static_cast<uint8_t>(i);  // not loop-invariant
    g_sink = g_sink + sf::wire::icrc_compute(frame, layout);
  });
  auto copy_ns = [&](uint8_t* dst, bool use_rte) {
    return best_ns_per_iteration(opt, [&](uint32_t i) {
      if (use_rte) {
        rte_memcpy(dst, src, opt.payload_bytes);
      } else {
        std::memcpy(dst, src, opt.payload_bytes);
      }
      g_sink = g_sink + dst[i % opt.payload_bytes];
    });
  };
  const double memcpy_ns = copy_ns(mr_buf, false);
  const double rte_memcpy_ns = copy_ns(mr_buf, true);
  const double alias_ns = copy_ns(mr_buf + kMbufPayloadOffset + kAliasBytes, false);
  std::printf("{\"probe\": \"frame_cost\", \"payload_bytes\": %u, \"icrc_ns\": %.1f, \"memcpy_ns\": %.1f, "
              "\"rte_memcpy_ns\": %.1f, \"memcpy_alias_ns\": %.1f, \"crc_impl\": \"%s\", \"iterations\": %u, "
              "\"batches\": %u}\n",
              opt.payload_bytes, icrc_ns, memcpy_ns, rte_memcpy_ns, alias_ns,
              sf::wire::to_string(sf::wire::crc32_impl()), opt.iterations, opt.batches);
  std::free(src_buf);
  std::free(mr_buf);
  return 0;
}
