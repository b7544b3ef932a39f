// Receive stage B: the table lookups of a classified burst
// (docs/architecture.md "Switch pipeline"). Every L2 unicast destination of
// the burst from the FDB's lookup cache (Fdb::CacheView, probed frame by
// frame in stage A's loop: classify_lookup_burst), those it does not hold
// in one Fdb::lookup_bulk (rte_hash_lookup_bulk; consecutive equal keys
// once, the results cached) and every IPv4 destination routed here in one
// RouteTable::lookup_v4_bulk (rte_lpm_lookup_bulk). Lookups have no side
// effects: stage C (SwitchNode::receive_stages) reads the results in arrival
// order and corrects the one thing it changes that stage B read, the FDB
// (learning), itself.
#pragma once

#include <rte_mbuf.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "common/wire/frame_parser.h"
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

// Stage B, frame by frame, then in bulk: begin(), lookup_frame() for each
// frame i in order, then finish(). SwitchNode::receive_stages runs
// lookup_frame in stage A's loop, right after classifying the frame
// (classify_lookup_burst: the frame's bytes and RxMeta still in registers,
// one loop over the burst instead of two); lookup_burst is the same as a
// stage of its own. Nothing changes the FDB between the two stages, so the
// results are the same either way.
[[gnu::always_inline]] inline void lookup_begin(LookupBurst& b) {
  b.n_keys = 0;
  b.n_missed = 0;
  b.n_dst4 = 0;
}
// A kL2 unicast frame i whose key the cache does not hold: its key to the
// bulk lookup (a run of equal keys once).
[[gnu::always_inline]] inline void lookup_miss(const uint8_t* d, uint16_t vlan, uint16_t i, LookupBurst& b) {
  const auto* dst = reinterpret_cast<const MacAddr*>(d);
  if (b.n_keys == 0 || b.key_vlans[b.n_keys - 1] != vlan || !mac_eq(*b.keys[b.n_keys - 1], *dst)) {
    b.keys[b.n_keys] = dst;
    b.key_vlans[b.n_keys] = vlan;
    ++b.n_keys;
  }
  b.fdb_at[i] = static_cast<uint8_t>(b.n_keys - 1);
  b.missed[b.n_missed++] = static_cast<uint8_t>(i);
}
// A kRoute4 frame i, its IPv4 header at d + l3_offset: its destination to the bulk LPM.
[[gnu::always_inline]] inline void lookup_route4(const uint8_t* d, uint32_t l3_offset, uint16_t i, LookupBurst& b) {
  // The destination address, host order.
  b.dst4[b.n_dst4] = __builtin_bswap32(wire::detail::load_u32(d + l3_offset + 16));
  b.route_at[i] = static_cast<uint8_t>(b.n_dst4++);
}
// Frame i of the burst, `d` its data, `r` what stage A decided; `cache` the
// FDB's lookup cache (Fdb::cache_view, read at begin()).
[[gnu::always_inline]] inline void lookup_frame(const Fdb::CacheView& cache, const uint8_t* d, const RxMeta& r,
                                                uint16_t i, LookupBurst& b) {
  if (r.step == RxStep::kL2) {
    const uint64_t first8 = wire::detail::load_u64(d);  // the destination MAC and two bytes
    if ((first8 & 1u) != 0) return;  // multicast / broadcast: flood
    if (cache.cached(Fdb::cache_key_word(first8, r.vlan), b.fdb_port[i])) return;
    lookup_miss(d, r.vlan, i, b);
  } else if (r.step == RxStep::kRoute4) {
    lookup_route4(d, r.l3_offset, i, b);
  }
}
// The bulk lookups of what the cache did not answer, and of the routes.
[[gnu::always_inline]] inline void lookup_finish(const Fdb& fdb, const RouteTable& routes, LookupBurst& b) {
  if (b.n_keys != 0) {
    fdb.lookup_bulk(b.keys.data(), b.key_vlans.data(), b.n_keys, b.key_port.data());
    for (uint32_t k = 0; k < b.n_missed; ++k) {
      const uint8_t i = b.missed[k];
      b.fdb_port[i] = b.key_port[b.fdb_at[i]];
    }
  }
  if (b.n_dst4 != 0) routes.lookup_v4_bulk(b.dst4.data(), b.n_dst4, b.route.data());
}

// Stage B over pkts[0, n) as classified in meta[0, n) (stage A).
[[gnu::always_inline]] inline void lookup_burst(const Fdb& fdb, const RouteTable& routes, rte_mbuf* const* pkts,
                                                const RxMeta* meta, uint16_t n, LookupBurst& b) {
  lookup_begin(b);
  const Fdb::CacheView cache = fdb.cache_view();
  for (uint16_t i = 0; i < n; ++i) lookup_frame(cache, rte_pktmbuf_mtod(pkts[i], const uint8_t*), meta[i], i, b);
  lookup_finish(fdb, routes, b);
}

