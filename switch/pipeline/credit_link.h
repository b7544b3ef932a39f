// Credit-based link flow control as a port component (CREDIT_FC; InfiniBand
// style, seed 003; docs/switch.md "Credit-based link flow control";
// docs/architecture.md "Switch pipeline"). It owns the port's credit state:
// the per-port CreditPort (common/creditfc/credit_port.h: the peer's credits
// we may spend, the slots the peer's packets hold here, updates owed, the VL
// arbiter) and the switch's view of it: which VL each egress queue belongs
// to (SL = traffic class; queue = TC_TO_QUEUE of that TC) and the queues of
// each VL, so that the VL arbiter picks a VL and the queue scheduler a
// queue of it.
//
// A port without CREDIT_FC has none (SwitchNode::Port::credit is null): it
// pays a null pointer and, per packet, one test of it on receive, one on
// transmit and one of the packet's credit_vl at dequeue. The node wires it
// in (switch_node_credit.cc): which slots the packet in hand holds
// (CreditInHand below), credit frames in and out (one ctrl_pool mbuf each),
// and slots freed by another shard. Pure logic, no allocation.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "common/creditfc/credit_port.h"
#include "common/time.h"
#include "switch/config/switch_config.h"
#include "switch/mmu/mmu_config.h"
#include "switch/pipeline/egress_queue.h"

namespace sf::sw {

// QueuedPkt::credit_vl when the packet holds no ingress credit slot.
inline constexpr uint8_t kNoCreditVl = 0xFF;

class CreditLink {
 public:
  // `qos` is read at construction only (TC_TO_QUEUE).
  CreditLink(const CreditFcConfig& cfg, const PortQos& qos) : fc_(cfg) {
    for (int tc = 0; tc < kNumQueues; ++tc) {
      const uint8_t q = qos.tc_to_queue[tc];
      queue_vl_[q] = cfg.sl_to_vl[tc];  // one VL per queue (checked by parse_credit_fc)
    }
    for (int q = 0; q < kNumQueues; ++q) queues_of_vl_[queue_vl_[q]] = static_cast<uint8_t>(queues_of_vl_[queue_vl_[q]] | 1u << q);
    default_vl_ = cfg.sl_to_vl[0];
  }

  CreditPort& fc() { return fc_; }
  const CreditPort& fc() const { return fc_; }
  uint8_t vl_of_queue(int q) const { return queue_vl_[static_cast<size_t>(q)]; }
  uint8_t queues_of_vl(int vl) const { return queues_of_vl_[static_cast<size_t>(vl)]; }
  // The VL charged for a frame dropped before it could be classified.
  uint8_t default_vl() const { return default_vl_; }
  // Slots a frame of `bytes` takes (a frame over mtu + 128 bytes takes more than one), at most 255.
  uint8_t slots_for(uint32_t bytes) const { return static_cast<uint8_t>(std::min<uint32_t>(255, fc_.credits_for(bytes))); }

  // ---- receive side (the peer's packets, slots here)
  // A classified packet arrived: it holds slots of its queue's VL until it
  // leaves the switch; sets pkt.credit_vl and pkt.credit_slots.
  void on_arrival(QueuedPkt& pkt) {
    pkt.credit_vl = queue_vl_[pkt.queue];
    pkt.credit_slots = slots_for(pkt.bytes);
    fc_.on_arrival(pkt.credit_vl, pkt.credit_slots);
  }
  // Slots freed (the packet was sent, dropped or flooded); true: an update
  // frame is now owed to the peer.
  bool free_slots(int vl, uint8_t slots) {
    fc_.on_freed(vl, slots);
    return fc_.update_due();
  }
  // A frame dropped before classification: charged to `vl` and freed at once.
  bool free_unclassified(int vl, uint8_t slots) {
    fc_.on_arrival(vl, slots);
    return free_slots(vl, slots);
  }
  bool update_due() const { return fc_.update_due(); }
  // A credit update frame from the peer (malformed ones counted, ignored).
  void on_frame(std::span<const uint8_t> frame, TimeNs now) { fc_.on_frame(frame, now); }
  // The update owed, into `out` (wire::kCreditFrameMaxBytes); its length, 0: none.
  size_t build_update(std::span<uint8_t> out, const wire::MacAddr& src) { return fc_.build_update(out, src); }
  void count_alloc_failure() { fc_.count_alloc_failure(); }

