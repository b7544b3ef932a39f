// Lossless-issue scenario b: cyclic buffer dependency. Four switches in a
// ring (port 0 the host's sending side, port 1 to the next switch, port 2
// from the previous, port 3 the host's receiving side),
// seed-000 dynamic profile, 100G, 1 us links. Host k sends lossless priority
// 3 to host k-1, clockwise through switches k+1 and k+2, so every ring link
// carries three flows and every switch's ring ingress PG mixes transit
// packets (two thirds, wanting the congested ring egress) with packets for
// its own host, in one FIFO. PFC fills the ring: each
// switch's ring egress is paused by the next one, whose ring ingress is full
// of packets waiting for its own paused ring egress: a deadlock.
// Without the watchdog: throughput 0 and queues paused for good while packets
// sit in the buffers. With PFC_WD (drop, 200 us / 50 us) on every port: the
// paused queues storm, are flushed, traffic resumes; no stall lasts longer
// than detection + restoration, and the buffers end empty.
// Writes scenario_pfc_deadlock_<wd|nowd>.json.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/scenario/fabric.h"
#include "tests/scenario/scenario.h"

namespace sf::scenario {
namespace {

constexpr size_t kSwitches = 4;
constexpr TimeNs kEnd = TimeNs::from_ms(3);
constexpr TimeNs kSample = TimeNs::from_us(5);
constexpr TimeNs kDetect = TimeNs::from_us(200);
constexpr TimeNs kRestore = TimeNs::from_us(50);

struct DeadlockResult {
  uint64_t sent = 0;
  uint64_t delivered = 0;
  uint64_t delivered_last_ms = 0;
  uint64_t buffered_end = 0;
  uint8_t paused_end = 0;       // ring egress queues paused at the end (bit = switch)
  TimeNs longest_stall;         // longest time with packets buffered and nothing delivered
  TimeNs stall_start;
  uint64_t storms = 0;
  uint64_t restores = 0;
  uint64_t pfcwd_drops = 0;
  uint64_t other_drops = 0;
  uint64_t ring_pause_frames = 0;
};

DeadlockResult run_ring(bool watchdog) {
  DeadlockResult r;
  Fabric fab(11);
  for (size_t k = 0; k < kSwitches; ++k) {
    config::Json doc = sized_doc("config/switch/dynamic-drift.json", {100, 100, 100, 100});
    if (watchdog) {
      doc["PFC_WD"] = config::Json::parse(R"({"Ethernet0,Ethernet4,Ethernet8,Ethernet12":
          {"action": "drop", "detection_time": "200us", "restoration_time": "50us"}})");
    }
    sw::SwitchConfig cfg = sw::parse_switch_config(doc);
    for (size_t h = 0; h < kSwitches; ++h) add_fdb(cfg, host_mac(h), h == k ? 3 : 1);
    fab.add_switch("sw" + std::to_string(k), std::move(cfg));
  }
  const TimeNs delay = TimeNs::from_us(1);
  for (size_t k = 0; k < kSwitches; ++k) {
    SenderConfig sc;
    sc.src_mac = host_mac(k);
    sc.src_ip = host_ip(k);
    sc.dst_mac = host_mac((k + kSwitches - 1) % kSwitches);
    sc.dst_ip = host_ip((k + kSwitches - 1) % kSwitches);
    sc.udp_src_port = static_cast<uint16_t>(0xC000 + k);
    sc.budget_bytes = 1098ull * 6000;  // ~530 us at 100G
    fab.add_sender("host" + std::to_string(k) + "_tx", sc);
    fab.add_sink("host" + std::to_string(k) + "_rx");
    fab.link(k, 0, fab.sender_id(k), 0, delay);
    fab.link(k, 3, fab.sink_id(k), 0, delay);
  }
  for (size_t k = 0; k < kSwitches; ++k) fab.link(k, 1, fab.switch_id((k + 1) % kSwitches), 2, delay);

