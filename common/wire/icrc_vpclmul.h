// CRC-32 (IEEE 802.3 / zlib, reflected polynomial 0xEDB88320) by carry-less
// folding with 256-bit VPCLMULQDQ (AVX2, no AVX-512 needed). Callers use
// icrc_crc32.h, which picks this kernel or ISA-L at run time.
//
// Representation (all "reflected", i.e. bit 0 of byte 0 is the highest power):
// a 16-byte block loaded little-endian is the polynomial sum_j bit_j x^(127-j).
// The running state is a Crc32Fold: 128 bits F, not reduced, such that the
// CRC register after the bytes seen so far is F * x^32 mod P. Appending bytes
// only folds (no reduction); crc32_fold_finish() reduces once (Barrett).
// A fold by d bytes multiplies a block by x^(8d): with H = a x^64 + b (a = the
// low quadword), H x^(8d) = a x^(8d+64) + b x^(8d), and each product is one
// PCLMULQDQ by the constant crc32_mul_const(e) = reflect64(x^(e-1) mod P)
// (the -1 makes up for the product of two reflected 64-bit values landing
// one bit low in the 128-bit result).
#pragma once

#include <cstddef>
#include <cstdint>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace sf::wire {

// The 128-bit remainder, kept in a vector register between calls (passed and
// returned by value in xmm0: no round trip through general registers).
#if defined(__x86_64__)
using Crc32Fold = __m128i;
#else
struct Crc32Fold {
  uint64_t q[2];
};
#endif

namespace crc32_const {

inline constexpr uint32_t kPolyRefl = 0xEDB88320u;  // x^32 mod P, bit j <-> x^(31-j)

// x^e mod P as a reflected 32-bit register (bit j <-> x^(31-j)); e may be negative.
constexpr uint32_t xpow_mod_refl(int e) {
  uint32_t r = 0x80000000u;  // x^0
  for (; e > 0; --e) r = (r >> 1) ^ ((r & 1u) != 0 ? kPolyRefl : 0u);          // * x
  for (; e < 0; ++e) r = (r << 1) ^ ((r & 0x80000000u) != 0 ? 0xDB710641u : 0u);  // * x^-1
  return r;
}

// Multiplier for "times x^e": reflect64(x^(e-1) mod P) (see the file comment).
constexpr uint64_t mul_const(int e) { return static_cast<uint64_t>(xpow_mod_refl(e - 1)) << 32; }

// Barrett: mu = floor(x^64 / P) (degree 32) as reflect64 (bit j <-> x^(63-j)).
constexpr uint64_t barrett_mu_refl() {
  // Long division in the normal domain (bit i <-> x^i) over 65-bit x^64.
  const uint64_t p_low = 0x04C11DB7u;  // P without x^32
  uint64_t rem_hi = 1, rem = 0;        // x^64 = rem_hi:rem (bit 64 in rem_hi)
  uint64_t q = 0;
  for (int i = 64; i >= 32; --i) {
    const bool bit = i == 64 ? rem_hi != 0 : ((rem >> i) & 1u) != 0;
    if (!bit) continue;
    q |= uint64_t{1} << (i - 32);
    if (i == 64) rem_hi = 0;
    else rem ^= uint64_t{1} << i;
    rem ^= p_low << (i - 32);
  }
  uint64_t r = 0;
  for (int i = 0; i < 64; ++i) {
    if (((q >> i) & 1u) != 0) r |= uint64_t{1} << (63 - i);
  }
  return r;
}

// P (degree 32) with bit m <-> x^(32-m).
inline constexpr uint64_t kPolyRefl33 = (static_cast<uint64_t>(kPolyRefl) << 1) | 1u;

}  // namespace crc32_const

// True if the CPU has AVX2, PCLMULQDQ and VPCLMULQDQ (checked once).
bool crc32_vpclmul_supported();

// The state before any byte with CRC register init = ~crc (crc in the
// ISA-L / zlib convention: 0 to start).
Crc32Fold crc32_fold_from_crc(uint32_t crc);
// The state after a 0xFFFFFFFF register (a CRC's start) followed by the RoCE
// pseudo-LRH (8 x 0xFF) and then 24 <= n < 264 bytes at p, each OR-ed with
// or_mask[i] first (or_mask has n bytes): the masked ICRC header block in one
// go, without copying it.
Crc32Fold crc32_fold_pseudo_lrh_or(const uint8_t* p, std::size_t n, const uint8_t* or_mask);
// Appends bytes (any length, any alignment). Requires crc32_vpclmul_supported().
Crc32Fold crc32_fold_update(Crc32Fold f, const uint8_t* p, std::size_t n);
// The CRC in the ISA-L / zlib convention (register complemented).
uint32_t crc32_fold_finish(Crc32Fold f);

}  // namespace sf::wire
