// CRC-32 folding kernel with VPCLMULQDQ on ymm (see icrc_vpclmul.h for the
// representation). Every function that uses the instructions carries
// SF_CRC_TARGET, so the file builds with the project's baseline flags (and in the
// fuzz build) and only runs the kernel where the CPU has it.
#include "common/wire/icrc_vpclmul.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>

#define SF_CRC_TARGET __attribute__((target("avx2,pclmul,vpclmulqdq,sse4.1")))

namespace sf::wire {

namespace {

using crc32_const::mul_const;

// Fold-by-d constants {low quadword: x^(8d+64), high quadword: x^(8d)}.
constexpr uint64_t fold_lo(int d_bytes) { return mul_const(8 * d_bytes + 64); }
constexpr uint64_t fold_hi(int d_bytes) { return mul_const(8 * d_bytes); }

// Accumulators of the wide loop: 4 ymm = 128 bytes per iteration.
constexpr int kWideBytes = 128;
constexpr std::size_t kWide = kWideBytes;

// pshufb masks: a 16-byte load at kShift + n (n = 0..16) moves a block up by
// 16 - n bytes (zero below; its high bits then select the bytes below
// 16 - n for a blend); at kShift + 16 + n it moves a block down by n bytes.
alignas(64) constexpr uint8_t kShift[48] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12,   13,   14,   15,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};

// Bytes 16-r..15 of a block (r = 1..15) kept, the rest zeroed: AND with a
// 16-byte load at kKeepLast + r.
alignas(32) constexpr uint8_t kKeepLast[32] = {
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

// Fold-by-d constants for every byte distance d < kDistCount, one 16-byte
// row each as a block's fold multiplier {low quadword: fold_lo(d), high
// quadword: fold_hi(d)}: the products of a block that ends d bytes before the
// end of the data land where they belong in one step, so every block of a
// short piece (and every accumulator lane of the wide loop, plus the bytes
// after it) folds to the end at once instead of one after another.
constexpr int kDistCount = 256;
struct DistTable {
  alignas(64) uint64_t k[kDistCount][2];
};
constexpr DistTable make_dist_table() {
  DistTable t{};
  // r = x^e mod P (reflected) for e = -1, 0, 1, ...: fold_hi(d) = mul_const(8d)
  // = r(8d - 1) << 32, fold_lo(d) = mul_const(8d + 64) = r(8d + 63) << 32.
  uint32_t r = crc32_const::xpow_mod_refl(-1);
  for (int e = -1; e <= 8 * (kDistCount - 1) + 63; ++e) {
    if ((e + 1) % 8 == 0 && (e + 1) / 8 < kDistCount) t.k[(e + 1) / 8][1] = static_cast<uint64_t>(r) << 32;
    if (e >= 63 && (e - 63) % 8 == 0) t.k[(e - 63) / 8][0] = static_cast<uint64_t>(r) << 32;
    r = (r >> 1) ^ ((r & 1u) != 0 ? crc32_const::kPolyRefl : 0u);
  }
  return t;
}
constexpr DistTable kDist = make_dist_table();

// The fold constants, computed at compile time (the template parameter forces it).
template <int kDBytes>
SF_CRC_TARGET inline __m128i k128() {
  constexpr uint64_t kLo = fold_lo(kDBytes), kHi = fold_hi(kDBytes);
  return _mm_set_epi64x(static_cast<long long>(kHi), static_cast<long long>(kLo));
}
template <int kDBytes>
SF_CRC_TARGET inline __m256i k256() {
  constexpr uint64_t kLo = fold_lo(kDBytes), kHi = fold_hi(kDBytes);
  return _mm256_set_epi64x(static_cast<long long>(kHi), static_cast<long long>(kLo), static_cast<long long>(kHi),
                           static_cast<long long>(kLo));
}
constexpr uint64_t kMul128 = mul_const(128);
constexpr uint64_t kMul96 = mul_const(96);
constexpr uint64_t kMul64 = mul_const(64);
constexpr uint64_t kMulInv32 = mul_const(-32);
constexpr uint64_t kBarrettMu = crc32_const::barrett_mu_refl();

// x * x^(8d) (d given by k), congruent mod P, still 128 bits.
SF_CRC_TARGET inline __m128i fold(__m128i x, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}
SF_CRC_TARGET inline __m256i fold(__m256i x, __m256i k) {
  return _mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00), _mm256_clmulepi64_epi128(x, k, 0x11));
}

