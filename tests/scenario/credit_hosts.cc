// Credit-mode scenario hosts and fabric. See credit_hosts.h.
#include "tests/scenario/credit_hosts.h"

#include <stdexcept>

#include "common/dpdk/mempool.h"
#include "common/wire/credit_frame.h"
#include "common/wire/frame_parser.h"
#include "tests/scenario/hosts.h"
#include "tests/scenario/scenario.h"

namespace sf::scenario {

rte_mempool* credit_pool() {
  static rte_mempool* pool = [] {
    auto mp = dpdk::create_pktmbuf_pool("sf_credit_pool", 8191, 256,
                                        static_cast<uint16_t>(kCreditMaxFrameBytes + RTE_PKTMBUF_HEADROOM));
    if (!mp) throw std::runtime_error("credit pool: " + mp.error());
    return *mp;
  }();
  return pool;
}

namespace {
// A credit update owed by `fc`, in a fresh mbuf from `pool` (nullptr: none).
rte_mbuf* update_frame(rte_mempool* pool, CreditPort& fc, const wire::MacAddr& src, uint64_t* alloc_failures) {
  if (!fc.update_due()) return nullptr;
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) {
    ++*alloc_failures;
    return nullptr;
  }
  auto* data = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, wire::kCreditFrameMaxBytes));
  const size_t n = fc.build_update({data, wire::kCreditFrameMaxBytes}, src);
  rte_pktmbuf_trim(m, static_cast<uint16_t>(wire::kCreditFrameMaxBytes - n));
  return m;
}

bool is_credit_frame(const rte_mbuf* m) {
  const auto* eth = rte_pktmbuf_mtod(m, const wire::EthHeader*);
  return m->data_len >= wire::EthHeader::kSize && wire::is_credit_frame(*eth, eth->ether_type.value());
}
}  // namespace

// ---- sender -------------------------------------------------------------------

CreditRoceSender::CreditRoceSender(rte_mempool* pool, const CreditSenderConfig& cfg)
    : pool_(pool), cfg_(cfg), fc_(cfg.link), rng_(cfg.seed), next_post_(cfg.start) {
  if (cfg.payload_bytes % 4 != 0) throw std::invalid_argument("CreditRoceSender: payload must be a multiple of 4");
  frame_bytes_ = kRoceWriteOverheadBytes + cfg.payload_bytes;
  if (frame_bytes_ + RTE_PKTMBUF_HEADROOM > rte_pktmbuf_data_room_size(pool)) {
    throw std::invalid_argument("CreditRoceSender: frame exceeds the pool's data room");
  }
  vl_ = fc_.vl_of_sl(static_cast<uint8_t>(cfg.dscp >> 3));
  payload_.assign(cfg.payload_bytes, 0xA5);
  spec_.l2 = {cfg.dst_mac, cfg.src_mac, std::nullopt};
  wire::Ipv4Spec ip;
  ip.src = cfg.src_ip;
  ip.dst = cfg.dst_ip;
  ip.dscp = cfg.dscp;
  ip.ecn = wire::Ecn::kEct0;
  spec_.l3 = ip;
  spec_.udp_src_port = cfg.udp_src_port;
  spec_.bth.opcode = wire::Opcode::kRcWriteOnly;
  spec_.bth.dest_qp = 0x100;
  spec_.ext.reth_rkey = 0x1234;
  spec_.ext.reth_dma_length = cfg.payload_bytes;
  if (cfg.jitter > TimeNs(0)) next_post_ += TimeNs(static_cast<int64_t>(rng_.next_u64() % cfg.jitter.ns()));
}

void CreditRoceSender::release(TimeNs now) {
  while (posted_ < cfg_.messages && next_post_ <= now) {
    pending_frames_ += cfg_.message_frames;
    ++posted_;
    next_post_ = cfg_.start + cfg_.period * posted_;
    if (cfg_.jitter > TimeNs(0)) next_post_ += TimeNs(static_cast<int64_t>(rng_.next_u64() % cfg_.jitter.ns()));
  }
}

void CreditRoceSender::receive(PortId, std::span<rte_mbuf*> pkts, TimeNs now) {
  for (rte_mbuf* m : pkts) {
    if (is_credit_frame(m)) fc_.on_frame({rte_pktmbuf_mtod(m, const uint8_t*), m->data_len}, now);
    rte_pktmbuf_free(m);
  }
}

