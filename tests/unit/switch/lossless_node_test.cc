// The lossless layer inside SwitchNode on real mbufs: the PFC watchdog
// (PFC_WD: drop / forward / alert, microsecond timers, restoration), packet
// trimming (SWITCH_TRIMMING + packet_discard_action trim) and bad MAC control
// input (counted and ignored).
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "common/config/json_loader.h"
#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/mac_control.h"
#include "switch/pipeline/switch_node.h"
#include "tests/support/eal_env.h"
#include "tests/unit/switch/switch_node_fixture.h"

namespace sf::sw {
namespace {

using wire::MacAddr;

constexpr const char* kPorts = R"("PORT": {"Ethernet0": {"devargs": "a", "speed": 100},
    "Ethernet4": {"devargs": "b", "speed": 100}, "Ethernet8": {"devargs": "c", "speed": 100}})";

// Lossless priority 3 (DSCP 26) on every port, PFC watchdog on Ethernet8 with
// the seed-000 timers (200 us detection, 50 us recovery) and `action`.
std::string wd_doc(const std::string& action) {
  return std::string("{") + kPorts + R"(,
    "BUFFER_POOL": {"ip": {"type": "ingress", "mode": "static", "size": "1MiB"},
                    "ep": {"type": "egress", "mode": "static", "size": "1MiB"}},
    "BUFFER_PROFILE": {"pg3": {"pool": "ip", "size": "0", "static_th": "200000", "xoff": "100000"},
                       "q": {"pool": "ep", "size": "0", "static_th": "1MiB"}},
    "BUFFER_PG": {"Ethernet0,Ethernet4,Ethernet8|3": {"profile": "pg3"}},
    "BUFFER_QUEUE": {"Ethernet0,Ethernet4,Ethernet8|0-7": {"profile": "q"}},
    "PORT_QOS_MAP": {"global": {"pfc_enable": "3", "pfcwd_sw_enable": "3"}},
    "PFC_WD": {"Ethernet8": {"action": ")" + action + R"(", "detection_time": "200us", "restoration_time": "50us"}}})";
}

class LosslessNodeTest : public SwitchNodeFixture {
 protected:
  void make(const std::string& doc) {
    SwitchNodeFixture::make(doc);
    // Teach the FDB where hosts A, B, C live (ports 0, 1, 2).
    rx(2, frame(v4(kHostA, kHostC)), TimeNs(0));
    rx(0, frame(v4(kHostC, kHostA)), TimeNs(0));
    rx(1, frame(v4(kHostC, kHostB)), TimeNs(0));
    for (uint16_t p = 0; p < 3; ++p) drain(p, TimeNs(0));
    base_ = node_->counters(2);
  }
  void rx_bytes(uint16_t port, const std::vector<uint8_t>& b, TimeNs now) { rx(port, test::make_mbuf(b), now); }
  // Runs the node's timers up to `t` (as a driver would: advance at each wakeup).
  void run_until(TimeNs t) {
    for (int guard = 0; guard < 1000; ++guard) {
      const TimeNs w = node_->next_wakeup(now_);
      if (w > t) break;
      now_ = std::max(now_, w);
      node_->advance(now_);
    }
    now_ = t;
    node_->advance(t);
  }
  uint64_t drops(uint16_t port, DropCause c) const { return node_->counters(port).drops[static_cast<size_t>(c)]; }

  PortCounters base_;
  TimeNs now_{0};
};

