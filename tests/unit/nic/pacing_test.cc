// QP pacing when the driver serves the node late (docs/nic.md "Pacing"):
// NicNode driven by hand at poll times that never line up with the
// departures (a real-time poll loop), instead of at its exact wakeups (the
// simulator, nic_node_test). The Carousel rule: a frame scheduled for s makes
// the next due at max(now, s + wire time / rate) (strict: max_burst_sz = 0,
// the default; the bucket is pacing_burst_test.cc), so
//   - lateness below a gap costs no rate (the schedule does not drift),
//   - a stall longer than a gap is not made up (no burst), and is counted
//     (pace_lost_ns),
//   - an idle QP banks no time, and the time it was due but had nothing to
//     send is counted (pace_idle_ns).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"
#include "tests/unit/nic/pacing_driver.h"

namespace sf::nic::test {
namespace {

constexpr BitRate kRate = BitRate::gbps(10);

struct Pair {
  NicNode a{one_host_cfg(0), sf::test::mbuf_pool()};
  NicNode peer{one_host_cfg(1), sf::test::mbuf_pool()};
  Endpoint ea = make_endpoint(a, 0, 1 << 20);
  Endpoint eb = make_endpoint(peer, 0, 1 << 20);
  Pair() {
    EXPECT_EQ(connect_qp(ea, eb, ConnParams{}), 0);
    EXPECT_EQ(set_rate_limit(ea.qp, static_cast<uint32_t>(kRate.bps() / 1000)), 0);
  }
  void post(uint64_t id) { ASSERT_EQ(post_write(ea, id, 0, 1 << 16, eb.addr(), eb.mr->rkey), 0); }
  const rc::QpCounters& counters() { return a.host(0).qp_slot(0).counters(); }
};

// 1. One QP at 10 Gb/s with 128 frames queued (8 x 64 KiB WRITEs), polled
//    every 0.7-2.7 us. Expect: every frame leaves at the first poll at or
//    after its Carousel time (s[k+1] = max(d[k], s[k] + gap[k])), never
//    earlier; since no poll is a gap late, s[k+1] = s[k] + gap[k] throughout
//    (no drift), the rate over the 127 gaps is within 1 % of 10 Gb/s, and
//    nothing is counted lost or idle.
TEST(NicPacingLate, LatenessBelowAGapCostsNoRate) {
  Pair p;
  HandDriver d(p.a);
  Jitter j;
  TimeNs now(1000);
  d.poll(now);  // nothing to send; the node's time is now 1 us
  for (uint64_t i = 0; i < 8; ++i) p.post(i);
  const TimeNs posted = now;
  while (d.sent.size() < 128 && now < TimeNs::from_us(1000)) {
    now = now + j.next();
    d.poll(now);
  }
  ASSERT_EQ(d.sent.size(), 128u);
  // The first frame is due when it was posted and leaves at the next poll.
  EXPECT_EQ(d.sent[0].at, first_poll_at_or_after(d.polls, posted + TimeNs(1)));
  TimeNs s = posted;
  uint64_t wire = 0;
  for (size_t k = 0; k + 1 < d.sent.size(); ++k) {
    const TimeNs on_schedule = s + kRate.tx_time(wire_bytes(d.sent[k].len));
    s = std::max(d.sent[k].at, on_schedule);
    EXPECT_EQ(s, on_schedule) << "frame " << k + 1 << ": the schedule slipped";
    EXPECT_EQ(d.sent[k + 1].at, first_poll_at_or_after(d.polls, s)) << "frame " << k + 1;
    wire += wire_bytes(d.sent[k].len);
  }
  const double secs = (d.sent.back().at - d.sent.front().at).ns() / 1e9;
  const double gbps = static_cast<double>(wire) * 8 / secs / 1e9;
  EXPECT_NEAR(gbps, 10.0, 0.1);
  EXPECT_EQ(p.counters().pace_lost_ns, 0u);
  EXPECT_EQ(p.counters().pace_idle_ns, 0u);
}

// 2. The same QP, but after its 20th frame the driver stalls for 100 us (a
//    descheduled process). Expect: at the end of the stall the frame that
//    was due leaves with at most one more (the one whose own time also
//    passed: max(now, s + gap) = now), then the next a full gap later: the
//    stall is not made up by a burst. pace_lost_ns = the stall less the one
//    gap the frame was due anyway.
TEST(NicPacingLate, AStallIsNotMadeUp) {
  Pair p;
  HandDriver d(p.a);
  Jitter j;
  TimeNs now(1000);
  d.poll(now);
  for (uint64_t i = 0; i < 8; ++i) p.post(i);
  TimeNs stall_end = TimeNs::max();
  TimeNs due_20 = TimeNs::max();  // the scheduled departure of frame 20 (0-based)
  while (d.sent.size() < 60 && now < TimeNs::from_us(1000)) {
    now = now + j.next();
    d.poll(now);
    EXPECT_LE(d.last_burst, 2u);
    if (d.sent.size() == 20 && stall_end == TimeNs::max()) {
      due_20 = p.a.host(0).qp_slot(0).pace_next();
      stall_end = now + TimeNs::from_us(100);
      now = stall_end;
      d.poll(now);
      EXPECT_EQ(d.last_burst, 2u);
    }
  }
  ASSERT_EQ(d.sent.size(), 60u);
  ASSERT_EQ(d.sent[20].at, stall_end);
  ASSERT_EQ(d.sent[21].at, stall_end);
  EXPECT_EQ(d.sent[22].at, first_poll_at_or_after(d.polls, stall_end + kRate.tx_time(wire_bytes(d.sent[21].len))));
  EXPECT_EQ(p.counters().pace_lost_ns,
            static_cast<uint64_t>((stall_end - due_20 - kRate.tx_time(wire_bytes(d.sent[20].len))).ns()));
  EXPECT_EQ(p.counters().pace_idle_ns, 0u);
  EXPECT_EQ(p.counters().pace_burst_bytes, 0u);
}

// 3. One 64 KiB WRITE, then nothing for 200 us, then another. Expect: the
//    second message's first frame leaves at the first poll after the post
//    (nothing banked from the idle time: its second frame is a full gap
//    later), and pace_idle_ns = post time - the time the frame after the
//    first message was due.
TEST(NicPacingLate, IdleTimeIsNotBanked) {
  Pair p;
  HandDriver d(p.a);
  Jitter j;
  TimeNs now = send_first_message(p, d, j);
  ASSERT_EQ(d.sent.size(), 16u);
  const TimeNs was_due = p.a.host(0).qp_slot(0).pace_next();
  now = now + TimeNs::from_us(200);
  d.poll(now);  // the node's time is `now` when the app posts
  ASSERT_EQ(d.sent.size(), 16u);
  const TimeNs posted = now;
  p.post(2);
  while (d.sent.size() < 18 && now < TimeNs::from_us(2000)) {
    now = now + j.next();
    d.poll(now);
  }
  ASSERT_EQ(d.sent.size(), 18u);
  EXPECT_EQ(d.sent[16].at, first_poll_at_or_after(d.polls, posted + TimeNs(1)));
  EXPECT_EQ(d.sent[17].at, first_poll_at_or_after(d.polls, posted + kRate.tx_time(wire_bytes(d.sent[16].len))));
  EXPECT_EQ(p.counters().pace_idle_ns, static_cast<uint64_t>((posted - was_due).ns()));
  EXPECT_EQ(p.counters().pace_lost_ns, 0u);
  EXPECT_EQ(p.counters().pace_burst_bytes, 0u);
}

}  // namespace
}  // namespace sf::nic::test
