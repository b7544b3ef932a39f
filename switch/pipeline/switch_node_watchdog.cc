// SwitchNode: the PFC watchdog wired into the pipeline (PFC_WD; SONiC
// semantics, shared/reference/switch.md section 4). The per-port timers are
// switch/lossless/pfc_watchdog.h; this file feeds them received pauses,
// transmissions and pause frames, and applies what they decide:
// - storm, action drop: received pauses for the queue's priorities are
//   ignored, the queue is flushed, and packets for it are dropped
//   (`pfcwd_drop`) until restoration, as are packets arriving on the stormed
//   port in the PGs of those priorities (SONiC: so that the port's PG cannot
//   fill and pause upstream);
// - storm, action forward: pauses ignored, the queue keeps sending;
// - storm, action alert: logged and counted only;
// - restoration: pauses are honoured again.
// Every storm and restoration is logged (pfc_wd_log) and counted.
#include <rte_mbuf.h>

#include "switch/pipeline/switch_node.h"

namespace sf::sw {

uint8_t SwitchNode::prios_of_queues(const Port& port, uint8_t queues) {
  uint8_t prios = 0;
  for (int p = 0; p < kPfcPrios; ++p) {
    if ((port.qos->pfc_enable >> p) & 1u && (queues >> port.qos->pfc_to_queue[p]) & 1u) {
      prios = static_cast<uint8_t>(prios | 1u << p);
    }
  }
  return prios;
}

void SwitchNode::wd_pfc_frame(Port& port, uint8_t prios, TimeNs now) {
  uint8_t queues = 0;
  for (int p = 0; p < kPfcPrios; ++p) {
    if ((prios >> p) & 1u) queues = static_cast<uint8_t>(queues | 1u << port.qos->pfc_to_queue[p]);
  }
  for (uint8_t q = 0; q < kNumQueues; ++q) {
    if ((queues >> q) & 1u) port.wd.on_pfc_frame(q, now);
  }
}

void SwitchNode::wd_service(uint16_t pi, TimeNs now) {
  Port& port = ports_[pi];
  if (port.wd.next_deadline() > now) return;
  const PfcWdEvents ev = port.wd.advance(now);
  if ((ev.stormed | ev.restored) == 0) return;
  for (uint8_t q = 0; q < kNumQueues; ++q) {
    for (const bool storm : {true, false}) {
      if ((((storm ? ev.stormed : ev.restored) >> q) & 1u) == 0) continue;
      ++wd_events_;
      if (wd_log_.size() < kWdLogCapacity) wd_log_.push_back({now, pi, q, storm});
    }
  }
  port.pfc_rx.set_ignore(prios_of_queues(port, port.wd.ignore_pause_mask()), now);
  refresh_pfc_paused(port, now);
  const auto flush = static_cast<uint8_t>(port.wd.drop_mask() & ~port.wd_drop);
  port.wd_drop = port.wd.drop_mask();
  port.wd_drop_pgs = 0;
  const uint8_t prios = prios_of_queues(port, port.wd_drop);
  for (int p = 0; p < kPfcPrios; ++p) {
    if ((prios >> p) & 1u) port.wd_drop_pgs = static_cast<uint8_t>(port.wd_drop_pgs | 1u << port.qos->tc_to_pg[p]);
  }
  for (uint8_t q = 0; q < kNumQueues; ++q) {
    if ((flush >> q) & 1u) wd_flush(pi, q);
  }
  if (held_pgs_ != 0) drain_held();
}

void SwitchNode::wd_flush(uint16_t pi, uint8_t q) {
  Port& port = ports_[pi];
  EgressQueue& eq = port.queues[q];
  while (!eq.empty()) {
    const QueuedPkt pkt = eq.pop();
    release_cells(pkt.in_port, pkt.pg, pi, q, pkt.ticket);  // and PFC
    ++port.ctr.queues[q].dropped;
    if (pkt.trimmed) ++port.ctr.trimmed_dropped;
    port.wd.count_dropped(q);
    credit_in_hand(pkt);  // a credit port frees the slots the packet holds
    drop(pkt.in_port, pkt.mbuf, DropCause::kPfcWatchdog);
  }
}

}  // namespace sf::sw
