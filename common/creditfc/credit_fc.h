// Credit-based link flow control, InfiniBand style (seed 003; DESIGN.md
// switch/): an alternative to PFC per link, shared by the switch and the
// hosts (the NIC later). Per virtual lane (VL) the receiver owns a buffer of
// `credits` MTU-sized slots; the sender spends one credit per packet and
// stops at zero. The receiver returns freed slots in in-band credit updates
// (common/wire/credit_frame.h, docs/wire-formats.md), but only once
// `update_threshold` slots have been freed since its last update. Updates
// carry the cumulative number of credits granted (as IB's FCCL), so a lost
// update is repaired by the next one. Service levels map to VLs; a weighted
// arbitration table shares the link among VLs that have both packets and
// credits.
//
// Counters: credit stalls (a VL with packets waiting and no credit) and a
// histogram of stall durations, which tells a threshold problem (short stalls,
// microseconds) from congestion (long ones) - seed 003's diagnosis.
// Pure logic; time is an argument. Owned by the lcore of the port.
#pragma once

#include <array>
#include <cstdint>

#include "common/time.h"

namespace sf {

inline constexpr int kMaxVls = 16;
inline constexpr int kManagementVl = 15;
inline constexpr int kMaxSls = 16;
// A credit holds one frame of up to mtu + this many bytes (the MTU is of
// payload, as in IB; the headers ride along); a longer frame takes as many
// credits as it needs.
inline constexpr uint32_t kCreditSlotHeaderBytes = 128;
// Stall histogram buckets: [0] < 1 us, [i] in [2^(i-1), 2^i) us, last = longer.
inline constexpr int kStallBuckets = 16;

// Lower edge of stall histogram bucket `b`, in us (0 for bucket 0).
constexpr uint64_t stall_bucket_floor_us(int b) { return b == 0 ? 0 : uint64_t{1} << (b - 1); }

struct CreditFcConfig {
  uint32_t mtu_bytes = 4096;                        // one credit = one packet slot of this size
  uint16_t vl_mask = 1;                             // bit v = VL v in use (VL15 = management)
  std::array<uint32_t, kMaxVls> vl_buffer_bytes{};  // receive buffer per VL
  uint32_t update_threshold = 1;                    // freed slots before an update is sent
  std::array<uint8_t, kMaxSls> sl_to_vl{};          // service level (traffic class) -> VL
  std::array<uint32_t, kMaxVls> vl_weight{};        // arbitration: packets per round (0 = never)

  uint32_t credits(int vl) const { return vl_buffer_bytes[vl] / mtu_bytes; }
  // Credits a frame of `frame_bytes` (pkt_len) takes: 1 up to mtu + 128 bytes.
  uint32_t credits_for(uint32_t frame_bytes) const {
    const uint32_t slot = mtu_bytes + kCreditSlotHeaderBytes;
    return frame_bytes <= slot ? 1 : (frame_bytes + slot - 1) / slot;
  }
  bool vl_valid(int vl) const { return vl >= 0 && vl < kMaxVls && ((vl_mask >> vl) & 1u); }
};

struct CreditStallStats {
  uint64_t stalls = 0;                       // stall episodes started
  TimeNs stalled_time{0};                    // total time with packets waiting and no credit (ended episodes)
  std::array<uint64_t, kStallBuckets> histogram{};  // ended episodes by duration
};

// Transmit side of a link: credits available per VL and stall accounting.
class CreditSender {
 public:
  CreditSender() = default;
  explicit CreditSender(const CreditFcConfig& cfg);

  bool can_send(int vl, uint32_t credits = 1) const { return available(vl) >= credits; }
  uint32_t available(int vl) const { return limit_[vl] - sent_[vl]; }  // modular arithmetic
  // Spends `credits` (the caller checked can_send; a send without them is
  // counted: it would overrun the peer).
  void on_send(int vl, uint32_t credits = 1) {
    if (!can_send(vl, credits)) ++without_credit_;
    sent_[vl] += credits;
  }
  uint64_t sent_without_credit() const { return without_credit_; }
  // A credit update: `granted_total` credits granted so far on `vl`.
  void on_update(int vl, uint32_t granted_total, TimeNs now);
  // The owner reports the credits the VL's next packet needs (0: nothing
  // waiting); stalls are timed from the moment a VL is waiting without
  // enough credit until an update brings it.
  void note_backlog(int vl, uint32_t head_credits, TimeNs now);
  bool stalled(int vl) const { return stalled_[vl]; }

  const CreditStallStats& stalls(int vl) const { return stall_[vl]; }
  const CreditStallStats& total_stalls() const { return all_; }  // all VLs

 private:
  void end_stall(int vl, TimeNs now);

  std::array<uint32_t, kMaxVls> limit_{};
  std::array<uint32_t, kMaxVls> sent_{};
  std::array<bool, kMaxVls> stalled_{};
  std::array<TimeNs, kMaxVls> stall_since_{};
  std::array<uint32_t, kMaxVls> need_{};  // credits the waiting packet needs
  std::array<CreditStallStats, kMaxVls> stall_{};
  CreditStallStats all_;
  uint64_t without_credit_ = 0;
};

// Receive side: packets occupying slots, slots freed as packets leave the
// buffer, updates owed.
class CreditReceiver {
 public:
  CreditReceiver() = default;
  explicit CreditReceiver(const CreditFcConfig& cfg);

  // A packet that spends a credit arrived on `vl`. Returns false when the
  // sender had no credit for it: more packets arrived than we have
  // advertised (initial pool + updates sent), an overrun.
  bool on_arrival(int vl, uint32_t credits = 1);
  // A packet on `vl` that took `credits` left the receive buffer (forwarded,
  // consumed or dropped).
  void on_freed(int vl, uint32_t credits = 1);
  uint32_t occupied(int vl) const { return occupied_[vl]; }
  // VLs with an update due (bit v), and the cumulative grant to advertise.
  uint16_t updates_due() const { return due_; }
  uint32_t granted_total(int vl) const { return granted_[vl]; }
  // The update for the VLs in `mask` went out.
  void sent_updates(uint16_t mask);
  uint64_t updates_sent() const { return updates_; }
  void count_update() { ++updates_; }

 private:
  uint32_t threshold_ = 1;
  std::array<uint32_t, kMaxVls> credits_{};
  std::array<uint32_t, kMaxVls> granted_{};
  std::array<uint32_t, kMaxVls> freed_since_update_{};
  std::array<uint32_t, kMaxVls> occupied_{};
  std::array<uint32_t, kMaxVls> received_{};    // arrivals, mod 2^32
  std::array<uint32_t, kMaxVls> advertised_{};  // grant the peer may know of, mod 2^32
  uint16_t due_ = 0;
  uint64_t updates_ = 0;
};

// Weighted round robin over VLs (the VL arbitration table): each VL sends up
// to `weight` packets per round when it has packets and credit.
class VlArbiter {
 public:
  VlArbiter() = default;
  explicit VlArbiter(const std::array<uint32_t, kMaxVls>& weights) : weight_(weights) {}
  // `ready` bit v: VL v has a packet and a credit. Returns the VL, or -1.
  int pick(uint16_t ready);

 private:
  std::array<uint32_t, kMaxVls> weight_{};
  int cur_ = 0;
  uint32_t used_ = 0;  // packets sent by cur_ this round
};

}  // namespace sf
