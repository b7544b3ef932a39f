// The shared FDB of a sharded switch on real threads (EAL started by
// eal_env.cc): one lcore learns and moves MACs while another looks them up,
// as a shard's receive stage does while another shard learns. Built in the
// normal test run (suite dpdk) and under ThreadSanitizer (build-tsan, ./dev
// test): a lookup that reads a port not published with its key is a data race
// TSan reports, and a port the learner never gave is a failure here.
#include "switch/fwd/fdb.h"

#include <gtest/gtest.h>
#include <rte_lcore.h>

#include <array>
#include <atomic>
#include <thread>

namespace sf::sw {
namespace {

MacAddr mac_of(uint32_t set, uint32_t i) {
  return MacAddr{0x02, static_cast<uint8_t>(set), 0, static_cast<uint8_t>(i >> 16), static_cast<uint8_t>(i >> 8),
                 static_cast<uint8_t>(i)};
}

// Learned on port 7 and aged first, so the slots the race keys land in last
// held a port the race never uses: a lookup that reads a slot before the
// learner wrote it sees 7 (or the slot's initial 0).
constexpr uint16_t kOldPort = 7;
constexpr uint16_t kPortA = 1;
constexpr uint16_t kPortB = 2;

// One learner (learn, then move every MAC A -> B -> A ...) and one reader
// (lookup and lookup_bulk of the same MACs) at once. The learner starts once
// the reader reads and keeps moving until the reader has made several passes,
// so the two overlap however the threads are scheduled; the hand-shake is
// relaxed, so it orders nothing TSan could take for synchronisation. Expect:
// the reader sees each MAC unknown or on A or B, never another port; after
// the threads end every MAC is on the port of the learner's last move and
// the counters add up.
TEST(FdbRace, LookupNeverSeesAPortTheLearnerDidNotGive) {
  constexpr uint32_t kMacs = 1024;
  constexpr uint32_t kMinRounds = 7;  // learn + 6 moves at least
  constexpr uint64_t kMinPasses = 4;  // reader passes while the learner works
  Fdb fdb(2 * kMacs, /*concurrent=*/true);
  // Fill every slot the race keys can take with port 7, age it out and free
  // the slots (the second sweep frees the first sweep's deletions).
  ASSERT_EQ(rte_thread_register(), 0);
  for (uint32_t i = 0; i < 2 * kMacs; ++i) fdb.learn(mac_of(9, i), 0, kOldPort, TimeNs(0));
  const TimeNs ageing = TimeNs::from_s(300);
  ASSERT_EQ(fdb.age(ageing, ageing), 2 * kMacs);
  ASSERT_EQ(fdb.age(ageing, ageing), 0u);
  ASSERT_EQ(fdb.size(), 0u);

  std::atomic<bool> done{false};
  std::atomic<uint64_t> passes{0};
  std::atomic<uint64_t> wrong{0};
  std::atomic<uint64_t> seen{0};
  uint32_t rounds = 0;  // read after join
  std::thread learner([&] {
    ASSERT_EQ(rte_thread_register(), 0);  // rte_hash writers need an lcore id, as a shard has
    while (passes.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
    const uint64_t first = passes.load(std::memory_order_relaxed);
    while (rounds < kMinRounds || passes.load(std::memory_order_relaxed) < first + kMinPasses) {
      const uint16_t port = rounds % 2 == 0 ? kPortA : kPortB;
      for (uint32_t i = 0; i < kMacs; ++i) fdb.learn(mac_of(1, i), 0, port, ageing + TimeNs(rounds));
      ++rounds;
    }
    rte_thread_unregister();
    done.store(true, std::memory_order_release);
  });
  std::thread reader([&] {
    std::array<MacAddr, Fdb::kBulkMax> macs;
    std::array<const MacAddr*, Fdb::kBulkMax> ptrs;
    std::array<uint16_t, Fdb::kBulkMax> vlans{};
    std::array<int32_t, Fdb::kBulkMax> ports;
    uint64_t bad = 0;
    uint64_t hits = 0;
    while (!done.load(std::memory_order_acquire)) {
      for (uint32_t i = 0; i < kMacs; ++i) {
        const auto p = fdb.lookup(mac_of(1, i), 0);
        if (!p) continue;
        ++hits;
        bad += *p != kPortA && *p != kPortB;
      }
      for (uint32_t base = 0; base < kMacs; base += Fdb::kBulkMax) {
        for (uint32_t j = 0; j < Fdb::kBulkMax; ++j) {
          macs[j] = mac_of(1, base + j);
          ptrs[j] = &macs[j];
        }
        fdb.lookup_bulk(ptrs.data(), vlans.data(), Fdb::kBulkMax, ports.data());
        for (const int32_t p : ports) {
          if (p < 0) continue;
          ++hits;
          bad += p != kPortA && p != kPortB;
        }
      }
      passes.fetch_add(1, std::memory_order_relaxed);
    }
    wrong.store(bad);
    seen.store(hits);
  });
  learner.join();
  reader.join();
  EXPECT_EQ(wrong.load(), 0u) << "of " << seen.load() << " hits";
  EXPECT_GT(seen.load(), 0u);
  ASSERT_GE(rounds, kMinRounds);
  const uint16_t last = (rounds - 1) % 2 == 0 ? kPortA : kPortB;
  for (uint32_t i = 0; i < kMacs; ++i) ASSERT_EQ(fdb.lookup(mac_of(1, i), 0), last) << i;
  const FdbStats s = fdb.stats();
  EXPECT_EQ(s.learned, 2 * kMacs + kMacs);
  EXPECT_EQ(s.moved, uint64_t{rounds - 1} * kMacs);
  EXPECT_EQ(fdb.size(), kMacs);
  // Every race MAC was refreshed at ageing + rounds - 1: one ageing later they all go.
  EXPECT_EQ(fdb.age(ageing + ageing + TimeNs(rounds - 1), ageing), kMacs);
  EXPECT_EQ(fdb.size(), 0u);
  rte_thread_unregister();
}

// A learner and the ager at once (the first shard ages while the others
// learn): every MAC the learner refreshes after the sweep's cutoff survives,
// the table's count matches the MACs found, and nothing is aged twice.
TEST(FdbRace, AgerAndLearnerAtOnce) {
  constexpr uint32_t kMacs = 1024;
  Fdb fdb(2 * kMacs, /*concurrent=*/true);
  ASSERT_EQ(rte_thread_register(), 0);
  const TimeNs ageing = TimeNs::from_s(10);
  // Old entries (last seen at 0) the ager removes while the learner works on new ones.
  for (uint32_t i = 0; i < kMacs; ++i) fdb.learn(mac_of(2, i), 0, kOldPort, TimeNs(0));
  std::thread learner([&] {
    ASSERT_EQ(rte_thread_register(), 0);
    for (uint32_t i = 0; i < kMacs; ++i) fdb.learn(mac_of(3, i), 0, kPortA, ageing);
    rte_thread_unregister();
  });
  uint32_t aged = 0;
  for (int sweep = 0; sweep < 4; ++sweep) aged += fdb.age(ageing, ageing);
  learner.join();
  aged += fdb.age(ageing, ageing);
  EXPECT_EQ(aged, kMacs);
  EXPECT_EQ(fdb.stats().aged, kMacs);
  EXPECT_EQ(fdb.size(), kMacs);
  for (uint32_t i = 0; i < kMacs; ++i) {
    EXPECT_FALSE(fdb.lookup(mac_of(2, i), 0).has_value()) << i;
    ASSERT_EQ(fdb.lookup(mac_of(3, i), 0), kPortA) << i;
  }
  rte_thread_unregister();
}

}  // namespace
}  // namespace sf::sw
