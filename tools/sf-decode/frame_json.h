// Decoded frame -> JSON (every header field parse_frame found, ICRC status,
// and the rejection reason). Used by sf-decode and the interop tests.
#pragma once

#include <nlohmann/json.hpp>

#include <span>

namespace sf::tools {

nlohmann::json frame_to_json(std::span<const uint8_t> frame);

}  // namespace sf::tools
