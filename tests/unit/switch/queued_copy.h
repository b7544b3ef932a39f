// What the stage-D tests (admission_copy_test.cc, admission_stage_test.cc)
// build their copies from: a QueuedPkt with its key (ports, PG, queue) and
// size, nothing else set; and their cell size.
#pragma once

#include <cstdint>

#include "switch/pipeline/egress_queue.h"

namespace sf::sw::test {

inline constexpr uint32_t kCell = 256;

inline QueuedPkt copy(uint16_t out, uint8_t pg, uint8_t q, uint32_t bytes = 1000, uint16_t in = 0) {
  QueuedPkt p;
  p.in_port = in;
  p.out_port = out;
  p.pg = pg;
  p.queue = q;
  p.bytes = bytes;
  return p;
}

}  // namespace sf::sw::test
