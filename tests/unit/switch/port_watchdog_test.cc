// The PFC watchdog port component (switch/lossless/port_watchdog.h) on its
// own, in synthetic time: events in (pause frames, pause state, transmissions)
// mapped through the port's QoS, and what service() decides for the
// pipeline: the dropped queues and ingress PGs, the queues to flush (newly
// dropped only), the priorities whose pauses are ignored, per action.
#include "switch/lossless/port_watchdog.h"

#include <gtest/gtest.h>

namespace sf::sw {
namespace {

// Priorities 3 and 4 lossless; priority p pauses queue p; TC p -> PG p + 1
// (so that PGs and queues differ).
PortQos qos() {
  PortQos q;
  q.pfc_enable = 1u << 3 | 1u << 4;
  for (uint8_t p = 0; p < 8; ++p) {
    q.pfc_to_queue[p] = p;
    q.tc_to_pg[p] = static_cast<uint8_t>((p + 1) % 8);
    q.tc_to_queue[p] = p;
  }
  return q;
}

PfcWdConfig cfg(PfcWdAction a = PfcWdAction::kDrop) {
  return PfcWdConfig{a, TimeNs::from_us(100), TimeNs::from_us(200), 1u << 3 | 1u << 4};
}

TEST(PortWatchdog, StormDropsTheQueueAndItsPgFlushesOnceAndRestores) {
  const PortQos q = qos();
  PortWatchdog wd(cfg(), q);
  EXPECT_EQ(wd.next_deadline(), TimeNs::max());
  wd.on_paused_queues(1u << 3, TimeNs(0));
  EXPECT_FALSE(wd.service(TimeNs::from_us(99)).any());
  EXPECT_EQ(wd.drop_queues(), 0u);
  const PortWatchdog::Change c = wd.service(TimeNs::from_us(100));
  ASSERT_TRUE(c.any());
  EXPECT_EQ(c.events.stormed, 1u << 3);
  EXPECT_EQ(c.flush, 1u << 3);
  EXPECT_EQ(wd.drop_queues(), 1u << 3);
  EXPECT_TRUE(wd.drops_queue(3));
  EXPECT_FALSE(wd.drops_queue(4));
  EXPECT_EQ(wd.drop_pgs(), 1u << 4);  // priority 3 -> TC 3 -> PG 4
  EXPECT_TRUE(wd.drops_pg(4));
  EXPECT_EQ(wd.ignore_prios(), 1u << 3);
  EXPECT_EQ(wd.timers().stormed(), 1u << 3);
  // A second storm (queue 4) flushes only the newly dropped queue.
  wd.on_paused_queues(1u << 3 | 1u << 4, TimeNs::from_us(100));
  const PortWatchdog::Change c4 = wd.service(TimeNs::from_us(200));
  EXPECT_EQ(c4.events.stormed, 1u << 4);
  EXPECT_EQ(c4.flush, 1u << 4);
  EXPECT_EQ(wd.drop_queues(), 1u << 3 | 1u << 4);
  EXPECT_EQ(wd.drop_pgs(), 1u << 4 | 1u << 5);
  // Arrivals in a dropped PG count on the lowest dropped queue.
  wd.count_rx_dropped();
  wd.count_dropped(4);
  EXPECT_EQ(wd.timers().counters().rx_dropped[3], 1u);
  EXPECT_EQ(wd.timers().counters().tx_dropped[4], 1u);
  // Restoration: 200 us without a frame for the priority. A frame for
  // priority 3 at 250 us restarts queue 3's timer; queue 4 restores at 400.
  wd.on_paused_queues(0, TimeNs::from_us(200));  // the owner ignores the pauses now
  wd.on_pause_frame(1u << 3, TimeNs::from_us(250));
  const PortWatchdog::Change r4 = wd.service(TimeNs::from_us(400));
  EXPECT_EQ(r4.events.restored, 1u << 4);
  EXPECT_EQ(r4.flush, 0u);
  EXPECT_EQ(wd.drop_queues(), 1u << 3);
  EXPECT_EQ(wd.drop_pgs(), 1u << 4);
  EXPECT_FALSE(wd.service(TimeNs::from_us(449)).any());
  const PortWatchdog::Change r3 = wd.service(TimeNs::from_us(450));
  EXPECT_EQ(r3.events.restored, 1u << 3);
  EXPECT_EQ(wd.drop_queues(), 0u);
  EXPECT_EQ(wd.drop_pgs(), 0u);
  EXPECT_EQ(wd.ignore_prios(), 0u);
}

TEST(PortWatchdog, PausedStateIsReportedOnlyWhenItChanges) {
  const PortQos q = qos();
  PortWatchdog wd(cfg(), q);
  wd.on_paused_queues(1u << 3, TimeNs(0));
  wd.on_paused_queues(1u << 3, TimeNs::from_us(50));  // unchanged: the stretch began at 0
  EXPECT_EQ(wd.next_deadline(), TimeNs::from_us(100));
  wd.on_tx(3, TimeNs::from_us(60));  // a transmission restarts it
  EXPECT_EQ(wd.next_deadline(), TimeNs::from_us(160));
  wd.on_paused_queues(0, TimeNs::from_us(70));
  EXPECT_EQ(wd.next_deadline(), TimeNs::max());
}

TEST(PortWatchdog, PauseFramesMapPrioritiesToQueues) {
  PortQos q = qos();
  q.pfc_to_queue[3] = 6;  // priority 3 pauses queue 6 (guarded: add it)
  PfcWdConfig c = cfg();
  c.queues = 1u << 6;
  PortWatchdog wd(c, q);
  wd.on_paused_queues(1u << 6, TimeNs(0));
  ASSERT_EQ(wd.service(TimeNs::from_us(100)).events.stormed, 1u << 6);
  EXPECT_EQ(wd.ignore_prios(), 1u << 3);
  EXPECT_EQ(wd.drop_pgs(), 1u << 4);
  wd.on_paused_queues(0, TimeNs::from_us(100));
  wd.on_pause_frame(1u << 3, TimeNs::from_us(250));  // queue 6's timer restarts
  EXPECT_FALSE(wd.service(TimeNs::from_us(300)).any());
  EXPECT_EQ(wd.service(TimeNs::from_us(450)).events.restored, 1u << 6);
}

TEST(PortWatchdog, ForwardIgnoresPausesWithoutDropsAlertOnlyReports) {
  const PortQos q = qos();
  PortWatchdog fwd(cfg(PfcWdAction::kForward), q);
  fwd.on_paused_queues(1u << 3, TimeNs(0));
  PortWatchdog::Change c = fwd.service(TimeNs::from_us(100));
  EXPECT_EQ(c.events.stormed, 1u << 3);
  EXPECT_EQ(c.flush, 0u);
  EXPECT_EQ(fwd.drop_queues(), 0u);
  EXPECT_EQ(fwd.drop_pgs(), 0u);
  EXPECT_EQ(fwd.ignore_prios(), 1u << 3);
  PortWatchdog alert(cfg(PfcWdAction::kAlert), q);
  alert.on_paused_queues(1u << 3, TimeNs(0));
  c = alert.service(TimeNs::from_us(100));
  EXPECT_EQ(c.events.stormed, 1u << 3);
  EXPECT_EQ(c.flush, 0u);
  EXPECT_EQ(alert.drop_queues(), 0u);
  EXPECT_EQ(alert.ignore_prios(), 0u);
}

}  // namespace
}  // namespace sf::sw
