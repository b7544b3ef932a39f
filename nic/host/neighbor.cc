// Neighbors: ARP / IPv6 ND responder and gateway resolution. See neighbor.h.
#include "nic/host/neighbor.h"

#include <algorithm>
#include <cstring>

#include "nic/host/nic_node.h"

namespace sf::nic {

namespace {
constexpr uint16_t kEtherTypeArp = 0x0806;
constexpr uint16_t kArpRequest = 1;
constexpr uint16_t kArpReply = 2;
constexpr uint8_t kIcmp6 = 58;
constexpr uint8_t kNs = 135;
constexpr uint8_t kNa = 136;
constexpr size_t kEth = 14;
constexpr size_t kArpLen = 28;
constexpr size_t kIp6 = 40;
constexpr size_t kNdLen = 32;  // type..target (24) + one link-layer address option (8)
constexpr size_t kMinFrame = 60;
const wire::MacAddr kBroadcast{{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}};

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// The ICMPv6 checksum (RFC 4443 2.3) over the pseudo header and `len` bytes at `icmp`.
uint16_t icmp6_checksum(const uint8_t* src, const uint8_t* dst, const uint8_t* icmp, size_t len) {
  uint32_t s = 0;
  auto add = [&](const uint8_t* p, size_t n) {
    for (size_t i = 0; i + 1 < n; i += 2) s += be16(p + i);
    if (n & 1) s += static_cast<uint32_t>(p[n - 1]) << 8;
  };
  add(src, 16);
  add(dst, 16);
  s += static_cast<uint32_t>(len);
  s += kIcmp6;
  add(icmp, len);
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return static_cast<uint16_t>(~s);
}

wire::Ipv6Addr solicited_node(const wire::Ipv6Addr& t) {
  wire::Ipv6Addr a{{0xFF, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xFF, t.bytes[13], t.bytes[14], t.bytes[15]}};
  return a;
}
wire::MacAddr multicast_mac(const wire::Ipv6Addr& a) {
  return wire::MacAddr{{0x33, 0x33, a.bytes[12], a.bytes[13], a.bytes[14], a.bytes[15]}};
}
const wire::Ipv6Addr kAllNodes{{0xFF, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01}};

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
  const auto* b = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t len = m->data_len;
  if (len < kEth) return false;
  const uint16_t et = be16(b + 12);
  if (et == kEtherTypeArp) {
    if (len < kEth + kArpLen) return false;
    const uint8_t* a = b + kEth;
    if (be16(a) != 1 || be16(a + 2) != wire::kEtherTypeIpv4 || a[4] != 6 || a[5] != 4) return false;
    const uint16_t op = be16(a + 6);
    if (op != kArpRequest && op != kArpReply) return false;
    wire::MacAddr sha;
    std::memcpy(sha.bytes.data(), a + 8, 6);
    const uint8_t* spa = a + 14;
    const uint8_t* tpa = a + 24;
    const bool for_me = me.has_ipv4 && std::memcmp(tpa, me.ipv4.bytes.data(), 4) == 0;
    const bool from_gw = p.ref.l3.gateway4 && std::memcmp(spa, p.ref.l3.gateway4->bytes.data(), 4) == 0;
    if (!for_me && !from_gw) return false;  // another host's ARP: the caller counts it
    ++p.ctr.rx_arp;
    if (from_gw) learn(p, p.gw4, sha, now, false);
    if (for_me && op == kArpRequest) {
      Reply r;
      r.dst_mac = sha;
      std::memcpy(r.dst_ip.data(), spa, 4);
      owe(p, r);
    }
    update_due(port);
    return true;
  }
  if (et != wire::kEtherTypeIpv6 || len < kEth + kIp6 + 24) return false;
  const uint8_t* ip = b + kEth;
  if ((ip[0] >> 4) != 6 || ip[6] != kIcmp6 || ip[7] != 255) return false;
  const uint16_t plen = be16(ip + 4);
  if (plen < 24 || kEth + kIp6 + plen > len) return false;
  const uint8_t* icmp = ip + kIp6;
  if ((icmp[0] != kNs && icmp[0] != kNa) || icmp[1] != 0) return false;
  if (icmp6_checksum(ip + 8, ip + 24, icmp, plen) != 0) return false;  // a bad checksum: not taken, counted
  const uint8_t* target = icmp + 8;
  // The link-layer address option (source for NS, target for NA), else the frame's source.
  wire::MacAddr lla;
  std::memcpy(lla.bytes.data(), b + 6, 6);
  for (size_t off = 24; off + 8 <= plen;) {
    const uint8_t olen = icmp[off + 1];
    if (olen == 0) break;
    if ((icmp[off] == 1 || icmp[off] == 2) && olen == 1) std::memcpy(lla.bytes.data(), icmp + off + 2, 6);
    off += olen * 8u;
  }
  const uint8_t* src = ip + 8;
  if (icmp[0] == kNs) {
    if (!me.has_ipv6 || std::memcmp(target, me.ipv6.bytes.data(), 16) != 0) return false;
    ++p.ctr.rx_nd;
    if (p.ref.l3.gateway6 && std::memcmp(src, p.ref.l3.gateway6->bytes.data(), 16) == 0) {
      learn(p, p.gw6, lla, now, true);
    }
    Reply r;
    r.nd = true;
    static const uint8_t kUnspecified[16] = {};
    if (std::memcmp(src, kUnspecified, 16) == 0) {  // duplicate address detection: to all nodes
      r.dst_mac = multicast_mac(kAllNodes);
      std::memcpy(r.dst_ip.data(), kAllNodes.bytes.data(), 16);
    } else {
      r.dst_mac = lla;
      std::memcpy(r.dst_ip.data(), src, 16);
    }
    owe(p, r);
    update_due(port);
    return true;
  }
  // NA: from our gateway (its target is the gateway's address).
  if (!p.ref.l3.gateway6 || std::memcmp(target, p.ref.l3.gateway6->bytes.data(), 16) != 0) return false;
  ++p.ctr.rx_nd;
  learn(p, p.gw6, lla, now, true);
  update_due(port);
  return true;
}

rte_mbuf* Neighbors::build_arp(rte_mempool* pool, const PortState& p, uint16_t op, const wire::MacAddr& eth_dst,
                               const wire::MacAddr& tha, const wire::Ipv4Addr& tpa) const {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) return nullptr;
  auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kMinFrame));
  if (d == nullptr) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  std::memset(d, 0, kMinFrame);
  const rc::LocalAddr& me = p.ref.host->local(p.ref.port_num);
  std::memcpy(d, eth_dst.bytes.data(), 6);
  std::memcpy(d + 6, me.mac.bytes.data(), 6);
  put16(d + 12, kEtherTypeArp);
  uint8_t* a = d + kEth;
  put16(a, 1);
  put16(a + 2, wire::kEtherTypeIpv4);
  a[4] = 6;
  a[5] = 4;
  put16(a + 6, op);
  std::memcpy(a + 8, me.mac.bytes.data(), 6);
  std::memcpy(a + 14, me.ipv4.bytes.data(), 4);
  std::memcpy(a + 18, tha.bytes.data(), 6);
  std::memcpy(a + 24, tpa.bytes.data(), 4);
  return m;
}

