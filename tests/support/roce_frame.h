// The bytes of one RoCEv2 frame for a test: `spec` with `payload` bytes of
// `fill`, built by wire::build_roce_frame (which the test expects to succeed).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/wire/frame_builder.h"

namespace sf::test {

inline std::vector<uint8_t> roce_frame_bytes(const wire::RoceFrameSpec& spec, size_t payload, uint8_t fill = 0x5A) {
  std::vector<uint8_t> buf(9300);
  const std::vector<uint8_t> data(payload, fill);
  const auto r = wire::build_roce_frame(buf, spec, data);
  EXPECT_TRUE(r.ok());
  buf.resize(r.frame_bytes);
  return buf;
}

}  // namespace sf::test
