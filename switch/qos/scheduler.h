// Egress scheduler of one port: 8 queues, strict priority and DWRR (SONiC
// SCHEDULER table). Strict queues are served first, higher `priority` first
// (ties: higher queue index); the rest share by deficit round robin with a
// quantum of weight x kDwrrQuantumBytes. Paused queues (PFC) are skipped.
// One instance per egress port, owned by the lcore that transmits on it.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>

namespace sf::sw {

inline constexpr int kSchedQueues = 8;
static_assert((kSchedQueues & (kSchedQueues - 1)) == 0 && kSchedQueues <= 8);
// Bytes of credit per unit of DWRR weight; >= the largest frame so that a queue
// always sends at least one packet per turn.
inline constexpr uint32_t kDwrrQuantumBytes = 9216 + 64;

enum class SchedType : uint8_t { kStrict, kDwrr };

struct QueueSchedConfig {
  SchedType type = SchedType::kDwrr;
  uint32_t weight = 1;    // DWRR: 1..100
  uint32_t priority = 0;  // STRICT: 0..9, higher first
};

// Bit q set: head_bytes[q] != 0. (An SSE2 form measured the same in
// sf-switch: 0.999, 6 rounds; the plain loop stays.)
inline uint32_t nonzero_mask(std::span<const uint32_t, kSchedQueues> head_bytes) {
  uint32_t m = 0;
  for (int q = 0; q < kSchedQueues; ++q) m |= uint32_t{head_bytes[q] != 0} << q;
  return m;
}

class PortScheduler {
 public:
  PortScheduler() = default;
  explicit PortScheduler(const std::array<QueueSchedConfig, kSchedQueues>& cfg);

  // head_bytes[q]: size of queue q's head packet, 0 if empty. Bit q of
  // `eligible` clear = queue paused. Returns the queue to send from, or -1.
  // Charges the returned queue's deficit with its head packet.
  int pick(std::span<const uint32_t, kSchedQueues> head_bytes, uint8_t eligible);
  // pick() again right after it returned q, when since then only queue q's
  // head changed (to `head_bytes`, 0: empty) and eligibility did not: true
  // (and charged as pick() would) when pick() would return q again; false
  // changes nothing, and pick() decides. Cheaper than pick() per packet.
  bool repeat(int q, uint32_t head_bytes);
  // repeat() over a run of heads of q, with the deficit in the caller's
  // hands: repeat_budget(q) is what the calls may spend (strict: no limit);
  // a head of b bytes (b > 0) is taken while b <= the budget left, which
  // then drops by b (exactly repeat()'s test and charge); repeat_settle(q,
  // left) stores what is left. Equal to calling repeat() head by head.
  int64_t repeat_budget(int q) const {
    return cfg_[q].type == SchedType::kStrict ? std::numeric_limits<int64_t>::max() : deficit_[q];
  }
  void repeat_settle(int q, int64_t left) {
    if (cfg_[q].type != SchedType::kStrict) deficit_[q] = left;
  }
  // What `picks` pick() calls do when no DWRR queue has a packet it may
  // send (every queue is visited 2 x 8 + 1 times: deficits cleared, the turn
  // moves on by one per call), in O(1): a driver that stops offering an
  // idle port keeps the schedule of one that offers it every round.
  void idle_picks(uint64_t picks) {
    if (picks == 0) return;
    deficit_.fill(0);
    fresh_ = true;
    rr_ = static_cast<int>((static_cast<uint64_t>(rr_) + (picks % kSchedQueues) * (2 * kSchedQueues + 1)) % kSchedQueues);
  }

 private:
  std::array<QueueSchedConfig, kSchedQueues> cfg_{};
  std::array<uint8_t, kSchedQueues> strict_order_{};  // strict queues, best first
  int num_strict_ = 0;
  uint8_t dwrr_mask_ = 0xFF;  // bit q: queue q is DWRR
  std::array<int64_t, kSchedQueues> deficit_{};
  int rr_ = 0;         // DWRR queue whose turn it is
  bool fresh_ = true;  // rr_ has not yet received its quantum this turn
};

// Inline: called once per transmitted packet.
inline int PortScheduler::pick(std::span<const uint32_t, kSchedQueues> head_bytes, uint8_t eligible) {
  for (int i = 0; i < num_strict_; ++i) {
    const int q = strict_order_[i];
    if (head_bytes[q] != 0 && (eligible >> q & 1u)) return q;
  }
  // DWRR: at most two passes over the queues (one to find a backlogged queue,
  // one more since every quantum covers the largest frame). When no DWRR
  // queue may send, the passes would only clear deficits and move the turn
  // by one (2 x 8 + 1 visits): idle_picks(1) does that in O(1). It is the
  // pick() after a port's last packet, once per transmit call that empties it.
  const uint32_t backlogged = nonzero_mask(head_bytes);
  const uint32_t active = backlogged & eligible & dwrr_mask_;
  if (active == 0) {
    idle_picks(1);
    return -1;
  }
  for (int visits = 0; visits < 2 * kSchedQueues + 1; ++visits) {
    const int q = rr_;
    if (active >> q & 1u) {
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
    rr_ = (rr_ + 1) & (kSchedQueues - 1);
    fresh_ = true;
  }
  return -1;
}

// Strict q: the strict queues ahead of it were empty or paused and still
// are. DWRR q: no strict queue was sendable, and q is still the turn
// (rr_ == q, already given its quantum): pick() sends from it while its
// deficit covers the head.
inline bool PortScheduler::repeat(int q, uint32_t head_bytes) {
  if (head_bytes == 0) return false;
  if (cfg_[q].type == SchedType::kStrict) return true;
  if (deficit_[q] < head_bytes) return false;
  deficit_[q] -= head_bytes;
  return true;
}

}  // namespace sf::sw
