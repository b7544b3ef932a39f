// BBR-style congestion control for one QP, the "hardware BBR" of seed 001:
// N. Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue
// 2016, with the constants and state machine of Linux net/ipv4/tcp_bbr.c
// (BBRv1; shared/reference/cc.md 5). Pure logic: `now` passed in, no clock,
// no RNG, no allocation.
//
// State: RTprop (windowed min RTT over rtprop_window), BtlBw (windowed max of
// delivery-rate samples over bw_window_rounds round trips), phase STARTUP /
// DRAIN / PROBE_BW (pacing-gain cycle) / PROBE_RTT.
// Outputs: pacing rate = pacing_gain x BtlBw x (1 - pacing_margin), window
// (inflight cap) = cwnd_gain x BDP, BDP = BtlBw x RTprop, at least
// min_cwnd_pkts packets (exactly that in PROBE_RTT).
// A round trip ends when ack_seq passes the snd_nxt recorded at the start of
// the round (the ACK of the first packet sent in the round).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/time.h"
#include "nic/cc/cc_event.h"

namespace sf::nic {

enum class BbrPhase : uint8_t { kStartup, kDrain, kProbeBw, kProbeRtt };
std::string_view to_string(BbrPhase p);

inline constexpr std::size_t kBbrCycleLen = 8;

struct BbrParams {
  uint32_t mtu_bytes = 4096;
  double high_gain = 2.885;          // 2/ln2: STARTUP pacing and cwnd gain
  double drain_gain = 1 / 2.885;     // DRAIN pacing gain
  double cwnd_gain = 2.0;            // PROBE_BW / DRAIN cwnd gain
  std::array<double, kBbrCycleLen> probe_bw_gains{1.25, 0.75, 1, 1, 1, 1, 1, 1};
  uint32_t probe_bw_start_phase = 2; // Linux draws it at random (never 1); deterministic here
  uint32_t bw_window_rounds = 10;    // bbr_bw_rtts = CYCLE_LEN + 2
  TimeNs rtprop_window = TimeNs::from_ms(10);   // [ours] Linux 10 s (WAN scale), cc.md 5 "NIC adaptation"
  TimeNs probe_rtt_time = TimeNs::from_us(200); // [ours] Linux 200 ms, plus at least one round
  double full_bw_thresh = 1.25;      // STARTUP ends when BtlBw grew less than this ...
  uint32_t full_bw_cnt = 3;          // ... for this many rounds
  uint32_t min_cwnd_pkts = 4;        // bbr_cwnd_min_target
  double pacing_margin = 0.01;       // bbr_pacing_margin_percent
  uint32_t initial_cwnd_pkts = 10;   // TCP_INIT_CWND; pacing at initial_rate until the first bw sample
  BitRate initial_rate{0};           // [ours] pacing before the first bw sample; 0 = line rate

  std::optional<std::string_view> validate() const;
  bool operator==(const BbrParams&) const = default;
};

struct BbrCounters {
  uint64_t acks = 0;
  uint64_t rounds = 0;
  uint64_t bw_samples = 0;
  uint64_t app_limited_ignored = 0;  // app-limited samples below BtlBw (not taken)
  uint64_t probe_rtt_entries = 0;
  uint64_t rtos = 0;
};

class Bbr {
 public:
  Bbr(const BbrParams& params, BitRate line_rate);

  void on_ack(const AckEvent& a, TimeNs now);
  void on_rto(TimeNs now);
  void on_cnp(TimeNs /*now*/) {}
  void on_tx_bytes(uint64_t /*bytes*/, TimeNs /*now*/) {}
  void advance(TimeNs /*now*/) {}
  TimeNs next_deadline() const { return TimeNs::max(); }

  BitRate rate() const { return BitRate(rate_bps_); }
  uint64_t window_bytes() const { return cwnd_bytes_; }

  BbrPhase phase() const { return phase_; }
  uint64_t btl_bw_bps() const { return max_bw_bps(); }
  TimeNs rtprop() const { return rtprop_; }
  uint64_t bdp_bytes() const { return bdp_; }
  double pacing_gain() const { return pacing_gain_; }
  double cwnd_gain() const { return cwnd_gain_; }
  uint32_t cycle_index() const { return cycle_idx_; }
  bool filled_pipe() const { return filled_pipe_; }
  uint64_t round_count() const { return round_count_; }
  const BbrCounters& counters() const { return ctr_; }
  const BbrParams& params() const { return p_; }

 private:
  struct BwSample {
    uint64_t round = 0;
    uint64_t bps = 0;
  };
  uint64_t max_bw_bps() const { return bw_[0].bps; }
  void update_max_bw(uint64_t round, uint64_t bps);
  void check_full_bw(bool round_start, bool app_limited);
  void enter_probe_bw(TimeNs now);
  void set_outputs(uint64_t acked, uint64_t inflight);
  void refresh_bdp();
  uint64_t target_cwnd(double gain) const;

  BbrParams p_;
  uint64_t line_bps_;
  BbrPhase phase_ = BbrPhase::kStartup;
  double pacing_gain_;
  double cwnd_gain_;
  // Windowed max filter (Kathleen Nichols' minmax, as Linux lib/win_minmax.c): best, 2nd, 3rd.
  std::array<BwSample, 3> bw_{};
  TimeNs rtprop_ = TimeNs::max();
  TimeNs rtprop_stamp_{0};
  uint64_t round_count_ = 0;
  uint64_t round_end_seq_ = 0;
  bool round_started_ = false;
  uint64_t full_bw_bps_ = 0;
  uint32_t full_bw_rounds_ = 0;
  bool filled_pipe_ = false;
  uint32_t cycle_idx_ = 0;
  TimeNs cycle_stamp_{0};
  std::optional<TimeNs> probe_rtt_done_;
  bool probe_rtt_round_done_ = false;
  uint64_t cwnd_bytes_;
  uint64_t bdp_;  // BtlBw x RTprop (initial window before both are known)
  uint64_t paced_bw_ = 0;  // the BtlBw and gain rate_bps_ was computed from
  double paced_gain_ = 0;
  uint64_t delivered_ = 0;
  uint64_t rate_bps_;
  BbrCounters ctr_;
};

}  // namespace sf::nic
