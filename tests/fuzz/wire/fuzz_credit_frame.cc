// libFuzzer target: credit update frame parsing (common/wire/credit_frame.h).
// Any input is parsed as a whole frame; a frame that parses must rebuild to
// the same header and entries, and nothing may be read past the input.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "common/wire/credit_frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Copy into an exact-size buffer so ASan sees any read past the input.
  const std::vector<uint8_t> f(data, data + size);
  const auto fi = sf::wire::parse_credit_frame(f);
  if (!fi.ok()) {
    if (!fi.entries.empty()) std::abort();
    return 0;
  }
  std::array<sf::wire::CreditGrant, sf::wire::kCreditFcMaxEntries> g{};
  for (std::size_t i = 0; i < fi.entries.size(); ++i) g[i] = {fi.entries[i].vl, fi.entries[i].granted_total.value()};
  std::array<uint8_t, sf::wire::kCreditFrameMaxBytes> out{};
  const auto* eth = reinterpret_cast<const sf::wire::EthHeader*>(f.data());
  const std::size_t n = sf::wire::build_credit_frame(out, eth->src, {g.data(), fi.entries.size()});
  if (n != sf::wire::credit_frame_bytes(fi.entries.size())) std::abort();
  const auto back = sf::wire::parse_credit_frame({out.data(), n});
  if (!back.ok() || back.entries.size() != fi.entries.size()) std::abort();
  for (std::size_t i = 0; i < fi.entries.size(); ++i) {
    if (back.entries[i].vl != fi.entries[i].vl ||
        back.entries[i].granted_total.value() != fi.entries[i].granted_total.value()) {
      std::abort();
    }
  }
  return 0;
}