  // ---- transmit side (our packets, the peer's credits)
  // Queues the scheduler may pick: those of the VL the arbiter chose among
  // VLs with a packet (head[q] > 0 bytes) in an `eligible` queue and a
  // credit for it; 0: none can go.
  uint8_t eligible(std::span<const uint32_t, kNumQueues> head, uint8_t eligible) {
    uint16_t ready = 0;
    for (int q = 0; q < kNumQueues; ++q) {
      if (((eligible >> q) & 1u) == 0 || head[q] == 0) continue;
      const uint8_t vl = queue_vl_[static_cast<size_t>(q)];
      if (fc_.can_send(vl, fc_.credits_for(head[q]))) ready = static_cast<uint16_t>(ready | 1u << vl);
    }
    const int vl = fc_.arbitrate(ready);
    return vl < 0 ? 0 : static_cast<uint8_t>(eligible & queues_of_vl_[static_cast<size_t>(vl)]);
  }
  // A packet of `bytes` left from queue q: spends its VL's credits.
  void on_send(int q, uint32_t bytes) { fc_.on_send(queue_vl_[static_cast<size_t>(q)], fc_.credits_for(bytes)); }
  // End of a transmit: stall timing of each VL, which waits for the
  // cheapest head packet among its queues not `blocked` (paused).
  void note_backlog(std::span<const EgressQueue, kNumQueues> queues, uint8_t blocked, TimeNs now) {
    for (int vl = 0; vl < kMaxVls; ++vl) {
      if (!fc_.config().vl_valid(vl)) continue;
      uint32_t need = 0;
      for (int q = 0; q < kNumQueues; ++q) {
        if (!((queues_of_vl_[static_cast<size_t>(vl)] >> q) & 1u) || ((blocked >> q) & 1u) || queues[static_cast<size_t>(q)].empty()) continue;
        const uint32_t n = fc_.credits_for(queues[static_cast<size_t>(q)].head_bytes());
        need = need == 0 ? n : std::min(need, n);
      }
      fc_.note_backlog(vl, need, now);
    }
  }

 private:
  CreditPort fc_;
  std::array<uint8_t, kNumQueues> queue_vl_{};   // egress queue -> VL
  std::array<uint8_t, kMaxVls> queues_of_vl_{};  // VL -> queue mask
  uint8_t default_vl_ = 0;
};

// The credit slots the received packet in hand holds (the one receive(),
// to_egress() or a flush is working on): freed if that packet is dropped.
// A frame not yet classified is charged to its port's default VL then.
// Each packet in hand is dropped at most once: take() clears it.
class CreditInHand {
 public:
  // None held (a plain port's packet, or nothing in hand).
  void clear() { vl_ = kNoCreditVl; }
  void set(const QueuedPkt& p) {
    vl_ = p.credit_vl;
    slots_ = p.credit_slots;
  }
  // An unclassified frame of a credit port: `slots` of `vl` if it is dropped.
  void set_unclassified(uint8_t vl, uint8_t slots) {
    vl_ = static_cast<uint8_t>(kUnclassified | vl);
    slots_ = slots;
  }
  struct Held {
    uint8_t vl = kNoCreditVl;  // kNoCreditVl: nothing
    uint8_t slots = 0;
    bool unclassified = false;
  };
  // What a drop frees, once.
  Held take() {
    const uint8_t v = vl_;
    vl_ = kNoCreditVl;
    if (v == kNoCreditVl) return {};
    return {static_cast<uint8_t>(v & 0x0F), slots_, (v & kUnclassified) != 0};
  }

 private:
  static constexpr uint8_t kUnclassified = 0x80;
  uint8_t vl_ = kNoCreditVl;
  uint8_t slots_ = 0;
};

}  // namespace sf::sw
