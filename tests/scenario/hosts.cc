// Scenario traffic hosts. See hosts.h.
#include "tests/scenario/hosts.h"

#include <stdexcept>

#include "common/wire/frame_parser.h"
#include "common/wire/mac_control.h"

namespace sf::scenario {

RoceSender::RoceSender(rte_mempool* pool, const SenderConfig& cfg)
    : pool_(pool),
      cfg_(cfg),
      pfc_rx_(cfg.link_speed.bps() != 0 ? cfg.link_speed : cfg.rate),
      next_tx_(cfg.start),
      last_tx_(cfg.start) {
  if (cfg.frame_bytes < kRoceWriteOverheadBytes || (cfg.frame_bytes - kRoceWriteOverheadBytes) % 4 != 0) {
    throw std::invalid_argument("RoceSender: frame_bytes must be " + std::to_string(kRoceWriteOverheadBytes) +
                                " + a multiple of 4");
  }
  if (cfg.frame_bytes + RTE_PKTMBUF_HEADROOM > rte_pktmbuf_data_room_size(pool)) {
    throw std::invalid_argument("RoceSender: frame_bytes exceed the pool's data room");
  }
  payload_.assign(cfg.frame_bytes - kRoceWriteOverheadBytes, 0xA5);
  spec_.l2 = {cfg.dst_mac, cfg.src_mac, std::nullopt};
  wire::Ipv4Spec ip;
  ip.src = cfg.src_ip;
  ip.dst = cfg.dst_ip;
  ip.dscp = cfg.dscp;
  ip.ecn = cfg.ecn;
  spec_.l3 = ip;
  spec_.udp_src_port = cfg.udp_src_port;
  spec_.bth.opcode = wire::Opcode::kRcWriteOnly;
  spec_.bth.dest_qp = cfg.dest_qp;
  spec_.ext.reth_rkey = 0x1234;
  spec_.ext.reth_dma_length = static_cast<uint32_t>(payload_.size());
  gap_ = cfg.rate.tx_time(wire_bytes(cfg.frame_bytes));
  alt_spec_ = spec_;
  if (cfg.alternate) {
    alt_spec_.l2.dst = cfg.alt_dst_mac;
    std::get<wire::Ipv4Spec>(alt_spec_.l3).dst = cfg.alt_dst_ip;
  }
  if (wire::roce_frame_bytes(spec_, payload_.size()) != cfg.frame_bytes) {
    throw std::logic_error("RoceSender: frame size arithmetic disagrees with the builder");
  }
}

void RoceSender::receive(PortId, std::span<rte_mbuf*> pkts, TimeNs now) {
  for (rte_mbuf* m : pkts) {
    const wire::FrameInfo f = wire::parse_frame({rte_pktmbuf_mtod(m, const uint8_t*), m->data_len}, m->pkt_len);
    if (f.kind == wire::FrameKind::kMacControl && f.mac_control_dst_ok) {
      ++rx_pfc_frames_;
      if (f.pfc != nullptr) {
        std::array<uint16_t, kPfcPrios> q{};
        for (int p = 0; p < kPfcPrios; ++p) q[p] = f.pfc->time_quanta[p].value();
        pfc_rx_.on_pfc(static_cast<uint8_t>(f.pfc->enabled_mask() & (1u << cfg_.pfc_priority)), q, now);
      } else if (f.pause != nullptr) {
        pfc_rx_.on_pause(f.pause->pause_quanta.value(), now);
      }
    }
    rte_pktmbuf_free(m);
  }
}

uint16_t RoceSender::transmit(PortId, std::span<rte_mbuf*> out, TimeNs now) {
  if (out.empty() || done() || now < next_tx_) return 0;
  if (cfg_.honour_pfc && ((pfc_rx_.paused_mask(now) >> cfg_.pfc_priority) & 1u)) return 0;
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (m == nullptr) {
    ++alloc_failures_;
    return 0;
  }
  auto* data = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(cfg_.frame_bytes)));
  wire::RoceFrameSpec& spec = cfg_.alternate && (sent_frames_ & 1u) ? alt_spec_ : spec_;
  spec.bth.psn = wire::Psn(psn_);
  spec.ext.reth_va = sent_bytes_;
  const wire::BuildResult r = wire::build_roce_frame({data, cfg_.frame_bytes}, spec, payload_);
  if (!r.ok() || r.frame_bytes != cfg_.frame_bytes) {
    rte_pktmbuf_free(m);
    throw std::logic_error("RoceSender: build_roce_frame failed");
  }
  psn_ = (psn_ + 1) & 0xFFFFFF;
  ++sent_frames_;
  sent_bytes_ += cfg_.frame_bytes;
  last_tx_ = now;
  next_tx_ = now + gap_;
  out[0] = m;
  return 1;
}

