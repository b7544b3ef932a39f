// LPM routes, next hops and ECMP groups. See route_table.h.
#include "switch/fwd/route_table.h"

#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_lpm6.h>
#include <rte_memory.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace sf::sw {
namespace {
std::atomic<uint32_t> g_instance{0};
constexpr uint32_t kTbl16Entries = 1u << 16;
constexpr uint32_t kGroupEntries = 256;
constexpr uint32_t kMinV6Tbl8s = 256;
}  // namespace

RouteTableLimits route_limits_for(size_t v4, size_t v6, uint64_t v6_tbl8s) {
  auto room = [](size_t n) { return n == 0 ? 0u : static_cast<uint32_t>(std::max<size_t>(n, kMinRoutes)); };
  RouteTableLimits l{room(v4), room(v6), 0};
  if (l.max_v6_routes != 0) {
    // Headroom: the routes' own need, at least what kMinRoutes /128s would take.
    const uint64_t need = std::max<uint64_t>(v6_tbl8s != 0 ? v6_tbl8s : uint64_t{l.max_v6_routes} * lpm6_tbl8s_for(128),
                                             uint64_t{kMinRoutes} * lpm6_tbl8s_for(128));
    l.v6_tbl8s = static_cast<uint32_t>(std::clamp<uint64_t>(need, kMinV6Tbl8s, uint64_t{kMaxRoutes} * lpm6_tbl8s_for(128)));
  }
  return l;
}

uint64_t route_table_dpdk_bytes(const RouteTableLimits& l) {
  if (l.max_v6_routes == 0) return 0;
  // rte_lpm6: the struct with its 2^24-entry tbl24, tbl8 groups (1 KiB each
  // plus their pool and header entries), the rules' rte_hash; + slack.
  return (64ull << 20) + uint64_t{l.v6_tbl8s} * (kGroupEntries * 4 + 16) + uint64_t{l.max_v6_routes} * 256 + (2ull << 20);
}

uint64_t route_table_heap_bytes(const RouteTableLimits& l) {
  if (l.max_v4_routes == 0) return 0;
  return uint64_t{kTbl16Entries} * 4 + 2ull * l.max_v4_routes * kGroupEntries * 4 + uint64_t{l.max_v4_routes} * 8;
}


void RouteTable::FreeDeleter::operator()(uint32_t* p) const { std::free(p); }

RouteTable::RouteTable(const RouteTableLimits& limits) {
  if (limits.max_v4_routes > kMaxRoutes || limits.max_v6_routes > kMaxRoutes) {
    throw std::runtime_error("routes: " + std::to_string(std::max(limits.max_v4_routes, limits.max_v6_routes)) +
                             " routes of one family: more than the " + std::to_string(kMaxRoutes) + " a switch holds");
  }
  if (limits.max_v4_routes != 0) {
    v4_tbl16_.reset(static_cast<uint32_t*>(std::calloc(kTbl16Entries, sizeof(uint32_t))));
    if (!v4_tbl16_) throw std::runtime_error("routes: cannot allocate the IPv4 table");
    v4_max_routes_ = limits.max_v4_routes;
    v4_max_groups_ = 2 * limits.max_v4_routes;  // a route creates at most a /16's and a /24's group
    v4_tbl8_.reserve(size_t{v4_max_groups_} * kGroupEntries);  // never moves: group_of() keeps pointers
    v4_prefixes_.reserve(limits.max_v4_routes);
  }
  if (limits.max_v6_routes != 0) {
    const std::string n6 = "sf_lpm6_" + std::to_string(g_instance.fetch_add(1));
    rte_lpm6_config c6{};
    c6.max_rules = limits.max_v6_routes;
    c6.number_tbl8s = std::max(limits.v6_tbl8s, kMinV6Tbl8s);
    v6_ = rte_lpm6_create(n6.c_str(), SOCKET_ID_ANY, &c6);
    if (v6_ == nullptr) {
      throw std::runtime_error("routes: rte_lpm6_create (" + std::to_string(c6.max_rules) + " routes, " +
                               std::to_string(c6.number_tbl8s) + " tbl8 groups): " + std::string(rte_strerror(rte_errno)));
    }
  }
}

