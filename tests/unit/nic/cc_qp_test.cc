// The ACK-driven congestion control wired into the RC QP (docs/cc.md "RC
// integration"), between two NicNodes over a virtual-time link: RTT samples
// are the virtual path delay exactly, the window bounds the bytes in flight
// exactly (and so the throughput), timeouts and NAKs reach the algorithm,
// and every byte still arrives.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <variant>

#include "common/sim/simulator.h"
#include "common/wire/int_shim.h"
#include "common/wire/mbuf_icrc.h"
#include "nic/app/sf_nic_report.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

struct Pair {
  NicNode a;
  NicNode b;
  ScriptApp app_a;
  ScriptApp app_b;
  sim::Simulator sim;
  Endpoint ea;
  Endpoint eb;
  Pair(size_t buf_bytes, const CcChoice& cc, sim::LinkParams lp, uint64_t seed = 1, ConnParams p = {})
      : a(one_host_cfg(0), sf::test::mbuf_pool()), b(one_host_cfg(1), sf::test::mbuf_pool()), sim(seed) {
    a.set_app(&app_a);
    b.set_app(&app_b);
    const auto ia = sim.add_node(a, "a");
    const auto ib = sim.add_node(b, "b");
    sim.connect(ia, 0, ib, 0, lp);
    ea = make_endpoint(a, 0, buf_bytes);
    eb = make_endpoint(b, 0, buf_bytes);
    connect_pair(ea, eb, p);
    EXPECT_TRUE(ea.qp->set_congestion_control(cc, BitRate::gbps(100)));
  }
  // One signalled WRITE of `len` from a to b; runs until its completion (or `limit`).
  TimeNs write(uint32_t len, TimeNs limit = TimeNs::from_ms(20)) {
    fill_pattern(ea.buf, 7);
    EXPECT_EQ(post_write(ea, 1, 0, len, eb.addr(), eb.mr->rkey), 0);
    const TimeNs start = sim.now();
    std::vector<v::Wc> wcs;
    while (wcs.empty() && sim.now() < start + limit) {
      sim.run_for(TimeNs::from_us(1));
      wcs = drain(ea.scq);
    }
    EXPECT_EQ(wcs.size(), 1u);
    if (!wcs.empty()) {
      EXPECT_EQ(wcs[0].status, v::WcStatus::kSuccess) << v::to_string(wcs[0].status);
    }
    EXPECT_TRUE(std::equal(ea.buf.begin(), ea.buf.begin() + len, eb.buf.begin()));
    return sim.now() - start;
  }
};

CcChoice choice(const char* name) { return *cc_choice_from_string(name, CcEvents::kAckDriven); }

// A two-port wire tap standing in for an INT-enabled switch hop: frames go
// through unchanged and at once, except that a frame from port 0 carrying
// an INT shim gets one hand-made record: the tap's time, the bytes it has
// passed towards port 1, a queue length the test sets, 100 G.
class IntTap final : public Node {
 public:
  uint64_t qlen_bytes = 0;
  uint64_t appended = 0;
  uint16_t num_ports() const override { return 2; }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override {
    for (rte_mbuf* m : pkts) {
      if (port == 0) {
        const wire::FrameInfo fi = wire::parse_mbuf(m);
        if (fi.ok() && fi.bth != nullptr && wire::bth_int_flag(*fi.bth) && m->nb_segs == 1) {
          uint32_t len = m->data_len;
          const std::span<uint8_t> buf(rte_pktmbuf_mtod(m, uint8_t*), m->data_len + rte_pktmbuf_tailroom(m));
          const wire::IntHop hop = wire::make_int_hop(static_cast<uint64_t>(now.ns()), tx_bytes_, qlen_bytes, 100'000'000'000ull);
          if (wire::int_append_hop(buf, len, wire::int_frame_ref(fi), hop) == wire::IntStatus::kOk) {
            m->data_len = static_cast<uint16_t>(len);
            m->pkt_len = len;
            ++appended;
          }
        }
        tx_bytes_ += m->pkt_len;
      }
      q_[1 - port].push_back(m);
    }
  }
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs) override {
    uint16_t n = 0;
    while (n < out.size() && !q_[port].empty()) {
      out[n++] = q_[port].front();
      q_[port].pop_front();
    }
    return n;
  }
  TimeNs next_wakeup(TimeNs now) const override { return q_[0].empty() && q_[1].empty() ? TimeNs::max() : now; }
  void advance(TimeNs) override {}
  ~IntTap() override {
    for (auto& q : q_) {
      for (rte_mbuf* m : q) rte_pktmbuf_free(m);
    }
  }

