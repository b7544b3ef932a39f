// Switch pipeline: receive path (parse, classify, forward, admit, mark,
// enqueue) and transmit path (schedule, dequeue, release). See switch_node.h.
#include "switch/pipeline/switch_node.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/wire/credit_frame.h"
#include "common/wire/frame_parser.h"
#include "common/wire/int_shim.h"
#include "common/wire/mac_control.h"
#include "common/wire/srv6.h"
#include "common/wire/udp.h"
#include "switch/pipeline/admission_copy.h"
#include "switch/pipeline/int_stage.h"
#include "switch/pipeline/lookup_stage.h"
#include "switch/pipeline/transmit_stage.h"

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

// Whether parsing got far enough for the switch: it forwards any valid IP
// packet (RoCE or not) and any Ethernet frame of another EtherType at L2.
bool l3_valid(const wire::FrameInfo& f) {
  using wire::ParseReason;
  switch (f.reason) {
    case ParseReason::kOk:
    case ParseReason::kNotUdp:
    case ParseReason::kNotRoce:
    case ParseReason::kFragmented:
      return true;
    default:
      // A RoCE-level complaint once UDP is sound is not the switch's business.
      return f.udp_end != 0;
  }
}

// A routed frame's UDP source (at 0) or destination (at 2) port, for the
// ECMP flow hash; 0 when not UDP.
uint16_t udp_port(const uint8_t* d, const RxMeta& r, uint32_t at) {
  return r.udp_offset != 0 ? static_cast<uint16_t>(d[r.udp_offset + at] << 8 | d[r.udp_offset + at + 1]) : uint16_t{0};
}

constexpr wire::ParseOptions kParseOptions{.verify_ipv4_checksum = kRxVerifyIpv4Checksum, .stop_at_udp = true};

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

