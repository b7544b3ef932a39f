// DPDK telemetry commands for a running sf-switch (read with
// dpdk-telemetry.py -f <file-prefix>):
//   /softfabric/switch/ports           port names, index order
//   /softfabric/switch/port,<i|name>   counters, drops by cause, per-queue and
//                                      per-PG arrays (8 entries each)
//   /softfabric/switch/buffer          shared buffer and pools
//   /softfabric/switch/fdb             FDB size and learning counters
// and sf-cli's (port_config, routes, mac): telemetry_ops.h.
// Callbacks run on DPDK's telemetry thread and only read counters.
#pragma once

#include "switch/app/switch_stats.h"
#include "switch/config/switch_config.h"

namespace sf::sw {

// Registers the commands for `v`'s switch (it and `cfg` must outlive EAL).
// Once per process. With shards, /softfabric/switch/port also gives the
// port's "shard".
// Returns false if DPDK refused a registration (telemetry disabled, say).
bool register_switch_telemetry(const SwitchView& v, const SwitchConfig& cfg);

}  // namespace sf::sw
