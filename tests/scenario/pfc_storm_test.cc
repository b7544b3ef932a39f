// Lossless scenario c: a NIC that pauses forever (PFC storm). One switch
// (seed-000 static profile), four 100G ports, 1 us links:
//   sender0 (port 0): lossless priority 3, every other frame to sink0 / sink1
//   sender1 (port 1): lossy DSCP 0 to sink0
//   sink0   (port 2): from 100 us to 1.5 ms sends PFC XOFF for priority 3 every 20 us
//   sink1   (port 3): a well-behaved receiver
// Without the watchdog the storm spreads: queue 3 toward sink0 never sends,
// sender0's PG fills, the switch pauses sender0, and sender0's traffic to the
// healthy sink1 stops too (head-of-line blocking). With PFC_WD (action drop,
// seed-000 timers 200 us / 50 us) only the stormed queue drops: sender0 keeps
// sending to sink1, sink0's lossy traffic continues, and 50 us after the storm
// ends the queue is restored. Writes scenario_pfc_storm_<wd|nowd>.json.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/scenario/fabric.h"
#include "tests/scenario/scenario.h"

namespace sf::scenario {
namespace {

constexpr TimeNs kStormStart = TimeNs::from_us(100);
constexpr TimeNs kStormStop = TimeNs::from_us(1500);
constexpr TimeNs kEnd = TimeNs::from_us(2000);
constexpr TimeNs kDetect = TimeNs::from_us(200);
constexpr TimeNs kRestore = TimeNs::from_us(50);

struct StormResult {
  uint64_t sink1_from_s0_at_storm = 0;     // bytes, by kStormStart + detection + 100 us
  uint64_t sink1_from_s0_during = 0;       // bytes received in [storm + 400 us, storm stop]
  uint64_t sink0_lossy_during = 0;         // bytes received in [storm + 400 us, storm stop]
  uint64_t sender0_pause_us = 0;           // time sender0 was paused
  uint64_t switch_tx_pause_to_s0 = 0;      // PFC frames the switch sent sender0
  uint64_t switch_rx_pause_from_sink0 = 0;
  uint64_t storms = 0;
  uint64_t restores = 0;
  TimeNs storm_at = TimeNs::max();
  TimeNs restore_at = TimeNs::max();
  uint64_t pfcwd_drops = 0;
  uint64_t other_drops = 0;
  uint64_t storm_frames = 0;
};

StormResult run_storm(bool watchdog) {
  config::Json doc = sized_doc("config/switch/seed000-static-lossless.json", {100, 100, 100, 100});
  if (watchdog) {
    doc["PFC_WD"] = config::Json::parse(
        R"({"Ethernet8": {"action": "drop", "detection_time": "200us", "restoration_time": "50us"}})");
  }
  sw::SwitchConfig cfg = sw::parse_switch_config(doc);
  for (size_t h = 0; h < 4; ++h) add_fdb(cfg, host_mac(h), static_cast<uint16_t>(h));

  StormResult r;
  {
    Fabric fab(7);
    const size_t s = fab.add_switch("switch", std::move(cfg));
    SenderConfig s0;
    s0.src_mac = host_mac(0);
    s0.src_ip = host_ip(0);
    s0.dst_mac = host_mac(2);
    s0.dst_ip = host_ip(2);
    s0.alternate = true;
    s0.alt_dst_mac = host_mac(3);
    s0.alt_dst_ip = host_ip(3);
    s0.budget_bytes = 1098ull * 20000;
    SenderConfig s1 = s0;
    s1.alternate = false;
    s1.src_mac = host_mac(1);
    s1.src_ip = host_ip(1);
    s1.dscp = 0;
    s1.ecn = wire::Ecn::kNotEct;
    s1.rate = BitRate::gbps(50);
    s1.udp_src_port = 0xC001;
    fab.add_sender("sender0", s0);
    fab.add_sender("sender1", s1);
    fab.add_sink("sink0");
    fab.add_sink("sink1");
    fab.sink(0).set_storm(scenario_pool(), host_mac(2), 1u << 3, kStormStart, TimeNs::from_us(20), kStormStop);
    const TimeNs delay = TimeNs::from_us(1);
    fab.link(s, 0, fab.sender_id(0), 0, delay);
    fab.link(s, 1, fab.sender_id(1), 0, delay);
    fab.link(s, 2, fab.sink_id(0), 0, delay);
    fab.link(s, 3, fab.sink_id(1), 0, delay);

    const uint8_t s0_octet = host_ip(0).bytes[3];
    const uint8_t s1_octet = host_ip(1).bytes[3];
    const TimeNs steady = kStormStart + TimeNs::from_us(400);
    fab.sim().run_until(kStormStart + kDetect + TimeNs::from_us(100));
    r.sink1_from_s0_at_storm = fab.sink(1).source_bytes(s0_octet);
    fab.sim().run_until(steady);
    const uint64_t a = fab.sink(1).source_bytes(s0_octet);
    const uint64_t b = fab.sink(0).source_bytes(s1_octet);
    fab.sim().run_until(kStormStop);
    r.sink1_from_s0_during = fab.sink(1).source_bytes(s0_octet) - a;
    r.sink0_lossy_during = fab.sink(0).source_bytes(s1_octet) - b;
    fab.sim().run_until(kEnd);

    const sw::SwitchNode& sw = fab.sw(s);
    r.sender0_pause_us = static_cast<uint64_t>(fab.sender(0).pfc_rx().counters().pause_duration[3].us());
    r.switch_tx_pause_to_s0 = fab.tx_pause(s, 0);
    r.switch_rx_pause_from_sink0 = fab.rx_pause(s, 2);
    if (const sw::PfcWatchdog* wd = sw.pfc_wd(2)) {
      r.storms = wd->counters().storms[3];
      r.restores = wd->counters().restores[3];
    }
    for (const auto& e : sw.pfc_wd_log()) {
      if (e.storm && r.storm_at == TimeNs::max()) r.storm_at = e.at;
      if (!e.storm) r.restore_at = e.at;
    }
    r.pfcwd_drops = fab.drops(sw::DropCause::kPfcWatchdog);
    r.other_drops = fab.switch_drops() - r.pfcwd_drops;
    r.storm_frames = fab.sink(0).storm_frames();
  }
  config::Json j = {{"watchdog", watchdog},
                    {"storm_start_us", kStormStart.us()},
                    {"storm_stop_us", kStormStop.us()},
                    {"sink1_from_sender0_bytes_during_storm", r.sink1_from_s0_during},
                    {"sink0_lossy_bytes_during_storm", r.sink0_lossy_during},
                    {"sender0_paused_us", r.sender0_pause_us},
                    {"switch_tx_pause_to_sender0", r.switch_tx_pause_to_s0},
                    {"switch_rx_pause_from_sink0", r.switch_rx_pause_from_sink0},
                    {"storms", r.storms},
                    {"restores", r.restores},
                    {"storm_at_us", r.storm_at == TimeNs::max() ? -1.0 : r.storm_at.us()},
                    {"restore_at_us", r.restore_at == TimeNs::max() ? -1.0 : r.restore_at.us()},
                    {"pfcwd_drops", r.pfcwd_drops},
                    {"other_drops", r.other_drops},
                    {"storm_frames", r.storm_frames}};
  const std::string path = write_result(watchdog ? "pfc_storm_wd" : "pfc_storm_nowd", j);
  std::printf("[pfc storm, watchdog %s] %s\n  result: %s\n", watchdog ? "on" : "off", j.dump().c_str(), path.c_str());
  return r;
}

// 1. Without the watchdog the storm spreads to sender0 and starves its
// healthy flow; lossy traffic on another priority still flows.
TEST(PfcStorm, WithoutWatchdogPauseSpreads) {
  const StormResult r = run_storm(false);
  EXPECT_GT(r.switch_rx_pause_from_sink0, 50u);
  EXPECT_GT(r.switch_tx_pause_to_s0, 0u);
  EXPECT_GT(r.sender0_pause_us, (kStormStop - kStormStart).us() / 2);
  EXPECT_EQ(r.sink1_from_s0_during, 0u) << "sender0's flow to the healthy sink must be stuck";
  EXPECT_GT(r.sink0_lossy_during, 0u);
  EXPECT_EQ(r.storms, 0u);
  EXPECT_EQ(r.other_drops, 0u);
}

// 2. With the watchdog (drop, 200 us / 50 us): stormed once, 200 us after the
// storm began; only the stormed queue drops; sender0's healthy flow keeps
// going at about its share (50G for 1.1 ms ~ 6.9 MB); restored 50 us after
// the last pause frame.
TEST(PfcStorm, WatchdogDropsOnlyTheStormedQueue) {
  const StormResult r = run_storm(true);
  EXPECT_EQ(r.storms, 1u);
  EXPECT_EQ(r.restores, 1u);
  EXPECT_GE(r.storm_at, kStormStart + kDetect);
  EXPECT_LE(r.storm_at, kStormStart + kDetect + TimeNs::from_us(5));
  EXPECT_GE(r.restore_at, kStormStop - TimeNs::from_us(20) + kRestore);
  EXPECT_LE(r.restore_at, kStormStop + kRestore);
  EXPECT_GT(r.pfcwd_drops, 0u);
  EXPECT_EQ(r.other_drops, 0u);
  const double during_s = (kStormStop - kStormStart - TimeNs::from_us(400)).us() / 1e6;
  EXPECT_GT(static_cast<double>(r.sink1_from_s0_during), 0.8 * 50e9 / 8 * during_s);
  EXPECT_GT(r.sink0_lossy_during, 0u);
  EXPECT_LT(r.sender0_pause_us, 300u);
}

}  // namespace
}  // namespace sf::scenario
