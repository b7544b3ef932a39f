// MAC Control frames: 802.3x PAUSE (opcode 0x0001) and 802.1Qbb PFC
// (opcode 0x0101), switch.md section 3. Both are 60 bytes without FCS.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "common/wire/byte_order.h"
#include "common/wire/ethernet.h"

namespace sf::wire {

enum class MacControlOpcode : uint16_t { kPause = 0x0001, kPfc = 0x0101 };
const char* to_string(MacControlOpcode op);

inline constexpr std::size_t kMacControlFrameBytes = 60;  // minimum frame, FCS excluded
inline constexpr std::size_t kPfcPriorities = 8;

// Body after the 14-byte Ethernet header of a PAUSE frame.
struct PauseBody {
  static constexpr std::size_t kSize = 4;
  Be16 opcode;       // 0x0001
  Be16 pause_quanta; // units of 512 bit times at the port speed; 0 = resume
};
static_assert(sizeof(PauseBody) == PauseBody::kSize);

// Body after the 14-byte Ethernet header of a PFC frame.
struct PfcBody {
  static constexpr std::size_t kSize = 20;
  static constexpr std::size_t kOffEnableVector = 2;
  static constexpr std::size_t kOffTimes = 4;
  Be16 opcode;          // 0x0101
  Be16 enable_vector;   // reserved byte (0) | e[7:0]; bit n = priority n
  Be16 time_quanta[8];  // time_quanta[n] honoured only when bit n is set; 0 = XON

  constexpr uint8_t enabled_mask() const { return static_cast<uint8_t>(enable_vector.value() & 0xFFu); }
  constexpr bool enabled(std::size_t prio) const { return (enabled_mask() >> prio) & 1u; }
};
static_assert(sizeof(PfcBody) == PfcBody::kSize);

// Writes a 60-byte PAUSE frame (DA 01-80-C2-00-00-01, zero pad) into `out`.
// Returns the bytes written, or 0 when `out` is smaller than 60 bytes.
std::size_t build_pause_frame(std::span<uint8_t> out, const MacAddr& src, uint16_t pause_quanta);

// Writes a 60-byte PFC frame. `enable_mask` bit n enables priority n with
// time_quanta[n]; quanta of disabled priorities are written as given.
// Returns the bytes written, or 0 when `out` is smaller than 60 bytes.
std::size_t build_pfc_frame(std::span<uint8_t> out, const MacAddr& src, uint8_t enable_mask,
                            const std::array<uint16_t, kPfcPriorities>& time_quanta);

}  // namespace sf::wire
