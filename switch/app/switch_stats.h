// JSON views of a running switch's counters, shared by the final report, the
// time-series recorder, the console and DPDK telemetry. Read from a control
// thread while the datapath runs: counters are plain uint64_t written by one
// lcore, so a sample may be a few packets stale but never torn on x86-64.
#pragma once

#include <nlohmann/json.hpp>

#include "switch/config/switch_config.h"
#include "switch/pipeline/sharded_switch.h"
#include "switch/pipeline/switch_node.h"

namespace sf::sw {

// What the views read: one SwitchNode, or a ShardedSwitch (each port's state
// from the shard that owns it, its counters summed over all shards).
class SwitchView {
 public:
  SwitchView(const SwitchNode& node) : one_(&node) {}          // NOLINT: implicit on purpose
  SwitchView(const ShardedSwitch& sharded) : sharded_(&sharded) {}  // NOLINT
  uint16_t num_ports() const { return one_ ? one_->num_ports() : sharded_->num_ports(); }
  uint16_t num_shards() const { return one_ ? 1 : sharded_->num_shards(); }
  const SwitchNode& owner(PortId p) const { return one_ ? *one_ : sharded_->owner(p); }
  const SwitchNode& shard(uint16_t s) const { return one_ ? *one_ : sharded_->shard(s); }
  uint16_t shard_of(PortId p) const { return one_ ? 0 : sharded_->shard_of(p); }
  PortCounters counters(PortId p) const { return one_ ? one_->counters(p) : sharded_->counters(p); }
  uint32_t held_packets(PortId p, uint8_t pg) const {
    return one_ ? one_->held_packets(p, pg) : sharded_->held_packets(p, pg);
  }
  const ShardedSwitch* sharded() const { return sharded_; }

 private:
  const SwitchNode* one_ = nullptr;
  const ShardedSwitch* sharded_ = nullptr;
};

// Everything: per port (counters, drops by cause), per queue, per PG, pools, FDB.
// With shards: each port also says its "shard", and "shards" lists them
// with their ring counters.
nlohmann::json switch_snapshot(const SwitchView& v, const SwitchConfig& cfg);
// A router port's INTERFACE addresses, ARP / ND counters and its next hops' state.
nlohmann::json router_if_snapshot(const RouterIf& rif, PortId port);
// One port (same layout as an element of switch_snapshot()["ports"]).
nlohmann::json port_snapshot(const SwitchView& v, const SwitchConfig& cfg, PortId port);
// Credit-based link FC of a CREDIT_FC port (null JSON for a PFC port):
// credit_stalls, stall histogram (bucket edges in us), update frames, bad
// frames by reason, unknown-VL entries, overruns, credits per VL.
nlohmann::json credit_snapshot(const SwitchNode& node, PortId port);
// Compact sample for the time series: cumulative counters and instantaneous
// depths, one object per port keyed by name: rx/tx bytes, drops, paused
// queues (bit mask), queues[8] = [depth, ECN marks, drops, tx bytes], PFC
// pause frames received / sent (all priorities) and PFC frames sent, and on
// ports the PFC watchdog guards `pfc_wd_stormed` (bit mask of stormed queues).
nlohmann::json timeseries_sample(const SwitchView& v, const SwitchConfig& cfg, double t_s);

}  // namespace sf::sw
