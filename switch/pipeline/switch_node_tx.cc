// Switch transmit path: scheduling, dequeue and release (transmit_stage.h),
// PFC frame generation, and the transmit offers of sf-sim. See switch_node.h.
#include "switch/pipeline/switch_node.h"

#include <rte_mbuf.h>

#include <bit>

#include "switch/pipeline/int_stage.h"
#include "switch/pipeline/transmit_stage.h"

namespace sf::sw {

uint16_t SwitchNode::transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) {
  now_ = now;
  Port& p = ports_[port];
  credit_hand_.clear();  // credit: no received packet in hand
  if (st_->faulty() != 0 && !st_->oper_up(port)) return 0;  // down: sends nothing (queues flushed)
  if (p.idle_round != kNotIdle) {
    // The rounds since the port went idle that did not offer it (next_tx_port).
    if (offer_rounds_ > p.idle_round + 1) settle_idle(p, offer_rounds_ - p.idle_round - 1);
    p.idle_round = kNotIdle;
  }
  uint16_t n = 0;
  // Control first: a PFC frame goes ahead of data (802.1Qbb).
  // (pfc_frame's first test here: most bursts owe no frame, and pay no call.)
  if (!out.empty() && ctrl_pool_ != nullptr && p.pfc.next_deadline() <= now) {
    if (rte_mbuf* f = pfc_frame(p, now); f != nullptr) out[n++] = f;
  }
  if (p.credit && n < out.size()) {
    if (rte_mbuf* f = credit_frame(p); f != nullptr) out[n++] = f;  // credit
  }
  // Nothing paused by a received frame nor as of the last refresh, and no
  // watchdog to tell: refresh() would find and leave every mask at 0.
  if (p.wd || p.pfc.paused_queues() != 0 || p.pfc.rx().paused_mask_no_update() != 0) refresh_pfc_paused(p, now);
  if (p.wd) wd_service(port, now);
  const uint8_t blocked = static_cast<uint8_t>(p.paused | p.pfc.paused_queues());
  // Queue heads read once (after the watchdog's flushes); after a pop only
  // that queue's head changes (drain_held below moves packets of other ports'
  // hold FIFOs into queues, possibly this port's, so it refreshes them all).
  std::array<uint32_t, kNumQueues> head{};
  for (int q = 0; q < kNumQueues; ++q) head[q] = p.queues[q].head_bytes();
  const auto unblocked = static_cast<uint8_t>(~blocked);
  uint64_t tx_bytes = 0;
  const uint16_t first = n;
  // Batched (not on a credit port or a shard): the
  // scheduler's repeat() instead of pick() while the same queue goes on, and
  // the cells of consecutive packets of one (ingress PG, queue) released in
  // one step. After the first packet of such a run is released (with its
  // PFC update), update_pfc() is a no-op for the rest if it would be one now
  // (release only lowers the PG's use and raises its limit), and nothing
  // else in this loop reads the MMU (drain_held() flushes first).
  const bool batch = !p.credit && shard_ == nullptr;
  ReleaseBatch rel;  // transmit_stage.h
  int last_q = -1;  // batch: the queue picked last, nothing but its head changed since
  while (n < out.size()) {
    int q;
    if (last_q >= 0 && p.sched.repeat(last_q, head[last_q])) {
      q = last_q;
    } else {
      q = p.sched.pick(head, p.credit ? p.credit->eligible(head, unblocked) : unblocked);  // credit
      if (q < 0) break;
      if (batch) last_q = q;
    }
    const QueuedPkt pkt = p.queues[q].pop();
    head[q] = p.queues[q].head_bytes();
    if (rel.joins(q, pkt.in_port, pkt.pg)) {
      rel.add(pkt.ticket);
    } else {
      rel.flush(mmu_, port);
      release_cells(pkt.in_port, pkt.pg, port, static_cast<uint8_t>(q), pkt.ticket);  // and PFC
      if (batch && held_pgs_ == 0 && pfc_idle(pkt.in_port, pkt.pg)) rel.begin(q, pkt.in_port, pkt.pg);
    }
    if (p.credit || pkt.credit_vl != kNoCreditVl) credit_on_dequeue(p, q, pkt);  // credit
    if (held_pgs_ != 0) {
      rel.flush(mmu_, port);
      drain_held();
      for (int i = 0; i < kNumQueues; ++i) head[i] = p.queues[i].head_bytes();
      last_q = -1;
    }
    if (p.wd) p.wd->on_tx(static_cast<uint8_t>(q), now);
    if (pkt.trimmed) ++p.ctr.trimmed_tx;
    uint32_t bytes = pkt.bytes;
    // INT: one branch for every frame of a queue without it; on an INT
    // queue a few header loads tell most frames that do not ask for a record.
    if ((p.int_queues >> q) & 1u) [[unlikely]] {
      if (!pkt.trimmed) {
        if (const uint16_t udp = int_candidate(pkt); udp != kIntNo) {
          bytes += int_insert(pkt, udp == kIntParse ? 0 : udp, IntHopPort{p.rate_bps, p.ctr.tx_bytes + tx_bytes, p.queues}, now, p.ctr);  // int_stage.h
        }
      }
    }
    QueueCounters& qc = p.ctr.queues[q];
    ++qc.tx_packets;
    qc.tx_bytes += bytes;
    tx_bytes += bytes;
    out[n++] = pkt.mbuf;
    // The packets that follow on queue q and would take the steps above with
    // nothing but repeat(), pop, the release batch's add and the counters
    // (batch open on their queue, ingress port and PG; no credit, watchdog,
    // hold FIFO, trimming or INT) in a tight loop (transmit_stage.h); the
    // first that would not goes round the loop above.
    if (last_q == q && held_pgs_ == 0 && !p.credit && !p.wd && ((p.int_queues >> q) & 1u) == 0) {
      const TxRun r = tx_run(p.sched, p.queues[q], q, rel, head[q], out.data() + n, static_cast<uint16_t>(out.size() - n));
      n = static_cast<uint16_t>(n + r.packets);
      qc.tx_packets += r.packets;
      qc.tx_bytes += r.bytes;
      tx_bytes += r.bytes;
    }
  }
  rel.flush(mmu_, port);
  p.ctr.tx_packets += n - first;
  p.ctr.tx_bytes += tx_bytes;
  if (p.credit) p.credit->note_backlog(p.queues, blocked, now);  // credit
  if (n == 0 && !out.empty()) p.idle_round = offer_rounds_;  // the scheduler found nothing: idle
  return n;
}