 private:
  std::array<std::deque<rte_mbuf*>, 2> q_;
  uint64_t tx_bytes_ = 0;
};

// The expected RTT of a one-packet WRITE: the data frame's wire time, the
// link delay, the ACK's wire time, the link delay (the responder ACKs in the
// poll that received the packet; the NIC's timestamps are the node's now).
TimeNs path_rtt(BitRate rate, TimeNs delay, uint32_t data_frame, uint32_t ack_frame) {
  return rate.tx_time(wire_bytes(data_frame)) + delay + rate.tx_time(wire_bytes(ack_frame)) + delay;
}

// 1. One-packet WRITEs over 100 G links of 1 us and 7 us. Expect: every
//    ACK gives an RTT sample equal to the virtual path delay to the ns.
TEST(CcQp, RttSampleIsThePathDelay) {
  for (const TimeNs d : {TimeNs::from_us(1), TimeNs::from_us(7)}) {
    for (const char* cc : {"swift", "bbr", "hpcc"}) {
      Pair p(4096, choice(cc), {BitRate::gbps(100), d});
      p.write(256);
      p.write(256);
      const rc::QpCcStats& s = p.ea.qp->cc_stats();
      ASSERT_EQ(s.rtt_samples, 2u) << cc;
      const uint32_t data_frame = static_cast<uint32_t>(p.ea.qp->counters().tx_data_bytes / 2);
      const uint32_t ack_frame = static_cast<uint32_t>(p.b.counters(0).tx_bytes / p.b.counters(0).tx_pkts);
      const TimeNs want = path_rtt(BitRate::gbps(100), d, data_frame, ack_frame);
      EXPECT_EQ(s.rtt_last, want) << cc << " d=" << d.ns();
      EXPECT_EQ(s.rtt_min, want) << cc;
      EXPECT_EQ(s.rtt_avg(), want) << cc;
      EXPECT_EQ(p.ea.qp->cc_inflight_bytes(), 0u) << cc;
    }
  }
}