// 1. Watchdog, action drop, seed-000 timers. Port 2's peer pauses priority 3
// and keeps refreshing. Expect: at 200 us of pause without transmission the
// queue is stormed (logged), flushed (pfcwd_drop), its pauses ignored (count),
// new packets for it dropped, and so are the peer's own packets in that PG,
// while other queues and priorities go on;
// 50 us after the last pause frame it is restored and pauses count again.
TEST_F(LosslessNodeTest, WatchdogDropFlushesAndRestores) {
  make(wd_doc("drop"));
  ASSERT_NE(node_->pfc_wd(2), nullptr);
  EXPECT_EQ(node_->pfc_wd(0), nullptr);
  const TimeNs t0 = TimeNs::from_us(1);
  rx_bytes(2, pfc_bytes(1u << 3, 0xFFFF), t0);  // 335 us at 100G
  for (int i = 0; i < 5; ++i) rx(0, frame(v4(kHostC, kHostA)), t0);
  EXPECT_EQ(node_->queue_packets(2, 3), 5u);
  EXPECT_TRUE(drain(2, t0).empty());
  EXPECT_EQ(node_->next_wakeup(t0), t0 + TimeNs::from_us(200));
  // Refreshes every 100 us keep it paused; 199 us: not yet stormed.
  rx_bytes(2, pfc_bytes(1u << 3, 0xFFFF), TimeNs::from_us(100));
  run_until(t0 + TimeNs::from_us(199));
  EXPECT_EQ(node_->pfc_wd(2)->stormed(), 0u);
  run_until(t0 + TimeNs::from_us(200));
  EXPECT_EQ(node_->pfc_wd(2)->stormed(), 1u << 3);
  ASSERT_EQ(node_->pfc_wd_log().size(), 1u);
  EXPECT_TRUE(node_->pfc_wd_log()[0].storm);
  EXPECT_EQ(node_->pfc_wd_log()[0].at, t0 + TimeNs::from_us(200));
  EXPECT_EQ(node_->queue_packets(2, 3), 0u);
  EXPECT_EQ(drops(0, DropCause::kPfcWatchdog), 5u);
  EXPECT_EQ(node_->paused(2), 0u);  // pauses ignored
  EXPECT_EQ(node_->mmu().total_used(), 0u);
  // While stormed: pause frames ignored (counted), new priority-3 packets
  // dropped, queue 1 traffic forwarded.
  rx_bytes(2, pfc_bytes(1u << 3, 0xFFFF), TimeNs::from_us(220));
  EXPECT_EQ(node_->paused(2), 0u);
  EXPECT_EQ(node_->pfc_wd(2)->counters().rx_ignored_pause[3], 1u);
  rx(0, frame(v4(kHostC, kHostA)), TimeNs::from_us(230));
  rx(0, frame(v4(kHostC, kHostA, 2, 8)), TimeNs::from_us(230));
  EXPECT_EQ(drops(0, DropCause::kPfcWatchdog), 6u);
  EXPECT_EQ(drain(2, TimeNs::from_us(230)).size(), 1u);
  EXPECT_EQ(node_->pfc_wd(2)->counters().tx_dropped[3], 6u);
  // Lossless arrivals from the stormed peer (port 2, PG 3) are dropped too;
  // its other priorities pass.
  rx(2, frame(v4(kHostA, kHostC)), TimeNs::from_us(231));
  rx(2, frame(v4(kHostA, kHostC, 2, 8)), TimeNs::from_us(231));
  EXPECT_EQ(drops(2, DropCause::kPfcWatchdog), 1u);
  EXPECT_EQ(node_->pfc_wd(2)->counters().rx_dropped[3], 1u);
  EXPECT_EQ(drain(0, TimeNs::from_us(231)).size(), 1u);
  // 49 us after the last frame: still stormed; 50 us: restored.
  run_until(TimeNs::from_us(269));
  EXPECT_EQ(node_->pfc_wd(2)->stormed(), 1u << 3);
  run_until(TimeNs::from_us(270));
  EXPECT_EQ(node_->pfc_wd(2)->stormed(), 0u);
  ASSERT_EQ(node_->pfc_wd_log().size(), 2u);
  EXPECT_FALSE(node_->pfc_wd_log()[1].storm);
  EXPECT_EQ(node_->pfc_wd(2)->counters().storms[3], 1u);
  EXPECT_EQ(node_->pfc_wd(2)->counters().restores[3], 1u);
  // Restored: a pause holds the queue again and packets queue, not drop.
  rx_bytes(2, pfc_bytes(1u << 3, 0xFFFF), TimeNs::from_us(280));
  rx(0, frame(v4(kHostC, kHostA)), TimeNs::from_us(280));
  EXPECT_EQ(node_->paused(2), 1u << 3);
  EXPECT_EQ(node_->queue_packets(2, 3), 1u);
  EXPECT_EQ(drops(0, DropCause::kPfcWatchdog), 6u);
}

