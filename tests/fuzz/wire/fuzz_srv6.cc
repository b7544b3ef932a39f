// libFuzzer target: SRv6 uSID helpers on arbitrary addresses (shift keeps the
// block, moves uSIDs left, terminates) and IPv6-in-IPv6 frame parsing with
// the input placed after Eth + an outer IPv6 header with next header 41.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/srv6.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 16) {
    sf::wire::Ipv6Addr da;
    std::memcpy(da.bytes.data(), data, 16);
    const sf::wire::UsidFormat fmt{static_cast<uint8_t>(size > 16 ? (data[16] % 8) * 2 : 4)};
    const auto before = da;
    const uint16_t next = static_cast<uint16_t>(
        fmt.block_bytes + 4 <= 16 ? (da.bytes[fmt.block_bytes + 2] << 8) | da.bytes[fmt.block_bytes + 3] : 0);
    sf::wire::usid_shift(da, fmt);
    if (std::memcmp(da.bytes.data(), before.bytes.data(), fmt.block_bytes) != 0) std::abort();
    if (sf::wire::active_usid(da, fmt) != next) std::abort();
    for (int i = 0; i < 8; ++i) sf::wire::usid_shift(da, fmt);
    if (!sf::wire::usid_args_zero(da, fmt) || sf::wire::active_usid(da, fmt) != 0) std::abort();
  }
  // Eth + outer IPv6 (next header 41, payload length = input size) + input.
  std::vector<uint8_t> f(14 + 40, 0);
  f[12] = 0x86;
  f[13] = 0xDD;
  f[14] = 0x60;
  f[18] = static_cast<uint8_t>(size >> 8);
  f[19] = static_cast<uint8_t>(size);
  f[20] = 41;
  f[21] = 64;
  f.insert(f.end(), data, data + size);
  const auto fi = sf::wire::parse_frame(f);
  if (fi.ok() && (fi.outer_ipv6 == nullptr || fi.ip_offset != 54)) std::abort();
  (void)sf::wire::icrc_verify(f, fi);
  return 0;
}
