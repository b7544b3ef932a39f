// sf-nic's perftest workloads between two NicNodes in virtual time: every
// test (write/read/send x bw/lat) as client and server, with --verify, runs
// to completion with every byte checked; a corrupted byte is caught; loss
// is recovered; a duration-mode run stops on time.
#include "nic/app/perftest_engine.h"

#include <gtest/gtest.h>

#include <memory>

#include "common/sim/simulator.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/perftest_hosts.h"

namespace sf::nic::app {
namespace {

AppHost app_host(int i) { return test::app_host(i, 1024); }
using test::node_cfg;

struct Pair {
  AppHost ha = app_host(0);
  AppHost hb = app_host(1);
  NicNode a{node_cfg(ha), sf::test::mbuf_pool()};
  NicNode b{node_cfg(hb), sf::test::mbuf_pool()};
  PerftestEngine ea, eb;
  sim::Simulator sim;
  sim::LinkId link;
  std::unique_ptr<Workload> client, server;

  Pair(WorkloadType t, uint64_t size, uint64_t iters, bool verify, double loss = 0, uint32_t qps = 1,
       double duration_s = 0, BitRate rate_limit = BitRate(0), uint32_t tx_depth = 64, uint32_t burst_bytes = 0)
      : sim(3) {
    const auto na = sim.add_node(a, "a");
    const auto nb = sim.add_node(b, "b");
    link = sim.connect(na, 0, nb, 0, {BitRate::gbps(100), TimeNs::from_us(1), loss});
    AppWorkload w;
    w.type = t;
    w.size_bytes = size;
    w.iterations = duration_s > 0 ? 0 : iters;
    w.duration_s = duration_s;
    w.verify = verify;
    w.qps = qps;
    w.tx_depth = tx_depth;
    w.rate_limit = rate_limit;
    w.burst_bytes = burst_bytes;
    w.name = "c";
    w.role = Role::kClient;
    client = std::make_unique<Workload>(w, ha, a, 0);
    w.name = "s";
    w.role = Role::kServer;
    server = std::make_unique<Workload>(w, hb, b, 0);
    EXPECT_EQ(server->connect(client->local_info(), TimeNs(0)), "");
    EXPECT_EQ(client->connect(server->local_info(), TimeNs(0)), "");
    ea.add(client.get());
    eb.add(server.get());
    a.set_app(&ea);
    b.set_app(&eb);
  }
  // Runs until the client is done (the OOB barrier is what tells the server).
  void run(TimeNs limit = TimeNs::from_ms(500)) {
    const TimeNs step = TimeNs::from_us(100);
    while (!client->traffic_done() && sim.now() < limit) sim.run_for(step);
    if (client->traffic_done()) server->set_peer_done();
  }
};

struct Case {
  WorkloadType type;
  uint64_t size;
  uint64_t iters;
};

// 1. Each test, client and server, --verify. Expect: client done with status
//    ok, every message completed and every checked byte right; the data
//    checks happened on the side that receives (server for WRITE with imm and
//    SEND bw, client for READ and the ping-pongs).
TEST(PerftestEngine, EveryTestVerified) {
  const Case cases[] = {
      {WorkloadType::kWriteBw, 8192, 300}, {WorkloadType::kReadBw, 8192, 300}, {WorkloadType::kSendBw, 8192, 300},
      {WorkloadType::kWriteLat, 64, 200},  {WorkloadType::kReadLat, 64, 200},  {WorkloadType::kSendLat, 64, 200},
      {WorkloadType::kWriteBw, 65536, 40},  {WorkloadType::kSendLat, 5000, 50},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(to_string(c.type)) + " " + std::to_string(c.size));
    Pair p(c.type, c.size, c.iters, true);
    p.run();
    ASSERT_TRUE(p.client->traffic_done());
    EXPECT_EQ(p.client->result().status, "ok");
    EXPECT_EQ(p.server->result().status, "ok");
    EXPECT_EQ(p.client->result().messages, c.iters);
    EXPECT_EQ(p.client->result().bytes, c.iters * c.size);
    EXPECT_EQ(p.client->result().verify_errors, 0u);
    EXPECT_EQ(p.server->result().verify_errors, 0u);
    EXPECT_TRUE(p.server->finished());
    if (c.type == WorkloadType::kWriteBw || c.type == WorkloadType::kSendBw) {
      EXPECT_EQ(p.server->result().messages, c.iters);  // every message checked where it landed
    }
    if (is_latency(c.type)) {
      EXPECT_EQ(p.client->result().lat_round_trips, c.iters);
      EXPECT_EQ(p.client->result().lat_posts.size(), c.iters);
      // Round trips take at least two link delays.
      for (size_t i = 1; i < p.client->result().lat_posts.size(); ++i) {
        EXPECT_GE(p.client->result().lat_posts[i] - p.client->result().lat_posts[i - 1], TimeNs::from_us(2));
      }
    } else {
      EXPECT_EQ(p.client->result().posted.size(), std::min<uint64_t>(c.iters, kMaxPeakMessages));
      EXPECT_EQ(p.client->result().completed.size(), std::min<uint64_t>(c.iters, kMaxPeakMessages));
    }
  }
}

// 2. A receiver whose buffer changes under it. Expect: the check reports it.
//    (The server's READ buffer is corrupted before the client reads it.)
TEST(PerftestEngine, VerifyCatchesCorruption) {
  Pair p(WorkloadType::kReadBw, 4096, 10, true);
  const QpConnInfo& s = p.server->local_info()[0];
  reinterpret_cast<uint8_t*>(s.va)[4096 * 3 + 100] ^= 0x40;  // slot 3
  p.run();
  ASSERT_TRUE(p.client->traffic_done());
  EXPECT_EQ(p.client->result().verify_errors, 1u);
  EXPECT_EQ(p.client->result().first_bad_message, 3u);
}

// 3. 1% loss both ways, four QPs. Expect: everything still completes and
//    verifies (go-back-N underneath).
TEST(PerftestEngine, LossRecovered) {
  Pair p(WorkloadType::kWriteBw, 16384, 100, true, 0.01, 4);
  p.run(TimeNs::from_s(5));
  ASSERT_TRUE(p.client->traffic_done());
  EXPECT_EQ(p.client->result().status, "ok");
  EXPECT_EQ(p.client->result().messages, 400u);
  EXPECT_EQ(p.server->result().messages, 400u);
  EXPECT_EQ(p.server->result().verify_errors, 0u);
  EXPECT_GT(p.sim.stats(p.link, sim::LinkDir::kAtoB).lost_pkts, 0u);
}

// 4. Duration mode: 2 ms of write_bw. Expect: posting stops at 2 ms after the
//    first post, the rest drains, and the goodput is near the 100 Gb/s line
//    (less the headers and the wire overhead).
TEST(PerftestEngine, DurationModeStopsOnTime) {
  Pair p(WorkloadType::kWriteBw, 65536, 0, false, 0, 1, 0.002);
  p.run();
  ASSERT_TRUE(p.client->traffic_done());
  const WorkloadResult& r = p.client->result();
  EXPECT_EQ(r.status, "ok");
  EXPECT_LE(r.posted.back() - r.first_post, TimeNs::from_ms(2));
  const double sec = (r.last_completion - r.first_post).sec();
  EXPECT_GE(sec, 2e-3);
  const double gbps = static_cast<double>(r.bytes) * 8 / sec / 1e9;
  EXPECT_GT(gbps, 80.0);
  EXPECT_LT(gbps, 100.0);
}

// Runs `p` for 50 ms of virtual time and expects its client's goodput at a
// 10 Gb/s limit less the headers (1024 B MTU: 1024 of 1106 wire bytes a
// packet), within 2 %.
void expect_goodput_of_10g_limit(Pair& p) {
  p.run(TimeNs::from_ms(50));
  ASSERT_TRUE(p.client->traffic_done());
  const WorkloadResult& r = p.client->result();
  const double gbps = static_cast<double>(r.bytes) * 8 / (r.last_completion - r.first_post).sec() / 1e9;
  const double want = 10.0 * 1024 / (1024 + 14 + 20 + 8 + 12 + 4 + 24);
  EXPECT_NEAR(gbps, want, want * 0.02);
}

// 5. --rate-limit 10 Gb/s on a 100 Gb/s link. Expect: the goodput is 10 Gb/s
//    less the headers (1024 B MTU: 1024 of 1106 wire bytes per packet, 0.926),
//    within 2 %.
TEST(PerftestEngine, RateLimitPaces) {
  Pair p(WorkloadType::kWriteBw, 65536, 200, false, 0, 1, 0, BitRate::gbps(10));
  expect_goodput_of_10g_limit(p);
}

// 5b. The same with a 64 KiB burst bucket (nic.json burst_size). Expect: the
//     client's QP got it through ibv_modify_qp_rate_limit (max_burst_sz), and
//     the long-run rate is still the limit (a bucket only makes up lost or
//     idle time: at most 64 KiB over the whole run, 0.5 % of it), within 2 %.
//     (Virtual time serves every frame on time, so the bucket sends nothing
//     here: pace_burst_bytes is 0. What the bucket does after a stall is
//     tests/unit/nic/pacing_burst_test.cc.)
TEST(PerftestEngine, RateLimitWithABurstBucket) {
  Pair p(WorkloadType::kWriteBw, 65536, 200, false, 0, 1, 0, BitRate::gbps(10), 64, 65536);
  EXPECT_EQ(p.a.host(0).qp_slot(0).max_burst_bytes(), 65536u);
  EXPECT_EQ(p.a.host(0).qp_slot(0).rate(), BitRate::gbps(10));
  expect_goodput_of_10g_limit(p);
  EXPECT_EQ(p.a.host(0).qp_slot(0).counters().pace_burst_bytes, 0u);
}

// 6. Peers that disagree on the message size. Expect: connect refuses.
TEST(PerftestEngine, SizeMismatchRefused) {
  Pair p(WorkloadType::kWriteBw, 4096, 1, false);
  std::vector<QpConnInfo> other = p.server->local_info();
  other[0].msg_size_bytes = 8192;
  AppWorkload w = p.client->config();
  Workload fresh(w, p.ha, p.a, 0);
  EXPECT_EQ(fresh.connect(other, TimeNs(0)), "peer uses message size 8192, this side 4096");
}

// 7. Which ports sf-nic gives zero-copy transmit (docs/nic.md "Zero-copy
//    transmit"). Expect: drivers that copy with the CPU and free at
//    tx_burst yes (memif in copy mode, null, pcap, tap); memif zero-copy
//    mode, net_ring (passes mbuf pointers) and a PCI device (DMA) no; and
//    nic_config_of leaves it off (sf-sim's links outlive the hosts).
TEST(NicConfigOf, ZeroCopyOnlyWhereTheDriverCopies) {
  EXPECT_TRUE(copies_with_cpu("net_memif0,role=server,socket=/tmp/x.sock"));
  EXPECT_TRUE(copies_with_cpu("net_null0"));
  EXPECT_TRUE(copies_with_cpu("net_pcap0,rx_pcap=a.pcap"));
  EXPECT_TRUE(copies_with_cpu("net_tap0"));
  EXPECT_FALSE(copies_with_cpu("net_memif0,role=client,zero-copy=yes"));
  EXPECT_FALSE(copies_with_cpu("net_ring0"));
  EXPECT_FALSE(copies_with_cpu("0000:3b:00.0"));
  AppConfig cfg;
  cfg.hosts.push_back(app_host(0));
  cfg.hosts[0].devargs = "net_memif0,role=server";
  EXPECT_FALSE(nic_config_of(cfg).hosts[0].tx_zero_copy);
}

// 8. write_bw of 2000 x 64 B at tx_depth 64: the client posts a list per
//    poll and asks for a completion every 16th message (tx_depth / 4) and at
//    each list's end. Expect: every message completed and counted, far fewer
//    post_send calls and send completions than messages, and the per-message
//    times for the peak search complete (a completion dates every message it
//    stands for, none before its post).
TEST(PerftestEngine, ListsAndModeratedCompletions) {
  Pair p(WorkloadType::kWriteBw, 64, 2000, false);
  EXPECT_EQ(p.client->bw_depth(), 64u);
  EXPECT_EQ(p.client->cq_moderation(), 16u);
  p.run();
  ASSERT_TRUE(p.client->traffic_done());
  const WorkloadResult& r = p.client->result();
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.messages, 2000u);
  EXPECT_EQ(r.bytes, 2000u * 64);
  EXPECT_GE(r.send_completions, 2000u / 16);
  EXPECT_LT(r.send_completions, 2000u / 8);
  EXPECT_LT(r.post_send_calls, 2000u / 8);
  ASSERT_EQ(r.posted.size(), 2000u);
  ASSERT_EQ(r.completed.size(), 2000u);
  for (size_t i = 0; i < r.posted.size(); ++i) ASSERT_LE(r.posted[i], r.completed[i]) << i;
  EXPECT_EQ(p.client->qp(0).sq_outstanding(), 0u);
}

