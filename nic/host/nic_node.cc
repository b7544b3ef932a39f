// NicNode: hosts, ports, receive demultiplexing, transmit order, pacing
// wheel, PFC. See nic_node.h.
#include "nic/host/nic_node.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/wire/mac_control.h"
#include "common/wire/int_shim.h"
#include "common/wire/mbuf_icrc.h"
#include "nic/mrc/transport.h"

namespace sf::nic {

namespace {
constexpr uint8_t kInCtrl = 1;
constexpr uint8_t kInPaused = 2;
constexpr TimeNs kAllocRetry = TimeNs::from_us(1);

// Byte-wise equality in fixed-size loads: std::array's == of a 6- or 4-byte
// array is an out-of-line memcmp call (two per received frame).
template <std::size_t N>
bool same_bytes(const std::array<uint8_t, N>& a, const std::array<uint8_t, N>& b) {
  if constexpr (N == 6) {
    uint32_t a4 = 0, b4 = 0;
    uint16_t a2 = 0, b2 = 0;
    std::memcpy(&a4, a.data(), 4);
    std::memcpy(&b4, b.data(), 4);
    std::memcpy(&a2, a.data() + 4, 2);
    std::memcpy(&b2, b.data() + 4, 2);
    return ((a4 ^ b4) | static_cast<uint32_t>(a2 ^ b2)) == 0;
  } else if constexpr (N == 4) {
    uint32_t a4 = 0, b4 = 0;
    std::memcpy(&a4, a.data(), 4);
    std::memcpy(&b4, b.data(), 4);
    return a4 == b4;
  } else {
    return a == b;
  }
}
}  // namespace

namespace {

// The INT shim of a chained frame (the payload spans segments; the headers
// are in the first): copies the records and tail flags out, moves the ICRC
// back over the shim, trims the chain and restores the IP / UDP lengths. The
// frame is then what its sender's ICRC covers. False (frame untouched) if
// the shim is not sound.
bool strip_int_chain(rte_mbuf* m, const wire::FrameInfo& fi, wire::IntHop* hops, size_t* n, uint8_t* flags,
                     uint32_t* turnaround_ns) {
  if (fi.udp == nullptr || fi.udp_end > m->pkt_len ||
      fi.udp_end < fi.payload_offset + wire::int_shim_bytes(0) + wire::kIcrcBytes) {
    return false;
  }
  const uint32_t icrc_at = fi.udp_end - static_cast<uint32_t>(wire::kIcrcBytes);
  wire::IntTail tail;
  const auto* t = static_cast<const wire::IntTail*>(
      rte_pktmbuf_read(m, icrc_at - wire::IntTail::kSize, wire::IntTail::kSize, &tail));
  if (t == nullptr || t->magic != wire::IntTail::kMagic || t->max_hops == 0 || t->max_hops > wire::kIntMaxHops ||
      t->hop_count > t->max_hops) {
    return false;
  }
  const uint32_t shim = wire::int_shim_bytes(*t);
  if (icrc_at < fi.payload_offset + shim) return false;
  const uint32_t start = icrc_at - shim;
  *flags = t->flags;
  *n = t->hop_count;
  if (*n > 0) {
    const void* p = rte_pktmbuf_read(m, start, *n * wire::IntHop::kSize, hops);
    if (p == nullptr) return false;
    if (p != hops) std::memcpy(hops, p, *n * wire::IntHop::kSize);
  }
  *turnaround_ns = 0;
  if (shim != wire::int_shim_bytes(t->hop_count)) {
    wire::Be32 ta;
    const void* p = rte_pktmbuf_read(m, start + *n * wire::IntHop::kSize, wire::kIntTurnaroundBytes, &ta);
    if (p == nullptr) return false;
    if (p != &ta) std::memcpy(&ta, p, wire::kIntTurnaroundBytes);
    *turnaround_ns = ta.value();
  }
  uint8_t icrc[wire::kIcrcBytes];
  const void* ic = rte_pktmbuf_read(m, icrc_at, wire::kIcrcBytes, icrc);
  if (ic == nullptr) return false;
  if (ic != icrc) std::memcpy(icrc, ic, wire::kIcrcBytes);
  // ICRC to `start`, then cut the chain at start + 4.
  uint32_t off = start;
  const uint32_t new_len = start + static_cast<uint32_t>(wire::kIcrcBytes);
  uint32_t k = 0;
  for (rte_mbuf* s = m; s != nullptr && k < wire::kIcrcBytes; s = s->next) {
    if (off >= s->data_len) {
      off -= s->data_len;
      continue;
    }
    while (off < s->data_len && k < wire::kIcrcBytes) rte_pktmbuf_mtod(s, uint8_t*)[off++] = icrc[k++];
    off = 0;
  }
  uint32_t seen = 0;
  uint16_t segs = 0;
  for (rte_mbuf* s = m; s != nullptr; s = s->next) {
    ++segs;
    if (seen + s->data_len >= new_len) {
      s->data_len = static_cast<uint16_t>(new_len - seen);
      if (s->next != nullptr) {
        rte_pktmbuf_free(s->next);
        s->next = nullptr;
      }
      break;
    }
    seen += s->data_len;
  }
  m->nb_segs = segs;
  m->pkt_len = new_len;
  // The lengths as the sender's ICRC saw them.
  const uint16_t d = static_cast<uint16_t>(shim);
  if (fi.outer_ipv6 != nullptr) {
    auto* o = const_cast<wire::Ipv6Header*>(fi.outer_ipv6);
    o->payload_length.set(static_cast<uint16_t>(o->payload_length.value() - d));
  }
  if (fi.ipv4 != nullptr) {
    auto* h = const_cast<wire::Ipv4Header*>(fi.ipv4);
    h->total_length.set(static_cast<uint16_t>(h->total_length.value() - d));
    wire::ipv4_set_checksum(*h);
  } else if (fi.ipv6 != nullptr) {
    auto* h = const_cast<wire::Ipv6Header*>(fi.ipv6);
    h->payload_length.set(static_cast<uint16_t>(h->payload_length.value() - d));
  }
  auto* u = const_cast<wire::UdpHeader*>(fi.udp);
  u->length.set(static_cast<uint16_t>(u->length.value() - d));
  return true;
}

}  // namespace

const char* to_string(RxDrop d) {
  switch (d) {
    case RxDrop::kMalformed: return "malformed";
    case RxDrop::kNotContiguous: return "not_contiguous";
    case RxDrop::kNotRoce: return "not_roce";
    case RxDrop::kWrongMac: return "wrong_mac";
    case RxDrop::kWrongIp: return "wrong_ip";
    case RxDrop::kBadIcrc: return "bad_icrc";
    case RxDrop::kUnknownQp: return "unknown_qp";
    case RxDrop::kMrcEndpoint: return "mrc_endpoint";
    case RxDrop::kRxRingFull: return "rx_ring_full";
    case RxDrop::kBadInt: return "bad_int";
    case RxDrop::kCount: break;
  }
  return "?";
}

NicNode::Port::Port(const NicPortConfig& c, uint32_t host_index, uint32_t qps)
    : cfg(c),
      host(host_index),
      pfc_rx(c.line_rate),
      pfc_tx(c.line_rate, c.pfc_quanta),
      wheel(qps, c.wheel_slot, c.wheel_slots),
      ctrl(qps),
      in_ctrl(qps, 0),
      ring(c.rx_drain_rate.bps() > 0 ? c.rx_ring_pkts : 0) {
  paused.reserve(qps);
  rx_parse.mrc.trimmed_dscp_mask = c.mrc_trimmed_dscp_mask;
}

uint32_t NicNode::total_qps(const NicConfig& cfg) {
  uint64_t n = 0;
  for (const HostConfig& h : cfg.hosts) n += h.max_qps;
  return static_cast<uint32_t>(n == 0 ? 1 : std::min<uint64_t>(n, UINT32_MAX - 2));
}

NicNode::NicNode(const NicConfig& cfg, rte_mempool* pool)
    : timers_(total_qps(cfg), TimeNs(1024), 4096), pool_(pool) {
  if (pool == nullptr) throw std::invalid_argument("NicNode: no mempool");
  if (cfg.hosts.empty()) throw std::invalid_argument("NicNode: hosts: at least one host");
  std::vector<int> owner(cfg.ports.size(), -1);
  for (size_t h = 0; h < cfg.hosts.size(); ++h) {
    const HostConfig& hc = cfg.hosts[h];
    const std::string where = "hosts[" + std::to_string(h) + "]";
    if (hc.ports.empty()) throw std::invalid_argument(where + ".ports: a host needs at least one port");
    if (hc.ports.size() > kMaxHostPorts) {
      throw std::invalid_argument(where + ".ports: at most " + std::to_string(kMaxHostPorts) + " ports per host");
    }
    if (hc.port_addrs.empty()) {
      if (!hc.ipv4 && !hc.ipv6) throw std::invalid_argument(where + ": needs an ipv4 or ipv6 address");
    } else {
      if (hc.port_addrs.size() != hc.ports.size()) {
        throw std::invalid_argument(where + ".port_addrs: " + std::to_string(hc.port_addrs.size()) +
                                    " entries for " + std::to_string(hc.ports.size()) + " ports");
      }
      for (size_t k = 0; k < hc.port_addrs.size(); ++k) {
        if (!hc.port_addrs[k].ipv4 && !hc.port_addrs[k].ipv6) {
          throw std::invalid_argument(where + ".port_addrs[" + std::to_string(k) + "]: needs an ipv4 or ipv6 address");
        }
      }
    }
    if (!hc.port_l3.empty() && hc.port_l3.size() != hc.ports.size()) {
      throw std::invalid_argument(where + ".port_l3: " + std::to_string(hc.port_l3.size()) + " entries for " +
                                  std::to_string(hc.ports.size()) + " ports");
    }
    if (hc.max_qps == 0 || hc.max_qps > 0xFFFF00) throw std::invalid_argument(where + ".max_qps: out of range");
    for (PortId p : hc.ports) {
      if (p >= cfg.ports.size()) throw std::invalid_argument(where + ".ports: port " + std::to_string(p) + " does not exist");
      if (owner[p] >= 0) throw std::invalid_argument(where + ".ports: port " + std::to_string(p) + " already belongs to a host");
      owner[p] = static_cast<int>(h);
    }
    hosts_.push_back(std::make_unique<Host>(hc, pool, hc.ports));
    host_first_id_.push_back(static_cast<uint32_t>(id_host_.size()));
    id_host_.insert(id_host_.end(), hc.max_qps, static_cast<uint32_t>(h));
  }
  timer_at_.assign(id_host_.size(), TimeNs::max());
  for (size_t p = 0; p < cfg.ports.size(); ++p) {
    if (owner[p] < 0) throw std::invalid_argument("ports[" + std::to_string(p) + "]: no host uses this port");
    if (cfg.ports[p].line_rate.bps() == 0) throw std::invalid_argument("ports[" + std::to_string(p) + "].line_rate: must be > 0");
    ports_.emplace_back(cfg.ports[p], static_cast<uint32_t>(owner[p]), cfg.hosts[owner[p]].max_qps);
  }
  for (auto& h : hosts_) {
    for (uint8_t k = 1; k <= h->num_ports(); ++k) {
      ports_[h->node_port(k)].port_num = k;
      ports_[h->node_port(k)].addr = &h->local(k);
      h->set_port_rate(k, cfg.ports[h->node_port(k)].line_rate);
    }
  }
  const size_t n = ports_.size();
  port_marked_.assign(n, 0);
  port_due_.assign(n, TimeNs::max());
  due_heap_.reserve(4 * n);
  marked_ports_.reserve(n);
  tx_cand_.assign((n + 63) / 64, 0);
  for (PortId p = 0; p < n; ++p) {
    if (!ports_[p].ring.empty() || ports_[p].cfg.pfc_generate_mask != 0) ring_ports_.push_back(p);
  }
  std::vector<Neighbors::PortRef> refs;
  for (PortId p = 0; p < n; ++p) {
    Host& h = *hosts_[ports_[p].host];
    refs.push_back({&h, ports_[p].port_num, h.port_l3(ports_[p].port_num)});
  }
  nb_ = std::make_unique<Neighbors>(std::move(refs));
  for (PortId p = 0; p < n; ++p) {  // announcements and first resolutions: offered at once
    if (nb_->busy(p, TimeNs(0))) tx_cand_[p >> 6] |= uint64_t{1} << (p & 63);
  }
}

uint8_t NicNode::frame_priority(const rte_mbuf* m) {
  const auto* b = rte_pktmbuf_mtod(m, const uint8_t*);
  if (m->data_len < 16) return 0;
  const uint16_t et = static_cast<uint16_t>((b[12] << 8) | b[13]);
  if (et == wire::kEtherTypeVlan) return b[14] >> 5;
  if (et == wire::kEtherTypeIpv4) return static_cast<uint8_t>((b[15] >> 2) >> 3);
  if (et == wire::kEtherTypeIpv6) {
    const uint8_t tc = static_cast<uint8_t>(((b[14] & 0x0F) << 4) | (b[15] >> 4));
    return static_cast<uint8_t>((tc >> 2) >> 3);
  }
  return 0;
}

void NicNode::receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) {
  now_ = now;
  Port& p = ports_[port];
  mark_host(p.host);
  FreeBatch done;
  // The QP the last frames went to: scheduled once per run of frames for it
  // (a burst is mostly one QP's), not per frame. Control frames and timers
  // are only acted on after the burst (transmit, advance), so filing the QP
  // at the end of its run is the same as filing it after every frame.
  uint32_t last = kNoSlot;
  for (size_t i = 0; i < pkts.size(); ++i) {
    rte_mbuf* m = pkts[i];
    if (i + 1 < pkts.size()) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], const void*));
    ++p.ctr.rx_pkts;
    p.ctr.rx_bytes += m->pkt_len;
    const auto* b = rte_pktmbuf_mtod(m, const uint8_t*);
    const bool mac_control = m->data_len >= 14 && b[12] == 0x88 && b[13] == 0x08;
    if (p.ring.empty() || mac_control) {
      const uint32_t slot = process(port, m, now, done);
      if (slot != last && last != kNoSlot) schedule(p.host, last, now);
      if (slot != kNoSlot) last = slot;
      continue;
    }
    if (p.ring_count == p.ring.size()) {
      ++p.ctr.drops[static_cast<int>(RxDrop::kRxRingFull)];
      done.add(m);
      continue;
    }
    if (p.ring_count == 0) {
      p.drain_next = std::max(p.drain_next, now) + p.cfg.rx_drain_rate.tx_time(wire_bytes(m->pkt_len));
    }
    p.ring[(p.ring_head + p.ring_count) % p.ring.size()] = m;
    ++p.ring_count;
    const uint8_t prio = frame_priority(m);
    p.backlog_bytes[prio] += m->pkt_len;
    p.backlog_bytes_total += m->pkt_len;
  }
  if (last != kNoSlot) schedule(p.host, last, now);
  done.flush();  // before the app runs: zero-copy frames release their MR here
  update_pfc(port, now);
  run_app(now);
}

