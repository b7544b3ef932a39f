// Delivery-rate samples for BBR (AckEvent::delivered_bytes,
// delivery_interval, app_limited), as Linux net/ipv4/tcp_rate.c computes
// them (Cheng, Cardwell et al., draft-cheng-iccrg-delivery-rate-estimation):
// each data packet remembers, when first sent, how much had been delivered
// and when; its ACK turns that into "bytes delivered over the time it took",
// the interval being the longer of the send and the ACK intervals (so ACK
// compression cannot inflate the rate). Header-only, no allocation; the QP
// keeps one TxRateStamp with each unacknowledged packet.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/time.h"
#include "nic/cc/cc_event.h"

namespace sf::nic {

// Stored with a packet at its first transmission (not updated on retransmit:
// a retransmitted packet's ACK gives no sample, Karn's rule).
struct TxRateStamp {
  uint64_t delivered = 0;     // bytes delivered when the packet was sent
  TimeNs delivered_time{0};   // when that count was last raised
  TimeNs first_sent_time{0};  // send time of the first packet of this sampling flight
  TimeNs sent_time{0};
  bool app_limited = false;   // sent while the sender was application-limited
};

class DeliveryRateSampler {
 public:
  // A data packet leaves for the first time; `inflight_bytes` before it.
  TxRateStamp on_send(TimeNs now, uint64_t inflight_bytes) {
    if (inflight_bytes == 0) {  // a new flight: intervals restart here
      first_sent_time_ = now;
      delivered_time_ = now;
    }
    return TxRateStamp{delivered_, delivered_time_, first_sent_time_, now, app_limited_until_ != 0};
  }

  // An ACK newly acknowledges `acked_bytes`, the latest of which was sent
  // with `s`. Fills ev.delivered_bytes / delivery_interval / app_limited
  // (interval 0 = no sample).
  void on_ack(const TxRateStamp& s, uint64_t acked_bytes, TimeNs now, AckEvent& ev) {
    delivered_ += acked_bytes;
    delivered_time_ = now;
    if (app_limited_until_ != 0 && delivered_ > app_limited_until_) app_limited_until_ = 0;
    first_sent_time_ = s.sent_time;
    const TimeNs send_interval = s.sent_time - s.first_sent_time;
    const TimeNs ack_interval = now - s.delivered_time;
    const TimeNs interval = std::max(send_interval, ack_interval);
    ev.delivered_bytes = delivered_ - s.delivered;
    ev.delivery_interval = interval.ns() > 0 ? interval : TimeNs(0);
    ev.app_limited = s.app_limited;
  }

  // The sender has nothing to send while the window is open: samples of
  // packets sent from now until `inflight_bytes` more are delivered are
  // app-limited (they may understate the bandwidth).
  void on_app_limited(uint64_t inflight_bytes) { app_limited_until_ = std::max<uint64_t>(delivered_ + inflight_bytes, 1); }

  uint64_t delivered() const { return delivered_; }

 private:
  uint64_t delivered_ = 0;
  TimeNs delivered_time_{0};
  TimeNs first_sent_time_{0};
  uint64_t app_limited_until_ = 0;  // 0 = not app-limited
};

}  // namespace sf::nic
