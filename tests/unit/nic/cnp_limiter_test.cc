// DCQCN notification point: CNP spacing per QP under virtual time
// (shared/reference/cc.md 1.3).
#include <gtest/gtest.h>

#include "nic/cc/cnp_limiter.h"
#include "nic/cc/dcqcn.h"

namespace sf::nic {
namespace {

TimeNs us(int64_t v) { return TimeNs::from_us(v); }

// 1. The first CE mark of a QP always sends a CNP, whatever the time.
TEST(CnpLimiter, FirstMarkSends) {
  CnpLimiter l(us(50));
  EXPECT_TRUE(l.should_send(TimeNs::zero()));
  EXPECT_EQ(l.sent(), 1u);
  EXPECT_EQ(l.suppressed(), 0u);
}

// 2. Marks every 1 us for 200 us with a 50 us interval: CNPs at 0, 50, 100,
// 150 (4 sent), the other 197 marks suppressed; the boundary is inclusive.
TEST(CnpLimiter, OncePerIntervalWithSuppressedCount) {
  CnpLimiter l(us(50));
  uint64_t sent = 0;
  for (int t = 0; t <= 200; ++t) {
    const bool s = l.should_send(us(t));
    EXPECT_EQ(s, t % 50 == 0) << t;
    sent += s;
  }
  EXPECT_EQ(sent, 5u);  // 0, 50, 100, 150, 200
  EXPECT_EQ(l.sent(), 5u);
  EXPECT_EQ(l.suppressed(), 201u - 5u);
  EXPECT_EQ(l.next_deadline(), TimeNs::max());  // kSuppress owes nothing
}

// 3. The interval runs from the last CNP sent, not from a fixed grid: marks at
// 0, 49.999, 70, 119, 120 -> CNPs at 0, 70, 120.
TEST(CnpLimiter, IntervalCountsFromLastSent) {
  CnpLimiter l(us(50));
  EXPECT_TRUE(l.should_send(us(0)));
  EXPECT_FALSE(l.should_send(us(50) - TimeNs(1)));
  EXPECT_TRUE(l.should_send(us(70)));
  EXPECT_FALSE(l.should_send(us(119)));
  EXPECT_TRUE(l.should_send(us(120)));
  EXPECT_EQ(l.sent(), 3u);
  EXPECT_EQ(l.suppressed(), 2u);
}

// 4. Deferred mode (paper / htsim): marks inside the interval are owed one CNP
// at its end; nothing is owed when no mark came.
TEST(CnpLimiter, DeferredSendsOneAtIntervalEnd) {
  CnpLimiter l(us(50), CnpCoalesce::kDeferred);
  EXPECT_TRUE(l.should_send(us(0)));
  EXPECT_EQ(l.next_deadline(), TimeNs::max());
  EXPECT_FALSE(l.should_send(us(10)));
  EXPECT_FALSE(l.should_send(us(20)));
  EXPECT_TRUE(l.pending());
  EXPECT_EQ(l.next_deadline(), us(50));
  EXPECT_FALSE(l.advance(us(49)));
  EXPECT_TRUE(l.advance(us(50)));
  EXPECT_FALSE(l.advance(us(50)));  // once
  EXPECT_EQ(l.sent(), 2u);
  EXPECT_EQ(l.counters().deferred, 1u);
  EXPECT_EQ(l.suppressed(), 2u);
  // The deferred CNP restarted the interval: a mark at 60 is held until 100.
  EXPECT_FALSE(l.should_send(us(60)));
  EXPECT_EQ(l.next_deadline(), us(100));
  // A mark at or after the deadline sends at once and clears the debt.
  EXPECT_TRUE(l.should_send(us(100)));
  EXPECT_FALSE(l.pending());
  EXPECT_FALSE(l.advance(us(200)));
  EXPECT_EQ(l.sent(), 3u);
}

// 5. Interval 0: every mark gets a CNP.
TEST(CnpLimiter, ZeroIntervalSendsEveryMark) {
  CnpLimiter l(TimeNs::zero());
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(l.should_send(us(1)));
  EXPECT_EQ(l.sent(), 10u);
  EXPECT_EQ(l.suppressed(), 0u);
}

// 6. The parameter sets' NP intervals: 50 us (paper) and 4 us (firmware).
TEST(CnpLimiter, ParamSetIntervals) {
  CnpLimiter paper(DcqcnParams::paper(BitRate::gbps(100)).cnp_interval);
  CnpLimiter fw(DcqcnParams::nvidia(BitRate::gbps(100)).cnp_interval);
  int paper_sent = 0;
  int fw_sent = 0;
  for (int t = 0; t < 100; ++t) {  // a mark every 1 us for 100 us
    paper_sent += paper.should_send(us(t));
    fw_sent += fw.should_send(us(t));
  }
  EXPECT_EQ(paper_sent, 2);   // 0, 50
  EXPECT_EQ(fw_sent, 25);     // 0, 4, ..., 96
}

}  // namespace
}  // namespace sf::nic