void NicNode::drain(PortId port, TimeNs now) {
  Port& p = ports_[port];
  FreeBatch done;
  while (p.ring_count > 0 && now >= p.drain_next) {
    rte_mbuf* m = p.ring[p.ring_head];
    p.ring_head = (p.ring_head + 1) % static_cast<uint32_t>(p.ring.size());
    --p.ring_count;
    const uint8_t prio = frame_priority(m);
    p.backlog_bytes[prio] -= m->pkt_len;
    p.backlog_bytes_total -= m->pkt_len;
    const uint32_t slot = process(port, m, now, done);
    if (slot != kNoSlot) schedule(p.host, slot, now);
    if (p.ring_count > 0) {
      p.drain_next = p.drain_next + p.cfg.rx_drain_rate.tx_time(wire_bytes(p.ring[p.ring_head]->pkt_len));
    }
  }
  done.flush();
}

void NicNode::update_pfc(PortId port, TimeNs now) {
  Port& p = ports_[port];
  if (p.cfg.pfc_generate_mask == 0) return;
  for (int prio = 0; prio < kPfcPrios; ++prio) {
    if (((p.cfg.pfc_generate_mask >> prio) & 1u) == 0) continue;
    const bool x = p.cfg.pfc_backlog.next(p.pfc_tx.xoff(prio), p.backlog_bytes[prio]);
    if (x != p.pfc_tx.xoff(prio)) p.pfc_tx.set_xoff(prio, x, now);
  }
}

