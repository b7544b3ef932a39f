// libFuzzer target: ICRC compute/verify on arbitrary bytes and layouts, and
// the incremental accumulator over arbitrary splits == one-shot result, and
// the default CRC implementation (VPCLMULQDQ where available) == ISA-L.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/icrc_crc32.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  // Byte 0 picks the layout, byte 1 the split point; the rest is "IP onward".
  const uint8_t sel = data[0];
  const std::span<const uint8_t> covered(data + 2, size - 2);
  const sf::wire::IcrcLayout layout{(sel & 1) ? sf::wire::IpVersion::kV6 : sf::wire::IpVersion::kV4,
                                    (sel & 1) ? 40u : 20u + 4u * ((sel >> 1) & 0x0Fu)};
  const uint32_t whole = sf::wire::icrc_compute(covered, layout);
  sf::wire::crc32_select_impl(sf::wire::Crc32Impl::kIsal);
  const uint32_t whole_isal = sf::wire::icrc_compute(covered, layout);
  sf::wire::crc32_select_impl(sf::wire::crc32_best_impl());
  if (whole_isal != whole) std::abort();
  sf::wire::IcrcAccumulator acc;
  if (acc.begin(covered, layout)) {
    const auto rest = covered.subspan(layout.masked_bytes());
    const std::size_t cut = rest.empty() ? 0 : data[1] % (rest.size() + 1);
    acc.update(rest.first(cut));
    acc.update(rest.subspan(cut));
    if (acc.value() != whole) std::abort();
  }
  // Frame-level verify on the raw input as a whole frame.
  const std::span<const uint8_t> frame(data, size);
  const auto fi = sf::wire::parse_frame(frame, sf::wire::ParseOptions{.verify_ipv4_checksum = false});
  (void)sf::wire::icrc_verify(frame, fi);
  return 0;
}
