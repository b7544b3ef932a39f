// SRv6 uSID active-uSID read and uN shift (RFC 9800 NEXT-C-SID).
#include "common/wire/srv6.h"

#include <cstring>

namespace sf::wire {

namespace {
constexpr std::size_t kUsidBytes = 2;
}  // namespace

uint16_t active_usid(const Ipv6Addr& da, UsidFormat f) {
  const std::size_t b = f.block_bytes;
  if (b + kUsidBytes > da.bytes.size()) return 0;
  return static_cast<uint16_t>((da.bytes[b] << 8) | da.bytes[b + 1]);
}

bool usid_args_zero(const Ipv6Addr& da, UsidFormat f) {
  for (std::size_t i = f.block_bytes + kUsidBytes; i < da.bytes.size(); ++i) {
    if (da.bytes[i] != 0) return false;
  }
  return true;
}

void usid_shift(Ipv6Addr& da, UsidFormat f) {
  const std::size_t b = f.block_bytes;
  if (b + kUsidBytes > da.bytes.size()) return;
  std::memmove(da.bytes.data() + b, da.bytes.data() + b + kUsidBytes, da.bytes.size() - b - kUsidBytes);
  da.bytes[14] = 0;
  da.bytes[15] = 0;
}

bool make_usid_address(Ipv6Addr& da, std::span<const uint8_t> block, std::span<const uint16_t> usids,
                       UsidFormat f) {
  if (block.size() != f.block_bytes || block.size() + usids.size() * kUsidBytes > da.bytes.size()) return false;
  Ipv6Addr out{};
  std::memcpy(out.bytes.data(), block.data(), block.size());
  std::size_t off = block.size();
  for (uint16_t u : usids) {
    out.bytes[off++] = static_cast<uint8_t>(u >> 8);
    out.bytes[off++] = static_cast<uint8_t>(u);
  }
  da = out;
  return true;
}

}  // namespace sf::wire
