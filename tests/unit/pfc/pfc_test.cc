// PFC / PAUSE logic under synthetic time: receive timers in quanta at the port
// speed, XOFF/refresh/XON generation, hysteresis, and the closed loop.
#include <gtest/gtest.h>

#include "common/pfc/pfc_generator.h"
#include "common/pfc/pfc_receiver.h"

namespace sf {
namespace {

std::array<uint16_t, kPfcPrios> only(int p, uint16_t q) {
  std::array<uint16_t, kPfcPrios> a{};
  a[p] = q;
  return a;
}

// 1. One quantum is 512 bit times: 0xFFFF quanta are 335.5 us at 100G and
// 3.355 ms at 10G (switch.md table).
TEST(PfcReceiver, QuantaAtPortSpeed) {
  EXPECT_EQ(PfcReceiver(BitRate::gbps(100)).quanta_time(0xFFFF), TimeNs(335540));  // 335.5392 us, rounded up
  EXPECT_EQ(PfcReceiver(BitRate::gbps(10)).quanta_time(0xFFFF), TimeNs(3355392));
  EXPECT_EQ(PfcReceiver(BitRate::gbps(10)).quanta_time(1), TimeNs(52));             // 51.2 ns, rounded up
  EXPECT_EQ(PfcReceiver(BitRate::gbps(400)).quanta_time(1000), TimeNs(1280));
}

// 2. Pause priority 3 for 1000 quanta at 100G: paused for exactly 5.12 us,
// counted as one frame, one transition, 5.12 us of duration.
TEST(PfcReceiver, PauseExpiresAtQuantaTime) {
  PfcReceiver rx(BitRate::gbps(100));
  rx.on_pfc(1u << 3, only(3, 1000), TimeNs(100));
  EXPECT_EQ(rx.paused_mask(TimeNs(100)), 1u << 3);
  EXPECT_EQ(rx.next_expiry(), TimeNs(100 + 5120));
  // While it runs, the duration so far (not yet in counters()), capped at expiry.
  EXPECT_EQ(rx.pause_duration_at(3, TimeNs(2100)), TimeNs(2000));
  EXPECT_EQ(rx.counters().pause_duration[3], TimeNs(0));
  EXPECT_EQ(rx.pause_duration_at(3, TimeNs(9000)), TimeNs(5120));
  EXPECT_EQ(rx.paused_mask(TimeNs(5219)), 1u << 3);
  EXPECT_EQ(rx.paused_mask(TimeNs(5220)), 0u);
  EXPECT_EQ(rx.counters().pause_frames[3], 1u);
  EXPECT_EQ(rx.counters().transitions[3], 1u);
  EXPECT_EQ(rx.counters().pause_duration[3], TimeNs(5120));
  EXPECT_EQ(rx.pause_duration_at(3, TimeNs(9000)), TimeNs(5120));
  EXPECT_EQ(rx.next_expiry(), TimeNs::max());
}

// 2b. next_expiry() is kept, not recomputed per call: with priorities 3 and 5
// paused until different times it is the earlier one, then the later one once
// the first expired (paused_mask), then never once the watchdog's ignore mask
// resumes the last. A frame for nothing (enable 0) leaves it as it was.
TEST(PfcReceiver, NextExpiryFollowsEveryChange) {
  PfcReceiver rx(BitRate::gbps(100));
  std::array<uint16_t, kPfcPrios> q{};
  q[3] = 1000;  // 5120 ns
  q[5] = 2000;  // 10240 ns
  rx.on_pfc((1u << 3) | (1u << 5), q, TimeNs(0));
  EXPECT_EQ(rx.next_expiry(), TimeNs(5120));
  rx.on_pfc(0, q, TimeNs(10));
  EXPECT_EQ(rx.next_expiry(), TimeNs(5120));
  EXPECT_EQ(rx.paused_mask(TimeNs(5119)), (1u << 3) | (1u << 5));
  EXPECT_EQ(rx.paused_mask(TimeNs(5120)), 1u << 5);
  EXPECT_EQ(rx.next_expiry(), TimeNs(10240));
  rx.set_ignore(1u << 5, TimeNs(6000));
  EXPECT_EQ(rx.paused_mask(TimeNs(6000)), 0u);
  EXPECT_EQ(rx.next_expiry(), TimeNs::max());
}

// 3. Time 0 resumes at once; a refresh replaces the timer; a priority whose
// enable bit is clear is not touched even if its time field is set.
TEST(PfcReceiver, XonRefreshAndEnableVector) {
  PfcReceiver rx(BitRate::gbps(100));
  rx.on_pfc(1u << 3, only(3, 1000), TimeNs(0));
  rx.on_pfc(1u << 3, only(3, 1000), TimeNs(4000));       // refresh: until 9120
  EXPECT_EQ(rx.paused_mask(TimeNs(6000)), 1u << 3);
  EXPECT_EQ(rx.next_expiry(), TimeNs(9120));
  rx.on_pfc(1u << 3, only(3, 0), TimeNs(7000));          // XON
  EXPECT_EQ(rx.paused_mask(TimeNs(7000)), 0u);
  EXPECT_EQ(rx.counters().pause_duration[3], TimeNs(7000));
  rx.on_pfc(1u << 4, only(3, 5000), TimeNs(8000));       // bit 3 clear: ignored; bit 4 time 0
  EXPECT_EQ(rx.paused_mask(TimeNs(8000)), 0u);
  EXPECT_EQ(rx.counters().pause_frames[3], 3u);
  EXPECT_EQ(rx.counters().pause_frames[4], 1u);
}

// 4. 802.3x PAUSE pauses every priority.
TEST(PfcReceiver, GlobalPausePausesAll) {
  PfcReceiver rx(BitRate::gbps(10));
  rx.on_pause(100, TimeNs(0));
  EXPECT_EQ(rx.paused_mask(TimeNs(1)), 0xFFu);
  EXPECT_EQ(rx.paused_mask(TimeNs(5120)), 0u);
  EXPECT_EQ(rx.counters().global_pause_frames, 1u);
}

// 5. Ignored priorities (watchdog) are counted but never paused, and setting
// the mask releases a paused priority.
TEST(PfcReceiver, IgnoreMask) {
  PfcReceiver rx(BitRate::gbps(100));
  rx.on_pfc(1u << 3, only(3, 0xFFFF), TimeNs(0));
  rx.set_ignore(1u << 3, TimeNs(10));
  EXPECT_EQ(rx.paused_mask(TimeNs(10)), 0u);
  rx.on_pfc(1u << 3, only(3, 0xFFFF), TimeNs(20));
  EXPECT_EQ(rx.paused_mask(TimeNs(20)), 0u);
  EXPECT_EQ(rx.counters().ignored_frames, 1u);
  EXPECT_EQ(rx.last_frame(3), TimeNs(20));
}

// 6. Generator: XOFF frame on the transition, nothing until half the pause
// has passed, then a refresh; XON (time 0) on release.
TEST(PfcGenerator, XoffRefreshXon) {
  PfcGenerator g(BitRate::gbps(100), 0xFFFF);
  PfcFrameRequest r;
  EXPECT_FALSE(g.poll(TimeNs(0), &r));
  EXPECT_EQ(g.next_deadline(), TimeNs::max());
  g.set_xoff(3, true, TimeNs(1000));
  EXPECT_EQ(g.next_deadline(), TimeNs(0));
  ASSERT_TRUE(g.poll(TimeNs(1000), &r));
  EXPECT_EQ(r.enable, 1u << 3);
  EXPECT_EQ(r.quanta[3], 0xFFFF);
  const TimeNs refresh = g.refresh_interval();
  EXPECT_EQ(refresh, TimeNs(335540 / 2));
  EXPECT_EQ(g.next_deadline(), TimeNs(1000) + refresh);
  EXPECT_FALSE(g.poll(TimeNs(1000) + refresh - TimeNs(1), &r));
  ASSERT_TRUE(g.poll(TimeNs(1000) + refresh, &r));
  EXPECT_EQ(r.quanta[3], 0xFFFF);
  g.set_xoff(3, false, TimeNs(200000));
  ASSERT_TRUE(g.poll(TimeNs(200000), &r));
  EXPECT_EQ(r.enable, 1u << 3);
  EXPECT_EQ(r.quanta[3], 0);
  EXPECT_EQ(g.counters().pause_frames[3], 2u);
  EXPECT_EQ(g.counters().xon_frames[3], 1u);
  EXPECT_EQ(g.counters().pause_duration[3], TimeNs(199000));
  EXPECT_EQ(g.next_deadline(), TimeNs::max());
}

// 7. Two priorities changing together share one frame; an XON for one carries
// the other's (still asserted) pause time.
TEST(PfcGenerator, PrioritiesShareFrames) {
  PfcGenerator g(BitRate::gbps(100));
  PfcFrameRequest r;
  g.set_xoff(3, true, TimeNs(0));
  g.set_xoff(4, true, TimeNs(0));
  ASSERT_TRUE(g.poll(TimeNs(0), &r));
  EXPECT_EQ(r.enable, (1u << 3) | (1u << 4));
  g.set_xoff(4, false, TimeNs(10));
  ASSERT_TRUE(g.poll(TimeNs(10), &r));
  EXPECT_EQ(r.enable, (1u << 3) | (1u << 4));
  EXPECT_EQ(r.quanta[3], 0xFFFF);
  EXPECT_EQ(r.quanta[4], 0);
}

// 8. Closed loop: a generator polled at its deadlines keeps a receiver on the
// other end of a 1 us link paused without a gap for 10 ms of congestion, and
// the receiver resumes when the XON arrives.
TEST(PfcGenerator, PeerStaysPausedWhileCongested) {
  const BitRate speed = BitRate::gbps(400);  // shortest pause: 83.9 us per 0xFFFF
  PfcGenerator g(speed);
  PfcReceiver peer(speed);
  const TimeNs link(1000);
  g.set_xoff(3, true, TimeNs(0));
  TimeNs now(0);
  const TimeNs end = TimeNs::from_ms(10);
  PfcFrameRequest r;
  while (now < end) {
    if (g.poll(now, &r)) peer.on_pfc(r.enable, r.quanta, now + link);
    ASSERT_TRUE(now < link || (peer.paused_mask(now) >> 3 & 1u)) << now.ns();
    now = std::min(g.next_deadline(), now + TimeNs(997));
  }
  g.set_xoff(3, false, end);
  ASSERT_TRUE(g.poll(end, &r));
  peer.on_pfc(r.enable, r.quanta, end + link);
  EXPECT_EQ(peer.paused_mask(end + link), 0u);
  EXPECT_EQ(peer.counters().transitions[3], 1u);
}

// 9. Hysteresis: XOFF at the threshold, XON only at or below xon.
TEST(Hysteresis, XoffXon) {
  const Hysteresis h{1000, 400};
  EXPECT_FALSE(h.next(false, 999));
  EXPECT_TRUE(h.next(false, 1000));
  EXPECT_TRUE(h.next(true, 401));
  EXPECT_FALSE(h.next(true, 400));
}

}  // namespace
}  // namespace sf