// ---- Transmit offers ----
// sf-sim offers transmit after every call into the node on every idle port
// (the wire free), in port order; next_tx_port() names the ports where that
// can do anything: a queued packet (tx_ports_), PFC / watchdog / credit
// state (ctl_ports_, ctl_active). On any other port transmit() would only
// run the scheduler over empty queues, which moves its DWRR turn on by one
// (PortScheduler::idle_picks): the port keeps the offer round of its last
// empty pick (idle_round) and settle_idle() applies the picks of the rounds
// that skipped it, so every schedule, and sf-sim's trace, is that of
// offering every idle port. A round begins with next_tx_port(0).
PortId SwitchNode::next_tx_port(PortId from, TimeNs /*now*/) {
  if (from == 0) ++offer_rounds_;
  for (size_t w = from >> 6; w < tx_ports_.size(); ++w) {
    uint64_t bits = tx_ports_[w] | ctl_ports_[w];
    if (w == static_cast<size_t>(from >> 6)) bits &= ~uint64_t{0} << (from & 63);
    while (bits != 0) {
      const int b = std::countr_zero(bits);
      bits &= bits - 1;
      const uint64_t bit = uint64_t{1} << b;
      const Port& port = ports_[w * 64 + static_cast<size_t>(b)];
      bool work = false;
      if ((tx_ports_[w] & bit) != 0) {
        if (queues_empty(port)) {
          tx_ports_[w] &= ~bit;
        } else {
          work = true;
        }
      }
      if ((ctl_ports_[w] & bit) != 0) {
        if (ctl_active(port)) {
          work = true;
        } else {
          ctl_ports_[w] &= ~bit;
        }
      }
      if (work) return static_cast<PortId>(w * 64 + static_cast<size_t>(b));
    }
  }
  return static_cast<PortId>(ports_.size());
}

void SwitchNode::settle_idle(Port& p, uint64_t rounds) { p.sched.idle_picks(rounds); }

uint8_t SwitchNode::refresh_pfc_paused(Port& port, TimeNs now) {
  const uint8_t queues = port.pfc.refresh(now);  // port_pfc.h
  if (port.wd) port.wd->on_paused_queues(queues, now);
  return queues;
}

// XOFF / XON of the PG's priorities (PortPfc::update, port_pfc.h); a port
// with PFC state is one whose timers next_wakeup() reads.
void SwitchNode::update_pfc_slow(uint16_t port, uint8_t pg, TimeNs now) {
  if (ports_[port].pfc.update(mmu_, port, pg, now)) mark_ctl(port);
}

rte_mbuf* SwitchNode::pfc_frame(Port& port, TimeNs now) {
  if (ctrl_pool_ == nullptr || port.pfc.next_deadline() > now) return nullptr;
  rte_mbuf* m = rte_pktmbuf_alloc(ctrl_pool_);
  if (m == nullptr) {
    ++port.ctr.pfc_alloc_failures;  // retried at the next transmit
    return nullptr;
  }
  PfcFrameRequest r;
  if (!port.pfc.poll(now, &r)) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  auto* data = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, 60));
  wire::MacAddr src;
  src.bytes = port.mac;
  wire::build_pfc_frame({data, 60}, src, r.enable, r.quanta);
  ++port.ctr.tx_pfc_frames;
  return m;
}

}  // namespace sf::sw
