// Transmit stage E's INT hop record (HPCC in-band network telemetry;
// docs/switch.md "INT"; the shim: common/wire/int_shim.h, docs/wire-formats.md
// "INT shim"; facts: shared/reference/cc.md 2.1; docs/architecture.md
// "Switch pipeline"). A frame dequeued from a queue with INT on (the INT
// table, SwitchConfig::int_queues) that int_candidate (transmit_stage.h)
// does not rule out gets int_insert(): one IntHop if it carries the BTH INT
// flag and an open shim: B = the port's line rate, ts = `now`, txBytes =
// the port's bytes sent before it, qLen = the bytes still queued at the
// port (all queues). The IP / UDP lengths (and the IPv4 checksum) grow; the
// ICRC stays as the sender computed it (it covers the frame without the
// shim). A full stack gets the overflow flag (int_full); a frame with no
// room for 16 more bytes is forwarded as it is (int_no_room). No
// allocation: the record goes into the tailroom of the frame's last segment.
//
// A port without INT has no queue with it on: SwitchNode::transmit tests
// one bit of the port's int_queues per dequeued packet and calls nothing.
#pragma once

#include <cstdint>
#include <span>

#include "common/time.h"
#include "switch/mmu/mmu_config.h"
#include "switch/pipeline/counters.h"
#include "switch/pipeline/egress_queue.h"

namespace sf::sw {

// The port a frame leaves by, as its hop record describes it.
struct IntHopPort {
  uint64_t rate_bps = 0;         // line rate (B)
  uint64_t tx_before_bytes = 0;  // bytes the port sent before this frame (txBytes)
  // The port's egress queues as of the dequeue (qLen = their bytes).
  std::span<const EgressQueue, kNumQueues> queues;
};

// `pkt`, just dequeued, gets a hop record if it carries the BTH INT flag and
// an open shim; `udp_offset` = where its UDP header is (IPv4 IHL 5 / IPv6 at
// pkt.l3_offset, found by int_candidate), 0 = parse the frame. Counts the
// outcome in `ctr` (int_records, int_bytes, int_full, int_no_room,
// int_bad_shim) and returns the bytes added (0 or IntHop::kSize).
uint32_t int_insert(const QueuedPkt& pkt, uint16_t udp_offset, const IntHopPort& port, TimeNs now, PortCounters& ctr);

}  // namespace sf::sw
