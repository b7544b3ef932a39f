// NSCC, the sender-based window congestion control of Ultra Ethernet (UET
// 1.0 CMS) that MRC QPs run (shared/reference/endpoint.md 3.7 and 4.5; the
// htsim UEC model for the parts the public facts leave open). Pure logic:
// `now` passed in, no allocation.
//
// Per ACK / SACK: delay = rtt - base_rtt against target_qdelay, and the
// acknowledged packet's ECN echo (per packet, i.e. per EV) pick a quadrant:
//   no ECN, delay <  target: proportional increase (the further below the target, the faster)
//   no ECN, delay >= target: fair increase (the same bytes per RTT for every flow)
//   ECN,    delay >= target: multiplicative decrease (at most once per RTT)
//   ECN,    delay <  target: no window change (the load balancer moves off the EV)
// Increases are accumulated and applied once per base RTT; decreases at once.
// Receiver back-pressure: each ACK takes acked_bytes x rcv_cwnd_pen / 128 off
// the window. Quick adapt: a trimmed packet (NACK) or a delay above
// qa_threshold arms it; at the end of the current QA period (base RTT +
// target) the window drops to the bytes acknowledged in that period, and the
// signals of the packets already in flight are then ignored.
// Output: window (bytes in flight); rate = line rate (the window limits).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/time.h"
#include "nic/cc/cc_event.h"

namespace sf::nic {

enum class NsccQuadrant : uint8_t {
  kNone,                    // no decision yet / the ACK carried no RTT / ignored after quick adapt
  kProportionalIncrease,
  kFairIncrease,
  kMultiplicativeDecrease,
  kNoChange,                // ECN but delay below target
};
std::string_view to_string(NsccQuadrant q);

struct NsccParams {
  uint32_t mtu_bytes = 4096;
  TimeNs base_rtt = TimeNs::from_us(10);        // unloaded RTT of the path ([ours] default); lowered to the least sample
  // Config only (Nscc ignores it): cc_params named no base_rtt, so an MRC QP
  // puts its own (MrcQpAttr::base_rtt_ns) into base_rtt (Qp::set_congestion_control).
  bool base_rtt_from_qp = true;
  TimeNs target_qdelay = TimeNs::from_us(5);    // [ours] queueing delay target (UET: per CC profile)
  double max_cwnd_bdp = 1.5;                    // window cap, in BDPs of line_rate x base_rtt (htsim)
  double initial_cwnd_bdp = 1.0;                // [ours]
  uint32_t min_cwnd_bytes = 0;                  // 0 = one mtu
  double pi_bdp = 0.25;                         // [ours] proportional increase per RTT at delay 0, in BDPs
  double fi_mtus = 1.0;                         // [ours] fair increase per RTT, in packets
  double gamma = 0.8;                           // [ours] MD: cwnd *= max(1 - gamma (d - t) / d, 1 - max_md)
  double max_md = 0.5;                          // one decrease keeps at least 1 - max_md
  double qa_threshold_targets = 4.0;            // quick adapt when delay > this x target_qdelay (htsim)
  double delay_ewma = 0.125;                    // weight of a new sample in the average delay

  std::optional<std::string_view> validate() const;
  bool operator==(const NsccParams&) const = default;
};

struct NsccCounters {
  uint64_t acks = 0;
  uint64_t proportional = 0;
  uint64_t fair = 0;
  uint64_t decreases = 0;       // MDs applied
  uint64_t decreases_held = 0;  // MD quadrant within an RTT of the last MD
  uint64_t no_change = 0;
  uint64_t adjustments = 0;     // batched increases applied
  uint64_t penalties = 0;       // ACKs with rcv_cwnd_pen > 0
  uint64_t trims = 0;
  uint64_t quick_adapts = 0;
  uint64_t rtos = 0;            // expiry scans with a PSN timed out (on_rto)
  uint64_t ignored = 0;         // ACKs after a quick adapt, for packets sent before it
};

class Nscc {
 public:
  Nscc(const NsccParams& params, BitRate line_rate);

  void on_ack(const AckEvent& a, TimeNs now);
  void on_rto(TimeNs now);
  void on_cnp(TimeNs /*now*/) {}
  void on_tx_bytes(uint64_t /*bytes*/, TimeNs /*now*/) {}
  void advance(TimeNs /*now*/) {}
  TimeNs next_deadline() const { return TimeNs::max(); }

  BitRate rate() const { return BitRate(line_bps_); }
  uint64_t window_bytes() const { return static_cast<uint64_t>(cwnd_); }

  double cwnd() const { return cwnd_; }
  double bdp_bytes() const { return bdp_; }
  NsccQuadrant last_quadrant() const { return last_q_; }
  TimeNs base_rtt() const { return base_rtt_; }
  TimeNs avg_delay() const { return TimeNs(static_cast<int64_t>(avg_delay_ns_)); }
  const NsccCounters& counters() const { return ctr_; }
  const NsccParams& params() const { return p_; }

 private:
  void quick_adapt(uint64_t inflight, TimeNs now);
  void clamp();

  NsccParams p_;
  uint64_t line_bps_;
  double bdp_;
  double min_cwnd_;
  double max_cwnd_;
  double cwnd_;
  TimeNs base_rtt_;
  double avg_delay_ns_ = 0;
  double inc_bytes_ = 0;     // accumulated increase (bytes^2 / cwnd applied at adjust)
  std::optional<TimeNs> last_adjust_;
  std::optional<TimeNs> last_decrease_;
  std::optional<TimeNs> qa_end_;
  bool trigger_qa_ = false;
  uint64_t achieved_bytes_ = 0;
  uint64_t bytes_to_ignore_ = 0;
  NsccQuadrant last_q_ = NsccQuadrant::kNone;
  NsccCounters ctr_;
};

}  // namespace sf::nic
