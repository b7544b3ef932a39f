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

#include "common/wire/trim.h"
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
  const Admission a = mmu_.admit(p.in_port, p.pg, p.out_port, p.queue, p.bytes);
  if (a.verdict != Verdict::kAccept) {
    ++op.ctr.trimmed_dropped;
    return refuse(drop_cause_of(a.reason));
  }
  to_egress(p, a.ticket);
}

}  // namespace sf::sw
