// Delivery-rate samples (rate_sample.h, Linux tcp_rate.c) on hand-made
// send / ACK timelines: the sample is the bottleneck rate when the sender
// paces faster than it, ACK compression does not inflate it, app-limited
// flights are marked, and BBR fed by it finds the bottleneck.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>

#include "nic/cc/bbr.h"
#include "nic/cc/rate_sample.h"

namespace sf::nic {
namespace {

TimeNs ns(int64_t v) { return TimeNs(v); }

// 1. Packets of 4096 B sent every 100 ns (328 Gb/s) through a 4096 B per
// 400 ns bottleneck (81.92 Gb/s) with a 2 us base RTT: once the first flight
// is past, every sample is the bottleneck rate.
TEST(RateSample, BottleneckRate) {
  DeliveryRateSampler r;
  struct Pkt {
    TxRateStamp s;
    TimeNs acked_at;
  };
  std::deque<Pkt> inflight;
  TimeNs link_free{0};
  uint64_t infl = 0;
  double last_bps = 0;
  for (int k = 0; k < 200; ++k) {
    const TimeNs now = ns(k * 100);
    while (!inflight.empty() && inflight.front().acked_at <= now) {
      AckEvent ev;
      r.on_ack(inflight.front().s, 4096, inflight.front().acked_at, ev);
      infl -= 4096;
      ASSERT_GT(ev.delivery_interval.ns(), 0);
      last_bps = static_cast<double>(ev.delivered_bytes) * 8e9 / static_cast<double>(ev.delivery_interval.ns());
      EXPECT_LE(last_bps, 81.92e9 * 1.0001);
      inflight.pop_front();
    }
    const TxRateStamp s = r.on_send(now, infl);
    infl += 4096;
    link_free = std::max(link_free, now) + ns(400);
    inflight.push_back({s, link_free + ns(2000)});
  }
  EXPECT_NEAR(last_bps, 81.92e9, 81.92e9 * 0.001);
}

// 2. ACK compression: ten packets paced 400 ns apart whose ACKs arrive in one
// burst; the send interval bounds the sample (no inflated rate).
TEST(RateSample, AckCompressionBoundedBySendInterval) {
  DeliveryRateSampler r;
  std::deque<TxRateStamp> st;
  for (int k = 0; k < 10; ++k) st.push_back(r.on_send(ns(k * 400), static_cast<uint64_t>(k) * 4096));
  AckEvent ev;
  for (int k = 0; k < 10; ++k) {
    r.on_ack(st[static_cast<size_t>(k)], 4096, ns(10'000), ev);  // all at once
  }
  // The last sample: 40960 B over max(send 3600 ns, ack 10000 ns).
  EXPECT_EQ(ev.delivered_bytes, 40960u);
  EXPECT_EQ(ev.delivery_interval, ns(10'000));
}

// 3. App-limited: packets sent after on_app_limited() carry the mark until
// the bytes in flight at that moment are delivered.
TEST(RateSample, AppLimitedMarking) {
  DeliveryRateSampler r;
  const TxRateStamp a = r.on_send(ns(0), 0);
  r.on_app_limited(4096);
  const TxRateStamp b = r.on_send(ns(100), 4096);
  EXPECT_FALSE(a.app_limited);
  EXPECT_TRUE(b.app_limited);
  AckEvent ev;
  r.on_ack(a, 4096, ns(2000), ev);
  EXPECT_FALSE(ev.app_limited);
  const TxRateStamp c = r.on_send(ns(2100), 4096);  // 4096 delivered, mark ends past it
  r.on_ack(b, 4096, ns(2100), ev);
  EXPECT_TRUE(ev.app_limited);
  EXPECT_TRUE(c.app_limited);
  const TxRateStamp d = r.on_send(ns(2200), 4096);
  EXPECT_FALSE(d.app_limited);
}

// 4. BBR in a closed loop with these samples: one QP, pacing and window
// enforced, a 4096 B per 400 ns bottleneck (81.92 Gb/s) after a 100 G NIC,
// 2 us of propagation. Expect: STARTUP -> DRAIN -> PROBE_BW, BtlBw within 1 %
// of the bottleneck, RTprop = 2 us + one serialisation, the link busy >= 95 %
// over the last millisecond, and the queue bounded (BBR's 2 x BDP window).
TEST(RateSample, BbrFindsTheBottleneck) {
  Bbr bbr(BbrParams{}, BitRate::gbps(100));
  DeliveryRateSampler r;
  struct Pkt {
    TxRateStamp s;
    TimeNs ack_at;
    uint64_t seq_end;
  };
  std::deque<Pkt> q;
  TimeNs now{0}, next_send{0}, link_free{0};
  uint64_t snd_nxt = 0, inflight = 0, delivered_late = 0;
  int64_t max_queue_ns = 0;
  const TimeNs kEnd = TimeNs::from_ms(3), kLate = TimeNs::from_ms(2);
  bool saw_drain = false;
  while (now < kEnd) {
    const TimeNs t_ack = q.empty() ? TimeNs::max() : q.front().ack_at;
    const bool open = inflight + 4096 <= bbr.window_bytes();
    const TimeNs t_send = open ? std::max(next_send, now) : TimeNs::max();
    if (t_ack <= t_send) {
      now = t_ack;
      const Pkt p = q.front();
      q.pop_front();
      inflight -= 4096;
      AckEvent ev;
      ev.acked_bytes = 4096;
      ev.ack_seq = p.seq_end;
      ev.snd_nxt = snd_nxt;
      ev.inflight_bytes = inflight;
      ev.rtt = now - p.s.sent_time;
      r.on_ack(p.s, 4096, now, ev);
      bbr.on_ack(ev, now);
      saw_drain = saw_drain || bbr.phase() == BbrPhase::kDrain;
      if (now >= kLate) delivered_late += 4096;
    } else {
      now = t_send;
      const TxRateStamp s = r.on_send(now, inflight);
      snd_nxt += 4096;
      inflight += 4096;
      max_queue_ns = std::max(max_queue_ns, (link_free - now).ns());
      link_free = std::max(link_free, now) + ns(400);
      q.push_back({s, link_free + ns(2000), snd_nxt});
      next_send = now + bbr.rate().tx_time(4096);
    }
  }
  EXPECT_TRUE(saw_drain);
  EXPECT_EQ(bbr.phase(), BbrPhase::kProbeBw);
  EXPECT_NEAR(static_cast<double>(bbr.btl_bw_bps()), 81.92e9, 81.92e9 * 0.01);
  EXPECT_EQ(bbr.rtprop(), ns(2400));
  EXPECT_GE(static_cast<double>(delivered_late) * 8 / 1e-3, 0.95 * 81.92e9);
  // BDP = 81.92 G x 2.4 us = 24.6 KB = 6 packets; STARTUP's 2.885 gain
  // queues at most ~2 BDP on top of it before DRAIN empties it.
  EXPECT_LT(max_queue_ns, 3 * 2400);
}

}  // namespace
}  // namespace sf::nic
