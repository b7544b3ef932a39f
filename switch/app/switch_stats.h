// JSON views of a running switch's counters, shared by the final report, the
// time-series recorder, the console and DPDK telemetry. Read from a control
// thread while the datapath runs: counters are plain uint64_t written by one
// lcore, so a sample may be a few packets stale but never torn on x86-64.
#pragma once

#include <nlohmann/json.hpp>

#include "switch/config/switch_config.h"
#include "switch/pipeline/switch_node.h"

namespace sf::sw {

// Everything: per port (counters, drops by cause), per queue, per PG, pools, FDB.
nlohmann::json switch_snapshot(const SwitchNode& node, const SwitchConfig& cfg);
// One port (same layout as an element of switch_snapshot()["ports"]).
nlohmann::json port_snapshot(const SwitchNode& node, const SwitchConfig& cfg, PortId port);
// Credit-based link FC of a CREDIT_FC port (null JSON for a PFC port):
// credit_stalls, stall histogram (bucket edges in us), update frames, bad
// frames by reason, unknown-VL entries, overruns, credits per VL.
nlohmann::json credit_snapshot(const SwitchNode& node, PortId port);
// Compact sample for the time series: cumulative counters and instantaneous
// depths, one object per port keyed by name: rx/tx bytes, drops, paused
// queues (bit mask), queues[8] = [depth, ECN marks, drops, tx bytes], PFC
// pause frames received / sent (all priorities) and PFC frames sent, and on
// ports the PFC watchdog guards `pfc_wd_stormed` (bit mask of stormed queues).
nlohmann::json timeseries_sample(const SwitchNode& node, const SwitchConfig& cfg, double t_s);

}  // namespace sf::sw
