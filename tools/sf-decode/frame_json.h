// Decoded frame -> JSON (every header field parse_frame found, ICRC status,
// and the rejection reason; RoCEv2 and MRC). Used by sf-decode and the
// interop tests.
#pragma once

#include <nlohmann/json.hpp>

#include <span>

#include "common/wire/frame_parser.h"

namespace sf::tools {

// `opt` selects e.g. the MRC port / opcode base / trim code points.
nlohmann::json frame_to_json(std::span<const uint8_t> frame, const sf::wire::ParseOptions& opt = {});

}  // namespace sf::tools