// 2. Action forward: the stormed queue ignores pause and sends; nothing is
// dropped. Action alert: counted and logged only, the queue stays paused,
// and it is restored as soon as the pause ends.
TEST_F(LosslessNodeTest, WatchdogForwardAndAlert) {
  make(wd_doc("forward"));
  rx_bytes(2, pfc_bytes(1u << 3, 0xFFFF), TimeNs::from_us(1));
  for (int i = 0; i < 3; ++i) rx(0, frame(v4(kHostC, kHostA)), TimeNs::from_us(1));
  run_until(TimeNs::from_us(201));
  EXPECT_EQ(node_->pfc_wd(2)->stormed(), 1u << 3);
  EXPECT_EQ(drain(2, TimeNs::from_us(201)).size(), 3u);
  EXPECT_EQ(node_->counters(0).dropped, 0u);

  make(wd_doc("alert"));
  rx_bytes(2, pfc_bytes(1u << 3, 0xFFFF), TimeNs::from_us(1));
  rx(0, frame(v4(kHostC, kHostA)), TimeNs::from_us(1));
  run_until(TimeNs::from_us(201));
  EXPECT_EQ(node_->pfc_wd(2)->stormed(), 1u << 3);
  EXPECT_EQ(node_->paused(2), 1u << 3);
  EXPECT_TRUE(drain(2, TimeNs::from_us(201)).empty());
  rx_bytes(2, pfc_bytes(1u << 3, 0), TimeNs::from_us(250));  // XON
  run_until(TimeNs::from_us(251));
  EXPECT_EQ(node_->pfc_wd(2)->stormed(), 0u);
  EXPECT_EQ(node_->pfc_wd(2)->counters().restores[3], 1u);
  EXPECT_EQ(drain(2, TimeNs::from_us(251)).size(), 1u);
  EXPECT_EQ(node_->counters(0).dropped, 0u);
}

// 3. No false storm: pauses shorter than the detection time (XON in between),
// or a queue that keeps transmitting between pauses, never storm.
TEST_F(LosslessNodeTest, WatchdogIgnoresShortPauses) {
  make(wd_doc("drop"));
  for (int k = 0; k < 5; ++k) {
    const TimeNs t = TimeNs::from_us(1 + 150 * k);
    rx_bytes(2, pfc_bytes(1u << 3, 0xFFFF), t);
    rx(0, frame(v4(kHostC, kHostA)), t);
    run_until(t + TimeNs::from_us(149));
    rx_bytes(2, pfc_bytes(1u << 3, 0), t + TimeNs::from_us(149));
    EXPECT_EQ(drain(2, t + TimeNs::from_us(149)).size(), 1u);
  }
  run_until(TimeNs::from_ms(2));
  EXPECT_EQ(node_->pfc_wd(2)->counters().storms[3], 0u);
  EXPECT_TRUE(node_->pfc_wd_log().empty());
}

// Lossy queue 0 (DSCP 0) on Ethernet8 with a 4 KB static limit and
// packet_discard_action trim; trimmed packets go to queue 6 as DSCP 48.
std::string trim_doc(const std::string& trim_queue_limit = "1MiB") {
  return std::string("{") + kPorts + R"(,
    "BUFFER_POOL": {"ip": {"type": "ingress", "mode": "static", "size": "1MiB"},
                    "ep": {"type": "egress", "mode": "static", "size": "1MiB"}},
    "BUFFER_PROFILE": {"lossy": {"pool": "ip", "size": "0", "static_th": "1MiB"},
                       "q": {"pool": "ep", "size": "0", "static_th": "1MiB"},
                       "qt": {"pool": "ep", "size": "0", "static_th": ")" + trim_queue_limit + R"("},
                       "q_trim": {"pool": "ep", "size": "0", "static_th": "4000", "packet_discard_action": "trim"}},
    "BUFFER_PG": {"Ethernet0,Ethernet4,Ethernet8|0-7": {"profile": "lossy"}},
    "BUFFER_QUEUE": {"Ethernet0,Ethernet4,Ethernet8|0-7": {"profile": "q"},
                     "Ethernet8|0": {"profile": "q_trim"}, "Ethernet8|6": {"profile": "qt"}},
    "SWITCH_TRIMMING": {"GLOBAL": {"size": "128", "dscp_value": "48", "queue_index": "6"}}})";
}

