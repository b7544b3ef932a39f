// The congestion-control seams of a Qp (cc_seam.h, docs/cc.md "RC
// integration"): nic/cc's CongestionControl variant, driven by CNPs,
// transmitted bytes and its own timers (DCQCN), and for the ACK-driven
// algorithms (Swift, BBR, HPCC) by every ACK / NAK / read response and the
// retransmission timeout. After every event the pacing rate follows the CC's
// rate and has_data() the CC's window. The host calls next_deadline() /
// advance() of every active QP, so a CC timer reported here is honoured in
// both drivers.
//
// NIC timestamps: each request packet's transmit time (the `now` of the
// host's transmit call: the Node's clock) is kept per PSN; the ACK naming a
// PSN, received at `now`, gives the RTT sample now - sent (Karn: none for a
// retransmitted packet). Nothing here reads a clock or allocates after
// set_congestion_control().
#include <bit>

#include "nic/mrc/transport.h"
#include "nic/rc/qp.h"

namespace sf::nic::rc {

const char* Qp::cc_refusal(const CcChoice& c, bool mrc) { return nic::cc_refusal(c.algorithm, mrc); }

bool Qp::set_congestion_control(const CcChoice& c, BitRate line_rate) {
  if (cc_refusal(c, mrc_ != nullptr) != nullptr) {
    cc_ = make_congestion_control(CcChoice{}, line_rate);
    cc_active_ = cc_acks_ = cc_int_ = false;
    cc_window_ = kNoWindow;
    apply_cc_rate();
    return false;
  }
  // The packet the windows count is this QP's (path MTU, set at RTR).
  CcChoice with_mtu = c;
  auto set_mtu = [&](auto p) {
    p.mtu_bytes = mtu_;
    with_mtu.params = p;
  };
  if (c.algorithm == CcAlgorithm::kSwift) {
    const auto* p = std::get_if<SwiftParams>(&c.params);
    set_mtu(p != nullptr ? *p : SwiftParams{});
  } else if (c.algorithm == CcAlgorithm::kBbr) {
    const auto* p = std::get_if<BbrParams>(&c.params);
    set_mtu(p != nullptr ? *p : BbrParams{});
  } else if (c.algorithm == CcAlgorithm::kNscc) {
    // NSCC on an MRC QP: the window is for every plane the QP sprays over,
    // and its base RTT is the QP's (MrcQpAttr::base_rtt_ns) unless cc_params
    // named one.
    const auto* p = std::get_if<NsccParams>(&c.params);
    NsccParams np = p != nullptr ? *p : NsccParams{};
    if (mrc_ != nullptr) {
      line_rate = BitRate(line_rate.bps() * mrc_->num_planes());
      if (np.base_rtt_from_qp) np.base_rtt = TimeNs(mrc_->attr().base_rtt_ns);
    }
    set_mtu(np);
  }
  cc_ = make_congestion_control(with_mtu, line_rate);
  cc_active_ = c.algorithm != CcAlgorithm::kNone;
  cc_acks_ = cc_needs_acks(c.algorithm);
  // Swift's remote_delay asks the responder for its turnaround in the INT
  // echo (an sf-nic peer; docs/cc.md "Endpoint delay").
  const auto* sw = std::get_if<SwiftParams>(&c.params);
  const bool remote_delay = c.algorithm == CcAlgorithm::kSwift && sw != nullptr && sw->remote_delay;
  cc_int_ = c.algorithm == CcAlgorithm::kHpcc || remote_delay;
  cc_int_open_flags_ = remote_delay ? wire::IntTail::kFlagTurnaround : 0;
  if (cc_acks_) {
    const uint32_t win = env_.cfg != nullptr ? env_.cfg->max_unacked_psns : 128;
    cc_tx_.assign(std::bit_ceil(win + 2), TxStamp{});
    cc_tx_mask_ = static_cast<uint32_t>(cc_tx_.size() - 1);
  } else {
    cc_tx_.clear();
    cc_tx_mask_ = 0;
  }
  cc_reset_tracking();
  cc_acked_psn_ = acked_psn_;
  cc_stats_ = QpCcStats{};
  cc_window_ = nic::cc_window_bytes(cc_);
  apply_cc_rate();
  return true;
}

void Qp::cc_reset_tracking() {
  for (TxStamp& t : cc_tx_) t = TxStamp{};
  cc_snd_nxt_ = cc_ack_seq_ = cc_inflight_ = 0;
  cc_rs_ = DeliveryRateSampler{};
  rx_int_ = {};
  rx_int_present_ = false;
  int_rx_pending_ = false;
}

void Qp::apply_cc_rate() {
  // The cap: rate_limit and the static rate, the smaller of those set.
  BitRate cap = rate_limit_;
  if (static_rate_.bps() != 0 && (cap.bps() == 0 || static_rate_.bps() < cap.bps())) cap = static_rate_;
  BitRate r = cap;
  if (cc_active_) {
    const BitRate c = nic::cc_rate(cc_);
    r = cap.bps() != 0 && cap.bps() < c.bps() ? cap : c;
  }
  if (r == rate_) return;
  rate_ = r;
  // The bucket holds max_burst_sz at the pacing rate in force (a 128-bit
  // division only when the rate changed and there is a bucket).
  pace_burst_ns_ = pace_burst_bytes_ == 0 ? TimeNs(0) : rate_.tx_time(pace_burst_bytes_);
}

void Qp::cc_on_cnp(TimeNs now) {
  if (!cc_active_) return;
  nic::cc_on_cnp(cc_, now);
  apply_cc_rate();
}

void Qp::cc_on_tx_bytes(uint64_t bytes, TimeNs now) {
  if (!cc_active_) return;
  nic::cc_on_tx_bytes(cc_, bytes, now);
  apply_cc_rate();
}

TimeNs Qp::cc_next_deadline() const { return cc_active_ ? nic::cc_next_deadline(cc_) : TimeNs::max(); }

void Qp::cc_advance(TimeNs now) {
  if (!cc_active_) return;
  nic::cc_advance(cc_, now);
  apply_cc_rate();
}

void Qp::cc_track_tx(Psn psn, uint32_t bytes, TimeNs now) {
  // Resent though already acknowledged (go-back-N rewound inside a WQE, a
  // late ACK then covered it): its ACK will be stale, so it is not tracked.
  if (!psn.after(acked_psn_)) return;
  TxStamp& t = cc_tx_[psn.value() & cc_tx_mask_];
  if (t.psn == psn.value()) {  // a retransmission (go-back-N took it out of flight)
    t.retransmitted = true;
    t.sent = now;
    if (!t.in_flight) {
      t.in_flight = true;
      cc_inflight_ += t.bytes;
    }
    return;
  }
  if (t.psn != TxStamp::kEmpty && t.in_flight) cc_inflight_ -= t.bytes;  // not reached: the PSN window
  t.psn = psn.value();
  t.bytes = bytes;
  t.sent = now;
  t.rate = cc_rs_.on_send(now, cc_inflight_);
  cc_snd_nxt_ += bytes;
  t.end_seq = cc_snd_nxt_;
  t.in_flight = true;
  t.retransmitted = false;
  cc_inflight_ += bytes;
}

uint64_t Qp::cc_release(Psn from, Psn to, bool lost, uint64_t* ack_seq) {
  const int32_t n = Psn::diff(to, from);
  if (n <= 0) return 0;
  uint64_t bytes = 0;
  auto one = [&](TxStamp& t) {
    if (lost) {
      if (!t.in_flight) return;
      t.in_flight = false;
      cc_inflight_ -= t.bytes;
      bytes += t.bytes;
      return;
    }
    if (t.in_flight) cc_inflight_ -= t.bytes;
    bytes += t.bytes;
    if (t.end_seq > *ack_seq) *ack_seq = t.end_seq;
    t = TxStamp{};
  };
  if (static_cast<uint32_t>(n) > cc_tx_mask_) {
    // A long READ's PSNs: visit the ring once, not every PSN.
    for (TxStamp& t : cc_tx_) {
      if (t.psn != TxStamp::kEmpty && Psn(t.psn).after(from) && !Psn(t.psn).after(to)) one(t);
    }
  } else {
    for (Psn p = from + 1;; ++p) {
      TxStamp& t = cc_tx_[p.value() & cc_tx_mask_];
      if (t.psn == p.value()) one(t);
      if (p == to) break;
    }
  }
  return bytes;
}

void Qp::cc_feedback(AckKind kind, Psn trigger, TimeNs now) {
  const TxStamp& tt = cc_tx_[trigger.value() & cc_tx_mask_];
  const bool sample = kind == AckKind::kAck && tt.psn == trigger.value() && !tt.retransmitted;
  const TimeNs sent = tt.sent;
  const TxRateStamp rs = tt.rate;
  AckEvent ev;
  ev.kind = kind;
  ev.acked_bytes = cc_release(cc_acked_psn_, acked_psn_, false, &cc_ack_seq_);
  cc_acked_psn_ = acked_psn_;
  ev.ack_seq = cc_ack_seq_;
  ev.snd_nxt = cc_snd_nxt_;
  ev.inflight_bytes = cc_inflight_;
  if (sample) {
    ev.rtt = now - sent;
    if (ev.rtt.ns() < 0) ev.rtt = TimeNs(0);
    ++cc_stats_.rtt_samples;
    cc_stats_.rtt_sum_ns += static_cast<uint64_t>(ev.rtt.ns());
    cc_stats_.rtt_last = ev.rtt;
    if (ev.rtt < cc_stats_.rtt_min) cc_stats_.rtt_min = ev.rtt;
    if (ev.rtt > cc_stats_.rtt_max) cc_stats_.rtt_max = ev.rtt;
    if (ev.acked_bytes > 0) cc_rs_.on_ack(rs, ev.acked_bytes, now, ev);
  }
  if (rx_int_present_ && (rx_int_flags_ & wire::IntTail::kFlagEcho) != 0) {
    ev.int_hops = rx_int_;
    ++cc_stats_.int_acks;
    if ((rx_int_flags_ & wire::IntTail::kFlagTurnaround) != 0 && sample) {
      // Only with the RTT it belongs to (Karn): the turnaround of the
      // request this ACK answers.
      ev.remote_delay = TimeNs(rx_int_turnaround_ns_);
      ++cc_stats_.remote_delay_samples;
      cc_stats_.remote_delay_sum_ns += rx_int_turnaround_ns_;
    }
  }
  ++cc_stats_.acks;
  nic::cc_on_ack(cc_, ev, now);
  cc_window_ = nic::cc_window_bytes(cc_);
  apply_cc_rate();
}

void Qp::cc_rto(TimeNs now) {
  ++cc_stats_.rtos;
  nic::cc_on_rto(cc_, now);
  cc_window_ = nic::cc_window_bytes(cc_);
  apply_cc_rate();
}

uint32_t Qp::next_request_bytes(const SendWqe& w) const {
  if (w.opcode == verbs::WrOpcode::kRdmaRead) return 0;
  const uint32_t off = tx_pkt_ * mtu_;
  return w.length > off ? std::min(mtu_, w.length - off) : 0;
}

}  // namespace sf::nic::rc
