// Router interfaces: ARP / ND responder and next-hop resolution. See router_if.h.
#include "switch/fwd/router_if.h"

#include <algorithm>
#include <cstring>

namespace sf::sw {

namespace {

// Room for a built frame in m's only segment, from its data start.
bool fits(const rte_mbuf* m) {
  return m->nb_segs == 1 && rte_mbuf_refcnt_read(m) == 1 && !RTE_MBUF_HAS_EXTBUF(m) &&
         static_cast<size_t>(m->buf_len) >= size_t{m->data_off} + wire::kNeighborFrameMax;
}

void put_frame(rte_mbuf* m, const uint8_t* frame, size_t len) {
  std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), frame, len);
  m->data_len = static_cast<uint16_t>(len);
  m->pkt_len = static_cast<uint32_t>(len);
  m->ol_flags = 0;
}

wire::Ipv4Addr v4_of(const std::array<uint8_t, 16>& a) { return {{a[0], a[1], a[2], a[3]}}; }
wire::Ipv6Addr v6_of(const std::array<uint8_t, 16>& a) {
  wire::Ipv6Addr r;
  r.bytes = a;
  return r;
}

// The VLAN tag of frame `d` (length `len`), if it has one.
std::optional<uint16_t> tag_of(const uint8_t* d, size_t len) {
  if (len >= 18 && d[12] == 0x81 && d[13] == 0x00) return static_cast<uint16_t>(d[14] << 8 | d[15]);
  return std::nullopt;
}

}  // namespace

uint64_t RouterIf::pack(const wire::MacAddr& m) {
  uint64_t v = uint64_t{1} << 48;
  for (int i = 0; i < 6; ++i) v |= uint64_t{m.bytes[static_cast<size_t>(i)]} << (8 * i);
  return v;
}

RouterIf::RouterIf(const SwitchConfig& cfg, std::span<const std::array<uint8_t, 6>> port_macs)
    : ifs_(cfg.interfaces), on_(cfg.ports.ports.size(), 0), macs_(cfg.ports.ports.size()), ctr_(cfg.ports.ports.size()) {
  for (size_t p = 0; p < macs_.size() && p < port_macs.size(); ++p) macs_[p] = port_macs[p];
  for (const RouterInterface& r : ifs_) on_[r.port] = 1;
  for (const StaticRoute& route : cfg.routes) {
    for (const RouteNextHop& nh : route.next_hops) {
      if (!nh.dynamic || find_neighbor(nh.port, nh.v6, nh.ip) != kNoNeighbor) continue;
      auto n = std::make_unique<Neighbor>();
      n->port = nh.port;
      n->v6 = nh.v6;
      n->ip = nh.ip;
      for (size_t i = 0; i < ifs_.size(); ++i) {
        if (ifs_[i].port == nh.port && ifs_[i].v6 == nh.v6 && on_subnet(ifs_[i], nh.ip)) n->rif = static_cast<uint32_t>(i);
      }
      neighbors_.push_back(std::move(n));
    }
  }
}

int RouterIf::find_if(uint16_t port, bool v6, const std::array<uint8_t, 16>& ip) const {
  const size_t n = v6 ? 16 : 4;
  for (size_t i = 0; i < ifs_.size(); ++i) {
    const RouterInterface& r = ifs_[i];
    if (r.port == port && r.v6 == v6 && std::memcmp(r.addr.data(), ip.data(), n) == 0) return static_cast<int>(i);
  }
  return -1;
}

int32_t RouterIf::find_neighbor(uint16_t port, bool v6, const std::array<uint8_t, 16>& ip) const {
  const size_t n = v6 ? 16 : 4;
  for (size_t i = 0; i < neighbors_.size(); ++i) {
    const Neighbor& e = *neighbors_[i];
    if (e.port == port && e.v6 == v6 && std::memcmp(e.ip.data(), ip.data(), n) == 0) return static_cast<int32_t>(i);
  }
  return kNoNeighbor;
}

int32_t RouterIf::neighbor_of(const RouteNextHop& nh) const {
  return nh.dynamic ? find_neighbor(nh.port, nh.v6, nh.ip) : kNoNeighbor;
}

void RouterIf::glean(uint16_t port, bool v6, const std::array<uint8_t, 16>& ip, const wire::MacAddr& mac) {
  const int32_t id = find_neighbor(port, v6, ip);
  if (id == kNoNeighbor || (mac.bytes[0] & 1u) != 0) return;  // not a next hop of ours; never a group MAC
  Neighbor& e = *neighbors_[static_cast<size_t>(id)];
  const uint64_t v = pack(mac);
  const uint64_t old = e.mac.exchange(v, std::memory_order_acq_rel);
  ++ctr_[port].gleaned;
  if (old != 0 && old != v) ++ctr_[port].neighbor_moves;
}