// The staged pipeline (STYLE G4) over one pass of up to kStageBurst frames,
// each stage a burst over the hand-off of the one before:
//  A. parse and classify every frame (classify_stage.h) -> RxMeta per frame;
//     what the fast parse does not decide is marked kSlow;
//  B. look up all L2 destinations and IPv4 routes in bulk (lookup_stage.h)
//     -> LookupBurst;
//  C. in arrival order: learn (burst_learner.h) and forward (the decision
//     of forward_stage.h, forward_v4 / forward_v6 / forward_l2 here): each
//     copy -> enqueue() -> the QueuedRun of its (egress port, PG, queue);
//     a kSlow frame takes the slow step slow_frame() at its place, after the
//     run so far; on a CREDIT_FC port each frame takes its VL slots here
//     (credit_on_arrival) and its copies are admitted at once, not in runs;
//  D. admission of each run as it closes (flush_run: admission_stage.h in
//     one step, else enqueue_one copy by copy) -> the egress queues.
// This is the only receive path. Its outcome is that of the frames one by
// one (one receive() call each): lookups have no side effects, and the only
// thing stage C changes that stage B read is the FDB, through learning,
// which maps keys to this ingress port; a destination learned (or moved)
// earlier in the pass, or by the frame itself, is taken from the learner's
// keys of the pass instead of the bulk result.
void SwitchNode::receive_stages(uint16_t in, rte_mbuf** pkts, uint16_t n, TimeNs now) {
  Port& ip = ports_[in];
  std::array<RxMeta, kStageBurst> meta;
  // ---- A: parse and classify ----
  const ClassifyCounts rx =
      classify_burst(ClassifyPort{ip.mac, ip.max_frame_bytes, *ip.qos, rif_.get(), in}, pkts, n, meta.data());
  ip.ctr.rx_packets += rx.packets;
  ip.ctr.rx_bytes += rx.bytes;
  // ---- B: bulk lookups ----
  Fdb& fdb = *fdb_;  // once a pass, not a shared_ptr load a frame
  LookupBurst found;
  lookup_burst(fdb, *routes_, pkts, meta.data(), n, found);

  // ---- C: in order: learn, forward; D: admit each run as it closes ----
  l2_.begin_pass();
  // credit: a CREDIT_FC port's copies are admitted one by one, as each frame
  // takes and frees its VL slots (the packet in hand, credit_link.h).
  const bool on_credit = ip.credit != nullptr;
  const bool defer = !on_credit;
  run_defer_ = defer;  // enqueue() collects runs (flush_run)
  // Port faults change only in advance() (switch_node_ports.cc): one test a pass.
  const bool plain = st_->faulty() == 0;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    const RxMeta& r = meta[i];
    if (r.step == RxStep::kSlow) {
      // In order: the run so far first (PFC / watchdog / credit frames act on queues).
      flush_run();
      run_defer_ = false;
      slow_frame(in, m, now);
      run_defer_ = defer;
      continue;
    }
    auto* d = rte_pktmbuf_mtod(m, uint8_t*);
    auto* eth = reinterpret_cast<wire::EthHeader*>(d);
    const uint16_t l3_offset = r.ip_version != 0 ? r.l3_offset : 0;  // L2 frames that are IP keep it for ECN
    const bool dst_unicast = (eth->dst.bytes[0] & 1u) == 0;
    int32_t out = -1;  // a kL2 unicast frame's FDB port; -1: unknown
    if (!on_credit) [[likely]] {
      if ((eth->src.bytes[0] & 1u) == 0) l2_.learn(fdb, eth->src.bytes, r.vlan, in, now);
      if (r.step == RxStep::kL2 && dst_unicast) {
        out = l2_.dst_after_bulk(fdb, found.fdb(i), eth->dst.bytes, r.vlan, in);
        // The common case, what enqueue() does with it: a known unicast
        // destination on another port, no port faults, runs deferred: the
        // copy built straight in the run.
        if (out >= 0 && out != in && plain) [[likely]] {
          run_.add_plain(m, m->pkt_len, in, static_cast<uint16_t>(out), r.pg_q_ip(), l3_offset, [this] { flush_run(); });
          continue;
        }
      }
    }
    QueuedPkt pkt;
    pkt.mbuf = m;
    pkt.bytes = m->pkt_len;
    pkt.in_port = in;
    pkt.pg = r.pg;
    pkt.queue = r.queue;
    pkt.ip_version = r.ip_version;
    pkt.l3_offset = l3_offset;
    pkt.credit_vl = kNoCreditVl;
    if (on_credit) [[unlikely]] {
      credit_on_arrival(in, pkt);  // credit: its VL slots, the packet in hand (before learning)
      if ((eth->src.bytes[0] & 1u) == 0) l2_.learn(fdb, eth->src.bytes, r.vlan, in, now);
      if (r.step == RxStep::kL2 && dst_unicast) out = l2_.dst_after_bulk(fdb, found.fdb(i), eth->dst.bytes, r.vlan, in);
    }
    switch (r.step) {
      case RxStep::kL2:
        if (!dst_unicast) {
          forward_l2(in, pkt, std::nullopt);
        } else if (out >= 0 && out != in) {
          pkt.out_port = static_cast<uint16_t>(out);
          enqueue(pkt);
        } else {
          forward_l2(in, pkt, out >= 0 ? std::optional<uint16_t>(static_cast<uint16_t>(out)) : std::nullopt);
        }
        break;
      case RxStep::kRoute4: {
        auto* v4 = reinterpret_cast<wire::Ipv4Header*>(d + r.l3_offset);
        if (v4->ttl <= 1) {
          drop(in, m, DropCause::kTtlExpired);
          break;
        }
        forward_v4(in, pkt, eth, v4, udp_port(d, r, 0), udp_port(d, r, 2), found.route4(i));
        break;
      }
      case RxStep::kRoute6:
        forward_v6(in, pkt, eth, reinterpret_cast<wire::Ipv6Header*>(d + r.l3_offset), udp_port(d, r, 0),
                   udp_port(d, r, 2));
        break;
      case RxStep::kSlow:
        break;
    }
  }
  flush_run();  // D: the last run
  run_defer_ = false;
}

