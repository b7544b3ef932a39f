// SwitchNode: packet trimming (SWITCH_TRIMMING; BUFFER_PROFILE
// packet_discard_action trim; shared/reference/switch.md section 5). The
// cut is the component switch/pipeline/trimmer.h (Trimmer::cut,
// trimmer.cc); this file admits what it cut: where admission refuses a
// packet for a trim profile, the trimmed packet is queued on the trim queue
// of the same egress port. What the Trimmer refuses (flooded copies, non-IP
// frames) is dropped under the original cause; a trimmed packet that
// cannot be queued is counted trimmed_dropped (and dropped under its cause).
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "switch/pipeline/shard_ring.h"
#include "switch/pipeline/switch_node.h"
#include "switch/pipeline/trimmer.h"

namespace sf::sw {

void SwitchNode::trim(QueuedPkt p, DropCause cause) {
  Port& op = ports_[p.out_port];
  auto refuse = [&](DropCause c) {
    ++op.ctr.queues[p.queue].dropped;
    drop(p.in_port, p.mbuf, c);
  };
  if (!trimmer_ || !trimmer_->cut(p, *ports_[p.in_port].qos)) return refuse(cause);
  ++op.ctr.trimmed;
  if (shard_ != nullptr && !shard_owns(p.out_port)) {
    // Sharded, egress on another shard: the ingress stage here (this shard
    // owns the PG), the egress stage on the egress shard (shard_accept), as
    // for an untrimmed packet. Same two checks as the admit() below.
    const Admission in = mmu_.admit_ingress(p.in_port, p.pg, p.bytes);
    if (in.verdict != Verdict::kAccept) {
      ++op.ctr.trimmed_dropped;
      return refuse(drop_cause_of(in.reason));
    }
    update_pfc(p.in_port, p.pg, now_);
    return shard_forward(p, in.ticket);
  }
  const Admission a = mmu_.admit(p.in_port, p.pg, p.out_port, p.queue, p.bytes);
  if (a.verdict != Verdict::kAccept) {
    ++op.ctr.trimmed_dropped;
    return refuse(drop_cause_of(a.reason));
  }
  to_egress(p, a.ticket);
}

void SwitchNode::shard_trim(QueuedPkt p, DropCause cause) {
  // Egress admission refused p (from another shard, ingress admitted there)
  // with a trim verdict. One shard would release the ingress cells and admit
  // the trimmed packet at both stages; the PG is the other shard's, so here
  // the ingress ticket shrinks to the trimmed packet's cells
  // (Trimmer::split_ticket) and the difference goes back as a release note.
  // Difference from one shard: the trimmed packet is never refused at the
  // ingress stage (it holds fewer cells than the PG just admitted for it).
  ShardLink& l = *shard_;
  Port& op = ports_[p.out_port];
  const uint16_t owner = l.shard_of_port[p.in_port];
  auto send_release = [&](const Ticket& t) {
    if (t.cells == 0) return;
    ShardRelease r{t, p.in_port, p.pg, 0};
    // Never full (shard_ring.h); counted if the bound were ever wrong.
    if (rte_ring_enqueue_elem(l.release_out[owner], &r, sizeof(ShardRelease)) != 0) ++l.ctr.release_ring_full;
    ++l.ctr.releases_sent;
  };
  auto refuse = [&](const Ticket& t, DropCause c) {
    send_release(t);
    ++op.ctr.queues[p.queue].dropped;
    drop(p.in_port, p.mbuf, c);
  };
  Ticket t = p.ticket;
  t.eg_shared = 0;  // the ingress part only: egress admission refused it
  if (!trimmer_ || !trimmer_->cut(p, *ports_[p.in_port].qos)) return refuse(t, cause);
  ++op.ctr.trimmed;
  // Split t into the part the trimmed packet keeps and the part released.
  const Trimmer::TicketSplit s = Trimmer::split_ticket(t, mmu_.cells_for(p.bytes));
  send_release(s.give);
  const Admission a = mmu_.admit_egress(p.out_port, p.queue, s.keep);
  if (a.verdict != Verdict::kAccept) {
    ++op.ctr.trimmed_dropped;
    return refuse(s.keep, drop_cause_of(a.reason));
  }
  to_egress(p, a.ticket);
}

}  // namespace sf::sw
