// CRC-32 (IEEE 802.3 / zlib, reflected 0xEDB88320) with the implementation
// chosen once at run time: our VPCLMULQDQ folding kernel (icrc_vpclmul.h)
// where the CPU has AVX2 + VPCLMULQDQ but no AVX-512 (with AVX-512 ISA-L has
// a 512-bit kernel of its own), else ISA-L crc32_gzip_refl. Tests and
// benchmarks may force either with crc32_select_impl().
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

namespace sf::wire {

enum class Crc32Impl : uint8_t { kIsal, kVpclmul };
const char* to_string(Crc32Impl impl);

bool crc32_impl_supported(Crc32Impl impl);
// The fastest supported implementation (what is used unless selected otherwise).
Crc32Impl crc32_best_impl();
namespace detail {
// The selection (a Crc32Impl value, or kCrc32Unset until the first use picks
// crc32_best_impl()). Atomic (relaxed: a plain load on x86) because every
// lcore reads it and the first use, on any of them, writes it.
inline constexpr uint8_t kCrc32Unset = 0xFF;
extern std::atomic<uint8_t> g_crc32_impl;
Crc32Impl crc32_impl_first_use();
}  // namespace detail

// The implementation in use now (inline: one load per frame).
inline Crc32Impl crc32_impl() {
  const uint8_t v = detail::g_crc32_impl.load(std::memory_order_relaxed);
  if (v == detail::kCrc32Unset) [[unlikely]] return detail::crc32_impl_first_use();
  return static_cast<Crc32Impl>(v);
}
// Switches every later CRC (including IcrcAccumulator::begin) to `impl`.
// Returns false, changing nothing, if the CPU lacks it. Not thread-safe:
// call at setup (or in a test) while no other thread computes CRCs.
bool crc32_select_impl(Crc32Impl impl);

// crc32_gzip_refl semantics: start with crc = 0, pass the result back in to
// continue over the next piece.
uint32_t crc32_ieee(uint32_t crc, std::span<const uint8_t> bytes);

}  // namespace sf::wire