void SwitchNode::drop(uint16_t in_port, rte_mbuf* m, DropCause cause) {
  PortCounters& c = ports_[in_port].ctr;
  ++c.dropped;
  ++c.drops[static_cast<size_t>(cause)];
  credit_on_drop(in_port);  // credit
  rte_pktmbuf_free(m);
}

// Stage C's slow step: a frame stage A marked kSlow, at its place in the
// pass, with nothing deferred (run_defer_ off). The full parse
// (parse_frame) decides what the fast one did not: oversize and malformed
// frames are counted drops, credit and MAC control (PAUSE / PFC) frames are
// consumed here, ARP / ND goes to the router interfaces; every other frame
// (IPv4 options, fragments, SRv6, ...) is classified, learned and forwarded
// by the same forward_* as the fast frames. It counts the frame in the
// port's rx counters (stage A counts only the frames it classified).
void SwitchNode::slow_frame(uint16_t in, rte_mbuf* m, TimeNs now) {
  Port& ip = ports_[in];
  credit_begin_rx(in, m);  // credit
  ip.ctr.rx_packets++;
  ip.ctr.rx_bytes += m->pkt_len;
  if (m->pkt_len > ip.max_frame_bytes) return drop(in, m, DropCause::kOversize);

  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  // BTH and what follows are payload to a switch: stop at UDP.
  const wire::FrameInfo f = wire::parse_frame({data, m->data_len}, m->pkt_len, kParseOptions);
  if (f.eth == nullptr) return drop(in, m, DropCause::kMalformed);
  if (wire::is_credit_frame(*f.eth, f.ether_type)) return on_credit_frame(ip, m, now);  // credit
  if (f.kind == wire::FrameKind::kMacControl) {
    on_mac_control(in, f, now);
    rte_pktmbuf_free(m);
    return;
  }
  const bool is_ip = f.ip_version != wire::IpVersion::kNone;
  if (is_ip && !l3_valid(f)) return drop(in, m, DropCause::kMalformed);
  if (!is_ip && f.reason != wire::ParseReason::kUnsupportedEtherType) return drop(in, m, DropCause::kMalformed);

  // The header that routing, TTL and ECN act on: the outer one for SRv6.
  auto* v4 = const_cast<wire::Ipv4Header*>(f.ipv4);
  auto* v6 = const_cast<wire::Ipv6Header*>(f.outer_ipv6 != nullptr ? f.outer_ipv6 : f.ipv6);
  QueuedPkt pkt;
  pkt.mbuf = m;
  pkt.in_port = in;
  pkt.bytes = m->pkt_len;
  if (v4 != nullptr || v6 != nullptr) {
    pkt.ip_version = v4 != nullptr ? 4 : 6;
    pkt.l3_offset = f.l3_offset;
  }

  // Classify: DSCP (or PCP on trusting ports) -> TC -> PG and queue.
  const PortQos& qos = *ip.qos;
  uint8_t tc = 0;
  if (qos.trust_dot1p && f.vlan != nullptr) {
    tc = qos.dot1p_to_tc[f.vlan->pcp()];
  } else if (v4 != nullptr) {
    tc = qos.dscp_to_tc[v4->dscp()];
  } else if (v6 != nullptr) {
    tc = qos.dscp_to_tc[v6->dscp()];
  } else if (f.vlan != nullptr) {
    tc = qos.dot1p_to_tc[f.vlan->pcp()];
  }
  pkt.pg = qos.tc_to_pg[tc];
  pkt.queue = qos.tc_to_queue[tc];
  credit_on_arrival(in, pkt);  // credit

  wire::EthHeader* eth = const_cast<wire::EthHeader*>(f.eth);
  const uint16_t vid = f.vlan != nullptr ? f.vlan->vid() : 0;
  const uint16_t vlan = vid != 0 ? vid : kDefaultVlan;  // untagged / priority-tagged: the port's PVID
  const bool src_unicast = (eth->src.bytes[0] & 1u) == 0;
  if (src_unicast) l2_.learn(*fdb_, eth->src.bytes, vlan, in, now);
  if (rif_ && router_rx(in, pkt)) return;  // router_if: ARP / ND for our interfaces (switch_node_router.cc)

  // L3 when addressed to this port's router MAC.
  if (is_ip && mac_eq(eth->dst.bytes, ip.mac)) {
    const uint16_t sp = f.udp ? f.udp->src_port.value() : 0;
    const uint16_t dp = f.udp ? f.udp->dst_port.value() : 0;
    if (v4 != nullptr) {
      if (v4->ttl <= 1) return drop(in, m, DropCause::kTtlExpired);
      return forward_v4(in, pkt, eth, v4, sp, dp, routes_->lookup_v4(v4->dst.bytes.data()));
    }
    return forward_v6(in, pkt, eth, v6, sp, dp);
  }

  // L2: known unicast goes to one port, everything else floods.
  const bool dst_unicast = (eth->dst.bytes[0] & 1u) == 0;
  forward_l2(in, pkt, dst_unicast ? l2_.lookup(*fdb_, eth->dst.bytes, vlan) : std::nullopt);
}

