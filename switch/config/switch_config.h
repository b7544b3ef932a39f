// SwitchConfig: a switch's whole configuration, loaded from SONiC-style JSON
// tables (DEVICE_METADATA, PORT, BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG,
// BUFFER_QUEUE, DSCP_TO_TC_MAP, DOT1P_TO_TC_MAP, TC_TO_PRIORITY_GROUP_MAP,
// TC_TO_QUEUE_MAP, MAP_PFC_PRIORITY_TO_QUEUE, PORT_QOS_MAP, WRED_PROFILE,
// SCHEDULER, QUEUE, INTERFACE, STATIC_ROUTE, NEIGH, FDB, SRV6, PFC_WD, SWITCH_TRIMMING,
// CABLE_LENGTH, LOSSLESS_TRAFFIC_PATTERN, INT) into immutable structs,
// every cross reference resolved to an index. Reference: docs/config-reference.md.
// Errors are sf::config::ConfigError naming the JSON path; setup time only.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config/config_node.h"
#include "common/config/port_config.h"
#include "common/creditfc/credit_fc.h"  // CREDIT_FC
#include "common/time.h"
#include "switch/lossless/pfc_watchdog.h"
#include "switch/mmu/mmu_config.h"
#include "switch/qos/scheduler.h"
#include "switch/qos/wred.h"

namespace sf::sw {

// Per-port classification (PORT_QOS_MAP with its maps resolved).
struct PortQos {
  std::array<uint8_t, 64> dscp_to_tc{};
  std::array<uint8_t, 8> dot1p_to_tc{};
  std::array<uint8_t, 8> tc_to_pg{};
  std::array<uint8_t, 8> tc_to_queue{};
  std::array<uint8_t, 8> pfc_to_queue{};  // received PFC priority -> queue to pause
  bool trust_dot1p = false;               // classify tagged frames by PCP instead of DSCP
  uint8_t pfc_enable = 0;                 // bit p = priority p is lossless
  uint8_t pfcwd_enable = 0;               // priorities the PFC watchdog guards (default: pfc_enable)
};

// SWITCH_TRIMMING|GLOBAL: what a packet refused by a `packet_discard_action:
// trim` profile becomes (common/wire/trim.h).
struct TrimConfig {
  uint32_t size_bytes = 128;  // frame bytes kept (at least the headers)
  uint8_t dscp = 0;           // DSCP of the trimmed packet
  bool dynamic_queue = false; // queue_index "dynamic": `dscp` -> TC -> queue by the INGRESS port's maps (as any packet)
  uint8_t queue = 0;          // trim queue otherwise
};

struct RouteNextHop {
  uint16_t port = 0;
  std::array<uint8_t, 6> mac{};  // neighbour MAC (from NEIGH; zero when `dynamic`)
  bool v6 = false;
  std::array<uint8_t, 16> ip{};  // the next hop's address (first 4 bytes for IPv4)
  // No NEIGH entry and the address is on an INTERFACE subnet of `port`: the
  // switch resolves its MAC at run time (switch/fwd/router_if.h).
  bool dynamic = false;
};

// INTERFACE "<port>|<ip>/<len>": a router interface address on a port. The
// switch answers ARP / IPv6 NS for it with the port's router MAC and
// resolves next hops on its subnet (docs/switch.md "Router interfaces").
struct RouterInterface {
  uint16_t port = 0;
  bool v6 = false;
  std::array<uint8_t, 16> addr{};  // first 4 bytes for IPv4
  uint8_t prefix_len = 0;
};
// Whether `ip` (same family as `rif`) is on rif's subnet.
bool on_subnet(const RouterInterface& rif, const std::array<uint8_t, 16>& ip);

struct StaticRoute {
  bool v6 = false;
  std::array<uint8_t, 16> prefix{};  // first 4 bytes for IPv4
  uint8_t depth = 0;
  std::vector<RouteNextHop> next_hops;  // > 1 = ECMP group
};

// The VLAN of untagged and priority-tagged (VID 0) frames on every port (its
// PVID, SONiC's and 802.1Q's default VLAN 1; there is no VLAN_MEMBER table to
// set another), and of an FDB key without a `Vlan<id>|` prefix.
inline constexpr uint16_t kDefaultVlan = 1;

struct StaticFdbEntry {
  std::array<uint8_t, 6> mac{};
  uint16_t vlan = kDefaultVlan;  // 1..4094
  uint16_t port = 0;
};

// SRv6 uN (F3216): this switch's locator block (32 bits) and its own uSID;
// the static table maps the next uSID to an output port and neighbour MAC.
struct Srv6Config {
  std::array<uint8_t, 4> block{};
  uint16_t my_usid = 0;
  struct Entry {
    uint16_t usid = 0;
    RouteNextHop next_hop;
  };
  std::vector<Entry> table;
};

struct SwitchConfig {
  config::PortsConfig ports;
  MmuConfig mmu;
  std::vector<PortQos> qos;                                      // per port
  std::vector<std::array<WredConfig, kNumQueues>> wred;          // per port, queue
  std::vector<std::array<QueueSchedConfig, kNumQueues>> sched;   // per port, queue
  std::vector<StaticRoute> routes;
  std::vector<RouterInterface> interfaces;  // INTERFACE, in key order
  std::vector<StaticFdbEntry> fdb;
  std::optional<Srv6Config> srv6;
  // PFC_WD per port; queues == 0: the watchdog is off on that port.
  std::vector<PfcWdConfig> pfcwd;
  std::optional<TrimConfig> trim;  // SWITCH_TRIMMING present
  std::vector<double> cable_m;     // CABLE_LENGTH per port (default 5 m)
  uint32_t lossless_mtu_bytes = 1500;     // LOSSLESS_TRAFFIC_PATTERN mtu (headroom calculator)
  uint32_t small_packet_percentage = 100; // LOSSLESS_TRAFFIC_PATTERN small_packet_percentage
  uint32_t fdb_capacity = 65536;
  TimeNs fdb_ageing = TimeNs::from_s(300);
  uint64_t seed = 1;  // WRED draws
  bool seed_given = false;  // DEVICE_METADATA.localhost.seed was set (sf-sim keeps it instead of plan seed + i)
  // CREDIT_FC (credit_fc_config.h): per port; set = credit-based link FC instead of PFC.
  std::vector<std::optional<CreditFcConfig>> credit_fc;
  // INT (HPCC in-band telemetry, docs/switch.md "INT"): per port, bit q = the
  // port appends a hop record at dequeue from queue q to frames that carry
  // the BTH INT flag and a shim (common/wire/int_shim.h). Default none.
  std::vector<uint8_t> int_queues;
};

// Parses and validates a whole switch document. Throws config::ConfigError.
SwitchConfig parse_switch_config(const config::Json& doc);
SwitchConfig load_switch_config(const std::string& file_path);

}  // namespace sf::sw