uint32_t NicNode::process(PortId port, rte_mbuf* m, TimeNs now, FreeBatch& done) {
  Port& p = ports_[port];
  auto drop = [&](RxDrop why) {
    ++p.ctr.drops[static_cast<int>(why)];
    done.add(m);
    return kNoSlot;
  };
  wire::FrameInfo fi = p.cfg.mrc_trimmed_dscp_mask == 0 ? wire::parse_mbuf(m) : wire::parse_mbuf(m, p.rx_parse);
  if (!fi.ok()) {
    switch (fi.reason) {
      case wire::ParseReason::kNotContiguous: return drop(RxDrop::kNotContiguous);
      case wire::ParseReason::kUnsupportedEtherType:
      case wire::ParseReason::kNotUdp:
      case wire::ParseReason::kNotRoce:
        if (nb_->on_frame(port, m, now)) break;  // ARP / ND (neighbor.h)
        return drop(RxDrop::kNotRoce);
      default:
        if (nb_->on_frame(port, m, now)) break;  // a short ARP (no padding on a veth)
        return drop(RxDrop::kMalformed);
    }
    done.add(m);
    return kNoSlot;
  }
  if (fi.kind == wire::FrameKind::kMacControl) {
    ++p.ctr.rx_pfc_frames;
    if (p.cfg.pfc_honour && fi.mac_control_dst_ok) {
      if (fi.pfc != nullptr) {
        std::array<uint16_t, kPfcPrios> q{};
        for (int i = 0; i < kPfcPrios; ++i) q[i] = fi.pfc->time_quanta[i].value();
        p.pfc_rx.on_pfc(fi.pfc->enabled_mask(), q, now);
      } else if (fi.pause != nullptr) {
        p.pfc_rx.on_pause(fi.pause->pause_quanta.value(), now);
      }
    }
    done.add(m);
    return kNoSlot;
  }
  if ((fi.kind != wire::FrameKind::kRoce && fi.kind != wire::FrameKind::kMrc) || fi.bth == nullptr) {
    return drop(RxDrop::kNotRoce);
  }
  Host& h = *hosts_[p.host];
  // Addressed to this port (each port of a multi-port host is its own
  // address): another port's MAC or IP is dropped here, counted on this port.
  const rc::LocalAddr& me = *p.addr;
  if (!same_bytes(fi.eth->dst.bytes, me.mac.bytes)) return drop(RxDrop::kWrongMac);
  if (fi.ipv4 != nullptr) {
    if (!me.has_ipv4 || !same_bytes(fi.ipv4->dst.bytes, me.ipv4.bytes)) return drop(RxDrop::kWrongIp);
  } else if (fi.ipv6 == nullptr || !me.has_ipv6 || !(fi.ipv6->dst == me.ipv6)) {
    return drop(RxDrop::kWrongIp);
  }
  // A trimmed MRC data frame has lost its payload and ICRC: its headers go
  // to the QP unverified (it only NACKs the PSN; docs/mrc.md).
  // An INT shim (HPCC, common/wire/int_shim.h) sits outside the ICRC: its
  // records are copied, the shim stripped, then the frame is verified. The
  // records go to the QP: an ACK's echo is HPCC's input, a request's are
  // echoed in the responder's next ACK.
  std::array<wire::IntHop, wire::kIntMaxHops> int_hops;
  size_t int_n = 0;
  bool int_present = false;
  uint8_t int_flags = 0;
  uint32_t int_turnaround_ns = 0;
  if (fi.kind == wire::FrameKind::kRoce && wire::bth_int_flag(*fi.bth)) [[unlikely]] {
    if (m->nb_segs == 1) {
      const std::span<uint8_t> buf(rte_pktmbuf_mtod(m, uint8_t*), m->data_len);
      const wire::IntFrameRef ref = wire::int_frame_ref(fi);
      const wire::IntShim shim = wire::int_read(buf, ref);
      if (shim.status != wire::IntStatus::kOk) return drop(RxDrop::kBadInt);
      int_flags = shim.flags;
      int_turnaround_ns = shim.turnaround_ns;
      int_n = shim.hops.size();
      std::copy(shim.hops.begin(), shim.hops.end(), int_hops.begin());
      uint32_t len = m->data_len;
      if (wire::int_strip(buf, len, ref) != wire::IntStatus::kOk) return drop(RxDrop::kBadInt);
      m->data_len = static_cast<uint16_t>(len);
      m->pkt_len = len;
    } else if (!strip_int_chain(m, fi, int_hops.data(), &int_n, &int_flags, &int_turnaround_ns)) {
      return drop(RxDrop::kBadInt);
    }
    int_present = true;
    fi = p.cfg.mrc_trimmed_dscp_mask == 0 ? wire::parse_mbuf(m) : wire::parse_mbuf(m, p.rx_parse);
    if (!fi.ok() || fi.bth == nullptr) return drop(RxDrop::kBadInt);
    ++p.ctr.rx_int_frames;
  }
  const bool trimmed = fi.kind == wire::FrameKind::kMrc && fi.mrc.trimmed;
  if (!trimmed && icrc_check_ && wire::icrc_verify_mbuf(m, fi) != wire::IcrcStatus::kOk) return drop(RxDrop::kBadIcrc);
  if (fi.kind == wire::FrameKind::kMrc && fi.bth->dest_qp.value() == wire::kMrcEndpointQpn) [[unlikely]] {
    endpoint_frame(p.host, fi, now);
    done.add(m);
    return kNoSlot;
  }
  rc::Qp* qp = h.qp_by_qpn(fi.bth->dest_qp.value());
  if (qp == nullptr) return drop(RxDrop::kUnknownQp);
  if (int_present) [[unlikely]] {
    qp->set_rx_int({int_hops.data(), int_n}, true, int_flags, int_turnaround_ns);
    qp->on_rx(fi, m, now);
    qp->set_rx_int({}, false, 0);
  } else {
    qp->on_rx(fi, m, now);
  }
  done.add(m);
  return qp->qp_num() - h.first_qpn();
}

