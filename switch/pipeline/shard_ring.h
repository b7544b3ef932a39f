// ShardLink: what one shard of a sharded switch (ShardedSwitch) knows of the
// others. Per ordered pair of shards (src, dst) there are two single-producer
// single-consumer rte_rings of fixed-size elements:
//   data    QueuedPkt: a packet ingress-admitted at src for a port of dst,
//           with its ingress ticket (dst does egress admission and queues it);
//   release ShardRelease: cells of a src-owned PG freed at dst (transmitted,
//           dropped or flushed there), returned so src releases them and
//           updates PFC.
// A ring is written only by its src shard's lcore and read only by its dst's.
// Every element holds at least one cell charged at its src shard, so a ring
// of total_cells elements never fills (release rings are sized so; data rings
// are capped and count ring_full drops).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "switch/mmu/mmu.h"
#include "switch/pipeline/egress_queue.h"

struct rte_ring;

namespace sf::sw {

inline constexpr uint16_t kMaxShards = 8;

// The ingress part of a ticket, going back to the PG's shard.
struct ShardRelease {
  Ticket ticket;
  uint16_t in_port = 0;
  uint8_t pg = 0;
  uint8_t reserved = 0;
};
static_assert(sizeof(ShardRelease) % 4 == 0 && sizeof(QueuedPkt) % 4 == 0, "rte_ring element sizes");

struct ShardCounters {
  uint64_t forwarded = 0;      // packets sent to other shards
  uint64_t received = 0;       // packets taken from other shards
  uint64_t releases_sent = 0;  // release notes sent
  uint64_t releases_received = 0;
  uint64_t ring_full = 0;      // packets dropped (queue_full): the data ring to their shard was full
};

struct ShardLink {
  uint16_t self = 0;
  uint16_t num_shards = 1;
  std::span<const uint16_t> shard_of_port;  // port -> shard
  std::array<rte_ring*, kMaxShards> data_out{};     // [dst]
  std::array<rte_ring*, kMaxShards> data_in{};      // [src]
  std::array<rte_ring*, kMaxShards> release_out{};  // [dst]
  std::array<rte_ring*, kMaxShards> release_in{};   // [src]
  ShardCounters ctr;  // written by this shard's lcore only
};

}  // namespace sf::sw
