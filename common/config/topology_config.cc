// Topology parsing and cross-reference validation (node names, port ranges,
// each port wired at most once).
#include "common/config/topology_config.h"

#include <array>
#include <charconv>

#include "common/config/json_loader.h"

namespace sf::config {

namespace {

constexpr std::array<EnumName<bool>, 2> kLinkStates{{{"up", true}, {"down", false}}};

// Parses link member `key` ("node:port") against the nodes seen so far.
LinkEndpoint parse_endpoint(ConfigNode& link, std::string_view key, const TopologyConfig& topo) {
  const std::string text = link.req<std::string>(key);
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    link.fail_key(key, "\"" + text + "\" is not \"node:port\"");
  }
  const std::string node_name = text.substr(0, colon);
  const int node = topo.find_node(node_name);
  if (node < 0) link.fail_key(key, "unknown node \"" + node_name + "\"");
  uint32_t port = 0;
  const char* first = text.data() + colon + 1;
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, port);
  if (ec != std::errc() || ptr != last) link.fail_key(key, "\"" + text + "\": port is not a number");
  const NodeConfig& n = topo.nodes[static_cast<size_t>(node)];
  if (port >= n.num_ports) {
    link.fail_key(key, "port " + std::to_string(port) + " out of range for node \"" + n.name + "\" (ports 0.." +
                           std::to_string(n.num_ports - 1) + ")");
  }
  return LinkEndpoint{static_cast<uint32_t>(node), static_cast<uint16_t>(port)};
}

}  // namespace

int TopologyConfig::find_node(std::string_view name) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

TopologyConfig parse_topology(ConfigNode& root) {
  root.expect_object();
  TopologyConfig topo;
  topo.seed = root.opt<uint64_t>("seed", 1);

  ConfigNode nodes = root.child("nodes");
  nodes.expect_object();
  for (auto& [name, node] : nodes.members()) {
    node.expect_object();
    NodeConfig n;
    n.name = name;
    if (name.empty()) node.fail("node name must not be empty");
    if (name.find(':') != std::string::npos) node.fail("node name must not contain ':'");
    n.kind = node.req<std::string>("kind");
    if (n.kind.empty()) node.fail_key("kind", "must not be empty");
    n.num_ports = static_cast<uint16_t>(node.req<uint32_t>("ports", in_range<uint32_t>(1, kMaxNodePorts)));
    if (auto cfg = node.opt_child("config")) n.config = cfg->expect_object().json();
    node.finish();
    topo.nodes.push_back(std::move(n));
  }
  if (topo.nodes.empty()) nodes.fail("at least one node is required");

  // used[node][port]: path of the link endpoint that wired it, empty if free.
  std::vector<std::vector<std::string>> used(topo.nodes.size());
  for (size_t i = 0; i < topo.nodes.size(); ++i) used[i].resize(topo.nodes[i].num_ports);

  if (auto links = root.opt_child("links")) {
    for (auto& link : links->expect_array().elements()) {
      link.expect_object();
      LinkConfig l;
      l.a = parse_endpoint(link, "a", topo);
      l.b = parse_endpoint(link, "b", topo);
      for (const auto& [key, ep] : {std::pair<std::string_view, LinkEndpoint>{"a", l.a}, {"b", l.b}}) {
        std::string& owner = used[ep.node][ep.port];
        if (!owner.empty()) {
          link.fail_key(key, "port " + topo.nodes[ep.node].name + ":" + std::to_string(ep.port) +
                                 " already used by " + owner);
        }
        owner = link.key_path(key);
      }
      const double rate_gbps = link.req<double>("rate_gbps");
      if (!(rate_gbps > 0 && rate_gbps <= kMaxLinkRateGbps)) {
        link.fail_key("rate_gbps", detail::num_str(rate_gbps) + " out of range (0, " +
                                       detail::num_str(kMaxLinkRateGbps) + "]");
      }
      l.rate = BitRate::gbps(rate_gbps);
      l.delay = TimeNs(link.opt<int64_t>("delay_ns", 0, in_range<int64_t>(0, kMaxLinkDelayNs)));
      l.loss = link.opt<double>("loss", 0.0, in_range(0.0, 1.0));
      l.corrupt = link.opt<double>("corrupt", 0.0, in_range(0.0, 1.0));
      if (auto events = link.opt_child("events")) {
        for (auto& ev : events->expect_array().elements()) {
          ev.expect_object();
          LinkEvent e;
          e.at = TimeNs(ev.req<int64_t>("at_ns", in_range<int64_t>(0, std::numeric_limits<int64_t>::max() - 1)));
          e.up = ev.req_enum<bool>("state", kLinkStates);
          if (!l.events.empty() && e.at <= l.events.back().at) {
            ev.fail_key("at_ns", std::to_string(e.at.ns()) + " is not after the previous event at " +
                                     std::to_string(l.events.back().at.ns()));
          }
          ev.finish();
          l.events.push_back(e);
        }
      }
      link.finish();
      topo.links.push_back(std::move(l));
    }
  }
  return topo;
}

TopologyConfig load_topology_file(const std::string& file_path) {
  const Json doc = load_file(file_path);
  ConfigNode root(doc, "");
  TopologyConfig topo = parse_topology(root);
  root.finish();
  return topo;
}

}  // namespace sf::config
