// TopologyConfig: nodes and the links between their ports, for the simulator
// (common/sim) and the lab launcher. Parsed into immutable structs.
//
//   {
//     "seed": 42,
//     "nodes": {
//       "h0":  {"kind": "nic", "ports": 1},
//       "sw0": {"kind": "switch", "ports": 8, "config": {...}}
//     },
//     "links": [
//       {"a": "h0:0", "b": "sw0:3", "rate_gbps": 100, "delay_ns": 1000,
//        "loss": 0.001, "corrupt": 0.0,
//        "events": [{"at_ns": 1000000, "state": "down"},
//                   {"at_ns": 2000000, "state": "up"}]}
//     ]
//   }
//
// nodes: kind (non-empty string; its meaning belongs to the layer that builds
// the node), ports (1..1024), config (optional JSON object, kept verbatim for
// that layer to validate). links: a/b ("node:port", port < node's ports, each
// port in at most one link), rate_gbps (number, (0, 1600]), delay_ns (integer,
// 0..1e12, default 0), loss/corrupt (probabilities 0..1, default 0), events
// (at_ns strictly increasing, state "up"|"down"; links start up). seed:
// unsigned integer, default 1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/config/config_node.h"
#include "common/time.h"

namespace sf::config {

inline constexpr uint32_t kMaxNodePorts = 1024;
inline constexpr double kMaxLinkRateGbps = 1600;
inline constexpr int64_t kMaxLinkDelayNs = 1000LL * 1000 * 1000 * 1000;  // 1000 s

struct NodeConfig {
  std::string name;
  std::string kind;
  uint16_t num_ports = 0;
  Json config;  // null when absent; validated by the layer owning `kind`
};

struct LinkEndpoint {
  uint32_t node = 0;  // index into TopologyConfig::nodes
  uint16_t port = 0;
};

struct LinkEvent {
  TimeNs at;
  bool up = true;
};

struct LinkConfig {
  LinkEndpoint a;
  LinkEndpoint b;
  BitRate rate;
  TimeNs delay;
  double loss = 0;     // probability a frame is lost
  double corrupt = 0;  // probability a delivered frame has a bit flipped
  std::vector<LinkEvent> events;  // strictly increasing `at`
};

struct TopologyConfig {
  uint64_t seed = 1;
  std::vector<NodeConfig> nodes;  // file order
  std::vector<LinkConfig> links;  // file order

  // Index of the node named `name`, or -1.
  int find_node(std::string_view name) const;
};

// Reads "seed", "nodes" and "links" from `root` (an object). Does not call
// root.finish(): a caller that embeds a topology in a larger document (a
// scenario) reads its own keys and then calls finish() itself.
TopologyConfig parse_topology(ConfigNode& root);

// Loads a file that holds exactly a topology (unknown top-level keys rejected).
TopologyConfig load_topology_file(const std::string& file_path);

}  // namespace sf::config