// 4. Trimming: 10 frames of 1098 B into a 4 KB queue. Expect: the first 3
// (whole cells) fit, the other 7 are cut to 128 B with DSCP 48 on queue 6,
// IPv4 / UDP lengths and checksum fixed so they parse, BTH intact; nothing is
// dropped; trimmed == trimmed_tx == 7.
TEST_F(LosslessNodeTest, TrimInsteadOfDrop) {
  make(trim_doc());
  for (int i = 0; i < 10; ++i) rx(0, frame(v4(kHostC, kHostA, 2, 0), 1024), TimeNs(100));
  EXPECT_EQ(node_->counters(2).trimmed, 7u);
  EXPECT_EQ(node_->queue_packets(2, 6), 7u);
  EXPECT_EQ(node_->counters(0).dropped, 0u);
  const auto out = drain(2, TimeNs(200));
  ASSERT_EQ(out.size(), 10u);
  size_t whole = 0;
  size_t cut = 0;
  for (const auto& b : out) {
    const wire::FrameInfo f = wire::parse_frame(b);
    ASSERT_NE(f.ipv4, nullptr) << wire::to_string(f.reason);
    ASSERT_NE(f.udp, nullptr);
    if (b.size() == 1098) {
      ++whole;
      EXPECT_EQ(f.ipv4->dscp(), 0);
      continue;
    }
    ++cut;
    EXPECT_EQ(b.size(), 128u);
    EXPECT_EQ(f.ipv4->dscp(), 48);
    EXPECT_EQ(f.ipv4->total_length.value(), 128 - 14);
    EXPECT_EQ(f.udp->length.value(), 128 - 34);
    ASSERT_NE(f.bth, nullptr);
    EXPECT_EQ(f.bth->opcode, static_cast<uint8_t>(wire::Opcode::kRcWriteOnly));
  }
  EXPECT_EQ(whole, 3u);
  EXPECT_EQ(cut, 7u);
  EXPECT_EQ(node_->counters(2).trimmed_tx, 7u);
  EXPECT_EQ(node_->counters(2).trimmed_dropped, 0u);
  EXPECT_EQ(node_->mmu().total_used(), 0u);
}

// 5. A trimmed packet that does not fit the trim queue either is counted
// trimmed_dropped and dropped under its cause; flooded copies (shared bytes)
// are never trimmed, only dropped.
TEST_F(LosslessNodeTest, TrimQueueFullIsCountedAndFloodIsNotTrimmed) {
  make(trim_doc("300"));  // trim queue: two 128 B packets (one cell each)
  for (int i = 0; i < 10; ++i) rx(0, frame(v4(kHostC, kHostA, 2, 0), 1024), TimeNs(100));
  EXPECT_EQ(node_->counters(2).trimmed, 7u);
  EXPECT_EQ(node_->queue_packets(2, 6), 2u);
  EXPECT_EQ(node_->counters(2).trimmed_dropped, 5u);
  EXPECT_EQ(drops(0, DropCause::kEgressLimit), 5u);
  drain(2, TimeNs(200));
  EXPECT_EQ(node_->counters(2).trimmed_tx, 2u);
  // Fill queue 0 again, then flood (unknown destination): the copy for port
  // 2 is dropped, not trimmed.
  for (int i = 0; i < 3; ++i) rx(0, frame(v4(kHostC, kHostA, 2, 0), 1024), TimeNs(300));
  const MacAddr unknown{{0x02, 0, 0, 0, 0, 0x77}};
  rx(0, frame(v4(unknown, kHostA, 2, 0), 1024), TimeNs(300));
  EXPECT_EQ(node_->counters(2).trimmed, 7u);
  EXPECT_EQ(drops(0, DropCause::kEgressLimit), 6u);
  drain(1, TimeNs(400));
  drain(2, TimeNs(400));
  EXPECT_EQ(node_->mmu().total_used(), 0u);
}

