// Neighbors: ARP and IPv6 Neighbor Discovery for the NicNode's ports, and
// next-hop resolution for routed fabrics (docs/nic.md "ARP, ND and next
// hops", docs/nic-app.md "Routed fabrics"). Part of the one datapath: NicNode calls it from receive() and
// transmit(), so sf-nic on any port kind (a vfio-bound NIC has no kernel to
// ask) and sf-sim run the same code.
//
// Per node port:
//  * responder: an ARP request for the port's IPv4 address gets a reply, an
//    IPv6 Neighbor Solicitation for its IPv6 address a solicited Neighbor
//    Advertisement; the sender of either is learned when we have an entry
//    for it (RFC 826's merge: a gateway that changed its MAC is followed);
//  * a route table of two routes: the port's subnet (address/prefix) on
//    link, and a default route via the gateway when one is configured. The
//    gateway's entry is resolved at start (a gratuitous ARP / unsolicited NA
//    announces us first), re-confirmed with a unicast probe once it is
//    kReachableTime old, and marked failed after kMaxProbes unanswered
//    requests (kProbeInterval apart; probing goes on). Once resolved, its MAC
//    is the destination of every frame the port sends (Host::set_gateway_mac:
//    rc::LocalAddr::gateway, which RC and MRC QPs read per frame).
// A port without a gateway or prefix (the L2 form: the peer's MAC comes
// from the out-of-band exchange) announces nothing and resolves nothing; it
// still answers ARP / ND for its addresses.
// Threading: the node's. Allocation: construction only (frames: mbufs).
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/time.h"
#include "common/wire/ethernet.h"
#include "common/wire/ipv4.h"
#include "common/wire/ipv6.h"

namespace sf::nic {

class Host;

// One port's L3 configuration (HostPortAddr): prefix lengths of its
// addresses (0 = not configured: the L2 form) and its default gateway.
struct PortL3 {
  uint8_t ipv4_prefix = 0;
  uint8_t ipv6_prefix = 0;
  std::optional<wire::Ipv4Addr> gateway4;
  std::optional<wire::Ipv6Addr> gateway6;
  bool routed() const { return ipv4_prefix != 0 || ipv6_prefix != 0 || gateway4 || gateway6; }
};

struct NeighborCounters {
  uint64_t rx_arp = 0;          // ARP frames taken (requests and replies)
  uint64_t rx_nd = 0;           // NS / NA taken
  uint64_t tx_arp_replies = 0;
  uint64_t tx_arp_requests = 0; // gateway resolution and refresh probes
  uint64_t tx_garp = 0;         // gratuitous ARP / unsolicited NA at start
  uint64_t tx_na = 0;
  uint64_t tx_ns = 0;
  uint64_t gateway_changes = 0; // the gateway answered with a new MAC
  uint64_t probe_failures = 0;  // a resolution gave up after kMaxProbes
};

class Neighbors {
 public:
  static constexpr TimeNs kProbeInterval = TimeNs::from_ms(1000);
  static constexpr uint32_t kMaxProbes = 3;
  static constexpr TimeNs kReachableTime = TimeNs::from_s(30);

  enum class State : uint8_t { kNone, kIncomplete, kReachable, kStale, kFailed };
  static const char* to_string(State s);

  // One entry per node port: `hosts` maps the port to its host and port_num.
  struct PortRef {
    Host* host = nullptr;
    uint8_t port_num = 1;
    PortL3 l3;
  };
  explicit Neighbors(std::vector<PortRef> ports);

  // A received frame that is not RoCE: true if it was ARP or ND (taken and
  // counted; the caller frees it), false otherwise (the caller counts it).
  bool on_frame(uint16_t port, const rte_mbuf* m, TimeNs now);
  // Frames owed on the port (replies, announcements, due probes) into `out`;
  // returns how many (0 when the pool is empty: retried at the next offer).
  uint16_t transmit(uint16_t port, std::span<rte_mbuf*> out, rte_mempool* pool, TimeNs now);
  // transmit() has something to send at `now` (one load: called on every
  // transmit offer of every port).
  bool busy(uint16_t port, TimeNs now) const { return due_[port] <= now; }
  // When the port next has a probe due (TimeNs::max(): none).
  TimeNs deadline(uint16_t port) const;

  // ---- control path (the app, at connect)
  // The gateway's resolution state on `port` (kNone: no gateway of that family).
  State gateway_state(uint16_t port, bool ipv6) const;
  // Every configured gateway is resolved or has failed (resolution settled).
  bool settled() const;
  // How `port` reaches `dst` (an IPv4 or IPv6 address as 16 bytes, the GID
  // form ::ffff:a.b.c.d for IPv4): empty if it can (on link, or via a
  // resolved gateway), else why not, naming the port, its subnet and gateway.
  std::string route_error(uint16_t port, const std::array<uint8_t, 16>& gid) const;
  const NeighborCounters& counters(uint16_t port) const { return ports_[port].ctr; }
  std::optional<wire::MacAddr> gateway_mac(uint16_t port, bool ipv6) const;
  const PortL3& l3(uint16_t port) const { return ports_[port].ref.l3; }

 private:
  struct Entry {
    State state = State::kNone;
    wire::MacAddr mac{};
    TimeNs confirmed{0};
    TimeNs next_probe = TimeNs::max();
    uint32_t probes = 0;  // unanswered requests since the last answer
    bool answered = false;  // it answered at least once (its MAC is known)
  };
  struct Reply {
    bool nd = false;
    std::optional<uint16_t> tci;  // the request's 802.1Q tag: the answer carries it
    wire::MacAddr dst_mac{};
    std::array<uint8_t, 16> dst_ip{};  // IPv4 in the first 4 bytes
  };
  struct PortState {
    PortRef ref;
    Entry gw4, gw6;
    bool announce4 = false, announce6 = false;
    std::array<Reply, 16> replies{};  // owed answers (ring; a full ring drops the oldest ask)
    uint32_t reply_head = 0, reply_count = 0;
    NeighborCounters ctr;
  };
  void learn(PortState& p, Entry& e, const wire::MacAddr& mac, TimeNs now, bool ipv6);
  void owe(PortState& p, const Reply& r);
  // Frames from common/wire/arp_nd.h's builders; `tci`: an 802.1Q tag to carry.
  rte_mbuf* build_arp(rte_mempool* pool, const PortState& p, uint16_t op, const wire::MacAddr& eth_dst,
                      const wire::MacAddr& tha, const wire::Ipv4Addr& tpa, std::optional<uint16_t> tci = {}) const;
  rte_mbuf* build_nd(rte_mempool* pool, const PortState& p, uint8_t type, const wire::MacAddr& eth_dst,
                     const wire::Ipv6Addr& ip_dst, const wire::Ipv6Addr& target, bool solicited,
                     std::optional<uint16_t> tci = {}) const;
  // When the port next has something to send: 0 with answers or
  // announcements owed, else its earliest probe (max: nothing).
  void update_due(uint16_t port);
  std::vector<PortState> ports_;
  std::vector<TimeNs> due_;
};

}  // namespace sf::nic