SF_CRC_TARGET inline __m128i load16(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
SF_CRC_TARGET inline __m256i load32(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Multiplier of a block d bytes from the end (d < kDistCount); of a pair of
// blocks (low lane d_lo, high lane d_hi bytes from the end).
SF_CRC_TARGET inline __m128i kdist(std::size_t d) {
  return _mm_load_si128(reinterpret_cast<const __m128i*>(kDist.k[d]));
}
SF_CRC_TARGET inline __m256i kdist2(std::size_t d_lo, std::size_t d_hi) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(kdist(d_lo)), kdist(d_hi), 1);
}

// n < 16 bytes at p, left-aligned in a block (rest zero), without reading past p + n.
SF_CRC_TARGET inline __m128i load_partial(const uint8_t* p, std::size_t n) {
  uint64_t lo = 0, hi = 0;
  if (n >= 8) {
    std::memcpy(&lo, p, 8);
    if (n > 8) {
      std::memcpy(&hi, p + n - 8, 8);
      hi >>= 8 * (16 - n);
    }
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    lo = a | static_cast<uint64_t>(b) << (8 * (n - 4));
  } else if (n > 0) {
    lo = p[0] | static_cast<uint64_t>(p[n / 2]) << (8 * (n / 2)) | static_cast<uint64_t>(p[n - 1]) << (8 * (n - 1));
  }
  return _mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo));
}

// x followed by n (< 16) bytes given as `tail`, whose bytes 16-n..15 hold them
// (the rest is ignored): x x^(8n) + tail, as a 128-bit block.
SF_CRC_TARGET inline __m128i shift_in(__m128i x, __m128i tail, std::size_t n) {
  const __m128i up = load16(kShift + n);         // high bit set below 16 - n
  const __m128i down = load16(kShift + 16 + n);  // x's bytes n..15 to 0..15-n
  const __m128i overflow = _mm_shuffle_epi8(x, up);
  const __m128i rest = _mm_blendv_epi8(tail, _mm_shuffle_epi8(x, down), up);
  return _mm_xor_si128(fold(overflow, k128<16>()), rest);
}

// x followed by n >= 16 bytes at p (each OR-ed with mask[i] when kOr).
template <bool kOr>
SF_CRC_TARGET inline __m128i load16_or(const uint8_t* p, const uint8_t* mask, std::size_t off) {
  const __m128i v = load16(p + off);
  if constexpr (kOr) return _mm_or_si128(v, load16(mask + off));
  return v;
}

template <bool kOr>
SF_CRC_TARGET inline __m256i load32_or(const uint8_t* p, const uint8_t* mask, std::size_t off) {
  const __m256i v = load32(p + off);
  if constexpr (kOr) return _mm256_or_si256(v, load32(mask + off));
  return v;
}

// The n bytes at p (each OR-ed with mask[i] when kOr) as a polynomial,
// folded to 128 bits: every 16-byte block by its own distance to the end (one
// clmul level, all independent), the last n mod 16 bytes as they are.
// Requires n < kDistCount + 16 and, if n mod 16 != 0, 16 readable bytes
// before p + n (the last partial block is loaded as the 16 bytes ending there).
template <bool kOr>
SF_CRC_TARGET inline __m128i fold_to_end(const uint8_t* p, std::size_t n, const uint8_t* mask) {
  __m256i acc2 = _mm256_setzero_si256();
  std::size_t off = 0;
  for (; off + 32 <= n; off += 32) {
    acc2 = _mm256_xor_si256(acc2, fold(load32_or<kOr>(p, mask, off), kdist2(n - 16 - off, n - 32 - off)));
  }
  __m128i acc = _mm_xor_si128(_mm256_castsi256_si128(acc2), _mm256_extracti128_si256(acc2, 1));
  if (off + 16 <= n) {
    acc = _mm_xor_si128(acc, fold(load16_or<kOr>(p, mask, off), kdist(n - 16 - off)));
    off += 16;
  }
  if (off < n) {
    // The 16 bytes ending at p + n (from before p when n < 16: p + n - 16,
    // not p + (n - 16), which would wrap), only their last n - off kept.
    __m128i last = load16(p + n - 16);
    if constexpr (kOr) last = _mm_or_si128(last, load16(mask + n - 16));
    acc = _mm_xor_si128(acc, _mm_and_si128(last, load16(kKeepLast + (n - off))));
  }
  return acc;
}

