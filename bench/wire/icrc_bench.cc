// ICRC throughput: ours (icrc_compute: incremental, masking included) with
// the default implementation (the VPCLMULQDQ folding kernel where the CPU has
// it) and with ISA-L crc32_gzip_refl forced (what we used before), vs DPDK
// rte_net_crc_calc(RTE_NET_CRC32_ETH) over the same bytes, all in the same
// run. The reference is given a pre-built contiguous pseudo-packet
// (8 x 0xFF | masked headers | payload), i.e. only its CRC time is counted.
// Prints JSON lines {"bench","value","unit","ref","ratio",...}: value = ours
// (default implementation), ref = rte_net_crc, isal = ours with ISA-L,
// ratio_isal = value / isal. GB/s = 1e9 bytes/s of ICRC-covered bytes (IP
// header .. last payload byte). The crc32_* lines time the bare CRC of the
// same number of bytes (crc32_ieee vs crc32_gzip_refl vs rte_net_crc); the
// icrc_resumed_* lines the same ICRC continued from a saved begin_prefix()
// state (the transmit path with a cached header).
// Timing: the three are measured in interleaved rounds, each as the fastest
// batch of kBatch calls, so that a shared, busy machine (preemption) moves
// them alike and little. No EAL needed: rte_net_crc only reads CPU flags.
#include <rte_cpuflags.h>
#include <rte_net_crc.h>
// DPDK 22.11's generic/rte_vect.h lacks extern "C" around its declarations.
extern "C" {
#include <rte_vect.h>
}

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/icrc_crc32.h"
#include "common/wire/mbuf_icrc.h"