void NicNode::endpoint_frame(uint32_t host, const wire::FrameInfo& fi, TimeNs now) {
  Host& h = *hosts_[host];
  if (fi.mrc.erth == nullptr && fi.mrc.eeth == nullptr) {  // parse_mrc refuses these; never dereference
    ++ports_[h.node_port(1)].ctr.drops[static_cast<int>(RxDrop::kMrcEndpoint)];
    return;
  }
  const bool port_status = (fi.mrc.erth != nullptr && fi.mrc.erth->get_op() == wire::MrcEndpointOp::kPortStatus) ||
                           (fi.mrc.eeth != nullptr && fi.mrc.eeth->get_op() == wire::MrcEndpointOp::kPortStatus);
  uint32_t taken = 0;
  for (uint32_t slot = 0; port_status && slot < h.qp_capacity(); ++slot) {
    rc::Qp& qp = h.qp_slot(slot);
    mrc::Transport* t = qp.in_use() ? qp.mrc() : nullptr;
    if (t == nullptr || !t->from_peer(fi)) continue;
    if (fi.mrc.erth != nullptr) {
      t->on_peer_port_status(fi.mrc.erth->port_status_mask.value(), fi.mrc.erth->num_ports,
                             fi.mrc.erth->request_id.value());
    } else {
      t->on_port_status_answered();
    }
    ++taken;
    schedule(host, slot, now);
  }
  // EV_PROBE (op 1): a request is answered by one MRC QP of the peer that
  // sent it (an EETH with the tested EV's entropy); a response goes to the QP
  // whose retired-EV probe it answers. None: counted below (docs/mrc.md).
  for (uint32_t slot = 0; !port_status && taken == 0 && slot < h.qp_capacity(); ++slot) {
    rc::Qp& qp = h.qp_slot(slot);
    mrc::Transport* t = qp.in_use() ? qp.mrc() : nullptr;
    if (t == nullptr || !t->from_peer(fi)) continue;
    if (fi.mrc.erth != nullptr) {
      // Queue full: not taken (an mrc_endpoint drop below; the prober's timeout fails it).
      if (!t->on_peer_ev_probe(fi.mrc.erth->request_id.value(), fi.mrc.erth->ev.value(),
                               fi.mrc.erth->tx_ts.value())) {
        break;
      }
    } else if (!t->on_ev_probe_answered(fi.mrc.eeth->request_id.value(), fi.mrc.eeth->ev.value(),
                                        fi.mrc.eeth->ts_echo.value(), fi.mrc.eeth->get_status())) {
      continue;
    }
    ++taken;
    schedule(host, slot, now);
  }
  if (taken == 0) ++ports_[h.node_port(1)].ctr.drops[static_cast<int>(RxDrop::kMrcEndpoint)];
}

