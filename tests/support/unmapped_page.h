// unmapped_page: an address whose page is not mapped, for tests that make a
// real SIGSEGV (SEGV_MAPERR), as memif's regions give when they are unmapped
// under a burst (common/dpdk/burst_guard.h). The middle page of three is
// unmapped and its neighbours stay mapped, so no other mapping lands there
// by chance while a single-threaded test uses it. Leaks the two neighbours.
#pragma once

#include <sys/mman.h>

#include <cstdint>

namespace sf::test {

inline volatile uint8_t* unmapped_page() {
  auto* p = static_cast<uint8_t*>(mmap(nullptr, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (p == MAP_FAILED) return nullptr;
  munmap(p + 4096, 4096);
  return p + 4096;
}

}  // namespace sf::test
