// CRC-32 (IEEE 802.3 / zlib, reflected 0xEDB88320) with the implementation
// chosen once at run time: our VPCLMULQDQ folding kernel (icrc_vpclmul.h)
// where the CPU has AVX2 + VPCLMULQDQ but no AVX-512 (with AVX-512 ISA-L has
// a 512-bit kernel of its own), else ISA-L crc32_gzip_refl. Tests and
// benchmarks may force either with crc32_select_impl().
#pragma once

#include <cstdint>
#include <span>

namespace sf::wire {

enum class Crc32Impl : uint8_t { kIsal, kVpclmul };
const char* to_string(Crc32Impl impl);

bool crc32_impl_supported(Crc32Impl impl);
// The fastest supported implementation (what is used unless selected otherwise).
Crc32Impl crc32_best_impl();
// The implementation in use now.
Crc32Impl crc32_impl();
// Switches every later CRC (including IcrcAccumulator::begin) to `impl`.
// Returns false, changing nothing, if the CPU lacks it. Not thread-safe:
// call at setup (or in a test) while no other thread computes CRCs.
bool crc32_select_impl(Crc32Impl impl);

// crc32_gzip_refl semantics: start with crc = 0, pass the result back in to
// continue over the next piece.
uint32_t crc32_ieee(uint32_t crc, std::span<const uint8_t> bytes);

}  // namespace sf::wire
