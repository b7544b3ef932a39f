// sf-nic's --sched values and the time-series sample grid: every accepted
// form parses to its policy, every mistake is rejected naming the text; the
// sampler's grid skips what a late wake-up missed (virtual times, no clock).
#include "nic/app/thread_sched.h"

#include <gtest/gtest.h>

#include "nic/app/sample_schedule.h"

namespace sf::nic::app {
namespace {

std::optional<ThreadSched> parse(std::string_view t, std::string* err) { return parse_thread_sched(t, err); }

// 1. Each policy with its bounds. Expect: parsed, and printed back the same.
TEST(ThreadSched, ParsesEveryPolicyAtItsBounds) {
  std::string err;
  const struct {
    const char* text;
    SchedPolicy policy;
    int value;
  } cases[] = {{"other", SchedPolicy::kOther, 0}, {"nice:-20", SchedPolicy::kNice, -20},
               {"nice:19", SchedPolicy::kNice, 19}, {"nice:0", SchedPolicy::kNice, 0},
               {"fifo:1", SchedPolicy::kFifo, 1},   {"fifo:99", SchedPolicy::kFifo, 99},
               {"rr:50", SchedPolicy::kRr, 50}};
  for (const auto& c : cases) {
    const auto s = parse(c.text, &err);
    ASSERT_TRUE(s.has_value()) << c.text << ": " << err;
    EXPECT_EQ(s->policy, c.policy) << c.text;
    EXPECT_EQ(s->value, c.value) << c.text;
    EXPECT_EQ(to_string(*s), c.text);
  }
}

// 2. Out of range, not a number, unknown policy, missing value. Expect: no
//    value, and an error that quotes the text and says what is accepted.
TEST(ThreadSched, RejectsMistakesNamingThem) {
  const struct {
    const char* text;
    const char* says;
  } cases[] = {{"nice:-21", "nice must be -20..19"}, {"nice:20", "nice must be -20..19"},
               {"fifo:0", "fifo must be 1..99"},     {"rr:100", "rr must be 1..99"},
               {"fifo:", "is not an integer"},       {"nice:-2x", "'-2x' is not an integer"},
               {"fifo:5 ", "is not an integer"},     {"batch:1", "unknown policy 'batch'"},
               {"fifo", "unknown policy"},           {"", "unknown policy"},
               {"OTHER", "unknown policy"}};
  for (const auto& c : cases) {
    std::string err;
    EXPECT_FALSE(parse(c.text, &err).has_value()) << c.text;
    EXPECT_NE(err.find(std::string("'") + c.text + "'"), std::string::npos) << err;
    EXPECT_NE(err.find(c.says), std::string::npos) << c.text << " -> " << err;
    EXPECT_NE(err.find("nice:N (-20..19)"), std::string::npos) << err;
  }
}

// 3. "other" changes nothing. Expect: applying it succeeds without privileges.
TEST(ThreadSched, OtherIsANoOp) { EXPECT_EQ(apply_thread_sched(ThreadSched{}), ""); }

// 4. Samples on time. Expect: due at start + k * period, k = 1, 2, 3.
TEST(SampleSchedule, DueOnTheGrid) {
  SampleSchedule s(1000, 100);
  EXPECT_EQ(s.due_ns(), 1100);
  s.taken(1100);
  EXPECT_EQ(s.due_ns(), 1200);
  s.taken(1230);  // late by less than a period: the next stays on the grid
  EXPECT_EQ(s.due_ns(), 1300);
  EXPECT_EQ(s.index(), 3);
}

// 5. A wake-up 2.5 periods late. Expect: the missed grid points are skipped
//    (no burst of late samples); the next is the first grid point after it.
TEST(SampleSchedule, LateWakeUpSkipsMissedPoints) {
  SampleSchedule s(0, 100);
  s.taken(350);
  EXPECT_EQ(s.due_ns(), 400);
  s.taken(400);  // exactly on a grid point: the next one
  EXPECT_EQ(s.due_ns(), 500);
}

}  // namespace
}  // namespace sf::nic::app