rte_mbuf* Neighbors::build_nd(rte_mempool* pool, const PortState& p, uint8_t type, const wire::MacAddr& eth_dst,
                              const wire::Ipv6Addr& ip_dst, const wire::Ipv6Addr& target, bool solicited) const {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) return nullptr;
  constexpr size_t kLen = kEth + kIp6 + kNdLen;  // 86
  auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kLen));
  if (d == nullptr) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  std::memset(d, 0, kLen);
  const rc::LocalAddr& me = p.ref.host->local(p.ref.port_num);
  std::memcpy(d, eth_dst.bytes.data(), 6);
  std::memcpy(d + 6, me.mac.bytes.data(), 6);
  put16(d + 12, wire::kEtherTypeIpv6);
  uint8_t* ip = d + kEth;
  ip[0] = 0x60;
  put16(ip + 4, kNdLen);
  ip[6] = kIcmp6;
  ip[7] = 255;
  std::memcpy(ip + 8, me.ipv6.bytes.data(), 16);
  std::memcpy(ip + 24, ip_dst.bytes.data(), 16);
  uint8_t* icmp = ip + kIp6;
  icmp[0] = type;
  if (type == kNa) icmp[4] = static_cast<uint8_t>((solicited ? 0x40 : 0) | 0x20);  // S, O
  std::memcpy(icmp + 8, target.bytes.data(), 16);
  icmp[24] = type == kNs ? 1 : 2;  // source / target link-layer address
  icmp[25] = 1;
  std::memcpy(icmp + 26, me.mac.bytes.data(), 6);
  put16(icmp + 2, icmp6_checksum(ip + 8, ip + 24, icmp, kNdLen));
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
      m = build_nd(pool, p, kNa, r.dst_mac, dst, me.ipv6, true);
    } else {
      wire::Ipv4Addr tpa;
      std::memcpy(tpa.bytes.data(), r.dst_ip.data(), 4);
      m = build_arp(pool, p, kArpReply, r.dst_mac, r.dst_mac, tpa);
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
