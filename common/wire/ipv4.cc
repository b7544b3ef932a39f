// IPv4 header checksum (RFC 1071) and ECN names.
#include "common/wire/ipv4.h"

#include <bit>
#include <cstring>

namespace sf::wire {

const char* to_string(Ecn e) {
  switch (e) {
    case Ecn::kNotEct: return "not_ect";
    case Ecn::kEct1: return "ect1";
    case Ecn::kEct0: return "ect0";
    case Ecn::kCe: return "ce";
  }
  return "?";
}

namespace {
// One's-complement sum of the header's 16-bit words, skipping the checksum
// word when skip_csum, folded to 16 bits and returned in host order of the
// big-endian value. RFC 1071 2(B): the sum is byte-order independent, so the
// words are added as loaded (32 bits at a time) and swapped once at the end.
uint32_t sum_words(std::span<const uint8_t> h, bool skip_csum) {
  uint64_t sum = 0;
  std::size_t i = 0;
  for (; i + 4 <= h.size(); i += 4) {
    uint32_t w;
    std::memcpy(&w, h.data() + i, 4);
    sum += w;
  }
  for (; i + 1 < h.size(); i += 2) {
    uint16_t w;
    std::memcpy(&w, h.data() + i, 2);
    sum += w;
  }
  if (skip_csum && h.size() >= Ipv4Header::kOffChecksum + 2) {
    uint16_t w;
    std::memcpy(&w, h.data() + Ipv4Header::kOffChecksum, 2);
    sum -= w;
  }
  while (sum >> 16) sum = (sum & 0xFFFFu) + (sum >> 16);
  const auto folded = static_cast<uint16_t>(sum);
  if constexpr (std::endian::native == std::endian::little) return __builtin_bswap16(folded);
  return folded;
}
}  // namespace

uint16_t ipv4_checksum(std::span<const uint8_t> header) {
  return static_cast<uint16_t>(~sum_words(header, true) & 0xFFFFu);
}

bool ipv4_checksum_ok(std::span<const uint8_t> header) { return sum_words(header, false) == 0xFFFFu; }

void ipv4_set_checksum(Ipv4Header& h) {
  const auto* p = reinterpret_cast<const uint8_t*>(&h);
  h.checksum.set(ipv4_checksum(std::span<const uint8_t>(p, h.header_bytes())));
}

}  // namespace sf::wire
