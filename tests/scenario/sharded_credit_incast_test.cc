// Credit-based link flow control through a sharded switch in virtual time
// (seed 003's credit hosts, credit_hosts.h): an 8:1 incast of credit-mode
// senders into one credit-mode sink, every switch port a CREDIT_FC port
// (4 KiB MTU, 16 credits per VL, update threshold 2), through a switch
// sharded over 2 shards (senders 0-3 on shard 0; senders 4-7 and the sink on
// shard 1), driven by the simulator through ShardedSwitchNode, against the
// one-lcore switch.
//
// 1. Expect the very same run: the same simulator trace (every frame at the
//    same virtual time), end time, frames delivered, credit updates sent by
//    every switch port and received from every peer, credit stalls and their
//    histogram at every sender and at the switch port to the sink, every
//    port counter; zero loss and no overrun. And the shards moved half the
//    senders' traffic through their rings, sent their credit slots back as
//    credit notes (every one applied) and left no slot occupied.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/config/json_loader.h"
#include "tests/scenario/credit_hosts.h"
#include "tests/scenario/scenario.h"

namespace sf::scenario {
namespace {

constexpr size_t kSenders = 8;
constexpr uint32_t kMtu = 4096;
constexpr uint32_t kMessageBytes = 128 << 10;
constexpr uint32_t kMessages = 10;
constexpr TimeNs kPeriod = TimeNs::from_us(400);

sw::SwitchConfig config() {
  const std::string doc = "{" + port_table(kSenders + 1, 100) + R"(, "CREDIT_FC": {")" + port_list(kSenders + 1) +
                          R"(": {"mtu": 4096, "vl_buffer": "64KiB", "update_threshold": 2}}})";
  return sw::parse_switch_config(config::parse_text(doc));
}

struct CreditRun {
  uint64_t trace = 0;
  TimeNs end;
  bool finished = false;
  uint64_t frames = 0;
  uint64_t delivered = 0;
  uint64_t drops = 0;
  uint64_t lost = 0;
  uint64_t overruns = 0;
  std::vector<CreditCounters> sender_credit;  // each sender's end of its link
  std::vector<CreditCounters> switch_credit;  // each switch port
  std::vector<uint32_t> occupied;             // slots still held per switch port (VL 0)
  std::vector<sw::PortCounters> ports;
  sw::ShardCounters rings[2];
};

CreditRun run(bool sharded) {
  const std::vector<CreditSenderConfig> senders = incast_senders(kSenders, kMtu, kMessageBytes, kMessages, kPeriod);
  std::vector<uint16_t> map;
  if (sharded) {
    map.assign(kSenders + 1, 1);
    for (size_t i = 0; i < kSenders / 2; ++i) map[i] = 0;
  }
  CreditFabric fab(config(), senders, {sink_mac()}, 3, TimeNs::from_us(1), map);
  CreditRun r;
  r.end = fab.run(TimeNs::from_us(50), TimeNs::from_ms(40));
  r.finished = fab.finished();
  r.trace = fab.sim().trace_hash();
  for (size_t i = 0; i < kSenders; ++i) {
    r.frames += fab.sender(i).frames_total();
    r.sender_credit.push_back(fab.sender(i).credit().counters());
  }
  r.delivered = fab.delivered_frames();
  r.drops = fab.switch_drops();
  r.lost = fab.lost_on_links();
  r.overruns = fab.overruns();
  for (PortId p = 0; p <= kSenders; ++p) {
    const CreditPort& c = *fab.owner(p).credit(p);
    r.switch_credit.push_back(c.counters());
    r.occupied.push_back(c.receiver().occupied(0));
    r.ports.push_back(fab.counters(p));
  }
  for (uint16_t s = 0; s < fab.sharded().num_shards() && s < 2; ++s) r.rings[s] = fab.sharded().shard_counters(s);
  return r;
}

void expect_same_credit(const CreditCounters& a, const CreditCounters& b, const std::string& where) {
  EXPECT_EQ(a.tx_updates, b.tx_updates) << where;
  EXPECT_EQ(a.rx_updates, b.rx_updates) << where;
  EXPECT_EQ(a.credit_stalls, b.credit_stalls) << where;
  EXPECT_EQ(a.stalled_time, b.stalled_time) << where;
  EXPECT_EQ(a.stall_histogram, b.stall_histogram) << where;
  EXPECT_EQ(a.rx_overrun, b.rx_overrun) << where;
  EXPECT_EQ(a.tx_without_credit, b.tx_without_credit) << where;
}

TEST(ShardedCreditIncast, SameRunAsOneShard) {
  const CreditRun one = run(false);
  const CreditRun two = run(true);
  std::printf("1 shard: %lu frames delivered by %.1f us, %lu switch credit updates, %lu sender stalls\n",
              one.delivered, one.end.us(), [&] {
                uint64_t n = 0;
                for (const auto& c : one.switch_credit) n += c.tx_updates;
                return n;
              }(), [&] {
                uint64_t n = 0;
                for (const auto& c : one.sender_credit) n += c.credit_stalls;
                return n;
              }());
  std::printf("2 shards: %lu packets crossed, %lu / %lu credit notes sent by shard 0 / 1\n",
              two.rings[0].forwarded + two.rings[1].forwarded, two.rings[0].credit_notes_sent,
              two.rings[1].credit_notes_sent);
  // Zero loss, everything delivered (both).
  for (const CreditRun* r : {&one, &two}) {
    EXPECT_TRUE(r->finished);
    EXPECT_EQ(r->delivered, r->frames);
    EXPECT_GT(r->frames, 0u);
    EXPECT_EQ(r->drops, 0u);
    EXPECT_EQ(r->lost, 0u);
    EXPECT_EQ(r->overruns, 0u);
  }
  // The very same run.
  EXPECT_EQ(two.trace, one.trace);
  EXPECT_EQ(two.end, one.end);
  EXPECT_EQ(two.delivered, one.delivered);
  uint64_t stalls = 0, updates = 0;
  for (size_t i = 0; i < kSenders; ++i) {
    expect_same_credit(one.sender_credit[i], two.sender_credit[i], "sender " + std::to_string(i));
    stalls += one.sender_credit[i].credit_stalls;
  }
  for (PortId p = 0; p <= kSenders; ++p) {
    expect_same_credit(one.switch_credit[p], two.switch_credit[p], "switch port " + std::to_string(p));
    EXPECT_EQ(std::memcmp(&one.ports[p], &two.ports[p], sizeof(sw::PortCounters)), 0) << "port " << p;
    EXPECT_EQ(two.occupied[p], 0u) << "port " << p;
    updates += one.switch_credit[p].tx_updates;
  }
  EXPECT_GT(stalls, 0u) << "the senders are meant to wait for credit";
  EXPECT_GT(updates, 100u);
  // Shard 0's senders crossed to the sink's shard, their slots came back.
  EXPECT_GT(two.rings[0].forwarded, two.delivered / 3);
  EXPECT_EQ(two.rings[0].forwarded, two.rings[1].received);
  EXPECT_GT(two.rings[1].credit_notes_sent, two.delivered / 3);
  EXPECT_EQ(two.rings[1].credit_notes_sent, two.rings[0].credit_notes_received);
  EXPECT_EQ(two.rings[0].credit_notes_sent, two.rings[1].credit_notes_received);
  EXPECT_EQ(two.rings[1].releases_sent, two.rings[0].releases_received);
  EXPECT_EQ(two.rings[0].ring_full + two.rings[1].ring_full, 0u);
}

}  // namespace
}  // namespace sf::scenario
