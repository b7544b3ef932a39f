// Strict priority + DWRR egress scheduler. See scheduler.h.
#include "switch/qos/scheduler.h"

#include <algorithm>

namespace sf::sw {

PortScheduler::PortScheduler(const std::array<QueueSchedConfig, kSchedQueues>& cfg) : cfg_(cfg) {
  for (int q = 0; q < kSchedQueues; ++q) {
    if (cfg_[q].type == SchedType::kStrict) strict_order_[num_strict_++] = static_cast<uint8_t>(q);
  }
  std::stable_sort(strict_order_.begin(), strict_order_.begin() + num_strict_, [&](uint8_t a, uint8_t b) {
    if (cfg_[a].priority != cfg_[b].priority) return cfg_[a].priority > cfg_[b].priority;
    return a > b;
  });
}

int PortScheduler::pick(std::span<const uint32_t, kSchedQueues> head_bytes, uint8_t eligible) {
  for (int i = 0; i < num_strict_; ++i) {
    const int q = strict_order_[i];
    if (head_bytes[q] != 0 && (eligible >> q & 1u)) return q;
  }
  // DWRR: at most two passes over the queues (one to find a backlogged queue,
  // one more since every quantum covers the largest frame).
  for (int visits = 0; visits < 2 * kSchedQueues + 1; ++visits) {
    const int q = rr_;
    const bool active = cfg_[q].type == SchedType::kDwrr && head_bytes[q] != 0 && (eligible >> q & 1u);
    if (active) {
      if (fresh_) {
        deficit_[q] += int64_t{cfg_[q].weight} * kDwrrQuantumBytes;
        fresh_ = false;
      }
      if (deficit_[q] >= head_bytes[q]) {
        deficit_[q] -= head_bytes[q];
        return q;
      }
    } else {
      deficit_[q] = 0;  // an idle queue keeps no credit (DRR)
    }
    rr_ = (rr_ + 1) % kSchedQueues;
    fresh_ = true;
  }
  return -1;
}

}  // namespace sf::sw
