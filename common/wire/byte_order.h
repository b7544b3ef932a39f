// Big-endian field types for wire headers (STYLE G9): Be16/Be32/Be64 hold the
// bytes exactly as on the wire (alignment 1, so a header struct can be laid
// over any byte offset), convert only through an explicit constructor and
// .value(), and never implicitly. Also 24-bit and little-endian helpers.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace sf::wire {

namespace detail {
// Byte-swapped to host order. At run time one unaligned load or store and a
// bswap: GCC does not always fold the byte loop into that (in the NIC's
// receive path every Be64 / Be32 read was 20-30 instructions of shifts).
template <typename T>
inline T to_from_be(T v) {
  if constexpr (std::endian::native == std::endian::big || sizeof(T) == 1) {
    return v;
  } else if constexpr (sizeof(T) == 2) {
    return static_cast<T>(__builtin_bswap16(static_cast<uint16_t>(v)));
  } else if constexpr (sizeof(T) == 4) {
    return static_cast<T>(__builtin_bswap32(static_cast<uint32_t>(v)));
  } else {
    return static_cast<T>(__builtin_bswap64(static_cast<uint64_t>(v)));
  }
}
template <typename T, std::size_t N>
constexpr T load_be(const uint8_t (&b)[N]) {
  if constexpr (N == sizeof(T)) {
    if (!std::is_constant_evaluated()) {
      T v;
      __builtin_memcpy(&v, b, N);
      return to_from_be(v);
    }
  }
  T v = 0;
  for (std::size_t i = 0; i < N; ++i) v = static_cast<T>((v << 8) | b[i]);
  return v;
}
template <typename T, std::size_t N>
constexpr void store_be(uint8_t (&b)[N], T v) {
  if constexpr (N == sizeof(T)) {
    if (!std::is_constant_evaluated()) {
      const T w = to_from_be(v);
      __builtin_memcpy(b, &w, N);
      return;
    }
  }
  for (std::size_t i = N; i-- > 0;) {
    b[i] = static_cast<uint8_t>(v & 0xFF);
    v = static_cast<T>(v >> 8);
  }
}
}  // namespace detail

// A big-endian unsigned integer of sizeof(T) bytes stored in wire order.
template <typename T>
class BigEndian {
 public:
  constexpr BigEndian() = default;
  constexpr explicit BigEndian(T host) { detail::store_be(b_, host); }
  constexpr T value() const { return detail::load_be<T>(b_); }
  constexpr void set(T host) { detail::store_be(b_, host); }
  constexpr const uint8_t* bytes() const { return b_; }
  constexpr bool operator==(const BigEndian& o) const { return value() == o.value(); }

 private:
  uint8_t b_[sizeof(T)] = {};
};

using Be16 = BigEndian<uint16_t>;
using Be32 = BigEndian<uint32_t>;
using Be64 = BigEndian<uint64_t>;
static_assert(sizeof(Be16) == 2 && alignof(Be16) == 1);
static_assert(sizeof(Be32) == 4 && alignof(Be32) == 1);
static_assert(sizeof(Be64) == 8 && alignof(Be64) == 1);

// A 24-bit big-endian value (BTH DestQP/PSN, AETH MSN, DETH source QP).
class Be24 {
 public:
  constexpr Be24() = default;
  constexpr explicit Be24(uint32_t host) { set(host); }
  constexpr uint32_t value() const { return detail::load_be<uint32_t>(b_); }
  // Keeps the low 24 bits of `host`.
  constexpr void set(uint32_t host) { detail::store_be(b_, host & 0xFFFFFFu); }
  constexpr bool operator==(const Be24& o) const { return value() == o.value(); }

 private:
  uint8_t b_[3] = {};
};
static_assert(sizeof(Be24) == 3 && alignof(Be24) == 1);

// Little-endian 32-bit load/store at a raw pointer (the ICRC is stored LE).
constexpr uint32_t load_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
constexpr void store_le32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}

}  // namespace sf::wire
