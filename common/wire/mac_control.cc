// PAUSE and PFC frame builders (switch.md 3.1, 3.2).
#include "common/wire/mac_control.h"

#include <cstring>

namespace sf::wire {

const char* to_string(MacControlOpcode op) {
  switch (op) {
    case MacControlOpcode::kPause: return "pause";
    case MacControlOpcode::kPfc: return "pfc";
  }
  return "unknown";
}

namespace {
// Zeroes the 60-byte frame and writes the Ethernet header; returns the body pointer.
uint8_t* begin_mac_control(std::span<uint8_t> out, const MacAddr& src) {
  std::memset(out.data(), 0, kMacControlFrameBytes);
  auto* eth = reinterpret_cast<EthHeader*>(out.data());
  eth->dst = kMacControlDst;
  eth->src = src;
  eth->ether_type.set(kEtherTypeMacControl);
  return out.data() + EthHeader::kSize;
}
}  // namespace

std::size_t build_pause_frame(std::span<uint8_t> out, const MacAddr& src, uint16_t pause_quanta) {
  if (out.size() < kMacControlFrameBytes) return 0;
  auto* body = reinterpret_cast<PauseBody*>(begin_mac_control(out, src));
  body->opcode.set(static_cast<uint16_t>(MacControlOpcode::kPause));
  body->pause_quanta.set(pause_quanta);
  return kMacControlFrameBytes;
}

std::size_t build_pfc_frame(std::span<uint8_t> out, const MacAddr& src, uint8_t enable_mask,
                            const std::array<uint16_t, kPfcPriorities>& time_quanta) {
  if (out.size() < kMacControlFrameBytes) return 0;
  auto* body = reinterpret_cast<PfcBody*>(begin_mac_control(out, src));
  body->opcode.set(static_cast<uint16_t>(MacControlOpcode::kPfc));
  body->enable_vector.set(enable_mask);
  for (std::size_t i = 0; i < kPfcPriorities; ++i) body->time_quanta[i].set(time_quanta[i]);
  return kMacControlFrameBytes;
}

}  // namespace sf::wire
