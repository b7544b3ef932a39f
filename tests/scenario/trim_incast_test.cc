// Lossless-issue scenario d: packet trimming under incast. Four 100G senders
// push lossy RoCE WRITEs (DSCP 0, 600 x 1098 B each) into one 100G port of a
// switch whose lossy egress profile is `packet_discard_action: trim` with a
// dynamic limit (alpha 1/4 of a 4 MiB pool, ~0.8 MiB at equilibrium), and
// SWITCH_TRIMMING {size 128, DSCP 48, queue 6 (strict)}. Expect: no silent
// loss. Every frame the switch could not buffer reaches the sink as a
// 128-byte trimmed header (DSCP 48, parseable BTH with its PSN), so for
// every sender each PSN arrives exactly once, whole or trimmed; the switch
// drops nothing and trimmed_dropped is 0. Writes scenario_trim_incast.json.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include "tests/scenario/fabric.h"
#include "tests/scenario/scenario.h"

namespace sf::scenario {
namespace {

constexpr size_t kSenders = 4;
constexpr uint64_t kFrames = 600;
constexpr uint8_t kTrimDscp = 48;

TEST(TrimIncast, EveryDroppedPayloadIsAnnouncedByATrimmedHeader) {
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

  uint64_t sent = 0, full = 0, trimmed_rx = 0, switch_trimmed = 0, trimmed_tx = 0, trimmed_dropped = 0, drops = 0;
  uint64_t covered = 0, duplicates = 0, bad_trim_len = 0;
  TimeNs first_trim = TimeNs::max();
  rte_mempool* pool = scenario_pool();
  const unsigned pool_before = rte_mempool_avail_count(pool);
  {
    Fabric fab(3);
    const size_t s = fab.add_switch("switch", std::move(cfg));
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
      fab.link(s, static_cast<PortId>(i), fab.sender_id(i), 0, TimeNs::from_us(1));
    }
    fab.add_sink("sink", true);
    fab.link(s, static_cast<PortId>(kSenders), fab.sink_id(0), 0, TimeNs::from_us(1));
    fab.sim().run_until(TimeNs::from_ms(2));

    sent = fab.sent_frames();
    const RoceSink& sink = fab.sink(0);
    full = sink.dscp_frames(0);
    trimmed_rx = sink.dscp_frames(kTrimDscp);
    const sw::PortCounters& c = fab.sw(s).counters(static_cast<uint16_t>(kSenders));
    switch_trimmed = c.trimmed;
    trimmed_tx = c.trimmed_tx;
    trimmed_dropped = c.trimmed_dropped;
    drops = fab.switch_drops();
    std::map<uint8_t, std::set<uint32_t>> seen;
    for (const RoceSink::Arrival& a : sink.arrivals()) {
      if (!seen[a.src_last_octet].insert(a.psn).second) ++duplicates;
      if (a.dscp == kTrimDscp) {
        if (a.bytes != 128) ++bad_trim_len;
        first_trim = std::min(first_trim, a.at);
      }
    }
    for (size_t i = 0; i < kSenders; ++i) {
      const auto& psns = seen[host_ip(i).bytes[3]];
      for (uint32_t p = 0; p < kFrames; ++p) covered += psns.count(p);
    }
  }
  const bool mbufs_returned = rte_mempool_avail_count(pool) == pool_before;
  const config::Json j = {{"senders", kSenders},         {"sent_frames", sent},
                          {"delivered_whole", full},      {"delivered_trimmed", trimmed_rx},
                          {"switch_trimmed", switch_trimmed}, {"trimmed_tx", trimmed_tx},
                          {"trimmed_dropped", trimmed_dropped}, {"switch_drops", drops},
                          {"psns_covered", covered},      {"duplicates", duplicates},
                          {"first_trim_us", first_trim == TimeNs::max() ? -1.0 : first_trim.us()}};
  std::printf("[trim incast] %s\n  result: %s\n", j.dump().c_str(), write_result("trim_incast", j).c_str());

  EXPECT_EQ(sent, kSenders * kFrames);
  EXPECT_GT(switch_trimmed, 100u) << "the incast must overflow the lossy queue";
  EXPECT_EQ(drops, 0u);
  EXPECT_EQ(trimmed_dropped, 0u);
  EXPECT_EQ(trimmed_tx, switch_trimmed);
  EXPECT_EQ(trimmed_rx, switch_trimmed);
  EXPECT_EQ(full + trimmed_rx, sent) << "a payload vanished without a trimmed header";
  EXPECT_EQ(covered, kSenders * kFrames);
  EXPECT_EQ(duplicates, 0u);
  EXPECT_EQ(bad_trim_len, 0u);
  EXPECT_TRUE(mbufs_returned);
}

}  // namespace
}  // namespace sf::scenario
