// SwitchNode, credit-based link flow control (CREDIT_FC ports; InfiniBand
// style, seed 003; docs/switch.md "Credit-based link flow control"):
//  * receive: a data packet arriving on a credit port occupies a slot of its
//    VL (SL = traffic class -> VL; a frame over mtu + 128 bytes takes as many
//    slots as it needs); the slots are freed when the packet leaves
//    the switch (transmitted or dropped; a flooded packet at once), and once
//    `update_threshold` slots of a VL are freed the port owes the peer a
//    credit update frame, sent ahead of data on the next transmit offer;
//  * transmit: a packet leaves a credit port only with a credit of its VL;
//    the VL arbitration table picks among VLs with a packet and a credit,
//    then the queue scheduler among that VL's queues. No credit, no send:
//    the port never overruns its peer, so credit links are lossless.
//  * credit frames received update the port's credits; malformed ones and
//    entries for unknown VLs are counted (CreditCounters) and ignored; on a
//    port not in credit mode they are counted (rx_credit_ignored) and dropped.
#include <rte_mbuf.h>

#include <algorithm>

#include "switch/pipeline/switch_node.h"

namespace sf::sw {

namespace {
// credit_drop_vl_: 0x80 | vl while the frame in hand has not been classified
// (its slot is charged to the port's default VL if it is dropped).
constexpr uint8_t kUnclassified = 0x80;
}  // namespace

void SwitchNode::init_credit() {
  for (size_t p = 0; p < ports_.size(); ++p) {
    if (p < cfg_.credit_fc.size() && cfg_.credit_fc[p]) {
      ports_[p].credit = std::make_unique<CreditLink>(*cfg_.credit_fc[p], cfg_.qos[p]);
    }
  }
}

void SwitchNode::credit_begin_rx(uint16_t in, const rte_mbuf* m) {
  const Port& p = ports_[in];
  if (!p.credit) {
    credit_drop_vl_ = kNoCreditVl;
    return;
  }
  credit_drop_vl_ = static_cast<uint8_t>(kUnclassified | p.credit->default_vl);
  credit_drop_slots_ = static_cast<uint8_t>(std::min<uint32_t>(255, p.credit->fc.credits_for(m->pkt_len)));
}

void SwitchNode::credit_on_arrival(uint16_t in, QueuedPkt& pkt) {
  Port& p = ports_[in];
  if (!p.credit) {
    pkt.credit_vl = kNoCreditVl;
    credit_in_hand(pkt);
    return;
  }
  pkt.credit_vl = p.credit->queue_vl[pkt.queue];
  pkt.credit_slots = static_cast<uint8_t>(std::min<uint32_t>(255, p.credit->fc.credits_for(pkt.bytes)));
  p.credit->fc.on_arrival(pkt.credit_vl, pkt.credit_slots);
  credit_in_hand(pkt);
}

void SwitchNode::credit_release_flooded(uint16_t in, QueuedPkt& pkt) {
  if (pkt.credit_vl != kNoCreditVl) ports_[in].credit->fc.on_freed(pkt.credit_vl, pkt.credit_slots);
  pkt.credit_vl = kNoCreditVl;
  pkt.credit_slots = 0;
  credit_in_hand(pkt);
}

void SwitchNode::credit_on_drop(uint16_t in) {
  const uint8_t v = credit_drop_vl_;
  // Each packet in hand is dropped at most once; a later drop() outside
  // receive()/to_egress() must not free its slots again.
  credit_drop_vl_ = kNoCreditVl;
  if (v == kNoCreditVl || !ports_[in].credit) return;
  // shard: a remote ingress port (never unclassified: that frame is in hand at its own shard)
  if (shard_ != nullptr && !shard_owns(in)) return shard_credit_remote(in, v & 0x0F, credit_drop_slots_);
  CreditPort& fc = ports_[in].credit->fc;
  const int vl = v & 0x0F;
  if (v & kUnclassified) fc.on_arrival(vl, credit_drop_slots_);
  fc.on_freed(vl, credit_drop_slots_);
  if (fc.update_due()) credit_kick_ = true;
}

void SwitchNode::on_credit_frame(Port& port, rte_mbuf* m, TimeNs now) {
  if (!port.credit) {
    ++port.ctr.rx_credit_ignored;
  } else {
    port.credit->fc.on_frame({rte_pktmbuf_mtod(m, const uint8_t*), m->data_len}, now);
  }
  rte_pktmbuf_free(m);
}

rte_mbuf* SwitchNode::credit_frame(Port& port) {
  CreditPort& fc = port.credit->fc;
  if (ctrl_pool_ == nullptr || !fc.update_due()) return nullptr;
  rte_mbuf* m = rte_pktmbuf_alloc(ctrl_pool_);
  if (m == nullptr) {
    fc.count_alloc_failure();  // retried at the next transmit
    return nullptr;
  }
  auto* data = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, wire::kCreditFrameMaxBytes));
  wire::MacAddr src;
  src.bytes = port.mac;
  const size_t n = data == nullptr ? 0 : fc.build_update({data, wire::kCreditFrameMaxBytes}, src);
  if (n == 0) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  rte_pktmbuf_trim(m, static_cast<uint16_t>(wire::kCreditFrameMaxBytes - n));
  return m;
}