RouteTable::~RouteTable() {
  if (v6_ != nullptr) rte_lpm6_free(v6_);
}

uint32_t RouteTable::group_of(uint32_t* slot) {
  if ((*slot & kExt) != 0) return *slot & kValue;
  const auto g = static_cast<uint32_t>(v4_tbl8_.size() / kGroupEntries);
  if (g >= v4_max_groups_) return kValue;
  const uint32_t parent = *slot;
  v4_tbl8_.resize(v4_tbl8_.size() + kGroupEntries, parent);  // the children inherit the entry (and its depth)
  *slot = kValid | kExt | g;
  return g;
}

void RouteTable::fill4(uint32_t* first, uint32_t n, uint32_t entry) {
  const uint32_t depth = depth_of(entry);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t& e = first[i];
    if ((e & kExt) != 0) {
      fill4(&v4_tbl8_[(e & kValue) * kGroupEntries], kGroupEntries, entry);  // longer prefixes below stay
    } else if ((e & kValid) == 0 || depth_of(e) <= depth) {
      e = entry;
    }
  }
}

uint32_t RouteTable::add_next_hop(const NextHop& nh) {
  next_hops_.push_back(nh);
  return static_cast<uint32_t>(next_hops_.size() - 1);
}

uint32_t RouteTable::add_group(std::span<const uint32_t> members) {
  if (members.empty()) throw std::invalid_argument("routes: empty ECMP group");
  groups_.emplace_back(members.begin(), members.end());
  return static_cast<uint32_t>(groups_.size() - 1);
}

// Prefix expansion as rte_lpm's DIR-24-8, on three levels: every entry the
// prefix covers takes its value unless a longer prefix set it; a /17../32
// prefix first gives its /16 (and a /25../32 its /24) a group of 256
// entries that start as copies of the entry they replace. Adding a prefix
// again replaces its value (entries of its own depth are its own).
bool RouteTable::add_v4(const std::array<uint8_t, 4>& prefix, uint8_t depth, RouteTarget t) {
  if (depth < 1 || depth > 32 || !v4_tbl16_) return false;
  const uint32_t value = encode(t);
  if ((value & ~kValue) != 0) return false;
  const uint32_t host = uint32_t{prefix[0]} << 24 | uint32_t{prefix[1]} << 16 | uint32_t{prefix[2]} << 8 | prefix[3];
  const uint32_t ip = depth == 32 ? host : host & ~(0xFFFFFFFFu >> depth);
  const uint64_t key = uint64_t{ip} << 8 | depth;
  const auto at = std::lower_bound(v4_prefixes_.begin(), v4_prefixes_.end(), key);
  const bool is_new = at == v4_prefixes_.end() || *at != key;
  if (is_new && v4_prefixes_.size() >= v4_max_routes_) return false;  // full: nothing changes
  // Groups this prefix needs that do not exist yet (checked before any change).
  uint32_t need = 0;
  const uint32_t e16 = v4_tbl16_[ip >> 16];
  if (depth > 16 && (e16 & kExt) == 0) need += depth > 24 ? 2 : 1;
  if (depth > 24 && (e16 & kExt) != 0 && (v4_tbl8_[(e16 & kValue) * kGroupEntries + ((ip >> 8) & 0xFFu)] & kExt) == 0) ++need;
  if (v4_tbl8_.size() / kGroupEntries + need > v4_max_groups_) return false;
  if (is_new) v4_prefixes_.insert(at, key);
  const uint32_t entry = kValid | depth << 24 | value;
  if (depth <= 16) {
    fill4(&v4_tbl16_[ip >> 16], 1u << (16 - depth), entry);
    return true;
  }
  const uint32_t g2 = group_of(&v4_tbl16_[ip >> 16]);
  uint32_t* level2 = &v4_tbl8_[g2 * kGroupEntries];
  if (depth <= 24) {
    fill4(level2 + ((ip >> 8) & 0xFFu), 1u << (24 - depth), entry);
    return true;
  }
  const uint32_t g3 = group_of(level2 + ((ip >> 8) & 0xFFu));  // (capacity reserved: level2 stays valid)
  fill4(&v4_tbl8_[g3 * kGroupEntries] + (ip & 0xFFu), 1u << (32 - depth), entry);
  return true;
}