  uint64_t last_delivered = 0;
  TimeNs stall_from = TimeNs::max();
  for (TimeNs t = kSample; t <= kEnd; t += kSample) {
    fab.sim().run_until(t);
    const uint64_t d = fab.delivered_frames();
    if (t == kEnd - TimeNs::from_ms(1)) r.delivered_last_ms = d;
    const bool stalled = d == last_delivered && fab.buffered_bytes() > 0;
    if (stalled && stall_from == TimeNs::max()) stall_from = t - kSample;
    if (!stalled && stall_from != TimeNs::max()) {
      if (t - kSample - stall_from > r.longest_stall) {
        r.longest_stall = t - kSample - stall_from;
        r.stall_start = stall_from;
      }
      stall_from = TimeNs::max();
    }
    last_delivered = d;
  }
  if (stall_from != TimeNs::max() && kEnd - stall_from > r.longest_stall) {
    r.longest_stall = kEnd - stall_from;
    r.stall_start = stall_from;
  }
  r.sent = fab.sent_frames();
  r.delivered = fab.delivered_frames();
  r.delivered_last_ms = r.delivered - r.delivered_last_ms;
  r.buffered_end = fab.buffered_bytes();
  for (size_t k = 0; k < kSwitches; ++k) {
    if ((fab.sw(k).paused(1) >> 3) & 1u) r.paused_end = static_cast<uint8_t>(r.paused_end | 1u << k);
    r.ring_pause_frames += fab.rx_pause(k, 1);
    for (uint16_t p = 0; p < 4; ++p) {
      if (const sw::PfcWatchdog* wd = fab.sw(k).pfc_wd(p)) {
        r.storms += wd->counters().storms[3];
        r.restores += wd->counters().restores[3];
      }
    }
  }
  r.pfcwd_drops = fab.drops(sw::DropCause::kPfcWatchdog);
  r.other_drops = fab.switch_drops() - r.pfcwd_drops;

  const config::Json j = {{"watchdog", watchdog},
                          {"sent_frames", r.sent},
                          {"delivered_frames", r.delivered},
                          {"delivered_last_ms", r.delivered_last_ms},
                          {"buffered_bytes_at_end", r.buffered_end},
                          {"ring_queues_paused_at_end_mask", r.paused_end},
                          {"longest_stall_us", r.longest_stall.us()},
                          {"stall_start_us", r.stall_start.us()},
                          {"ring_pause_frames_received", r.ring_pause_frames},
                          {"storms", r.storms},
                          {"restores", r.restores},
                          {"pfcwd_drops", r.pfcwd_drops},
                          {"other_drops", r.other_drops}};
  std::printf("[pfc deadlock, watchdog %s] %s\n  result: %s\n", watchdog ? "on" : "off", j.dump().c_str(),
              write_result(watchdog ? "pfc_deadlock_wd" : "pfc_deadlock_nowd", j).c_str());
  return r;
}

// 1. Without the watchdog the ring deadlocks: packets stay buffered, the ring
// queues stay paused (refreshed pauses), and nothing is delivered in the last
// millisecond although frames are still in the switches. Nothing is dropped.
TEST(PfcDeadlock, RingDeadlocksWithoutWatchdog) {
  const DeadlockResult r = run_ring(false);
  EXPECT_GT(r.buffered_end, 0u);
  EXPECT_EQ(r.delivered_last_ms, 0u);
  EXPECT_EQ(r.paused_end, 0b1111);
  EXPECT_GE(r.longest_stall, TimeNs::from_ms(1));
  EXPECT_LT(r.delivered, r.sent);
  EXPECT_EQ(r.other_drops, 0u);
  EXPECT_EQ(r.pfcwd_drops, 0u);
}

// 2. With the watchdog the deadlock is broken each time it forms: no stall
// lasts longer than detection + restoration (plus a sample), every storm is
// restored, the senders finish, everything sent is delivered or dropped by
// the watchdog (the price of action drop: the cyclic dependency itself stays),
// and the buffers end empty. More gets through than in the deadlocked run.
TEST(PfcDeadlock, WatchdogBreaksTheDeadlock) {
  const DeadlockResult r = run_ring(true);
  const DeadlockResult stuck = run_ring(false);
  EXPECT_GT(r.storms, 0u);
  EXPECT_EQ(r.restores, r.storms);
  EXPECT_EQ(r.buffered_end, 0u);
  EXPECT_LE(r.longest_stall, kDetect + kRestore + kSample);
  EXPECT_EQ(r.sent, kSwitches * 6000u);
  EXPECT_EQ(r.delivered + r.pfcwd_drops, r.sent);
  EXPECT_EQ(r.other_drops, 0u);
  EXPECT_GT(r.delivered, 2 * stuck.delivered);
}

}  // namespace
}  // namespace sf::scenario
