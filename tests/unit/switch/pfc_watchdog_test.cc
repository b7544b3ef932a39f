// PFC watchdog timers, exact in synthetic time: seed 000's 200 us detection
// and 50 us recovery, and SONiC's millisecond defaults.
#include "switch/lossless/pfc_watchdog.h"

#include <gtest/gtest.h>

namespace sf::sw {
namespace {

PfcWdConfig seed000(PfcWdAction a = PfcWdAction::kDrop) {
  return PfcWdConfig{a, TimeNs::from_us(200), TimeNs::from_us(50), 1u << 3};
}

// 1. A queue paused with nothing sent is stormed exactly at the detection time.
TEST(PfcWatchdog, DetectsAtExactlyDetectionTime) {
  PfcWatchdog wd(seed000());
  wd.on_paused(3, true, TimeNs(0));
  EXPECT_EQ(wd.next_deadline(), TimeNs::from_us(200));
  EXPECT_EQ(wd.advance(TimeNs::from_us(200) - TimeNs(1)).stormed, 0u);
  EXPECT_EQ(wd.advance(TimeNs::from_us(200)).stormed, 1u << 3);
  EXPECT_EQ(wd.stormed(), 1u << 3);
  EXPECT_EQ(wd.counters().storms[3], 1u);
}

// 1b. With a poll period (PFC_WD.GLOBAL.POLL_INTERVAL), storms and restorations
// are decided at the first poll instant at or after the exact time, as SONiC's
// poller sees them.
TEST(PfcWatchdog, PollPeriodDecidesAtPollInstants) {
  PfcWdConfig cfg = seed000();
  cfg.poll = TimeNs::from_us(150);
  PfcWatchdog wd(cfg);
  wd.on_paused(3, true, TimeNs::from_us(10));
  EXPECT_EQ(wd.next_deadline(), TimeNs::from_us(300));  // 210 us rounded up to the poll at 300
  EXPECT_EQ(wd.advance(TimeNs::from_us(299)).stormed, 0u);  // decided as of the poll at 150
  EXPECT_EQ(wd.advance(TimeNs::from_us(300)).stormed, 1u << 3);
  // Restoration: 50 us without a frame after the storm (300) -> 350 -> poll at 450.
  EXPECT_EQ(wd.next_deadline(), TimeNs::from_us(450));
  EXPECT_EQ(wd.advance(TimeNs::from_us(449)).restored, 0u);
  EXPECT_EQ(wd.advance(TimeNs::from_us(450)).restored, 1u << 3);
}

// 2. A transmission restarts the stretch; an unpause before detection means no storm.
TEST(PfcWatchdog, TransmitOrResumeIsNotAStorm) {
  PfcWatchdog wd(seed000());
  wd.on_paused(3, true, TimeNs(0));
  wd.on_tx(3, TimeNs::from_us(150));
  EXPECT_EQ(wd.advance(TimeNs::from_us(300)).stormed, 0u);
  EXPECT_EQ(wd.next_deadline(), TimeNs::from_us(350));
  wd.on_paused(3, false, TimeNs::from_us(340));
  EXPECT_EQ(wd.advance(TimeNs::from_us(400)).stormed, 0u);
  EXPECT_EQ(wd.next_deadline(), TimeNs::max());
}

// 3. Restoration waits for `restoration` without any PFC frame for the queue.
TEST(PfcWatchdog, RestoresAfterQuietRestorationTime) {
  PfcWatchdog wd(seed000());
  wd.on_paused(3, true, TimeNs(0));
  for (int us = 0; us < 200; us += 10) wd.on_pfc_frame(3, TimeNs::from_us(us));
  ASSERT_EQ(wd.advance(TimeNs::from_us(200)).stormed, 1u << 3);
  wd.on_paused(3, false, TimeNs::from_us(200));  // the owner now ignores the pause
  for (int us = 200; us <= 1000; us += 10) wd.on_pfc_frame(3, TimeNs::from_us(us));
  EXPECT_EQ(wd.advance(TimeNs::from_us(1000)).restored, 0u);  // frames kept coming
  EXPECT_EQ(wd.next_deadline(), TimeNs::from_us(1050));
  EXPECT_EQ(wd.advance(TimeNs::from_us(1050)).restored, 1u << 3);
  EXPECT_EQ(wd.stormed(), 0u);
  EXPECT_EQ(wd.counters().restores[3], 1u);
  EXPECT_EQ(wd.counters().rx_ignored_pause[3], 81u);  // frames at 200..1000 us
}

// 4. Actions: drop drops and ignores pause; forward only ignores pause; alert
// does neither and restores as soon as the pause clears.
TEST(PfcWatchdog, ActionMasks) {
  for (PfcWdAction a : {PfcWdAction::kDrop, PfcWdAction::kForward, PfcWdAction::kAlert}) {
    PfcWatchdog wd(seed000(a));
    wd.on_paused(3, true, TimeNs(0));
    wd.advance(TimeNs::from_us(200));
    EXPECT_EQ(wd.drop_mask(), a == PfcWdAction::kDrop ? 1u << 3 : 0u) << to_string(a);
    EXPECT_EQ(wd.ignore_pause_mask(), a == PfcWdAction::kAlert ? 0u : 1u << 3) << to_string(a);
  }
  PfcWatchdog alert(seed000(PfcWdAction::kAlert));
  alert.on_paused(3, true, TimeNs(0));
  alert.on_pfc_frame(3, TimeNs(0));
  alert.advance(TimeNs::from_us(200));
  alert.on_paused(3, false, TimeNs::from_us(210));
  EXPECT_EQ(alert.next_deadline(), TimeNs(0));  // due at once: the owner calls advance()
  EXPECT_EQ(alert.advance(TimeNs::from_us(210)).restored, 1u << 3);
}

// 5. Queues outside the guarded set never storm; SONiC's 200 ms default works the same.
TEST(PfcWatchdog, UnguardedAndMillisecondDefaults) {
  PfcWatchdog wd(PfcWdConfig{PfcWdAction::kDrop, TimeNs::from_ms(200), TimeNs::from_ms(200), 1u << 4});
  wd.on_paused(3, true, TimeNs(0));
  wd.on_paused(4, true, TimeNs(0));
  EXPECT_EQ(wd.advance(TimeNs::from_s(1)).stormed, 1u << 4);
  // Restoration counts from the storm (1 s), later than the last frame (none).
  EXPECT_EQ(wd.next_deadline(), TimeNs::from_s(1) + TimeNs::from_ms(200));
}

}  // namespace
}  // namespace sf::sw