void SwitchNode::forward_v4(uint16_t in, QueuedPkt& pkt, wire::EthHeader* eth, wire::Ipv4Header* v4, uint16_t sp,
                            uint16_t dp, std::optional<RouteTarget> t) {
  // The flow hash picks a member of an ECMP group only (one next hop: unused);
  // with a port down, a live member (none: port_down).
  const RouteDecision r = route_v4(*routes_, *st_, t, *v4, sp, dp);  // forward_stage.h
  if (r.nh == nullptr) return drop(in, pkt.mbuf, r.cause);
  const NextHop& nh = *r.nh;
  decrement_ttl(*v4);
  eth->dst.bytes = nh.dst_mac;
  if (nh.neigh != RouterIf::kNoNeighbor && !rif_->neighbor_mac(nh.neigh, eth->dst.bytes)) return neighbor_miss(in, pkt, nh);  // router_if
  eth->src.bytes = nh.src_mac;
  ports_[in].ctr.routed++;
  pkt.out_port = nh.port;
  enqueue(pkt);
}

void SwitchNode::forward_v6(uint16_t in, QueuedPkt& pkt, wire::EthHeader* eth, wire::Ipv6Header* v6, uint16_t sp,
                            uint16_t dp) {
  // Hop limit, SRv6 uN (our own uSID consumed, the next one picks the
  // neighbour) or LPM with ECMP.
  const RouteDecision r = route_v6(*routes_, *st_, srv6_, *v6, sp, dp);  // forward_stage.h
  if (r.nh == nullptr) return drop(in, pkt.mbuf, r.cause);
  const NextHop* nh = r.nh;
  v6->hop_limit--;
  eth->dst.bytes = nh->dst_mac;
  if (nh->neigh != RouterIf::kNoNeighbor && !rif_->neighbor_mac(nh->neigh, eth->dst.bytes)) return neighbor_miss(in, pkt, *nh);  // router_if
  eth->src.bytes = nh->src_mac;
  ports_[in].ctr.routed++;
  pkt.out_port = nh->port;
  enqueue(pkt);
}

void SwitchNode::forward_l2(uint16_t in, QueuedPkt& pkt, std::optional<uint16_t> out) {
  if (out) {
    if (*out == in) return drop(in, pkt.mbuf, DropCause::kHairpin);
    pkt.out_port = *out;
    return enqueue(pkt);
  }
  ports_[in].ctr.flooded++;
  credit_release_flooded(in, pkt);  // credit
  const uint16_t n = num_ports();
  if (n <= 1) return drop(in, pkt.mbuf, DropCause::kHairpin);
  // Operationally down ports get no copy.
  uint16_t copies = static_cast<uint16_t>(n - 1);
  if (st_->faulty() != 0) {
    copies = flood_set(n, in, [this](uint16_t p) { return usable(p); }, flood_to_.data());  // forward_stage.h
    if (copies == 0) return drop(in, pkt.mbuf, DropCause::kPortDown);
  }
  ports_[in].ctr.flood_extra_copies += copies - 1u;
  // One mbuf, one reference per copy; flooded copies are never ECN-marked
  // because they share their bytes.
  rte_pktmbuf_refcnt_update(pkt.mbuf, static_cast<int16_t>(copies - 1));  // every segment
  pkt.ip_version = 0;
  const bool all = copies == n - 1;
  for (uint16_t p = 0; p < n; ++p) {
    if (p == in || (!all && flood_to_[p] == 0)) continue;
    pkt.out_port = p;
    enqueue(pkt);
  }
}

