// Neighbors: ARP / IPv6 ND responder and gateway resolution. See neighbor.h.
#include "nic/host/neighbor.h"

#include <algorithm>
#include <cstring>

#include "common/wire/arp_nd.h"
#include "nic/host/nic_node.h"

namespace sf::nic {

namespace {
constexpr uint16_t kArpRequest = wire::kArpOpRequest;
constexpr uint16_t kArpReply = wire::kArpOpReply;
constexpr uint8_t kNs = wire::kIcmp6NeighborSolicit;
constexpr uint8_t kNa = wire::kIcmp6NeighborAdvert;
const wire::MacAddr kBroadcast = wire::kBroadcastMac;
const wire::Ipv6Addr kAllNodes = wire::kIpv6AllNodes;

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
using wire::solicited_node;
wire::MacAddr multicast_mac(const wire::Ipv6Addr& a) { return wire::ipv6_multicast_mac(a); }

bool in_prefix(const uint8_t* a, const uint8_t* b, unsigned bits) {
  for (unsigned i = 0; i < bits / 8; ++i) {
    if (a[i] != b[i]) return false;
  }
  if (bits % 8 == 0) return true;
  const uint8_t mask = static_cast<uint8_t>(0xFF << (8 - bits % 8));
  return (a[bits / 8] & mask) == (b[bits / 8] & mask);
}

std::string ip4_text(const uint8_t* a) {
  return std::to_string(a[0]) + "." + std::to_string(a[1]) + "." + std::to_string(a[2]) + "." + std::to_string(a[3]);
}
std::string ip6_text(const uint8_t* a) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 16; i += 2) {
    if (i > 0) s += ':';
    const uint16_t v = be16(a + i);
    bool lead = true;
    for (int sh = 12; sh >= 0; sh -= 4) {
      const int d = (v >> sh) & 0xF;
      if (d == 0 && lead && sh > 0) continue;
      lead = false;
      s += hex[d];
    }
  }
  return s;
}
}  // namespace

const char* Neighbors::to_string(State s) {
  switch (s) {
    case State::kNone: return "none";
    case State::kIncomplete: return "incomplete";
    case State::kReachable: return "reachable";
    case State::kStale: return "stale";
    case State::kFailed: return "failed";
  }
  return "?";
}

Neighbors::Neighbors(std::vector<PortRef> ports) {
  ports_.reserve(ports.size());
  for (PortRef& r : ports) {
    PortState p;
    p.ref = r;
    const rc::LocalAddr& me = r.host->local(r.port_num);
    if (r.l3.routed()) {
      p.announce4 = me.has_ipv4;
      p.announce6 = me.has_ipv6;
    }
    if (r.l3.gateway4) {
      p.gw4.state = State::kIncomplete;
      p.gw4.next_probe = TimeNs(0);
    }
    if (r.l3.gateway6) {
      p.gw6.state = State::kIncomplete;
      p.gw6.next_probe = TimeNs(0);
    }
    ports_.push_back(p);
  }
  due_.resize(ports_.size());
  for (uint16_t i = 0; i < ports_.size(); ++i) update_due(i);
}

void Neighbors::learn(PortState& p, Entry& e, const wire::MacAddr& mac, TimeNs now, bool ipv6) {
  if (e.state == State::kNone) return;
  if (e.answered && !(e.mac == mac)) ++p.ctr.gateway_changes;
  e.answered = true;
  e.mac = mac;
  e.state = State::kReachable;
  e.confirmed = now;
  e.probes = 0;
  e.next_probe = now + kReachableTime;
  // The IPv4 gateway carries the port's frames when there is one, else the IPv6 one.
  if (!ipv6 || !p.ref.l3.gateway4) p.ref.host->set_gateway_mac(p.ref.port_num, mac);
}

