// The switch node: construction, the per-burst entry points and the timers.
// The pipeline's own steps live beside it, one file a concern (see
// switch_node.h and docs/architecture.md "Switch stages"):
//   switch_node_rx.cc      stages A-C: parse/classify, bulk lookups, learn and
//                          forward, and the slow step for what stage A leaves;
//   switch_node_admit.cc   stage D: admission of runs and copies -> egress queues;
//   switch_node_tx.cc      transmit: scheduling, dequeue, PFC frames, transmit offers;
//   switch_node_{ports,credit,trim,watchdog,shard,router}.cc  port state and components.
#include "switch/pipeline/switch_node.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <bit>
#include <cstdio>

namespace sf::sw {

std::string_view to_string(DropCause c) {
  switch (c) {
    case DropCause::kMalformed: return "malformed";
    case DropCause::kOversize: return "oversize";
    case DropCause::kTtlExpired: return "ttl_expired";
    case DropCause::kNoRoute: return "no_route";
    case DropCause::kHairpin: return "hairpin";
    case DropCause::kNoBuffer: return "no_buffer";
    case DropCause::kIngressLimit: return "ingress_limit";
    case DropCause::kHeadroomOverflow: return "headroom_overflow";
    case DropCause::kEgressLimit: return "egress_limit";
    case DropCause::kBufferFull: return "buffer_full";
    case DropCause::kWred: return "wred";
    case DropCause::kQueueFull: return "queue_full";
    case DropCause::kPfcWatchdog: return "pfcwd_drop";
    case DropCause::kPortDown: return "port_down";
    case DropCause::kLinkDown: return "link_down";
    case DropCause::kBlackhole: return "blackhole";
    case DropCause::kRandomLoss: return "random_loss";
    case DropCause::kNoNeighbor: return "no_neighbor";
    case DropCause::kCount: break;
  }
  return "unknown";
}

DropCause drop_cause_of(DropReason r) {
  switch (r) {
    case DropReason::kNoBuffer: return DropCause::kNoBuffer;
    case DropReason::kIngressLimit: return DropCause::kIngressLimit;
    case DropReason::kHeadroomOverflow: return DropCause::kHeadroomOverflow;
    case DropReason::kEgressLimit: return DropCause::kEgressLimit;
    case DropReason::kBufferFull: return DropCause::kBufferFull;
    case DropReason::kNone:
    case DropReason::kCount: break;
  }
  return DropCause::kBufferFull;
}

namespace {

// FDB ageing runs this often (a sweep over the table, off the packet path).
constexpr TimeNs kAgeingPeriod = TimeNs::from_s(1);
// Egress descriptor rings: enough for the whole buffer in 1-cell packets,
// capped so that 8 queues x many ports stay small.
constexpr uint32_t kMaxQueueDescriptors = 16384;

}  // namespace

SwitchNode::SwitchNode(const SwitchConfig& cfg, std::span<const std::array<uint8_t, 6>> port_macs,
                       rte_mempool* ctrl_pool, const ShardInit& shard)
    : cfg_(cfg), ports_(cfg.ports.ports.size()), mmu_(cfg.mmu), ctrl_pool_(ctrl_pool), rng_(cfg.seed) {
  // Ports and their components (switch_port.h), every ring from one block.
  const uint32_t ring = std::min<uint32_t>(kMaxQueueDescriptors, mmu_.total_cells());
  queue_arena_ = QueueArena(SwitchPort::ring_slots(cfg, ring));
  for (size_t p = 0; p < ports_.size(); ++p) {
    ports_[p].init(p, cfg, mmu_, queue_arena_, ring, p < port_macs.size() ? port_macs[p] : std::array<uint8_t, 6>{});
    if (ports_[p].wd) any_wd_ = true;
  }
  wd_log_.reserve(kWdLogCapacity);
  if (shard.tables_from != nullptr) {  // shard: the first shard's tables
    fdb_ = shard.tables_from->fdb_;
    routes_ = shard.tables_from->routes_;
    rif_ = shard.tables_from->rif_;  // router_if
    states_ = shard.tables_from->states_;
    ages_fdb_ = false;
  } else {
    // Port state: PORT.admin_status; links start up (the driver reports otherwise).
    states_ = std::make_shared<PortStates>(ports_.size());
    for (size_t p = 0; p < ports_.size(); ++p) {
      if (!cfg.ports.ports[p].admin_up) states_->set_bits(static_cast<PortId>(p), kPortLinkUp);
    }
    fdb_ = std::make_shared<Fdb>(cfg.fdb_capacity, shard.concurrent_fdb);
    for (const StaticFdbEntry& e : cfg.fdb) {
      if (!fdb_->add_static(e.mac, e.vlan, e.port)) throw std::runtime_error("fdb: static entries exceed capacity");
    }
    routes_ = std::make_shared<RouteTable>(route_limits(cfg));
    if (!cfg.interfaces.empty()) rif_ = std::make_shared<RouterIf>(cfg, port_macs);  // router_if
    for (const StaticRoute& r : cfg.routes) {
      std::vector<uint32_t> ids;
      for (const RouteNextHop& nh : r.next_hops) {
        const int32_t neigh = rif_ ? rif_->neighbor_of(nh) : RouterIf::kNoNeighbor;  // router_if: resolved at run time
        ids.push_back(routes_->add_next_hop({nh.port, nh.mac, ports_[nh.port].mac, neigh}));
      }
      const RouteTarget t = ids.size() == 1 ? RouteTarget{false, ids[0]} : RouteTarget{true, routes_->add_group(ids)};
      std::array<uint8_t, 4> v4{};
      std::copy_n(r.prefix.begin(), 4, v4.begin());
      if (!(r.v6 ? routes_->add_v6(r.prefix, r.depth, t) : routes_->add_v4(v4, r.depth, t))) {
        std::string text;
        if (r.v6) {
          char buf[64];
          for (size_t i = 0; i < 16; i += 2) {
            std::snprintf(buf, sizeof(buf), "%s%x", i == 0 ? "" : ":", unsigned{r.prefix[i]} << 8 | r.prefix[i + 1]);
            text += buf;
          }
        } else {
          for (size_t i = 0; i < 4; ++i) text += (i == 0 ? "" : ".") + std::to_string(r.prefix[i]);
        }
        throw std::runtime_error("routes: STATIC_ROUTE " + text + "/" + std::to_string(r.depth) +
                                 ": cannot be added (the table is sized for the config's " +
                                 std::to_string(cfg.routes.size()) + " routes; a duplicate or a full table)");
      }
    }
  }
  if (cfg.srv6) srv6_ = Srv6Table(*cfg.srv6, port_macs);
  if (cfg.trim) trimmer_ = std::make_unique<Trimmer>(*cfg.trim);  // trimmer.h
  st_ = states_.get();
  flood_to_.assign(ports_.size(), 0);
  req_seen_ = st_->seq();
  reset_seen_ = st_->reset_seq();
  next_age_ = kAgeingPeriod;
  tx_ports_.assign((ports_.size() + 63) / 64, 0);
  ctl_ports_.assign(tx_ports_.size(), 0);
  for (size_t p = 0; p < ports_.size(); ++p) {
    if (ctl_active(ports_[p])) mark_ctl(static_cast<uint16_t>(p));  // watchdog, credit FC
  }
  run_.set_slots_for(&SwitchNode::run_slots, this);
}

// The run of `key` built straight in its egress queue's free slots after the
// tail (QueuedRun::set_slots_for): not for a shard (copies may go to another
// shard's port), nor when kCapacity more copies would not fit or the slots
// wrap round the ring.
QueuedPkt* SwitchNode::run_slots(void* ctx, uint32_t key) {
  auto* self = static_cast<SwitchNode*>(ctx);
  const auto out = static_cast<uint16_t>(key);
  const auto q = static_cast<uint8_t>(key >> 24);
  if (self->shard_ != nullptr || out >= self->ports_.size() || q >= kNumQueues) return nullptr;
  EgressQueue& eq = self->ports_[out].queues[q];
  if (eq.packets() + QueuedRun::kCapacity > eq.capacity()) return nullptr;
  return eq.tail_slots(QueuedRun::kCapacity);
}

RouteTableLimits SwitchNode::route_limits(const SwitchConfig& cfg) {
  size_t v6 = 0;
  uint64_t v6_tbl8s = 0;
  for (const StaticRoute& r : cfg.routes) {
    if (!r.v6) continue;
    ++v6;
    v6_tbl8s += lpm6_tbl8s_for(r.depth);
  }
  return route_limits_for(cfg.routes.size() - v6, v6, v6_tbl8s);
}

SwitchNode::~SwitchNode() {
  for (Port& p : ports_) {
    for (EgressQueue& q : p.queues) {
      while (!q.empty()) rte_pktmbuf_free(q.pop().mbuf);
    }
    for (EgressQueue& q : p.held) {
      while (!q.empty()) rte_pktmbuf_free(q.pop().mbuf);
    }
  }
}

void SwitchNode::receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) {
  now_ = now;
  if (st_->faulty() != 0 && st_->bits(port) != kPortPlainUp) [[unlikely]] {
    pkts = pkts.first(ingress_faults(port, pkts));  // admin down, blackhole, loss
  }
  l2_.begin_burst();  // its cache holds for one burst (one `now`, no ageing in between)
  credit_hand_.clear();  // credit: no frame in hand yet (stage C sets each frame's)
  for (size_t done = 0; done < pkts.size(); done += kStageBurst) {
    const auto n = static_cast<uint16_t>(std::min<size_t>(kStageBurst, pkts.size() - done));
    receive_stages(port, pkts.data() + done, n, now);
  }
}

