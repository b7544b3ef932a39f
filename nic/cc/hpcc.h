// HPCC for one QP (Y. Li et al., "HPCC: High Precision Congestion Control",
// SIGCOMM 2019, Algorithm 1), as the authors' ns-3 code runs it
// (alibaba-edu/High-Precision-Congestion-Control rdma-hw.cc HandleAckHp /
// UpdateRateHp, with HAS_WIN = VAR_WIN = FAST_REACT = 1, MULTI_RATE = 0,
// SAMPLE_FEEDBACK = 0; shared/reference/cc.md 2). Pure logic: `now` passed
// in, no allocation.
//
// Per ACK carrying the INT stack of the acknowledged packet (AckEvent::int_hops):
//   MeasureInflight: per hop u_i = min(qLen, qLen_prev) / (B T) + txRate / B,
//     U = EWMA of max_i u_i with weight tau / T (tau = that hop's ts delta, <= T);
//   ComputeWind: U >= eta or incStage >= maxStage: W = Wc / (U / eta) + W_AI,
//     else W = Wc + W_AI; W clamped to [W_min, W_init];
//   the reference window Wc (and incStage) is committed only by the first ACK
//   past the snd_nxt of the last commit (one commit per RTT); other ACKs
//   react from Wc ("fast react").
// Outputs: window W bytes and pacing rate W / T.
// The first ACK (and an ACK whose hop count differs from the last) only seeds
// the per-hop records.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/time.h"
#include "nic/cc/cc_event.h"

namespace sf::nic {

struct HpccParams {
  TimeNs base_rtt = TimeNs::from_us(10);  // T: the largest base RTT of the fabric (GLOBAL_T); [ours] default
  double eta = 0.95;                      // target utilisation (U_TARGET)
  uint32_t max_stage = 0;                 // MI_THRESH: 0 in every HPCC simulation (the paper's 5 is a typo)
  BitRate rate_ai{0};                     // W_AI as a rate (RATE_AI); 0 = line x 0.0004 (run.py 10 Mb/s per 25 G)
  BitRate min_rate = BitRate::mbps(100);  // floor of the rate (ns-3 m_minRate)
  // Which ACKs replace the per-hop records L: false = only committing ACKs
  // (the ns-3 code: fast-react ACKs measure against the last commit's
  // records); true = every ACK (the paper's Algorithm 1 text, L = ack.L).
  bool update_hops_every_ack = false;
  // The window a QP starts with, as a rate (W = initial_rate x T): 0 = line
  // rate, W_init = line x T (the paper and ns-3). Below line rate the first
  // round trip of N simultaneous starts puts N x initial_rate x T into the
  // bottleneck instead of N x line x T; at the fair share (line / N, when the
  // QP count is known) none of it queues. The window's ceiling stays
  // line x T; HPCC's multiplicative step (W = Wc eta / U) grows it within a
  // few round trips when U < eta. [ours]
  BitRate initial_rate{0};

  std::optional<std::string_view> validate() const;
  bool operator==(const HpccParams&) const = default;
};

struct HpccCounters {
  uint64_t acks = 0;
  uint64_t acks_without_int = 0;  // ignored
  uint64_t seeds = 0;             // first ACK / hop-count change: records stored, no update
  uint64_t commits = 0;           // Wc updated (once per RTT)
  uint64_t fast_reacts = 0;       // W from Wc without commit
  uint64_t md_steps = 0;          // U >= eta or incStage >= maxStage
  uint64_t ai_steps = 0;
  uint64_t stale_hops = 0;        // hop records with ts delta 0 or > 2^31 ns (skipped)
};

class Hpcc {
 public:
  static constexpr std::size_t kMaxHops = wire::kIntMaxHops;

  Hpcc(const HpccParams& params, BitRate line_rate);

  void on_ack(const AckEvent& a, TimeNs now);
  void on_rto(TimeNs /*now*/) {}
  void on_cnp(TimeNs /*now*/) {}
  void on_tx_bytes(uint64_t /*bytes*/, TimeNs /*now*/) {}
  void advance(TimeNs /*now*/) {}
  TimeNs next_deadline() const { return TimeNs::max(); }

  BitRate rate() const { return BitRate(rate_bps_); }
  uint64_t window_bytes() const { return static_cast<uint64_t>(w_); }

  double utilisation() const { return u_; }      // U
  double reference_window() const { return wc_; } // Wc, bytes
  double window() const { return w_; }           // W, bytes
  uint32_t inc_stage() const { return inc_stage_; }
  uint8_t hops() const { return nhops_; }          // hops of the last INT stack taken in (0: none yet)
  double w_ai_bytes() const { return w_ai_; }
  double w_init_bytes() const { return w_init_; }    // the window's ceiling, line x T
  double w_start_bytes() const { return w_start_; }  // the first window (initial_rate x T)
  const HpccCounters& counters() const { return ctr_; }
  const HpccParams& params() const { return p_; }

 private:
  HpccParams p_;
  uint64_t line_bps_;
  double t_ns_;
  double inv_t_;                // 1 / T
  double bps_per_window_byte_;  // R = W x this (8e9 / T)
  double w_init_;  // line x T, bytes (the ceiling)
  double w_start_; // initial_rate x T within [w_min_, w_init_]
  double w_min_;
  double w_ai_;
  double wc_;
  double w_;
  double u_ = 1.0;  // ns-3 starts hp.u at 1
  uint32_t inc_stage_ = 0;
  uint64_t last_update_seq_ = 0;
  bool seeded_ = false;
  uint8_t nhops_ = 0;
  std::array<wire::IntHop, kMaxHops> last_{};
  uint64_t rate_bps_;
  HpccCounters ctr_;
};

}  // namespace sf::nic
