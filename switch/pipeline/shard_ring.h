// ShardLink: what one shard of a sharded switch (ShardedSwitch) knows of the
// others. Per ordered pair of shards (src, dst) there are two single-producer
// single-consumer rte_rings of fixed-size elements:
//   data    QueuedPkt: a packet ingress-admitted at src for a port of dst,
//           with its ingress ticket (dst does egress admission and queues it);
//   release ShardRelease: cells of a PG owned by dst freed at src
//           (transmitted, dropped or flushed there), returned so dst
//           releases them and updates PFC; and credit slots of a CREDIT_FC
//           ingress port owned by dst freed at src (the packet that held
//           them left or was dropped there), returned so dst frees them
//           before it decides its next credit update.
// A ring is written only by its src shard's lcore and read only by its dst's.
// Every cell note stands for at least one cell still charged at its owner, so
// a release ring of total_cells elements never fills. A credit note is sent
// right after the cell note of the same packet (nothing in between): of the
// notes not yet applied, every credit note but the oldest has its packet's
// cell note behind it, so with CREDIT_FC ports a ring of 2 x total_cells + 1
// never fills either (ShardedSwitch sizes them so). Every packet on a data
// ring was ingress-admitted and holds at least one cell of the shared buffer,
// so a data ring of total_cells packets never fills either; ring_full counts
// (as a queue_full drop) a packet a data ring refused, and must stay 0.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "switch/mmu/mmu.h"
#include "switch/pipeline/egress_queue.h"

struct rte_ring;

namespace sf::sw {

inline constexpr uint16_t kMaxShards = 8;

// A release note back to the shard of `in_port`. Cell note: the ingress part
// of a ticket (`ticket.cells` > 0) of PG `pg`. Credit note (`credit_slots` >
// 0, ticket empty): `credit_slots` slots of VL `credit_vl` on credit port
// `in_port` (switch_node_credit.cc). Never both in one note.
struct ShardRelease {
  Ticket ticket;
  uint16_t in_port = 0;
  uint8_t pg = 0;
  uint8_t credit_slots = 0;  // 0: no credit part
  uint8_t credit_vl = 0;
  uint8_t pad_[3] = {};
};
static_assert(sizeof(ShardRelease) == 16);
static_assert(sizeof(ShardRelease) % 4 == 0 && sizeof(QueuedPkt) % 4 == 0, "rte_ring element sizes");

struct ShardCounters {
  uint64_t forwarded = 0;      // packets sent to other shards
  uint64_t received = 0;       // packets taken from other shards
  uint64_t releases_sent = 0;  // release notes sent (cell and credit notes)
  uint64_t releases_received = 0;
  uint64_t credit_notes_sent = 0;  // of them, notes that carried credit slots
  uint64_t credit_notes_received = 0;
  uint64_t ring_full = 0;      // packets dropped (queue_full): a data ring refused them; must stay 0 (above)
  uint64_t release_ring_full = 0;  // notes a release ring refused: must stay 0 (the ring bound, above)
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