// x followed by 16 <= n < kDistCount bytes: x x^(8n) + the bytes, in one
// level. x is one more block (at p - 16); with an odd number of whole blocks
// in p it shares a ymm multiply with the first one, so that fold_to_end
// sees only pairs (every VPCLMULQDQ does two blocks' work: the unit's
// throughput, not latency, bounds these calls).
template <bool kOr>
SF_CRC_TARGET inline __m128i update_short(__m128i x, const uint8_t* p, std::size_t n, const uint8_t* mask) {
  if ((n / 16) % 2 == 0) return _mm_xor_si128(fold(x, kdist(n)), fold_to_end<kOr>(p, n, mask));
  const __m256i x_b0 = _mm256_inserti128_si256(_mm256_castsi128_si256(x), load16_or<kOr>(p, mask, 0), 1);
  const __m256i f = fold(x_b0, kdist2(n, n - 16));
  const __m128i head = _mm_xor_si128(_mm256_castsi256_si128(f), _mm256_extracti128_si256(f, 1));
  if (n == 16) return head;
  return _mm_xor_si128(head, fold_to_end<kOr>(p + 16, n - 16, kOr ? mask + 16 : nullptr));
}

SF_CRC_TARGET __m128i update_any(__m128i x, const uint8_t* p, std::size_t n) {
  if (n < 16) {
    if (n == 0) return x;
    return shift_in(x, _mm_shuffle_epi8(load_partial(p, n), load16(kShift + n)), n);
  }
  if (n < kWide) return update_short<false>(x, p, n, nullptr);
  // x precedes p: folding it by 16 bytes lines it up with p's first block.
  const __m256i x_first = _mm256_zextsi128_si256(fold(x, k128<16>()));
  __m256i a0 = _mm256_xor_si256(load32(p), x_first);
  __m256i a1 = load32(p + 32);
  __m256i a2 = load32(p + 64);
  __m256i a3 = load32(p + 96);
  const __m256i k_wide = k256<kWideBytes>();
  std::size_t off = kWide;
  for (; off + kWide <= n; off += kWide) {
    a0 = _mm256_xor_si256(fold(a0, k_wide), load32(p + off));
    a1 = _mm256_xor_si256(fold(a1, k_wide), load32(p + off + 32));
    a2 = _mm256_xor_si256(fold(a2, k_wide), load32(p + off + 64));
    a3 = _mm256_xor_si256(fold(a3, k_wide), load32(p + off + 96));
  }
  // The 8 lanes (16-byte blocks at off - 128 + 16 j) fold straight to the
  // end, past the rem < 128 bytes still to come, which fold_to_end adds.
  const std::size_t rem = n - off;
  const __m256i lanes = _mm256_xor_si256(
      _mm256_xor_si256(fold(a0, kdist2(rem + 112, rem + 96)), fold(a1, kdist2(rem + 80, rem + 64))),
      _mm256_xor_si256(fold(a2, kdist2(rem + 48, rem + 32)), fold(a3, kdist2(rem + 16, rem))));
  x = _mm_xor_si128(_mm256_castsi256_si128(lanes), _mm256_extracti128_si256(lanes, 1));
  if (rem == 0) return x;
  return _mm_xor_si128(x, fold_to_end<false>(p + off, rem, nullptr));
}