RouterIf::Verdict RouterIf::on_frame(uint16_t port, rte_mbuf* m, TimeNs /*now*/) {
  if (!port_on(port)) return Verdict::kPass;
  RouterIfCounters& c = ctr_[port];
  const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
  wire::NeighborMsg msg;
  const wire::NeighborError e = parse_neighbor(d, m->data_len, msg);
  if (e == wire::NeighborError::kNotNeighbor) return Verdict::kPass;
  if (e != wire::NeighborError::kNone) {
    ++c.bad;
    ++c.bad_by[static_cast<size_t>(e)];
    return Verdict::kBad;
  }
  const bool v6 = msg.v6();
  static constexpr std::array<uint8_t, 16> kUnspecified{};
  const bool from_unspecified = v6 && msg.sender_ip == kUnspecified;
  // Glean: the sender of any ARP, of an NS with a source address, and the
  // target of an NA (its owner answering) set the MAC of a next hop of ours.
  if (msg.kind == wire::NeighborKind::kNa) {
    glean(port, true, msg.target_ip, msg.sender_mac);
  } else if (!from_unspecified) {
    glean(port, v6, msg.sender_ip, msg.sender_mac);
  }
  // Ours: an ARP / NS whose target is our address, an NA sent to our address.
  const int rif = find_if(port, v6, msg.kind == wire::NeighborKind::kNa ? msg.ip_dst : msg.target_ip);
  if (rif < 0) {
    // Another address: the host's subnet ends at this routed port, so the
    // frame is not bridged to other ports (they are other subnets).
    ++c.not_ours;
    return Verdict::kConsumed;
  }
  const RouterInterface& r = ifs_[static_cast<size_t>(rif)];
  const wire::MacAddr me{macs_[port]};
  std::array<uint8_t, wire::kNeighborFrameMax> out;
  size_t len = 0;
  switch (msg.kind) {
    case wire::NeighborKind::kArpReply: ++c.rx_arp_reply; return Verdict::kConsumed;
    case wire::NeighborKind::kNa: ++c.rx_na; return Verdict::kConsumed;
    case wire::NeighborKind::kArpRequest: {
      ++c.rx_arp_request;
      // The ARP request is for our address, whoever sends it (a host
      // probing for a conflict, SPA 0.0.0.0, gets the answer too).
      len = wire::write_arp(out.data(), {msg.sender_mac, me, msg.tci}, wire::kArpOpReply, me, v4_of(r.addr),
                            msg.sender_mac, v4_of(msg.sender_ip));
      ++c.tx_arp_reply;
      break;
    }
    case wire::NeighborKind::kNs: {
      ++c.rx_ns;
      // Duplicate address detection (source ::): to all nodes, not solicited.
      const wire::Ipv6Addr dst = from_unspecified ? wire::kIpv6AllNodes : v6_of(msg.sender_ip);
      const wire::MacAddr eth_dst = from_unspecified ? wire::ipv6_multicast_mac(wire::kIpv6AllNodes) : msg.sender_mac;
      len = wire::write_nd(out.data(), {eth_dst, me, msg.tci}, true, v6_of(r.addr), dst, v6_of(r.addr), me,
                           !from_unspecified);
      ++c.tx_na;
      break;
    }
  }
  if (!fits(m)) {
    ++c.no_room;
    return Verdict::kConsumed;
  }
  put_frame(m, out.data(), len);
  return Verdict::kReply;
}

bool RouterIf::solicit(int32_t id, rte_mbuf* m, TimeNs now) {
  Neighbor& e = *neighbors_[static_cast<size_t>(id)];
  const int64_t due = e.next_solicit_ns.load(std::memory_order_relaxed);
  if (now.ns() < due || !fits(m)) return false;
  // Several lcores may race here: one of them sends (the others drop).
  int64_t expected = due;
  if (!e.next_solicit_ns.compare_exchange_strong(expected, now.ns() + kSolicitInterval.ns(), std::memory_order_relaxed)) {
    return false;
  }
  const RouterInterface& r = ifs_[e.rif];
  const wire::MacAddr me{macs_[e.port]};
  const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
  const std::optional<uint16_t> tci = tag_of(d, m->data_len);
  std::array<uint8_t, wire::kNeighborFrameMax> out;
  size_t len = 0;
  if (!e.v6) {
    len = wire::write_arp(out.data(), {wire::kBroadcastMac, me, tci}, wire::kArpOpRequest, me, v4_of(r.addr), {},
                          v4_of(e.ip));
  } else {
    const wire::Ipv6Addr group = wire::solicited_node(v6_of(e.ip));
    len = wire::write_nd(out.data(), {wire::ipv6_multicast_mac(group), me, tci}, false, v6_of(r.addr), group,
                         v6_of(e.ip), me, false);
  }
  put_frame(m, out.data(), len);
  e.solicits.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void RouterIf::forget() {
  for (const auto& n : neighbors_) {
    n->mac.store(0, std::memory_order_release);
    n->next_solicit_ns.store(0, std::memory_order_relaxed);
  }
}

std::vector<RouterIf::NeighborView> RouterIf::neighbors() const {
  std::vector<NeighborView> v;
  for (const auto& p : neighbors_) {
    NeighborView n;
    n.port = p->port;
    n.v6 = p->v6;
    n.ip = p->ip;
    n.resolved = neighbor_mac(static_cast<int32_t>(&p - neighbors_.data()), n.mac);
    n.solicits = p->solicits.load(std::memory_order_relaxed);
    v.push_back(n);
  }
  return v;
}

}  // namespace sf::sw
