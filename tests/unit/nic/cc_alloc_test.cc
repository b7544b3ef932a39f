// STYLE G6 for congestion control: once constructed, a QP's controller
// (either variant alternative, either DCQCN parameter set, NP limiter too)
// allocates nothing while it handles CNPs, transmitted bytes and timers.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "nic/cc/cnp_limiter.h"
#include "nic/cc/congestion_control.h"
#include "tests/support/alloc_count.h"

namespace sf::nic {
namespace {

// An INT record as a switch writes it (int_shim.h; this binary links nic/cc only).
wire::IntHop hop(TimeNs now, uint64_t tx_bytes, uint64_t qlen, uint32_t rate_mbps) {
  wire::IntHop h;
  h.ts_ns.set(static_cast<uint32_t>(now.ns()));
  h.tx_units.set(static_cast<uint32_t>(tx_bytes / wire::IntHop::kTxUnitBytes));
  h.qlen_bytes.set(static_cast<uint32_t>(qlen));
  h.rate_mbps.set(rate_mbps);
  return h;
}

// 100 ms of virtual time: a 4 KB packet every 400 ns, a CE mark every 10th
// packet turned into CNPs by the limiter, advance() at every deadline.
// Expect: zero allocations, and the controller really worked (cuts and
// increases happened).
TEST(CcAlloc, NoAllocationPerEvent) {
  const BitRate line = BitRate::gbps(100);
  std::array<CongestionControl, 3> ccs{make_congestion_control(*cc_choice_from_string("none"), line),
                                       make_congestion_control(*cc_choice_from_string("dcqcn-paper"), line),
                                       make_congestion_control(*cc_choice_from_string("dcqcn-nvidia"), line)};
  CnpLimiter np(TimeNs::from_us(50), CnpCoalesce::kDeferred);
  const uint64_t before = sf::test::allocations();
  for (int64_t k = 0; k < 250'000; ++k) {
    const TimeNs now(k * 400);
    const bool marked = (k % 10) == 0 && (k / 50'000) % 2 == 0;  // congestion on and off
    const bool cnp = (marked && np.should_send(now)) || np.advance(now);
    for (CongestionControl& cc : ccs) {
      if (cc_next_deadline(cc) <= now) cc_advance(cc, now);
      if (cnp) cc_on_cnp(cc, now);
      cc_on_tx_bytes(cc, 4096, now);
    }
  }
  EXPECT_EQ(sf::test::allocations(), before);
  for (size_t i = 1; i < ccs.size(); ++i) {
    const Dcqcn& d = std::get<Dcqcn>(ccs[i]);
    EXPECT_GT(d.counters().cuts, 0u) << i;
    EXPECT_GT(d.counters().fast_recovery_steps + d.counters().additive_steps, 0u) << i;
  }
  EXPECT_GT(np.counters().deferred, 0u);
}

// The ACK-driven alternatives: 100 ms of ACKs (one per 400 ns) with RTTs
// that swing above and below every target, ECN marks, a 2-hop INT stack,
// NACKs and RTOs now and then, through the variant's visitors.
// Expect: zero allocations, and each controller moved both ways.
TEST(CcAlloc, NoAllocationPerAck) {
  const BitRate line = BitRate::gbps(100);
  std::array<CongestionControl, 4> ccs{
      make_congestion_control(*cc_choice_from_string("swift", CcEvents::kAckDriven), line),
      make_congestion_control(*cc_choice_from_string("bbr", CcEvents::kAckDriven), line),
      make_congestion_control(*cc_choice_from_string("hpcc", CcEvents::kAckDriven), line),
      make_congestion_control(*cc_choice_from_string("nscc", CcEvents::kAckDriven), line)};
  std::array<uint64_t, 4> lo{}, hi{};
  lo.fill(UINT64_MAX);
  std::array<wire::IntHop, 2> hops{};
  uint64_t port_tx = 0;
  const uint64_t before = sf::test::allocations();
  for (int64_t k = 0; k < 250'000; ++k) {
    const TimeNs now(k * 400);
    const bool congested = (k / 20'000) % 2 == 1;
    port_tx += congested ? 5'000 : 3'000;
    const uint64_t q = congested ? 300'000 : 0;
    hops[0] = hop(now, port_tx, q, 100'000);
    hops[1] = hop(now, port_tx / 2, 0, 400'000);
    AckEvent a;
    a.kind = k % 5'003 == 0 ? AckKind::kNackTrim : k % 7'001 == 0 ? AckKind::kNackLoss : AckKind::kAck;
    a.acked_bytes = 4096;
    a.ack_seq = static_cast<uint64_t>(k) * 4096;
    a.snd_nxt = a.ack_seq + 64 * 4096;
    a.inflight_bytes = congested ? 400'000 : 60'000;
    a.rtt = TimeNs::from_us(congested ? 60 : 8);
    a.remote_delay = TimeNs::from_us(1);
    a.hops = 2;
    a.delivered_bytes = 64 * 4096;
    a.delivery_interval = TimeNs::from_us(congested ? 40 : 25);
    a.ecn_echo = congested && k % 3 == 0;
    a.rcv_cwnd_pen = k % 1'000 == 0 ? 32 : 0;
    a.int_hops = hops;
    for (std::size_t i = 0; i < ccs.size(); ++i) {
      cc_on_ack(ccs[i], a, now);
      if (k % 50'021 == 0) cc_on_rto(ccs[i], now);
      const uint64_t w = cc_window_bytes(ccs[i]);
      lo[i] = std::min(lo[i], w);
      hi[i] = std::max(hi[i], w);
    }
  }
  EXPECT_EQ(sf::test::allocations(), before);
  for (std::size_t i = 0; i < ccs.size(); ++i) {
    EXPECT_LT(lo[i] * 2, hi[i]) << to_string(cc_algorithm(ccs[i])) << ": window did not move";
  }
}

}  // namespace
}  // namespace sf::nic
