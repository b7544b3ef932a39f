// HPCC under virtual time against the paper's Algorithm 1 as the ns-3 code
// runs it (shared/reference/cc.md 2.2-2.3): per-hop u = min(qLen, qLen') /
// (B T) + txRate / B, U = EWMA with weight tau / T, W = Wc / (U / eta) + W_AI
// (or Wc + W_AI below eta within maxStage), one Wc commit per RTT, R = W / T.
// INT records are built with the wire encoding (common/wire/int_shim.h).
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "common/wire/int_shim.h"
#include "nic/cc/hpcc.h"

namespace sf::nic {
namespace {

constexpr BitRate kLine = BitRate::gbps(100);
// T = 10.24 us so that every byte count below is a whole number of the
// 64-byte tx_units of the wire record.
constexpr double kT = 10'240;      // ns
constexpr double kWinit = 128'000; // 100 G x T, bytes
constexpr double kWai = 51.2;      // 40 Mb/s x T
constexpr double kEta = 0.95;
constexpr double kB = 12.5;        // bytes per ns at 100 G

wire::IntHop hop(uint64_t ts_ns, uint64_t tx_bytes, uint64_t qlen, uint64_t rate_bps = 100'000'000'000) {
  return wire::make_int_hop(ts_ns, tx_bytes, qlen, rate_bps);
}

// One ACK: `committing` passes the last commit's snd_nxt.
struct Driver {
  Hpcc h;
  uint64_t seq = 1;
  static HpccParams defaults() {
    HpccParams p;
    p.base_rtt = TimeNs(10'240);
    return p;
  }
  explicit Driver(const HpccParams& p = defaults()) : h(p, kLine) {}
  void ack(std::span<const wire::IntHop> hops, bool committing = true) {
    AckEvent a;
    a.acked_bytes = 4096;
    a.ack_seq = committing ? seq + 1 : seq;
    if (committing) seq += 1000;
    a.snd_nxt = seq;
    a.int_hops = hops;
    h.on_ack(a, TimeNs(0));
  }
  void ack1(const wire::IntHop& x, bool committing = true) { ack(std::span<const wire::IntHop>(&x, 1), committing); }
};

// 1. Bad parameters refused, naming the field.
TEST(HpccParams, BadParametersNamed) {
  EXPECT_FALSE(HpccParams{}.validate().has_value());
  auto bad = [](auto edit) {
    HpccParams p;
    edit(p);
    return std::string(p.validate().value_or("(accepted)"));
  };
  EXPECT_EQ(bad([](HpccParams& p) { p.eta = 0; }).rfind("eta:", 0), 0u);
  EXPECT_EQ(bad([](HpccParams& p) { p.eta = 1.5; }).rfind("eta:", 0), 0u);
  EXPECT_EQ(bad([](HpccParams& p) { p.base_rtt = TimeNs(0); }).rfind("base_rtt:", 0), 0u);
  EXPECT_EQ(bad([](HpccParams& p) { p.min_rate = BitRate(0); }).rfind("min_rate:", 0), 0u);
  EXPECT_EQ(bad([](HpccParams& p) { p.initial_rate = BitRate::mbps(50); }).rfind("initial_rate:", 0), 0u);
}

// 2. Starts at W_init = line x T, rate = line; W_AI from run.py's RATE_AI.
// The first INT ACK only seeds the per-hop records.
TEST(Hpcc, InitialAndSeed) {
  Driver d;
  EXPECT_DOUBLE_EQ(d.h.window(), kWinit);
  EXPECT_DOUBLE_EQ(d.h.w_ai_bytes(), kWai);
  EXPECT_EQ(d.h.rate(), kLine);
  d.ack1(hop(1000, 0, 0));
  EXPECT_EQ(d.h.counters().seeds, 1u);
  EXPECT_DOUBLE_EQ(d.h.window(), kWinit);
  AckEvent no_int;
  d.h.on_ack(no_int, TimeNs(0));
  EXPECT_EQ(d.h.counters().acks_without_int, 1u);
}

// 3. A link at full rate with no queue: u = 1 >= eta: W = Wc / (1/0.95) + W_AI,
// committed; the rate follows W / T.
TEST(Hpcc, FullLinkMultiplicativeStep) {
  Driver d;
  d.ack1(hop(1000, 0, 0));
  d.ack1(hop(1000 + 10'240, 128'000, 0));
  EXPECT_DOUBLE_EQ(d.h.utilisation(), 1.0);
  const double w = kWinit / (1.0 / kEta) + kWai;
  EXPECT_DOUBLE_EQ(d.h.window(), w);
  EXPECT_DOUBLE_EQ(d.h.reference_window(), w);
  EXPECT_EQ(d.h.window_bytes(), static_cast<uint64_t>(w));
  EXPECT_EQ(d.h.rate().bps(), static_cast<uint64_t>(w * 8e9 / kT));
  EXPECT_EQ(d.h.counters().commits, 1u);
}

// 4. The queue term uses min(qLen, qLen_prev) / (B T): a spike seen once is filtered.
TEST(Hpcc, QueueTermUsesMinOfTwoRecords) {
  Driver d;
  d.ack1(hop(0, 0, 25'600));
  d.ack1(hop(10'240, 128'000, 200'000));  // min(200000, 25600) / 128000 = 0.2
  EXPECT_DOUBLE_EQ(d.h.utilisation(), 0.2 + 1.0);
  EXPECT_DOUBLE_EQ(d.h.window(), kWinit / (1.2 / kEta) + kWai);
}

// 5. U is an EWMA with weight tau / T (tau capped at T).
TEST(Hpcc, UtilisationEwmaWeightedByTau) {
  Driver d;
  d.ack1(hop(0, 0, 51'200));
  d.ack1(hop(10'240, 64'000, 0));  // tau = T: U = u = min(0, 51200) / BT + 0.5
  EXPECT_DOUBLE_EQ(d.h.utilisation(), 0.5);
  d.ack1(hop(15'360, 128'000, 64'000));  // tau = T/2, u = 0 + 64000 / 5120 / 12.5 = 1.0
  EXPECT_DOUBLE_EQ(d.h.utilisation(), 0.5 * 0.5 + 0.5 * 1.0);
  d.ack1(hop(15'360 + 40'960, 128'000 + 512'000, 64'000));  // tau 4T capped at T: U = u = 0.5 + 1.0
  EXPECT_DOUBLE_EQ(d.h.utilisation(), 1.5);
}

// 6. One commit per RTT: ACKs not past the last commit's snd_nxt react from
// the reference window Wc (fast react) and leave Wc and the records alone.
TEST(Hpcc, OneCommitPerRtt) {
  Driver d;
  d.ack1(hop(0, 0, 0));
  d.ack1(hop(10'240, 128'000, 0));  // commit: Wc = W1
  const double w1 = d.h.reference_window();
  d.ack1(hop(20'480, 256'000, 128'000), false);  // fast react (vs the committed record): u = 0 + 1
  EXPECT_DOUBLE_EQ(d.h.reference_window(), w1);
  EXPECT_DOUBLE_EQ(d.h.window(), w1 / (1.0 / kEta) + kWai);
  d.ack1(hop(20'480, 256'000, 128'000), false);  // same again: ts delta to the *committed* record is T
  EXPECT_DOUBLE_EQ(d.h.reference_window(), w1);
  EXPECT_EQ(d.h.counters().fast_reacts, 2u);
  d.ack1(hop(20'480, 256'000, 128'000), true);  // commits from Wc (not from W)
  EXPECT_DOUBLE_EQ(d.h.reference_window(), w1 / (1.0 / kEta) + kWai);
  EXPECT_EQ(d.h.counters().commits, 2u);
}

// 7. Several hops: the most utilised one decides (and its tau weights the EWMA).
TEST(Hpcc, MaxOverHops) {
  Driver d;
  const std::array<wire::IntHop, 3> a{hop(0, 0, 0), hop(0, 0, 0, 400'000'000'000), hop(0, 0, 0)};
  d.ack(a);
  // hop 0: half rate; hop 1 (400 G): 1.2 x 400 G over T/2 = 307200 B; hop 2: idle.
  const std::array<wire::IntHop, 3> b{hop(10'240, 64'000, 0), hop(5'120, 307'200, 0, 400'000'000'000),
                                      hop(10'240, 0, 0)};
  d.ack(b);
  const double u1 = 307'200.0 / 5'120 / (4 * kB);  // 1.2
  EXPECT_DOUBLE_EQ(d.h.utilisation(), 0.5 * 1.0 + 0.5 * u1);
}

// 8. maxStage > 0: below eta, additive steps W = Wc + W_AI for maxStage
// commits, then the multiplicative form (which grows W when U < eta).
TEST(Hpcc, AdditiveStagesThenMultiplicative) {
  HpccParams p = Driver::defaults();
  p.max_stage = 2;
  p.eta = 0.95;
  Driver d(p);
  d.ack1(hop(0, 0, 0));
  // Bring W well below W_init: one step at U = 2.
  d.ack1(hop(10'240, 256'000, 0));
  const double wc = kWinit / (2.0 / kEta) + kWai;
  ASSERT_DOUBLE_EQ(d.h.reference_window(), wc);
  uint64_t tx = 256'000;
  int64_t ts = 10'240;
  auto half = [&] {  // u = 0.5, tau = T: U = 0.5
    ts += 10'240;
    tx += 64'000;
    d.ack1(hop(static_cast<uint64_t>(ts), tx, 0));
  };
  half();
  EXPECT_DOUBLE_EQ(d.h.reference_window(), wc + kWai);
  EXPECT_EQ(d.h.inc_stage(), 1u);
  half();
  EXPECT_DOUBLE_EQ(d.h.reference_window(), wc + 2 * kWai);
  EXPECT_EQ(d.h.inc_stage(), 2u);
  half();
  EXPECT_DOUBLE_EQ(d.h.reference_window(), (wc + 2 * kWai) / (0.5 / kEta) + kWai);
  EXPECT_EQ(d.h.inc_stage(), 0u);
}

// 9. Counters wrap: ts and tx_units deltas across 2^32 are right.
TEST(Hpcc, WireCountersWrap) {
  Driver d;
  const uint64_t ts0 = (uint64_t{1} << 32) - 4'000;
  const uint64_t tx0 = (uint64_t{1} << 32) * 64 - 64'000;
  d.ack1(hop(ts0, tx0, 0));
  d.ack1(hop(ts0 + 10'240, tx0 + 128'000, 0));
  EXPECT_DOUBLE_EQ(d.h.utilisation(), 1.0);
}

// 10. Window bounds: never above W_init, never below min_rate x T.
TEST(Hpcc, WindowBounds) {
  Driver d;
  d.ack1(hop(0, 0, 0));
  d.ack1(hop(10'240, 0, 0));  // idle link: U = 0 -> W would be infinite
  EXPECT_DOUBLE_EQ(d.h.window(), kWinit);
  d.ack1(hop(20'480, 128'000, 4'000'000'000));  // min(q, 0) = 0 -> U = 1
  d.ack1(hop(30'720, 256'000, 4'000'000'000));  // huge queue
  EXPECT_DOUBLE_EQ(d.h.window(), 100e6 / 8e9 * kT);  // min_rate 100 Mb/s x T
}

// 11. Closed loop: two flows start at W_init each (200 % load) on one
// 100 G hop. Each RTT the port sends what it can, queues the rest, and both
// flows get that record. Expect: the queue drains, the sum of the rates
// converges to eta x C (+ W_AI / T each), the two flows equal.
TEST(Hpcc, TwoFlowsConvergeToEta) {
  std::vector<Driver> flows;
  flows.emplace_back();
  flows.emplace_back();
  double queue = 0, port_tx = 0;
  int64_t ts = 0;
  for (Driver& f : flows) f.ack1(hop(0, 0, 0));
  double max_queue = 0;
  for (int step = 0; step < 200; ++step) {
    double arrivals = 0;
    for (const Driver& f : flows) arrivals += f.h.window();  // R x T = W
    const double cap = kB * kT;
    const double backlog = queue + arrivals;
    const double sent = std::min(backlog, cap);
    queue = backlog - sent;
    max_queue = std::max(max_queue, queue);
    port_tx += sent;
    ts += static_cast<int64_t>(kT);
    const wire::IntHop h = hop(static_cast<uint64_t>(ts), static_cast<uint64_t>(port_tx), static_cast<uint64_t>(queue));
    for (Driver& f : flows) f.ack1(h);
  }
  EXPECT_GT(max_queue, 100'000.0);
  EXPECT_LT(queue, 4096.0);
  const double r0 = static_cast<double>(flows[0].h.rate().bps()), r1 = static_cast<double>(flows[1].h.rate().bps());
  EXPECT_NEAR((r0 + r1) / 100e9, kEta + 2 * 40e6 / 100e9, 0.01);
  EXPECT_NEAR(r0 / r1, 1.0, 1e-9);
}

// 12. initial_rate (seed 001's start below line rate): the first window is
// initial_rate x T and the rate initial_rate; the ceiling stays line x T.
// On an idle link (u = 0.1) the multiplicative step Wc eta / U grows it to
// the ceiling in two commits, never above.
TEST(Hpcc, InitialRateStartsBelowLine) {
  HpccParams p = Driver::defaults();
  p.initial_rate = BitRate::gbps(10);
  Driver d(p);
  EXPECT_DOUBLE_EQ(d.h.window(), kWinit / 10);
  EXPECT_DOUBLE_EQ(d.h.w_start_bytes(), kWinit / 10);
  EXPECT_DOUBLE_EQ(d.h.w_init_bytes(), kWinit);
  EXPECT_EQ(d.h.rate(), BitRate::gbps(10));
  d.ack1(hop(0, 0, 0));
  d.ack1(hop(10'240, 12'800, 0));  // 10 % of the link in T, no queue: U = 0.1
  EXPECT_DOUBLE_EQ(d.h.utilisation(), 0.1);
  EXPECT_DOUBLE_EQ(d.h.window(), kWinit / 10 * kEta / 0.1 + kWai);
  EXPECT_LT(d.h.window(), kWinit);
  d.ack1(hop(20'480, 25'600, 0));  // still U = 0.1: W = Wc x 9.5, clamped
  EXPECT_DOUBLE_EQ(d.h.window(), kWinit);
  EXPECT_EQ(d.h.rate(), kLine);
  // Above line rate it is the paper's start.
  p.initial_rate = BitRate::gbps(400);
  EXPECT_DOUBLE_EQ(Driver(p).h.window(), kWinit);
  EXPECT_EQ(Driver(p).h.rate(), kLine);
}

// 13. eta is the trade-off seed 001 measures: the closed loop of test 11
// settles at eta x C (+ W_AI / T per flow) for eta 0.95, 0.98 and 0.99, the
// queue drained at every eta (a higher eta leaves less of the link idle).
TEST(Hpcc, EtaSetsTheUtilisation) {
  for (double eta : {0.95, 0.98, 0.99}) {
    HpccParams p = Driver::defaults();
    p.eta = eta;
    std::vector<Driver> flows;
    flows.emplace_back(p);
    flows.emplace_back(p);
    double queue = 0, port_tx = 0;
    int64_t ts = 0;
    for (Driver& f : flows) f.ack1(hop(0, 0, 0));
    for (int step = 0; step < 300; ++step) {
      double arrivals = 0;
      for (const Driver& f : flows) arrivals += f.h.window();
      const double sent = std::min(queue + arrivals, kB * kT);
      queue = queue + arrivals - sent;
      port_tx += sent;
      ts += static_cast<int64_t>(kT);
      const wire::IntHop h = hop(static_cast<uint64_t>(ts), static_cast<uint64_t>(port_tx), static_cast<uint64_t>(queue));
      for (Driver& f : flows) f.ack1(h);
    }
    const double sum = static_cast<double>(flows[0].h.rate().bps() + flows[1].h.rate().bps()) / 100e9;
    EXPECT_NEAR(sum, eta + 2 * 40e6 / 100e9, 0.01) << eta;
    EXPECT_LT(queue, 4096.0) << eta;
  }
}

}  // namespace
}  // namespace sf::nic
