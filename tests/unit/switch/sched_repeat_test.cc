// PortScheduler::repeat (the transmit loop's shortcut while one queue goes
// on) against pick(): two schedulers of one random config serve the same
// random queues, one calling pick() for every packet, the other repeat()
// first after each pick and pick() only when repeat() says no.
#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <random>

#include "switch/qos/scheduler.h"

namespace sf::sw {
namespace {

// 1. Random strict / DWRR mixes (weights 1..4, priorities 0..3), random
// packet sizes, random paused queues per transmit call, random arrivals
// between calls. Expect: the same queue for every packet, and repeat()
// taking a good part of the packets.
TEST(SchedulerRepeat, SameOrderAsPick) {
  std::mt19937 rng(31337);
  uint64_t repeated = 0;
  uint64_t sent = 0;
  for (int round = 0; round < 200; ++round) {
    std::array<QueueSchedConfig, kSchedQueues> cfg{};
    for (auto& c : cfg) {
      c.type = rng() % 3 == 0 ? SchedType::kStrict : SchedType::kDwrr;
      c.weight = 1 + rng() % 4;
      c.priority = rng() % 4;
    }
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

}  // namespace
}  // namespace sf::sw
