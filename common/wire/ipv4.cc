// IPv4 header checksum (RFC 1071) and ECN names.
#include "common/wire/ipv4.h"

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
// Sum of 16-bit big-endian words, skipping the checksum word when skip_csum.
uint32_t sum_words(std::span<const uint8_t> h, bool skip_csum) {
  uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
    if (skip_csum && i == Ipv4Header::kOffChecksum) continue;
    sum += (static_cast<uint32_t>(h[i]) << 8) | h[i + 1];
  }
  while (sum >> 16) sum = (sum & 0xFFFFu) + (sum >> 16);
  return sum;
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
