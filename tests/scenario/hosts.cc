// Scenario traffic hosts. See hosts.h.
#include "tests/scenario/hosts.h"

#include <stdexcept>

#include "common/wire/frame_parser.h"

namespace sf::scenario {

RoceSender::RoceSender(rte_mempool* pool, const SenderConfig& cfg)
    : pool_(pool), cfg_(cfg), next_tx_(cfg.start), last_tx_(cfg.start) {
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
  if (wire::roce_frame_bytes(spec_, payload_.size()) != cfg.frame_bytes) {
    throw std::logic_error("RoceSender: frame size arithmetic disagrees with the builder");
  }
}

void RoceSender::receive(PortId, std::span<rte_mbuf*> pkts, TimeNs) {
  for (rte_mbuf* m : pkts) rte_pktmbuf_free(m);
}

uint16_t RoceSender::transmit(PortId, std::span<rte_mbuf*> out, TimeNs now) {
  if (out.empty() || done() || now < next_tx_) return 0;
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (m == nullptr) {
    ++alloc_failures_;
    return 0;
  }
  auto* data = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(cfg_.frame_bytes)));
  spec_.bth.psn = wire::Psn(psn_);
  spec_.ext.reth_va = sent_bytes_;
  const wire::BuildResult r = wire::build_roce_frame({data, cfg_.frame_bytes}, spec_, payload_);
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
  // Only pacing needs a wakeup; a busy wire is offered again when it frees.
  return !done() && next_tx_ > now ? next_tx_ : TimeNs::max();
}

void RoceSink::receive(PortId, std::span<rte_mbuf*> pkts, TimeNs now) {
  for (rte_mbuf* m : pkts) {
    const wire::FrameInfo f =
        wire::parse_frame({rte_pktmbuf_mtod(m, const uint8_t*), m->data_len}, m->pkt_len);
    uint8_t dscp = 0;
    bool ce = false;
    if (f.ipv4 != nullptr) {
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
    if (first_ == TimeNs::max()) first_ = now;
    last_ = now;
    if (record_) arrivals_.push_back({now, m->pkt_len, dscp, ce});
    rte_pktmbuf_free(m);
  }
}

}  // namespace sf::scenario
