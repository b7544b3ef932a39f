// Telemetry commands for sf-cli. See telemetry_ops.h.
#include "switch/app/telemetry_ops.h"
#include "switch/app/telemetry_util.h"

#include <arpa/inet.h>
#include <rte_telemetry.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace sf::sw {
namespace {

constexpr size_t kPage = 100;  // a page of strings stays under the 16 KiB reply

const SwitchView* g_view = nullptr;
const SwitchConfig* g_cfg = nullptr;

int find_port(const char* params) { return telemetry_find_port(*g_view, *g_cfg, params); }

// START of a page (none = 0); -1 if not a number.
long page_start(const char* params) {
  if (params == nullptr || *params == '\0') return 0;
  char* end = nullptr;
  const long v = std::strtol(params, &end, 10);
  return (*end != '\0' || v < 0) ? -1 : v;
}

std::string mac_text(const std::array<uint8_t, 6>& m) {
  char b[18];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}

std::string ip_text(bool v6, const std::array<uint8_t, 16>& a) {
  char b[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, a.data(), b, sizeof b);
  return b;
}

// A next hop's MAC: NEIGH's, or the one the router interfaces resolved ("incomplete": not yet).
std::string next_hop_mac(const RouteNextHop& nh) {
  if (!nh.dynamic) return mac_text(nh.mac);
  const RouterIf* rif = g_view->shard(0).router_if();
  std::array<uint8_t, 6> m{};
  const int32_t id = rif != nullptr ? rif->neighbor_of(nh) : RouterIf::kNoNeighbor;
  return id != RouterIf::kNoNeighbor && rif->neighbor_mac(id, m) ? mac_text(m) : "incomplete";
}

int cmd_port_config(const char*, const char* params, rte_tel_data* d) {
  const int pi = find_port(params);
  if (pi < 0) return -1;
  const auto p = static_cast<size_t>(pi);
  const auto& pc = g_cfg->ports.ports[p];
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "name", pc.name.c_str());
  rte_tel_data_add_dict_u64(d, "speed_gbps", pc.speed_gbps);
  rte_tel_data_add_dict_u64(d, "mtu", pc.mtu_bytes);
  rte_tel_data_add_dict_string(d, "admin_status_config", pc.admin_up ? "up" : "down");
  rte_tel_data_add_dict_string(d, "flow_control",
                               p < g_cfg->credit_fc.size() && g_cfg->credit_fc[p] ? "credit" : "pfc");
  rte_tel_data_add_dict_u64(d, "pfc_enable_mask", p < g_cfg->qos.size() ? g_cfg->qos[p].pfc_enable : 0);
  if (p < g_cfg->pfcwd.size()) {
    const PfcWdConfig& wd = g_cfg->pfcwd[p];
    rte_tel_data_add_dict_u64(d, "pfcwd_queues_mask", wd.queues);
    rte_tel_data_add_dict_string(d, "pfcwd_action", std::string(to_string(wd.action)).c_str());
    rte_tel_data_add_dict_u64(d, "pfcwd_detection_ms", static_cast<uint64_t>(wd.detection.ns() / 1000000));
    rte_tel_data_add_dict_u64(d, "pfcwd_restoration_ms", static_cast<uint64_t>(wd.restoration.ns() / 1000000));
  }
  if (p < g_cfg->wred.size()) {
    const auto& w = g_cfg->wred[p];
    add_array8(d, "wred_ecn", [&](uint8_t q) { return uint64_t{w[q].ecn}; });
    add_array8(d, "wred_drop", [&](uint8_t q) { return uint64_t{w[q].wred_drop}; });
    add_array8(d, "wred_kmin_bytes", [&](uint8_t q) { return w[q].kmin_bytes; });
    add_array8(d, "wred_kmax_bytes", [&](uint8_t q) { return w[q].kmax_bytes; });
    add_array8(d, "wred_pmax_percent", [&](uint8_t q) { return static_cast<uint64_t>(std::lround(w[q].pmax * 100)); });
  }
  return 0;
}

