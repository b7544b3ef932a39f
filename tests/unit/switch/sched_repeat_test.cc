// PortScheduler::repeat (the transmit loop's shortcut while one queue goes
// on) against pick(): two schedulers of one random config serve the same
// random queues, one calling pick() for every packet, the other repeat()
// first after each pick and pick() only when repeat() says no.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <deque>
#include <random>
#include <vector>

#include "switch/qos/scheduler.h"

namespace sf::sw {
namespace {

// A random mix of strict and DWRR queues (weights 1-4, priorities 0-3).
std::array<QueueSchedConfig, kSchedQueues> random_config(std::mt19937& rng) {
  std::array<QueueSchedConfig, kSchedQueues> cfg{};
  for (auto& c : cfg) {
    c.type = rng() % 3 == 0 ? SchedType::kStrict : SchedType::kDwrr;
    c.weight = 1 + rng() % 4;
    c.priority = rng() % 4;
  }
  return cfg;
}

// 1. Random strict / DWRR mixes (weights 1..4, priorities 0..3), random
// packet sizes, random paused queues per transmit call, random arrivals
// between calls. Expect: the same queue for every packet, and repeat()
// taking a good part of the packets.
TEST(SchedulerRepeat, SameOrderAsPick) {
  std::mt19937 rng(31337);
  uint64_t repeated = 0;
  uint64_t sent = 0;
  for (int round = 0; round < 200; ++round) {
    const std::array<QueueSchedConfig, kSchedQueues> cfg = random_config(rng);
    PortScheduler ref(cfg);
    PortScheduler fast(cfg);
    std::array<std::deque<uint32_t>, kSchedQueues> queues;
    auto heads = [&] {
      std::array<uint32_t, kSchedQueues> h{};
      for (int q = 0; q < kSchedQueues; ++q) h[q] = queues[q].empty() ? 0 : queues[q].front();
      return h;
    };
    for (int call = 0; call < 200; ++call) {
      for (int a = 0; a < static_cast<int>(rng() % 40); ++a) {
        queues[rng() % kSchedQueues].push_back(rng() % 4 == 0 ? 64 + rng() % 9000 : 64 + rng() % 200);
      }
      const auto eligible = static_cast<uint8_t>(rng() % 4 == 0 ? rng() : 0xFF);
      std::array<uint32_t, kSchedQueues> head = heads();
      int last = -1;
      for (int budget = static_cast<int>(rng() % 64); budget > 0; --budget) {
        const int want = ref.pick(head, eligible);
        int got;
        if (last >= 0 && fast.repeat(last, head[last])) {
          got = last;
          ++repeated;
        } else {
          got = fast.pick(head, eligible);
        }
        ASSERT_EQ(got, want) << "round " << round << " call " << call;
        if (want < 0) break;
        last = got;
        queues[want].pop_front();
        head[want] = queues[want].empty() ? 0 : queues[want].front();
        ++sent;
      }
    }
  }
  EXPECT_GT(repeated, sent / 4);
}

// 2. idle_picks(n) (a driver skipping an idle port's offers) leaves the
// scheduler as n pick() calls over empty queues do: after random traffic has
// left deficits and a turn anywhere, n = 0..20 empty picks on one copy and
// idle_picks(n) on the other, then the same random backlog: the same queue
// for every packet. Skipped picks move the DWRR turn, so with 2+ backlogged
// DWRR queues a wrong count shows as another order.
TEST(SchedulerRepeat, IdlePicksEqualEmptyPicks) {
  std::mt19937 rng(4242);
  size_t orders_differ = 0;  // n vs n + 1 skipped picks: the turn matters
  for (int round = 0; round < 300; ++round) {
    std::array<QueueSchedConfig, kSchedQueues> cfg{};
    for (auto& c : cfg) {
      c.type = rng() % 4 == 0 ? SchedType::kStrict : SchedType::kDwrr;
      c.weight = 1 + rng() % 4;
    }
    PortScheduler a(cfg);
    std::array<uint32_t, kSchedQueues> head{};
    for (int i = 0; i < static_cast<int>(rng() % 30); ++i) {
      head.fill(0);
      for (int q = 0; q < kSchedQueues; ++q) head[q] = rng() % 2 ? 64 + rng() % 9000 : 0;
      a.pick(head, 0xFF);
    }
    const std::array<uint32_t, kSchedQueues> none{};
    a.pick(none, 0xFF);  // the port went idle: one empty pick (the offer that found nothing)
    const auto n = static_cast<uint64_t>(rng() % 21);
    PortScheduler b = a;
    PortScheduler c = a;
    for (uint64_t i = 0; i < n; ++i) a.pick(none, 0xFF);
    b.idle_picks(n);
    c.idle_picks(n + 1);
    for (int q = 0; q < kSchedQueues; ++q) head[q] = 64 + rng() % 9000;
    bool differ = false;
    for (int k = 0; k < 24; ++k) {
      const int want = a.pick(head, 0xFF);
      ASSERT_EQ(b.pick(head, 0xFF), want) << "round " << round << " n " << n << " packet " << k;
      differ = differ || c.pick(head, 0xFF) != want;
      head[want] = 64 + rng() % 9000;
    }
    orders_differ += differ ? 1 : 0;
  }
  EXPECT_GT(orders_differ, 10u) << "one skipped pick more should often change the order";
}

// repeat_budget / repeat_settle (tx_run's deficit in a local) against
// repeat() head by head: random strict / DWRR configs after a random pick,
// random runs of heads. Expect: the same heads taken, the same schedule
// afterwards (the next picks agree).
TEST(SchedulerRepeat, BudgetEqualsRepeatHeadByHead) {
  std::mt19937 rng(4242);
  for (int round = 0; round < 2000; ++round) {
    const std::array<QueueSchedConfig, kSchedQueues> cfg = random_config(rng);
    PortScheduler ref(cfg);
    PortScheduler fast(cfg);
    std::array<uint32_t, kSchedQueues> head{};
    for (auto& h : head) h = rng() % 3 == 0 ? 0 : 64 + rng() % 9000;
    const int q = ref.pick(head, 0xFF);
    ASSERT_EQ(fast.pick(head, 0xFF), q);
    if (q < 0) continue;
    std::vector<uint32_t> run;
    for (int i = 0; i < static_cast<int>(rng() % 40); ++i) run.push_back(64 + rng() % 9000);
    size_t by_ref = 0;
    while (by_ref < run.size() && ref.repeat(q, run[by_ref])) ++by_ref;
    int64_t budget = fast.repeat_budget(q);
    size_t by_budget = 0;
    while (by_budget < run.size() && budget >= int64_t{run[by_budget]}) budget -= run[by_budget++];
    fast.repeat_settle(q, budget);
    ASSERT_EQ(by_budget, by_ref) << round;
    for (int k = 0; k < 20; ++k) {
      for (auto& h : head) h = rng() % 3 == 0 ? 0 : 64 + rng() % 9000;
      ASSERT_EQ(fast.pick(head, 0xFF), ref.pick(head, 0xFF)) << round << " " << k;
    }
  }
}

// The scheduler as it was written first: strict queues, then DWRR visiting the
// queues one by one, 2 x 8 + 1 visits at most (the reference for pick()).
class ReferenceScheduler {
 public:
  explicit ReferenceScheduler(const std::array<QueueSchedConfig, kSchedQueues>& cfg) : cfg_(cfg) {
    for (int q = 0; q < kSchedQueues; ++q) {
      if (cfg_[q].type == SchedType::kStrict) strict_.push_back(q);
    }
    std::stable_sort(strict_.begin(), strict_.end(), [&](int a, int b) {
      if (cfg_[a].priority != cfg_[b].priority) return cfg_[a].priority > cfg_[b].priority;
      return a > b;
    });
  }
  int pick(const std::array<uint32_t, kSchedQueues>& head, uint8_t eligible) {
    for (int q : strict_) {
      if (head[q] != 0 && (eligible >> q & 1u)) return q;
    }
    for (int visits = 0; visits < 2 * kSchedQueues + 1; ++visits) {
      const int q = rr_;
      if (cfg_[q].type == SchedType::kDwrr && head[q] != 0 && (eligible >> q & 1u)) {
        if (fresh_) {
          deficit_[q] += int64_t{cfg_[q].weight} * kDwrrQuantumBytes;
          fresh_ = false;
        }
        if (deficit_[q] >= head[q]) {
          deficit_[q] -= head[q];
          return q;
        }
      } else {
        deficit_[q] = 0;
      }
      rr_ = (rr_ + 1) % kSchedQueues;
      fresh_ = true;
    }
    return -1;
  }

