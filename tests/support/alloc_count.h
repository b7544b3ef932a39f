// Counts the global operator new calls of a test binary (STYLE G6
// allocation tests): it replaces the global allocation functions, so include
// it in exactly one translation unit, of a binary of its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace sf::test {

inline std::atomic<uint64_t> g_allocations{0};

// How many times operator new has run in this process so far.
inline uint64_t allocations() { return g_allocations.load(); }

}  // namespace sf::test

void* operator new(std::size_t n) {
  sf::test::g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
