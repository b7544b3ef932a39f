// SwitchNode: the PFC watchdog wired into the pipeline (PFC_WD; SONiC
// semantics, shared/reference/switch.md section 4). The watchdog of a port
// is its component switch/lossless/port_watchdog.h (timers and drop masks);
// this file applies what its service() decides:
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

void SwitchNode::wd_service(uint16_t pi, TimeNs now) {
  Port& port = ports_[pi];
  PortWatchdog& wd = *port.wd;
  const PortWatchdog::Change c = wd.service(now);
  if (!c.any()) return;
  for (uint8_t q = 0; q < kNumQueues; ++q) {
    for (const bool storm : {true, false}) {
      if ((((storm ? c.events.stormed : c.events.restored) >> q) & 1u) == 0) continue;
      ++wd_events_;
      if (wd_log_.size() < kWdLogCapacity) wd_log_.push_back({now, pi, q, storm});
    }
  }
  port.pfc.set_ignore(wd.ignore_prios(), now);
  refresh_pfc_paused(port, now);
  for (uint8_t q = 0; q < kNumQueues; ++q) {
    if ((c.flush >> q) & 1u) wd_flush(pi, q);
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
    ++port.ctr.queues[q].flushed;
    if (pkt.trimmed) ++port.ctr.trimmed_dropped;
    port.wd->count_dropped(q);
    credit_in_hand(pkt);  // a credit port frees the slots the packet holds
    drop(pkt.in_port, pkt.mbuf, DropCause::kPfcWatchdog);
  }
}

}  // namespace sf::sw