void SwitchNode::drop(uint16_t in_port, rte_mbuf* m, DropCause cause) {
  PortCounters& c = ports_[in_port].ctr;
  ++c.dropped;
  ++c.drops[static_cast<size_t>(cause)];
  credit_on_drop(in_port);  // credit
  rte_pktmbuf_free(m);
}

TimeNs SwitchNode::next_wakeup(TimeNs now) const {
  // Pause expiries and PFC refreshes; a frame already owed goes out at the
  // next transmit offer, which the drivers make after every call.
  // Only ports with PFC / watchdog state (ctl_ports_): every other port's
  // timers are all TimeNs::max().
  if (st_->seq() != req_seen_) return now;  // a port state request to apply (advance)
  TimeNs t = next_age_;
  for (size_t w = 0; w < ctl_ports_.size(); ++w) {
    uint64_t bits = ctl_ports_[w];
    while (bits != 0) {
      const int b = std::countr_zero(bits);
      bits &= bits - 1;
      const Port& p = ports_[w * 64 + static_cast<size_t>(b)];
      if (!ctl_active(p)) {
        ctl_ports_[w] &= ~(uint64_t{1} << b);
        continue;
      }
      t = std::min(t, p.pfc.next_expiry());
      const TimeNs d = p.pfc.next_deadline();
      if (d > now) t = std::min(t, d);
      if (p.wd) t = std::min(t, p.wd->next_deadline());
    }
  }
  return std::min(t, credit_wakeup(now));  // credit
}

void SwitchNode::advance(TimeNs now) {
  now_ = now;
  credit_kick_ = false;  // credit: the driver offers every idle port a transmit after this call
  credit_hand_.clear();  // credit: no received packet in hand
  if (st_->seq() != req_seen_) apply_requests(now);  // switch_node_ports.cc
  if (now >= next_age_) {
    if (ages_fdb_) fdb_->age(now, cfg_.fdb_ageing);  // shard: the first shard ages the shared FDB
    next_age_ = now + kAgeingPeriod;
  }
  if (any_wd_) {
    // Pause expiries and watchdog timers: the stormed / restored state must
    // change on time even when nothing is received or sent.
    for (size_t i = 0; i < ports_.size(); ++i) {
      if (!ports_[i].wd) continue;
      refresh_pfc_paused(ports_[i], now);
      wd_service(static_cast<uint16_t>(i), now);
    }
  }
}

void SwitchNode::clear_watermarks() {
  mmu_.clear_watermarks();
  for (Port& p : ports_) {
    for (int q = 0; q < kNumQueues; ++q) p.ctr.queues[q].watermark_bytes = p.queues[q].bytes();
  }
}

}  // namespace sf::sw
