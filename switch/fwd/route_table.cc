// LPM routes, next hops and ECMP groups. See route_table.h.
#include "switch/fwd/route_table.h"

#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

namespace sf::sw {
namespace {
std::atomic<uint32_t> g_instance{0};
}  // namespace

RouteTableLimits route_limits_for(size_t v4, size_t v6) {
  auto room = [](size_t n) { return n == 0 ? 0u : static_cast<uint32_t>(std::max<size_t>(n, kMinRoutes)); };
  return {room(v4), room(v6)};
}

RouteTable::RouteTable(const RouteTableLimits& limits) {
  const std::string id = std::to_string(g_instance.fetch_add(1));
  if (limits.max_v4_routes != 0) {
    const std::string n4 = "sf_lpm4_" + id;
    rte_lpm_config c4{};
    c4.max_rules = limits.max_v4_routes;
    c4.number_tbl8s = 256;
    v4_ = rte_lpm_create(n4.c_str(), SOCKET_ID_ANY, &c4);
    if (v4_ == nullptr) throw std::runtime_error("routes: rte_lpm_create: " + std::string(rte_strerror(rte_errno)));
  }
  if (limits.max_v6_routes != 0) {
    const std::string n6 = "sf_lpm6_" + id;
    rte_lpm6_config c6{};
    c6.max_rules = limits.max_v6_routes;
    c6.number_tbl8s = 1 << 12;
    v6_ = rte_lpm6_create(n6.c_str(), SOCKET_ID_ANY, &c6);
    if (v6_ == nullptr) {
      rte_lpm_free(v4_);
      throw std::runtime_error("routes: rte_lpm6_create: " + std::string(rte_strerror(rte_errno)));
    }
  }
}

RouteTable::~RouteTable() {
  if (v4_ != nullptr) rte_lpm_free(v4_);
  if (v6_ != nullptr) rte_lpm6_free(v6_);
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

bool RouteTable::add_v4(const std::array<uint8_t, 4>& prefix, uint8_t depth, RouteTarget t) {
  if (depth < 1 || depth > 32 || v4_ == nullptr) return false;
  const uint32_t host = uint32_t{prefix[0]} << 24 | uint32_t{prefix[1]} << 16 | uint32_t{prefix[2]} << 8 | prefix[3];
  return rte_lpm_add(v4_, host, depth, encode(t)) == 0;
}

bool RouteTable::add_v6(const std::array<uint8_t, 16>& prefix, uint8_t depth, RouteTarget t) {
  if (depth < 1 || depth > 128 || v6_ == nullptr) return false;
  return rte_lpm6_add(v6_, prefix.data(), depth, encode(t)) == 0;
}

std::optional<RouteTarget> RouteTable::lookup_v4(const uint8_t* addr) const {
  const uint32_t host = uint32_t{addr[0]} << 24 | uint32_t{addr[1]} << 16 | uint32_t{addr[2]} << 8 | addr[3];
  uint32_t nh = 0;
  if (v4_ == nullptr || rte_lpm_lookup(v4_, host, &nh) != 0) return std::nullopt;
  return decode(nh);
}

void RouteTable::lookup_v4_bulk(const uint32_t* ips, uint32_t n, std::optional<RouteTarget>* out) const {
  if (v4_ == nullptr) {
    for (uint32_t i = 0; i < n; ++i) out[i] = std::nullopt;
    return;
  }
  uint32_t hops[kBulkMax];
  rte_lpm_lookup_bulk(v4_, ips, hops, n);
  for (uint32_t i = 0; i < n; ++i) {
    if ((hops[i] & RTE_LPM_LOOKUP_SUCCESS) == 0) {
      out[i] = std::nullopt;
    } else {
      out[i] = decode(hops[i] & 0x00FFFFFFu);
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