TimeNs RoceSender::next_wakeup(TimeNs now) const {
  // Pacing and pause expiry need a wakeup; a busy wire is offered again when it frees.
  if (done()) return TimeNs::max();
  TimeNs t = next_tx_ > now ? next_tx_ : TimeNs::max();
  if (cfg_.honour_pfc && ((pfc_rx_.paused_mask_no_update() >> cfg_.pfc_priority) & 1u)) {
    t = std::min(t, pfc_rx_.next_expiry());
  }
  return t;
}

void RoceSink::set_storm(rte_mempool* pool, wire::MacAddr mac, uint8_t prio_mask, TimeNs start, TimeNs period,
                         TimeNs stop) {
  storm_pool_ = pool;
  storm_mac_ = mac;
  storm_prios_ = prio_mask;
  storm_next_ = start;
  storm_period_ = period;
  storm_stop_ = stop;
}

uint16_t RoceSink::transmit(PortId, std::span<rte_mbuf*> out, TimeNs now) {
  if (out.empty() || storm_pool_ == nullptr || now < storm_next_ || now >= storm_stop_) return 0;
  rte_mbuf* m = rte_pktmbuf_alloc(storm_pool_);
  if (m == nullptr) return 0;
  auto* data = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, 60));
  std::array<uint16_t, 8> q{};
  q.fill(0xFFFF);
  wire::build_pfc_frame({data, 60}, storm_mac_, storm_prios_, q);
  ++storm_frames_;
  storm_next_ = now + storm_period_;
  out[0] = m;
  return 1;
}

TimeNs RoceSink::next_wakeup(TimeNs) const {
  return storm_pool_ != nullptr && storm_next_ < storm_stop_ ? storm_next_ : TimeNs::max();
}

void RoceSink::receive(PortId, std::span<rte_mbuf*> pkts, TimeNs now) {
  for (rte_mbuf* m : pkts) {
    const wire::FrameInfo f =
        wire::parse_frame({rte_pktmbuf_mtod(m, const uint8_t*), m->data_len}, m->pkt_len);
    uint8_t dscp = 0;
    bool ce = false;
    uint8_t src = 0;
    if (f.kind == wire::FrameKind::kMacControl) {  // e.g. XON / XOFF toward a storming NIC
      rte_pktmbuf_free(m);
      continue;
    }
    if (f.ipv4 != nullptr) {
      src = f.ipv4->src.bytes[3];
      dscp = f.ipv4->dscp();
      ce = f.ipv4->ecn() == wire::Ecn::kCe;
      source_bytes_[f.ipv4->src.bytes[3]] += m->pkt_len;
    } else if (f.ipv6 != nullptr) {
      dscp = f.ipv6->dscp();
      ce = f.ipv6->ecn() == wire::Ecn::kCe;
    } else {
      ++not_ip_;
    }
    if (ce) {
      ++ce_frames_;
      ce_hash_ = (ce_hash_ ^ frames_) * 0x100000001B3ull;
    }
    ++frames_;
    bytes_ += m->pkt_len;
    wire_bytes_ += wire_bytes(m->pkt_len);
    dscp_bytes_[dscp] += m->pkt_len;
    ++dscp_frames_[dscp];
    if (first_ == TimeNs::max()) first_ = now;
    last_ = now;
    if (record_) arrivals_.push_back({now, m->pkt_len, dscp, ce, src, f.bth != nullptr ? f.bth->psn.value() : 0});
    rte_pktmbuf_free(m);
  }
}

}  // namespace sf::scenario
