// Port state of the switch pipeline: admin / link status, blackhole and
// random loss knobs, reset (reboot). See port_state.h and docs/switch.md
// "Port state". Everything here runs on the lcore that owns the port; the
// packet path only tests PortStates::faulty() (0 when every port is plainly
// up) before calling in here.
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <stdexcept>

#include "common/wire/ethernet.h"
#include "switch/pipeline/shard_ring.h"
#include "switch/pipeline/switch_node.h"

namespace sf::sw {

namespace {
constexpr bool oper(uint8_t bits) { return (bits & kPortPlainUp) == kPortPlainUp; }
}  // namespace

void SwitchNode::set_port_admin(PortId port, bool up, TimeNs now) {
  const uint8_t b = st_->bits(port);
  apply_port_bits(port, static_cast<uint8_t>(up ? b | kPortAdminUp : b & ~kPortAdminUp), now);
}

void SwitchNode::set_port_link(PortId port, bool up, TimeNs now) {
  const uint8_t b = st_->bits(port);
  apply_port_bits(port, static_cast<uint8_t>(up ? b | kPortLinkUp : b & ~kPortLinkUp), now);
}

void SwitchNode::set_port_blackhole(PortId port, bool on) {
  const uint8_t b = st_->bits(port);
  apply_port_bits(port, static_cast<uint8_t>(on ? b | kPortBlackhole : b & ~kPortBlackhole), now_);
}

void SwitchNode::set_port_loss(PortId port, double rate) {
  if (!(rate >= 0 && rate <= 1)) throw std::invalid_argument("port loss rate must be in [0, 1]");
  st_->set_loss(port, rate);
  const uint8_t b = st_->bits(port);
  apply_port_bits(port, static_cast<uint8_t>(rate > 0 ? b | kPortLossy : b & ~kPortLossy), now_);
}

void SwitchNode::apply_port_bits(uint16_t port, uint8_t bits, TimeNs now) {
  now_ = now;
  const uint8_t old = st_->bits(port);
  st_->set_bits(port, bits);
  // Transmit offers (switch_node_tx.cc): a down port's transmit does nothing,
  // not even an empty pick; from up again it is idle.
  Port& op = ports_[port];
  if (oper(old) && !oper(bits) && op.idle_round != kNotIdle) {
    settle_idle(op, offer_rounds_ - op.idle_round);
    op.idle_round = kNotIdle;
  } else if (!oper(old) && oper(bits)) {
    op.idle_round = offer_rounds_;
  }
  if (oper(old) && !oper(bits)) {
    // Down: nothing waits for a port that sends nothing.
    ++ports_[port].ctr.down_events;
    flush_port(port, DropCause::kLinkDown);
    if (held_pgs_ != 0) drain_held();  // packets held for it now fail (port_down)
  }
}

void SwitchNode::flush_port(uint16_t pi, DropCause cause) {
  Port& port = ports_[pi];
  for (uint8_t q = 0; q < kNumQueues; ++q) {
    EgressQueue& eq = port.queues[q];
    while (!eq.empty()) {
      const QueuedPkt pkt = eq.pop();
      release_cells(pkt.in_port, pkt.pg, pi, q, pkt.ticket);  // and PFC
      ++port.ctr.queues[q].dropped;
      ++port.ctr.queues[q].flushed;
      if (pkt.trimmed) ++port.ctr.trimmed_dropped;
      credit_in_hand(pkt);  // a credit port frees the slots the packet holds
      drop(pkt.in_port, pkt.mbuf, cause);
    }
  }
}

bool SwitchNode::probe_link(uint16_t p, bool force) {
  if (link_probe_ == nullptr) return false;
  const uint8_t b = st_->bits(p);
  if ((b & kPortAdminUp) == 0 || (b & kPortLinkUp) != 0) return false;
  const bool remote = shard_ != nullptr && !shard_owns(p);
  // Between probes the last "up" stands for a port another shard owns:
  // without it the port flickered usable for one packet per interval while a
  // stalled owner had not applied the request yet (a loaded 2-core run lost
  // 141 of 20,000 flood copies that way). The owner applies it at once.
  if (now_ < next_probe_[p] && !force) return remote && probe_up_[p] != 0;
  next_probe_[p] = now_ + kLinkProbeInterval;
  probe_up_[p] = link_probe_(link_probe_ctx_, p) ? 1 : 0;
  if (probe_up_[p] == 0) return false;
  if (remote) {
    // Its shard applies it, at the latest when this packet reaches it
    // (shard_accept probes too).
    st_->request(p, PortStates::Field::kLink, true);
    return true;
  }
  apply_port_bits(p, static_cast<uint8_t>(b | kPortLinkUp), now_);
  return true;
}

bool SwitchNode::egress_fault(const QueuedPkt& p) {
  uint8_t b = st_->bits(p.out_port);
  // A port believed link-down whose link came up (the probe) is up from now
  // on (its shard applies it when another shard owns it).
  if (!oper(b) && (b & kPortAdminUp) && probe_link(p.out_port)) b = static_cast<uint8_t>(b | kPortLinkUp);
  DropCause cause;
  if (!oper(b)) {
    cause = DropCause::kPortDown;
  } else if (b & kPortBlackhole) {
    cause = DropCause::kBlackhole;
  } else if ((b & kPortLossy) && rng_.chance(st_->loss(p.out_port))) {
    cause = DropCause::kRandomLoss;
  } else {
    return false;
  }
  ++ports_[p.out_port].ctr.queues[p.queue].dropped;
  credit_in_hand(p);
  drop(p.in_port, p.mbuf, cause);
  return true;
}

namespace {

// A PAUSE / PFC frame (EtherType 0x8808 after the MACs; PFC is never tagged).
bool is_mac_control(const rte_mbuf* m) {
  if (rte_pktmbuf_data_len(m) < 14) return false;
  const auto* b = rte_pktmbuf_mtod(m, const uint8_t*);
  return ((uint16_t{b[12]} << 8) | b[13]) == wire::kEtherTypeMacControl;
}

}  // namespace

uint16_t SwitchNode::ingress_faults(uint16_t in, std::span<rte_mbuf*> pkts) {
  const uint8_t b = st_->bits(in);
  Port& ip = ports_[in];
  uint16_t kept = 0;
  for (rte_mbuf* m : pkts) {
    DropCause cause;
    if (!(b & kPortAdminUp)) {
      cause = DropCause::kPortDown;
    } else if (b & kPortBlackhole) {
      cause = DropCause::kBlackhole;
    } else if ((b & kPortLossy) && rng_.chance(st_->loss(in))) {
      cause = DropCause::kRandomLoss;
    } else {
      pkts[kept++] = m;
      continue;
    }
    // Received and dropped: counted as any other arrival (conservation).
    ++ip.ctr.rx_packets;
    ip.ctr.rx_bytes += m->pkt_len;
    if (is_mac_control(m)) ++ip.ctr.dropped_mac_control;  // not data: the lab's byte accounts skip it
    credit_hand_.clear();
    if (ip.credit) credit_begin_rx(in, m);  // its credit goes back to the peer
    drop(in, m, cause);
  }
  return kept;
}

void SwitchNode::apply_requests(TimeNs now) {
  const uint64_t seq = st_->seq();
  const uint64_t resets = st_->reset_seq();
  for (size_t i = 0; i < ports_.size(); ++i) {
    const auto p = static_cast<PortId>(i);
    if (shard_ != nullptr && !shard_owns(p)) continue;
    uint8_t b = st_->bits(p);
    const auto want = [&](PortStates::Field f, uint8_t bit) {
      const int w = st_->wanted(p, f);
      if (w >= 0) b = static_cast<uint8_t>(w != 0 ? b | bit : b & ~bit);
    };
    want(PortStates::Field::kAdmin, kPortAdminUp);
    want(PortStates::Field::kLink, kPortLinkUp);
    want(PortStates::Field::kBlackhole, kPortBlackhole);
    if (const double loss = st_->wanted_loss(p); loss >= 0 && loss <= 1) {
      st_->set_loss(p, loss);
      b = static_cast<uint8_t>(loss > 0 ? b | kPortLossy : b & ~kPortLossy);
    }
    apply_port_bits(p, b, now);
  }
  if (resets != reset_seen_) {
    reset_seen_ = resets;
    reset(now);
  }
  req_seen_ = seq;
}

void SwitchNode::reset(TimeNs now) {
  now_ = now;
  for (size_t i = 0; i < ports_.size(); ++i) {
    const auto pi = static_cast<uint16_t>(i);
    if (shard_ != nullptr && !shard_owns(pi)) continue;
    flush_port(pi, DropCause::kLinkDown);
  }
  // Hold FIFOs (this node's: local PGs, or remote PGs waiting for its ports).
  for (size_t i = 0; i < ports_.size(); ++i) {
    for (uint8_t pg = 0; pg < kNumPgs; ++pg) {
      EgressQueue& held = ports_[i].held[pg];
      if (held.empty()) continue;
      while (!held.empty()) {
        const QueuedPkt pkt = held.pop();
        if (shard_ != nullptr && !shard_owns(pkt.in_port)) {
          // Cells charged at the PG's own shard: a release note of the ingress part.
          ShardRelease r{pkt.ticket, pkt.in_port, pkt.pg, 0};
          rte_ring_enqueue_elem(shard_->release_out[shard_->shard_of_port[pkt.in_port]], &r, sizeof(ShardRelease));
          ++shard_->ctr.releases_sent;
        } else {
          mmu_.release_ingress(pkt.in_port, pkt.pg, pkt.ticket);
          update_pfc(pkt.in_port, pkt.pg, now);
        }
        ++ports_[pkt.out_port].ctr.queues[pkt.queue].dropped;
        credit_in_hand(pkt);
        drop(pkt.in_port, pkt.mbuf, DropCause::kLinkDown);
      }
      --held_pgs_;
    }
  }
  if (ages_fdb_) fdb_->age(now, TimeNs(0));  // every learned entry (static ones stay)
  if (ages_fdb_ && rif_) rif_->forget();     // router_if: and every resolved next hop
  l2_.begin_burst();
}

}  // namespace sf::sw