// F x^32 mod P, as the reflected register.
SF_CRC_TARGET uint32_t reduce(__m128i x) {
  // x = a x^64 + b with a = ah x^32 + al, b = bh x^32 + bl (32-bit halves; ah
  // is a's low dword). x x^32 = ah x^128 + al x^96 + bh x^64 + bl x^32: three
  // independent 32 x 32-bit products, each below x^64, plus bl x^32 as is.
  // A half moved to bits 32..63 of its quadword is that half as a reflected
  // 64-bit value, and its product lands in the high quadword.
  const __m128i halves_hi = _mm_slli_epi64(x, 32);  // {ah, bh}
  const __m128i halves_lo = _mm_and_si128(x, _mm_set1_epi64x(static_cast<long long>(0xFFFFFFFF00000000ull)));  // {al, bl}
  const __m128i k_ab = _mm_set_epi64x(static_cast<long long>(kMul64), static_cast<long long>(kMul128));
  const __m128i k_al = _mm_cvtsi64_si128(static_cast<long long>(kMul96));
  const __m128i z = _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(halves_hi, k_ab, 0x00), _mm_clmulepi64_si128(halves_hi, k_ab, 0x11)),
      _mm_xor_si128(_mm_clmulepi64_si128(halves_lo, k_al, 0x00), _mm_srli_epi64(x, 32)));
  // z's high quadword: bit j <-> x^(63-j); zh = its low dword, zl = its high dword.
  // Barrett: q = floor(zh * mu / x^32), remainder = zl + (q P mod x^32).
  // The whole quadword times mu: zl's part lands below q (zl mu has degree
  // < 64), so no shift isolates zh first; q comes out one bit low (bits
  // 31..62), which P shifted up by one (P x^-1) makes up for in the second
  // product.
  const __m128i consts = _mm_set_epi64x(static_cast<long long>(crc32_const::kPolyRefl33 << 1),
                                        static_cast<long long>(kBarrettMu));
  const __m128i q = _mm_and_si128(_mm_clmulepi64_si128(z, consts, 0x01),
                                  _mm_set_epi64x(0, static_cast<long long>(0x7FFFFFFF80000000ull)));
  const __m128i qp = _mm_clmulepi64_si128(q, consts, 0x10);  // q P mod x^32 in dword 2
  return static_cast<uint32_t>(_mm_extract_epi32(_mm_xor_si128(qp, _mm_srli_si128(z, 4)), 2));
}

}  // namespace

bool crc32_vpclmul_supported() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul") &&
                         __builtin_cpu_supports("vpclmulqdq");
  return ok;
}


SF_CRC_TARGET Crc32Fold crc32_fold_from_crc(uint32_t crc) {
  // The register ~crc stands for virtual preceding bytes V with V x^32 = ~crc:
  // V = ~crc * x^-32, one multiply (not reduced).
  const uint64_t r = static_cast<uint64_t>(~crc) << 32;  // bit j <-> x^(63-j)
  return _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(r)),
                              _mm_cvtsi64_si128(static_cast<long long>(kMulInv32)), 0x00);
}

SF_CRC_TARGET Crc32Fold crc32_fold_update(Crc32Fold f, const uint8_t* p, std::size_t n) { return update_any(f, p, n); }

SF_CRC_TARGET Crc32Fold crc32_fold_pseudo_lrh_or(const uint8_t* p, std::size_t n, const uint8_t* or_mask) {
  // First block: 0000 0000 FFFF FFFF (the register XOR-ed into 8 x 0xFF) then
  // p[0..7]; the rest from p + 8 (a multiple of 16 for IPv4 without options:
  // 8 + 40 = 3 blocks).
  const __m128i head = _mm_or_si128(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)),
                                    _mm_loadl_epi64(reinterpret_cast<const __m128i*>(or_mask)));
  const __m128i first = _mm_unpacklo_epi64(_mm_set_epi64x(0, static_cast<long long>(0xFFFFFFFF00000000ull)), head);
  return update_short<true>(first, p + 8, n - 8, or_mask + 8);
}

SF_CRC_TARGET uint32_t crc32_fold_finish(Crc32Fold f) { return ~reduce(f); }

}  // namespace sf::wire

#else  // not x86-64: never supported, so none of these is ever called.

namespace sf::wire {
bool crc32_vpclmul_supported() { return false; }
Crc32Fold crc32_fold_pseudo_lrh_or(const uint8_t*, std::size_t, const uint8_t*) { return {}; }
Crc32Fold crc32_fold_from_crc(uint32_t) { return {}; }
Crc32Fold crc32_fold_update(Crc32Fold f, const uint8_t*, std::size_t) { return f; }
uint32_t crc32_fold_finish(Crc32Fold) { return 0; }
}  // namespace sf::wire

#endif
