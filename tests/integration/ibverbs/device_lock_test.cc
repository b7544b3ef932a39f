// DeviceLock (nic/ibverbs/runtime.h): mutual exclusion between threads,
// try_lock only when free. Real threads, no timing.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "nic/ibverbs/runtime.h"

namespace sf::nic::ibverbs {
namespace {

// 1. Four threads add 20,000 each under the lock (a non-atomic counter):
// nothing is lost.
TEST(DeviceLock, MutualExclusion) {
  DeviceLock lock;
  uint64_t counter = 0;
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        std::lock_guard<DeviceLock> g(lock);
        counter = counter + 1;
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(counter, 80000u);
}

// 2. try_lock takes a free lock, fails on a held one, and succeeds again
// once it is released.
TEST(DeviceLock, TryLock) {
  DeviceLock lock;
  ASSERT_TRUE(lock.try_lock());
  EXPECT_FALSE(lock.try_lock());
  std::atomic<bool> other{true};
  std::thread([&] { other = lock.try_lock(); }).join();
  EXPECT_FALSE(other.load());
  lock.unlock();
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

}  // namespace
}  // namespace sf::nic::ibverbs
