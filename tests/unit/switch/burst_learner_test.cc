// BurstLearner (switch/pipeline/burst_learner.h) on its own against a real
// Fdb (rte_hash): the per-burst source / destination cache and the keys
// learned in a stage pass that correct stage B's bulk lookups.
#include "switch/pipeline/burst_learner.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <random>

namespace sf::sw {
namespace {

MacAddr mac(uint8_t last) { return {0x02, 0, 0, 0, 0x01, last}; }
constexpr uint16_t kVlan = kDefaultVlan;
const TimeNs kNow = TimeNs::from_us(5);

class BurstLearnerTest : public testing::Test {
 protected:
  void SetUp() override {
    fdb_ = std::make_unique<Fdb>(256);
    l2_.begin_burst();
    l2_.begin_pass();
  }
  std::unique_ptr<Fdb> fdb_;
  BurstLearner l2_;
};

TEST_F(BurstLearnerTest, AKeyLearnedInThePassOverridesTheBulkResult) {
  // Stage B found nothing for mac(1); a frame of the pass then came from it on port 4.
  EXPECT_EQ(l2_.dst_after_bulk(*fdb_, -1, mac(1), kVlan, 4), -1);
  l2_.learn(*fdb_, mac(1), kVlan, 4, kNow);
  EXPECT_EQ(fdb_->lookup(mac(1), kVlan), std::optional<uint16_t>(4));
  EXPECT_EQ(l2_.dst_after_bulk(*fdb_, -1, mac(1), kVlan, 4), 4);
  // Another VLAN is another key; the bulk result stands for keys not learned.
  EXPECT_EQ(l2_.dst_after_bulk(*fdb_, -1, mac(1), 7, 4), -1);
  EXPECT_EQ(l2_.dst_after_bulk(*fdb_, 2, mac(2), kVlan, 4), 2);
  // The next pass starts with no learned keys: stage B's result is current again.
  l2_.begin_pass();
  EXPECT_EQ(l2_.dst_after_bulk(*fdb_, 9, mac(1), kVlan, 4), 9);
}

TEST_F(BurstLearnerTest, AMovedKeyIsRecordedARefreshedOneIsNot) {
  ASSERT_EQ(fdb_->learn(mac(1), kVlan, 2, TimeNs(0)), LearnOutcome::kLearned);
  l2_.learn(*fdb_, mac(1), kVlan, 2, kNow);  // refreshed: stage B's port 2 was right
  EXPECT_EQ(l2_.dst_after_bulk(*fdb_, 2, mac(1), kVlan, 5), 2);
  l2_.learn(*fdb_, mac(1), kVlan, 5, kNow);  // moved to port 5 (the ingress port)
  EXPECT_EQ(l2_.dst_after_bulk(*fdb_, 2, mac(1), kVlan, 5), 5);
}

// A learn the FDB refuses (a static MAC seen on another port, a full table)
// is not the cached source: the next frame from it reaches the FDB and is
// counted again, as frame by frame; an accepted one is cached.
TEST_F(BurstLearnerTest, ARefusedLearnIsNotCached) {
  ASSERT_TRUE(fdb_->add_static(mac(1), kVlan, 7));
  l2_.learn(*fdb_, mac(1), kVlan, 2, kNow);
  EXPECT_FALSE(l2_.source_cached(Fdb::cache_key(mac(1), kVlan), 2));
  l2_.learn(*fdb_, mac(1), kVlan, 2, kNow);
  EXPECT_EQ(fdb_->stats().static_conflict, 2u);
  // On its own port the static entry is the cached source (nothing counted).
  l2_.learn(*fdb_, mac(1), kVlan, 7, kNow);
  EXPECT_TRUE(l2_.source_cached(Fdb::cache_key(mac(1), kVlan), 7));
  EXPECT_EQ(fdb_->stats().static_conflict, 2u);
  // A table of 16: fill it, then one more key twice.
  Fdb small(16);
  BurstLearner l2;
  l2.begin_burst();
  l2.begin_pass();
  for (uint8_t k = 10; small.stats().table_full == 0; ++k) l2.learn(small, mac(k), kVlan, 1, kNow);
  const uint64_t full = small.stats().table_full;
  l2.learn(small, mac(200), kVlan, 1, kNow);
  l2.learn(small, mac(200), kVlan, 1, kNow);
  EXPECT_EQ(small.stats().table_full, full + 2);
}

TEST_F(BurstLearnerTest, PastAPassOfNewKeysItLooksUpLive) {
  for (uint8_t k = 0; k <= kRxStageBurst; ++k) l2_.learn(*fdb_, mac(k), kVlan, 3, kNow);
  // The bulk result (here a stale 9) is not used: the live table answers.
  EXPECT_EQ(l2_.dst_after_bulk(*fdb_, 9, mac(0), kVlan, 3), 3);
  EXPECT_EQ(l2_.dst_after_bulk(*fdb_, 9, mac(200), kVlan, 3), -1);
}

TEST_F(BurstLearnerTest, DestinationCacheHoldsForTheBurstUntilALearn) {
  ASSERT_TRUE(fdb_->add_static(mac(1), kVlan, 1));
  EXPECT_EQ(l2_.lookup(*fdb_, mac(1), kVlan), std::optional<uint16_t>(1));
  EXPECT_EQ(l2_.lookup(*fdb_, mac(2), kVlan), std::nullopt);
  // mac(2) learned: a learn that adds a key drops the cached destination.
  l2_.learn(*fdb_, mac(2), kVlan, 6, kNow);
  EXPECT_EQ(l2_.lookup(*fdb_, mac(2), kVlan), std::optional<uint16_t>(6));
  // A change behind the learner's back (reset ages the table) is seen after begin_burst.
  ASSERT_TRUE(fdb_->remove(mac(2), kVlan));
  EXPECT_EQ(l2_.lookup(*fdb_, mac(2), kVlan), std::optional<uint16_t>(6));  // cached for the burst
  l2_.begin_burst();
  EXPECT_EQ(l2_.lookup(*fdb_, mac(2), kVlan), std::nullopt);
}

TEST_F(BurstLearnerTest, TheSourceJustLearnedIsNotLearnedAgain) {
  l2_.learn(*fdb_, mac(1), kVlan, 2, kNow);
  // The table forgets it; the cached source means the learner does not ask
  // again within the burst (what saves the per-frame learn) ...
  ASSERT_TRUE(fdb_->remove(mac(1), kVlan));
  l2_.learn(*fdb_, mac(1), kVlan, 2, kNow);
  EXPECT_EQ(fdb_->lookup(mac(1), kVlan), std::nullopt);
  // ... and does in the next burst.
  l2_.begin_burst();
  l2_.learn(*fdb_, mac(1), kVlan, 2, kNow);
  EXPECT_EQ(fdb_->lookup(mac(1), kVlan), std::optional<uint16_t>(2));
}

// learn_source (stage C: the key built from the frame's bytes, the
// multicast test after the cache check) against a multicast test, then
// learn(): random unicast and multicast sources, ports, VLANs and bursts on
// two Fdbs; the same table, stats and pass keys (dst_after_bulk) throughout.
TEST(BurstLearner, LearnSourceEqualsUnicastTestThenLearn) {
  Fdb fa(256);
  Fdb fb(256);
  BurstLearner a;
  BurstLearner b;
  std::mt19937 rng(33);
  for (int it = 0; it < 20000; ++it) {
    if (it % 40 == 0) {
      a.begin_burst();
      b.begin_burst();
    }
    if (it % 8 == 0) {
      a.begin_pass();
      b.begin_pass();
    }
    MacAddr m = mac(static_cast<uint8_t>(rng() % 6));
    if (rng() % 4 == 0) m[0] |= 1;  // multicast / broadcast source
    const auto vlan = static_cast<uint16_t>(1 + rng() % 2);
    const auto port = static_cast<uint16_t>(rng() % 3);
    const TimeNs now = TimeNs::from_us(it / 40);
    std::array<uint8_t, 8> bytes{};  // the frame's bytes 6-13: source MAC, then two more
    std::copy(m.begin(), m.end(), bytes.begin());
    bytes[6] = static_cast<uint8_t>(rng());
    bytes[7] = static_cast<uint8_t>(rng());
    uint64_t w;
    std::memcpy(&w, bytes.data(), 8);
    a.learn_source(fa, Fdb::cache_key_word(w, vlan), m, vlan, port, now);
    if ((m[0] & 1u) == 0) b.learn(fb, m, vlan, port, now);
    const MacAddr probe = mac(static_cast<uint8_t>(rng() % 6));
    ASSERT_EQ(fa.lookup(probe, vlan), fb.lookup(probe, vlan)) << it;
    ASSERT_EQ(a.dst_after_bulk(fa, -1, probe, vlan, 9), b.dst_after_bulk(fb, -1, probe, vlan, 9)) << it;
  }
  EXPECT_EQ(fa.size(), fb.size());
  EXPECT_EQ(fa.stats().learned, fb.stats().learned);
  EXPECT_EQ(fa.stats().moved, fb.stats().moved);
}

}  // namespace
}  // namespace sf::sw
