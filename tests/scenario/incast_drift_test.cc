// Seed 000 in virtual time: 4:1 incast of RoCEv2 WRITEs (DSCP 26, ECT(0),
// lossless PG 3) into one 100G port, 1 us links, with the shipped switch
// profiles. dynamic-drift.json: the lossless queue's dynamic limit (alpha
// 1/128 x free egress pool ~ 127 KiB) sits under Kmin (150 KiB), so the
// queue never reaches Kmin and nothing is marked although far more than Kmin
// is buffered for that port (the excess waits at ingress). StarFabric's
// switch sends no PFC (it has no control pool; scenario_two_tier_drift runs
// the same profiles with PFC), so the held PGs then overflow their headroom:
// those losses must be counted as headroom_overflow, never silent. seed000-static-lossless.json:
// the queue grows past Kmin and WRED marks CE; the burst fits in the buffer.
// Each run writes build-dir/tests/scenario/scenario_<name>.json (counters and
// the 1 us time series).
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "tests/scenario/scenario.h"

namespace sf::scenario {
namespace {

constexpr uint64_t kBudgetPerSender = 600 * 1098;  // 600 frames, ~644 KiB

size_t cause(sw::DropCause c) { return static_cast<size_t>(c); }

// Bytes each sender got through to the sink by `until` (the last sample at or before it).
std::vector<uint64_t> delivered_by(const IncastResult& r, TimeNs until) {
  std::vector<uint64_t> d;
  for (const IncastSample& s : r.samples) {
    if (s.at > until) break;
    d = s.delivered_by_sender;
  }
  return d;
}

void print(const IncastParams& p, const IncastResult& r, const std::string& path) {
  std::printf(
      "[%s] marks %lu (sink CE %lu), max queue %lu B, max buffered %lu B, Kmin %lu B, queue limit (empty) %lu B\n"
      "  held at ingress %lu, drops %lu (headroom_overflow %lu), delivered %lu/%lu frames, first drop %s us\n"
      "  buffered > Kmin for %.0f us from %.0f us with %lu marks; end %.1f us; %lu events\n  result: %s\n",
      p.name.c_str(), r.ecn_marked, r.sink_ce, r.max_queue_bytes, r.max_buffered_bytes, r.kmin_bytes,
      r.queue_limit_bytes_at_start, r.held_total, r.dropped, r.drops[cause(sw::DropCause::kHeadroomOverflow)],
      r.delivered_frames, r.sent_frames,
      r.first_drop == TimeNs::max() ? "none" : std::to_string(r.first_drop.us()).c_str(), r.over_kmin_window.us(),
      r.over_kmin_start.us(), r.marks_in_window, r.end.us(), r.events, path.c_str());
  const TimeNs at = r.first_drop == TimeNs::max() ? r.end : r.first_drop;
  std::printf("  delivered by sender up to %.0f us:", at.us());
  for (uint64_t b : delivered_by(r, at)) std::printf(" %lu", b);
  std::printf(" B\n");
}

IncastParams params(const std::string& name, const std::string& file) {
  IncastParams p;
  p.name = name;
  p.config_file = file;
  p.senders = 4;
  p.budget_bytes = kBudgetPerSender;
  return p;
}

// 1. Dynamic drift: no mark while more than Kmin is buffered for the port for
// tens of microseconds; the queue itself stays under Kmin; the excess is held
// at ingress; later losses are all counted headroom overflows.
TEST(SeedDrift, DynamicDriftBuffersPastKminWithoutMarking) {
  const IncastParams p = params("seed000_dynamic_drift", "config/switch/dynamic-drift.json");
  const IncastResult r = run_incast(p);
  print(p, r, write_incast_json(p, r));

  EXPECT_EQ(r.sender_alloc_failures, 0u);
  EXPECT_TRUE(r.mbufs_returned);
  EXPECT_EQ(r.queue, 3);
  EXPECT_LT(r.queue_limit_bytes_at_start, r.kmin_bytes) << "the profile no longer drifts under Kmin";
  EXPECT_LT(r.max_queue_bytes, r.kmin_bytes);
  EXPECT_EQ(r.ecn_marked, 0u);
  EXPECT_EQ(r.sink_ce, 0u);
  EXPECT_GT(r.held_total, 0u);
  EXPECT_GT(r.max_buffered_bytes, 2 * r.kmin_bytes);
  EXPECT_GE(r.over_kmin_window, TimeNs::from_us(20));
  EXPECT_EQ(r.marks_in_window, 0u);
  // No PFC in this fabric: the held PGs overflow their headroom; every loss is counted so.
  EXPECT_EQ(r.sent_frames, r.delivered_frames + r.dropped);
  EXPECT_EQ(r.dropped, r.drops[cause(sw::DropCause::kHeadroomOverflow)]);
  EXPECT_NE(r.first_drop, TimeNs::max());
  EXPECT_LE(r.over_kmin_start + r.over_kmin_window, r.first_drop);
}

// 2. Static lossless profile (the seed's fix): the queue passes Kmin, WRED
// marks, every frame is delivered, and the marks reach the sink.
TEST(SeedDrift, StaticLosslessMarksAboveKmin) {
  const IncastParams p = params("seed000_static_lossless", "config/switch/seed000-static-lossless.json");
  const IncastResult r = run_incast(p);
  print(p, r, write_incast_json(p, r));

  EXPECT_EQ(r.sender_alloc_failures, 0u);
  EXPECT_TRUE(r.mbufs_returned);
  EXPECT_GT(r.max_queue_bytes, r.kmin_bytes);
  EXPECT_GT(r.ecn_marked, 0u);
  EXPECT_EQ(r.sink_ce, r.ecn_marked);
  EXPECT_GT(r.marks_in_window, 0u);
  EXPECT_EQ(r.dropped, 0u);
  EXPECT_EQ(r.held_total, 0u);
  EXPECT_EQ(r.delivered_frames, r.sent_frames);
  EXPECT_EQ(r.delivered_bytes, 4 * kBudgetPerSender);
}

// 3. Held lossless PGs share the egress queue's freed room (round robin over
// the hold FIFOs), so no sender starves behind a lower-numbered port. Expect:
// before the first drop every sender got at least half of its fair share.
TEST(SeedDrift, HeldPgsShareTheEgressFairly) {
  const IncastParams p = params("seed000_dynamic_drift_fairness", "config/switch/dynamic-drift.json");
  const IncastResult r = run_incast(p);
  ASSERT_NE(r.first_drop, TimeNs::max());
  const std::vector<uint64_t> d = delivered_by(r, r.first_drop);
  uint64_t total = 0;
  for (uint64_t b : d) total += b;
  for (size_t i = 0; i < d.size(); ++i) EXPECT_GE(d[i] * d.size() * 2, total) << "sender " << i;
}

}  // namespace
}  // namespace sf::scenario
