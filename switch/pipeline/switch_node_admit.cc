// Switch receive path, stage D: admission of each run of copies as it closes
// (admission_stage.h in one step, else copy by copy through the port
// components) -> the egress queues; held copies drained. See switch_node.h.
#include "switch/pipeline/switch_node.h"

#include <algorithm>

#include "switch/pipeline/admission_copy.h"
#include "switch/pipeline/admission_stage.h"

namespace sf::sw {

void SwitchNode::flush_run() {
  const bool in_ring = run_.in_ring();
  const uint16_t n = run_.take();
  const QueuedPkt* run = run_.data();
  if (n > 1 && enqueue_run(run, n)) return;  // in the ring: committed where it was built
  if (in_ring) {
    // Copy by copy pushes at the tail, where the run lies: from a copy of it.
    QueuedPkt* staging = run_.staging();
    std::copy(run, run + n, staging);
    run = staging;
  }
  for (uint16_t i = 0; i < n; ++i) enqueue_one(run[i]);
}

// What enqueue_one() then to_egress() check of the port components, once for
// the run; admit_run_whole (admission_stage.h) checks the queue, WRED, PFC
// and the MMU.
bool SwitchNode::enqueue_run(const QueuedPkt* run, uint16_t n) {
  if (shard_ != nullptr) return false;  // shard: copy by copy (remote egress ports, shared pools)
  const QueuedPkt& p0 = run[0];
  Port& ip = ports_[p0.in_port];
  Port& op = ports_[p0.out_port];
  if (any_wd_ && ((op.wd && op.wd->drops_queue(p0.queue)) || (ip.wd && ip.wd->drops_pg(p0.pg)))) return false;
  if (((ip.lossless_pgs >> p0.pg) & 1u) && !ip.held[p0.pg].empty()) return false;  // behind held packets
  // PFC: update_pfc() must stay a no-op after every copy.
  const uint8_t prios = ip.pfc.pg_prios(p0.pg);
  const RunPfc pfc{prios != 0, (ip.pfc.xoff_mask() & prios) != 0};
  if (!admit_run_whole(mmu_, op.queues[p0.queue], op.ctr.queues[p0.queue], op.wred[p0.queue], pfc, run, n)) return false;
  mark_tx(p0.out_port);
  credit_in_hand(run[n - 1]);  // credit
  return true;
}

void SwitchNode::enqueue_one(const QueuedPkt& p) {
  auto refuse = [&](DropCause cause) {
    ++ports_[p.out_port].ctr.queues[p.queue].dropped;
    drop(p.in_port, p.mbuf, cause);
  };
  if (any_wd_) {
    PortWatchdog* owd = ports_[p.out_port].wd.get();
    if (owd != nullptr && owd->drops_queue(p.queue)) {
      owd->count_dropped(p.queue);
      return refuse(DropCause::kPfcWatchdog);  // stormed queue, action drop
    }
    PortWatchdog* iwd = ports_[p.in_port].wd.get();
    if (iwd != nullptr && iwd->drops_pg(p.pg)) {
      iwd->count_rx_dropped();  // from a stormed peer in a stormed priority's PG
      return refuse(DropCause::kPfcWatchdog);
    }
  }
  const Admission in = mmu_.admit_ingress(p.in_port, p.pg, p.bytes);
  if (in.verdict == Verdict::kTrim) return trim(p, drop_cause_of(in.reason));
  if (in.verdict != Verdict::kAccept) return refuse(drop_cause_of(in.reason));
  update_pfc(p.in_port, p.pg, now_);
  if (shard_ != nullptr && !shard_owns(p.out_port)) return shard_forward(p, in.ticket);  // shard

  // Egress admission or the hold FIFO (admission_copy.h).
  Port& ip = ports_[p.in_port];
  EgressQueue& held = ip.held[p.pg];
  const CopyEgress e = admit_copy_egress(mmu_, p, in.ticket, (ip.lossless_pgs >> p.pg) & 1u, held);
  if (e.released) update_pfc(p.in_port, p.pg, now_);
  switch (e.kind) {
    case CopyEgress::kQueue: return to_egress(p, e.ticket);
    case CopyEgress::kTrim: return trim(p, e.cause);
    case CopyEgress::kRefuse: return refuse(e.cause);
    case CopyEgress::kHold: break;
  }
  if (held.empty()) ++held_pgs_;
  held.push(p, e.ticket);
  ++ip.ctr.held;
}

void SwitchNode::to_egress(const QueuedPkt& p, const Ticket& t) {
  credit_in_hand(p);  // credit
  Port& op = ports_[p.out_port];
  QueueCounters& qc = op.ctr.queues[p.queue];
  EgressQueue& q = op.queues[p.queue];
  auto refuse = [&](DropCause cause) {
    release_cells(p.in_port, p.pg, p.out_port, p.queue, t);  // the PG may drop below XON
    ++qc.dropped;
    if (p.trimmed) ++op.ctr.trimmed_dropped;
    drop(p.in_port, p.mbuf, cause);
  };
  if (any_wd_ && op.wd && op.wd->drops_queue(p.queue)) {
    op.wd->count_dropped(p.queue);
    return refuse(DropCause::kPfcWatchdog);  // e.g. held at ingress before the storm
  }
  if (st_->faulty() != 0 && !st_->oper_up(p.out_port)) return refuse(DropCause::kPortDown);  // held before it went down
  if (q.full()) return refuse(DropCause::kQueueFull);

  // WRED/ECN on the instantaneous queue depth (admission_copy.h).
  switch (wred_ecn(op.wred[p.queue], q, p, rng_)) {
    case EcnAction::kMark:
      ++qc.ecn_marked;
      break;
    case EcnAction::kDrop:
      return refuse(DropCause::kWred);
    case EcnAction::kPass:
      break;
  }
  q.push(p, t);
  mark_tx(p.out_port);
  ++qc.enqueued_packets;
  qc.watermark_bytes = std::max(qc.watermark_bytes, q.bytes());
}

void SwitchNode::drain_held() {
  // Round robin over the hold FIFOs, one packet per FIFO per pass, starting
  // after the FIFO served last, so that PGs held for the same egress queue
  // share its freed space instead of the lowest port taking it all.
  const size_t n = ports_.size() * kNumPgs;
  bool moved = true;
  while (moved && held_pgs_ != 0) {
    moved = false;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (held_rr_ + k) % n;
      EgressQueue& held = ports_[i / kNumPgs].held[i % kNumPgs];
      if (held.empty()) continue;
      const QueuedPkt& h = held.front();
      if (!mmu_.egress_fits(h.out_port, h.queue, h.ticket.cells)) continue;  // head of line blocks this PG
      const QueuedPkt p = held.pop();
      if (held.empty()) --held_pgs_;
      const Admission out = mmu_.admit_egress(p.out_port, p.queue, p.ticket);
      to_egress(p, out.ticket);
      held_rr_ = (i + 1) % n;
      moved = true;
    }
  }
}

}  // namespace sf::sw