// PAUSE / PFC end at this hop: they pause this port's transmit (PortPfc::
// on_frame, port_pfc.h: honoured, ignored and counted there); the watchdog
// hears of the pause.
void SwitchNode::on_mac_control(uint16_t in, const wire::FrameInfo& f, TimeNs now) {
  Port& ip = ports_[in];
  const int pausing = ip.pfc.on_frame(f, ip.ctr, now);
  if (pausing < 0) return;  // ignored: counted
  mark_ctl(in);
  if (ip.wd) ip.wd->on_pause_frame(static_cast<uint8_t>(pausing), now);
  refresh_pfc_paused(ip, now);
  if (ip.wd) wd_service(in, now);
}

void SwitchNode::flush_run() {
  const uint16_t n = run_.take();
  const QueuedPkt* run = run_.data();
  if (n > 1 && enqueue_run(run, n)) return;
  for (uint16_t i = 0; i < n; ++i) enqueue_one(run[i]);
}

// What enqueue_one() then to_egress() check of the port components, once for
// the run; admit_run_whole (admission_stage.h) checks the queue, WRED, PFC
// and the MMU.
bool SwitchNode::enqueue_run(const QueuedPkt* run, uint16_t n) {
  if (shard_ != nullptr) return false;  // shard: copy by copy (remote egress ports, shared pools)
  const QueuedPkt& p0 = run[0];
  Port& ip = ports_[p0.in_port];
  Port& op = ports_[p0.out_port];
  if (any_wd_ && ((op.wd && op.wd->drops_queue(p0.queue)) || (ip.wd && ip.wd->drops_pg(p0.pg)))) return false;
  if (((ip.lossless_pgs >> p0.pg) & 1u) && !ip.held[p0.pg].empty()) return false;  // behind held packets
  // PFC: update_pfc() must stay a no-op after every copy.
  const uint8_t prios = ip.pfc.pg_prios(p0.pg);
  const RunPfc pfc{prios != 0, (ip.pfc.xoff_mask() & prios) != 0};
  if (!admit_run_whole(mmu_, op.queues[p0.queue], op.ctr.queues[p0.queue], op.wred[p0.queue], pfc, run, n)) return false;
  mark_tx(p0.out_port);
  credit_in_hand(run[n - 1]);  // credit
  return true;
}

