// RNR NAK timer codes (endpoint.md 1.5, rxe rnrnak_usec[]): the 5-bit code a
// responder puts in an RNR NAK and the delay the requester waits.
#pragma once

#include <cstdint>

#include "common/time.h"

namespace sf::nic::rc {

// Delay of RNR timer code `code` (0..31; 0 = 655.36 ms).
constexpr TimeNs rnr_delay(uint8_t code) {
  constexpr int64_t kUs[32] = {655360, 10,    20,    30,    40,    60,     80,     120,    160,    240,   320,
                               480,    640,   960,   1280,  1920,  2560,   3840,   5120,   7680,   10240, 15360,
                               20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};
  return TimeNs(kUs[code & 31u] * 1000);
}

// Retransmission timeout of the 5-bit `timeout` attribute: 4.096 us x 2^t;
// TimeNs::max() for 0 (infinite).
constexpr TimeNs retx_timeout(uint8_t timeout) {
  if (timeout == 0) return TimeNs::max();
  return TimeNs(int64_t{4096} << (timeout & 31u));
}

}  // namespace sf::nic::rc