uint8_t SwitchNode::credit_eligible(Port& port, std::span<const uint32_t, kNumQueues> head, uint8_t eligible) {
  if (!port.credit) return eligible;
  CreditLink& c = *port.credit;
  uint16_t ready = 0;
  for (int q = 0; q < kNumQueues; ++q) {
    if (((eligible >> q) & 1u) == 0 || head[q] == 0) continue;
    const uint8_t vl = c.queue_vl[q];
    if (c.fc.can_send(vl, c.fc.credits_for(head[q]))) ready = static_cast<uint16_t>(ready | 1u << vl);
  }
  const int vl = c.fc.arbitrate(ready);
  return vl < 0 ? 0 : static_cast<uint8_t>(eligible & c.queues_of_vl[static_cast<size_t>(vl)]);
}

void SwitchNode::credit_on_dequeue(Port& port, int q, const QueuedPkt& pkt) {
  if (port.credit) port.credit->fc.on_send(port.credit->queue_vl[static_cast<size_t>(q)], port.credit->fc.credits_for(pkt.bytes));
  credit_release(pkt);
}

void SwitchNode::credit_release(const QueuedPkt& pkt) {
  if (pkt.credit_vl == kNoCreditVl) return;
  if (shard_ != nullptr && !shard_owns(pkt.in_port)) {
    return shard_credit_remote(pkt.in_port, pkt.credit_vl, pkt.credit_slots);  // shard: the ingress port's own
  }
  CreditPort& in = ports_[pkt.in_port].credit->fc;
  in.on_freed(pkt.credit_vl, pkt.credit_slots);
  // The update goes out on the ingress port, which the driver may not offer a
  // transmit until the node runs again: next_wakeup() asks for that.
  if (in.update_due()) credit_kick_ = true;
}

void SwitchNode::shard_credit_freed(uint16_t in, uint8_t vl, uint8_t slots) {
  if (!ports_[in].credit) return;  // (notes come only for credit ports)
  CreditPort& fc = ports_[in].credit->fc;
  fc.on_freed(vl, slots);
  // As credit_release: the update goes out on the next transmit offer of `in`.
  if (fc.update_due()) credit_kick_ = true;
}

void SwitchNode::credit_note_backlog(Port& port, uint8_t blocked, TimeNs now) {
  if (!port.credit) return;
  CreditLink& c = *port.credit;
  for (int vl = 0; vl < kMaxVls; ++vl) {
    if (!c.fc.config().vl_valid(vl)) continue;
    // The VL waits for the cheapest head packet among its sendable queues.
    uint32_t need = 0;
    for (int q = 0; q < kNumQueues; ++q) {
      if (!((c.queues_of_vl[vl] >> q) & 1u) || ((blocked >> q) & 1u) || port.queues[q].empty()) continue;
      const uint32_t n = c.fc.credits_for(port.queues[q].head_bytes());
      need = need == 0 ? n : std::min(need, n);
    }
    c.fc.note_backlog(vl, need, now);
  }
}

TimeNs SwitchNode::credit_wakeup(TimeNs now) const {
  return credit_kick_ && ctrl_pool_ != nullptr ? now : TimeNs::max();
}

}  // namespace sf::sw
