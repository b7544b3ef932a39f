// PFC watchdog (SONiC PFC_WD semantics, shared/reference/switch.md section 4)
// for the 8 queues of one port. A queue that stays paused by received PFC for
// `detection` without transmitting anything is stormed, whether it holds
// packets or not. Mitigation by action: drop (flush the queue, drop what
// arrives for it and ignore its incoming pauses), forward (ignore pause, keep
// sending), alert (report only). A stormed queue is restored once no PFC frame
// has arrived for its priority for `restoration` (counted from the storm or
// the last frame, whichever is later); under alert, as soon as the pause ends. Event-driven and exact in
// time (microsecond timers work as well as SONiC's millisecond defaults), or
// with a poll period (PfcWdConfig::poll), decided at SONiC's poll instants:
// the owner reports pause/transmit/frame events and calls advance() at
// next_deadline(). Pure logic.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "common/time.h"

namespace sf::sw {

enum class PfcWdAction : uint8_t { kDrop, kForward, kAlert };
std::string_view to_string(PfcWdAction a);

struct PfcWdConfig {
  PfcWdAction action = PfcWdAction::kDrop;
  TimeNs detection = TimeNs::from_ms(200);
  TimeNs restoration = TimeNs::from_ms(200);
  uint8_t queues = 0;  // queues the watchdog guards (pfcwd_sw_enable, mapped to queues)
  // 0: exact (decides at the event's nanosecond). Else SONiC's POLL_INTERVAL:
  // storms and restorations are decided only at multiples of `poll` (from
  // time 0), so a storm is seen at the first poll at or after `detection`.
  TimeNs poll = TimeNs(0);
};

struct PfcWdCounters {
  std::array<uint64_t, 8> storms{};            // PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED
  std::array<uint64_t, 8> restores{};          // PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED
  std::array<uint64_t, 8> tx_dropped{};        // packets dropped for the queue while stormed (drop)
  std::array<uint64_t, 8> rx_dropped{};        // arrivals on the stormed port's matching PG dropped (drop)
  std::array<uint64_t, 8> rx_ignored_pause{};  // pause frames not honoured while stormed
};

// What changed in an advance() call, bit q = queue q.
struct PfcWdEvents {
  uint8_t stormed = 0;
  uint8_t restored = 0;
};

class PfcWatchdog {
 public:
  PfcWatchdog() = default;
  explicit PfcWatchdog(const PfcWdConfig& cfg) : cfg_(cfg) {}

  // The queue's paused state as the scheduler sees it (received PFC).
  void on_paused(uint8_t q, bool paused, TimeNs now);
  // The queue transmitted a packet.
  void on_tx(uint8_t q, TimeNs now);
  // A PFC frame enabling queue q's priority arrived (restoration timer restarts).
  void on_pfc_frame(uint8_t q, TimeNs now);

  // Runs the timers due at `now`.
  PfcWdEvents advance(TimeNs now);
  TimeNs next_deadline() const;

  uint8_t stormed() const { return stormed_; }
  // Queues whose received pauses must be ignored (drop and forward actions).
  uint8_t ignore_pause_mask() const { return cfg_.action == PfcWdAction::kAlert ? 0 : stormed_; }
  // Queues whose packets are dropped (action drop).
  uint8_t drop_mask() const { return cfg_.action == PfcWdAction::kDrop ? stormed_ : 0; }
  void count_dropped(uint8_t q, uint64_t n = 1) { ctr_.tx_dropped[q] += n; }
  void count_rx_dropped(uint8_t q) { ++ctr_.rx_dropped[q]; }
  void count_ignored(uint8_t q) { ++ctr_.rx_ignored_pause[q]; }

  const PfcWdConfig& config() const { return cfg_; }
  const PfcWdCounters& counters() const { return ctr_; }

 private:
  bool guarded(uint8_t q) const { return (cfg_.queues >> q) & 1u; }

  PfcWdConfig cfg_;
  uint8_t paused_ = 0;
  uint8_t stormed_ = 0;
  std::array<TimeNs, 8> paused_since_{};  // start of the current pause-without-transmit stretch
  std::array<TimeNs, 8> last_frame_{};
  PfcWdCounters ctr_;
};

}  // namespace sf::sw