void NicNode::schedule(uint32_t host, uint32_t slot, TimeNs now) {
  file_timer_and_ctrl(host, slot);
  Host& h = *hosts_[host];
  rc::Qp& qp = h.qp_slot(slot);
  if (!qp.in_use() || qp.port_num() == 0 || qp.port_num() > h.num_ports()) return;
  if (qp.is_mrc()) [[unlikely]] {
    schedule_mrc(host, slot, now);
    return;
  }
  Port& p = ports_[h.node_port(qp.port_num())];
  if (p.up && (p.in_ctrl[slot] & kInPaused) == 0 && !p.wheel.contains(slot) && qp.has_data(now)) {
    p.wheel.insert(slot, qp.file_departure(now));
  }
}

void NicNode::schedule_mrc(uint32_t host, uint32_t slot, TimeNs now) {
  Host& h = *hosts_[host];
  rc::Qp& qp = h.qp_slot(slot);
  if (!qp.pace_per_port()) [[likely]] {
    // One plane (the QP does not spray): it sends on its own port only
    // (Transport::sends_on), checked in range by schedule(); the loop below
    // would find just that port.
    const uint8_t k = qp.port_num();
    Port& p = ports_[h.node_port(k)];
    if (!p.up || (p.in_ctrl[slot] & kInPaused) != 0 || p.wheel.contains(slot)) return;
    qp.set_tx_port(k);
    if (qp.has_data(now)) p.wheel.insert(slot, qp.file_departure(now));
    return;
  }
  for (uint8_t k = 1; k <= h.num_ports(); ++k) {
    Port& p = ports_[h.node_port(k)];
    if (!p.up || !qp.sends_on(k) || (p.in_ctrl[slot] & kInPaused) != 0 || p.wheel.contains(slot)) continue;
    qp.set_tx_port(k);
    if (qp.has_data(now)) p.wheel.insert(slot, qp.file_departure(now));
  }
}

