// Wiring a Simulator from a parsed topology (common/config): the caller builds
// and adds one Node per TopologyConfig node (its kind is the caller's
// business), under the same name; connect_topology() adds every link with its
// parameters and schedules its up/down events.
#pragma once

#include <vector>

#include "common/config/topology_config.h"
#include "common/sim/simulator.h"

namespace sf::sim {

// LinkParams of a configured link.
LinkParams link_params(const config::LinkConfig& link);

// Connects every link of `topo` (in file order; the i-th LinkId returned is
// topo.links[i]). Throws std::invalid_argument when a topology node was not
// added under its name, or a link names a port its Node does not have.
std::vector<LinkId> connect_topology(Simulator& sim, const config::TopologyConfig& topo);

}  // namespace sf::sim