// A page of strings under "entries", with "total" and "start".
template <class Row>
int string_page(const char* params, rte_tel_data* d, size_t total, Row row) {
  const long start = page_start(params);
  if (start < 0) return -1;
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_u64(d, "total", total);
  rte_tel_data_add_dict_u64(d, "start", static_cast<uint64_t>(start));
  rte_tel_data* a = rte_tel_data_alloc();
  if (a == nullptr) return -1;
  rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
  for (size_t i = static_cast<size_t>(start); i < total && i < static_cast<size_t>(start) + kPage; ++i) {
    rte_tel_data_add_array_string(a, row(i).c_str());
  }
  rte_tel_data_add_dict_container(d, "entries", a, 0);
  return 0;
}

int cmd_routes(const char*, const char* params, rte_tel_data* d) {
  // One row per (route, next hop): an ECMP group is several rows.
  struct Row {
    size_t route, hop;
  };
  std::vector<Row> rows;
  for (size_t r = 0; r < g_cfg->routes.size(); ++r) {
    for (size_t h = 0; h < g_cfg->routes[r].next_hops.size(); ++h) rows.push_back({r, h});
  }
  return string_page(params, d, rows.size(), [&](size_t i) {
    const StaticRoute& rt = g_cfg->routes[rows[i].route];
    const RouteNextHop& nh = rt.next_hops[rows[i].hop];
    char addr[INET6_ADDRSTRLEN] = {};
    inet_ntop(rt.v6 ? AF_INET6 : AF_INET, rt.prefix.data(), addr, sizeof addr);
    return std::string(addr) + "/" + std::to_string(rt.depth) + "|" + g_cfg->ports.ports[nh.port].name + "|" +
           next_hop_mac(nh);
  });
}

// Router interfaces (docs/switch.md "Router interfaces"): PORT|ADDRESS/LENGTH.
int cmd_interfaces(const char*, const char* params, rte_tel_data* d) {
  return string_page(params, d, g_cfg->interfaces.size(), [&](size_t i) {
    const RouterInterface& r = g_cfg->interfaces[i];
    return g_cfg->ports.ports[r.port].name + "|" + ip_text(r.v6, r.addr) + "/" + std::to_string(r.prefix_len);
  });
}

// Next hops the switch resolves (show arp / show ndp): IP|PORT|MAC or incomplete|SOLICITS.
int cmd_neighbors(const char*, const char* params, rte_tel_data* d) {
  const RouterIf* rif = g_view->shard(0).router_if();  // shared by the shards
  const auto nb = rif != nullptr ? rif->neighbors() : std::vector<RouterIf::NeighborView>{};
  return string_page(params, d, nb.size(), [&](size_t i) {
    const RouterIf::NeighborView& n = nb[i];
    return ip_text(n.v6, n.ip) + "|" + g_cfg->ports.ports[n.port].name + "|" +
           (n.resolved ? mac_text(n.mac) : std::string("incomplete")) + "|" + std::to_string(n.solicits);
  });
}

int cmd_mac(const char*, const char* params, rte_tel_data* d) {
  const auto entries = g_view->shard(0).fdb().entries(SIZE_MAX);
  return string_page(params, d, entries.size(), [&](size_t i) {
    const Fdb::EntryView& e = entries[i];
    const std::string port = e.port < g_cfg->ports.ports.size() ? g_cfg->ports.ports[e.port].name : "?";
    return mac_text(e.mac) + "|" + std::to_string(e.vlan) + "|" + port + "|" + (e.is_static ? "static" : "dynamic");
  });
}

}  // namespace

bool register_switch_ops_telemetry(const SwitchView& v, const SwitchConfig& cfg) {
  static SwitchView view = v;
  view = v;
  g_view = &view;
  g_cfg = &cfg;
  bool ok = rte_telemetry_register_cmd("/softfabric/switch/port_config", cmd_port_config,
                                       "Speed, MTU, PFC, watchdog and WRED config. Parameter: port index or name") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/switch/routes", cmd_routes,
                                   "Static routes, one PREFIX|PORT|MAC per next hop. Parameter: first entry") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/switch/interfaces", cmd_interfaces,
                                   "Router interface addresses, PORT|ADDRESS/LENGTH. Parameter: first entry") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/switch/neighbors", cmd_neighbors,
                                   "Next hops resolved by ARP / ND, IP|PORT|MAC or incomplete|SOLICITS. "
                                   "Parameter: first entry") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/switch/mac", cmd_mac,
                                   "FDB entries, MAC|VLAN|PORT|static or dynamic. Parameter: first entry") == 0;
  return ok;
}

}  // namespace sf::sw
