// Unit tests of WRED/ECN marking and the strict + DWRR scheduler.
#include "switch/qos/scheduler.h"
#include "switch/qos/wred.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace sf::sw {
namespace {

const WredConfig kSeedP3{true, false, 122880, 368640, 0.20};  // seed 000 static profile

// 1. Probability curve: 0 up to Kmin, linear to Pmax at Kmax, 1 above.
TEST(Wred, ProbabilityPerFormula) {
  const Wred w(kSeedP3);
  EXPECT_EQ(w.probability(0), 0.0);
  EXPECT_EQ(w.probability(122880), 0.0);
  EXPECT_NEAR(w.probability((122880 + 368640) / 2), 0.10, 1e-12);
  EXPECT_EQ(w.probability(368640), 1.0);
  EXPECT_EQ(w.probability(10 << 20), 1.0);
}

// 2. Marking frequency within statistical bounds (binomial, 5 sigma).
TEST(Wred, MarkingFrequencyMatchesProbability) {
  const Wred w(kSeedP3);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (uint64_t q : {130000ull, 200000ull, 300000ull, 360000ull}) {
    const double p = w.probability(q);
    const int n = 200000;
    int marks = 0;
    for (int i = 0; i < n; ++i) marks += w.decide(q, true, u(rng)) == EcnAction::kMark;
    const double sigma = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(marks, n * p, 5 * sigma + 1) << "q=" << q;
  }
}

// 3. Non-ECT packets are never marked: passed, or dropped where WRED dropping is on.
TEST(Wred, NonEctNeverMarked) {
  WredConfig c = kSeedP3;
  EXPECT_EQ(Wred(c).decide(400000, false, 0.0), EcnAction::kPass);
  c.wred_drop = true;
  EXPECT_EQ(Wred(c).decide(400000, false, 0.0), EcnAction::kDrop);
  EXPECT_EQ(Wred(c).decide(400000, true, 0.0), EcnAction::kMark);
  EXPECT_EQ(Wred(c).decide(100000, true, 0.0), EcnAction::kPass);
}

std::array<QueueSchedConfig, kSchedQueues> dwrr(std::array<uint32_t, 8> w) {
  std::array<QueueSchedConfig, kSchedQueues> c{};
  for (int q = 0; q < 8; ++q) c[q] = {SchedType::kDwrr, w[q], 0};
  return c;
}

// 4. DWRR byte shares within 2% of the weights under backlog, random sizes.
TEST(Scheduler, DwrrSharesWithinTwoPercent) {
  PortScheduler s(dwrr({40, 30, 0, 25, 5, 0, 0, 0}));
  std::mt19937 rng(3);
  std::array<uint32_t, 8> head{};
  for (int q : {0, 1, 3, 4}) head[q] = 64 + rng() % 9152;
  std::array<uint64_t, 8> sent{};
  uint64_t total = 0;
  while (total < 2'000'000'000ull) {
    const int q = s.pick(head, 0xFF);
    ASSERT_GE(q, 0);
    sent[q] += head[q];
    total += head[q];
    head[q] = 64 + rng() % 9152;
  }
  const double wsum = 100;
  for (auto [q, w] : {std::pair{0, 40}, {1, 30}, {3, 25}, {4, 5}}) {
    const double share = static_cast<double>(sent[q]) / static_cast<double>(total);
    EXPECT_NEAR(share, w / wsum, 0.02 * w / wsum) << "queue " << q;
  }
}

// 5. Strict queues go first, by priority; paused queues are skipped.
TEST(Scheduler, StrictFirstAndPausedSkipped) {
  auto c = dwrr({1, 1, 1, 1, 1, 1, 1, 1});
  c[6] = {SchedType::kStrict, 1, 5};
  c[7] = {SchedType::kStrict, 1, 2};
  PortScheduler s(c);
  std::array<uint32_t, 8> head{100, 0, 0, 100, 0, 0, 100, 100};
  EXPECT_EQ(s.pick(head, 0xFF), 6);                       // priority 5 beats 2
  EXPECT_EQ(s.pick(head, static_cast<uint8_t>(~(1u << 6))), 7);
  const int q = s.pick(head, static_cast<uint8_t>(~(3u << 6)));
  EXPECT_TRUE(q == 0 || q == 3);
  EXPECT_EQ(s.pick(head, 0x00), -1);                     // all paused
  head = {};
  EXPECT_EQ(s.pick(head, 0xFF), -1);                     // all empty
}

// 6. A paused DWRR queue does not stall the others and resumes its share later.
TEST(Scheduler, PausedDwrrQueueResumes) {
  PortScheduler s(dwrr({1, 1, 0, 0, 0, 0, 0, 0}));
  std::array<uint32_t, 8> head{1000, 1000, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 50; ++i) EXPECT_EQ(s.pick(head, 0b10), 1);
  int zero = 0;
  for (int i = 0; i < 200; ++i) zero += s.pick(head, 0xFF) == 0;
  EXPECT_NEAR(zero, 100, 10);
}

}  // namespace
}  // namespace sf::sw
