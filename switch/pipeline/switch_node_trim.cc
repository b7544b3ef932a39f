// SwitchNode: packet trimming (SWITCH_TRIMMING; BUFFER_PROFILE
// packet_discard_action trim; shared/reference/switch.md section 5). Where
// admission refuses a packet for a trim profile, the packet is cut to
// SWITCH_TRIMMING.size bytes keeping Ethernet / IP / UDP / BTH intact
// (common/wire/trim.h: lengths and IPv4 checksum fixed, DSCP rewritten) and
// queued on the trim queue of the same egress port. Flooded copies (shared
// bytes) and non-IP frames are not trimmable: they are dropped under the
// original cause. A trimmed packet that cannot be queued is counted
// trimmed_dropped (and dropped under its cause).
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <algorithm>

#include "common/wire/trim.h"
#include "switch/pipeline/shard_ring.h"
#include "switch/pipeline/switch_node.h"

namespace sf::sw {
namespace {

// Shortens `m` to `keep` bytes (keep <= pkt_len), freeing whole segments past it.
void cut_mbuf(rte_mbuf* m, uint32_t keep) {
  uint32_t left = keep;
  uint16_t segs = 1;
  rte_mbuf* seg = m;
  while (left > seg->data_len && seg->next != nullptr) {
    left -= seg->data_len;
    seg = seg->next;
    ++segs;
  }
  rte_mbuf* rest = seg->next;
  seg->next = nullptr;
  seg->data_len = static_cast<uint16_t>(left);
  if (rest != nullptr) rte_pktmbuf_free(rest);
  m->pkt_len = keep;
  m->nb_segs = segs;
}

}  // namespace

void SwitchNode::trim(QueuedPkt p, DropCause cause) {
  Port& op = ports_[p.out_port];
  rte_mbuf* m = p.mbuf;
  auto refuse = [&](DropCause c) {
    ++op.ctr.queues[p.queue].dropped;
    drop(p.in_port, m, c);
  };
  if (!cfg_.trim || p.ip_version == 0 || p.trimmed || rte_mbuf_refcnt_read(m) != 1) return refuse(cause);
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  const wire::FrameInfo f = wire::parse_frame({data, m->data_len}, m->pkt_len);
  const wire::TrimResult r = wire::trim_frame({data, m->data_len}, f, cfg_.trim->size_bytes, cfg_.trim->dscp);
  if (!r.ok()) return refuse(cause);
  if (r.cut) cut_mbuf(m, r.frame_bytes);
  ++op.ctr.trimmed;
  const PortQos& qos = *ports_[p.in_port].qos;
  p.queue = cfg_.trim->dynamic_queue ? qos.tc_to_queue[qos.dscp_to_tc[cfg_.trim->dscp]] : cfg_.trim->queue;
  p.bytes = m->pkt_len;
  p.trimmed = true;
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
  // the ingress ticket shrinks to the trimmed packet's cells (reserved cells
  // kept first, then shared, then headroom: what a re-admission right after
  // the release takes) and the difference goes back as a release note.
  // Difference from one shard: the trimmed packet is never refused at the
  // ingress stage (it holds fewer cells than the PG just admitted for it).
  ShardLink& l = *shard_;
  Port& op = ports_[p.out_port];
  rte_mbuf* m = p.mbuf;
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
    drop(p.in_port, m, c);
  };
  Ticket t = p.ticket;
  t.eg_shared = 0;  // the ingress part only: egress admission refused it
  if (!cfg_.trim || p.ip_version == 0 || p.trimmed || rte_mbuf_refcnt_read(m) != 1) return refuse(t, cause);
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  const wire::FrameInfo f = wire::parse_frame({data, m->data_len}, m->pkt_len);
  const wire::TrimResult r = wire::trim_frame({data, m->data_len}, f, cfg_.trim->size_bytes, cfg_.trim->dscp);
  if (!r.ok()) return refuse(t, cause);
  if (r.cut) cut_mbuf(m, r.frame_bytes);
  ++op.ctr.trimmed;
  const PortQos& qos = *ports_[p.in_port].qos;
  p.queue = cfg_.trim->dynamic_queue ? qos.tc_to_queue[qos.dscp_to_tc[cfg_.trim->dscp]] : cfg_.trim->queue;
  p.bytes = m->pkt_len;
  p.trimmed = true;

  // Split t into the part the trimmed packet keeps and the part released.
  const uint32_t want = std::min<uint32_t>(mmu_.cells_for(p.bytes), t.cells);
  const uint32_t reserved = t.cells - t.ing_shared - t.ing_hdrm;
  Ticket keep;
  keep.cells = static_cast<uint16_t>(want);
  const uint32_t res_keep = std::min(reserved, want);
  keep.ing_shared = static_cast<uint16_t>(std::min<uint32_t>(t.ing_shared, want - res_keep));
  keep.ing_hdrm = static_cast<uint16_t>(std::min<uint32_t>(t.ing_hdrm, want - res_keep - keep.ing_shared));
  Ticket give;
  give.cells = static_cast<uint16_t>(t.cells - keep.cells);
  give.ing_shared = static_cast<uint16_t>(t.ing_shared - keep.ing_shared);
  give.ing_hdrm = static_cast<uint16_t>(t.ing_hdrm - keep.ing_hdrm);
  send_release(give);

  const Admission a = mmu_.admit_egress(p.out_port, p.queue, keep);
  if (a.verdict != Verdict::kAccept) {
    ++op.ctr.trimmed_dropped;
    return refuse(keep, drop_cause_of(a.reason));
  }
  to_egress(p, a.ticket);
}

}  // namespace sf::sw
