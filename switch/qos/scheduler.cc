// Strict priority + DWRR egress scheduler. See scheduler.h.
#include "switch/qos/scheduler.h"

#include <algorithm>

namespace sf::sw {

PortScheduler::PortScheduler(const std::array<QueueSchedConfig, kSchedQueues>& cfg) : cfg_(cfg) {
  for (int q = 0; q < kSchedQueues; ++q) {
    if (cfg_[q].type == SchedType::kStrict) {
      strict_order_[num_strict_++] = static_cast<uint8_t>(q);
      dwrr_mask_ = static_cast<uint8_t>(dwrr_mask_ & ~(1u << q));
    }
  }
  std::stable_sort(strict_order_.begin(), strict_order_.begin() + num_strict_, [&](uint8_t a, uint8_t b) {
    if (cfg_[a].priority != cfg_[b].priority) return cfg_[a].priority > cfg_[b].priority;
    return a > b;
  });
}

}  // namespace sf::sw
