// CreditPort: the credit-based flow-control state of one link end (switch
// port or host port), both directions: the sender half (credits granted by
// the peer, stalls, VL arbitration) and the receiver half (slots occupied by
// the peer's packets, updates owed to it), plus the in-band credit frames
// between them (common/wire/credit_frame.h). Bad frames are counted by reason
// and ignored; entries for VLs the port does not use are counted and skipped.
// Pure logic: time is an argument; no allocation. Owned by the port's lcore.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/creditfc/credit_fc.h"
#include "common/time.h"
#include "common/wire/credit_frame.h"

namespace sf {

struct CreditCounters {
  uint64_t tx_updates = 0;        // credit frames sent
  uint64_t rx_updates = 0;        // well-formed credit frames received
  uint64_t rx_malformed = 0;      // credit frames ignored as malformed (all reasons)
  std::array<uint64_t, static_cast<std::size_t>(wire::CreditParseReason::kCount)> rx_malformed_by_reason{};
  uint64_t rx_unknown_vl = 0;     // entries for a VL this port does not use (skipped)
  uint64_t rx_overrun = 0;        // data packets that arrived with no free slot (peer ignored credits)
  uint64_t alloc_failures = 0;    // an update waited: no buffer for the frame
  uint64_t tx_without_credit = 0; // packets we sent with no credit (an owner bug; must stay 0)
  uint64_t credit_stalls = 0;     // stall episodes (all VLs)
  TimeNs stalled_time{0};         // time stalled, ended episodes
  std::array<uint64_t, kStallBuckets> stall_histogram{};  // see kStallBuckets
};

enum class CreditRxOutcome : uint8_t { kApplied, kMalformed, kPartlyUnknownVl };
const char* to_string(CreditRxOutcome o);

class CreditPort {
 public:
  CreditPort() = default;
  explicit CreditPort(const CreditFcConfig& cfg);

  const CreditFcConfig& config() const { return cfg_; }
  // VL of a packet of service level (traffic class) `sl` on this link.
  uint8_t vl_of_sl(uint8_t sl) const { return cfg_.sl_to_vl[sl % kMaxSls]; }
  // Credits a frame of `frame_bytes` takes on this link (1 up to mtu + 128).
  uint32_t credits_for(uint32_t frame_bytes) const { return cfg_.credits_for(frame_bytes); }

  // ---- transmit (our packets toward the peer)
  bool can_send(int vl, uint32_t credits = 1) const { return tx_.can_send(vl, credits); }
  void on_send(int vl, uint32_t credits = 1) { tx_.on_send(vl, credits); }
  // Credits the next packet of `vl` needs (0: nothing waiting), for stall
  // timing (after every transmit offer that finds the wire free).
  void note_backlog(int vl, uint32_t head_credits, TimeNs now) { tx_.note_backlog(vl, head_credits, now); }
  // VL arbitration among `ready` (bit v: packets and a credit).
  int arbitrate(uint16_t ready) { return arb_.pick(ready); }
  const CreditSender& sender() const { return tx_; }

  // ---- receive (the peer's packets into our buffer)
  // A data packet taking `credits` arrived on `vl`; counts an overrun when
  // the peer had no credit for it.
  void on_arrival(int vl, uint32_t credits = 1);
  // A packet that arrived on `vl` and took `credits` left our buffer.
  void on_freed(int vl, uint32_t credits = 1) { rx_.on_freed(vl, credits); }
  bool update_due() const { return rx_.updates_due() != 0; }
  // Writes the update owed to the peer into `out` (all due VLs in one
  // frame). Returns the frame bytes, 0 when nothing is due or `out` is short.
  std::size_t build_update(std::span<uint8_t> out, const wire::MacAddr& src);
  const CreditReceiver& receiver() const { return rx_; }
  // The owner could not get a buffer for a due update (it stays due).
  void count_alloc_failure() { ++ctr_.alloc_failures; }

  // A frame with EtherType 0x88B5 from the peer (contiguous bytes).
  CreditRxOutcome on_frame(std::span<const uint8_t> frame, TimeNs now);

  CreditCounters counters() const;

 private:
  CreditFcConfig cfg_;
  CreditSender tx_;
  CreditReceiver rx_;
  VlArbiter arb_;
  CreditCounters ctr_;  // frame counters; stalls come from tx_
};

}  // namespace sf
