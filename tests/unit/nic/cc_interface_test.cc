// The CongestionControl variant with the ACK-driven alternatives: names and
// parsing (honoured or refused by what the caller delivers), the ACK / RTO /
// window visitors, and that DCQCN and "none" ignore ACKs and set no window.
#include <gtest/gtest.h>

#include "nic/cc/congestion_control.h"

namespace sf::nic {
namespace {

constexpr BitRate kLine = BitRate::gbps(100);

// 1. Every name parses to its algorithm and prints back; the ACK-driven ones
// only for a caller that delivers ACKs.
TEST(CcInterface, NamesAndParsing) {
  for (const char* n : {"swift", "bbr", "hpcc", "nscc"}) {
    EXPECT_FALSE(cc_choice_from_string(n).has_value()) << n;  // kRateOnly refuses them
    const auto c = cc_choice_from_string(n, CcEvents::kAckDriven);
    ASSERT_TRUE(c.has_value()) << n;
    EXPECT_EQ(to_string(*c), n);
    EXPECT_EQ(to_string(c->algorithm), n);
    EXPECT_EQ(cc_algorithm_from_string(n), c->algorithm);
    EXPECT_TRUE(cc_needs_acks(c->algorithm));
    EXPECT_EQ(cc_algorithm(make_congestion_control(*c, kLine)), c->algorithm);
  }
  for (const char* n : {"none", "dcqcn", "dcqcn-paper", "dcqcn-nvidia"}) {
    EXPECT_EQ(cc_choice_from_string(n), cc_choice_from_string(n, CcEvents::kAckDriven)) << n;
    EXPECT_TRUE(cc_choice_from_string(n).has_value()) << n;
    EXPECT_FALSE(cc_needs_acks(cc_choice_from_string(n)->algorithm)) << n;
  }
  EXPECT_FALSE(cc_choice_from_string("timely", CcEvents::kAckDriven).has_value());
  EXPECT_FALSE(cc_choice_from_string("Swift", CcEvents::kAckDriven).has_value());
}

// 2. ACKs and RTOs do nothing to DCQCN and FixedRate; they have no window.
TEST(CcInterface, RateOnlyAlternativesIgnoreAcks) {
  CongestionControl d = make_congestion_control(CcChoice{CcAlgorithm::kDcqcn}, kLine);
  CongestionControl none = make_congestion_control(CcChoice{}, kLine);
  AckEvent a;
  a.acked_bytes = 4096;
  a.rtt = TimeNs::from_us(500);
  a.ecn_echo = true;
  cc_on_ack(d, a, TimeNs::from_us(1));
  cc_on_rto(d, TimeNs::from_us(2));
  cc_on_ack(none, a, TimeNs::from_us(1));
  EXPECT_EQ(cc_rate(d), kLine);
  EXPECT_EQ(cc_window_bytes(d), kNoWindow);
  EXPECT_EQ(cc_window_bytes(none), kNoWindow);
  EXPECT_EQ(std::get<Dcqcn>(d).counters().cuts, 0u);
}

// 3. The visitors reach the ACK-driven alternative: a Swift QP's window
// follows on_ack, its rate stays at line rate while cwnd >= 1.
TEST(CcInterface, AckVisitorsReachSwift) {
  CongestionControl s = make_congestion_control(*cc_choice_from_string("swift", CcEvents::kAckDriven), kLine);
  const uint64_t w0 = cc_window_bytes(s);
  EXPECT_NE(w0, kNoWindow);
  AckEvent a;
  a.acked_bytes = 4096;
  a.rtt = TimeNs::from_ms(1);  // far above target: one cut by max_mdf
  cc_on_ack(s, a, TimeNs::from_us(1));
  EXPECT_EQ(cc_window_bytes(s), static_cast<uint64_t>(std::get<Swift>(s).cwnd() * 4096));
  EXPECT_LT(cc_window_bytes(s), w0);
  EXPECT_EQ(cc_rate(s), kLine);
  // The RateController members stay harmless for it.
  cc_on_cnp(s, TimeNs::from_us(2));
  cc_on_tx_bytes(s, 1 << 20, TimeNs::from_us(2));
  EXPECT_EQ(cc_next_deadline(s), TimeNs::max());
}

// 4. HPCC through the variant: INT records in, window and rate W / T out.
TEST(CcInterface, HpccThroughVariant) {
  CongestionControl h = make_congestion_control(HpccParams{}, kLine);
  const wire::IntHop seed = wire::make_int_hop(0, 0, 0, 100'000'000'000);
  const wire::IntHop full = wire::make_int_hop(10'000, 125'056, 0, 100'000'000'000);
  AckEvent a;
  a.ack_seq = 1;
  a.snd_nxt = 10;
  a.int_hops = std::span<const wire::IntHop>(&seed, 1);
  cc_on_ack(h, a, TimeNs(0));
  a.ack_seq = 11;
  a.int_hops = std::span<const wire::IntHop>(&full, 1);
  cc_on_ack(h, a, TimeNs(0));
  EXPECT_LT(cc_window_bytes(h), 125'000u);
  EXPECT_LT(cc_rate(h), kLine);
}

}  // namespace
}  // namespace sf::nic
