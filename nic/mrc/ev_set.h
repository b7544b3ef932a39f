// EvSet: one MRC QP's EV profile and the per-EV path state machine
// (docs/mrc.md "Transport building blocks", endpoint.md 3.2 and 3.5).
//
// The profile holds `num_evs` entropy values (EV value = ev_base + index),
// spread evenly over `num_planes` planes (plane = index % num_planes). Of the
// num_evs / num_planes EVs of a plane, `backup_per_plane` start as backups;
// the others are active. pick_next() draws a pseudo-random usable EV per
// packet: active, GOOD, plane up. Feedback moves EVs between states:
//   ECN echo (SACK M=SKIP_ONCE, CE) or NACK TRIMMED -> SKIP for one rotation
//     (the next `active EV count` picks), then GOOD again;
//   loss with neither trim nor SACK, or SACK M=ALWAYS_SKIP -> ASSUMED_BAD at
//     once: the EV leaves the active set and a GOOD backup of the same plane
//     takes its slot (planes stay balanced); the retired EV is probed and
//     becomes GOOD again after `probes_to_readmit` successful probes in a row
//     (active if its plane lacks an active EV, else a backup);
//   port-status update: every EV of a down plane is unused at once (its state
//     kept), and usable again when the plane is up;
//   DENIED: by the controller only (deny()/allow()).
//
// Fixed capacity (kMaxEvs), no allocation at all: every table is a member
// array. Deterministic: randomness comes only from the Rng& passed in (G2).
// Owned by one lcore (the QP's), not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "common/rng.h"

namespace sf::nic::mrc {

inline constexpr uint16_t kMaxEvs = 256;
inline constexpr uint16_t kMaxPlanes = 32;  // = wire::kMrcMaxPorts

enum class EvState : uint8_t { kGood, kSkip, kAssumedBad, kDenied };
const char* to_string(EvState s);

// Feedback about one EV, as the transport classifies it.
enum class EvSignal : uint8_t {
  kEcnEcho,         // SACK M=SKIP_ONCE or CE echo: skip for a rotation
  kTrimmed,         // NACK TRIMMED: congestion mid-fabric, skip for a rotation
  kTrimmedLastHop,  // NACK TRIMMED_LASTHOP: incast, the path is not to blame
  kAlwaysSkip,      // SACK M=ALWAYS_SKIP: retire
  kLoss,            // a packet timed out with neither trim nor SACK: retire
};
const char* to_string(EvSignal s);

// What a signal did to the EV.
enum class EvOutcome : uint8_t {
  kNone,     // no change (last-hop trim, already skipped/retired, denied)
  kSkipped,  // GOOD -> SKIP
  kRetired,  // -> ASSUMED_BAD; a backup took its slot when one was free
  kReadmitted,  // a probe success made it GOOD again
};
const char* to_string(EvOutcome o);

struct EvSetConfig {
  uint16_t num_evs = 128;          // 1..kMaxEvs, a multiple of num_planes
  uint16_t num_planes = 1;         // 1..kMaxPlanes
  uint16_t backup_per_plane = 0;   // < num_evs / num_planes
  uint32_t ev_base = 0;            // EV value of index 0
  uint16_t probes_to_readmit = 3;  // >= 1: successful probes in a row to re-admit

  // nullptr when valid, else why not (for a path-qualified error at setup).
  const char* error() const;
};

struct EvCounters {
  uint64_t sent = 0;            // packets picked onto this EV (first transmissions)
  uint64_t retransmitted = 0;   // retransmissions picked onto it
  uint64_t skipped = 0;         // times it entered SKIP
  uint64_t retired = 0;         // times it entered ASSUMED_BAD
  uint64_t probes = 0;          // probes sent on it
  uint64_t probe_ok = 0;        // successful probes
  uint64_t readmitted = 0;      // times a probe streak made it GOOD again
};

struct EvPick {
  uint16_t index;
  uint32_t ev;
  uint8_t plane;
};

class EvSet {
 public:
  // `cfg` must be valid (cfg.error() == nullptr; checked at setup, aborts otherwise).
  explicit EvSet(const EvSetConfig& cfg);