void SwitchNode::enqueue_one(const QueuedPkt& p) {
  auto refuse = [&](DropCause cause) {
    ++ports_[p.out_port].ctr.queues[p.queue].dropped;
    drop(p.in_port, p.mbuf, cause);
  };
  if (any_wd_) {
    PortWatchdog* owd = ports_[p.out_port].wd.get();
    if (owd != nullptr && owd->drops_queue(p.queue)) {
      owd->count_dropped(p.queue);
      return refuse(DropCause::kPfcWatchdog);  // stormed queue, action drop
    }
    PortWatchdog* iwd = ports_[p.in_port].wd.get();
    if (iwd != nullptr && iwd->drops_pg(p.pg)) {
      iwd->count_rx_dropped();  // from a stormed peer in a stormed priority's PG
      return refuse(DropCause::kPfcWatchdog);
    }
  }
  const Admission in = mmu_.admit_ingress(p.in_port, p.pg, p.bytes);
  if (in.verdict == Verdict::kTrim) return trim(p, drop_cause_of(in.reason));
  if (in.verdict != Verdict::kAccept) return refuse(drop_cause_of(in.reason));
  update_pfc(p.in_port, p.pg, now_);
  if (shard_ != nullptr && !shard_owns(p.out_port)) return shard_forward(p, in.ticket);  // shard

  // Egress admission or the hold FIFO (admission_copy.h).
  Port& ip = ports_[p.in_port];
  EgressQueue& held = ip.held[p.pg];
  const CopyEgress e = admit_copy_egress(mmu_, p, in.ticket, (ip.lossless_pgs >> p.pg) & 1u, held);
  if (e.released) update_pfc(p.in_port, p.pg, now_);
  switch (e.kind) {
    case CopyEgress::kQueue: return to_egress(p, e.ticket);
    case CopyEgress::kTrim: return trim(p, e.cause);
    case CopyEgress::kRefuse: return refuse(e.cause);
    case CopyEgress::kHold: break;
  }
  if (held.empty()) ++held_pgs_;
  held.push(p, e.ticket);
  ++ip.ctr.held;
}

void SwitchNode::to_egress(const QueuedPkt& p, const Ticket& t) {
  credit_in_hand(p);  // credit
  Port& op = ports_[p.out_port];
  QueueCounters& qc = op.ctr.queues[p.queue];
  EgressQueue& q = op.queues[p.queue];
  auto refuse = [&](DropCause cause) {
    release_cells(p.in_port, p.pg, p.out_port, p.queue, t);  // the PG may drop below XON
    ++qc.dropped;
    if (p.trimmed) ++op.ctr.trimmed_dropped;
    drop(p.in_port, p.mbuf, cause);
  };
  if (any_wd_ && op.wd && op.wd->drops_queue(p.queue)) {
    op.wd->count_dropped(p.queue);
    return refuse(DropCause::kPfcWatchdog);  // e.g. held at ingress before the storm
  }
  if (st_->faulty() != 0 && !st_->oper_up(p.out_port)) return refuse(DropCause::kPortDown);  // held before it went down
  if (q.full()) return refuse(DropCause::kQueueFull);

  // WRED/ECN on the instantaneous queue depth (admission_copy.h).
  switch (wred_ecn(op.wred[p.queue], q, p, rng_)) {
    case EcnAction::kMark:
      ++qc.ecn_marked;
      break;
    case EcnAction::kDrop:
      return refuse(DropCause::kWred);
    case EcnAction::kPass:
      break;
  }
  q.push(p, t);
  mark_tx(p.out_port);
  ++qc.enqueued_packets;
  qc.watermark_bytes = std::max(qc.watermark_bytes, q.bytes());
}

void SwitchNode::drain_held() {
  // Round robin over the hold FIFOs, one packet per FIFO per pass, starting
  // after the FIFO served last, so that PGs held for the same egress queue
  // share its freed space instead of the lowest port taking it all.
  const size_t n = ports_.size() * kNumPgs;
  bool moved = true;
  while (moved && held_pgs_ != 0) {
    moved = false;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (held_rr_ + k) % n;
      EgressQueue& held = ports_[i / kNumPgs].held[i % kNumPgs];
      if (held.empty()) continue;
      const QueuedPkt& h = held.front();
      if (!mmu_.egress_fits(h.out_port, h.queue, h.ticket.cells)) continue;  // head of line blocks this PG
      const QueuedPkt p = held.pop();
      if (held.empty()) --held_pgs_;
      const Admission out = mmu_.admit_egress(p.out_port, p.queue, p.ticket);
      to_egress(p, out.ticket);
      held_rr_ = (i + 1) % n;
      moved = true;
    }
  }
}

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
  if (!out.empty()) {
    if (rte_mbuf* f = pfc_frame(p, now); f != nullptr) out[n++] = f;
  }
  if (p.credit && n < out.size()) {
    if (rte_mbuf* f = credit_frame(p); f != nullptr) out[n++] = f;  // credit
  }
  refresh_pfc_paused(p, now);
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
