// BurstLearner (switch/pipeline/burst_learner.h) on its own against a real
// Fdb (rte_hash): the per-burst source / destination cache and the keys
// learned in a stage pass that correct stage B's bulk lookups.
#include "switch/pipeline/burst_learner.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>

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

}  // namespace
}  // namespace sf::sw
