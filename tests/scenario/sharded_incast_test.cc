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
#include "tests/scenario/scenario.h"

namespace sf::scenario {
namespace {

using nic::app::AppHost;
using nic::app::AppWorkload;
using nic::app::Role;
using nic::app::Workload;
using nic::app::WorkloadType;

constexpr size_t kSenders = 8;
constexpr uint64_t kMsgBytes = 65536;
constexpr uint64_t kMsgsPerSender = 40;

AppHost host(size_t i) {
  AppHost h;
  h.name = "h" + std::to_string(i);
  h.devargs = "sim" + std::to_string(i);
  h.mac.bytes = {0x02, 0x4E, 0x00, 0x00, 0x00, static_cast<uint8_t>(i + 1)};
  h.ipv4 = std::array<uint8_t, 4>{10, 8, 0, static_cast<uint8_t>(i + 1)};
  h.mtu_bytes = 4096;
  h.pfc_enable = 1u << 3;
  return h;
}

nic::NicConfig node_cfg(const AppHost& h) {
  nic::NicConfig c;
  nic::HostConfig hc;
  hc.name = h.name;
  hc.mac.bytes = h.mac.bytes;
  hc.ipv4 = wire::Ipv4Addr{*h.ipv4};
  hc.ports = {0};
  c.hosts.push_back(hc);
  nic::NicPortConfig p;
  p.line_rate = BitRate::gbps(h.speed_gbps);
  p.pfc_honour = true;
  c.ports.push_back(p);
  return c;
}

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
  std::vector<AppHost> hosts;
  for (size_t i = 0; i <= kSenders; ++i) {
    hosts.push_back(host(i));
    cfg.fdb.push_back({hosts.back().mac.bytes, 0, static_cast<uint16_t>(i)});
  }
  std::vector<std::array<uint8_t, 6>> sw_macs(kSenders + 1, std::array<uint8_t, 6>{0x02, 0x53, 0x46, 0, 0, 0});
  std::vector<uint16_t> map(kSenders + 1, 0);
  if (shards == 2) {
    for (size_t i = kSenders / 2; i <= kSenders; ++i) map[i] = 1;
  }
  sw::ShardedSwitch sw(cfg, sw_macs, scenario_pool(), map);
  sw::ShardedSwitchNode sw_node(sw);
  Node& node = shards == 1 ? sw.shard_node(0) : static_cast<Node&>(sw_node);

  std::vector<std::unique_ptr<nic::NicNode>> nodes;
  for (const AppHost& h : hosts) nodes.push_back(std::make_unique<nic::NicNode>(node_cfg(h), scenario_pool()));
  const size_t rx = kSenders;
  std::vector<std::unique_ptr<Workload>> clients, servers;
  nic::app::PerftestEngine rx_engine;
  std::vector<std::unique_ptr<nic::app::PerftestEngine>> tx_engines;
  for (size_t i = 0; i < kSenders; ++i) {
    AppWorkload w;
    w.type = WorkloadType::kWriteBw;
    w.size_bytes = kMsgBytes;
    w.iterations = kMsgsPerSender;
    w.tx_depth = 32;
    w.verify = true;
    w.cc = *nic::cc_choice_from_string("dcqcn-nvidia");
    w.name = "c" + std::to_string(i);
    w.role = Role::kClient;
    clients.push_back(std::make_unique<Workload>(w, hosts[i], *nodes[i], 0));
    w.name = "s" + std::to_string(i);
    w.role = Role::kServer;
    servers.push_back(std::make_unique<Workload>(w, hosts[rx], *nodes[rx], 0));
    EXPECT_EQ(servers[i]->connect(clients[i]->local_info(), TimeNs(0)), "");
    EXPECT_EQ(clients[i]->connect(servers[i]->local_info(), TimeNs(0)), "");
    tx_engines.push_back(std::make_unique<nic::app::PerftestEngine>());
    tx_engines.back()->add(clients[i].get());
    nodes[i]->set_app(tx_engines.back().get());
    rx_engine.add(servers[i].get());
  }
  nodes[rx]->set_app(&rx_engine);

  auto sim = std::make_unique<sim::Simulator>(11);
  const sim::NodeId sw_id = sim->add_node(node, "switch");
  for (size_t i = 0; i <= kSenders; ++i) {
    const sim::NodeId id = sim->add_node(*nodes[i], hosts[i].name);
    sim->connect(id, 0, sw_id, static_cast<PortId>(i), {BitRate::gbps(100), TimeNs::from_us(1)});
  }
  Result r;
  auto all_done = [&] {
    for (const auto& c : clients) {
      if (!c->traffic_done()) return false;
    }
    return true;
  };
  const auto rxp = static_cast<PortId>(rx);
  while (!all_done() && sim->now() < TimeNs::from_ms(50)) {
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
  for (auto& n : nodes) n->set_app(nullptr);
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
