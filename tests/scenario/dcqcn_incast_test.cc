// 8:1 incast of RDMA WRITEs through the switch in virtual time, with sf-nic's
// hosts (NicNode + perftest write_bw workloads, every byte verified) and the
// seed-000 static lossless profile (ECN on queue 3 from Kmin 120 KiB, PFC
// from the lossless PG). With DCQCN the receiver's CNPs cut the senders'
// rates and the hot queue stays near the marking band; without congestion
// control the same load builds a deeper queue and leans on PFC.
// Writes scenario_dcqcn_incast_<cc>.json (queue depth over time, CNPs, cuts).
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/sim/simulator.h"
#include "nic/app/perftest_engine.h"
#include "tests/scenario/nic_incast.h"
#include "tests/scenario/scenario.h"

namespace sf::scenario {
namespace {

constexpr size_t kSenders = 8;
constexpr uint64_t kMsgBytes = 65536;
constexpr uint64_t kMsgsPerSender = 160;  // 10 MiB each, 80 MiB in all

struct Result {
  uint64_t queue_watermark_bytes = 0;
  uint64_t ecn_marked = 0;
  uint64_t cnps_sent = 0;       // by the receiver (NP)
  uint64_t cnps_received = 0;   // by the senders (RP)
  uint64_t cuts = 0;            // DCQCN rate cuts, all senders
  uint64_t pfc_frames = 0;      // sent by the switch
  uint64_t switch_drops = 0;
  uint64_t verify_errors = 0;
  uint64_t messages = 0;
  TimeNs end;
  double min_rate_gbps = 0;     // lowest pacing rate seen on any sender
  double late_mean_queue_bytes = 0;  // mean hot-queue depth over the second half of the run
};

Result run(const std::string& cc, const std::string& out_name) {
  config::Json doc = load_config_doc("config/switch/seed000-static-lossless.json");
  widen_ports(doc, kSenders + 1);
  sw::SwitchConfig cfg = sw::parse_switch_config(doc);
  NicIncast inc(kSenders, kMsgBytes, kMsgsPerSender, cc);
  for (size_t i = 0; i <= kSenders; ++i) cfg.fdb.push_back({inc.hosts[i].mac.bytes, sw::kDefaultVlan, static_cast<uint16_t>(i)});
  std::vector<std::array<uint8_t, 6>> sw_macs(kSenders + 1, std::array<uint8_t, 6>{0x02, 0x53, 0x46, 0, 0, 0});
  sw::SwitchNode sw(cfg, sw_macs, scenario_pool());

  const size_t rx = kSenders;  // the receiver is host 8 on switch port 8
  auto& clients = inc.clients;
  auto& servers = inc.servers;

  auto sim = std::make_unique<sim::Simulator>(11);
  const sim::NodeId sw_id = sim->add_node(sw, "switch");
  inc.connect(*sim, sw_id, BitRate::gbps(100), TimeNs::from_us(1));

  Result r;
  r.min_rate_gbps = 100;
  nlohmann::json series = nlohmann::json::array();
  const TimeNs step = TimeNs::from_us(5);
  while (!inc.all_done() && sim->now() < TimeNs::from_ms(50)) {
    sim->run_for(step);
    const uint64_t q = sw.queue_bytes(static_cast<PortId>(rx), 3);
    double rate = 100;
    for (const auto& c : clients) {
      const BitRate br = c->qp(0).rate();
      if (br.bps() != 0) rate = std::min(rate, br.gbps_value());
    }
    r.min_rate_gbps = std::min(r.min_rate_gbps, rate);
    series.push_back({{"t_us", sim->now().us()}, {"queue_bytes", q}, {"min_rate_gbps", rate}});
  }
  r.end = sim->now();
  {
    double sum = 0;
    size_t n = 0;
    for (size_t i = series.size() / 2; i < series.size(); ++i, ++n) sum += series[i]["queue_bytes"].get<double>();
    r.late_mean_queue_bytes = n ? sum / static_cast<double>(n) : 0;
  }
  r.queue_watermark_bytes = sw.counters(static_cast<PortId>(rx)).queues[3].watermark_bytes;
  r.ecn_marked = sw.counters(static_cast<PortId>(rx)).queues[3].ecn_marked;
  for (uint16_t p = 0; p < sw.num_ports(); ++p) {
    r.pfc_frames += sw.counters(p).tx_pfc_frames;
    r.switch_drops += sw.counters(p).dropped;
  }
  for (size_t i = 0; i < kSenders; ++i) {
    const auto& qc = clients[i]->qp(0).counters();
    r.cnps_received += qc.rx_cnps;
    r.cnps_sent += servers[i]->qp(0).counters().tx_cnps;
    if (const auto* d = std::get_if<nic::Dcqcn>(&clients[i]->qp(0).congestion_control())) r.cuts += d->counters().cuts;
    r.messages += clients[i]->result().messages;
    r.verify_errors += servers[i]->result().verify_errors;
    EXPECT_EQ(clients[i]->result().status, "ok") << clients[i]->config().name;
  }
  nlohmann::json out = {{"scenario", out_name},
                        {"cc", cc},
                        {"senders", kSenders},
                        {"bytes_per_sender", kMsgBytes * kMsgsPerSender},
                        {"end_us", r.end.us()},
                        {"queue_watermark_bytes", r.queue_watermark_bytes},
                        {"ecn_marked", r.ecn_marked},
                        {"cnps_sent", r.cnps_sent},
                        {"cnps_received", r.cnps_received},
                        {"dcqcn_cuts", r.cuts},
                        {"switch_pfc_frames", r.pfc_frames},
                        {"switch_drops", r.switch_drops},
                        {"min_rate_gbps", r.min_rate_gbps},
                        {"late_mean_queue_bytes", r.late_mean_queue_bytes},
                        {"series", series}};
  std::ofstream(output_dir() + "/scenario_" + out_name + ".json") << out.dump() << "\n";
  sim.reset();  // frees frames in flight before the nodes go
  return r;
}

// 1. DCQCN (NVIDIA parameters). Expect: every byte of the 24 MiB arrives and
//    verifies; the switch marks; the receiver sends CNPs (at most one per
//    50 us per QP) and every sender cuts its rate; nothing is dropped.
// 2. Same load without CC. Expect: no sender reacts to the CNPs, the hot
//    queue in the second half of the run is deeper and PFC pauses more.
// (The switch marks from Kmin = 120 KiB, but the marks reach the receiver
// through the queue itself, so the first CNPs come a queueing delay late: the
// queue overshoots to MiBs before the cuts bite, as seed 001 describes.)
TEST(DcqcnIncast, CnpsCutRatesAndBoundTheQueue) {
  const Result d = run("dcqcn-nvidia", "dcqcn_incast_dcqcn");
  EXPECT_EQ(d.messages, kSenders * kMsgsPerSender);
  EXPECT_EQ(d.verify_errors, 0u);
  EXPECT_EQ(d.switch_drops, 0u);
  EXPECT_GT(d.ecn_marked, 0u);
  EXPECT_GT(d.cnps_sent, 0u);
  EXPECT_EQ(d.cnps_received, d.cnps_sent);  // lossless fabric: every CNP arrives
  EXPECT_GE(d.cuts, kSenders);               // every sender cut at least once
  EXPECT_LT(d.min_rate_gbps, 100.0 / 2);     // cut well below line rate at some point
  // CNP rate limit: per QP at most one CNP per 50 us of the run.
  EXPECT_LE(d.cnps_sent, kSenders * (static_cast<uint64_t>(d.end.us() / 50) + 1));

  const Result n = run("none", "dcqcn_incast_none");
  EXPECT_EQ(n.messages, kSenders * kMsgsPerSender);
  EXPECT_EQ(n.verify_errors, 0u);
  EXPECT_EQ(n.cuts, 0u);
  EXPECT_GT(n.ecn_marked, 0u);
  // Once the feedback loop closes (second half), DCQCN holds the hot queue
  // well below the uncontrolled one and needs fewer PFC pauses.
  EXPECT_LT(d.late_mean_queue_bytes, 0.75 * n.late_mean_queue_bytes);
  EXPECT_LT(d.pfc_frames, n.pfc_frames);
  std::printf("dcqcn: late mean queue %.0f B, none: %.0f B\n", d.late_mean_queue_bytes, n.late_mean_queue_bytes);
  std::printf("dcqcn: queue max %llu B, marks %llu, CNPs %llu, cuts %llu, PFC %llu, end %.0f us\n",
              static_cast<unsigned long long>(d.queue_watermark_bytes), static_cast<unsigned long long>(d.ecn_marked),
              static_cast<unsigned long long>(d.cnps_sent), static_cast<unsigned long long>(d.cuts),
              static_cast<unsigned long long>(d.pfc_frames), d.end.us());
  std::printf("none:  queue max %llu B, marks %llu, CNPs %llu, PFC %llu, end %.0f us\n",
              static_cast<unsigned long long>(n.queue_watermark_bytes), static_cast<unsigned long long>(n.ecn_marked),
              static_cast<unsigned long long>(n.cnps_sent), static_cast<unsigned long long>(n.pfc_frames), n.end.us());
}

}  // namespace
}  // namespace sf::scenario
