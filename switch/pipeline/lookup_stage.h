// Receive stage B: the table lookups of a classified burst in bulk
// (docs/architecture.md "Switch pipeline"). Every L2 unicast destination of
// the burst from the FDB's lookup cache (Fdb::cached), those it does not
// hold in one Fdb::lookup_bulk (rte_hash_lookup_bulk; consecutive equal
// keys once, the results cached) and every IPv4 destination routed here in one
// RouteTable::lookup_v4_bulk (rte_lpm_lookup_bulk). Lookups have no side
// effects: stage C (SwitchNode::receive_stages) reads the results in arrival
// order and corrects the one thing it changes that stage B read, the FDB
// (learning), itself.
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <optional>

#include "switch/fwd/fdb.h"
#include "switch/fwd/route_table.h"
#include "switch/pipeline/classify_stage.h"

namespace sf::sw {

// The hand-off from stage B to stage C: lookup results by frame index.
struct LookupBurst {
  // L2 unicast destinations: fdb_port[i] the port of frame i. Keys the
  // FDB's cache does not hold (Fdb::cached) go to one lookup_bulk, each
  // run of equal keys once: keys[fdb_at[i]] for such a frame.
  std::array<int32_t, kRxStageBurst> fdb_port;
  std::array<const MacAddr*, kRxStageBurst> keys;
  std::array<uint16_t, kRxStageBurst> key_vlans;
  std::array<int32_t, kRxStageBurst> key_port;
  std::array<uint8_t, kRxStageBurst> fdb_at;
  std::array<uint8_t, kRxStageBurst> missed;  // frame indexes that went to the bulk lookup
  uint32_t n_keys = 0;
  uint32_t n_missed = 0;
  // IPv4 routes: route_at[i] indexes route.
  std::array<uint32_t, kRxStageBurst> dst4;
  std::array<uint8_t, kRxStageBurst> route_at;
  std::array<std::optional<RouteTarget>, kRxStageBurst> route;
  uint32_t n_dst4 = 0;

  // The FDB port of frame i (a kL2 frame to a unicast destination) as of the
  // lookup; -1: unknown.
  int32_t fdb(uint16_t i) const { return fdb_port[i]; }
  // The route of frame i (a kRoute4 frame); nullopt: none.
  const std::optional<RouteTarget>& route4(uint16_t i) const { return route[route_at[i]]; }
};

// Stage B over pkts[0, n) as classified in meta[0, n) (stage A).
[[gnu::always_inline]] inline void lookup_burst(const Fdb& fdb, const RouteTable& routes, rte_mbuf* const* pkts,
                                                const RxMeta* meta, uint16_t n, LookupBurst& b) {
  b.n_keys = 0;
  b.n_missed = 0;
  b.n_dst4 = 0;
  for (uint16_t i = 0; i < n; ++i) {
    const RxMeta& r = meta[i];
    const uint8_t* d = rte_pktmbuf_mtod(pkts[i], const uint8_t*);
    if (r.step == RxStep::kL2) {
      const auto* dst = reinterpret_cast<const MacAddr*>(d);
      if (((*dst)[0] & 1u) != 0) continue;  // multicast / broadcast: flood
      if (fdb.cached(Fdb::cache_key(*dst, r.vlan), b.fdb_port[i])) continue;
      if (b.n_keys == 0 || b.key_vlans[b.n_keys - 1] != r.vlan || !mac_eq(*b.keys[b.n_keys - 1], *dst)) {
        b.keys[b.n_keys] = dst;
        b.key_vlans[b.n_keys] = r.vlan;
        ++b.n_keys;
      }
      b.fdb_at[i] = static_cast<uint8_t>(b.n_keys - 1);
      b.missed[b.n_missed++] = static_cast<uint8_t>(i);
    } else if (r.step == RxStep::kRoute4) {
      const uint8_t* a = d + r.l3_offset + 16;  // destination address
      b.dst4[b.n_dst4] = uint32_t{a[0]} << 24 | uint32_t{a[1]} << 16 | uint32_t{a[2]} << 8 | a[3];
      b.route_at[i] = static_cast<uint8_t>(b.n_dst4++);
    }
  }
  if (b.n_keys != 0) {
    fdb.lookup_bulk(b.keys.data(), b.key_vlans.data(), b.n_keys, b.key_port.data());
    for (uint32_t k = 0; k < b.n_missed; ++k) {
      const uint8_t i = b.missed[k];
      b.fdb_port[i] = b.key_port[b.fdb_at[i]];
    }
  }
  if (b.n_dst4 != 0) routes.lookup_v4_bulk(b.dst4.data(), b.n_dst4, b.route.data());
}

}  // namespace sf::sw
