// SwitchNode: the shard side of a sharded switch (ShardedSwitch; design in
// docs/architecture.md "Sharding", rules in docs/invariants.md). The ingress
// shard of a packet parses, classifies, looks up and admits it to its ingress
// PG, then (for another shard's port) hands it over with its ticket
// (shard_forward). The egress shard does what enqueue() does after ingress
// admission: egress admission, the lossless hold, WRED/ECN, queueing
// (shard_accept). Cells of a PG are released only by the PG's own shard:
// the egress shard releases the egress part and sends the ingress part back
// as a release note (shard_release_remote), which the owner applies and
// re-evaluates PFC for (shard_pump). Credit slots of a CREDIT_FC ingress
// port are likewise freed only by the port's shard: the egress shard sends
// them back as a credit note right after the packet's cell note
// (shard_credit_remote), and the owner frees them (and owes the peer an
// update once enough are free) when it takes the note in.
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "switch/pipeline/shard_ring.h"
#include "switch/pipeline/switch_node.h"

namespace sf::sw {

void SwitchNode::attach_shard(ShardLink* link, SharedBuffer* buf) {
  shard_ = link;
  mmu_.attach(buf);
}

bool SwitchNode::shard_owns(uint16_t port) const { return shard_->shard_of_port[port] == shard_->self; }

void SwitchNode::shard_forward(QueuedPkt p, const Ticket& t) {
  ShardLink& l = *shard_;
  p.ticket = t;
  const uint16_t dst = l.shard_of_port[p.out_port];
  if (rte_ring_enqueue_elem(l.data_out[dst], &p, sizeof(QueuedPkt)) == 0) {
    ++l.ctr.forwarded;
    return;
  }
  ++l.ctr.ring_full;
  mmu_.release_ingress(p.in_port, p.pg, t);
  update_pfc(p.in_port, p.pg, now_);
  ++ports_[p.out_port].ctr.queues[p.queue].dropped;
  drop(p.in_port, p.mbuf, DropCause::kQueueFull);
}

void SwitchNode::shard_release_remote(uint16_t in, uint8_t pg, uint16_t out, uint8_t q, const Ticket& t) {
  ShardLink& l = *shard_;
  mmu_.release_egress(out, q, t);
  ShardRelease r{t, in, pg, 0};
  // Never full: the ring holds total_cells notes and each note stands for at
  // least one cell still charged at the owner (shard_ring.h).
  if (rte_ring_enqueue_elem(l.release_out[l.shard_of_port[in]], &r, sizeof(ShardRelease)) != 0) {
    ++l.ctr.release_ring_full;
  }
  ++l.ctr.releases_sent;
}

void SwitchNode::shard_credit_remote(uint16_t in, uint8_t vl, uint8_t slots) {
  ShardLink& l = *shard_;
  ShardRelease r{Ticket{}, in, 0, slots};
  r.credit_vl = vl;
  // Never full: sent right after the cell note of the same packet (shard_ring.h).
  if (rte_ring_enqueue_elem(l.release_out[l.shard_of_port[in]], &r, sizeof(ShardRelease)) != 0) {
    ++l.ctr.release_ring_full;
  }
  ++l.ctr.releases_sent;
  ++l.ctr.credit_notes_sent;
}

void SwitchNode::shard_accept(QueuedPkt p) {
  const Ticket t = p.ticket;
  // The packet in hand: a drop below frees its credit slots (through a credit
  // note to the ingress shard), as drop() does on one shard.
  credit_in_hand(p);
  auto release_in = [&] {
    ShardRelease r{t, p.in_port, p.pg, 0};
    rte_ring_enqueue_elem(shard_->release_out[shard_->shard_of_port[p.in_port]], &r, sizeof(ShardRelease));
    ++shard_->ctr.releases_sent;
  };
  auto refuse = [&](DropCause cause) {
    release_in();
    ++ports_[p.out_port].ctr.queues[p.queue].dropped;
    drop(p.in_port, p.mbuf, cause);
  };
  if (PortWatchdog* wd = ports_[p.out_port].wd.get(); wd != nullptr && wd->drops_queue(p.queue)) {
    wd->count_dropped(p.queue);
    return refuse(DropCause::kPfcWatchdog);  // stormed queue, action drop
  }
  // Went down meanwhile? The sending shard saw the port usable, so a link
  // believed down here is asked again now (rare: only while a link comes up).
  if (st_->faulty() != 0 && !usable(p.out_port, true)) return refuse(DropCause::kPortDown);
  // From here as enqueue() after ingress admission. The hold FIFO of a remote
  // PG lives on this (the egress) shard: its cells stay charged at the PG's
  // shard, so XOFF is decided there from the PG's occupancy as usual.
  EgressQueue& held = ports_[p.in_port].held[p.pg];
  const bool lossless = mmu_.pg_profile(p.in_port, p.pg)->lossless();
  if (!lossless || held.empty()) {
    const Admission out = mmu_.admit_egress(p.out_port, p.queue, t);
    if (out.verdict == Verdict::kAccept) return to_egress(p, out.ticket);
    if (p.trimmed) {
      // Trimmed on the ingress shard (trim()): one shard admits it at both
      // stages at once and never holds it.
      ++ports_[p.out_port].ctr.trimmed_dropped;
      return refuse(drop_cause_of(out.reason));
    }
    if (!lossless || out.reason != DropReason::kEgressLimit) {
      if (out.verdict == Verdict::kTrim) return shard_trim(p, drop_cause_of(out.reason));
      return refuse(drop_cause_of(out.reason));
    }
  }
  if (!mmu_.egress_could_fit(p.out_port, p.queue, t.cells)) {
    return refuse(mmu_.queue_profile(p.out_port, p.queue) == nullptr ? DropCause::kNoBuffer : DropCause::kEgressLimit);
  }
  if (held.full()) return refuse(DropCause::kQueueFull);
  if (held.empty()) ++held_pgs_;
  held.push(p);
  ++ports_[p.in_port].ctr.held;
}

bool SwitchNode::shard_pending() const {
  if (shard_ == nullptr) return false;
  const ShardLink& l = *shard_;
  for (uint16_t s = 0; s < l.num_shards; ++s) {
    if (s == l.self) continue;
    if (rte_ring_count(l.release_in[s]) != 0 || rte_ring_count(l.data_in[s]) != 0) return true;
  }
  return false;
}

bool SwitchNode::shard_pump(TimeNs now) {
  if (shard_ == nullptr) return false;
  now_ = now;
  credit_hand_.clear();  // no received packet in hand
  ShardLink& l = *shard_;
  bool released = false;
  bool arrived = false;
  // Release notes first: the cells they free may admit the packets below.
  std::array<ShardRelease, 64> rel;
  std::array<QueuedPkt, 32> pkts;
  for (uint16_t s = 0; s < l.num_shards; ++s) {
    if (s == l.self) continue;
    unsigned n;
    while ((n = rte_ring_dequeue_burst_elem(l.release_in[s], rel.data(), sizeof(ShardRelease), rel.size(), nullptr)) > 0) {
      for (unsigned i = 0; i < n; ++i) {
        const ShardRelease& r = rel[i];
        if (r.credit_slots != 0) {
          shard_credit_freed(r.in_port, r.credit_vl, r.credit_slots);  // switch_node_credit.cc
          ++l.ctr.credit_notes_received;
          continue;
        }
        mmu_.release_ingress(r.in_port, r.pg, r.ticket);
        update_pfc(r.in_port, r.pg, now);
      }
      l.ctr.releases_received += n;
      released = true;
    }
  }
  for (uint16_t s = 0; s < l.num_shards; ++s) {
    if (s == l.self) continue;
    unsigned n;
    while ((n = rte_ring_dequeue_burst_elem(l.data_in[s], pkts.data(), sizeof(QueuedPkt), pkts.size(), nullptr)) > 0) {
      for (unsigned i = 0; i < n; ++i) shard_accept(pkts[i]);
      l.ctr.received += n;
      arrived = true;
    }
  }
  // Cells freed by the release notes can let held packets in (as a release
  // in transmit() does).
  if (released && held_pgs_ != 0) drain_held();
  return released || arrived;
}

void SwitchNode::shard_recheck_holds(TimeNs now) {
  now_ = now;
  credit_hand_.clear();
  if (held_pgs_ != 0) drain_held();
}

}  // namespace sf::sw