void NicNode::set_port_up(PortId port, bool up) {
  Port& p = ports_[port];
  if (p.up == up) return;
  p.up = up;
  mark_host(p.host);  // the driver's offers follow (next_tx_port)
  Host& h = *hosts_[p.host];
  if (!up) {
    // Nothing waits on a down port: its QPs are filed again where they can send.
    for (uint32_t slot = 0; slot < h.qp_capacity(); ++slot) {
      if (p.wheel.contains(slot)) p.wheel.remove(slot);
      p.in_ctrl[slot] = 0;
    }
    p.ctrl_count = 0;
    p.ctrl_head = 0;
    p.paused.clear();
  }
  for (uint32_t slot = 0; slot < h.qp_capacity(); ++slot) {
    rc::Qp& qp = h.qp_slot(slot);
    if (!qp.in_use()) continue;
    if (mrc::Transport* t = qp.mrc(); t != nullptr) t->on_local_plane(static_cast<uint8_t>(p.port_num - 1), up, now_);
    schedule(p.host, slot, now_);
  }
}

void NicNode::schedule_after_frame(Port& p, uint32_t host, uint32_t slot, TimeNs now, bool has_data) {
  file_timer_and_ctrl(host, slot);
  // The QP just sent on `p` (in use, this port) and was popped off its wheel.
  if (has_data && (p.in_ctrl[slot] & kInPaused) == 0 && !p.wheel.contains(slot)) {
    p.wheel.insert(slot, hosts_[host]->qp_slot(slot).file_departure(now));
  }
}

void NicNode::file_timer_and_ctrl(uint32_t host, uint32_t slot) {
  Host& h = *hosts_[host];
  rc::Qp& qp = h.qp_slot(slot);
  // The QP's timer is filed again only when it moves earlier. A later or
  // cancelled deadline (a retransmit timer restarted by every ACK) leaves
  // the earlier filing in place: when it fires, advance() finds the QP not
  // yet due and files its real deadline (the rxe "kick it down the road"
  // rule), so an ACK costs no wheel work.
  const uint32_t id = host_first_id_[host] + slot;
  const TimeNs deadline = qp.in_use() ? qp.next_deadline() : TimeNs::max();
  if (deadline < timer_at_[id]) {
    timer_at_[id] = deadline;
    timers_.insert(id, deadline);
  }
  if (!qp.in_use() || qp.port_num() == 0 || qp.port_num() > h.num_ports()) return;
  const uint8_t cport = qp.ctrl_port();
  if (cport == 0 || cport > h.num_ports()) return;
  Port& p = ports_[h.node_port(cport)];
  if (p.up && qp.has_ctrl() && (p.in_ctrl[slot] & kInCtrl) == 0) {
    p.ctrl[(p.ctrl_head + p.ctrl_count) % p.ctrl.size()] = slot;
    ++p.ctrl_count;
    p.in_ctrl[slot] |= kInCtrl;
  }
}

void NicNode::kick(size_t host, rc::Qp& qp) {
  mark_host(static_cast<uint32_t>(host));
  schedule(static_cast<uint32_t>(host), qp.qp_num() - hosts_[host]->first_qpn(), now_);
}

