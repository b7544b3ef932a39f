// libFuzzer target: ICRC compute/verify on arbitrary bytes and layouts, and
// the incremental accumulator over arbitrary splits == one-shot result, and
// the default CRC implementation (VPCLMULQDQ where available) == ISA-L: the
// ICRC whole and in pieces, and the bare CRC-32 of the input cut into up to
// 8 pieces of fuzzer-chosen lengths (every kernel path: < 16 bytes, the
// short one-level fold, the wide loop and its remainders), also repeated to
// reach the multi-KiB lengths of MTU and jumbo frames.
#include <isa-l/crc.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/icrc_crc32.h"
#include "common/wire/icrc_vpclmul.h"

namespace {

// The bare CRC of `bytes` with the fold kernel, fed in pieces whose lengths
// come from `cuts` (each byte a length, 0 = stop early and take the rest).
uint32_t crc_in_pieces(std::span<const uint8_t> bytes, std::span<const uint8_t> cuts, uint32_t init) {
  sf::wire::Crc32Fold f = sf::wire::crc32_fold_from_crc(init);
  std::size_t at = 0;
  for (uint8_t c : cuts) {
    if (c == 0 || at >= bytes.size()) break;
    // Lengths 1..255, scaled up to multi-KiB pieces when the top bit is set.
    const std::size_t want = (c & 0x80) != 0 ? static_cast<std::size_t>(c & 0x7F) * 67 : c;
    const std::size_t n = std::min(want, bytes.size() - at);
    f = sf::wire::crc32_fold_update(f, bytes.data() + at, n);
    at += n;
  }
  f = sf::wire::crc32_fold_update(f, bytes.data() + at, bytes.size() - at);
  return sf::wire::crc32_fold_finish(f);
}

}  // namespace

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
  if (sf::wire::crc32_vpclmul_supported()) {
    // The last min(8, size / 4) bytes give the piece lengths; the whole input
    // is the data, once and (when byte 1 is odd) repeated to over 4 KiB.
    const std::span<const uint8_t> all(data, size);
    const std::size_t n_cuts = std::min<std::size_t>(8, size / 4);
    const auto cuts = all.last(n_cuts);
    const uint32_t init = static_cast<uint32_t>(sel) * 0x01000193u;
    if (crc_in_pieces(all, cuts, init) != crc32_gzip_refl(init, data, size)) std::abort();
    if ((data[1] & 1) != 0 && size < 4200) {
      std::vector<uint8_t> big;
      while (big.size() < 4200) big.insert(big.end(), data, data + size);
      if (crc_in_pieces(big, cuts, init) != crc32_gzip_refl(init, big.data(), big.size())) std::abort();
    }
  }
  // Frame-level verify on the raw input as a whole frame.
  const std::span<const uint8_t> frame(data, size);
  const auto fi = sf::wire::parse_frame(frame, sf::wire::ParseOptions{.verify_ipv4_checksum = false});
  (void)sf::wire::icrc_verify(frame, fi);
  return 0;
}