// 6. Bad MAC control input is counted and ignored: truncated PFC, unknown
// opcode, wrong DA, a priority without PFC, reserved enable bits (low byte
// honoured). Nothing crashes, nothing else is paused.
TEST_F(LosslessNodeTest, BadMacControlFramesCountedAndIgnored) {
  make(wd_doc("drop"));
  std::vector<uint8_t> trunc = pfc_bytes(1u << 3, 0xFFFF);
  trunc.resize(20);
  rx_bytes(2, trunc, TimeNs(10));
  std::vector<uint8_t> op = pfc_bytes(1u << 3, 0xFFFF);
  op[15] = 0x77;  // opcode 0x0177
  rx_bytes(2, op, TimeNs(10));
  rx_bytes(2, pfc_bytes(1u << 3, 0xFFFF, false), TimeNs(10));
  rx_bytes(2, pfc_bytes(1u << 1, 0xFFFF), TimeNs(10));
  EXPECT_EQ(node_->paused(2), 0u);
  std::vector<uint8_t> res = pfc_bytes(1u << 3, 100);
  res[16] = 0x01;  // reserved upper byte of the class-enable vector
  rx_bytes(2, res, TimeNs(10));
  EXPECT_EQ(node_->paused(2), 1u << 3);
  const PortCounters& c = node_->counters(2);
  EXPECT_EQ(c.rx_mac_control - base_.rx_mac_control, 5u);
  EXPECT_EQ(c.rx_mac_control_malformed, 1u);
  EXPECT_EQ(c.rx_unsupported_op, 1u);
  EXPECT_EQ(c.rx_mac_control_bad_da, 1u);
  EXPECT_EQ(c.rx_pfc_disabled_prio, 1u);
  EXPECT_EQ(c.rx_pfc_reserved_bits, 1u);
  EXPECT_EQ(c.dropped, 0u);
  // 802.3x PAUSE pauses every queue.
  std::vector<uint8_t> pause(60);
  wire::build_pause_frame(pause, kHostC, 1000);
  rx_bytes(1, pause, TimeNs(20));
  EXPECT_EQ(node_->paused(1), 0xFFu);
  EXPECT_EQ(node_->pfc_rx(1).counters().global_pause_frames, 1u);
}

// 7. PFC generation over time: a congested lossless PG sends XOFF (0xFFFF
// quanta, 335.5 us at 100G) ahead of data, refreshes it once half of that has
// passed while still congested (before the peer's timer runs out), and sends
// XON (time 0) once drained. Expect: frames at t, t + 167.8 us, then XON.
TEST_F(LosslessNodeTest, PfcXoffIsRefreshedWhileCongested) {
  make(wd_doc("drop"));
  for (int i = 0; i < 250; ++i) rx(0, frame(v4(kHostC, kHostA), 930), TimeNs(10));
  ASSERT_TRUE(node_->pfc_tx(0).xoff(3));
  auto pfc_out = [&](TimeNs t) -> std::optional<std::pair<uint8_t, uint16_t>> {
    rte_mbuf* b[4];
    const uint16_t n = node_->transmit(0, b, t);
    std::optional<std::pair<uint8_t, uint16_t>> r;
    for (uint16_t i = 0; i < n; ++i) {
      const wire::FrameInfo f = wire::parse_frame({rte_pktmbuf_mtod(b[i], uint8_t*), b[i]->data_len});
      if (f.pfc != nullptr) r = std::make_pair(f.pfc->enabled_mask(), f.pfc->time_quanta[3].value());
      rte_pktmbuf_free(b[i]);
    }
    return r;
  };
  const auto first = pfc_out(TimeNs(20));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->first, 1u << 3);
  EXPECT_EQ(first->second, 0xFFFF);
  const TimeNs refresh_at = node_->next_wakeup(TimeNs(20));
  const TimeNs half = TimeNs(65535LL * 512 * 10 / 1000 / 2);  // 0xFFFF x 5.12 ns / 2
  EXPECT_GE(refresh_at, TimeNs(20) + half - TimeNs(10));
  EXPECT_LE(refresh_at, TimeNs(20) + half + TimeNs(10));
  EXPECT_FALSE(pfc_out(refresh_at - TimeNs(1)).has_value());
  const auto again = pfc_out(refresh_at);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->second, 0xFFFF);
  drain(2, refresh_at);
  EXPECT_FALSE(node_->pfc_tx(0).xoff(3));
  const auto xon = pfc_out(refresh_at + TimeNs(1));
  ASSERT_TRUE(xon.has_value());
  EXPECT_EQ(xon->second, 0);
  EXPECT_EQ(node_->pfc_tx(0).counters().pause_frames[3], 2u);
  EXPECT_EQ(node_->pfc_tx(0).counters().xon_frames[3], 1u);
}

}  // namespace
}  // namespace sf::sw
