// SwitchNode, credit-based link flow control (CREDIT_FC ports; InfiniBand
// style, seed 003; docs/switch.md "Credit-based link flow control"). The
// credit state of a port is its component switch/pipeline/credit_link.h
// (CreditLink: slots, credits, VL arbitration); this file wires it into
// the pipeline:
//  * receive: a data packet arriving on a credit port occupies a slot of its
//    VL; the slots are freed when the packet leaves the switch (transmitted
//    or dropped; a flooded packet at once: credit_hand tracks the packet in
//    hand, CreditInHand), and once `update_threshold` slots of a VL are freed
//    the port owes the peer a credit update frame, sent ahead of data on the
//    next transmit offer;
//  * transmit: a packet leaves a credit port only with a credit of its VL
//    (CreditLink::eligible picks the VL, the scheduler a queue of it). No
//    credit, no send: the port never overruns its peer, so credit links are
//    lossless.
//  * credit frames received update the port's credits; malformed ones and
//    entries for unknown VLs are counted (CreditCounters) and ignored; on a
//    port not in credit mode they are counted (rx_credit_ignored) and dropped.
//  * sharded: slots of another shard's port go back as credit notes
//    (switch_node_shard.cc), freed here by shard_credit_freed.
#include <rte_mbuf.h>

#include "switch/pipeline/switch_node.h"

namespace sf::sw {

void SwitchNode::credit_begin_rx(uint16_t in, const rte_mbuf* m) {
  const CreditLink* c = ports_[in].credit.get();
  if (c == nullptr) return credit_hand_.clear();
  credit_hand_.set_unclassified(c->default_vl(), c->slots_for(m->pkt_len));
}

void SwitchNode::credit_on_arrival(uint16_t in, QueuedPkt& pkt) {
  if (CreditLink* c = ports_[in].credit.get()) {
    c->on_arrival(pkt);
  } else {
    pkt.credit_vl = kNoCreditVl;
  }
  credit_in_hand(pkt);
}

void SwitchNode::credit_release_flooded(uint16_t in, QueuedPkt& pkt) {
  if (pkt.credit_vl != kNoCreditVl) ports_[in].credit->free_slots(pkt.credit_vl, pkt.credit_slots);
  pkt.credit_vl = kNoCreditVl;
  pkt.credit_slots = 0;
  credit_in_hand(pkt);
}

void SwitchNode::credit_on_drop(uint16_t in) {
  // Each packet in hand is dropped at most once; a later drop() outside
  // receive()/to_egress() must not free its slots again (take() clears it).
  const CreditInHand::Held h = credit_hand_.take();
  if (h.vl == kNoCreditVl || !ports_[in].credit) return;
  // shard: a remote ingress port (never unclassified: that frame is in hand at its own shard)
  if (shard_ != nullptr && !shard_owns(in)) return shard_credit_remote(in, h.vl, h.slots);
  CreditLink& c = *ports_[in].credit;
  if (h.unclassified ? c.free_unclassified(h.vl, h.slots) : c.free_slots(h.vl, h.slots)) credit_kick_ = true;
}

void SwitchNode::on_credit_frame(Port& port, rte_mbuf* m, TimeNs now) {
  if (!port.credit) {
    ++port.ctr.rx_credit_ignored;
  } else {
    port.credit->on_frame({rte_pktmbuf_mtod(m, const uint8_t*), m->data_len}, now);
  }
  rte_pktmbuf_free(m);
}

rte_mbuf* SwitchNode::credit_frame(Port& port) {
  CreditLink& c = *port.credit;
  if (ctrl_pool_ == nullptr || !c.update_due()) return nullptr;
  rte_mbuf* m = rte_pktmbuf_alloc(ctrl_pool_);
  if (m == nullptr) {
    c.count_alloc_failure();  // retried at the next transmit
    return nullptr;
  }
  auto* data = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, wire::kCreditFrameMaxBytes));
  wire::MacAddr src;
  src.bytes = port.mac;
  const size_t n = data == nullptr ? 0 : c.build_update({data, wire::kCreditFrameMaxBytes}, src);
  if (n == 0) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  rte_pktmbuf_trim(m, static_cast<uint16_t>(wire::kCreditFrameMaxBytes - n));
  return m;
}

void SwitchNode::credit_on_dequeue(Port& port, int q, const QueuedPkt& pkt) {
  if (port.credit) port.credit->on_send(q, pkt.bytes);
  credit_release(pkt);
}

void SwitchNode::credit_release(const QueuedPkt& pkt) {
  if (pkt.credit_vl == kNoCreditVl) return;
  if (shard_ != nullptr && !shard_owns(pkt.in_port)) {
    return shard_credit_remote(pkt.in_port, pkt.credit_vl, pkt.credit_slots);  // shard: the ingress port's own
  }
  // The update goes out on the ingress port, which the driver may not offer a
  // transmit until the node runs again: next_wakeup() asks for that.
  if (ports_[pkt.in_port].credit->free_slots(pkt.credit_vl, pkt.credit_slots)) credit_kick_ = true;
}

void SwitchNode::shard_credit_freed(uint16_t in, uint8_t vl, uint8_t slots) {
  if (!ports_[in].credit) return;  // (notes come only for credit ports)
  // As credit_release: the update goes out on the next transmit offer of `in`.
  if (ports_[in].credit->free_slots(vl, slots)) credit_kick_ = true;
}

TimeNs SwitchNode::credit_wakeup(TimeNs now) const {
  return credit_kick_ && ctrl_pool_ != nullptr ? now : TimeNs::max();
}

}  // namespace sf::sw
