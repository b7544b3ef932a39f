// Forwarding tables on real DPDK structures (EAL started by eal_env.cc):
// L2 learn / move / age, LPM v4 and v6, ECMP spread.
#include "switch/fwd/fdb.h"
#include "switch/fwd/route_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <random>
#include <vector>

namespace sf::sw {
namespace {

const MacAddr kA{0x02, 0, 0, 0, 0, 0xA};
const MacAddr kB{0x02, 0, 0, 0, 0, 0xB};

// 1. Learn on first sight, refresh on the same port, move to another port.
TEST(Fdb, LearnRefreshMove) {
  Fdb fdb(1024);
  EXPECT_FALSE(fdb.lookup(kA, 1).has_value());
  EXPECT_EQ(fdb.learn(kA, 1, 3, TimeNs(0)), LearnOutcome::kLearned);
  EXPECT_EQ(fdb.lookup(kA, 1), 3);
  EXPECT_FALSE(fdb.lookup(kA, 2).has_value());  // VLAN is part of the key
  EXPECT_EQ(fdb.learn(kA, 1, 3, TimeNs(5)), LearnOutcome::kRefreshed);
  EXPECT_EQ(fdb.learn(kA, 1, 4, TimeNs(6)), LearnOutcome::kMoved);
  EXPECT_EQ(fdb.lookup(kA, 1), 4);
  EXPECT_EQ(fdb.stats().moved, 1u);
}

// 2. Ageing removes learned entries idle for the ageing time, never static ones.
TEST(Fdb, AgeingSparesStaticAndFresh) {
  Fdb fdb(1024);
  ASSERT_TRUE(fdb.add_static(kB, 0, 7));
  fdb.learn(kA, 0, 1, TimeNs::from_s(0));
  EXPECT_EQ(fdb.age(TimeNs::from_s(299), TimeNs::from_s(300)), 0u);
  EXPECT_EQ(fdb.age(TimeNs::from_s(300), TimeNs::from_s(300)), 1u);
  EXPECT_FALSE(fdb.lookup(kA, 0).has_value());
  EXPECT_EQ(fdb.lookup(kB, 0), 7);
  // A static entry is not moved by a frame seen elsewhere.
  EXPECT_EQ(fdb.learn(kB, 0, 2, TimeNs::from_s(301)), LearnOutcome::kStaticConflict);
  EXPECT_EQ(fdb.lookup(kB, 0), 7);
  EXPECT_EQ(fdb.stats().static_conflict, 1u);
  // On its own port: nothing to do, nothing counted.
  EXPECT_EQ(fdb.learn(kB, 0, 7, TimeNs::from_s(302)), LearnOutcome::kStatic);
  EXPECT_EQ(fdb.stats().static_conflict, 1u);
}

// 3. A full table refuses and counts; nothing crashes.
TEST(Fdb, FullTableCounts) {
  Fdb fdb(8);
  int full = 0;
  for (int i = 0; i < 64; ++i) {
    const MacAddr m{0x02, 0, 0, 0, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
    full += fdb.learn(m, 0, 1, TimeNs(0)) == LearnOutcome::kTableFull;
  }
  EXPECT_GT(full, 0);
  EXPECT_EQ(fdb.stats().table_full, static_cast<uint64_t>(full));
  EXPECT_EQ(fdb.size() + static_cast<uint32_t>(full), 64u);
}

// 4. Longest prefix wins, IPv4 and IPv6; no route is nullopt.
TEST(RouteTable, LongestPrefixMatch) {
  RouteTable rt;
  const uint32_t nh1 = rt.add_next_hop({1, {}, {}});
  const uint32_t nh2 = rt.add_next_hop({2, {}, {}});
  ASSERT_TRUE(rt.add_v4({10, 0, 0, 0}, 8, {false, nh1}));
  ASSERT_TRUE(rt.add_v4({10, 1, 0, 0}, 16, {false, nh2}));
  const uint8_t a[4] = {10, 1, 2, 3};
  const uint8_t b[4] = {10, 2, 2, 3};
  const uint8_t c[4] = {11, 0, 0, 1};
  EXPECT_EQ(rt.lookup_v4(a), (RouteTarget{false, nh2}));
  EXPECT_EQ(rt.lookup_v4(b), (RouteTarget{false, nh1}));
  EXPECT_FALSE(rt.lookup_v4(c).has_value());

  std::array<uint8_t, 16> p{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_TRUE(rt.add_v6(p, 16, {false, nh1}));
  p[2] = 0x12;
  ASSERT_TRUE(rt.add_v6(p, 24, {false, nh2}));
  std::array<uint8_t, 16> x = p;
  x[15] = 1;
  EXPECT_EQ(rt.lookup_v6(x.data()), (RouteTarget{false, nh2}));
  x[2] = 0x13;
  EXPECT_EQ(rt.lookup_v6(x.data()), (RouteTarget{false, nh1}));
  x[0] = 0x20;
  EXPECT_FALSE(rt.lookup_v6(x.data()).has_value());
  EXPECT_FALSE(rt.add_v4({1, 2, 3, 4}, 0, {false, nh1}));
  EXPECT_FALSE(rt.add_v6(p, 129, {false, nh1}));
}

// 5. ECMP: 10k RoCEv2 flows that differ only in the UDP source port spread over
// a 4-member group within 10% of even; the same flow always takes one member.
TEST(RouteTable, EcmpSpreadsOnSourcePort) {
  RouteTable rt;
  std::array<uint32_t, 4> m{};
  for (uint16_t i = 0; i < 4; ++i) m[i] = rt.add_next_hop({i, {}, {}});
  const uint32_t g = rt.add_group(m);
  ASSERT_TRUE(rt.add_v4({10, 0, 0, 0}, 8, {true, g}));
  const uint8_t src[4] = {10, 0, 0, 1};
  const uint8_t dst[4] = {10, 0, 9, 9};
  std::map<uint16_t, int> count;
  const int flows = 10000;
  for (int i = 0; i < flows; ++i) {
    const uint16_t sport = static_cast<uint16_t>(0xC000 + i);
    const auto t = rt.lookup_v4(dst);
    ASSERT_TRUE(t.has_value());
    const uint32_t h = flow_hash(src, dst, 17, sport, 4791);
    const uint16_t port = rt.resolve(*t, h).port;
    ++count[port];
    ASSERT_EQ(rt.resolve(*t, flow_hash(src, dst, 17, sport, 4791)).port, port);
  }
  ASSERT_EQ(count.size(), 4u);
  for (auto [port, n] : count) EXPECT_NEAR(n, flows / 4, flows / 4 / 10) << "port " << port;
}

// 6. The IPv4 flow hash of the receive path equals the generic one (so ECMP
// choices do not depend on which path a frame took); bulk lookups equal
// single ones, hits and misses.
TEST(RouteTable, V4FastHashAndBulkLookupAgree) {
  uint32_t x = 12345;
  auto next = [&x] { return x = x * 1664525u + 1013904223u; };
  for (int i = 0; i < 2000; ++i) {
    const uint32_t a = next(), b = next(), c = next();
    const uint8_t src[4] = {uint8_t(a), uint8_t(a >> 8), uint8_t(a >> 16), uint8_t(a >> 24)};
    const uint8_t dst[4] = {uint8_t(b), uint8_t(b >> 8), uint8_t(b >> 16), uint8_t(b >> 24)};
    const auto proto = static_cast<uint8_t>(c);
    const auto sp = static_cast<uint16_t>(c >> 8), dp = static_cast<uint16_t>(c >> 16);
    ASSERT_EQ(flow_hash_v4(src, dst, proto, sp, dp), flow_hash(src, dst, proto, sp, dp)) << i;
  }
  RouteTable rt;
  const uint32_t nh1 = rt.add_next_hop({1, {}, {}});
  const uint32_t nh2 = rt.add_next_hop({2, {}, {}});
  ASSERT_TRUE(rt.add_v4({10, 0, 0, 0}, 8, {false, nh1}));
  ASSERT_TRUE(rt.add_v4({10, 1, 2, 0}, 28, {false, nh2}));
  std::array<uint32_t, RouteTable::kBulkMax> ips{};
  for (uint32_t i = 0; i < ips.size(); ++i) ips[i] = (i % 3 == 0 ? 0x0B000000u : 0x0A010200u) + i;
  std::array<std::optional<RouteTarget>, RouteTable::kBulkMax> got;
  rt.lookup_v4_bulk(ips.data(), static_cast<uint32_t>(ips.size()), got.data());
  for (uint32_t i = 0; i < ips.size(); ++i) {
    const uint8_t a[4] = {uint8_t(ips[i] >> 24), uint8_t(ips[i] >> 16), uint8_t(ips[i] >> 8), uint8_t(ips[i])};
    EXPECT_EQ(got[i], rt.lookup_v4(a)) << i;
  }
  EXPECT_EQ(got[1], (RouteTarget{false, nh2}));
  EXPECT_FALSE(got[0].has_value());
}

// 7. Bulk FDB lookups equal single ones (known, unknown, other VLAN).
TEST(Fdb, BulkLookupAgrees) {
  Fdb fdb(64);
  ASSERT_TRUE(fdb.add_static(kA, 0, 3));
  EXPECT_EQ(fdb.learn(kB, 5, 7, TimeNs(0)), LearnOutcome::kLearned);
  const MacAddr* macs[] = {&kA, &kB, &kB, &kA};
  const uint16_t vlans[] = {0, 5, 0, 5};
  int32_t ports[4];
  fdb.lookup_bulk(macs, vlans, 4, ports);
  EXPECT_EQ(ports[0], 3);
  EXPECT_EQ(ports[1], 7);
  EXPECT_EQ(ports[2], -1);
  EXPECT_EQ(ports[3], -1);
}

// 7b. The lookup cache (a single-writer Fdb) never answers other than the
// hash: random learns (refresh, move, static conflicts), removals, static
// adds, ageing, single / bulk lookups and cache probes over a few keys,
// against a concurrent-mode Fdb (no cache) given the same calls.
TEST(Fdb, LookupCacheEqualsTheHash) {
  Fdb fdb(256);
  Fdb ref(256, /*concurrent=*/true);
  std::mt19937 rng(7);
  std::vector<MacAddr> macs;
  for (uint8_t i = 0; i < 12; ++i) macs.push_back(MacAddr{0x02, 0, 0, 0, 0x10, i});
  int hits = 0;
  for (int it = 0; it < 20000; ++it) {
    const MacAddr& m = macs[rng() % macs.size()];
    const auto vlan = static_cast<uint16_t>(rng() % 2);
    const auto port = static_cast<uint16_t>(rng() % 3);
    const TimeNs now = TimeNs::from_ms(it);
    switch (rng() % 8) {
      case 0:
      case 1:
      case 2:
        ASSERT_EQ(fdb.learn(m, vlan, port, now), ref.learn(m, vlan, port, now)) << it;
        break;
      case 3:
        ASSERT_EQ(fdb.lookup(m, vlan), ref.lookup(m, vlan)) << it;
        break;
      case 4: {
        const MacAddr* keys[3] = {&m, &macs[rng() % macs.size()], &m};
        const uint16_t vlans[3] = {vlan, static_cast<uint16_t>(rng() % 2), static_cast<uint16_t>(vlan ^ 1)};
        int32_t a[3];
        int32_t b[3];
        fdb.lookup_bulk(keys, vlans, 3, a);
        ref.lookup_bulk(keys, vlans, 3, b);
        for (int k = 0; k < 3; ++k) ASSERT_EQ(a[k], b[k]) << it;
        break;
      }
      case 5: {
        // cache_key_word of the MAC's bytes and two more (a frame's first
        // eight) is cache_key; the CacheView answers as cached().
        std::array<uint8_t, 8> first8{};
        std::copy(m.begin(), m.end(), first8.begin());
        first8[6] = static_cast<uint8_t>(rng());
        first8[7] = static_cast<uint8_t>(rng());
        uint64_t w;
        std::memcpy(&w, first8.data(), 8);
        ASSERT_EQ(Fdb::cache_key_word(w, vlan), Fdb::cache_key(m, vlan));
        int32_t p = -2;
        int32_t q = -2;
        const bool in_view = fdb.cache_view().cached(Fdb::cache_key(m, vlan), q);
        ASSERT_EQ(in_view, fdb.cached(Fdb::cache_key(m, vlan), p)) << it;
        ASSERT_EQ(p, q) << it;
        // probe() (one branch; the port written either way) answers as
        // cached() when the FDB has a cache, with cached()'s port on a hit.
        if (fdb.cache_view().enabled()) {
          int32_t r = -2;
          ASSERT_EQ(fdb.cache_view().probe(Fdb::cache_key(m, vlan), r), in_view) << it;
          if (in_view) {
            ASSERT_EQ(r, q) << it;
          }
        }
        if (fdb.cached(Fdb::cache_key(m, vlan), p)) {
          ++hits;
          const auto want = ref.lookup(m, vlan);
          ASSERT_EQ(p, want ? int32_t{*want} : -1) << it;
        }
        break;
      }
      case 6:
        if (rng() % 4 == 0) {
          ASSERT_EQ(fdb.remove(m, vlan), ref.remove(m, vlan)) << it;
        } else if (rng() % 8 == 0) {
          ASSERT_EQ(fdb.add_static(m, vlan, port), ref.add_static(m, vlan, port)) << it;
        }
        break;
      default:
        if (rng() % 16 == 0) {
          ASSERT_EQ(fdb.age(now, TimeNs::from_ms(50)), ref.age(now, TimeNs::from_ms(50))) << it;
        }
        break;
    }
  }
  EXPECT_GT(hits, 100);  // the probes found the cache filled (234 with this seed)
  EXPECT_EQ(fdb.size(), ref.size());
  const FdbStats a = fdb.stats();
  const FdbStats b = ref.stats();
  EXPECT_EQ(a.learned, b.learned);
  EXPECT_EQ(a.moved, b.moved);
  EXPECT_EQ(a.aged, b.aged);
  EXPECT_EQ(a.static_conflict, b.static_conflict);
}

// 8. A table for a family without routes is never created: its lookups miss
// and adding to it fails (the switch sizes tables from the config).
TEST(RouteTable, NoTableWithoutRoutes) {
  RouteTable rt(route_limits_for(1, 0));
  const uint32_t nh = rt.add_next_hop({1, {}, {}});
  ASSERT_TRUE(rt.add_v4({10, 0, 0, 0}, 8, {false, nh}));
  std::array<uint8_t, 16> p{0xfd};
  EXPECT_FALSE(rt.add_v6(p, 16, {false, nh}));
  EXPECT_FALSE(rt.lookup_v6(p.data()).has_value());
  EXPECT_EQ(route_limits_for(0, 0).max_v4_routes, 0u);
  EXPECT_EQ(route_limits_for(3, 5000).max_v4_routes, kMinRoutes);
  EXPECT_EQ(route_limits_for(3, 5000).max_v6_routes, 5000u);
}

// 9. The IPv4 table (DIR-16-8-8, sized from the routes) answers as a
// longest-prefix scan over the routes: 2,000 random routes (depths 1-32,
// clustered in a few /8s so that prefixes nest), added in random order,
// some prefixes twice (the second value wins), then 200,000 lookups of
// addresses near the prefixes and random ones, single and bulk.
TEST(RouteTable, Ipv4MatchesLongestPrefixScan) {
  std::mt19937 rng(20261202);
  struct Route {
    uint32_t ip;
    uint32_t depth;
    uint32_t nh;
  };
  std::vector<Route> routes;
  const uint32_t eights[] = {10u << 24, 172u << 24, 192u << 24};
  const size_t n = 2000;
  RouteTable rt(route_limits_for(n, 0));
  for (uint32_t i = 0; i < 64; ++i) rt.add_next_hop({static_cast<uint16_t>(i), {}, {}});
  for (size_t i = 0; i < n; ++i) {
    const uint32_t depth = rng() % 4 == 0 ? 1 + rng() % 16 : 17 + rng() % 16;
    uint32_t ip = eights[rng() % 3] | (rng() & 0x00FFFFFFu);
    ip = depth == 32 ? ip : ip & ~(0xFFFFFFFFu >> depth);
    const uint32_t nh = rng() % 64;
    // A prefix already added gets a new value (a replacement, not a new route).
    routes.erase(std::remove_if(routes.begin(), routes.end(), [&](const Route& r) { return r.ip == ip && r.depth == depth; }),
                 routes.end());
    routes.push_back({ip, depth, nh});
    const std::array<uint8_t, 4> p{static_cast<uint8_t>(ip >> 24), static_cast<uint8_t>(ip >> 16), static_cast<uint8_t>(ip >> 8),
                                   static_cast<uint8_t>(ip)};
    ASSERT_TRUE(rt.add_v4(p, static_cast<uint8_t>(depth), {false, nh})) << i;
  }
  auto scan = [&](uint32_t ip) -> std::optional<uint32_t> {
    const Route* best = nullptr;
    for (const Route& r : routes) {
      const uint32_t mask = r.depth == 32 ? 0xFFFFFFFFu : ~(0xFFFFFFFFu >> r.depth);
      if ((ip & mask) == r.ip && (best == nullptr || r.depth > best->depth)) best = &r;
    }
    return best == nullptr ? std::nullopt : std::optional<uint32_t>(best->nh);
  };
  size_t hits = 0;
  std::array<uint32_t, RouteTable::kBulkMax> bulk{};
  for (int i = 0; i < 200000; ++i) {
    const Route& near = routes[rng() % routes.size()];
    const uint32_t ip = rng() % 3 == 0 ? static_cast<uint32_t>(rng()) : near.ip + (rng() % 3 == 0 ? rng() % 512 : rng() % 4);
    const std::array<uint8_t, 4> a{static_cast<uint8_t>(ip >> 24), static_cast<uint8_t>(ip >> 16), static_cast<uint8_t>(ip >> 8),
                                   static_cast<uint8_t>(ip)};
    const std::optional<uint32_t> want = scan(ip);
    const std::optional<RouteTarget> got = rt.lookup_v4(a.data());
    ASSERT_EQ(got.has_value(), want.has_value()) << std::hex << ip;
    if (want) {
      ASSERT_EQ(got->id, *want) << std::hex << ip;
      ++hits;
    }
    bulk[static_cast<size_t>(i) % bulk.size()] = ip;
    if (static_cast<size_t>(i) % bulk.size() == bulk.size() - 1) {
      std::array<std::optional<RouteTarget>, RouteTable::kBulkMax> out;
      rt.lookup_v4_bulk(bulk.data(), RouteTable::kBulkMax, out.data());
      for (size_t k = 0; k < bulk.size(); ++k) {
        const std::array<uint8_t, 4> b{static_cast<uint8_t>(bulk[k] >> 24), static_cast<uint8_t>(bulk[k] >> 16),
                                       static_cast<uint8_t>(bulk[k] >> 8), static_cast<uint8_t>(bulk[k])};
        ASSERT_EQ(out[k], rt.lookup_v4(b.data()));
      }
    }
  }
  EXPECT_GT(hits, 100000u);
}

// 10. A table holds the routes it was sized for and refuses more without a
// change: IPv4 and IPv6 sized for 1 route (room for kMinRoutes) take 64
// distinct prefixes, the 65th is refused and the table answers as before;
// a known prefix may still be replaced. Limits beyond kMaxRoutes are
// refused at creation.
TEST(RouteTable, RefusesRoutesBeyondItsSize) {
  RouteTable rt(route_limits_for(1, 1));
  const uint32_t a = rt.add_next_hop({1, {}, {}});
  const uint32_t b = rt.add_next_hop({2, {}, {}});
  for (uint32_t i = 0; i < kMinRoutes; ++i) {
    ASSERT_TRUE(rt.add_v4({10, 0, static_cast<uint8_t>(i), 7}, 32, {false, a})) << i;
    std::array<uint8_t, 16> p{0xfd, 0, static_cast<uint8_t>(i)};
    ASSERT_TRUE(rt.add_v6(p, 128, {false, a})) << i;
  }
  EXPECT_FALSE(rt.add_v4({10, 0, 200, 7}, 32, {false, b}));
  EXPECT_FALSE(rt.add_v4({11, 0, 0, 0}, 8, {false, b}));
  const std::array<uint8_t, 4> probe{10, 0, 200, 7};
  EXPECT_FALSE(rt.lookup_v4(probe.data()).has_value()) << "a refused route left no entry";
  std::array<uint8_t, 16> p6{0xfd, 0, 200};
  EXPECT_FALSE(rt.add_v6(p6, 128, {false, b}));
  EXPECT_TRUE(rt.add_v4({10, 0, 3, 7}, 32, {false, b}));  // a replacement, not a new route
  const std::array<uint8_t, 4> three{10, 0, 3, 7};
  EXPECT_EQ(rt.lookup_v4(three.data())->id, b);
  EXPECT_THROW(RouteTable(RouteTableLimits{kMaxRoutes + 1, 0, 0}), std::runtime_error);
  EXPECT_EQ(route_table_dpdk_bytes(route_limits_for(100, 0)), 0u) << "IPv4 takes no DPDK memory";
  EXPECT_LT(route_table_heap_bytes(route_limits_for(100, 0)), 1u << 20);
}

}  // namespace
}  // namespace sf::sw