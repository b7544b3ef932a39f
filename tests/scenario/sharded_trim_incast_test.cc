// The trimming incast of trim_incast_test.cc (four 100G lossy senders into
// one 100G port whose egress profile trims, SWITCH_TRIMMING {128 B, DSCP 48,
// queue 6}) through a switch sharded over 2 shards (senders 0-1 on shard 0;
// senders 2-3 and the sink on shard 1, so half the trims are taken by the
// egress shard on packets admitted at ingress by the other one), driven in
// virtual time through ShardedSwitchNode, against the one-lcore switch.
// Expect: the same run. The same frames delivered whole and trimmed (the
// same PSNs per sender, each exactly once), the same switch trimmed /
// trimmed_tx counts, nothing dropped, every cell and mbuf back.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include "switch/pipeline/sharded_switch.h"
#include "tests/scenario/fabric.h"
#include "tests/scenario/scenario.h"

namespace sf::scenario {
namespace {

constexpr size_t kSenders = 4;
constexpr uint64_t kFrames = 600;
constexpr uint8_t kTrimDscp = 48;

struct Result {
  uint64_t sent = 0, whole = 0, trimmed_rx = 0, trimmed = 0, trimmed_tx = 0, trimmed_dropped = 0, drops = 0;
  uint64_t covered = 0, duplicates = 0, crossed = 0;
  std::map<uint8_t, std::set<uint32_t>> trimmed_psns;  // sender's last IP octet -> PSNs that arrived trimmed
  uint32_t cells_left = 0;
  bool mbufs_returned = false;
};

Result run(uint16_t shards) {
  config::Json doc = sized_doc("config/switch/seed000-static-lossless.json", std::vector<uint32_t>(kSenders + 1, 100));
  doc["BUFFER_PROFILE"]["egress_lossy_profile"] = config::Json::parse(
      R"({"pool": "egress_lossy_pool", "size": "1518", "dynamic_th": "-2", "packet_discard_action": "trim"})");
  doc["BUFFER_PROFILE"]["trim_queue_profile"] =
      config::Json::parse(R"({"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"})");
  doc["BUFFER_QUEUE"][port_list(kSenders + 1) + "|6"] = config::Json::parse(R"({"profile": "trim_queue_profile"})");
  doc["SWITCH_TRIMMING"] =
      config::Json::parse(R"({"GLOBAL": {"size": "128", "dscp_value": "48", "queue_index": "6"}})");
  sw::SwitchConfig cfg = sw::parse_switch_config(doc);
  add_fdb(cfg, host_mac(kSenders), static_cast<uint16_t>(kSenders));
  std::vector<std::array<uint8_t, 6>> macs(kSenders + 1, std::array<uint8_t, 6>{0x02, 0x53, 0x46, 0, 0, 0});
  std::vector<uint16_t> map(kSenders + 1, 0);
  if (shards == 2) {
    for (size_t i = kSenders / 2; i <= kSenders; ++i) map[i] = 1;
  }

  Result r;
  rte_mempool* pool = scenario_pool();
  const unsigned pool_before = rte_mempool_avail_count(pool);
  {
    sw::ShardedSwitch sw(cfg, macs, pool, map);
    sw::ShardedSwitchNode sw_node(sw);
    Node& node = shards == 1 ? sw.shard_node(0) : static_cast<Node&>(sw_node);
    Fabric fab(3);
    const sim::NodeId sw_id = fab.sim().add_node(node, "switch");
    const sim::LinkParams lp{BitRate::gbps(100), TimeNs::from_us(1)};
    for (size_t i = 0; i < kSenders; ++i) {
      SenderConfig sc;
      sc.src_mac = host_mac(i);
      sc.src_ip = host_ip(i);
      sc.dst_mac = host_mac(kSenders);
      sc.dst_ip = host_ip(kSenders);
      sc.dscp = 0;
      sc.ecn = wire::Ecn::kNotEct;
      sc.udp_src_port = static_cast<uint16_t>(0xC000 + i);
      sc.budget_bytes = kFrames * 1098;
      fab.add_sender("sender" + std::to_string(i), sc);
      fab.sim().connect(sw_id, static_cast<PortId>(i), fab.sender_id(i), 0, lp);
    }
    fab.add_sink("sink", true);
    fab.sim().connect(sw_id, static_cast<PortId>(kSenders), fab.sink_id(0), 0, lp);
    fab.sim().run_until(TimeNs::from_ms(2));

    r.sent = fab.sent_frames();
    const RoceSink& sink = fab.sink(0);
    r.whole = sink.dscp_frames(0);
    r.trimmed_rx = sink.dscp_frames(kTrimDscp);
    const sw::PortCounters c = sw.counters(static_cast<uint16_t>(kSenders));
    r.trimmed = c.trimmed;
    r.trimmed_tx = c.trimmed_tx;
    r.trimmed_dropped = c.trimmed_dropped;
    for (uint16_t p = 0; p <= kSenders; ++p) r.drops += sw.counters(p).dropped;
    std::map<uint8_t, std::set<uint32_t>> seen;
    for (const RoceSink::Arrival& a : sink.arrivals()) {
      if (!seen[a.src_last_octet].insert(a.psn).second) ++r.duplicates;
      if (a.dscp == kTrimDscp) r.trimmed_psns[a.src_last_octet].insert(a.psn);
    }
    for (size_t i = 0; i < kSenders; ++i) {
      const auto& psns = seen[host_ip(i).bytes[3]];
      for (uint32_t p = 0; p < kFrames; ++p) r.covered += psns.count(p);
    }
    for (uint16_t s = 0; s < sw.num_shards(); ++s) r.crossed += sw.shard_counters(s).forwarded;
    r.cells_left = sw.mmu().total_used();
  }
  r.mbufs_returned = rte_mempool_avail_count(pool) == pool_before;
  return r;
}

TEST(ShardedTrimIncast, TwoShardsTrimExactlyAsOne) {
  const Result one = run(1);
  const Result two = run(2);
  // 1. One shard: the trimming incast of trim_incast_test.cc.
  EXPECT_EQ(one.sent, kSenders * kFrames);
  EXPECT_GT(one.trimmed, 100u) << "the incast must overflow the lossy queue";
  EXPECT_EQ(one.trimmed_rx, one.trimmed);
  EXPECT_EQ(one.crossed, 0u);
  // 2. Two shards: senders 0-1 cross to the sink's shard; the same trims.
  EXPECT_EQ(two.sent, one.sent);
  EXPECT_GE(two.crossed, kSenders / 2 * kFrames);
  EXPECT_EQ(two.trimmed, one.trimmed);
  EXPECT_EQ(two.trimmed_tx, one.trimmed_tx);
  EXPECT_EQ(two.trimmed_rx, one.trimmed_rx);
  EXPECT_EQ(two.whole, one.whole);
  EXPECT_EQ(two.trimmed_psns, one.trimmed_psns) << "different frames were trimmed";
  // Frames of senders 0-1 were trimmed too: by shard 1 at egress admission
  // of packets shard 0 admitted at ingress (shard_trim).
  ASSERT_EQ(two.trimmed_psns.count(host_ip(0).bytes[3]), 1u);
  EXPECT_FALSE(two.trimmed_psns.at(host_ip(0).bytes[3]).empty());
  // 3. Neither loses a payload silently nor leaks a cell or an mbuf.
  for (const Result* r : {&one, &two}) {
    EXPECT_EQ(r->drops, 0u);
    EXPECT_EQ(r->trimmed_dropped, 0u);
    EXPECT_EQ(r->whole + r->trimmed_rx, r->sent);
    EXPECT_EQ(r->covered, kSenders * kFrames);
    EXPECT_EQ(r->duplicates, 0u);
    EXPECT_EQ(r->cells_left, 0u);
    EXPECT_TRUE(r->mbufs_returned);
  }
  std::printf("1 and 2 shards: %llu sent, %llu whole, %llu trimmed (2 shards: %llu, %llu crossed)\n",
              static_cast<unsigned long long>(one.sent), static_cast<unsigned long long>(one.whole),
              static_cast<unsigned long long>(one.trimmed), static_cast<unsigned long long>(two.trimmed),
              static_cast<unsigned long long>(two.crossed));
}

}  // namespace
}  // namespace sf::scenario
