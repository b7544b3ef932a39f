// QP pacing with a burst bucket (ibv_modify_qp_rate_limit max_burst_sz = B,
// docs/nic.md "Pacing"), driven by hand at poll times that never line up with
// the departures (pacing_driver.h). The rule: a frame scheduled for s makes
// the next due at max(now - B / rate, s + wire time / rate), so
//   - a QP served late (lost) or idle keeps at most B / rate of that time:
//     at most B bytes leave back to back beyond what strict pacing (B = 0)
//     sends, counted in pace_burst_bytes, then even gaps again;
//   - the time beyond the bucket is counted in pace_lost_ns / pace_idle_ns;
//   - the bucket is B bytes at whatever the pacing rate is.
// B is counted in wire bytes, like the rate. The strict cases (B = 0) are
// pacing_test.cc; here each scenario runs strict and with a bucket.
#include <gtest/gtest.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <vector>

#include "nic/cc/congestion_control.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"
#include "tests/unit/nic/pacing_driver.h"

namespace sf::nic::test {
namespace {

constexpr BitRate kRate = BitRate::gbps(10);
constexpr uint32_t kFrames = 8;  // the bucket, in MIDDLE frames

struct Pair {
  NicNode a{one_host_cfg(0), sf::test::mbuf_pool()};
  NicNode peer{one_host_cfg(1), sf::test::mbuf_pool()};
  Endpoint ea = make_endpoint(a, 0, 1 << 20);
  Endpoint eb = make_endpoint(peer, 0, 1 << 20);
  explicit Pair(uint32_t burst_bytes) {
    EXPECT_EQ(connect_qp(ea, eb, ConnParams{}), 0);
    EXPECT_EQ(set_rate_limit(ea.qp, static_cast<uint32_t>(kRate.bps() / 1000), burst_bytes), 0);
  }
  void post(uint64_t id) { ASSERT_EQ(post_write(ea, id, 0, 1 << 16, eb.addr(), eb.mr->rkey), 0); }
  rc::Qp& qp() { return a.host(0).qp_slot(0); }
  const rc::QpCounters& counters() { return qp().counters(); }
};

// The frame length of a MIDDLE WRITE frame at this MTU (learnt from one
// strict run: frame 1 of a 64 KiB WRITE).
uint32_t middle_len() {
  Pair p(0);
  HandDriver d(p.a);
  TimeNs now(1000);
  d.poll(now);
  p.post(1);
  for (int i = 0; i < 10 && d.sent.size() < 2; ++i) d.poll(now = now + TimeNs::from_us(4));
  return d.sent.size() < 2 ? 0 : d.sent[1].len;
}

// kFrames MIDDLE frames' wire bytes, plus 16 so that the bucket's time
// (rounded up once) is at least kFrames gaps (each rounded up).
uint32_t bucket_bytes() { return kFrames * static_cast<uint32_t>(wire_bytes(middle_len())) + 16; }

struct StallRun {
  std::vector<Departure> sent;
  std::vector<TimeNs> polls;
  TimeNs posted;
  TimeNs stall_end;
  uint16_t burst_at_stall_end = 0;
  rc::QpCounters ctr;
  TimeNs pace_next_at_end;
  BitRate rate_after_stall;
};

// 8 x 64 KiB WRITEs posted at `posted`, polled every 0.7-2.7 us; after the
// 20th frame the driver stalls 100 us (a descheduled process); optionally
// the rate limit changes to `rate2` just before the stall. 60 frames.
// With `change_at_stall_end` the rate limit changes when the stall ends
// instead (the QP then holds credit at the old rate).
StallRun run_stall(uint32_t burst_bytes, BitRate rate2 = kRate, bool dcqcn_cnp = false,
                   bool change_at_stall_end = false) {
  Pair p(burst_bytes);
  if (dcqcn_cnp) p.qp().set_congestion_control(CcChoice{CcAlgorithm::kDcqcn}, kRate);
  HandDriver d(p.a);
  Jitter j;
  StallRun r;
  TimeNs now(1000);
  d.poll(now);
  for (uint64_t i = 0; i < 8; ++i) p.post(i);
  r.posted = now;
  r.stall_end = TimeNs::max();
  while (d.sent.size() < 60 && now < TimeNs::from_us(1000)) {
    now = now + j.next();
    d.poll(now);
    if (d.sent.size() == 20 && r.stall_end == TimeNs::max()) {
      if (dcqcn_cnp) p.qp().cc_on_cnp(now);
      if (rate2 != kRate && !change_at_stall_end) {
        EXPECT_EQ(set_rate_limit(p.ea.qp, static_cast<uint32_t>(rate2.bps() / 1000), burst_bytes), 0);
      }
      r.stall_end = now + TimeNs::from_us(100);
      now = r.stall_end;
      if (rate2 != kRate && change_at_stall_end) {
        EXPECT_EQ(set_rate_limit(p.ea.qp, static_cast<uint32_t>(rate2.bps() / 1000), burst_bytes), 0);
      }
      d.poll(now);
      r.burst_at_stall_end = d.last_burst;
      r.rate_after_stall = p.qp().rate();
    }
  }
  r.sent = d.sent;
  r.polls = d.polls;
  r.ctr = p.counters();
  r.pace_next_at_end = p.qp().pace_next();
  return r;
}

// The schedule after frame `from`: each next frame leaves at the first poll
// at or after s + gap (no drift), s starting at `s`. Returns the frames checked.
size_t expect_even_gaps(const StallRun& r, size_t from, TimeNs s, BitRate rate) {
  size_t n = 0;
  for (size_t k = from; k + 1 < r.sent.size(); ++k, ++n) {
    s = s + rate.tx_time(wire_bytes(r.sent[k].len));
    EXPECT_EQ(r.sent[k + 1].at, first_poll_at_or_after(r.polls, s)) << "frame " << k + 1;
  }
  return n;
}

// The schedule of frame 21 + kFrames (the last of the burst): the bucket
// floor (end of the stall - B / rate) plus the 8 bucket frames' gaps.
TimeNs last_burst_frame_sched(const StallRun& r, BitRate rate, uint32_t b) {
  TimeNs s = r.stall_end - rate.tx_time(b);
  for (size_t k = 21; k < 21 + kFrames; ++k) s = s + rate.tx_time(wire_bytes(r.sent[k].len));
  return s;
}

// 1. Strict (B = 0) and bucket (B = 8 frames) side by side, the same stall of
//    100 us after frame 20. Expect: strict sends 2 frames at the end of the
//    stall (the one due and the one whose own time passed too) and counts
//    nothing from the bucket; with B, 2 + 8 frames leave at the end of the
//    stall, the 8 extra counted in pace_burst_bytes, then even gaps at the
//    rate from there on (frame 30 a gap after the end of the stall, as
//    strict's frame 22); pace_lost_ns is B / rate less than strict's.
TEST(NicPacingBurst, AfterAStallAtMostBBytesBackToBackThenEvenGaps) {
  const uint32_t b = bucket_bytes();
  const uint32_t mid = middle_len();
  ASSERT_GT(mid, 4096u);
  const StallRun strict = run_stall(0);
  const StallRun burst = run_stall(b);
  ASSERT_EQ(strict.sent.size(), 60u);
  ASSERT_EQ(burst.sent.size(), 60u);
  EXPECT_EQ(strict.burst_at_stall_end, 2u);
  EXPECT_EQ(burst.burst_at_stall_end, 2u + kFrames);
  for (size_t k = 20; k < 30; ++k) EXPECT_EQ(burst.sent[k].at, burst.stall_end) << "frame " << k;
  EXPECT_GT(burst.sent[30].at, burst.stall_end);
  EXPECT_EQ(strict.ctr.pace_burst_bytes, 0u);
  EXPECT_EQ(burst.ctr.pace_burst_bytes, uint64_t{kFrames} * mid);
  // Frames 21..28 are MIDDLE frames of the second message (16 per message).
  for (size_t k = 21; k < 29; ++k) EXPECT_EQ(burst.sent[k].len, mid);
  // After the burst: even gaps (the last burst frame scheduled within ns of the stall's end).
  EXPECT_EQ(expect_even_gaps(burst, 29, last_burst_frame_sched(burst, kRate, b), kRate), 30u);
  EXPECT_EQ(expect_even_gaps(strict, 21, strict.stall_end, kRate), 38u);
  const auto bucket_ns = static_cast<uint64_t>(kRate.tx_time(b).ns());
  EXPECT_EQ(strict.ctr.pace_lost_ns - burst.ctr.pace_lost_ns, bucket_ns);
  EXPECT_EQ(burst.ctr.pace_idle_ns, 0u);
}

// 2. The long-run mean is exact: in both runs the schedule of the frame after
//    the last one = the first frame's time + every frame's wire time at the
//    rate + pace_lost_ns (nothing else is gained or lost), and with the
//    bucket the 60 frames take B / rate less real time than strict.
TEST(NicPacingBurst, TheScheduleIsWireTimePlusLostExactly) {
  for (const uint32_t b : {0u, bucket_bytes()}) {
    const StallRun r = run_stall(b);
    ASSERT_EQ(r.sent.size(), 60u);
    int64_t wire_ns = 0;
    for (const Departure& f : r.sent) wire_ns += kRate.tx_time(wire_bytes(f.len)).ns();
    EXPECT_EQ(r.pace_next_at_end.ns(), r.posted.ns() + wire_ns + static_cast<int64_t>(r.ctr.pace_lost_ns)) << "B " << b;
  }
  const StallRun strict = run_stall(0);
  const StallRun burst = run_stall(bucket_bytes());
  const TimeNs saved = (strict.sent.back().at - strict.sent.front().at) - (burst.sent.back().at - burst.sent.front().at);
  // Frame 59 leaves at the first poll after its time: within one poll interval (< 2.7 us) of B / rate.
  EXPECT_NEAR(static_cast<double>(saved.ns()), static_cast<double>(kRate.tx_time(bucket_bytes()).ns()), 2700.0);
}

// 3. Idle banking is capped at B: one 64 KiB WRITE, 200 us of nothing (far
//    more than B / rate = 26.7 us), another WRITE. Expect: the second
//    message's first 1 + 8 frames leave at the first poll after the post
//    (strict: 1), 8 of them counted as from the bucket, the next a gap
//    later; pace_idle_ns = the idle time less B / rate.
TEST(NicPacingBurst, IdleBankingIsCappedAtB) {
  const uint32_t b = bucket_bytes();
  Pair p(b);
  HandDriver d(p.a);
  Jitter j;
  TimeNs now = send_first_message(p, d, j);
  ASSERT_EQ(d.sent.size(), 16u);
  const TimeNs was_due = p.qp().pace_next();
  now = now + TimeNs::from_us(200);
  d.poll(now);
  const TimeNs posted = now;
  p.post(2);
  const uint64_t burst_before = p.counters().pace_burst_bytes;
  EXPECT_EQ(burst_before, 0u);  // the first message found an empty bucket (a fresh QP banks nothing)
  now = now + TimeNs(1000);
  d.poll(now);
  EXPECT_EQ(d.last_burst, 1u + kFrames);
  while (d.sent.size() < 32 && now < TimeNs::from_us(2000)) {
    now = now + j.next();
    d.poll(now);
  }
  ASSERT_EQ(d.sent.size(), 32u);
  uint64_t bucket_frame_bytes = 0;
  for (size_t k = 16; k < 16 + kFrames; ++k) bucket_frame_bytes += d.sent[k].len;
  EXPECT_EQ(p.counters().pace_burst_bytes, bucket_frame_bytes);
  const TimeNs bucket = kRate.tx_time(b);
  EXPECT_EQ(p.counters().pace_idle_ns, static_cast<uint64_t>((posted - bucket - was_due).ns()));
  EXPECT_EQ(p.counters().pace_lost_ns, 0u);
  // Frame 16 + 8 was scheduled at most a gap after the post; from it on, even gaps.
  TimeNs s = posted - bucket;
  for (size_t k = 16; k < 16 + kFrames; ++k) s = s + kRate.tx_time(wire_bytes(d.sent[k].len));
  for (size_t k = 16 + kFrames; k + 1 < d.sent.size(); ++k) {
    s = s + kRate.tx_time(wire_bytes(d.sent[k].len));
    EXPECT_EQ(d.sent[k + 1].at, first_poll_at_or_after(d.polls, s)) << "frame " << k + 1;
  }
}

// 4. A rate change with a bucket (what congestion control or a new rate
//    limit does): 10 Gb/s, then 5 Gb/s just before the stall. Expect: the
//    bucket is still B bytes (twice the time at half the rate): 2 + 8
//    frames at the end of the stall, then even gaps at 5 Gb/s.
TEST(NicPacingBurst, TheBucketIsBBytesAtTheRateInForce) {
  const BitRate half = BitRate::gbps(5);
  const StallRun r = run_stall(bucket_bytes(), half);
  ASSERT_EQ(r.sent.size(), 60u);
  EXPECT_EQ(r.burst_at_stall_end, 2u + kFrames);
  EXPECT_EQ(r.ctr.pace_burst_bytes, uint64_t{kFrames} * middle_len());
  EXPECT_EQ(expect_even_gaps(r, 29, last_burst_frame_sched(r, half, bucket_bytes()), half), 30u);
}

// 4b. A rate cut while the QP holds credit (congestion control): DCQCN
//     (NVIDIA parameters) under the 10 Gb/s limit, a CNP just before the
//     stall; the cut lands at the end of DCQCN's rate-reduce period, i.e.
//     during the first frame at the end of the stall, after that frame
//     granted the credit (B / rate at 10 Gb/s: 8 frame times). Expect: the
//     credit keeps its time, so at the cut rate (~5 Gb/s) it is half the
//     bytes: 2 + 4 frames at the end of the stall, 4 counted from the bucket.
//     A cut never lets more than B bytes out (a rise is clamped to B bytes at
//     the new rate at the next filing or departure, scenario 4's rule).
TEST(NicPacingBurst, ARateCutShrinksTheCreditNeverGrowsIt) {
  const StallRun r = run_stall(bucket_bytes(), kRate, true);
  ASSERT_EQ(r.sent.size(), 60u);
  EXPECT_LT(r.rate_after_stall.bps(), BitRate::gbps(6).bps());
  EXPECT_GT(r.rate_after_stall.bps(), BitRate::gbps(4.5).bps());
  EXPECT_EQ(r.burst_at_stall_end, 2u + kFrames / 2);
  EXPECT_EQ(r.ctr.pace_burst_bytes, uint64_t{kFrames / 2} * middle_len());
}

// 4c. A rate rise while the QP holds credit: 10 Gb/s through a stall of
//     100 us, the limit raised to 20 Gb/s as the stall ends (before the
//     driver polls). Expect: still at most B bytes from the bucket (B / rate
//     is half the time at twice the rate): 2 + 8 frames at the end of the
//     stall, 8 counted from the bucket, then even gaps at 20 Gb/s. (The
//     credit the rise trims is booked as pace_lost_ns: docs/nic.md.)
TEST(NicPacingBurst, ARateRiseWhileCreditIsHeldStillSendsAtMostB) {
  const BitRate twice = BitRate::gbps(20);
  const StallRun r = run_stall(bucket_bytes(), twice, false, true);
  ASSERT_EQ(r.sent.size(), 60u);
  EXPECT_EQ(r.rate_after_stall, twice);
  EXPECT_EQ(r.burst_at_stall_end, 2u + kFrames);
  EXPECT_EQ(r.ctr.pace_burst_bytes, uint64_t{kFrames} * middle_len());
  EXPECT_EQ(expect_even_gaps(r, 29, last_burst_frame_sched(r, twice, bucket_bytes()), twice), 30u);
}

// 5. Edge: a bucket smaller than one frame (B = half a frame's wire bytes).
//    Expect: no extra frame back to back (2 at the end of the stall, as
//    strict), nothing counted from the bucket; the schedule keeps B / rate
//    of the lost time: the next frame is due B / rate earlier than strict's
//    (one gap shortened), even gaps after; pace_lost_ns = strict's - B / rate.
TEST(NicPacingBurst, ABucketBelowOneFrameSendsNoExtraFrame) {
  const uint32_t b = static_cast<uint32_t>(wire_bytes(middle_len())) / 2;
  const StallRun strict = run_stall(0);
  const StallRun r = run_stall(b);
  ASSERT_EQ(r.sent.size(), 60u);
  EXPECT_EQ(r.burst_at_stall_end, 2u);
  EXPECT_EQ(r.ctr.pace_burst_bytes, 0u);
  EXPECT_EQ(expect_even_gaps(r, 21, r.stall_end - kRate.tx_time(b), kRate), 38u);
  EXPECT_EQ(strict.ctr.pace_lost_ns - r.ctr.pace_lost_ns, static_cast<uint64_t>(kRate.tx_time(b).ns()));
}

// 6. ibv_modify_qp_rate_limit's errors (rdma-core, mlx5 provider): EINVAL for
//    a comp_mask, a burst or typical packet size without a rate, a null attr;
//    0 otherwise, and ibv_query_qp reports the rate (kbps), the QP keeps the
//    burst. A rate of 0 with no burst = unpaced.
TEST(NicPacingBurst, ModifyQpRateLimitChecksItsArguments) {
  Pair p(0);
  v::QpRateLimitAttr a;
  a.rate_limit = 1'000'000;
  a.comp_mask = 1;
  EXPECT_EQ(v::modify_qp_rate_limit(p.ea.qp, &a), EINVAL);
  a = v::QpRateLimitAttr{};
  a.max_burst_sz = 65536;
  EXPECT_EQ(v::modify_qp_rate_limit(p.ea.qp, &a), EINVAL);
  a = v::QpRateLimitAttr{};
  a.typical_pkt_sz = 4096;
  EXPECT_EQ(v::modify_qp_rate_limit(p.ea.qp, &a), EINVAL);
  EXPECT_EQ(v::modify_qp_rate_limit(p.ea.qp, nullptr), EINVAL);
  a = v::QpRateLimitAttr{};
  a.rate_limit = 1'000'000;  // a valid attr: only the missing QP is wrong
  EXPECT_EQ(v::modify_qp_rate_limit(nullptr, &a), EINVAL);
  // None of the refused calls changed the QP (10 Gb/s, strict, from Pair).
  EXPECT_EQ(p.qp().rate(), kRate);
  EXPECT_EQ(p.qp().max_burst_bytes(), 0u);
  a = v::QpRateLimitAttr{};
  a.rate_limit = 2'500'000;
  a.max_burst_sz = 65536;
  a.typical_pkt_sz = 4096;
  EXPECT_EQ(v::modify_qp_rate_limit(p.ea.qp, &a), 0);
  EXPECT_EQ(p.qp().rate(), BitRate::gbps(2.5));
  EXPECT_EQ(p.qp().max_burst_bytes(), 65536u);
  v::QpAttr qa;
  v::QpInitAttr qi;
  ASSERT_EQ(v::query_qp(p.ea.qp, &qa, 0, &qi), 0);
  EXPECT_EQ(qa.rate_limit, 2'500'000u);
  // The largest bucket at the smallest rate (4 GiB at 1 kbps: 3.4e16 ns of
  // credit) is accepted; the QP keeps it as given.
  a = v::QpRateLimitAttr{};
  a.rate_limit = 1;
  a.max_burst_sz = UINT32_MAX;
  EXPECT_EQ(v::modify_qp_rate_limit(p.ea.qp, &a), 0);
  EXPECT_EQ(p.qp().max_burst_bytes(), UINT32_MAX);
  EXPECT_EQ(p.qp().rate(), BitRate(1000));
  a = v::QpRateLimitAttr{};
  EXPECT_EQ(v::modify_qp_rate_limit(p.ea.qp, &a), 0);
  EXPECT_EQ(p.qp().rate(), BitRate(0));
  EXPECT_EQ(p.qp().max_burst_bytes(), 0u);
}

}  // namespace
}  // namespace sf::nic::test