void Neighbors::owe(PortState& p, const Reply& r) {
  if (p.reply_count == p.replies.size()) {  // full: the oldest ask goes (the asker asks again)
    p.reply_head = (p.reply_head + 1) % p.replies.size();
    --p.reply_count;
  }
  p.replies[(p.reply_head + p.reply_count) % p.replies.size()] = r;
  ++p.reply_count;
}

bool Neighbors::on_frame(uint16_t port, const rte_mbuf* m, TimeNs now) {
  PortState& p = ports_[port];
  const rc::LocalAddr& me = p.ref.host->local(p.ref.port_num);
  // The frame views of common/wire/arp_nd.h (shared with sf-switch's router
  // interfaces); a tagged request is answered with its tag. A frame that is
  // not ARP / NS / NA, or a bad one, is not taken: the caller counts it.
  wire::NeighborMsg msg;
  if (wire::parse_neighbor(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, msg) != wire::NeighborError::kNone) {
    return false;
  }
  if (!msg.v6()) {
    const uint8_t* spa = msg.sender_ip.data();
    const bool for_me = me.has_ipv4 && std::memcmp(msg.target_ip.data(), me.ipv4.bytes.data(), 4) == 0;
    const bool from_gw = p.ref.l3.gateway4 && std::memcmp(spa, p.ref.l3.gateway4->bytes.data(), 4) == 0;
    if (!for_me && !from_gw) return false;  // another host's ARP: the caller counts it
    ++p.ctr.rx_arp;
    if (from_gw) learn(p, p.gw4, msg.sender_mac, now, false);
    if (for_me && msg.kind == wire::NeighborKind::kArpRequest) {
      Reply r;
      r.dst_mac = msg.sender_mac;
      r.tci = msg.tci;
      std::memcpy(r.dst_ip.data(), spa, 4);
      owe(p, r);
    }
    update_due(port);
    return true;
  }
  const uint8_t* target = msg.target_ip.data();
  const uint8_t* src = msg.sender_ip.data();
  if (msg.kind == wire::NeighborKind::kNs) {
    if (!me.has_ipv6 || std::memcmp(target, me.ipv6.bytes.data(), 16) != 0) return false;
    ++p.ctr.rx_nd;
    if (p.ref.l3.gateway6 && std::memcmp(src, p.ref.l3.gateway6->bytes.data(), 16) == 0) {
      learn(p, p.gw6, msg.sender_mac, now, true);
    }
    Reply r;
    r.nd = true;
    r.tci = msg.tci;
    static const uint8_t kUnspecified[16] = {};
    if (std::memcmp(src, kUnspecified, 16) == 0) {  // duplicate address detection: to all nodes
      r.dst_mac = wire::ipv6_multicast_mac(wire::kIpv6AllNodes);
      std::memcpy(r.dst_ip.data(), wire::kIpv6AllNodes.bytes.data(), 16);
    } else {
      r.dst_mac = msg.sender_mac;
      std::memcpy(r.dst_ip.data(), src, 16);
    }
    owe(p, r);
    update_due(port);
    return true;
  }
  // NA: from our gateway (its target is the gateway's address).
  if (!p.ref.l3.gateway6 || std::memcmp(target, p.ref.l3.gateway6->bytes.data(), 16) != 0) return false;
  ++p.ctr.rx_nd;
  learn(p, p.gw6, msg.sender_mac, now, true);
  update_due(port);
  return true;
}

rte_mbuf* Neighbors::build_arp(rte_mempool* pool, const PortState& p, uint16_t op, const wire::MacAddr& eth_dst,
                               const wire::MacAddr& tha, const wire::Ipv4Addr& tpa, std::optional<uint16_t> tci) const {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) return nullptr;
  uint8_t f[wire::kNeighborFrameMax];
  const rc::LocalAddr& me = p.ref.host->local(p.ref.port_num);
  const size_t len = wire::write_arp(f, {eth_dst, me.mac, tci}, op, me.mac, me.ipv4, tha, tpa);
  auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(len)));
  if (d == nullptr) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  std::memcpy(d, f, len);
  return m;
}