// 2. Swift with its window pinned to 3 packets (initial = max = 3 x 4096)
//    over a 100 G link with 10 us each way (BDP ~ 61 packets): a 1 MiB
//    WRITE. Expect: bytes in flight never above the window at any poll, and
//    exactly at it while the QP is window-limited; the WRITE takes about
//    256 / 3 round trips; without CC the same WRITE takes its wire time
//    plus about one.
TEST(CcQp, WindowBoundsBytesInFlightExactly) {
  SwiftParams sp;
  sp.initial_cwnd = 3;
  sp.max_cwnd = 3;
  sp.max_ecwnd = 3;
  CcChoice c = choice("swift");
  c.params = sp;
  const sim::LinkParams lp{BitRate::gbps(100), TimeNs::from_us(10)};
  Pair p(1 << 20, c, lp);
  uint64_t max_inflight = 0;
  uint64_t violations = 0;
  p.app_a.every([&](TimeNs) {
    const uint64_t in = p.ea.qp->cc_inflight_bytes();
    max_inflight = std::max(max_inflight, in);
    if (in > p.ea.qp->cc_window()) ++violations;
  });
  ASSERT_EQ(p.ea.qp->cc_window(), 3u * 4096);
  const TimeNs t = p.write(1 << 20);
  EXPECT_EQ(violations, 0u);
  EXPECT_EQ(max_inflight, 3u * 4096);
  EXPECT_EQ(p.ea.qp->cc_window(), 3u * 4096);
  const TimeNs rtt = p.ea.qp->cc_stats().rtt_min;
  EXPECT_GE(rtt.ns(), 20'000);
  // 256 packets, 3 per round trip: 86 round trips (the last one partly).
  EXPECT_GE(t.ns(), 85 * rtt.ns());
  EXPECT_LE(t.ns(), 87 * rtt.ns());

  Pair none(1 << 20, choice("none"), lp);
  const TimeNs t0 = none.write(1 << 20);
  // Line rate: 1 MiB in ~86 us of wire time, plus one round trip.
  EXPECT_LT(t0.ns(), BitRate::gbps(100).tx_time(1 << 20).ns() * 11 / 10 + 2 * rtt.ns());
}

// 3. A lossy link (2 %) under each algorithm: a 2 MiB WRITE completes with
//    every byte; the losses reach the CC (NAK -> kNackLoss, timeouts ->
//    on_rto) and bytes declared lost left the flight; nothing is left in
//    flight at the end.
TEST(CcQp, LossReachesTheAlgorithm) {
  for (const char* cc : {"swift", "bbr", "hpcc"}) {
    ConnParams cp;
    cp.timeout = 4;  // 65 us
    Pair p(2 << 20, choice(cc), {BitRate::gbps(100), TimeNs::from_us(1), 0.02}, 5, cp);
    p.write(2 << 20, TimeNs::from_ms(200));
    const rc::QpCcStats& s = p.ea.qp->cc_stats();
    EXPECT_GT(p.ea.qp->counters().go_back, 0u) << cc;
    EXPECT_GT(s.lost_bytes, 0u) << cc;
    EXPECT_EQ(s.rtos, p.ea.qp->counters().timeouts) << cc;
    EXPECT_EQ(p.ea.qp->cc_inflight_bytes(), 0u) << cc;
    EXPECT_GT(s.rtt_samples, 0u) << cc;
    if (const auto* sw = std::get_if<Swift>(&p.ea.qp->congestion_control())) {
      EXPECT_GT(sw->counters().loss_cuts + sw->counters().rtos, 0u);
    }
  }
}

// 4. The names: swift, bbr, hpcc are accepted on RC QPs; nscc is refused
//    with a reason (MRC only) and leaves the QP without CC.
TEST(CcQp, NsccRefusedOnRc) {
  EXPECT_EQ(rc::Qp::cc_refusal(choice("swift"), false), nullptr);
  EXPECT_EQ(rc::Qp::cc_refusal(choice("hpcc"), false), nullptr);
  ASSERT_NE(rc::Qp::cc_refusal(choice("nscc"), false), nullptr);
  EXPECT_NE(std::string(rc::Qp::cc_refusal(choice("nscc"), false)).find("MRC"), std::string::npos);
  Pair p(4096, choice("bbr"), {BitRate::gbps(100), TimeNs::from_us(1)});
  EXPECT_FALSE(p.ea.qp->set_congestion_control(choice("nscc"), BitRate::gbps(100)));
  EXPECT_FALSE(p.ea.qp->cc_active());
  EXPECT_EQ(p.ea.qp->cc_window(), kNoWindow);
  p.write(4096);
}

// 4b. HPCC end to end through the tap (MTU 1024, 100 G, 1 us links): the
//    requester opens an INT shim in every request, the tap appends its
//    record, the responder echoes it in the ACK, HPCC reads it. With the
//    tap reporting an empty queue the window stays near eta x W_init and the
//    WRITE completes; with a standing queue of 4 x B x T, U >= 4 and the
//    window falls far below.
TEST(CcQp, HpccReadsTheEchoedRecords) {
  for (const uint64_t q : {uint64_t{0}, uint64_t{500'000}}) {
    NicNode a(one_host_cfg(0), sf::test::mbuf_pool());
    NicNode b(one_host_cfg(1), sf::test::mbuf_pool());
    IntTap tap;
    tap.qlen_bytes = q;
    sim::Simulator sim(3);
    const auto ia = sim.add_node(a, "a");
    const auto it = sim.add_node(tap, "tap");
    const auto ib = sim.add_node(b, "b");
    sim.connect(ia, 0, it, 0, {BitRate::gbps(100), TimeNs::from_us(1)});
    sim.connect(it, 1, ib, 0, {BitRate::gbps(100), TimeNs::from_us(1)});
    Endpoint ea = make_endpoint(a, 0, 4 << 20);
    Endpoint eb = make_endpoint(b, 0, 4 << 20);
    ConnParams cp;
    cp.mtu = v::Mtu::k1024;
    connect_pair(ea, eb, cp);
    ASSERT_TRUE(ea.qp->set_congestion_control(choice("hpcc"), BitRate::gbps(100)));
    const auto& h = std::get<Hpcc>(ea.qp->congestion_control());
    const double w_init = h.w_init_bytes();
    EXPECT_DOUBLE_EQ(w_init, 125'000);  // 100 G x 10 us
    ASSERT_EQ(post_write(ea, 1, 0, 4 << 20, eb.addr(), eb.mr->rkey), 0);
    sim.run_for(TimeNs::from_us(200));
    const rc::QpCcStats& s = ea.qp->cc_stats();
    EXPECT_GT(s.int_opened, 50u) << q;
    EXPECT_EQ(s.int_unopened, 0u) << q;
    EXPECT_GT(eb.qp->cc_stats().int_echoed, 50u) << q;
    EXPECT_EQ(s.int_acks, s.acks) << q;  // every ACK echoed a record
    EXPECT_GT(h.counters().commits, 0u) << q;
    EXPECT_EQ(h.counters().acks_without_int, 0u) << q;
    if (q == 0) {
      EXPECT_GT(h.window(), 0.8 * w_init) << h.window();
      EXPECT_LT(h.utilisation(), 1.1);
    } else {
      EXPECT_GT(h.utilisation(), 4.0);
      EXPECT_LT(h.window(), 0.25 * w_init) << h.window();
      EXPECT_LE(ea.qp->cc_window(), static_cast<uint64_t>(0.25 * w_init));
    }
    if (q == 0) {
      // Completes, and every request carried its shim to the tap.
      sim.run_for(TimeNs::from_ms(1));
      EXPECT_EQ(drain(ea.scq).size(), 1u);
      EXPECT_EQ(tap.appended, s.int_opened);
      EXPECT_TRUE(std::equal(ea.buf.begin(), ea.buf.end(), eb.buf.begin()));
    }
    // (With the standing queue the tap reports HPCC holds W near
    // min_rate x T: the 4 MiB would take ~0.3 s; not waited for.)
  }
}

// 4b. Swift's remote delay (cc_params remote_delay): the requests carry an
//     INT shim asking for the responder's turnaround and every ACK's echo
//     brings it back as AckEvent::remote_delay. Alone on the link the
//     responder ACKs in the poll that received the request: every sample is
//     0 and the RTT is the path's. With the responder sending its own 1 MiB
//     WRITE back on the same port, ACKs wait for the link: turnarounds
//     appear, never above the RTT they belong to, and with an endpoint
//     target of 1 ns Swift's endpoint window cuts on them. Without the
//     option no shim travels and Swift sees no remote delay.
TEST(CcQp, SwiftRemoteDelayIsTheResponderTurnaround) {
  SwiftParams sp;
  sp.endpoint_target = TimeNs(1);
  CcChoice without = choice("swift");
  without.params = sp;
  sp.remote_delay = true;
  CcChoice with = choice("swift");
  with.params = sp;
  for (const bool reverse : {false, true}) {
    for (const bool on : {true, false}) {
      // Forward: a's first MiB to b's; reverse: b's second MiB to a's.
      Pair p(2 << 20, on ? with : without, {BitRate::gbps(100), TimeNs::from_us(1)});
      if (reverse) {
        fill_pattern(p.eb.buf, 3);
        ASSERT_EQ(post_write(p.eb, 9, 1 << 20, 1 << 20, p.ea.addr() + (1 << 20), p.ea.mr->rkey), 0);
      }
      p.write(1 << 20);
      const rc::QpCcStats& s = p.ea.qp->cc_stats();
      const auto& sw = std::get<Swift>(p.ea.qp->congestion_control());
      ASSERT_GT(s.rtt_samples, 100u);
      if (!on) {
        EXPECT_EQ(s.int_opened, 0u);
        EXPECT_EQ(s.remote_delay_samples, 0u);
        EXPECT_EQ(sw.counters().endpoint_decreases, 0u);
        continue;
      }
      EXPECT_EQ(s.int_opened, p.ea.qp->counters().tx_data_pkts) << reverse;
      EXPECT_EQ(s.int_acks, s.acks) << reverse;
      EXPECT_EQ(s.remote_delay_samples, s.rtt_samples) << reverse;
      if (!reverse) {
        EXPECT_EQ(s.remote_delay_sum_ns, 0u);
        EXPECT_EQ(sw.counters().endpoint_decreases, 0u);
      } else {
        EXPECT_GT(s.remote_delay_sum_ns, 0u);
        EXPECT_LE(s.remote_delay_avg().ns(), s.rtt_avg().ns());
        EXPECT_GT(sw.counters().endpoint_decreases, 0u);
        EXPECT_LT(sw.ecwnd(), 256.0);
      }
      const nlohmann::json q = app::host_json(p.a, 0)["qp_cc"][0];
      EXPECT_EQ(q["remote_delay_samples"], s.remote_delay_samples);
      EXPECT_DOUBLE_EQ(q["remote_delay_avg_us"].get<double>(), s.remote_delay_avg().us());
    }
  }
}

// 5. sf-nic's report and time series carry each CC QP's entry: the
//    algorithm, window, in flight, RTT min/avg/last and the algorithm's state.
TEST(CcQp, ReportCarriesPerQpCc) {
  Pair p(1 << 16, choice("bbr"), {BitRate::gbps(100), TimeNs::from_us(2)});
  p.write(1 << 16);
  const nlohmann::json h = app::host_json(p.a, 0);
  ASSERT_TRUE(h.contains("qp_cc")) << h.dump();
  ASSERT_EQ(h["qp_cc"].size(), 1u);
  const nlohmann::json& q = h["qp_cc"][0];
  const rc::QpCcStats& s = p.ea.qp->cc_stats();
  EXPECT_EQ(q["cc"], "bbr");
  EXPECT_EQ(q["qpn"], p.ea.qp->qp_num());
  EXPECT_EQ(q["window_bytes"], p.ea.qp->cc_window());
  EXPECT_EQ(q["inflight_bytes"], 0u);
  EXPECT_EQ(q["rtt_samples"], s.rtt_samples);
  EXPECT_EQ(q["rtt_samples"], 16u);  // 16 packets, one ACK each
  EXPECT_DOUBLE_EQ(q["rtt_min_us"].get<double>(), s.rtt_min.us());
  EXPECT_DOUBLE_EQ(q["rtt_last_us"].get<double>(), s.rtt_last.us());
  EXPECT_EQ(q["state"], std::string(to_string(std::get<Bbr>(p.ea.qp->congestion_control()).phase())));
  EXPECT_FALSE(app::host_json(p.b, 0).contains("qp_cc"));  // the responder runs no CC
  const nlohmann::json t = app::timeseries_sample(p.a, 1.0);
  const nlohmann::json& th = t["hosts"].begin().value();
  ASSERT_TRUE(th.contains("qp_cc"));
  EXPECT_EQ(th["qp_cc"][0]["rtt_samples"], 16u);
}

}  // namespace
}  // namespace sf::nic::test