// A frame not of the straight shape: classify_general, then (unless kSlow:
// false) lookup_frame. Out of line, so that classify_lookup_straight's loop
// keeps what the straight frames use in registers.
// (Six arguments: all in registers; the cache view read again here.)
[[gnu::noinline]] inline bool classify_lookup_other(const ClassifyPort& port, const Fdb& fdb, const rte_mbuf* m,
                                                    uint16_t i, RxMeta& r, LookupBurst& b) {
  const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
  if (!classify_general(port, d, m->data_len, m->pkt_len, r)) return false;
  lookup_frame(fdb.cache_view(), d, r, i, b);
  return true;
}

// classify_lookup_burst's loop on a port without router interfaces and an
// FDB with a lookup cache: each frame of the straight shape
// (classify_v4_udp_word) looked up with what its classification left in
// registers (the step, VLAN kDefaultVlan, the frame's first eight bytes),
// the cache probed in one branch (Fdb::CacheView::probe), the port and the
// cache view read once a burst; any other frame out of line
// (classify_lookup_other), which also counts the kSlow ones.
[[gnu::always_inline]] inline ClassifyCounts classify_lookup_straight(const ClassifyPort& port, const Fdb& fdb,
                                                                      rte_mbuf* const* pkts, uint16_t n, RxMeta* meta,
                                                                      LookupBurst& b) {
  const Fdb::CacheView cache = fdb.cache_view();
  const uint64_t mac48 = wire::mac_word(port.mac);
  const uint32_t max_frame = port.max_frame_bytes;
  const PortQos& qos = port.qos;
  // Every frame's bytes, less those of the frames left to the slow path
  // (kSlow), counted on the out-of-line path only.
  uint64_t bytes = 0;
  uint32_t slow = 0;
  prefetch_first(pkts, n);
  for (uint16_t i = 0; i < n; ++i) {
    prefetch_ahead(pkts, i, n);
    const rte_mbuf* m = pkts[i];
    const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
    const uint32_t frame_bytes = m->pkt_len;
    const uint64_t lo = classify_v4_udp_word(qos, mac48, max_frame, d, m->data_len, frame_bytes);
    if (lo != 0) [[likely]] {
      meta[i].set(lo, kRxV4UdpOffset);
      bytes += frame_bytes;
      if (static_cast<RxStep>(lo & 0xFF) == RxStep::kL2) {
        const uint64_t first8 = wire::detail::load_u64(d);
        if ((first8 & 1u) == 0) [[likely]] {  // else multicast / broadcast: flood
          // (A miss's fdb_port[i] is set by lookup_finish.)
          if (!cache.probe(Fdb::cache_key_word(first8, kDefaultVlan), b.fdb_port[i])) [[unlikely]] {
            lookup_miss(d, kDefaultVlan, i, b);
          }
        }
      } else {
        lookup_route4(d, wire::EthHeader::kSize, i, b);
      }
      continue;
    }
    if (!classify_lookup_other(port, fdb, m, i, meta[i], b)) [[unlikely]] {
      ++slow;
      continue;
    }
    bytes += frame_bytes;
  }
  return ClassifyCounts{n - slow, bytes};
}

// Stages A and B over pkts[0, n), n <= kRxStageBurst, in one loop: each
// frame classified (classify_frame: meta[i]) and, unless kSlow, looked up
// (lookup_frame); then the bulk lookups (lookup_finish). Equal to
// classify_burst, then lookup_burst. Prefetches kRxPrefetchAhead frames ahead.
// Ports without router interfaces with a cached FDB (the common case):
// classify_lookup_straight.
[[gnu::always_inline]] inline ClassifyCounts classify_lookup_burst(const ClassifyPort& port, const Fdb& fdb,
                                                                   const RouteTable& routes, rte_mbuf* const* pkts,
                                                                   uint16_t n, RxMeta* meta, LookupBurst& b) {
  lookup_begin(b);
  const Fdb::CacheView cache = fdb.cache_view();
  ClassifyCounts c;
  if (port.rif == nullptr && cache.enabled()) [[likely]] {
    c = classify_lookup_straight(port, fdb, pkts, n, meta, b);
  } else {
    c = classify_each(port, pkts, n, meta,
                      [&](uint16_t i, const uint8_t* d, const RxMeta& r) { lookup_frame(cache, d, r, i, b); });
  }
  lookup_finish(fdb, routes, b);
  return c;
}

}  // namespace sf::sw