uint16_t NicNode::transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) {
  now_ = now;
  Port& p = ports_[port];
  mark_host(p.host);
  if (!p.up) [[unlikely]] return 0;
  Host& h = *hosts_[p.host];
  uint16_t n = 0;
  // 1. PFC frames, ahead of everything.
  PfcFrameRequest req;
  if (n < out.size() && p.pfc_tx.next_deadline() <= now && p.pfc_tx.poll(now, &req)) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    if (m != nullptr) {
      auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, wire::kMacControlFrameBytes));
      wire::build_pfc_frame({d, wire::kMacControlFrameBytes}, p.addr->mac, req.enable, req.quanta);
      out[n++] = m;
      ++p.ctr.tx_pfc_frames;
    }
  }
  // ARP / ND answers, announcements and next-hop probes (neighbor.h).
  if (n < out.size() && nb_->busy(port, now)) n += nb_->transmit(port, out.subspan(n), pool_, now);
  const uint8_t paused = p.cfg.pfc_honour ? p.pfc_rx.paused_mask(now) : 0;
  // Paused QPs whose priority resumed go back to the wheel.
  for (size_t i = 0; i < p.paused.size();) {
    const uint32_t slot = p.paused[i];
    if (((paused >> h.qp_slot(slot).priority()) & 1u) != 0) {
      ++i;
      continue;
    }
    p.paused[i] = p.paused.back();
    p.paused.pop_back();
    p.in_ctrl[slot] &= static_cast<uint8_t>(~kInPaused);
    schedule(p.host, slot, now);
  }
  // 2. ACK / NAK / CNP, not paced; a paused priority waits (rotated to the back).
  for (uint32_t visits = p.ctrl_count; visits > 0 && n < out.size() && p.ctrl_count > 0; --visits) {
    const uint32_t slot = p.ctrl[p.ctrl_head];
    p.ctrl_head = (p.ctrl_head + 1) % static_cast<uint32_t>(p.ctrl.size());
    --p.ctrl_count;
    p.in_ctrl[slot] &= static_cast<uint8_t>(~kInCtrl);
    rc::Qp& qp = h.qp_slot(slot);
    // A QP reset and bound to another port since it was filed here sends there.
    if (!qp.in_use() || qp.ctrl_port() != p.port_num) continue;
    if (((paused >> qp.priority()) & 1u) != 0) {
      schedule(p.host, slot, now);
      continue;
    }
    rte_mbuf* m = qp.make_ctrl(now);
    if (m != nullptr) {
      out[n++] = m;
      ++p.ctr.tx_ctrl_pkts;
    }
    schedule(p.host, slot, now);
  }
  // 3. Data from the timing wheel: QPs whose departure time has come.
  // A QP that is due again at once while no other QP is filed keeps the
  // turn (`again`): what filing it at `now` and popping it would give,
  // without the wheel round trip. One filed QP among others goes back to
  // the wheel after each frame (round robin by departure time).
  uint32_t slot = 0;
  bool again = false;
  while (n < out.size()) {
    if (!again) {
      if (!p.wheel.pop_due(now, &slot)) break;
      rc::Qp& qp = h.qp_slot(slot);
      // Re-filed by schedule() when it has data again, on the port it is bound to.
      if (!qp.in_use() || !qp.sends_on(p.port_num)) continue;
      qp.set_tx_port(p.port_num);
      if (!qp.has_data(now)) continue;
      if (((paused >> qp.priority()) & 1u) != 0) {
        p.paused.push_back(slot);
        p.in_ctrl[slot] |= kInPaused;
        ++p.ctr.paused_skips;
        continue;
      }
    }
    again = false;
    rc::Qp& qp = h.qp_slot(slot);
    rte_mbuf* m = qp.make_data(now);  // has_data(now) held: checked after pop_due or for `again`
    if (m == nullptr) {
      if (qp.has_data(now)) p.wheel.insert(slot, now + kAllocRetry);
      schedule(p.host, slot, now);
      continue;
    }
    qp.on_departed(m->pkt_len, now);
    out[n++] = m;
    const bool more = qp.has_data(now);  // once per frame: `again` and the wheel filing below
    if (p.wheel.size() == 0 && more && qp.file_departure(now) <= now) {
      file_timer_and_ctrl(p.host, slot);
      again = true;
      continue;
    }
    schedule_after_frame(p, p.host, slot, now, more);
  }
  if (again) p.wheel.insert(slot, now);  // the burst is full: it waits its turn
  for (uint16_t i = 0; i < n; ++i) {
    ++p.ctr.tx_pkts;
    p.ctr.tx_bytes += out[i]->pkt_len;
  }
  return n;
}

// Wakeup bookkeeping. Every entry point marks the ports of the host it acts
// on (a QP of a host only ever files work on that host's ports); settle()
// files each marked port's deadline in a min-heap and re-files the ports
// whose deadline has come, so next_wakeup and the transmit offers cost what
// changed, not the node's port count. A port's state changes only through
// those entry points, so its deadline after `now` computed when it was last
// marked (or came due) is what a scan of every port would find now.
void NicNode::mark_host(uint32_t host) const {
  const Host& h = *hosts_[host];
  for (uint8_t k = 1; k <= h.num_ports(); ++k) {
    const PortId port = h.node_port(k);
    tx_cand_[port >> 6] |= uint64_t{1} << (port & 63);
    if (port_marked_[port] != 0) continue;
    port_marked_[port] = 1;
    marked_ports_.push_back(port);
  }
  if (app_ != nullptr) app_->touch_host(host);
}