 private:
  std::array<QueueSchedConfig, kSchedQueues> cfg_;
  std::vector<int> strict_;
  std::array<int64_t, kSchedQueues> deficit_{};
  int rr_ = 0;
  bool fresh_ = true;
};

// 4. pick() (the idle shortcut: no DWRR queue may send -> idle_picks(1))
// against the reference, visit by visit: random configs (all-strict and
// all-DWRR among them), random heads (often empty, often paused), giant
// frames above one quantum of weight 1, many calls with no packet at all.
// Expect: the same answer to every call, and idle calls among them.
TEST(SchedulerPick, EqualsTheVisitByVisitReference) {
  std::mt19937 rng(777);
  uint64_t idle = 0;
  uint64_t calls = 0;
  for (int round = 0; round < 500; ++round) {
    std::array<QueueSchedConfig, kSchedQueues> cfg{};
    const int shape = round % 5;  // 0: all DWRR, 1: all strict, else mixed
    for (auto& c : cfg) {
      c.type = shape == 0 ? SchedType::kDwrr
               : shape == 1 ? SchedType::kStrict
                            : (rng() % 3 == 0 ? SchedType::kStrict : SchedType::kDwrr);
      c.weight = 1 + rng() % 4;
      c.priority = rng() % 4;
    }
    PortScheduler fast(cfg);
    ReferenceScheduler ref(cfg);
    for (int call = 0; call < 400; ++call) {
      std::array<uint32_t, kSchedQueues> head{};
      const int fill = static_cast<int>(rng() % 4);  // 0: nothing queued
      for (int q = 0; q < kSchedQueues && fill != 0; ++q) {
        if (rng() % 4 < static_cast<unsigned>(fill)) {
          head[q] = rng() % 8 == 0 ? kDwrrQuantumBytes + 1 + rng() % 20000 : 64 + rng() % 9000;
        }
      }
      const auto eligible = static_cast<uint8_t>(rng() % 3 == 0 ? rng() : 0xFF);
      const int want = ref.pick(head, eligible);
      ASSERT_EQ(fast.pick(head, eligible), want) << "round " << round << " call " << call;
      idle += want < 0;
      ++calls;
    }
  }
  EXPECT_GT(idle, calls / 10);
  EXPECT_LT(idle, calls);
}

}  // namespace
}  // namespace sf::sw
