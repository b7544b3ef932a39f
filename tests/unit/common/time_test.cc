// Unit tests of common/time.h and common/node.h arithmetic.
#include "common/node.h"
#include "common/time.h"

#include <gtest/gtest.h>

namespace sf {
namespace {

TEST(TimeNs, ArithmeticAndSaturation) {
  EXPECT_EQ(TimeNs::from_us(3) + TimeNs(5), TimeNs(3005));
  EXPECT_EQ(TimeNs::from_ms(2) - TimeNs::from_us(1), TimeNs(1999000));
  EXPECT_EQ(sat_add(TimeNs::max(), TimeNs(1)), TimeNs::max());
  EXPECT_EQ(sat_add(TimeNs(1), TimeNs::max()), TimeNs::max());
  EXPECT_LT(TimeNs(1), TimeNs(2));
}

TEST(BitRate, TxTimeRoundsUpAndBytesInRoundsDown) {
  // 1500 B at 10 Gb/s = 1200 ns exactly.
  EXPECT_EQ(BitRate::gbps(10).tx_time(1500), TimeNs(1200));
  // 84 B at 400 Gb/s = 1.68 ns -> 2 ns (never faster than the rate).
  EXPECT_EQ(BitRate::gbps(400).tx_time(84), TimeNs(2));
  EXPECT_EQ(BitRate::gbps(10).bytes_in(TimeNs(1200)), 1500u);
  EXPECT_EQ(BitRate::gbps(10).bytes_in(TimeNs(1199)), 1498u);
  EXPECT_EQ(BitRate(0).tx_time(9000), TimeNs(0));
}

TEST(TscConverter, RoundTrip) {
  const TscConverter c(2'500'000'000ull);
  EXPECT_EQ(c.to_ns(2'500'000'000ull), TimeNs::from_s(1));
  EXPECT_EQ(c.to_cycles(TimeNs::from_us(1)), 2500u);
}

// to_ns splits whole seconds off and divides by multiplying with a
// reciprocal. Expect: the exact floor(cycles x 1e9 / hz) of the 128-bit
// formula, for TSC rates from tiny and powers of two (where the reciprocal
// is furthest below 2^64 / hz) to above the 64-bit split's limit, at second
// boundaries and at random cycle counts up to 1e5 s of uptime.
TEST(TscConverter, ToNsIsExactFloor) {
  const uint64_t rates[] = {1ull,           3ull,           1ull << 31,     1ull << 33,     1'000'000'007ull,
                            2'095'078'000ull, 2'500'000'000ull, 3'999'999'999ull, 17'000'000'000ull,
                            18'446'744'073ull, 25'000'000'000ull};
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (uint64_t hz : rates) {
    const TscConverter c(hz);
    auto want = [hz](uint64_t cyc) {
      return static_cast<int64_t>((static_cast<U128>(cyc) * 1000000000u) / hz);
    };
    for (uint64_t cyc : {uint64_t{0}, uint64_t{1}, hz - 1, hz, hz + 1, 7 * hz - 1}) {
      EXPECT_EQ(c.to_ns(cyc).ns(), want(cyc)) << "hz " << hz << " cycles " << cyc;
    }
    // The top of the 64-bit cycle range, where the ns still fit int64_t.
    if (hz >= 2'000'000'000ull) {
      for (uint64_t cyc : {UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - hz, UINT64_MAX / 3}) {
        EXPECT_EQ(c.to_ns(cyc).ns(), want(cyc)) << "hz " << hz << " cycles " << cyc;
      }
    }
    for (int i = 0; i < 10000; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const uint64_t cyc = x % (hz * 100'000'000ull / 1'000ull);  // < 1e5 s of cycles
      ASSERT_EQ(c.to_ns(cyc).ns(), want(cyc)) << "hz " << hz << " cycles " << cyc;
    }
  }
}

TEST(WireBytes, PadsShortFramesAndAddsOverhead) {
  EXPECT_EQ(wire_bytes(60), 84u);   // the classic 64 B frame: 84 B on the wire
  EXPECT_EQ(wire_bytes(42), 84u);   // padded to the minimum
  EXPECT_EQ(wire_bytes(1514), 1538u);
}

}  // namespace
}  // namespace sf
