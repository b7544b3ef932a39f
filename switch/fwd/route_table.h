// L3 forwarding: IPv4 and IPv6 longest-prefix match (rte_lpm / rte_lpm6) to a
// next hop or an ECMP group; groups pick a member by the flow hash (5-tuple,
// UDP source port included, so RoCEv2 entropy spreads). Built at setup by the
// config loader; lookups are read-only and safe from several lcores.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

struct rte_lpm;
struct rte_lpm6;

namespace sf::sw {

struct NextHop {
  uint16_t port = 0;
  std::array<uint8_t, 6> dst_mac{};  // neighbour's MAC
  std::array<uint8_t, 6> src_mac{};  // our port's MAC
};

// What a prefix resolves to: one next hop or an ECMP group.
struct RouteTarget {
  bool is_group = false;
  uint32_t id = 0;
  constexpr bool operator==(const RouteTarget&) const = default;
};

// Table sizes. A family with 0 routes gets no DPDK table at all (rte_lpm and
// rte_lpm6 each take a fixed 2^24-entry first level, 64 MiB, whatever the
// rule count): its lookups miss and its add_* fail.
struct RouteTableLimits {
  uint32_t max_v4_routes = 4096;
  uint32_t max_v6_routes = 4096;
};
// Limits for `v4` / `v6` configured routes: room for that many (at least
// kMinRoutes), 0 for a family without any.
RouteTableLimits route_limits_for(size_t v4, size_t v6);
inline constexpr uint32_t kMinRoutes = 64;

class RouteTable {
 public:
  // Throws std::runtime_error at setup if a DPDK table cannot be created.
  explicit RouteTable(const RouteTableLimits& limits = {});
  ~RouteTable();
  RouteTable(const RouteTable&) = delete;
  RouteTable& operator=(const RouteTable&) = delete;

  uint32_t add_next_hop(const NextHop& nh);
  // Members are next-hop ids; returns the group id. Throws on an empty group.
  uint32_t add_group(std::span<const uint32_t> members);
  // Prefixes in network byte order as on the wire. Return false when full or invalid.
  bool add_v4(const std::array<uint8_t, 4>& prefix, uint8_t depth, RouteTarget t);
  bool add_v6(const std::array<uint8_t, 16>& prefix, uint8_t depth, RouteTarget t);

  std::optional<RouteTarget> lookup_v4(const uint8_t* addr) const;
  std::optional<RouteTarget> lookup_v6(const uint8_t* addr) const;
  // out[i] = lookup of IPv4 address ips[i] (host byte order), n <= kBulkMax.
  static constexpr uint32_t kBulkMax = 32;
  void lookup_v4_bulk(const uint32_t* ips, uint32_t n, std::optional<RouteTarget>* out) const;
  // The next hop for a target and a flow hash (ignored for a plain next hop).
  const NextHop& resolve(RouteTarget t, uint32_t flow_hash) const;
  // resolve() among the members whose port is up (`up(port)`): the member
  // resolve() picks when it is up (flows on live members stay put), else
  // the flow hash picks among the live ones. nullptr when none is up.
  template <class Up>
  const NextHop* resolve_live(RouteTarget t, uint32_t flow_hash, Up&& up) const {
    const NextHop& first = resolve(t, flow_hash);
    if (!t.is_group || up(first.port)) return up(first.port) ? &first : nullptr;
    const std::vector<uint32_t>& g = groups_[t.id];
    uint32_t live = 0;
    for (const uint32_t id : g) live += up(next_hops_[id].port) ? 1u : 0u;
    if (live == 0) return nullptr;
    uint32_t k = static_cast<uint32_t>((uint64_t{fmix(flow_hash)} * live) >> 32);
    for (const uint32_t id : g) {
      if (!up(next_hops_[id].port)) continue;
      if (k-- == 0) return &next_hops_[id];
    }
    return nullptr;  // (unreachable)
  }

  const NextHop& next_hop(uint32_t id) const { return next_hops_[id]; }
  size_t group_size(uint32_t id) const { return groups_[id].size(); }

 private:
  // A second hash for the choice among live members (not correlated with
  // the first choice, so the flows of a dead member spread evenly).
  static uint32_t fmix(uint32_t h) {
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    return h ^ (h >> 16);
  }
  static uint32_t encode(RouteTarget t) { return (t.is_group ? kGroupBit : 0u) | t.id; }
  static RouteTarget decode(uint32_t v) { return {(v & kGroupBit) != 0, v & ~kGroupBit}; }
  static constexpr uint32_t kGroupBit = 1u << 23;  // rte_lpm next hops are 24 bits

  rte_lpm* v4_ = nullptr;
  rte_lpm6* v6_ = nullptr;
  std::vector<NextHop> next_hops_;
  std::vector<std::vector<uint32_t>> groups_;
};

// Flow hash over the 5-tuple (addresses of either family, protocol, ports).
// Deterministic across processes and runs, so ECMP choices are reproducible.
uint32_t flow_hash(std::span<const uint8_t> src_ip, std::span<const uint8_t> dst_ip, uint8_t proto,
                   uint16_t src_port, uint16_t dst_port);
// flow_hash() of two IPv4 addresses (4 bytes each, wire order), the same
// value without the generic CRC loop (the receive path's ECMP hash).
uint32_t flow_hash_v4(const uint8_t* src_ip, const uint8_t* dst_ip, uint8_t proto, uint16_t src_port,
                      uint16_t dst_port);

}  // namespace sf::sw