rte_mbuf* Neighbors::build_nd(rte_mempool* pool, const PortState& p, uint8_t type, const wire::MacAddr& eth_dst,
                              const wire::Ipv6Addr& ip_dst, const wire::Ipv6Addr& target, bool solicited,
                              std::optional<uint16_t> tci) const {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) return nullptr;
  uint8_t f[wire::kNeighborFrameMax];
  const rc::LocalAddr& me = p.ref.host->local(p.ref.port_num);
  const size_t len = wire::write_nd(f, {eth_dst, me.mac, tci}, type == kNa, me.ipv6, ip_dst, target, me.mac, solicited);
  auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(len)));
  if (d == nullptr) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  std::memcpy(d, f, len);
  return m;
}

void Neighbors::update_due(uint16_t port) {
  const PortState& p = ports_[port];
  due_[port] = p.reply_count > 0 || p.announce4 || p.announce6 ? TimeNs(0)
                                                               : std::min(p.gw4.next_probe, p.gw6.next_probe);
}

TimeNs Neighbors::deadline(uint16_t port) const {
  const PortState& p = ports_[port];
  return std::min(p.gw4.next_probe, p.gw6.next_probe);
}

uint16_t Neighbors::transmit(uint16_t port, std::span<rte_mbuf*> out, rte_mempool* pool, TimeNs now) {
  PortState& p = ports_[port];
  const rc::LocalAddr& me = p.ref.host->local(p.ref.port_num);
  uint16_t n = 0;
  struct Due {  // every way out files the port's next due time
    Neighbors* self;
    uint16_t port;
    ~Due() { self->update_due(port); }
  } due{this, port};
  auto put = [&](rte_mbuf* m) {
    if (m == nullptr) return false;
    out[n++] = m;
    return true;
  };
  // 1. Announcements (gratuitous ARP: a request for our own address; unsolicited NA).
  if (p.announce4 && n < out.size() && put(build_arp(pool, p, kArpRequest, kBroadcast, {}, me.ipv4))) {
    p.announce4 = false;
    ++p.ctr.tx_garp;
  }
  if (p.announce6 && n < out.size() &&
      put(build_nd(pool, p, kNa, multicast_mac(kAllNodes), kAllNodes, me.ipv6, false))) {
    p.announce6 = false;
    ++p.ctr.tx_garp;
  }
  // 2. Answers owed.
  while (p.reply_count > 0 && n < out.size()) {
    const Reply& r = p.replies[p.reply_head];
    rte_mbuf* m = nullptr;
    if (r.nd) {
      wire::Ipv6Addr dst;
      std::memcpy(dst.bytes.data(), r.dst_ip.data(), 16);
      m = build_nd(pool, p, kNa, r.dst_mac, dst, me.ipv6, true, r.tci);
    } else {
      wire::Ipv4Addr tpa;
      std::memcpy(tpa.bytes.data(), r.dst_ip.data(), 4);
      m = build_arp(pool, p, kArpReply, r.dst_mac, r.dst_mac, tpa, r.tci);
    }
    if (!put(m)) break;
    ++(r.nd ? p.ctr.tx_na : p.ctr.tx_arp_replies);
    p.reply_head = (p.reply_head + 1) % p.replies.size();
    --p.reply_count;
  }
  // 3. Gateway resolution / refresh probes.
  for (int fam = 0; fam < 2 && n < out.size(); ++fam) {
    Entry& e = fam == 0 ? p.gw4 : p.gw6;
    if (e.state == State::kNone || e.next_probe > now) continue;
    if (e.state == State::kReachable) {  // kReachableTime since the last answer: confirm (unicast)
      e.state = State::kStale;
      e.probes = 0;
    } else if (e.probes >= kMaxProbes && e.state != State::kFailed) {
      e.state = State::kFailed;  // it keeps being probed; the last MAC stays in use
      ++p.ctr.probe_failures;
    }
    const bool unicast = e.state == State::kStale;
    rte_mbuf* m = nullptr;
    if (fam == 0) {
      m = build_arp(pool, p, kArpRequest, unicast ? e.mac : kBroadcast, {}, *p.ref.l3.gateway4);
    } else {
      const wire::Ipv6Addr& g = *p.ref.l3.gateway6;
      m = unicast ? build_nd(pool, p, kNs, e.mac, g, g, false)
                  : build_nd(pool, p, kNs, multicast_mac(solicited_node(g)), solicited_node(g), g, false);
    }
    if (!put(m)) break;
    ++(fam == 0 ? p.ctr.tx_arp_requests : p.ctr.tx_ns);
    ++e.probes;
    e.next_probe = now + kProbeInterval;
  }
  return n;
}