// 9. Posting stopped part way (stop_with_others); tx_depth 50, so the
//    moderation points (every 12th) and the lists' ends do not line up and
//    the last message posted is not a moderation point. Expect: the client
//    still gets the completion of its last message (each list's last is
//    signalled) and ends with every posted message completed.
TEST(PerftestEngine, StopPostingStillCompletesTheLastList) {
  Pair p(WorkloadType::kWriteBw, 64, 5000, false, 0, 1, 0, BitRate(0), 50);
  ASSERT_EQ(p.client->cq_moderation(), 12u);
  p.sim.run_for(TimeNs::from_us(37));
  p.client->stop_posting();
  p.run();
  ASSERT_TRUE(p.client->traffic_done());
  const WorkloadResult& r = p.client->result();
  EXPECT_EQ(r.status, "ok");
  EXPECT_GT(r.messages, 0u);
  EXPECT_LT(r.messages, 5000u);
  EXPECT_EQ(r.messages, r.posted.size());
  EXPECT_EQ(p.client->qp(0).sq_outstanding(), 0u);
}

// 10. Moderation is tx_depth / 4, at least 1 and at most perftest's 100;
//     --verify and SEND tests hold at most half the message slots in flight.
TEST(PerftestEngine, ModerationFollowsTheDepth) {
  struct M {
    uint32_t tx_depth;
    WorkloadType type;
    uint64_t size;
    bool verify;
    uint64_t depth;
    uint32_t cq_mod;
  };
  const M cases[] = {
      {128, WorkloadType::kWriteBw, 64, false, 128, 32},  {1, WorkloadType::kWriteBw, 64, false, 1, 1},
      {3, WorkloadType::kReadBw, 64, false, 3, 1},       {1000, WorkloadType::kWriteBw, 64, false, 1000, 100},
      {1000, WorkloadType::kSendBw, 64, false, 128, 32}, {1000, WorkloadType::kWriteBw, 4u << 20, true, 2, 1},
  };
  for (const M& m : cases) {
    SCOPED_TRACE(std::to_string(m.tx_depth) + " " + std::string(to_string(m.type)));
    const AppHost h = app_host(0);
    NicNode node(node_cfg(h), sf::test::mbuf_pool());
    AppWorkload w;
    w.type = m.type;
    w.size_bytes = m.size;
    w.iterations = 10;
    w.tx_depth = m.tx_depth;
    w.verify = m.verify;
    w.role = Role::kClient;
    Workload wl(w, h, node, 0);
    EXPECT_EQ(wl.bw_depth(), m.depth);
    EXPECT_EQ(wl.cq_moderation(), m.cq_mod);
  }
}

}  // namespace
}  // namespace sf::nic::app