namespace sf::nic::app {
namespace {

// 6. Every --idle mode. Expect: spin = nothing enabled; backoff = the
//    back-off; until-due with the default and a given wake margin.
TEST(IdleMode, ParsesEachMode) {
  std::string err;
  auto spin = parse_idle_mode("spin", &err);
  ASSERT_TRUE(spin.has_value());
  EXPECT_FALSE(spin->enabled);
  EXPECT_FALSE(spin->until_due);
  auto backoff = parse_idle_mode("backoff", &err);
  ASSERT_TRUE(backoff.has_value());
  EXPECT_TRUE(backoff->enabled);
  EXPECT_FALSE(backoff->until_due);
  auto until = parse_idle_mode("until-due", &err);
  ASSERT_TRUE(until.has_value());
  EXPECT_TRUE(until->until_due);
  EXPECT_EQ(until->wake_margin, TimeNs::from_us(10));
  auto until25 = parse_idle_mode("until-due:25", &err);
  ASSERT_TRUE(until25.has_value());
  EXPECT_EQ(until25->wake_margin, TimeNs::from_us(25));
  EXPECT_TRUE(parse_idle_mode("until-due:1000", &err).has_value());
}

// 7. Bad --idle values. Expect: rejected, quoting the text.
TEST(IdleMode, RejectsMistakes) {
  for (const char* t : {"until-due:0", "until-due:1001", "until-due:", "until-due:5us", "until-duex", "sleep", ""}) {
    std::string err;
    EXPECT_FALSE(parse_idle_mode(t, &err).has_value()) << t;
    EXPECT_NE(err.find(std::string("--idle '") + t + "'"), std::string::npos) << err;
  }
}

// 8. The sampler's scheduling. Expect: a real-time policy one above the data
//    path (capped at 99), nice and other unchanged.
TEST(ThreadSched, SamplerRunsJustAboveTheDataPath) {
  EXPECT_EQ(sampler_sched({SchedPolicy::kFifo, 50}), (ThreadSched{SchedPolicy::kFifo, 51}));
  EXPECT_EQ(sampler_sched({SchedPolicy::kRr, 99}), (ThreadSched{SchedPolicy::kRr, 99}));
  EXPECT_EQ(sampler_sched({SchedPolicy::kNice, -20}), (ThreadSched{SchedPolicy::kNice, -20}));
  EXPECT_EQ(sampler_sched({}), ThreadSched{});
}

// 9. until-due sleeps at `now` = 1000 us, margin 10 us, 5..50 us.
TEST(UntilDueSleep, SleepsToTheMarginBeforeTheNextDue) {
  dpdk::IdleBackoffOptions o;
  o.until_due = true;
  const TimeNs now = TimeNs::from_us(1000);
  // a. Due in 30 us. Expect: sleep 20 us (woken 10 us early, then spin).
  EXPECT_EQ(dpdk::until_due_sleep(now, now + TimeNs::from_us(30), o), TimeNs::from_us(20));
  // b. Due in 14 us: 4 us of sleep is under the 5 us minimum. Expect: spin.
  EXPECT_EQ(dpdk::until_due_sleep(now, now + TimeNs::from_us(14), o), TimeNs::zero());
  // c. Due in 15 us. Expect: exactly the minimum, 5 us.
  EXPECT_EQ(dpdk::until_due_sleep(now, now + TimeNs::from_us(15), o), TimeNs::from_us(5));
  // d. Due within the margin, now, or overdue. Expect: spin.
  EXPECT_EQ(dpdk::until_due_sleep(now, now + TimeNs::from_us(3), o), TimeNs::zero());
  EXPECT_EQ(dpdk::until_due_sleep(now, now, o), TimeNs::zero());
  EXPECT_EQ(dpdk::until_due_sleep(now, now - TimeNs::from_us(7), o), TimeNs::zero());
  // e. Due in 1 s, or nothing due. Expect: at most 50 us (the rx ring waits no longer).
  EXPECT_EQ(dpdk::until_due_sleep(now, now + TimeNs::from_s(1), o), TimeNs::from_us(50));
  EXPECT_EQ(dpdk::until_due_sleep(now, TimeNs::max(), o), TimeNs::from_us(50));
  // f. A larger margin. Expect: woken that much earlier.
  o.wake_margin = TimeNs::from_us(25);
  EXPECT_EQ(dpdk::until_due_sleep(now, now + TimeNs::from_us(40), o), TimeNs::from_us(15));
}

}  // namespace
}  // namespace sf::nic::app

#include "nic/app/tsc_calibration.h"

namespace sf::nic::app {
namespace {

// 10. The TSC rate from a measured interval. Expect: cycles per second,
//     rounded to nearest; this VM's case (2445.422 MHz TSC, 2450 MHz nominal).
TEST(TscCalibration, RateFromAnInterval) {
  EXPECT_EQ(tsc_hz_from(244542200, 100000000), 2445422000u);  // 0.1 s
  EXPECT_EQ(tsc_hz_from(3, 2), 1500000000u);
  EXPECT_EQ(tsc_hz_from(2, 3), 666666667u);                  // 0.667 rounds up
  EXPECT_EQ(tsc_hz_from(uint64_t{1} << 40, 1000000000), uint64_t{1} << 40);  // no overflow
}

// 11. When the measured rate replaces the nominal one. Expect: 0.19 % off is
//     used; 5 ppm off is measurement noise (kept); 10 % off is a failed
//     measurement (kept); 0 (no measurement) is kept.
TEST(TscCalibration, UsesTheMeasuredRateOnlyWhenPlausiblyDifferent) {
  EXPECT_TRUE(use_measured_tsc_hz(2450000000, 2445422000));
  EXPECT_TRUE(use_measured_tsc_hz(2450000000, 2454578000));
  EXPECT_FALSE(use_measured_tsc_hz(2450000000, 2450012250));  // 5 ppm
  EXPECT_FALSE(use_measured_tsc_hz(2450000000, 2205000000));  // 10 %
  EXPECT_FALSE(use_measured_tsc_hz(2450000000, 0));
}

}  // namespace
}  // namespace sf::nic::app