  // A pseudo-random usable EV for the next packet, counting it as sent (or
  // retransmitted). `avoid` (an index) is not chosen when another is usable
  // (a retransmission goes on another EV). When no GOOD EV is usable but a
  // SKIP one is, the oldest skip ends early and that EV is used (skips never
  // stall a QP). nullopt when nothing is usable (every plane down or every EV
  // retired/denied): the transport waits and counts it.
  // Inline for the per-packet case (no skip pending, nothing to avoid):
  // the same draw and counts as the full path.
  std::optional<EvPick> pick_next(Rng& rng, bool retransmission = false,
                                  std::optional<uint16_t> avoid = std::nullopt) {
    if (skip_count_ == 0 && n_usable_ > 0 && !avoid) [[likely]] {
      return count_pick(usable_[rng.below(n_usable_)], retransmission);
    }
    return pick_next_slow(rng, retransmission, avoid);
  }
  // pick_next(rng) for a first transmission, as the EV's index (-1: none
  // usable): the per-packet call, which needs only the index (returning
  // the EvPick through memory stalled on store forwarding, ~5 % of an MRC
  // sender's time).
  int pick_next_index(Rng& rng) {
    if (skip_count_ == 0 && n_usable_ > 0) [[likely]] {
      const uint16_t idx = usable_[rng.below(n_usable_)];
      ++picks_;
      count_sent(idx);
      return idx;
    }
    const std::optional<EvPick> p = pick_next_slow(rng, false, std::nullopt);
    return p ? p->index : -1;
  }
  // pick_next() restricted to the EVs of `plane` (a multi-port sender's
  // port asks for a packet of its plane: the spec's GetSendParams() given the
  // ports with TX space). Same semantics within the plane: uniform over its
  // usable EVs, `avoid` honoured when another is usable, skips of the set
  // ended early (oldest first) rather than stall when the plane has only
  // skipped EVs; nullopt (counted in no_usable) when the plane has none.
  std::optional<EvPick> pick_in_plane(Rng& rng, uint8_t plane, bool retransmission = false,
                                      std::optional<uint16_t> avoid = std::nullopt);
  // Usable EVs of `plane` now (a scan; GOOD, active, plane up).
  uint16_t usable_in_plane(uint8_t plane) const;
  // EV `index` itself for the next packet when it is usable (counted as a
  // pick, as pick_next does), else nullopt and nothing counted: the
  // transport's choice of a path proven alive (docs/mrc.md "Timeout").
  std::optional<EvPick> take(uint16_t index, bool retransmission = false);

  EvOutcome on_signal(uint16_t index, EvSignal s);

  // Probing of retired EVs: the next ASSUMED_BAD EV to probe (round robin),
  // or nullopt. The transport sends the probe and reports the result.
  std::optional<uint16_t> next_probe();
  void on_probe_sent(uint16_t index);
  EvOutcome on_probe_result(uint16_t index, bool ok);

  // Port-status update: bit p of `up_mask` set = plane p up.
  void set_planes_up(uint32_t up_mask);
  void set_plane_up(uint8_t plane, bool up);
  bool plane_up(uint8_t plane) const { return (up_mask_ >> plane) & 1u; }

  // Controller: deny (never used, never probed) and allow (GOOD again).
  void deny(uint16_t index);
  void allow(uint16_t index);

  // EV value -> index, nullopt when the value is not in the profile.
  std::optional<uint16_t> index_of(uint32_t ev) const;

  uint16_t size() const { return cfg_.num_evs; }
  uint8_t num_planes() const { return static_cast<uint8_t>(cfg_.num_planes); }
  uint32_t ev(uint16_t index) const { return cfg_.ev_base + index; }
  uint8_t plane(uint16_t index) const {
    return cfg_.num_planes == 1 ? 0 : static_cast<uint8_t>(index % cfg_.num_planes);  // no division per packet
  }
  EvState state(uint16_t index) const { return evs_[index].state; }
  bool active(uint16_t index) const { return evs_[index].active; }
  // By value: `sent` lives apart from the other counters (see sent_).
  EvCounters counters(uint16_t index) const {
    EvCounters c = evs_[index].counters;
    c.sent += sent_[index];
    return c;
  }
  // EVs pick_next() may choose now (GOOD, active, plane up).
  uint16_t usable() const { return n_usable_; }
  // Active EVs of `plane` (whatever their state).
  uint16_t active_in_plane(uint8_t plane) const { return active_per_plane_[plane]; }
  // Retirements that found no GOOD backup in their plane.
  uint64_t no_backup() const { return no_backup_; }
  // Picks that found nothing usable.
  uint64_t no_usable() const { return no_usable_; }
  // Loss signals that did not retire an EV because its plane was down to its
  // floor of usable EVs (the EV was skipped instead).
  uint64_t retire_refused() const { return retire_refused_; }
  // Picks so far; one rotation = rotation() picks.
  uint64_t picks() const { return picks_; }
  uint16_t rotation() const { return rotation_; }

