// Switch receive path, stages A-C of SwitchNode::receive(): parse and
// classify, bulk lookups, learn and forward in order (each copy to a run),
// and stage C's slow step for the frames stage A did not decide. Stage D
// (admission) is switch_node_admit.cc. See switch_node.h.
#include "switch/pipeline/switch_node.h"

#include <rte_mbuf.h>

#include "common/wire/credit_frame.h"
#include "common/wire/frame_parser.h"
#include "switch/pipeline/lookup_stage.h"

namespace sf::sw {

namespace {

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

// A received frame as stage C hands it on, before its egress port is
// known: its QoS classes and headers as stage A decided them (RxMeta).
QueuedPkt arrival(rte_mbuf* m, uint16_t in, const RxMeta& r) {
  QueuedPkt pkt;
  pkt.mbuf = m;
  pkt.bytes = m->pkt_len;
  pkt.in_port = in;
  pkt.pg = r.pg;
  pkt.queue = r.queue;
  pkt.ip_version = r.ip_version;
  pkt.l3_offset = r.l3_offset;
  pkt.credit_vl = kNoCreditVl;
  return pkt;
}

constexpr wire::ParseOptions kParseOptions{.verify_ipv4_checksum = kRxVerifyIpv4Checksum, .stop_at_udp = true};

}  // namespace

// The staged pipeline (STYLE G4) over one pass of up to kStageBurst frames,
// each stage a burst over the hand-off of the one before:
//  A. parse and classify every frame (classify_stage.h) -> RxMeta per frame;
//     what the fast parse does not decide is marked kSlow;
//  B. look up all L2 destinations and IPv4 routes (lookup_stage.h): each
//     frame's FDB cache probe in A's loop (classify_lookup_burst), the rest
//     in bulk -> LookupBurst;
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
  // credit: a CREDIT_FC port's copies are admitted one by one, as each frame
  // takes and frees its VL slots (the packet in hand, credit_link.h).
  const bool on_credit = ip.credit != nullptr;
  const bool defer = !on_credit;
  // Port faults change only in advance() (switch_node_ports.cc): one test a pass.
  const bool plain = st_->faulty() == 0;
  // ---- The express prefix: A to C frame by frame while frames take the common way ----
  if (!on_credit && plain && rif_ == nullptr) [[likely]] {
    run_defer_ = true;
    const uint16_t done = receive_express(in, pkts, n, now);
    if (done == n) [[likely]] {
      flush_run();  // D: the last run
      run_defer_ = false;
      return;
    }
    pkts += done;
    n = static_cast<uint16_t>(n - done);
  }
  std::array<RxMeta, kStageBurst>& meta = rx_meta_;
  // ---- A: parse and classify, B: lookups (each frame's in A's loop, then in bulk) ----
  Fdb& fdb = *fdb_;  // once a pass, not a shared_ptr load a frame
  LookupBurst& found = rx_found_;
  const ClassifyCounts rx = classify_lookup_burst(ClassifyPort{ip.mac, ip.max_frame_bytes, *ip.qos, rif_.get(), in},
                                                  fdb, *routes_, pkts, n, meta.data(), found);
  ip.ctr.rx_packets += rx.packets;
  ip.ctr.rx_bytes += rx.bytes;

