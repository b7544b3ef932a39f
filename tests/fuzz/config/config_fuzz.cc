// libFuzzer target: any byte string fed to the JSON loader and to the PORT and
// topology schemas must either parse or fail with ConfigError; nothing else
// (no crash, no other exception, no sanitizer report).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/config/json_loader.h"
#include "common/config/port_config.h"
#include "common/config/topology_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sf::config::Json doc;
  try {
    doc = sf::config::parse_text(text, "fuzz");
  } catch (const sf::config::ConfigError&) {
    return 0;
  }
  try {
    sf::config::ConfigNode root(doc, "");
    (void)sf::config::parse_topology(root);
  } catch (const sf::config::ConfigError&) {
  }
  try {
    sf::config::ConfigNode root(doc, "");
    (void)sf::config::parse_ports(root.child("PORT"));
    root.finish();
  } catch (const sf::config::ConfigError&) {
  }
  try {
    // The generic getters on whatever the document holds.
    sf::config::ConfigNode root(doc, "");
    if (root.is_object()) {
      for (auto& [key, node] : root.members()) {
        if (node.is_object()) {
          (void)node.opt_bytes("size", 0);
          (void)node.opt_rate("rate", sf::BitRate(1));
          (void)node.opt_duration("time", sf::TimeNs(0));
          (void)node.opt<double>("p", 0.0, sf::config::in_range(0.0, 1.0));
          node.finish();
        }
      }
    }
  } catch (const sf::config::ConfigError&) {
  }
  return 0;
}
