// RouterIf: the switch's router interfaces in L3 mode (INTERFACE table,
// docs/switch.md "Router interfaces"). It answers ARP requests and IPv6
// Neighbor Solicitations for the interface addresses with the port's router
// MAC, and resolves the MACs of next hops that are on an interface subnet
// and have no NEIGH entry ("dynamic" next hops, RouteNextHop::dynamic):
//  * gleaning: every ARP (request, reply, gratuitous) and NS / NA received on
//    the next hop's port whose sender is that next hop sets its MAC (RFC
//    826's merge: only next hops the routes name get an entry; a host that
//    changes its MAC is followed). sf-nic's gratuitous ARP at start and its
//    gateway request are enough for the switch to know it;
//  * asking: a routed packet for a next hop still unresolved is turned into
//    an ARP request / NS for it (in the packet's own mbuf, at most one per
//    next hop per kSolicitInterval; the packets in between are dropped,
//    counted no_neighbor), which the caller sends on the next hop's port.
// Entries do not age: a resolved next hop keeps its MAC until a frame from
// it says otherwise, or the switch is reset (forget()).
// Bad ARP / ND on a router port is dropped, counted by reason
// (wire::NeighborError); ARP / ND for another address is taken after
// gleaning (a routed port ends its subnet: bridging it to other ports,
// other subnets, would be wrong).
//
// Threading: one RouterIf is shared by the shards of a switch (like the
// route table). on_frame() is called by the lcore owning the ingress port
// (per-port counters are that lcore's); neighbour MACs are atomics written
// by whichever lcore gleans and read by every lcore that routes.
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/time.h"
#include "common/wire/arp_nd.h"
#include "switch/config/switch_config.h"

namespace sf::sw {

// Per router port; written by the lcore owning the port.
struct RouterIfCounters {
  uint64_t rx_arp_request = 0;  // ARP requests for one of the port's addresses (answered)
  uint64_t rx_arp_reply = 0;    // ARP replies to one of the port's addresses (taken)
  uint64_t rx_ns = 0;           // NS for one of the port's addresses (answered)
  uint64_t rx_na = 0;           // NA to one of the port's addresses (taken)
  uint64_t tx_arp_reply = 0;
  uint64_t tx_na = 0;
  uint64_t not_ours = 0;        // ARP / NS / NA for another address (gratuitous ones too): taken, not bridged
  uint64_t gleaned = 0;         // a next hop's MAC learned or confirmed from its frame
  uint64_t neighbor_moves = 0;  // ... and it differed from the one known
  uint64_t no_room = 0;         // a reply not sent: the request's mbuf could not hold it (segmented)
  uint64_t bad = 0;             // malformed ARP / ND dropped, all reasons
  std::array<uint64_t, wire::kNumNeighborErrors> bad_by{};  // by wire::NeighborError
};

class RouterIf {
 public:
  // At most one ARP request / NS per unresolved next hop this often.
  static constexpr TimeNs kSolicitInterval = TimeNs::from_ms(1);
  static constexpr int32_t kNoNeighbor = -1;

  // `port_macs[p]`: port p's router MAC. Entries for every dynamic next hop
  // of cfg.routes (one per (port, address)).
  RouterIf(const SwitchConfig& cfg, std::span<const std::array<uint8_t, 6>> port_macs);

  // Whether `port` has an interface address (the only ports whose ARP / ND
  // the switch looks at).
  bool port_on(uint16_t port) const { return port < on_.size() && on_[port] != 0; }
  // Stage A of the switch: the frame on `port` may be ARP / NS / NA for us.
  bool traps(uint16_t port, uint16_t ether_type, const uint8_t* l3) const {
    return port_on(port) && wire::maybe_neighbor(ether_type, l3);
  }

  enum class Verdict : uint8_t {
    kPass,      // not ARP / ND: forward it as before
    kReply,     // `m` now holds the answer: send it back out of `port`
    kConsumed,  // taken (a reply to us, ARP / ND for another address, an answer we could not build): free it
    kBad,       // malformed ARP / ND: drop it (counted here by reason)
  };
  // A frame received on `port` (one the switch forwards otherwise). Gleans
  // next hops from it; a request for our address is rewritten in place into
  // the answer (with the request's VLAN tag, if any).
  Verdict on_frame(uint16_t port, rte_mbuf* m, TimeNs now);

  // The neighbour entry of a dynamic next hop (kNoNeighbor: not one).
  int32_t neighbor_of(const RouteNextHop& nh) const;
  // Its MAC into `mac` when resolved (one atomic load; any lcore).
  bool neighbor_mac(int32_t id, std::array<uint8_t, 6>& mac) const {
    const uint64_t v = neighbors_[static_cast<size_t>(id)]->mac.load(std::memory_order_acquire);
    if (v == 0) return false;
    for (int i = 0; i < 6; ++i) mac[static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
    return true;
  }
  // Next hop `id` is unresolved and a packet (`m`) is routed to it: when a
  // request is due, rewrites `m` into the ARP request / NS for it (keeping
  // m's VLAN tag) and returns true (the caller sends it on the next hop's
  // port); false: the caller drops the packet (no_neighbor).
  bool solicit(int32_t id, rte_mbuf* m, TimeNs now);
  // A switch reboot (SwitchNode::reset): every next hop unresolved again.
  void forget();

  const RouterIfCounters& counters(uint16_t port) const { return ctr_[port]; }
  const std::vector<RouterInterface>& interfaces() const { return ifs_; }
  // The neighbour table (telemetry, tests): control thread, any time.
  struct NeighborView {
    uint16_t port = 0;
    bool v6 = false;
    std::array<uint8_t, 16> ip{};
    bool resolved = false;
    std::array<uint8_t, 6> mac{};
    uint64_t solicits = 0;  // ARP requests / NS sent for it
  };
  std::vector<NeighborView> neighbors() const;

 private:
  struct Neighbor {
    uint16_t port = 0;
    bool v6 = false;
    std::array<uint8_t, 16> ip{};
    uint32_t rif = 0;                       // the interface whose subnet it is on (source of our requests)
    std::atomic<uint64_t> mac{0};           // 6 bytes little-endian | 1 << 48 when resolved; 0 unresolved
    std::atomic<int64_t> next_solicit_ns{0};
    std::atomic<uint64_t> solicits{0};
  };
  static uint64_t pack(const wire::MacAddr& m);
  // The interface of `port` with address `ip` (family `v6`); -1: none.
  int find_if(uint16_t port, bool v6, const std::array<uint8_t, 16>& ip) const;
  int32_t find_neighbor(uint16_t port, bool v6, const std::array<uint8_t, 16>& ip) const;
  void glean(uint16_t port, bool v6, const std::array<uint8_t, 16>& ip, const wire::MacAddr& mac);

  std::vector<RouterInterface> ifs_;
  std::vector<uint8_t> on_;                     // per port: has an interface
  std::vector<std::array<uint8_t, 6>> macs_;    // per port: router MAC
  std::vector<std::unique_ptr<Neighbor>> neighbors_;  // few; linear search on the (rare) ARP / ND path
  std::vector<RouterIfCounters> ctr_;
};

}  // namespace sf::sw
