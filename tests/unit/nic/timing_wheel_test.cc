// The Carousel timing wheel as pure logic: exact departure order and times,
// same-slot ordering, past times due at once, entries beyond the horizon,
// removal and moves.
#include <gtest/gtest.h>

#include <vector>

#include "nic/host/timing_wheel.h"

namespace sf::nic {
namespace {

// 1. Entries leave in time order, each exactly when due and not before.
TEST(TimingWheel, ExactOrderAndTimes) {
  TimingWheel w(8, TimeNs(100), 16);
  w.insert(3, TimeNs(550));
  w.insert(1, TimeNs(120));
  w.insert(2, TimeNs(199));  // same slot as id 1, later
  EXPECT_EQ(w.next_time(), TimeNs(120));
  uint32_t id = 99;
  EXPECT_FALSE(w.pop_due(TimeNs(119), &id));
  ASSERT_TRUE(w.pop_due(TimeNs(120), &id));
  EXPECT_EQ(id, 1u);
  EXPECT_EQ(w.next_time(), TimeNs(199));
  EXPECT_FALSE(w.pop_due(TimeNs(198), &id));
  ASSERT_TRUE(w.pop_due(TimeNs(199), &id));
  EXPECT_EQ(id, 2u);
  EXPECT_FALSE(w.pop_due(TimeNs(549), &id));
  ASSERT_TRUE(w.pop_due(TimeNs(1000), &id));  // late poll: still delivered
  EXPECT_EQ(id, 3u);
  EXPECT_EQ(w.size(), 0u);
  EXPECT_EQ(w.next_time(), TimeNs::max());
}

// 2. A time before the cursor is due at once; a far-future time beyond the
//    horizon (16 x 100 ns) waits in the overflow and still leaves exactly.
TEST(TimingWheel, PastAndBeyondHorizon) {
  TimingWheel w(8, TimeNs(100), 16);
  uint32_t id = 0;
  w.insert(0, TimeNs(1000));
  ASSERT_TRUE(w.pop_due(TimeNs(1000), &id));
  w.insert(4, TimeNs(500));  // before the cursor (slot of 1000)
  ASSERT_TRUE(w.pop_due(TimeNs(1000), &id));
  EXPECT_EQ(id, 4u);
  w.insert(5, TimeNs(1000 + 5000));  // 50 slots ahead
  w.insert(6, TimeNs(1000 + 300));
  EXPECT_EQ(w.next_time(), TimeNs(1300));
  ASSERT_TRUE(w.pop_due(TimeNs(1300), &id));
  EXPECT_EQ(id, 6u);
  EXPECT_EQ(w.next_time(), TimeNs(6000));
  EXPECT_FALSE(w.pop_due(TimeNs(3000), &id));
  EXPECT_FALSE(w.pop_due(TimeNs(5999), &id));
  ASSERT_TRUE(w.pop_due(TimeNs(6000), &id));
  EXPECT_EQ(id, 5u);
}

// 3. Wrapping the wheel many times with one entry re-filed per pop (a paced
//    QP): every departure at exactly previous + gap.
TEST(TimingWheel, PacedEntryWrapsExactly) {
  TimingWheel w(4, TimeNs(64), 8);
  TimeNs t(0);
  const TimeNs gap(337);
  w.insert(2, t);
  for (int i = 0; i < 1000; ++i) {
    uint32_t id = 0;
    ASSERT_EQ(w.next_time(), t);
    ASSERT_FALSE(w.pop_due(t - TimeNs(1), &id));
    ASSERT_TRUE(w.pop_due(t, &id));
    ASSERT_EQ(id, 2u);
    t += gap;
    w.insert(2, t);
  }
}

// 4. remove() and re-insert (move) keep the wheel consistent.
TEST(TimingWheel, RemoveAndMove) {
  TimingWheel w(4, TimeNs(10), 4);
  w.insert(0, TimeNs(15));
  w.insert(1, TimeNs(25));
  w.remove(0);
  EXPECT_FALSE(w.contains(0));
  EXPECT_EQ(w.next_time(), TimeNs(25));
  w.insert(1, TimeNs(5));  // moved earlier
  EXPECT_EQ(w.size(), 1u);
  uint32_t id = 9;
  ASSERT_TRUE(w.pop_due(TimeNs(5), &id));
  EXPECT_EQ(id, 1u);
  EXPECT_EQ(w.size(), 0u);
  w.insert(7, TimeNs(1));  // out of capacity: ignored
  EXPECT_EQ(w.size(), 0u);
}


// 5. Moving the earliest entry later: next_time() follows it (no stale
//    earliest time), and many far-future entries migrate in when due.
TEST(TimingWheel, MoveEarliestLaterAndManyOverflow) {
  TimingWheel w(64, TimeNs(10), 8);
  w.insert(0, TimeNs(20));
  w.insert(1, TimeNs(50));
  EXPECT_EQ(w.next_time(), TimeNs(20));
  w.insert(0, TimeNs(70));
  EXPECT_EQ(w.next_time(), TimeNs(50));
  for (uint32_t i = 2; i < 64; ++i) w.insert(i, TimeNs(1000 + 37 * i));
  uint32_t id = 0;
  ASSERT_TRUE(w.pop_due(TimeNs(50), &id));
  EXPECT_EQ(id, 1u);
  ASSERT_TRUE(w.pop_due(TimeNs(70), &id));
  EXPECT_EQ(id, 0u);
  for (uint32_t i = 2; i < 64; ++i) {
    const TimeNs t(1000 + 37 * i);
    EXPECT_EQ(w.next_time(), t);
    EXPECT_FALSE(w.pop_due(t - TimeNs(1), &id));
    ASSERT_TRUE(w.pop_due(t, &id));
    EXPECT_EQ(id, i);
  }
}

// 6. Random inserts, moves, removes and polls at jumping times (within a
//    slot, across many slots, past the whole horizon, wrapping) on wheels of
//    4, 64, 128 and 6 (rounded up to 8) slots, against a brute-force list of
//    (time, id). Expect: next_time() and pop_due() agree with the brute force
//    at every step (the occupied-slot bitmap skips nothing that is due).
TEST(TimingWheel, MatchesABruteForceQueue) {
  for (const uint32_t slots : {4u, 64u, 128u, 6u}) {
    constexpr uint32_t kIds = 40;
    TimingWheel w(kIds, TimeNs(16), slots);
    std::vector<int64_t> at(kIds, -1);  // -1: absent
    uint64_t x = 0x2545F4914F6CDD1Dull + slots;
    auto rnd = [&](uint64_t mod) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      return x % mod;
    };
    int64_t now = 0;
    for (int step = 0; step < 20000; ++step) {
      const uint64_t op = rnd(10);
      if (op < 4) {
        const auto id = static_cast<uint32_t>(rnd(kIds));
        const int64_t t = now + static_cast<int64_t>(rnd(4)) * static_cast<int64_t>(rnd(3000)) - 20;
        w.insert(id, TimeNs(t));
        at[id] = t;
      } else if (op == 4) {
        const auto id = static_cast<uint32_t>(rnd(kIds));
        w.remove(id);
        at[id] = -1;
      } else {
        const uint64_t jump = rnd(4);
        now += jump == 0 ? 0 : jump == 1 ? static_cast<int64_t>(rnd(16)) : jump == 2 ? static_cast<int64_t>(rnd(400))
                                                                                  : static_cast<int64_t>(rnd(5000));
        // Brute force: the earliest present entry (ties: smallest id).
        int64_t best_t = INT64_MAX;
        uint32_t best = kIds;
        for (uint32_t i = 0; i < kIds; ++i) {
          if (at[i] >= 0 && at[i] < best_t) {
            best_t = at[i];
            best = i;
          }
        }
        // Entries inserted in the past are due at once but keep their time.
        ASSERT_EQ(w.next_time(), best == kIds ? TimeNs::max() : TimeNs(best_t)) << slots << " step " << step;
        uint32_t id = 0;
        const bool due = w.pop_due(TimeNs(now), &id);
        ASSERT_EQ(due, best != kIds && best_t <= now) << slots << " step " << step;
        if (due) {
          ASSERT_LE(at[id], now);
          at[id] = -1;
        }
      }
    }
  }
}

}  // namespace
}  // namespace sf::nic