// A port's earliest deadline after `now` (wheel, PFC refresh, neighbour
// probe, pause expiry for waiting QPs) is filed in the heap; whether
// transmit(now) on it may send or change state sets its candidacy. Each
// input is read once (the wheel's and the PFC generator's next times served
// both questions, read twice).
void NicNode::settle_port(PortId port, TimeNs now) const {
  const Port& p = ports_[port];
  const TimeNs wheel = p.wheel.next_time();
  const TimeNs pfc = p.pfc_tx.next_deadline();
  const bool waiting = !p.paused.empty() || p.ctrl_count > 0;  // QPs (data or control) wait on a pause
  TimeNs d = TimeNs::max();
  auto later = [&](TimeNs x) {
    // A deadline already due is served by the transmit offer that follows
    // every call; reporting it would only spin the driver.
    if (x > now && x < d) d = x;
  };
  later(wheel);
  later(pfc);
  later(nb_->deadline(port));
  if (waiting) later(p.pfc_rx.next_expiry());
  if (d != port_due_[port]) {
    port_due_[port] = d;
    if (d != TimeNs::max()) {
      due_heap_.push_back({d, port});
      std::push_heap(due_heap_.begin(), due_heap_.end(), std::greater<>{});
    }
  }
  const uint64_t bit = uint64_t{1} << (port & 63);
  // transmit() sends nothing on a down port, but a neighbour's probe is still offered.
  if ((p.up && (waiting || pfc <= now || wheel <= now)) || nb_->busy(port, now)) {
    tx_cand_[port >> 6] |= bit;
  } else {
    tx_cand_[port >> 6] &= ~bit;
  }
}

void NicNode::settle(TimeNs now) const {
  for (const PortId port : marked_ports_) {
    port_marked_[port] = 0;
    settle_port(port, now);
  }
  marked_ports_.clear();
  while (!due_heap_.empty() && due_heap_.front().at <= now) {
    const PortDue d = due_heap_.front();
    std::pop_heap(due_heap_.begin(), due_heap_.end(), std::greater<>{});
    due_heap_.pop_back();
    if (port_due_[d.port] != d.at) continue;  // stale: re-filed since
    port_due_[d.port] = TimeNs::max();
    settle_port(d.port, now);  // files its next deadline (> now) and offers it
  }
}

TimeNs NicNode::next_wakeup(TimeNs now) const {
  settle(now);
  while (!due_heap_.empty() && port_due_[due_heap_.front().port] != due_heap_.front().at) {
    std::pop_heap(due_heap_.begin(), due_heap_.end(), std::greater<>{});
    due_heap_.pop_back();
  }
  TimeNs t = due_heap_.empty() ? TimeNs::max() : due_heap_.front().at;
  for (const PortId port : ring_ports_) {
    const Port& p = ports_[port];
    if (p.ring_count > 0) t = std::min(t, std::max(p.drain_next, now));
  }
  t = std::min(t, timers_.next_time());
  if (app_ != nullptr) t = std::min(t, app_->next_wakeup(now));
  return t;
}

PortId NicNode::next_tx_port(PortId from, TimeNs now) {
  if (from == 0) settle(now);  // a driver's pass over the ports starts at 0
  const size_t n = ports_.size();
  size_t w = from >> 6;
  if (w >= tx_cand_.size()) return static_cast<PortId>(n);
  uint64_t bits = tx_cand_[w] & (~uint64_t{0} << (from & 63));
  while (true) {
    if (bits != 0) return static_cast<PortId>(std::min<size_t>((w << 6) + static_cast<size_t>(std::countr_zero(bits)), n));
    if (++w >= tx_cand_.size()) return static_cast<PortId>(n);
    bits = tx_cand_[w];
  }
}

void NicNode::advance(TimeNs now) {
  now_ = now;
  // Only ports with a receive ring or PFC generation have work here (the
  // others' backlog is always 0).
  for (const PortId port : ring_ports_) {
    if (ports_[port].ring_count > 0) drain(port, now);
    update_pfc(port, now);
    mark_host(ports_[port].host);
  }
  uint32_t id = 0;
  while (timers_.pop_due(now, &id)) {
    timer_at_[id] = TimeNs::max();
    const uint32_t hi = id_host_[id];
    const uint32_t slot = id - host_first_id_[hi];
    rc::Qp& qp = hosts_[hi]->qp_slot(slot);
    mark_host(hi);
    if (qp.in_use() && qp.next_deadline() <= now) qp.advance(now);
    schedule(hi, slot, now);  // files the QP's next timer, if any
  }
  run_app(now);
}

void NicNode::run_app(TimeNs now) {
  if (app_ == nullptr || in_app_) return;
  in_app_ = true;
  app_->poll(now);
  in_app_ = false;
}

}  // namespace sf::nic