Neighbors::State Neighbors::gateway_state(uint16_t port, bool ipv6) const {
  return (ipv6 ? ports_[port].gw6 : ports_[port].gw4).state;
}

std::optional<wire::MacAddr> Neighbors::gateway_mac(uint16_t port, bool ipv6) const {
  const Entry& e = ipv6 ? ports_[port].gw6 : ports_[port].gw4;
  if (e.state == State::kNone || !e.answered) return std::nullopt;
  return e.mac;
}

bool Neighbors::settled() const {
  for (const PortState& p : ports_) {
    for (const Entry* e : {&p.gw4, &p.gw6}) {
      if (e->state == State::kIncomplete) return false;
    }
  }
  return true;
}

std::string Neighbors::route_error(uint16_t port, const std::array<uint8_t, 16>& gid) const {
  const PortState& p = ports_[port];
  const PortL3& l3 = p.ref.l3;
  if (!l3.routed()) return "";  // the L2 form: the peer's MAC from the out-of-band exchange
  const rc::LocalAddr& me = p.ref.host->local(p.ref.port_num);
  static const uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  const bool v4 = std::memcmp(gid.data(), kV4Mapped, 12) == 0;
  const std::string where = "port " + std::to_string(p.ref.port_num);
  const uint8_t* dst = v4 ? gid.data() + 12 : gid.data();
  const std::string dtext = v4 ? ip4_text(dst) : ip6_text(dst);
  if (v4 ? !me.has_ipv4 : !me.has_ipv6) return where + " has no " + (v4 ? "IPv4" : "IPv6") + " address for " + dtext;
  const uint8_t prefix = v4 ? l3.ipv4_prefix : l3.ipv6_prefix;
  const uint8_t* mine = v4 ? me.ipv4.bytes.data() : me.ipv6.bytes.data();
  if (prefix != 0 && in_prefix(dst, mine, prefix)) return "";  // on link
  const std::string subnet = (v4 ? ip4_text(mine) : ip6_text(mine)) + "/" + std::to_string(prefix);
  const bool has_gw = v4 ? l3.gateway4.has_value() : l3.gateway6.has_value();
  if (!has_gw) {
    return "no route to " + dtext + ": it is outside " + where + "'s subnet " + subnet + " and the port has no " +
           (v4 ? "gateway" : "IPv6 gateway");
  }
  const Entry& e = v4 ? p.gw4 : p.gw6;
  const std::string gtext = v4 ? ip4_text(l3.gateway4->bytes.data()) : ip6_text(l3.gateway6->bytes.data());
  switch (e.state) {
    case State::kReachable:
    case State::kStale: return "";
    case State::kFailed:
      if (e.answered) return "";  // answered once: its last MAC stays in use while it is re-probed
      return where + "'s gateway " + gtext + " does not answer " + (v4 ? "ARP" : "IPv6 neighbor solicitation") +
             " (" + std::to_string(kMaxProbes) + " requests, " + std::to_string(kProbeInterval.ns() / 1000000) +
             " ms apart): wrong gateway address, or the router is down";
    default: return where + "'s gateway " + gtext + " is not resolved yet";
  }
}

}  // namespace sf::nic
