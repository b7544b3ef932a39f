// Swift delay-based congestion control for one QP (G. Kumar et al., "Swift:
// Delay is Simple and Effective for Congestion Control in the Datacenter",
// SIGCOMM 2020; equations and defaults as in shared/reference/cc.md 3, from
// Google isekai's Falcon/Swift model). Pure logic: `now` passed in, no
// allocation, no clock read. One object belongs to the lcore that owns the QP.
//
// Two windows, in packets of mtu_bytes (fractional, as in the paper):
//  * fcwnd reacts to the fabric delay  rtt - remote_delay  against
//    target = base_target + hops * per_hop + clamp(fs_alpha / sqrt(fcwnd) + fs_beta, 0, fs_range);
//  * ecwnd reacts to the endpoint delay remote_delay against endpoint_target.
// Each: below target additive increase (ai / cwnd per acked packet, ai per
// packet when cwnd < 1); at or above target a multiplicative decrease
// max(1 - beta (d - t) / d, 1 - max_mdf), at most once per RTT per window.
// Output: window = min(fcwnd, ecwnd) packets (at least one packet on the
// wire); when that is below one packet, pacing at one packet per rtt / cwnd,
// otherwise the line rate (window-limited, no pacing).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/time.h"
#include "nic/cc/cc_event.h"

namespace sf::nic {

struct SwiftParams {
  uint32_t mtu_bytes = 4096;              // the packet a window counts
  double ai = 1.0;                        // fabric additive increase, packets per RTT
  double endpoint_ai = 1.0;               // endpoint additive increase, packets per RTT
  double beta = 0.8;                      // multiplicative-decrease factor
  double max_mdf = 0.5;                   // one cut keeps at least 1 - max_mdf of the window
  double min_cwnd = 0.01;                 // fabric window bounds, packets
  double max_cwnd = 256;
  double min_ecwnd = 1.0;                 // endpoint window bounds, packets
  double max_ecwnd = 256;
  double initial_cwnd = 0;                // packets; 0 = one BDP of line_rate x base_target, clamped
  TimeNs base_target = TimeNs::from_us(25);  // fabric target without hops and flow scaling
  TimeNs per_hop = TimeNs::from_us(1);       // h: target added per switch hop
  TimeNs fs_range = TimeNs::from_us(100);    // flow scaling: extra target at fs_min_cwnd
  double fs_min_cwnd = 0.1;               // flow scaling is fs_range here ...
  double fs_max_cwnd = 256;               // ... and 0 here
  TimeNs endpoint_target = TimeNs::from_us(10);  // [ours] target of remote_delay (paper: a fixed endpoint target)
  double rtt_ewma_old = 0.75;             // weight of the old smoothed RTT per sample
  uint32_t retx_reset_threshold = 3;      // RTOs in a row that reset fcwnd to min_cwnd
  // [ours] RC requests carry an INT shim asking the responder for its
  // turnaround (t3 - t2), echoed in the ACK: Swift's endpoint delay. Both ends
  // must be sf-nic (a hardware RNIC would take the shim for payload); off:
  // remote_delay 0, the whole RTT is fabric delay (docs/cc.md "Endpoint delay").
  bool remote_delay = false;

  // nullopt when usable, else "<field>: <why>" (static text).
  std::optional<std::string_view> validate() const;
  bool operator==(const SwiftParams&) const = default;
};

struct SwiftCounters {
  uint64_t acks = 0;
  uint64_t fabric_increases = 0;
  uint64_t fabric_decreases = 0;
  uint64_t endpoint_increases = 0;
  uint64_t endpoint_decreases = 0;
  uint64_t decreases_held = 0;  // above target but already cut in this RTT
  uint64_t rtos = 0;
  uint64_t loss_cuts = 0;
};

class Swift {
 public:
  // `params` must validate().
  Swift(const SwiftParams& params, BitRate line_rate);

  void on_ack(const AckEvent& a, TimeNs now);
  void on_rto(TimeNs now);
  // The RateController members: CNPs, bytes and timers mean nothing to Swift.
  void on_cnp(TimeNs /*now*/) {}
  void on_tx_bytes(uint64_t /*bytes*/, TimeNs /*now*/) {}
  void advance(TimeNs /*now*/) {}
  TimeNs next_deadline() const { return TimeNs::max(); }

  BitRate rate() const { return BitRate(rate_bps_); }
  uint64_t window_bytes() const { return window_bytes_; }

  double fcwnd() const { return fcwnd_; }
  double ecwnd() const { return ecwnd_; }
  double cwnd() const { return fcwnd_ < ecwnd_ ? fcwnd_ : ecwnd_; }
  TimeNs srtt() const { return srtt_; }
  // Fabric target for a window of `fcwnd` packets and `hops` hops.
  TimeNs fabric_target(double fcwnd, uint8_t hops) const;
  const SwiftCounters& counters() const { return ctr_; }
  const SwiftParams& params() const { return p_; }

 private:
  void update_outputs();
  // The smoothed RTT, or base_target before the first sample.
  TimeNs rtt_estimate() const { return srtt_.ns() > 0 ? srtt_ : p_.base_target; }
  static bool can_decrease(const std::optional<TimeNs>& last, TimeNs rtt, TimeNs now);

  SwiftParams p_;
  uint64_t line_bps_;
  double fs_alpha_ns_;  // flow scaling alpha, ns * sqrt(packets)
  double fs_beta_ns_;
  double fcwnd_;
  double ecwnd_;
  TimeNs srtt_{0};
  // Time of the last cut of each window; nullopt before the first.
  std::optional<TimeNs> last_fabric_decrease_;
  std::optional<TimeNs> last_endpoint_decrease_;
  uint32_t retx_cnt_ = 0;
  uint64_t rate_bps_;
  uint64_t window_bytes_ = 0;
  SwiftCounters ctr_;
};

}  // namespace sf::nic