 private:
  static constexpr uint16_t kNotUsable = 0xFFFF;
  std::optional<EvPick> pick_next_slow(Rng& rng, bool retransmission, std::optional<uint16_t> avoid);
  // The drawn EV `idx`, counted (a pick, sent or retransmitted).
  EvPick count_pick(uint16_t idx, bool retransmission) {
    ++picks_;
    if (retransmission) {
      ++evs_[idx].counters.retransmitted;
    } else {
      count_sent(idx);
    }
    return EvPick{idx, ev(idx), plane(idx)};
  }
  // One more first transmission on `idx`: the low 8 bits in sent_, each
  // wrap carried into the EV's counters.sent.
  void count_sent(uint16_t idx) {
    if (++sent_[idx] == 0) [[unlikely]] evs_[idx].counters.sent += uint64_t{1} << 8;
  }
  struct Ev {
    EvState state = EvState::kGood;
    bool active = false;
    uint16_t pos = kNotUsable;   // index in usable_ or kNotUsable
    uint16_t probe_streak = 0;
    uint64_t skip_until = 0;     // picks_ value at which a SKIP ends
    EvCounters counters;  // `sent`: the multiples of 2^8 (the rest is sent_[index])
  };

  // GOOD or SKIP -> SKIP for one rotation (ECN echo, trim, or a loss at the floor).
  EvOutcome skip(uint16_t index);
  // Active EVs of plane p that are GOOD or SKIP (not retired or denied): a scan.
  uint16_t alive_in_plane(uint8_t p) const;
  bool is_usable(const Ev& e, uint16_t index) const {
    return e.state == EvState::kGood && e.active && plane_up(plane(index));
  }
  void refresh(uint16_t index);
  void set_active(uint16_t index, bool a);
  void leave_active(uint16_t index);   // frees the slot, swaps in a backup
  void become_good(uint16_t index);    // GOOD, active if its plane lacks one
  // Ends the skips due by picks_; with force_one, also the oldest live one
  // (returns whether it ended one).
  bool expire_skips(bool force_one);
  void pop_skip();  // ends the head entry's skip when it is live

  EvSetConfig cfg_;
  uint16_t rotation_ = 1;
  uint16_t target_active_ = 0;  // per plane
  uint32_t up_mask_ = 0;
  uint16_t n_usable_ = 0;
  uint16_t probe_cursor_ = 0;
  uint64_t picks_ = 0;
  uint64_t no_backup_ = 0;
  uint64_t no_usable_ = 0;
  uint64_t retire_refused_ = 0;
  // The per-packet draw touches usable_ and sent_ only (a few cache lines
  // for a 128-EV profile); each Ev is 72 bytes, so counting `sent` inside
  // evs_ touched a random line of 9 KiB per packet, which the packet's 4 KiB
  // payload copy had evicted (a D1 miss per packet).
  // uint8_t: EV indexes are < kMaxEvs = 256; a 128-EV profile's list is two
  // cache lines. sent_ holds the low 8 bits of each EV's first
  // transmissions (count_sent carries a wrap into Ev::counters.sent, one
  // packet in 256 of an EV): 128 bytes for 128 EVs, two lines (as 8-byte
  // counts, 16 lines drawn at random missed about 0.8 times a packet; as
  // 16-bit ones, four lines, about 0.27).
  static_assert(kMaxEvs <= 256);
  std::array<uint8_t, kMaxEvs> usable_{};
  std::array<uint8_t, kMaxEvs> sent_{};
  std::array<Ev, kMaxEvs> evs_{};
  std::array<uint16_t, kMaxPlanes> active_per_plane_{};
  // SKIP entries in order of `until` (FIFO: a rotation is a constant). An
  // entry is stale when its EV left SKIP or re-entered it later (until differs).
  struct SkipEntry {
    uint16_t index;
    uint64_t until;
  };
  static constexpr uint16_t kSkipRing = 2 * kMaxEvs;
  std::array<SkipEntry, kSkipRing> skip_ring_{};
  uint16_t skip_head_ = 0;
  uint16_t skip_count_ = 0;
};

}  // namespace sf::nic::mrc
