// Telemetry commands for sf-cli (tools/sf-cli, docs/ops.md) beyond the
// counters of telemetry.h: what `show pfcwd config`, `show ecn`,
// `show ip route` and `show mac` print.
//   /softfabric/switch/port_config,<i|name>  speed, MTU, PFC and watchdog
//                                            config, WRED per queue
//   /softfabric/switch/routes[,START]        STATIC_ROUTE next hops, a page of
//                                            "PREFIX|PORT|MAC" strings from START
//   /softfabric/switch/mac[,START]           FDB entries, a page of
//                                            "MAC|VLAN|PORT|static|dynamic" strings
// Pages hold kPage entries; "total" says how many there are.
#pragma once

#include "switch/app/switch_stats.h"
#include "switch/config/switch_config.h"

namespace sf::sw {

// Called by register_switch_telemetry(); same lifetime rules.
bool register_switch_ops_telemetry(const SwitchView& v, const SwitchConfig& cfg);

}  // namespace sf::sw
