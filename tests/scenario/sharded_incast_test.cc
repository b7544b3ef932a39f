// The 8:1 RDMA WRITE incast of dcqcn_incast_test.cc (sf-nic hosts, DCQCN,
// seed-000 static lossless profile) through a switch sharded over 2 shards
// (senders 0-3 on shard 0; senders 4-7 and the receiver on shard 1), driven
// in virtual time by the simulator through ShardedSwitchNode, against the
// one-lcore switch. Expect the very same run: every message delivered and
// verified, the same hot-queue depth at every 5 us sample, marks, CNPs,
// rate cuts, PFC frames, no drop, the same end time; and the shards moved
// half the senders' traffic through their rings and got every cell back.
#include <gtest/gtest.h>

#include <memory>

#include "common/sim/simulator.h"
#include "nic/app/perftest_engine.h"
#include "switch/pipeline/sharded_switch.h"
#include "tests/scenario/nic_incast.h"
#include "tests/scenario/scenario.h"

namespace sf::scenario {
namespace {

constexpr size_t kSenders = 8;
constexpr uint64_t kMsgBytes = 65536;
constexpr uint64_t kMsgsPerSender = 40;

struct Result {
  std::vector<uint64_t> queue_series;  // receiver's queue 3 bytes every 5 us
  uint64_t queue_watermark_bytes = 0;
  uint64_t ecn_marked = 0;
  uint64_t cnps_sent = 0;
  uint64_t cuts = 0;
  uint64_t pfc_frames = 0;
  uint64_t switch_drops = 0;
  uint64_t verify_errors = 0;
  uint64_t messages = 0;
  uint64_t crossed = 0;  // packets moved between shards
  uint32_t cells_left = 0;
  TimeNs end;
};

Result run(uint16_t shards) {
  config::Json doc = load_config_doc("config/switch/seed000-static-lossless.json");
  widen_ports(doc, kSenders + 1);
  sw::SwitchConfig cfg = sw::parse_switch_config(doc);
  NicIncast inc(kSenders, kMsgBytes, kMsgsPerSender, "dcqcn-nvidia");
  for (size_t i = 0; i <= kSenders; ++i) cfg.fdb.push_back({inc.hosts[i].mac.bytes, sw::kDefaultVlan, static_cast<uint16_t>(i)});
  std::vector<std::array<uint8_t, 6>> sw_macs(kSenders + 1, std::array<uint8_t, 6>{0x02, 0x53, 0x46, 0, 0, 0});
  std::vector<uint16_t> map(kSenders + 1, 0);
  if (shards == 2) {
    for (size_t i = kSenders / 2; i <= kSenders; ++i) map[i] = 1;
  }
  sw::ShardedSwitch sw(cfg, sw_macs, scenario_pool(), map);
  sw::ShardedSwitchNode sw_node(sw);
  Node& node = shards == 1 ? sw.shard_node(0) : static_cast<Node&>(sw_node);

  const size_t rx = kSenders;
  auto& clients = inc.clients;
  auto& servers = inc.servers;

  auto sim = std::make_unique<sim::Simulator>(11);
  const sim::NodeId sw_id = sim->add_node(node, "switch");
  inc.connect(*sim, sw_id, BitRate::gbps(100), TimeNs::from_us(1));
  Result r;
  const auto rxp = static_cast<PortId>(rx);
  while (!inc.all_done() && sim->now() < TimeNs::from_ms(50)) {
    sim->run_for(TimeNs::from_us(5));
    r.queue_series.push_back(sw.owner(rxp).queue_bytes(rxp, 3));
  }
  sim->run_for(TimeNs::from_us(100));  // the last ACKs drain
  r.end = sim->now();
  r.queue_watermark_bytes = sw.counters(rxp).queues[3].watermark_bytes;
  r.ecn_marked = sw.counters(rxp).queues[3].ecn_marked;
  for (uint16_t p = 0; p <= kSenders; ++p) {
    r.pfc_frames += sw.counters(p).tx_pfc_frames;
    r.switch_drops += sw.counters(p).dropped;
  }
  for (size_t i = 0; i < kSenders; ++i) {
    r.cnps_sent += servers[i]->qp(0).counters().tx_cnps;
    if (const auto* d = std::get_if<nic::Dcqcn>(&clients[i]->qp(0).congestion_control())) r.cuts += d->counters().cuts;
    r.messages += clients[i]->result().messages;
    r.verify_errors += servers[i]->result().verify_errors;
  }
  for (uint16_t s = 0; s < sw.num_shards(); ++s) r.crossed += sw.shard_counters(s).forwarded;
  r.cells_left = sw.mmu().total_used();
  sim.reset();
  return r;
}

TEST(ShardedIncast, TwoShardsRunExactlyAsOne) {
  const Result one = run(1);
  const Result two = run(2);
  EXPECT_EQ(one.messages, kSenders * kMsgsPerSender);
  EXPECT_EQ(two.messages, one.messages);
  EXPECT_EQ(two.verify_errors + one.verify_errors, 0u);
  EXPECT_GT(one.ecn_marked, 0u);
  EXPECT_GT(one.cnps_sent, 0u);
  EXPECT_EQ(two.ecn_marked, one.ecn_marked);
  EXPECT_EQ(two.cnps_sent, one.cnps_sent);
  EXPECT_EQ(two.cuts, one.cuts);
  EXPECT_EQ(two.pfc_frames, one.pfc_frames);
  EXPECT_EQ(two.switch_drops, 0u);
  EXPECT_EQ(one.switch_drops, 0u);
  EXPECT_EQ(two.queue_watermark_bytes, one.queue_watermark_bytes);
  EXPECT_EQ(two.queue_series, one.queue_series);
  EXPECT_EQ(two.end, one.end);
  EXPECT_EQ(one.crossed, 0u);
  // Senders 0-3 (a half of 8 x 40 x 64 KiB in 4 KiB frames) cross to shard 1.
  EXPECT_GE(two.crossed, kSenders / 2 * kMsgsPerSender * (kMsgBytes / 4096));
  EXPECT_EQ(one.cells_left, 0u);
  EXPECT_EQ(two.cells_left, 0u);
  std::printf("1 and 2 shards: marks %llu, CNPs %llu, cuts %llu, PFC %llu, queue max %llu B, end %.0f us; %llu packets crossed\n",
              static_cast<unsigned long long>(two.ecn_marked), static_cast<unsigned long long>(two.cnps_sent),
              static_cast<unsigned long long>(two.cuts), static_cast<unsigned long long>(two.pfc_frames),
              static_cast<unsigned long long>(two.queue_watermark_bytes), two.end.us(),
              static_cast<unsigned long long>(two.crossed));
}

}  // namespace
}  // namespace sf::scenario