uint16_t CreditRoceSender::transmit(PortId, std::span<rte_mbuf*> out, TimeNs now) {
  release(now);
  if (out.empty()) return 0;
  const uint32_t need = fc_.credits_for(frame_bytes_);
  if (pending_frames_ == 0 || !fc_.can_send(vl_, need)) {
    // The wire is free: waiting without credit is a stall.
    fc_.note_backlog(vl_, pending_frames_ != 0 ? need : 0, now);
    return 0;
  }
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (m == nullptr) {
    ++alloc_failures_;
    return 0;
  }
  auto* data = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(frame_bytes_)));
  spec_.bth.psn = wire::Psn(psn_);
  spec_.ext.reth_va = sent_bytes_;
  const wire::BuildResult r = wire::build_roce_frame({data, frame_bytes_}, spec_, payload_);
  if (!r.ok() || r.frame_bytes != frame_bytes_) {
    rte_pktmbuf_free(m);
    throw std::logic_error("CreditRoceSender: build_roce_frame failed");
  }
  fc_.on_send(vl_, need);
  psn_ = (psn_ + 1) & 0xFFFFFF;
  --pending_frames_;
  ++sent_frames_;
  sent_bytes_ += frame_bytes_;
  out[0] = m;
  return 1;
}

TimeNs CreditRoceSender::next_wakeup(TimeNs now) const {
  return posted_ < cfg_.messages && next_post_ > now ? next_post_ : TimeNs::max();
}

// ---- sink ---------------------------------------------------------------------

CreditRoceSink::CreditRoceSink(rte_mempool* pool, const CreditFcConfig& link, const wire::MacAddr& mac)
    : pool_(pool), fc_(link), mac_(mac) {}

void CreditRoceSink::receive(PortId, std::span<rte_mbuf*> pkts, TimeNs now) {
  for (rte_mbuf* m : pkts) {
    if (is_credit_frame(m)) {
      fc_.on_frame({rte_pktmbuf_mtod(m, const uint8_t*), m->data_len}, now);
      rte_pktmbuf_free(m);
      continue;
    }
    const wire::FrameInfo f = wire::parse_frame({rte_pktmbuf_mtod(m, const uint8_t*), m->data_len}, m->pkt_len);
    uint8_t dscp = 0;
    if (f.ipv4 != nullptr) {
      dscp = f.ipv4->dscp();
      ++source_frames_[f.ipv4->src.bytes[3]];
    } else {
      ++not_roce_;
    }
    const uint8_t vl = fc_.vl_of_sl(static_cast<uint8_t>(dscp >> 3));
    const uint32_t slots = fc_.credits_for(m->pkt_len);
    fc_.on_arrival(vl, slots);
    fc_.on_freed(vl, slots);  // consumed at once
    ++frames_;
    bytes_ += m->pkt_len;
    dscp_bytes_[dscp] += m->pkt_len;
    rte_pktmbuf_free(m);
  }
}

uint16_t CreditRoceSink::transmit(PortId, std::span<rte_mbuf*> out, TimeNs) {
  if (out.empty()) return 0;
  rte_mbuf* m = update_frame(pool_, fc_, mac_, &alloc_failures_);
  if (m == nullptr) return 0;
  out[0] = m;
  return 1;
}

// ---- fabric -------------------------------------------------------------------

