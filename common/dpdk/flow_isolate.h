// sf-nic --flow-isolate: share a NIC with the kernel on PMDs with flow
// isolation (mlx5's bifurcated driver; net_tap with remote=IFACE): the port
// is put in rte_flow isolated mode right after it is probed (before it is
// configured, as mlx5 requires), and once started gets two rules, UDP
// destination port 4791 over IPv4 and over IPv6 to queue 0. Everything else
// stays with the kernel (docs/guide.md "Sharing a NIC with the kernel").
// Control path only (the app, before the loop). In common/dpdk: the layer
// that calls rte_eth_* / rte_flow_*.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct rte_flow;

namespace sf::dpdk {

// Probes `devargs` when no port has its name yet and enables isolated mode
// on it. Empty on success, else why (naming the device and the driver's
// message: a PMD without isolation says so).
std::string flow_isolate_prepare(const std::string& devargs);

// The RoCE rules on the started port `port_id` (named `name` in errors).
// Fills `flows` (destroyed by flow_isolate_remove). Empty on success.
std::string flow_isolate_rules(uint16_t port_id, const std::string& name, std::vector<rte_flow*>* flows);
void flow_isolate_remove(uint16_t port_id, std::vector<rte_flow*>* flows);

}  // namespace sf::dpdk
