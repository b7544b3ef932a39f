// For the tests of config schemas: what a parse throws, and a document with
// extra top-level tables merged in. Header-only, gtest-free.
#pragma once

#include <string>
#include <string_view>

#include "common/config/config_error.h"
#include "common/config/json_loader.h"

namespace sf::test {

// Runs `parse` and returns the ConfigError's what(), or "no error".
template <class F>
std::string config_error_of(F&& parse) {
  try {
    parse();
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// The document `base` with each top-level table of `extra` set (replacing a
// table of the same name).
inline config::Json merged_doc(std::string_view base, std::string_view extra) {
  config::Json d = config::parse_text(base);
  const config::Json e = config::parse_text(extra);
  for (auto it = e.begin(); it != e.end(); ++it) d[it.key()] = it.value();
  return d;
}

}  // namespace sf::test