namespace {

using namespace sf::wire;
using Clock = std::chrono::steady_clock;

constexpr int kRounds = 15;
constexpr double kRoundSeconds = 0.02;
constexpr int kBatch = 64;
// The data room of a default mbuf: frames over it arrive as a chain.
constexpr std::size_t kSegmentBytes = 2048;

// Fastest batch of fn() calls within kRoundSeconds, in ns per call.
template <typename Fn>
double best_ns(Fn&& fn) {
  volatile uint32_t sink = 0;
  double best = 1e30;
  const auto t_end = Clock::now() + std::chrono::duration<double>(kRoundSeconds);
  do {
    const auto t0 = Clock::now();
    for (int i = 0; i < kBatch; ++i) sink = sink + fn();
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / kBatch;
    best = std::min(best, ns);
  } while (Clock::now() < t_end);
  return best;
}

struct Trio {
  double ours_ns = 1e30, isal_ns = 1e30, ref_ns = 1e30;
};

// ours/ isal: the same callable under each implementation; ref: rte_net_crc.
template <typename Ours, typename Ref>
Trio measure(Ours&& ours, Ref&& ref) {
  Trio t;
  for (int r = 0; r < kRounds; ++r) {
    crc32_select_impl(crc32_best_impl());
    t.ours_ns = std::min(t.ours_ns, best_ns(ours));
    crc32_select_impl(Crc32Impl::kIsal);
    t.isal_ns = std::min(t.isal_ns, best_ns(ours));
    t.ref_ns = std::min(t.ref_ns, best_ns(ref));
  }
  crc32_select_impl(crc32_best_impl());
  return t;
}

void print(const char* name, std::size_t bytes, const Trio& t, const char* alg) {
  const double ours = static_cast<double>(bytes) / t.ours_ns;  // bytes/ns = GB/s
  const double isal = static_cast<double>(bytes) / t.isal_ns;
  const double ref = static_cast<double>(bytes) / t.ref_ns;
  std::printf(
      "{\"bench\":\"%s\",\"value\":%.3f,\"unit\":\"GB/s\",\"ref\":%.3f,\"ratio\":%.3f,\"isal\":%.3f,"
      "\"ratio_isal\":%.3f,\"ns\":%.1f,\"isal_ns\":%.1f,\"ref_ns\":%.1f,\"impl\":\"%s\",\"ref_alg\":\"%s\"}\n",
      name, ours, ref, ours / ref, isal, ours / isal, t.ours_ns, t.isal_ns, t.ref_ns, to_string(crc32_best_impl()), alg);
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

// A packet as a chain of kSegmentBytes mbuf segments, without a pool or EAL
// (only what rte_pktmbuf_* reads is set): what icrc_verify_mbuf walks on RX.
class FakeChain {
 public:
  explicit FakeChain(std::span<const uint8_t> pkt) {
    const std::size_t n_segs = (pkt.size() + kSegmentBytes - 1) / kSegmentBytes;
    segs_.resize(n_segs);
    room_.resize(n_segs, std::vector<uint8_t>(RTE_PKTMBUF_HEADROOM + kSegmentBytes));
    for (std::size_t i = 0; i < n_segs; ++i) {
      rte_mbuf& m = segs_[i];
      std::memset(&m, 0, sizeof(m));
      m.buf_addr = room_[i].data();
      m.buf_len = static_cast<uint16_t>(room_[i].size());
      m.data_off = RTE_PKTMBUF_HEADROOM;
      const std::size_t at = i * kSegmentBytes;
      m.data_len = static_cast<uint16_t>(std::min(kSegmentBytes, pkt.size() - at));
      std::memcpy(room_[i].data() + RTE_PKTMBUF_HEADROOM, pkt.data() + at, m.data_len);
      m.next = i + 1 < n_segs ? &segs_[i + 1] : nullptr;
    }
    segs_[0].pkt_len = static_cast<uint32_t>(pkt.size());
    segs_[0].nb_segs = static_cast<uint16_t>(n_segs);
  }
  const rte_mbuf* head() const { return segs_.data(); }

 private:
  std::vector<rte_mbuf> segs_;
  std::vector<std::vector<uint8_t>> room_;
};

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
    const auto ref_crc = [&] {
      return rte_net_crc_calc(pseudo.data(), static_cast<uint32_t>(pseudo.size()), RTE_NET_CRC32_ETH);
    };
    const uint32_t ref_val = ref_crc();
    for (Crc32Impl impl : {Crc32Impl::kIsal, crc32_best_impl()}) {
      crc32_select_impl(impl);
      const uint32_t ours_val = icrc_compute(covered, layout);
      if (ours_val != ref_val || ours_val != load_le32(f.data() + fi.icrc_offset)) {
        std::fprintf(stderr, "mismatch (%s): ours %08x ref %08x\n", to_string(impl), ours_val, ref_val);
        rc = 1;
      }
    }
    const char* name = payload == 4096 ? "icrc_4k" : payload == 1024 ? "icrc_1k" : payload == 256 ? "icrc_256" : "icrc_64";
    print(name, covered.size(), measure([&] { return icrc_compute(covered, layout); }, ref_crc), alg_name(alg));
    // The transmit path on a TxHeaderCache hit: a copy of the entry's saved
    // state (begin_prefix: pseudo-LRH .. BTH before AckReq, one per
    // implementation, since a state keeps the one it began with), then the
    // rest (AckReq, PSN, RETH, payload) in one update. Against the line
    // above: what the per-frame set-up of begin() cost.
    IcrcAccumulator saved[2];
    for (Crc32Impl impl : {Crc32Impl::kIsal, crc32_best_impl()}) {
      crc32_select_impl(impl);
      saved[impl == Crc32Impl::kIsal ? 0 : 1].begin_prefix(covered, layout);
    }
    crc32_select_impl(crc32_best_impl());
    const auto resumed = [&] {
      IcrcAccumulator acc = saved[crc32_impl() == Crc32Impl::kIsal ? 0 : 1];
      acc.update(covered.subspan(layout.constant_bytes()));
      return acc.value();
    };
    for (Crc32Impl impl : {Crc32Impl::kIsal, crc32_best_impl()}) {
      crc32_select_impl(impl);
      if (resumed() != ref_val) {
        std::fprintf(stderr, "resumed mismatch (%s)\n", to_string(impl));
        rc = 1;
      }
    }
    crc32_select_impl(crc32_best_impl());
    const char* resumed_name = payload == 4096   ? "icrc_resumed_4k"
                               : payload == 1024 ? "icrc_resumed_1k"
                               : payload == 256  ? "icrc_resumed_256"
                                                 : "icrc_resumed_64";
    print(resumed_name, covered.size(), measure(resumed, ref_crc), alg_name(alg));
    if (payload > kSegmentBytes) {
      // The receive side of a frame that arrived in kSegmentBytes mbuf
      // segments (icrc_verify_mbuf's calls without the chain walk): begin,
      // then one update per segment piece, cut at frame offsets k x 2048.
      const auto seg_crc = [&] {
        IcrcAccumulator acc;
        acc.begin(covered, layout);
        std::size_t at = fi.ip_offset + layout.masked_bytes();
        while (at < fi.icrc_offset) {
          const std::size_t end = std::min<std::size_t>(fi.icrc_offset, (at / kSegmentBytes + 1) * kSegmentBytes);
          acc.update(std::span<const uint8_t>(f.data() + at, end - at));
          at = end;
        }
        return acc.value();
      };
      if (seg_crc() != ref_val) {
        std::fprintf(stderr, "segmented mismatch\n");
        rc = 1;
      }
      print(payload == 4096 ? "icrc_4k_seg2k" : "icrc_1k_seg2k", covered.size(), measure(seg_crc, ref_crc),
            alg_name(alg));
    }
    // icrc_verify_mbuf on the frame as a chain of 2 KiB segments (one segment
    // up to 2 KiB): the whole receive-side check, chain walk included.
    const FakeChain chain(f);
    const FrameInfo mfi = parse_mbuf(chain.head());
    if (!mfi.ok() || icrc_verify_mbuf(chain.head(), mfi) != IcrcStatus::kOk) {
      std::fprintf(stderr, "mbuf verify failed\n");
      rc = 1;
    }
    const char* mbuf_name = payload == 4096   ? "icrc_verify_mbuf_4k"
                            : payload == 1024 ? "icrc_verify_mbuf_1k"
                            : payload == 256  ? "icrc_verify_mbuf_256"
                                              : "icrc_verify_mbuf_64";
    print(mbuf_name, covered.size(),
          measure([&] { return static_cast<uint32_t>(icrc_verify_mbuf(chain.head(), mfi)); }, ref_crc),
          alg_name(alg));
    // The bare CRC over the same number of bytes (no masking, no pseudo-LRH).
    const std::span<const uint8_t> bare(pseudo.data(), covered.size());
    const auto ref_bare = [&] { return rte_net_crc_calc(bare.data(), static_cast<uint32_t>(bare.size()), RTE_NET_CRC32_ETH); };
    if (crc32_ieee(0, bare) != ref_bare()) {
      std::fprintf(stderr, "crc32 mismatch\n");
      rc = 1;
    }
    const char* bare_name = payload == 4096 ? "crc32_4k" : payload == 1024 ? "crc32_1k" : payload == 256 ? "crc32_256" : "crc32_64";
    print(bare_name, bare.size(), measure([&] { return crc32_ieee(0, bare); }, ref_bare), alg_name(alg));
  }
  return rc;
}