bool RouteTable::add_v6(const std::array<uint8_t, 16>& prefix, uint8_t depth, RouteTarget t) {
  if (depth < 1 || depth > 128 || v6_ == nullptr) return false;
  return rte_lpm6_add(v6_, prefix.data(), depth, encode(t)) == 0;
}

std::optional<RouteTarget> RouteTable::lookup_v4(const uint8_t* addr) const {
  const uint32_t host = uint32_t{addr[0]} << 24 | uint32_t{addr[1]} << 16 | uint32_t{addr[2]} << 8 | addr[3];
  if (!v4_tbl16_) return std::nullopt;
  const uint32_t e = lookup4(host);
  if ((e & kValid) == 0) return std::nullopt;
  return decode(e & kValue);
}

void RouteTable::lookup_v4_bulk(const uint32_t* ips, uint32_t n, std::optional<RouteTarget>* out) const {
  if (!v4_tbl16_) {
    for (uint32_t i = 0; i < n; ++i) out[i] = std::nullopt;
    return;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t e = lookup4(ips[i]);
    if ((e & kValid) == 0) {
      out[i] = std::nullopt;
    } else {
      out[i] = decode(e & kValue);
    }
  }
}

std::optional<RouteTarget> RouteTable::lookup_v6(const uint8_t* addr) const {
  uint32_t nh = 0;
  if (v6_ == nullptr || rte_lpm6_lookup(v6_, addr, &nh) != 0) return std::nullopt;
  return decode(nh);
}

const NextHop& RouteTable::resolve(RouteTarget t, uint32_t hash) const {
  if (!t.is_group) return next_hops_[t.id];
  const std::vector<uint32_t>& g = groups_[t.id];
  // Multiply-shift instead of modulo: uniform for any group size.
  const uint32_t i = static_cast<uint32_t>((uint64_t{hash} * g.size()) >> 32);
  return next_hops_[g[i]];
}

namespace {
constexpr uint32_t kFlowSeed = 0x5f3759dfu;
// Final avalanche (murmur3 fmix32): CRC alone leaves the low bits correlated.
uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}
}  // namespace

uint32_t flow_hash(std::span<const uint8_t> src_ip, std::span<const uint8_t> dst_ip, uint8_t proto,
                   uint16_t src_port, uint16_t dst_port) {
  uint32_t h = rte_hash_crc(src_ip.data(), static_cast<uint32_t>(src_ip.size()), kFlowSeed);
  h = rte_hash_crc(dst_ip.data(), static_cast<uint32_t>(dst_ip.size()), h);
  h = rte_hash_crc_4byte(uint32_t{proto} << 16 | src_port, h);
  h = rte_hash_crc_4byte(dst_port, h);
  return fmix32(h);
}

uint32_t flow_hash_v4(const uint8_t* src_ip, const uint8_t* dst_ip, uint8_t proto, uint16_t src_port,
                      uint16_t dst_port) {
  // rte_hash_crc() of 4 bytes is one rte_hash_crc_4byte() of them as loaded.
  uint32_t s, d;
  std::memcpy(&s, src_ip, 4);
  std::memcpy(&d, dst_ip, 4);
  uint32_t h = rte_hash_crc_4byte(s, kFlowSeed);
  h = rte_hash_crc_4byte(d, h);
  h = rte_hash_crc_4byte(uint32_t{proto} << 16 | src_port, h);
  h = rte_hash_crc_4byte(dst_port, h);
  return fmix32(h);
}

}  // namespace sf::sw