  // ---- C: in order: learn, forward; D: admit each run as it closes ----
  l2_.begin_pass();
  run_defer_ = defer;  // enqueue() collects runs (flush_run)
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
    const uint16_t l3_offset = r.l3_offset;  // 0 unless IP (L2 frames that are IP keep it for ECN)
    const bool dst_unicast = (eth->dst.bytes[0] & 1u) == 0;
    int32_t out = -1;  // a kL2 unicast frame's FDB port; -1: unknown
    if (!on_credit) [[likely]] {
      l2_.learn_source(fdb, Fdb::cache_key_word(wire::detail::load_u64(d + 6), r.vlan), eth->src.bytes, r.vlan, in,
                       now);
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
    QueuedPkt pkt = arrival(m, in, r);
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

// The express prefix of a pass: stages A to C (and D's runs) fused frame by
// frame, for as long as the frames take the common way: the straight shape
// of stage A (classify_v4_udp_word), switched at L2, to a unicast
// destination. Each frame's source is learned, then its destination looked
// up (the order of receive() frame by frame, which the stages reach through
// dst_after_bulk), then its copy built straight in its run
// (QueuedRun::add_plain, as stage C does), with no RxMeta or LookupBurst in
// between. A frame whose source the learner already holds (the common case)
// is looked up in the FDB's cache (Fdb::CacheView::probe); a miss, an
// unknown destination (flood) or one on `in` (hairpin) ends the prefix there,
// and that frame and those after it take the stages. A frame whose source
// has to be learned takes express_learn: learned once, looked up live, and
// forwarded whatever the answer (flood and hairpin drop included), so no
// frame is learned from twice; the cache view is read again after it (a
// learn that changes the table makes the cached results stale: Fdb::changed).
// Called only on a plain, non-credit port of a switch without router
// interfaces, with run_defer_ on.
uint16_t SwitchNode::receive_express(uint16_t in, rte_mbuf** pkts, uint16_t n, TimeNs now) {
  Port& ip = ports_[in];
  Fdb& fdb = *fdb_;
  Fdb::CacheView cache = fdb.cache_view();
  if (!cache.enabled()) return 0;  // concurrent FDB (shards): no cache
  const uint64_t mac48 = wire::mac_word(ip.mac);
  const uint32_t max_frame = ip.max_frame_bytes;
  const PortQos& qos = *ip.qos;
  // A pass that begins with a frame to the router MAC (routed traffic) goes
  // to the stages at once: one compare, not a classification done twice.
  if (n == 0 || pkts[0]->data_len < 8 ||
      ((wire::detail::load_u64(rte_pktmbuf_mtod(pkts[0], const uint8_t*)) ^ mac48) << 16) == 0) {
    return 0;
  }
  uint64_t bytes = 0;
  uint16_t i = 0;
  // The run and the source last learned in registers for the loop (the
  // copies' stores would otherwise make the compiler load them again).
  QueuedRun::Cursor rc = run_.cursor();
  uint64_t learned = ~uint64_t{0};  // never a key: cache_key_word's top bits are the VLAN (< 4096)
  auto flush = [this] { flush_run(); };  // add_plain(Cursor&) writes the run back first
  prefetch_first(pkts, n);
  for (; i < n; ++i) {
    prefetch_ahead(pkts, i, n);
    rte_mbuf* m = pkts[i];
    const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
    const uint32_t frame_bytes = m->pkt_len;
    // A: 0 (step kSlow) when not the straight shape.
    const uint64_t lo = classify_v4_udp_word(qos, mac48, max_frame, d, m->data_len, frame_bytes);
    // The destination MAC and two bytes, read before the step is known (one
    // branch for both tests below: against the same reference binary 0.981
    // where testing the step first gave 0.969). A frame of another way (lo 0) may have fewer than 8 bytes
    // in its head, and then this reads past them, into the rest of its data
    // room: the switch receives into its own pool's mbufs (2 KiB rooms
    // behind a 128 B headroom), so the read stays inside the pool's memory,
    // and the value is unused.
    const uint64_t first8 = wire::detail::load_u64(d);
    // Not L2 (slow, routed) or a multicast / broadcast destination (flood).
    if (static_cast<RxStep>(lo & 0xFF) != RxStep::kL2 || (first8 & 1u) != 0) break;
    // C: learn the source, B: look the destination up, in that order (frame
    // by frame). Once the learner holds src as its source, learn_source(src)
    // does nothing: `learned` skips the call (the learner holds no multicast
    // source, nor one whose learn the FDB refused: those reach it every
    // frame). A frame that has to be learned from takes express_learn, which
    // looks its destination up live (the learn may have changed it) and
    // forwards it whatever the answer: it stays in the prefix, so that no
    // frame is learned from twice (the stages would learn it again).
    const uint64_t src = Fdb::cache_key_word(wire::detail::load_u64(d + 6), kDefaultVlan);
    int32_t out;
    if (src != learned && !l2_.source_cached(src, in)) [[unlikely]] {
      run_.set(rc);  // (rc's address is not taken: it stays in registers)
      out = express_learn(in, m, lo, now);
      rc = run_.cursor();
      cache = fdb.cache_view();
      if (l2_.source_cached(src, in)) learned = src;
      if (out < 0) {  // flooded or dropped by express_learn
        bytes += frame_bytes;
        continue;
      }
    } else {
      learned = src;
      // B: the destination from the cache; a miss, an unknown destination
      // (-1: flood) or one on `in` (hairpin) ends the prefix.
      if (!cache.probe(Fdb::cache_key_word(first8, kDefaultVlan), out) || out < 0 || out == in) break;
    }
    bytes += frame_bytes;
    // pg | queue << 8 | ip_version << 16 (RxMeta::pg_q_ip of the word).
    run_.add_plain(rc, m, frame_bytes, in, static_cast<uint16_t>(out), static_cast<uint32_t>(lo >> 8),
                   wire::EthHeader::kSize, flush);
  }
  run_.set(rc);
  ip.ctr.rx_packets += i;
  ip.ctr.rx_bytes += bytes;
  express_frames_ += i;
  return i;
}

// receive_express's step for a frame whose source the learner does not
// hold (out of line: the prefix's loop keeps its registers): learns the
// source, then looks the destination up live (the learn may have changed
// it). Returns the destination port when the copy goes to the run; else the
// frame is flooded or dropped (hairpin) here as stage C does it
// (forward_l2) and -1. The caller has written the run back (run_.set).
int32_t SwitchNode::express_learn(uint16_t in, rte_mbuf* m, uint64_t lo, TimeNs now) {
  const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
  Fdb& fdb = *fdb_;
  l2_.learn_source(fdb, Fdb::cache_key_word(wire::detail::load_u64(d + 6), kDefaultVlan),
                   *reinterpret_cast<const MacAddr*>(d + 6), kDefaultVlan, in, now);
  const std::optional<uint16_t> out = fdb.lookup(*reinterpret_cast<const MacAddr*>(d), kDefaultVlan);
  if (out && *out != in) return *out;
  RxMeta r;
  r.set(lo, kRxV4UdpOffset);  // what stage A would have stored for the frame
  QueuedPkt pkt = arrival(m, in, r);
  forward_l2(in, pkt, out);
  return -1;
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

}  // namespace sf::sw
