// Switch counters under the names operators know (SONiC / mlx5 style). Plain
// uint64_t fields written by the datapath lcore only and read by the control
// thread (telemetry, time series); a torn read of a counter is acceptable.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "switch/mmu/mmu_config.h"

namespace sf::sw {

// Why the switch dropped a packet. Every drop is counted under exactly one.
enum class DropCause : uint8_t {
  kMalformed,         // frame failed parsing (truncated, bad IP header...)
  kOversize,          // longer than the ingress port's MTU allows
  kTtlExpired,        // TTL / hop limit <= 1 on a routed packet
  kNoRoute,           // routed packet without a matching route / uSID
  kHairpin,           // L2 destination is the ingress port
  kNoBuffer,          // MMU: PG or queue without a profile
  kIngressLimit,      // MMU: lossy PG over its shared threshold
  kHeadroomOverflow,  // MMU: lossless PG over threshold with headroom full
  kEgressLimit,       // MMU: queue over its shared threshold
  kBufferFull,        // MMU: physical buffer exhausted
  kWred,              // WRED early drop of a non-ECT packet
  kQueueFull,         // egress queue descriptor ring full
  kPfcWatchdog,       // flushed / refused by the PFC watchdog (action drop on a stormed queue)
  kPortDown,          // arrived on an admin-down port, or its egress port (every ECMP member) is down
  kLinkDown,          // queued on a port when it went down (or the switch was reset): flushed
  kBlackhole,         // to or from a blackholed port (link up, everything dropped)
  kRandomLoss,        // lost by the port's random loss knob (either direction)
  kNoNeighbor,        // routed to a next hop whose MAC is not resolved yet (router_if; its ARP / NS was just sent)
  kCount,
};
std::string_view to_string(DropCause c);
inline constexpr size_t kNumDropCauses = static_cast<size_t>(DropCause::kCount);

struct QueueCounters {
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;
  uint64_t enqueued_packets = 0;
  uint64_t ecn_marked = 0;
  uint64_t dropped = 0;           // all causes, charged to the egress queue
  uint64_t flushed = 0;           // of dropped: enqueued, then removed unsent (PFC watchdog, port down):
                                  // enqueued_packets = tx_packets + flushed + queued
  uint64_t watermark_bytes = 0;   // max queue bytes since the last clear
};

struct PortCounters {
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;
  uint64_t rx_mac_control = 0;   // PAUSE / PFC frames received (consumed)
  uint64_t flooded = 0;          // unknown unicast / broadcast arrivals flooded
  uint64_t flood_extra_copies = 0;  // copies beyond the first that floods queued (copies - 1 per flood
                                    // with a live port): tx + dropped + queued = rx - rx_mac_control
                                    // - rx_trapped + this
  // Router interfaces (switch/fwd/router_if.h): ARP / ND frames a router
  // port took without answering (replies to us, ARP / ND for other
  // addresses: not bridged), and
  // routed packets to an unresolved next hop that became its ARP request /
  // NS (the packet is lost, the request is sent: counted in tx, not dropped).
  uint64_t rx_trapped = 0;
  uint64_t neighbor_solicits = 0;
  uint64_t routed = 0;
  uint64_t held = 0;             // lossless arrivals held at ingress (egress queue at its limit)
  uint64_t tx_pfc_frames = 0;    // PFC frames sent (XOFF, refresh, XON)
  uint64_t pfc_alloc_failures = 0;  // a PFC frame waited: no mbuf in the control pool
  // Received MAC control frames counted and ignored (bad input):
  uint64_t rx_mac_control_bad_da = 0;     // PAUSE / PFC not sent to 01-80-C2-00-00-01
  uint64_t rx_mac_control_malformed = 0;  // PAUSE / PFC body truncated
  uint64_t rx_unsupported_op = 0;         // unknown MAC control opcode (mlx5 rx_unsupported_op_phy)
  uint64_t rx_pfc_disabled_prio = 0;      // PFC frames naming priorities without pfc_enable (those ignored)
  uint64_t rx_pfc_reserved_bits = 0;      // PFC class-enable vector with upper 8 bits set (low 8 honoured)
  // Packet trimming, charged to the egress port:
  uint64_t trimmed = 0;          // packets cut to headers instead of dropped
  uint64_t trimmed_tx = 0;       // trimmed packets transmitted
  uint64_t trimmed_dropped = 0;  // trimmed packets lost anyway (trim queue full) or not trimmable
  uint64_t down_events = 0;      // operational up -> down transitions (admin or link)
  uint64_t rx_credit_ignored = 0;  // credit frames on a port not in credit mode (consumed); credit ports: credit(p)
  // INT (HPCC hop records at egress dequeue, docs/switch.md "INT"), charged
  // to the egress port; frames that take no record are forwarded as they are:
  uint64_t int_records = 0;   // hop records appended
  uint64_t int_bytes = 0;     // bytes they added (IntHop::kSize each)
  uint64_t int_full = 0;      // stack full: overflow flag set, no record
  uint64_t int_no_room = 0;   // no room: mbuf tailroom, a shared (flooded) mbuf, tail split over segments, IP length
  uint64_t int_bad_shim = 0;  // INT flag set but no valid shim (malformed, trimmed): untouched
  uint64_t dropped = 0;          // all causes, charged to the ingress port
  uint64_t dropped_mac_control = 0;  // of dropped: PAUSE / PFC frames a port fault (admin down,
                                     // blackhole, loss) dropped before the lossless layer saw them
  std::array<uint64_t, kNumDropCauses> drops{};  // by cause, ingress port
  std::array<QueueCounters, kNumQueues> queues{};
};

}  // namespace sf::sw
