// Topology -> Simulator links and link events.
#include "common/sim/topology_builder.h"

#include <stdexcept>
#include <string>

namespace sf::sim {

LinkParams link_params(const config::LinkConfig& link) {
  LinkParams p;
  p.rate = link.rate;
  p.delay = link.delay;
  p.loss = link.loss;
  p.corrupt = link.corrupt;
  return p;
}

std::vector<LinkId> connect_topology(Simulator& sim, const config::TopologyConfig& topo) {
  std::vector<NodeId> ids;
  ids.reserve(topo.nodes.size());
  for (const config::NodeConfig& n : topo.nodes) {
    const auto id = sim.find_node(n.name);
    if (!id) throw std::invalid_argument("sim: topology node \"" + n.name + "\" was not added to the simulator");
    ids.push_back(*id);
  }
  std::vector<LinkId> links;
  links.reserve(topo.links.size());
  for (const config::LinkConfig& l : topo.links) {
    const LinkId id = sim.connect(ids[l.a.node], l.a.port, ids[l.b.node], l.b.port, link_params(l));
    for (const config::LinkEvent& e : l.events) sim.set_link_state_at(id, e.at, e.up);
    links.push_back(id);
  }
  return links;
}

}  // namespace sf::sim
