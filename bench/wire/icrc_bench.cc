// ICRC throughput: ours (ISA-L crc32_gzip_refl, incremental, masking included)
// vs DPDK rte_net_crc_calc(RTE_NET_CRC32_ETH) over the same bytes in the same
// run. The reference is given a pre-built contiguous pseudo-packet
// (8 x 0xFF | masked headers | payload), i.e. only its CRC time is counted.
// Prints JSON lines {"bench","value","unit","ref","ratio"}; GB/s = 1e9 bytes/s
// of ICRC-covered bytes (IP header .. last payload byte). No EAL needed:
// rte_net_crc only reads CPU flags.
#include <rte_cpuflags.h>
#include <rte_net_crc.h>
// DPDK 22.11's generic/rte_vect.h lacks extern "C" around its declarations.
extern "C" {
#include <rte_vect.h>
}

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"

namespace {

using namespace sf::wire;
using Clock = std::chrono::steady_clock;

constexpr double kMinSeconds = 0.3;

template <typename Fn>
double gbps(std::size_t bytes, Fn&& fn) {
  volatile uint32_t sink = 0;
  uint64_t iters = 0;
  const auto t0 = Clock::now();
  double sec = 0;
  do {
    for (int i = 0; i < 256; ++i) sink = sink + fn();
    iters += 256;
    sec = std::chrono::duration<double>(Clock::now() - t0).count();
  } while (sec < kMinSeconds);
  return static_cast<double>(bytes) * static_cast<double>(iters) / sec / 1e9;
}

const char* alg_name(rte_net_crc_alg a) {
  switch (a) {
    case RTE_NET_CRC_SCALAR: return "scalar";
    case RTE_NET_CRC_SSE42: return "sse42";
    case RTE_NET_CRC_NEON: return "neon";
    case RTE_NET_CRC_AVX512: return "avx512";
  }
  return "?";
}

}  // namespace

int main() {
  // Without EAL init the max SIMD width is unset and rte_net_crc falls back to
  // scalar; allow the widest path the CPU supports so the reference is fair.
  rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
  rte_net_crc_alg alg = RTE_NET_CRC_SSE42;
  if (rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512F) == 1 && rte_cpu_get_flag_enabled(RTE_CPUFLAG_VPCLMULQDQ) == 1) {
    alg = RTE_NET_CRC_AVX512;
  }
  rte_net_crc_set_alg(alg);
  int rc = 0;
  for (std::size_t payload : {64u, 256u, 1024u, 4096u}) {
    RoceFrameSpec spec;
    spec.bth.opcode = Opcode::kRcWriteOnly;
    std::vector<uint8_t> pl(payload, 0xA5);
    std::vector<uint8_t> f(roce_frame_bytes(spec, payload));
    if (!build_roce_frame(f, spec, pl).ok()) return 1;
    const FrameInfo fi = parse_frame(f);
    const std::span<const uint8_t> covered(f.data() + fi.ip_offset, fi.icrc_offset - fi.ip_offset);
    const IcrcLayout layout = icrc_layout(fi);
    // Reference input: 8 x FF | masked headers | rest, contiguous.
    std::vector<uint8_t> pseudo(8 + covered.size(), 0xFF);
    std::memcpy(pseudo.data() + 8, covered.data(), covered.size());
    mask_icrc_headers(std::span<uint8_t>(pseudo.data() + 8, layout.masked_bytes()), layout);
    const uint32_t ours_val = icrc_compute(covered, layout);
    const uint32_t ref_val = rte_net_crc_calc(pseudo.data(), static_cast<uint32_t>(pseudo.size()), RTE_NET_CRC32_ETH);
    if (ours_val != ref_val || ours_val != load_le32(f.data() + fi.icrc_offset)) {
      std::fprintf(stderr, "mismatch: ours %08x ref %08x\n", ours_val, ref_val);
      rc = 1;
    }
    const double ours = gbps(covered.size(), [&] { return icrc_compute(covered, layout); });
    const double ref = gbps(covered.size(), [&] {
      return rte_net_crc_calc(pseudo.data(), static_cast<uint32_t>(pseudo.size()), RTE_NET_CRC32_ETH);
    });
    const char* name = payload == 4096 ? "icrc_4k" : payload == 1024 ? "icrc_1k" : payload == 256 ? "icrc_256" : "icrc_64";
    std::printf("{\"bench\":\"%s\",\"value\":%.3f,\"unit\":\"GB/s\",\"ref\":%.3f,\"ratio\":%.3f,\"ref_alg\":\"%s\"}\n",
                name, ours, ref, ours / ref, alg_name(alg));
  }
  return rc;
}
