// Receive stage D copy by copy (docs/architecture.md "Switch pipeline"):
// the pure-logic halves of SwitchNode::enqueue_one / to_egress
// (switch_node_admit.cc), for the copies admit_run_whole (admission_stage.h) did
// not take in one step. The node keeps what the port components and its
// resources decide around them: watchdog drops, port state, trimming,
// shard rings, PFC updates, the counted drop and the mbuf.
//  - admit_copy_egress: after a copy's ingress admission, its egress
//    admission: into the egress queue, held at ingress (a lossless PG whose
//    egress queue is at its limit, FIFO order kept behind held packets),
//    trimmed, or refused with its cause; the ingress cells go back where it
//    does not go on (`released`: the caller updates the PG's PFC);
//  - wred_ecn: WRED / ECN of a copy entering its egress queue.
// Inline (one call site each); no allocation, no DPDK call.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "common/rng.h"
#include "common/wire/ipv4.h"
#include "common/wire/ipv6.h"
#include "switch/mmu/mmu.h"
#include "switch/pipeline/counters.h"
#include "switch/pipeline/egress_queue.h"
#include "switch/qos/wred.h"

namespace sf::sw {

// The drop cause of an MMU refusal (switch_node_admit.cc).
DropCause drop_cause_of(DropReason r);

// Where a copy goes after its ingress admission.
struct CopyEgress {
  enum Kind : uint8_t { kQueue, kHold, kTrim, kRefuse };
  Kind kind = kRefuse;
  DropCause cause = DropCause::kNoBuffer;  // kTrim: the cause if it cannot be trimmed; kRefuse: why
  bool released = false;                   // the ingress ticket went back to the MMU
  Ticket ticket;                           // kQueue: admitted at both stages; kHold: the ingress ticket
};

// Egress admission of copy `p` whose ingress admission gave `in`. Its PG is
// lossless (`lossless`) with hold FIFO `held`: while that holds packets the
// copy joins them; a copy refused at the egress limit waits there too,
// unless waiting would block the PG forever (larger than the queue's
// largest possible limit, or no queue profile) or the FIFO is full.
[[gnu::always_inline]] inline CopyEgress admit_copy_egress(Mmu& mmu, const QueuedPkt& p, const Ticket& in, bool lossless,
                                                           const EgressQueue& held) {
  CopyEgress e;
  if (!lossless || held.empty()) {
    const Admission out = mmu.admit_egress(p.out_port, p.queue, in);
    if (out.verdict == Verdict::kAccept) {
      e.kind = CopyEgress::kQueue;
      e.ticket = out.ticket;
      return e;
    }
    if (!lossless || out.reason != DropReason::kEgressLimit) {
      mmu.release_ingress(p.in_port, p.pg, in);
      e.released = true;
      e.kind = out.verdict == Verdict::kTrim ? CopyEgress::kTrim : CopyEgress::kRefuse;
      e.cause = drop_cause_of(out.reason);
      return e;
    }
  }
  if (!mmu.egress_could_fit(p.out_port, p.queue, in.cells)) {
    mmu.release_ingress(p.in_port, p.pg, in);
    e.released = true;
    e.cause = mmu.queue_profile(p.out_port, p.queue) == nullptr ? DropCause::kNoBuffer : DropCause::kEgressLimit;
    return e;
  }
  if (held.full()) {
    mmu.release_ingress(p.in_port, p.pg, in);
    e.released = true;
    e.cause = DropCause::kQueueFull;
    return e;
  }
  e.kind = CopyEgress::kHold;
  e.ticket = in;
  return e;
}

// Stage D's WRED / ECN for one copy entering queue `q` (copy by copy,
// SwitchNode::to_egress), on the instantaneous depth (the bytes queued
// before it). At or below Kmin the probability is 0: no header read, no
// draw from `rng`. kMark: the copy's IP header (pkt.ip_version 4 / 6 at
// pkt.l3_offset; 0: never ECT, as a flooded copy whose bytes are shared)
// now carries CE, the IPv4 checksum updated; kDrop: the caller drops it.
[[gnu::always_inline]] inline EcnAction wred_ecn(const Wred& w, const EgressQueue& q, const QueuedPkt& p, Rng& rng) {
  if (!w.enabled() || q.bytes() <= w.config().kmin_bytes) return EcnAction::kPass;
  uint8_t* l3 = rte_pktmbuf_mtod_offset(p.mbuf, uint8_t*, p.l3_offset);
  auto* v4 = p.ip_version == 4 ? reinterpret_cast<wire::Ipv4Header*>(l3) : nullptr;
  auto* v6 = p.ip_version == 6 ? reinterpret_cast<wire::Ipv6Header*>(l3) : nullptr;
  const wire::Ecn ecn = v4 != nullptr ? v4->ecn() : v6 != nullptr ? v6->ecn() : wire::Ecn::kNotEct;
  const EcnAction a = w.decide(q.bytes(), ecn != wire::Ecn::kNotEct, rng.uniform());
  if (a == EcnAction::kMark) {
    if (v4 != nullptr) {
      v4->set_dscp_ecn(v4->dscp(), wire::Ecn::kCe);
      wire::ipv4_set_checksum(*v4);
    } else {
      v6->set_dscp_ecn(v6->dscp(), wire::Ecn::kCe);
    }
  }
  return a;
}

}  // namespace sf::sw
