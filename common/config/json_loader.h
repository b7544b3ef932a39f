// Loading JSON configuration text: file errors, syntax errors with line and
// column, and duplicate keys (which plain JSON parsers silently collapse) all
// become a ConfigError before any schema is read.
#pragma once

#include <string>
#include <string_view>

#include "common/config/config_node.h"

namespace sf::config {

// Parses `text`. `source` names it in errors (a file name, "<string>").
// Errors: ConfigError with path() == source for syntax errors
// ("cfg.json: line 3, column 7: syntax error ..."), and with path() == the
// JSON path for duplicate keys ("PORT.Ethernet0: duplicate key \"mtu\"").
Json parse_text(std::string_view text, std::string_view source = "<string>");

// Reads and parses a file. A missing or unreadable file is a ConfigError whose
// path() is the file name.
Json load_file(const std::string& file_path);

}  // namespace sf::config
