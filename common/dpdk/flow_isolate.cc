// sf-nic --flow-isolate. See flow_isolate.h.
// rte_devargs_reset and rte_flow_isolate are experimental in DPDK 22.11.
#define ALLOW_EXPERIMENTAL_API 1
#include "common/dpdk/flow_isolate.h"

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_flow.h>

#include <cstring>

namespace sf::dpdk {

namespace {
constexpr uint16_t kRoceUdpPort = 4791;

std::string flow_error(const rte_flow_error& e) {
  return std::string(e.message != nullptr ? e.message : "no message") + " (type " + std::to_string(e.type) + ")";
}
}  // namespace

std::string flow_isolate_prepare(const std::string& devargs) {
  rte_devargs da{};
  if (int rc = rte_devargs_parse(&da, devargs.c_str()); rc < 0) return "--flow-isolate: cannot parse " + devargs;
  const std::string name = da.name;
  rte_devargs_reset(&da);
  uint16_t pid = 0;
  if (rte_eth_dev_get_port_by_name(name.c_str(), &pid) != 0) {
    if (int rc = rte_dev_probe(devargs.c_str()); rc < 0) {
      return "--flow-isolate: port " + name + ": rte_dev_probe: " + std::strerror(-rc);
    }
    if (rte_eth_dev_get_port_by_name(name.c_str(), &pid) != 0) return "--flow-isolate: port " + name + ": no ethdev after probe";
  }
  rte_flow_error err{};
  if (rte_flow_isolate(pid, 1, &err) != 0) {
    rte_eth_dev_info info{};
    rte_eth_dev_info_get(pid, &info);
    return "--flow-isolate: port " + name + " (driver " + (info.driver_name ? info.driver_name : "?") +
           ") refuses flow isolation: " + flow_error(err);
  }
  return "";
}

std::string flow_isolate_rules(uint16_t port_id, const std::string& name, std::vector<rte_flow*>* flows) {
  for (const bool v6 : {false, true}) {
    rte_flow_attr attr{};
    attr.ingress = 1;
    rte_flow_item_udp udp{};
    rte_flow_item_udp udp_mask{};
    udp.hdr.dst_port = rte_cpu_to_be_16(kRoceUdpPort);
    udp_mask.hdr.dst_port = 0xFFFF;
    rte_flow_item pattern[4]{};
    pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
    pattern[1].type = v6 ? RTE_FLOW_ITEM_TYPE_IPV6 : RTE_FLOW_ITEM_TYPE_IPV4;
    pattern[2].type = RTE_FLOW_ITEM_TYPE_UDP;
    pattern[2].spec = &udp;
    pattern[2].mask = &udp_mask;
    pattern[3].type = RTE_FLOW_ITEM_TYPE_END;
    rte_flow_action_queue q{};
    q.index = 0;
    rte_flow_action actions[2]{};
    actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
    actions[0].conf = &q;
    actions[1].type = RTE_FLOW_ACTION_TYPE_END;
    rte_flow_error err{};
    rte_flow* f = rte_flow_create(port_id, &attr, pattern, actions, &err);
    if (f == nullptr) {
      return "--flow-isolate: port " + name + ": cannot install the rule UDP " + std::to_string(kRoceUdpPort) +
             " over " + (v6 ? "IPv6" : "IPv4") + " -> queue 0: " + flow_error(err);
    }
    flows->push_back(f);
  }
  return "";
}

void flow_isolate_remove(uint16_t port_id, std::vector<rte_flow*>* flows) {
  for (rte_flow* f : *flows) {
    rte_flow_error err{};
    rte_flow_destroy(port_id, f, &err);
  }
  flows->clear();
}

}  // namespace sf::dpdk
