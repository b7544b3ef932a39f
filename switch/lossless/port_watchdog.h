// The PFC watchdog as a port component (PFC_WD on the port; SONiC
// semantics, shared/reference/switch.md section 4; docs/architecture.md
// "Switch pipeline"). It owns the port's watchdog state: the timers
// (PfcWatchdog, pfc_watchdog.h), the paused queues as last reported to them,
// and what the storms decided for the rest of the pipeline: the queues
// whose packets are dropped (storm, action drop) and the ingress PGs of
// their priorities, whose arrivals on this port are dropped too (SONiC: so
// that the PG cannot fill and pause upstream).
//
// A port without PFC_WD has none (SwitchNode::Port::wd is null): it pays a
// null pointer and, per packet, one test of that pointer on transmit and
// one of a node-wide flag at admission. The port's owner feeds it events
// (pause frames, pause state, transmissions), calls service() at
// next_deadline(), and applies what changed: the ignored pauses, the log,
// the flush of newly dropped queues (switch_node_watchdog.cc). Pure logic.
#pragma once

#include <cstdint>

#include "common/pfc/pfc_receiver.h"
#include "common/time.h"
#include "switch/config/switch_config.h"
#include "switch/lossless/pfc_watchdog.h"

namespace sf::sw {

class PortWatchdog {
 public:
  // `qos` (the port's maps: pfc_enable, pfc_to_queue, tc_to_pg) must outlive it.
  PortWatchdog(const PfcWdConfig& cfg, const PortQos& qos) : wd_(cfg), qos_(&qos) {}

  // ---- what the pipeline reads
  // Bit q: packets for queue q are dropped (stormed, action drop).
  uint8_t drop_queues() const { return drop_; }
  // Bit pg: arrivals on this port in PG pg are dropped.
  uint8_t drop_pgs() const { return drop_pgs_; }
  bool drops_queue(uint8_t q) const { return (drop_ >> q) & 1u; }
  bool drops_pg(uint8_t pg) const { return (drop_pgs_ >> pg) & 1u; }
  // Priorities whose received pauses the port ignores (stormed queues under
  // actions drop and forward).
  uint8_t ignore_prios() const { return prios_of_queues(wd_.ignore_pause_mask()); }
  const PfcWatchdog& timers() const { return wd_; }
  TimeNs next_deadline() const { return wd_.next_deadline(); }

  // ---- events
  // A PFC / PAUSE frame arrived that pauses priorities `prios` (time > 0):
  // the restoration timers of their queues restart.
  void on_pause_frame(uint8_t prios, TimeNs now) {
    uint8_t queues = 0;
    for (int p = 0; p < kPfcPrios; ++p) {
      if ((prios >> p) & 1u) queues = static_cast<uint8_t>(queues | 1u << qos_->pfc_to_queue[p]);
    }
    for (uint8_t q = 0; q < kNumQueues; ++q) {
      if ((queues >> q) & 1u) wd_.on_pfc_frame(q, now);
    }
  }
  // The port's queues paused by received PFC / PAUSE, as of `now`; only the
  // queues that changed since the last report are reported to the timers.
  void on_paused_queues(uint8_t queues, TimeNs now) {
    if (queues == paused_) return;
    const auto changed = static_cast<uint8_t>(queues ^ paused_);
    for (uint8_t q = 0; q < kNumQueues; ++q) {
      if ((changed >> q) & 1u) wd_.on_paused(q, (queues >> q) & 1u, now);
    }
    paused_ = queues;
  }
  // Queue q transmitted a packet.
  void on_tx(uint8_t q, TimeNs now) { wd_.on_tx(q, now); }

  // What a service() call changed: the storms and restorations, and the
  // queues newly dropped, which the owner flushes.
  struct Change {
    PfcWdEvents events;
    uint8_t flush = 0;
    bool any() const { return (events.stormed | events.restored) != 0; }
  };
  // Runs the timers due at `now` and updates the drop masks.
  Change service(TimeNs now) {
    Change c;
    if (wd_.next_deadline() > now) return c;
    c.events = wd_.advance(now);
    if (!c.any()) return c;
    c.flush = static_cast<uint8_t>(wd_.drop_mask() & ~drop_);
    drop_ = wd_.drop_mask();
    drop_pgs_ = 0;
    const uint8_t prios = prios_of_queues(drop_);
    for (int p = 0; p < kPfcPrios; ++p) {
      if ((prios >> p) & 1u) drop_pgs_ = static_cast<uint8_t>(drop_pgs_ | 1u << qos_->tc_to_pg[p]);
    }
    return c;
  }

  // ---- counters
  // A packet for dropped queue q (or flushed from it) was dropped.
  void count_dropped(uint8_t q) { wd_.count_dropped(q); }
  // An arrival in a dropped PG was dropped: counted on the lowest dropped queue.
  void count_rx_dropped() {
    for (uint8_t q = 0; q < kNumQueues; ++q) {
      if ((drop_ >> q) & 1u) {
        wd_.count_rx_dropped(q);
        return;
      }
    }
  }

 private:
  // The pfc_enable priorities whose pause maps to a queue in `queues`.
  uint8_t prios_of_queues(uint8_t queues) const {
    uint8_t prios = 0;
    for (int p = 0; p < kPfcPrios; ++p) {
      if ((qos_->pfc_enable >> p) & 1u && (queues >> qos_->pfc_to_queue[p]) & 1u) prios = static_cast<uint8_t>(prios | 1u << p);
    }
    return prios;
  }

  PfcWatchdog wd_;
  const PortQos* qos_;
  uint8_t paused_ = 0;    // paused queues as last reported to wd_
  uint8_t drop_ = 0;      // drop_queues()
  uint8_t drop_pgs_ = 0;  // drop_pgs()
};

}  // namespace sf::sw
