// L3 forwarding: IPv4 and IPv6 longest-prefix match to a next hop or an ECMP
// group; groups pick a member by the flow hash (5-tuple, UDP source port
// included, so RoCEv2 entropy spreads). Built at setup by the config loader;
// lookups are read-only and safe from several lcores.
//
// Memory follows the routes (docs/sf-sim.md "Cost"): IPv4 is a DIR-16-8-8
// table on the heap (a 2^16-entry first level, 256 KiB of zero pages of
// which lookups touch what routes fill, and one 1 KiB group per /17../24 and
// per /25../32 prefix's /16 and /24, at most two per route, reserved for the
// configured count); IPv6 is rte_lpm6 (its 2^24-entry first level is a
// fixed 64 MiB of DPDK memory) with tbl8 groups sized from the routes' depths.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

struct rte_lpm6;

namespace sf::sw {

struct NextHop {
  uint16_t port = 0;
  std::array<uint8_t, 6> dst_mac{};  // neighbour's MAC
  std::array<uint8_t, 6> src_mac{};  // our port's MAC
  // RouterIf neighbour entry whose MAC replaces dst_mac (resolved at run
  // time, switch/fwd/router_if.h); -1: dst_mac is the static one (NEIGH).
  int32_t neigh = -1;
};

// What a prefix resolves to: one next hop or an ECMP group.
struct RouteTarget {
  bool is_group = false;
  uint32_t id = 0;
  constexpr bool operator==(const RouteTarget&) const = default;
};

// Table sizes. A family with 0 routes gets no table at all: its lookups miss
// and its add_* fail. Adding more distinct prefixes than max_*_routes fails
// (add_* returns false, nothing changes).
struct RouteTableLimits {
  uint32_t max_v4_routes = 4096;
  uint32_t max_v6_routes = 4096;
  uint32_t v6_tbl8s = 4096;  // rte_lpm6 tbl8 groups (lpm6_tbl8s_for() per route)
};
// Limits for `v4` / `v6` configured routes: room for that many (at least
// kMinRoutes), 0 for a family without any. `v6_tbl8s`: the sum of
// lpm6_tbl8s_for(depth) over the IPv6 routes (0: as for /128 routes).
RouteTableLimits route_limits_for(size_t v4, size_t v6, uint64_t v6_tbl8s = 0);
inline constexpr uint32_t kMinRoutes = 64;
// The most routes of one family a switch holds (STATIC_ROUTE is refused
// beyond it): 2 x 2^20 IPv4 groups of 1 KiB at most, 2 GiB.
inline constexpr uint32_t kMaxRoutes = 1u << 20;
// rte_lpm6 tbl8 groups a prefix of `depth` needs at most: one per byte past the 24th bit.
constexpr uint32_t lpm6_tbl8s_for(uint32_t depth) { return depth <= 24 ? 1 : (depth - 24 + 7) / 8; }
// DPDK (EAL) memory a table of these limits takes: rte_lpm6's only (IPv4 is
// on the heap). sf-sim sizes its EAL memory with it.
uint64_t route_table_dpdk_bytes(const RouteTableLimits& limits);
// Heap bytes the IPv4 table may take at most.
uint64_t route_table_heap_bytes(const RouteTableLimits& limits);

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
  static constexpr uint32_t kGroupBit = 1u << 23;  // next hops are 24 bits (rte_lpm6's too)

  // IPv4 DIR-16-8-8 entry: valid, extended (value = group index), the depth
  // of the prefix that set it, and 24 bits of value (encode()).
  static constexpr uint32_t kValid = 1u << 31;
  static constexpr uint32_t kExt = 1u << 30;
  static constexpr uint32_t kValue = 0x00FFFFFFu;
  static uint32_t depth_of(uint32_t e) { return (e >> 24) & 0x3Fu; }
  uint32_t lookup4(uint32_t ip) const {
    uint32_t e = v4_tbl16_[ip >> 16];
    if ((e & kExt) != 0) {
      e = v4_tbl8_[(e & kValue) * 256 + ((ip >> 8) & 0xFFu)];
      if ((e & kExt) != 0) e = v4_tbl8_[(e & kValue) * 256 + (ip & 0xFFu)];
    }
    return e;
  }
  // The group under *slot (created from its entry if it has none); kValue: none left.
  uint32_t group_of(uint32_t* slot);
  // Entries [first, first + n) of a level take (value, depth) where their depth is not longer.
  void fill4(uint32_t* first, uint32_t n, uint32_t entry);

  struct FreeDeleter {
    void operator()(uint32_t* p) const;
  };
  std::unique_ptr<uint32_t[], FreeDeleter> v4_tbl16_;  // calloc'd: untouched pages cost nothing
  std::vector<uint32_t> v4_tbl8_;                      // groups of 256, capacity reserved
  uint32_t v4_max_groups_ = 0;
  uint32_t v4_max_routes_ = 0;
  std::vector<uint64_t> v4_prefixes_;  // (prefix << 8 | depth) of the routes added, sorted
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
