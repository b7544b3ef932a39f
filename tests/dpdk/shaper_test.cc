// Shaper arithmetic, idle back-off policy and mempool sizing under virtual
// time (suite `unit`: no EAL, no sleeping; STYLE G12).
#include "common/dpdk/shaper.h"

#include <gtest/gtest.h>

#include "common/dpdk/idle_backoff.h"
#include "common/dpdk/mempool.h"

namespace sf::dpdk {
namespace {

// Drives a shaper like the poll loop does: every `step` of virtual time, refill
// and send as many packets of `frame` bytes as the allowance says.
uint64_t packets_in_window(BitRate rate, uint32_t frame, TimeNs window, TimeNs step, uint64_t burst) {
  Shaper s(rate, burst, TimeNs::zero());
  const uint32_t w = wire_bytes(frame);
  uint64_t sent = 0;
  for (TimeNs t = step; t <= window; t += step) {
    s.refill(t);
    const uint16_t n = s.allowance(w, 32);
    s.charge(uint64_t{n} * w);
    sent += n;
  }
  return sent;
}

// Expected: floor(rate x window / wire bits) when the bucket starts empty and
// is drained every step (never hits its cap).
uint64_t expected(BitRate rate, uint32_t frame, TimeNs window) {
  return rate.bytes_in(window) / wire_bytes(frame);
}

// 1. 1500 B frames for 1 ms at 1, 10, 100 Gb/s. Expect: exactly rate/wire packets.
TEST(Shaper, ExactPacketsPerWindow1500B) {
  for (double g : {1.0, 10.0, 100.0}) {
    const BitRate r = BitRate::gbps(g);
    const TimeNs window = TimeNs::from_ms(1);
    EXPECT_EQ(packets_in_window(r, 1500, window, TimeNs(100), 256 * 1024), expected(r, 1500, window)) << g;
  }
  EXPECT_EQ(expected(BitRate::gbps(10), 1500, TimeNs::from_ms(1)), 820u);  // 1.25 MB / 1524 B
  EXPECT_EQ(expected(BitRate::gbps(1), 1500, TimeNs::from_ms(1)), 82u);
  EXPECT_EQ(expected(BitRate::gbps(100), 1500, TimeNs::from_ms(1)), 8202u);
}

// 2. Minimum frames (64 B with FCS = pkt_len 60 -> 84 B on the wire) for 1 s at 10 Gb/s. Expect:
//    14,880,952 packets, the textbook 10G line rate.
TEST(Shaper, LineRate64BAt10G) {
  const BitRate r = BitRate::gbps(10);
  EXPECT_EQ(packets_in_window(r, 60, TimeNs::from_s(1), TimeNs::from_us(1), 64 * 1024), 14880952u);
}

// 3. 64 B at 100 Gb/s for 1 ms, coarse 2 us steps (allowance capped at 32 per
//    ask would lose credit if the bucket were too small). Expect: exact.
TEST(Shaper, LineRate64BAt100GCoarseSteps) {
  const BitRate r = BitRate::gbps(100);
  // 2 us at 100G = 297 packets per step: the loop asks several times per step.
  Shaper s(r, Shaper::default_burst_bytes(r));
  uint64_t sent = 0;
  for (TimeNs t = TimeNs::from_us(2); t <= TimeNs::from_ms(1); t += TimeNs::from_us(2)) {
    s.refill(t);
    for (uint16_t n; (n = s.allowance(84, 32)) > 0;) {
      s.charge(uint64_t{n} * 84);
      sent += n;
    }
  }
  EXPECT_EQ(sent, expected(r, 60, TimeNs::from_ms(1)));  // 148,809 (64 B incl. FCS)
}

// 4. Idle for 10 ms, then send. Expect: at most one bucket of burst.
TEST(Shaper, BurstCappedAfterIdle) {
  const BitRate r = BitRate::gbps(10);
  Shaper s(r, 16 * 1024);
  s.refill(TimeNs::from_ms(10));
  EXPECT_EQ(s.credit_bytes(), 16 * 1024);
  EXPECT_EQ(s.allowance(1524, 32), 16 * 1024 / 1524);
}

// 5. A packet larger than estimated. Expect: credit goes negative, the next
//    allowance is 0 until the deficit is repaid.
TEST(Shaper, DeficitDelaysNextSend) {
  Shaper s(BitRate::gbps(1), 16 * 1024);
  s.refill(TimeNs::from_us(1));  // 125 bytes of credit
  ASSERT_EQ(s.allowance(84, 32), 1);
  s.charge(wire_bytes(9000));
  EXPECT_LT(s.credit_bytes(), 0);
  EXPECT_EQ(s.allowance(84, 32), 0);
  s.refill(TimeNs::from_us(1) + BitRate::gbps(1).tx_time(9024));  // repaid exactly
  EXPECT_GE(s.credit_bytes(), 0);
}

// 5b. Time until the next packet fits. Expect: exact ns of the missing credit.
TEST(Shaper, TimeUntilNextPacket) {
  Shaper s(BitRate::gbps(10), 16 * 1024);
  EXPECT_EQ(s.time_until(1524), BitRate::gbps(10).tx_time(1524));  // empty bucket: 1219.2 -> 1220 ns
  s.refill(TimeNs(1000));
  EXPECT_EQ(s.time_until(1524), TimeNs(220));
  s.refill(TimeNs(1220));
  EXPECT_EQ(s.time_until(1524), TimeNs::zero());
}

// 6. Unlimited shaper. Expect: allowance == max.
TEST(Shaper, UnlimitedAllowsMax) {
  Shaper s;
  EXPECT_TRUE(s.unlimited());
  EXPECT_EQ(s.allowance(84, 32), 32);
}

TEST(IdleBackoff, SpinPauseThenDoublingSleepResetOnWork) {
  IdleBackoffOptions o;
  o.enabled = true;
  o.spin_iterations = 2;
  o.pause_iterations = 1;
  o.min_sleep = TimeNs::from_us(1);
  o.max_sleep = TimeNs::from_us(4);
  IdleBackoff b(o);
  EXPECT_EQ(b.on_idle(), IdleAction::kSpin);
  EXPECT_EQ(b.on_idle(), IdleAction::kSpin);
  EXPECT_EQ(b.on_idle(), IdleAction::kPause);
  EXPECT_EQ(b.on_idle(), IdleAction::kSleep);
  EXPECT_EQ(b.sleep_time(), TimeNs::from_us(1));
  b.on_idle();
  EXPECT_EQ(b.sleep_time(), TimeNs::from_us(2));
  b.on_idle();
  b.on_idle();
  EXPECT_EQ(b.sleep_time(), TimeNs::from_us(4));  // capped
  b.on_work();
  EXPECT_EQ(b.on_idle(), IdleAction::kSpin);
}

TEST(IdleBackoff, DisabledAlwaysSpins) {
  IdleBackoff b;
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(b.on_idle(), IdleAction::kSpin);
}

TEST(MempoolSizing, FormulaAndRounding) {
  MempoolSizing s;
  s.ports = 2;
  s.rx_desc = 1024;
  s.tx_desc = 1024;
  s.lcores = 1;
  s.cache = 256;
  // 2*2048 + (256+32) + 2*64 = 4512 -> 8191
  EXPECT_EQ(mbuf_count(s), 8191u);
  EXPECT_EQ(round_to_pow2_minus1(4095), 4095u);
  EXPECT_EQ(round_to_pow2_minus1(4096), 8191u);
  s.ports = 1;
  s.rx_desc = 512;
  s.tx_desc = 512;
  EXPECT_EQ(mbuf_count(s), 2047u);  // 1024 + 288 + 64 = 1376
  EXPECT_EQ(cache_size_for(8191, 256), 256u);
  EXPECT_EQ(cache_size_for(8191, 4096), RTE_MEMPOOL_CACHE_MAX_SIZE);
  EXPECT_EQ(cache_size_for(63, 256), 42u);
}

}  // namespace
}  // namespace sf::dpdk