CreditFabric::CreditFabric(sw::SwitchConfig cfg, const std::vector<CreditSenderConfig>& senders,
                           const std::vector<wire::MacAddr>& sink_macs, uint64_t seed, TimeNs delay,
                           std::vector<uint16_t> shard_map)
    : cfg_(std::move(cfg)) {
  const size_t s = senders.size();
  const size_t k = sink_macs.size();
  if (cfg_.ports.ports.size() != s + k) throw std::invalid_argument("CreditFabric: the config needs senders + sinks ports");
  cfg_.seed = seed;
  for (size_t i = 0; i < k; ++i) cfg_.fdb.push_back({sink_macs[i].bytes, sw::kDefaultVlan, static_cast<uint16_t>(s + i)});
  for (size_t p = 0; p < s + k; ++p) macs_.push_back({0x02, 0x53, 0x46, 0x00, 0x00, static_cast<uint8_t>(p)});
  if (shard_map.empty()) shard_map.assign(s + k, 0);
  sharded_ = std::make_unique<sw::ShardedSwitch>(cfg_, macs_, credit_pool(), std::move(shard_map));
  if (sharded_->num_shards() > 1) sharded_node_ = std::make_unique<sw::ShardedSwitchNode>(*sharded_);
  Node& sw_node = sharded_node_ ? static_cast<Node&>(*sharded_node_) : sharded_->shard_node(0);
  auto link_of = [&](size_t port) {
    if (port >= cfg_.credit_fc.size() || !cfg_.credit_fc[port]) {
      throw std::invalid_argument("CreditFabric: every port must be a CREDIT_FC port");
    }
    return *cfg_.credit_fc[port];
  };
  for (size_t i = 0; i < k; ++i) sinks_.push_back(std::make_unique<CreditRoceSink>(credit_pool(), link_of(s + i), sink_macs[i]));
  for (size_t i = 0; i < s; ++i) {
    CreditSenderConfig c = senders[i];
    c.link = link_of(i);
    senders_.push_back(std::make_unique<CreditRoceSender>(credit_pool(), c));
  }
  sim_ = std::make_unique<sim::Simulator>(seed);
  const sim::NodeId sw_id = sim_->add_node(sw_node, "switch");
  for (size_t i = 0; i < s; ++i) {
    const sim::NodeId id = sim_->add_node(*senders_[i], "sender" + std::to_string(i));
    links_.push_back(sim_->connect(id, 0, sw_id, static_cast<PortId>(i), sim::LinkParams{cfg_.ports.ports[i].speed, delay}));
  }
  for (size_t i = 0; i < k; ++i) {
    const sim::NodeId id = sim_->add_node(*sinks_[i], "sink" + std::to_string(i));
    links_.push_back(
        sim_->connect(sw_id, static_cast<PortId>(s + i), id, 0, sim::LinkParams{cfg_.ports.ports[s + i].speed, delay}));
  }
}

uint64_t CreditFabric::sent_frames() const {
  uint64_t n = 0;
  for (const auto& s : senders_) n += s->sent_frames();
  return n;
}

uint64_t CreditFabric::delivered_frames() const {
  uint64_t n = 0;
  for (const auto& s : sinks_) n += s->frames();
  return n;
}

uint64_t CreditFabric::switch_drops() const {
  uint64_t d = 0;
  for (uint16_t p = 0; p < sharded_->num_ports(); ++p) d += sharded_->counters(p).dropped;
  return d;
}

uint64_t CreditFabric::lost_on_links() const {
  uint64_t n = 0;
  for (sim::LinkId l : links_) {
    const sim::LinkStats st = sim_->total_stats(l);
    n += st.lost_pkts + st.down_dropped_pkts;
  }
  return n;
}

uint64_t CreditFabric::overruns() const {
  uint64_t n = 0;
  for (uint16_t p = 0; p < sharded_->num_ports(); ++p) {
    const CreditCounters c = sharded_->owner(p).credit(p)->counters();
    n += c.rx_overrun + c.tx_without_credit;
  }
  for (const auto& s : sinks_) n += s->credit().counters().rx_overrun;
  for (const auto& s : senders_) n += s->credit().counters().tx_without_credit;
  return n;
}

bool CreditFabric::finished() const {
  for (const auto& s : senders_) {
    if (!s->done()) return false;
  }
  return delivered_frames() == sent_frames();
}

TimeNs CreditFabric::run(TimeNs step, TimeNs limit) {
  while (sim_->now() < limit && !finished()) sim_->run_for(step);
  return sim_->now();
}

std::vector<CreditSenderConfig> incast_senders(size_t senders, uint32_t payload_bytes, uint32_t message_bytes,
                                               uint32_t messages, TimeNs period) {
  std::vector<CreditSenderConfig> out;
  for (size_t i = 0; i < senders; ++i) {
    CreditSenderConfig s;
    s.src_mac = sender_mac(i);
    s.dst_mac = sink_mac();
    s.src_ip = sender_ip(i);
    s.dst_ip = sink_ip();
    s.udp_src_port = static_cast<uint16_t>(0xC000 + i);
    s.payload_bytes = payload_bytes;
    s.message_frames = message_bytes / payload_bytes;
    s.messages = messages;
    s.period = period;
    s.jitter = period;
    s.seed = Rng::stream_seed(3, i);
    out.push_back(s);
  }
  return out;
}

}  // namespace sf::scenario
