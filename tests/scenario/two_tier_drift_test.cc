// Lossless-issue scenario a: the seed-000 drift across a two-tier fabric.
//   sender0, sender1 -100G- leaf0 -400G-+
//                                       spine -400G- leaf2 -100G- sink
//   sender2, sender3 -100G- leaf1 -400G-+
// 4:1 incast of lossless RoCE WRITEs (DSCP 26, ECT(0), priority 3; each
// sender paced at 27.5G, 940 frames) into the sink's 100G port (the hot port,
// leaf2), 1 us links, senders honour PFC (and do not react to ECN).
// Dynamic profile (config/switch/dynamic-drift.json): the lossless queue's
// limit (alpha 1/128 x free) stays under Kmin, so ECN never marks, while the
// PGs cross XOFF and pauses spread upstream: leaf2 pauses the spine (one hop
// from the hot port), the spine pauses both leaves (two hops), the leaves the
// senders. Static profile (config/switch/seed000-static-lossless.json), the
// same load: the queue passes Kmin first, ECN marks before any pause, and
// pause frames stay near zero. Writes scenario_two_tier_<dynamic|static>.json.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/scenario/fabric.h"
#include "tests/scenario/scenario.h"

namespace sf::scenario {
namespace {

constexpr size_t kSenders = 4;
// Each sender paces at kRateGbps for ~300 us: 4 x 27.5G = 110% of the hot
// port, so ~375 KB of backlog builds up: above the static Kmin (120 KB) and
// below its PFC threshold (480 KB), far above the dynamic limits (~128 KiB).
constexpr double kRateGbps = 27.5;
constexpr uint64_t kFramesPerSender = 940;
enum Sw : size_t { kLeaf0, kLeaf1, kSpine, kLeaf2 };

struct TwoTierResult {
  uint64_t ecn_marked = 0;        // every switch, every queue
  uint64_t sink_ce = 0;
  uint64_t pause_hop1 = 0;        // PFC frames leaf2 sent the spine (received by spine port 2)
  uint64_t pause_hop2 = 0;        // PFC frames the spine sent leaf0 + leaf1
  uint64_t pause_hop3 = 0;        // PFC frames the leaves sent the senders
  uint64_t pause_total = 0;       // all PFC frames sent by all switches
  TimeNs first_mark = TimeNs::max();
  TimeNs first_pause = TimeNs::max();
  uint64_t max_queue_bytes = 0;   // hot queue watermark
  uint64_t kmin_bytes = 0;
  uint64_t sent = 0;
  uint64_t delivered = 0;
  uint64_t drops = 0;
  TimeNs end;
};

uint64_t all_marks(const Fabric& fab) {
  uint64_t m = 0;
  for (size_t s = 0; s < fab.num_switches(); ++s) {
    for (uint16_t p = 0; p < fab.sw(s).num_ports(); ++p) {
      for (const auto& q : fab.sw(s).counters(p).queues) m += q.ecn_marked;
    }
  }
  return m;
}

uint64_t all_pauses(const Fabric& fab) {
  uint64_t n = 0;
  for (size_t s = 0; s < fab.num_switches(); ++s) {
    for (uint16_t p = 0; p < fab.sw(s).num_ports(); ++p) n += fab.tx_pause(s, p);
  }
  return n;
}

TwoTierResult run_two_tier(const std::string& name, const std::string& file) {
  Fabric fab(5);
  const wire::MacAddr sink = host_mac(kSenders);
  for (size_t leaf = 0; leaf < 2; ++leaf) {
    sw::SwitchConfig c = sw::parse_switch_config(sized_doc(file, {100, 100, 400}));
    add_fdb(c, sink, 2);
    fab.add_switch("leaf" + std::to_string(leaf), std::move(c));
  }
  sw::SwitchConfig spine = sw::parse_switch_config(sized_doc(file, {400, 400, 400}));
  add_fdb(spine, sink, 2);
  fab.add_switch("spine", std::move(spine));
  sw::SwitchConfig leaf2 = sw::parse_switch_config(sized_doc(file, {400, 100}));
  add_fdb(leaf2, sink, 1);
  fab.add_switch("leaf2", std::move(leaf2));

  const TimeNs delay = TimeNs::from_us(1);
  for (size_t i = 0; i < kSenders; ++i) {
    SenderConfig sc;
    sc.src_mac = host_mac(i);
    sc.src_ip = host_ip(i);
    sc.dst_mac = sink;
    sc.dst_ip = host_ip(kSenders);
    sc.udp_src_port = static_cast<uint16_t>(0xC000 + i);
    sc.budget_bytes = kFramesPerSender * 1098;
    sc.rate = BitRate::gbps(kRateGbps);
    fab.add_sender("sender" + std::to_string(i), sc);
    fab.link(i / 2, static_cast<PortId>(i % 2), fab.sender_id(i), 0, delay);
  }
  fab.add_sink("sink");
  fab.link(kLeaf0, 2, fab.switch_id(kSpine), 0, delay);
  fab.link(kLeaf1, 2, fab.switch_id(kSpine), 1, delay);
  fab.link(kSpine, 2, fab.switch_id(kLeaf2), 0, delay);
  fab.link(kLeaf2, 1, fab.sink_id(0), 0, delay);

  TwoTierResult r;
  for (TimeNs t = TimeNs::from_us(1); t <= TimeNs::from_ms(2); t += TimeNs::from_us(1)) {
    fab.sim().run_until(t);
    if (r.first_mark == TimeNs::max() && all_marks(fab) > 0) r.first_mark = t;
    if (r.first_pause == TimeNs::max() && all_pauses(fab) > 0) r.first_pause = t;
    if (fab.senders_done() && fab.delivered_frames() + fab.switch_drops() == fab.sent_frames()) break;
  }
  r.end = fab.sim().now();
  r.ecn_marked = all_marks(fab);
  r.sink_ce = fab.sink(0).ce_frames();
  r.pause_hop1 = fab.rx_pause(kSpine, 2);
  r.pause_hop2 = fab.rx_pause(kLeaf0, 2) + fab.rx_pause(kLeaf1, 2);
  for (size_t i = 0; i < kSenders; ++i) r.pause_hop3 += fab.sender(i).pfc_rx().counters().pause_frames[3];
  r.pause_total = all_pauses(fab);
  r.max_queue_bytes = fab.sw(kLeaf2).counters(1).queues[3].watermark_bytes;
  r.kmin_bytes = fab.cfg(kLeaf2).wred[1][3].kmin_bytes;
  r.sent = fab.sent_frames();
  r.delivered = fab.delivered_frames();
  r.drops = fab.switch_drops();

  auto us = [](TimeNs t) { return t == TimeNs::max() ? -1.0 : t.us(); };
  const config::Json j = {{"config", file},
                          {"senders", kSenders},
                          {"frames_per_sender", kFramesPerSender},
                          {"ecn_marked", r.ecn_marked},
                          {"sink_ce", r.sink_ce},
                          {"pause_frames_hop1_leaf2_to_spine", r.pause_hop1},
                          {"pause_frames_hop2_spine_to_leaves", r.pause_hop2},
                          {"pause_frames_hop3_leaves_to_senders", r.pause_hop3},
                          {"pause_frames_total", r.pause_total},
                          {"first_mark_us", us(r.first_mark)},
                          {"first_pause_us", us(r.first_pause)},
                          {"hot_queue_max_bytes", r.max_queue_bytes},
                          {"kmin_bytes", r.kmin_bytes},
                          {"sent_frames", r.sent},
                          {"delivered_frames", r.delivered},
                          {"drops", r.drops},
                          {"end_us", r.end.us()}};
  std::printf("[two tier %s] %s\n  result: %s\n", name.c_str(), j.dump().c_str(), write_result(name, j).c_str());
  return r;
}

// 1. Dynamic drift: no ECN mark anywhere; many pauses, spreading one, two
// and three hops upstream of the hot port; lossless (nothing dropped).
TEST(TwoTierDrift, DynamicProfilePausesSpreadWithoutMarks) {
  const TwoTierResult r = run_two_tier("two_tier_dynamic", "config/switch/dynamic-drift.json");
  EXPECT_EQ(r.ecn_marked, 0u);
  EXPECT_EQ(r.sink_ce, 0u);
  EXPECT_LT(r.max_queue_bytes, r.kmin_bytes);
  EXPECT_GT(r.pause_hop1, 0u);
  EXPECT_GT(r.pause_hop2, 0u);
  EXPECT_GT(r.pause_hop3, 0u);
  EXPECT_EQ(r.drops, 0u);
  EXPECT_EQ(r.delivered, r.sent);
  EXPECT_EQ(r.sent, kSenders * kFramesPerSender);
}

// 2. Static lossless profile (the seed's fix), the same load: ECN marks
// before any pause, and pauses stay near zero (at most a tenth of the
// dynamic run's); nothing dropped.
TEST(TwoTierDrift, StaticProfileMarksBeforePausing) {
  const TwoTierResult st = run_two_tier("two_tier_static", "config/switch/seed000-static-lossless.json");
  const TwoTierResult dy = run_two_tier("two_tier_dynamic_ref", "config/switch/dynamic-drift.json");
  EXPECT_GT(st.ecn_marked, 0u);
  EXPECT_EQ(st.sink_ce, st.ecn_marked);
  EXPECT_GT(st.max_queue_bytes, st.kmin_bytes);
  EXPECT_LT(st.first_mark, st.first_pause);
  EXPECT_LE(st.pause_total * 10, dy.pause_total);
  // Pausing costs time: the dynamic run takes longer to deliver the same bytes.
  EXPECT_GT(dy.end, st.end);
  EXPECT_EQ(st.drops, 0u);
  EXPECT_EQ(st.delivered, st.sent);
}

}  // namespace
}  // namespace sf::scenario
