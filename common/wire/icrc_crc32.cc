// Run-time choice between the VPCLMULQDQ kernel and ISA-L.
#include "common/wire/icrc_crc32.h"

#include <isa-l/crc.h>

#include <atomic>

#include "common/wire/icrc_vpclmul.h"

namespace sf::wire {

std::atomic<uint8_t> detail::g_crc32_impl{detail::kCrc32Unset};

const char* to_string(Crc32Impl impl) {
  switch (impl) {
    case Crc32Impl::kIsal: return "isal";
    case Crc32Impl::kVpclmul: return "vpclmul";
  }
  return "?";
}

bool crc32_impl_supported(Crc32Impl impl) {
  switch (impl) {
    case Crc32Impl::kIsal: return true;
    case Crc32Impl::kVpclmul: return crc32_vpclmul_supported();
  }
  return false;
}

// Where the CPU has AVX-512 with VPCLMULQDQ, ISA-L runs its own 512-bit
// kernel (by16), which should beat our 256-bit one; not measured (no such
// CPU here), so this only keeps ISA-L where it was likely the faster.
Crc32Impl crc32_best_impl() {
  static const bool isal_has_512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                                   __builtin_cpu_supports("vpclmulqdq");
  return crc32_vpclmul_supported() && !isal_has_512 ? Crc32Impl::kVpclmul : Crc32Impl::kIsal;
}

Crc32Impl detail::crc32_impl_first_use() {
  const Crc32Impl best = crc32_best_impl();
  g_crc32_impl.store(static_cast<uint8_t>(best), std::memory_order_relaxed);
  return best;
}

bool crc32_select_impl(Crc32Impl impl) {
  if (!crc32_impl_supported(impl)) return false;
  detail::g_crc32_impl.store(static_cast<uint8_t>(impl), std::memory_order_relaxed);
  return true;
}

uint32_t crc32_ieee(uint32_t crc, std::span<const uint8_t> bytes) {
  if (crc32_impl() == Crc32Impl::kVpclmul) {
    return crc32_fold_finish(crc32_fold_update(crc32_fold_from_crc(crc), bytes.data(), bytes.size()));
  }
  return crc32_gzip_refl(crc, bytes.data(), bytes.size());
}

}  // namespace sf::wire
