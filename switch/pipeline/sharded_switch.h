// ShardedSwitch: one switch whose ports are partitioned over N shards, one
// SwitchNode per shard, each run by its own datapath lcore (docs/architecture.md
// "Sharding"; rules in docs/invariants.md). A shard owns the RX and TX of its
// ports, their ingress PGs (admission, headroom, PFC generation) and their
// egress queues (admission, WRED/ECN, scheduling, received PFC, watchdog).
// Between shards: per (src, dst) SPSC rings of packets and of release notes
// (switch/pipeline/shard_ring.h), the notes carrying cells and CREDIT_FC
// slots back to the shard that owns them. Shared: the buffer pool counters
// (SharedBuffer, atomics), the FDB (lock-free readers, one ager) and the route
// tables (read-only). One shard is exactly the unsharded SwitchNode.
//
// Two ways to drive it:
//  - shard_node(s): a Node over shard s for that shard's poll loop (its lcore
//    polls only the ports it owns); it takes in what other shards sent each
//    loop iteration (next_wakeup() says "now" while anything is waiting).
//  - ShardedSwitchNode: one Node over all ports that runs every shard on the
//    calling thread and moves everything between shards after each call, so
//    virtual-time tests and the simulator see a deterministic switch.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/node.h"
#include "switch/mmu/shared_buffer.h"
#include "switch/pipeline/shard_ring.h"
#include "switch/pipeline/switch_node.h"

namespace sf::sw {

class ShardedSwitch {
 public:
  // `shard_of_port[i]`: the shard (0..N-1) of port i; every shard owns at
  // least one port, N <= kMaxShards. Throws std::invalid_argument when the
  // map or the config cannot be sharded (N > 1 with more than kMaxRingCells
  // cells), std::runtime_error
  // when DPDK tables or rings cannot be created. `cfg` must outlive it.
  ShardedSwitch(const SwitchConfig& cfg, std::span<const std::array<uint8_t, 6>> port_macs, rte_mempool* ctrl_pool,
                std::vector<uint16_t> shard_of_port);
  ~ShardedSwitch();
  ShardedSwitch(const ShardedSwitch&) = delete;
  ShardedSwitch& operator=(const ShardedSwitch&) = delete;

  // Contiguous blocks: ports 0..k-1 on shard 0, and so on, sizes differing by
  // at most one. `shards` in [1, min(ports, kMaxShards)] (checked by the caller).
  static std::vector<uint16_t> even_split(uint16_t ports, uint16_t shards);
  // Parses "0,0,1,1" (one shard per port, config order). Empty string + error on bad input.
  static std::vector<uint16_t> parse_map(const std::string& text, uint16_t ports, std::string* error);

  static constexpr uint32_t kMaxRingCells = 1u << 22;   // buffer cells a sharded switch may have

  // The rings of one ordered pair of shards for `cfg`: a data ring (one
  // packet per cell) and a release ring (one note per cell; two per cell + 1
  // with CREDIT_FC ports).
  struct RingSizes {
    uint32_t data_pkts = 0;
    uint32_t release_notes = 0;
    size_t bytes = 0;  // what both rings take of EAL memory
  };
  static RingSizes ring_sizes(const SwitchConfig& cfg);

  uint16_t num_shards() const { return static_cast<uint16_t>(nodes_.size()); }
  uint16_t num_ports() const { return static_cast<uint16_t>(shard_of_port_.size()); }
  uint16_t shard_of(PortId p) const { return shard_of_port_[p]; }
  SwitchNode& shard(uint16_t s) { return *nodes_[s]; }
  const SwitchNode& shard(uint16_t s) const { return *nodes_[s]; }
  // The shard that owns `p`: its queues, PGs, PFC state and watchdog.
  const SwitchNode& owner(PortId p) const { return *nodes_[shard_of_port_[p]]; }
  // One shard: the SwitchNode itself (today's one-lcore switch, unchanged).
  Node& shard_node(uint16_t s) { return drivers_.empty() ? static_cast<Node&>(*nodes_[0]) : *drivers_[s]; }
  // Ring traffic of shard s (zero with one shard).
  const ShardCounters& shard_counters(uint16_t s) const;
  // Counters of port p over all shards: a packet is counted by the shard
  // that handled it (rx at the ingress shard, a drop where it happened).
  PortCounters counters(PortId p) const;
  uint32_t held_packets(PortId p, uint8_t pg) const;
  // The whole switch's buffer (pool counters are shared).
  const Mmu& mmu() const { return nodes_[0]->mmu(); }
  const Fdb& fdb() const { return nodes_[0]->fdb(); }
  uint64_t pfc_wd_events() const;

  // Single-thread use only: takes in everything the shards sent each other
  // until nothing moves. Returns whether anything moved.
  bool pump_all(TimeNs now);

 private:
  class ShardDriver;

  std::vector<uint16_t> shard_of_port_;
  std::unique_ptr<SharedBuffer> buffer_;
  std::vector<std::unique_ptr<SwitchNode>> nodes_;
  std::vector<std::unique_ptr<ShardLink>> links_;
  std::vector<std::unique_ptr<Node>> drivers_;
  std::vector<rte_ring*> rings_;
};

// All shards of a ShardedSwitch as one Node on one thread (tests, sf-sim).
class ShardedSwitchNode final : public Node {
 public:
  explicit ShardedSwitchNode(ShardedSwitch& sw) : sw_(sw) {}
  uint16_t num_ports() const override { return sw_.num_ports(); }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override;
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) override;
  TimeNs next_wakeup(TimeNs now) const override;
  void advance(TimeNs now) override;
  // To the port's shard / every shard (SwitchNode's port state entry points).
  void set_port_link(PortId port, bool up, TimeNs now) override;
  void reset(TimeNs now) override;

 private:
  ShardedSwitch& sw_;
};

}  // namespace sf::sw
