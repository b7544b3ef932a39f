// Transmit stage E's INT hop record (switch/pipeline/int_stage.h) on its
// own: a flagged frame with an open shim gets one record (B, ts, txBytes,
// qLen from the port's queues) whether int_candidate found its UDP header
// or the stage parses it; frames without the flag leave untouched; a full
// stack, shared bytes and a frame without a shim are counted. Real mbufs;
// no SwitchNode.
#include "switch/pipeline/int_stage.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <array>
#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/int_shim.h"
#include "switch/pipeline/transmit_stage.h"
#include "tests/support/eal_env.h"
#include "tests/support/mbuf_chain.h"
#include "tests/support/roce_frame.h"

namespace sf::sw {
namespace {

using wire::IntStatus;

// A WRITE_ONLY of `payload` bytes, BTH INT flag set (when `flag`), then an
// empty shim of `max_hops` (when `open`).
std::vector<uint8_t> int_bytes(size_t payload, bool flag = true, bool open = true, uint8_t max_hops = wire::kIntDefaultMaxHops) {
  wire::RoceFrameSpec s;
  s.l2 = {wire::MacAddr{{0x02, 0, 0, 0, 0, 0x0B}}, wire::MacAddr{{0x02, 0, 0, 0, 0, 0x0A}}, std::nullopt};
  wire::Ipv4Spec ip;
  ip.src.bytes = {10, 0, 0, 1};
  ip.dst.bytes = {10, 1, 0, 2};
  ip.dscp = 26;
  s.l3 = ip;
  s.bth.opcode = wire::Opcode::kRcWriteOnly;
  s.ext.reth_dma_length = static_cast<uint32_t>(payload);
  std::vector<uint8_t> b = test::roce_frame_bytes(s, payload);
  if (!flag) return b;
  const wire::FrameInfo f = wire::parse_frame(std::span<const uint8_t>(b));
  wire::set_bth_int_flag(*const_cast<wire::Bth*>(f.bth), true);
  EXPECT_TRUE(wire::icrc_store(std::span<uint8_t>(b), f));
  if (!open) return b;
  uint32_t len = static_cast<uint32_t>(b.size());
  b.resize(len + 64);
  EXPECT_EQ(wire::int_open(b, len, wire::int_frame_ref(f), max_hops), IntStatus::kOk);
  b.resize(len);
  return b;
}

QueuedPkt dequeued(rte_mbuf* m) {
  QueuedPkt p;
  p.mbuf = m;
  p.ip_version = 4;
  p.l3_offset = 14;
  p.bytes = m->pkt_len;
  return p;
}

wire::IntShim shim_of(const std::vector<uint8_t>& b) {
  const wire::FrameInfo f = wire::parse_frame(std::span<const uint8_t>(b));
  return wire::int_read(b, wire::int_frame_ref(f));
}

struct Queues {
  QueueArena arena{kNumQueues * 8};
  std::array<EgressQueue, kNumQueues> q;
  Queues() {
    for (auto& e : q) e = arena.take(8);
  }
};

class IntStageTest : public testing::Test {
 protected:
  Queues queues_;
  PortCounters ctr_;
  IntHopPort port(uint64_t tx_before) { return IntHopPort{400'000'000'000, tx_before, queues_.q}; }
};

// Parsed by the stage (udp_offset 0) or found by int_candidate: the same record.
TEST_F(IntStageTest, OneRecordEitherWay) {
  QueuedPkt waiting;
  waiting.bytes = 700;
  queues_.q[2].push(waiting, Ticket{});
  queues_.q[5].push(waiting, Ticket{});
  std::vector<std::vector<uint8_t>> out;
  for (const bool found : {false, true}) {
    const std::vector<uint8_t> in = int_bytes(512);
    rte_mbuf* m = test::make_mbuf(in);
    const QueuedPkt p = dequeued(m);
    const uint16_t udp = int_candidate(p);
    ASSERT_NE(udp, kIntNo);
    EXPECT_EQ(int_insert(p, found ? (udp == kIntParse ? 0 : udp) : 0, port(64 * 1000), TimeNs::from_us(7), ctr_),
              wire::IntHop::kSize);
    EXPECT_EQ(m->pkt_len, in.size() + wire::IntHop::kSize);
    out.push_back(test::take_bytes(m));
  }
  EXPECT_EQ(out[0], out[1]);
  const wire::IntShim s = shim_of(out[0]);
  ASSERT_EQ(s.status, IntStatus::kOk);
  ASSERT_EQ(s.hops.size(), 1u);
  EXPECT_EQ(s.hops[0].ts_ns.value(), 7000u);
  EXPECT_EQ(s.hops[0].tx_units.value(), 1000u);
  EXPECT_EQ(s.hops[0].qlen_bytes.value(), 1400u);  // both queues
  EXPECT_EQ(s.hops[0].rate_mbps.value(), 400'000u);
  EXPECT_EQ(ctr_.int_records, 2u);
  EXPECT_EQ(ctr_.int_bytes, 2 * wire::IntHop::kSize);
  queues_.q[2].pop();
  queues_.q[5].pop();
}

TEST_F(IntStageTest, NoFlagNoShimLeavesTheFrame) {
  for (const bool flag : {false, true}) {
    const std::vector<uint8_t> in = int_bytes(256, flag, false);
    rte_mbuf* m = test::make_mbuf(in);
    EXPECT_EQ(int_insert(dequeued(m), 0, port(0), TimeNs(0), ctr_), 0u);
    EXPECT_EQ(test::take_bytes(m), in);
  }
  EXPECT_EQ(ctr_.int_records, 0u);
  EXPECT_EQ(ctr_.int_bad_shim, 1u);  // flagged without a shim
}

TEST_F(IntStageTest, FullStackIsFlaggedNotGrown) {
  std::vector<uint8_t> b = int_bytes(128, true, true, 1);
  rte_mbuf* m = test::make_mbuf(b);
  ASSERT_EQ(int_insert(dequeued(m), 0, port(0), TimeNs(1), ctr_), wire::IntHop::kSize);
  std::vector<uint8_t> once = test::take_bytes(m);
  m = test::make_mbuf(once);
  EXPECT_EQ(int_insert(dequeued(m), 0, port(0), TimeNs(2), ctr_), 0u);
  EXPECT_EQ(m->pkt_len, once.size());
  const wire::IntShim s = shim_of(test::take_bytes(m));
  EXPECT_TRUE(s.overflow());
  EXPECT_EQ(ctr_.int_full, 1u);
}

TEST_F(IntStageTest, SharedBytesHaveNoRoom) {
  const std::vector<uint8_t> in = int_bytes(256);
  rte_mbuf* m = test::make_mbuf(in);
  rte_pktmbuf_refcnt_update(m, 1);  // a flooded copy
  EXPECT_EQ(int_insert(dequeued(m), 0, port(0), TimeNs(0), ctr_), 0u);
  EXPECT_EQ(ctr_.int_no_room, 1u);
  rte_pktmbuf_free(m);
  EXPECT_EQ(test::take_bytes(m), in);
}

}  // namespace
}  // namespace sf::sw
