// Run-time choice between the VPCLMULQDQ kernel and ISA-L.
#include "common/wire/icrc_crc32.h"

#include <isa-l/crc.h>

#include <atomic>

#include "common/wire/icrc_vpclmul.h"

namespace sf::wire {

namespace {
// kUnset until the first use picks the best one (no static-init order issue).
// Atomic (relaxed: a plain load on x86) because every lcore reads it and the
// first use, on any of them, writes it.
constexpr uint8_t kUnset = 0xFF;
std::atomic<uint8_t> g_impl{kUnset};
}  // namespace

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

Crc32Impl crc32_impl() {
  uint8_t v = g_impl.load(std::memory_order_relaxed);
  if (v == kUnset) [[unlikely]] {
    v = static_cast<uint8_t>(crc32_best_impl());
    g_impl.store(v, std::memory_order_relaxed);
  }
  return static_cast<Crc32Impl>(v);
}

bool crc32_select_impl(Crc32Impl impl) {
  if (!crc32_impl_supported(impl)) return false;
  g_impl.store(static_cast<uint8_t>(impl), std::memory_order_relaxed);
  return true;
}

uint32_t crc32_ieee(uint32_t crc, std::span<const uint8_t> bytes) {
  if (crc32_impl() == Crc32Impl::kVpclmul) {
    return crc32_fold_finish(crc32_fold_update(crc32_fold_from_crc(crc), bytes.data(), bytes.size()));
  }
  return crc32_gzip_refl(crc, bytes.data(), bytes.size());
}

}  // namespace sf::wire
