// libFuzzer target: MAC Control (PAUSE / PFC) parsing. The input is placed
// after a fixed Ethernet header with EtherType 0x8808 (optionally VLAN-tagged)
// so every input exercises the MAC Control path; builders are round-tripped.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/wire/frame_parser.h"
#include "common/wire/mac_control.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool vlan = data[0] & 1;
  std::vector<uint8_t> f = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 2, 0, 0, 0, 0, 1};
  if (vlan) f.insert(f.end(), {0x81, 0x00, 0x60, 0x01});
  f.insert(f.end(), {0x88, 0x08});
  f.insert(f.end(), data + 1, data + size);
  const auto fi = sf::wire::parse_frame(f);
  if (fi.ok() && fi.kind != sf::wire::FrameKind::kMacControl) std::abort();
  if (fi.pfc) {
    std::array<uint16_t, 8> q{};
    for (std::size_t i = 0; i < 8; ++i) q[i] = fi.pfc->time_quanta[i].value();
    uint8_t out[60];
    if (sf::wire::build_pfc_frame(out, fi.eth->src, fi.pfc->enabled_mask(), q) != 60) std::abort();
    const auto back = sf::wire::parse_frame(out);
    if (!back.ok() || back.pfc->enabled_mask() != fi.pfc->enabled_mask() ||
        std::memcmp(back.pfc->time_quanta, fi.pfc->time_quanta, sizeof(q)) != 0) {
      std::abort();
    }
  }
  if (fi.pause) {
    uint8_t out[60];
    sf::wire::build_pause_frame(out, fi.eth->src, fi.pause->pause_quanta.value());
    if (sf::wire::parse_frame(out).pause->pause_quanta.value() != fi.pause->pause_quanta.value()) std::abort();
  }
  return 0;
}
