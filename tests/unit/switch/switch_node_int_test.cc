// INT at the switch (docs/switch.md "INT", int_stage.h): a frame of an
// INT-enabled flow dequeued from an INT queue gets one correct hop record
// (B, ts, txBytes, qLen) with its lengths fixed and the sender's ICRC intact
// under the shim; a full stack is counted and flagged; frames without the
// flag, or on queues without INT, leave byte for byte as they came; shared
// (flooded) and chained frames; the INT table's errors name their path.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <vector>

#include "common/config/json_loader.h"
#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/int_shim.h"
#include "tests/support/config_errors.h"
#include "tests/support/eal_env.h"
#include "tests/support/mbuf_chain.h"
#include "tests/unit/switch/switch_node_fixture.h"

namespace sf::sw {
namespace {

using wire::IntStatus;

// Three ports (B = 100 / 400 / 100 Gb/s), hosts A on 0, B on 1, C on 2 (static FDB); `int_table` the INT table.
std::string doc(const std::string& int_table) {
  return R"({"PORT": {"Ethernet0": {"devargs": "a", "speed": 100, "mtu": 9100},
                      "Ethernet4": {"devargs": "b", "speed": 400, "mtu": 9100},
                      "Ethernet8": {"devargs": "c", "speed": 100, "mtu": 9100}},
             "FDB": {"02:00:00:00:00:0a": {"port": "Ethernet0"}, "02:00:00:00:00:0b": {"port": "Ethernet4"},
                     "02:00:00:00:00:0c": {"port": "Ethernet8"}})" +
         (int_table.empty() ? std::string() : ", \"INT\": " + int_table) + "}";
}

struct Specs : SwitchNodeFixture {
  using SwitchNodeFixture::v4;
};

// A WRITE_ONLY of `payload` bytes to `dst`, BTH INT flag set and ICRC
// recomputed (when `flag`), then an empty shim of `max_hops` (when `open`):
// what an HPCC sender puts on the wire.
std::vector<uint8_t> int_bytes(wire::MacAddr dst, size_t payload, bool flag = true, bool open = true,
                               uint8_t max_hops = wire::kIntDefaultMaxHops) {
  wire::RoceFrameSpec s = Specs::v4(dst, kHostA);
  s.ext.reth_dma_length = static_cast<uint32_t>(payload);
  std::vector<uint8_t> b = test::roce_frame_bytes(s, payload);
  if (!flag) return b;
  const wire::FrameInfo f = wire::parse_frame(std::span<const uint8_t>(b));
  EXPECT_TRUE(f.ok());
  wire::set_bth_int_flag(*const_cast<wire::Bth*>(f.bth), true);
  EXPECT_TRUE(wire::icrc_store(std::span<uint8_t>(b), f));
  if (!open) return b;
  uint32_t len = static_cast<uint32_t>(b.size());
  b.resize(len + 64);
  EXPECT_EQ(wire::int_open(b, len, wire::int_frame_ref(f), max_hops), IntStatus::kOk);
  b.resize(len);
  return b;
}

wire::IntFrameRef ref_of(const std::vector<uint8_t>& b) {
  const wire::FrameInfo f = wire::parse_frame(std::span<const uint8_t>(b));
  EXPECT_TRUE(f.ok()) << wire::to_string(f.reason);
  return wire::int_frame_ref(f);
}

class SwitchIntTest : public SwitchNodeFixture {};

// 1. A (plain, 1000 B payload), B (INT, empty shim) and C (plain) to host B
// in one burst, sent at t = 7 us: B leaves with one record: ts 7000, txBytes
// = A's bytes, qLen = C's bytes, B = 400 Gb/s; its IP / UDP lengths grew by
// 16 and the IPv4 checksum is right; stripping the shim gives back the
// sender's frame, ICRC good. A and C are untouched. Counted once.
TEST_F(SwitchIntTest, EmptyShimGetsOneCorrectRecord) {
  make(doc(R"({"Ethernet4|0-7": {"enable": "true"}})"));
  const std::vector<uint8_t> a = int_bytes(kHostB, 1000, false);
  const std::vector<uint8_t> b = int_bytes(kHostB, 512);
  const std::vector<uint8_t> c = int_bytes(kHostB, 300, false);
  rte_mbuf* burst[3] = {test::make_mbuf(a), test::make_mbuf(b), test::make_mbuf(c)};
  node_->receive(0, burst, TimeNs(0));
  const auto out = drain(1, TimeNs::from_us(7));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], a);
  EXPECT_EQ(out[2], c);
  const std::vector<uint8_t>& got = out[1];
  ASSERT_EQ(got.size(), b.size() + wire::IntHop::kSize);
  const wire::FrameInfo f = wire::parse_frame(std::span<const uint8_t>(got), wire::ParseOptions{.verify_ipv4_checksum = true});
  ASSERT_TRUE(f.ok()) << wire::to_string(f.reason);
  EXPECT_EQ(f.ipv4->total_length.value() + 14u, got.size());
  EXPECT_EQ(f.udp->length.value() + 34u, got.size());
  const wire::IntShim s = wire::int_read(got, wire::int_frame_ref(f));
  ASSERT_EQ(s.status, IntStatus::kOk);
  ASSERT_EQ(s.hops.size(), 1u);
  EXPECT_FALSE(s.overflow());
  const wire::IntHop& h = s.hops[0];
  EXPECT_EQ(h.ts_ns.value(), 7000u);
  EXPECT_EQ(h.tx_units.value(), a.size() / wire::IntHop::kTxUnitBytes);
  EXPECT_EQ(h.qlen_bytes.value(), c.size());
  EXPECT_EQ(h.rate_mbps.value(), 400'000u);
  // The receiver's view: strip, and the frame is the sender's (ICRC good).
  std::vector<uint8_t> rx = got;
  uint32_t len = static_cast<uint32_t>(rx.size());
  ASSERT_EQ(wire::int_strip(rx, len, wire::int_frame_ref(f)), IntStatus::kOk);
  rx.resize(len);
  std::vector<uint8_t> sent = b;
  uint32_t slen = static_cast<uint32_t>(sent.size());
  ASSERT_EQ(wire::int_strip(sent, slen, ref_of(sent)), IntStatus::kOk);
  sent.resize(slen);
  EXPECT_EQ(rx, sent);
  EXPECT_EQ(wire::icrc_verify(std::span<const uint8_t>(rx), wire::parse_frame(std::span<const uint8_t>(rx))),
            wire::IcrcStatus::kOk);
  const PortCounters& pc = node_->counters(1);
  EXPECT_EQ(pc.int_records, 1u);
  EXPECT_EQ(pc.int_bytes, 16u);
  EXPECT_EQ(pc.int_full + pc.int_no_room + pc.int_bad_shim, 0u);
  EXPECT_EQ(pc.tx_bytes, a.size() + got.size() + c.size());  // what went on the wire
}

// 2. Two switches in a row: the frame out of the first, fed into the second
// (same node, from port 2 to host B), carries two records, hop 0 first.
TEST_F(SwitchIntTest, SecondHopAppendsAfterTheFirst) {
  make(doc(R"({"Ethernet4|0-7": {}})"));
  rx(0, test::make_mbuf(int_bytes(kHostB, 256)), TimeNs(0));
  auto out = drain(1, TimeNs(1000));
  ASSERT_EQ(out.size(), 1u);
  rx(2, test::make_mbuf(out[0]), TimeNs(2000));
  out = drain(1, TimeNs(3000));
  ASSERT_EQ(out.size(), 1u);
  const wire::IntShim s = wire::int_read(out[0], ref_of(out[0]));
  ASSERT_EQ(s.status, IntStatus::kOk);
  ASSERT_EQ(s.hops.size(), 2u);
  EXPECT_EQ(s.hops[0].ts_ns.value(), 1000u);
  EXPECT_EQ(s.hops[1].ts_ns.value(), 3000u);
  EXPECT_EQ(node_->counters(1).int_records, 2u);
}

// 3. A full stack (max_hops 1, one record already): no record, the overflow
// flag set, counted int_full; the frame is still forwarded (same length).
TEST_F(SwitchIntTest, FullStackIsCountedAndForwarded) {
  make(doc(R"({"Ethernet4|0-7": {}})"));
  std::vector<uint8_t> b = int_bytes(kHostB, 128, true, true, 1);
  uint32_t len = static_cast<uint32_t>(b.size());
  b.resize(len + 16);
  ASSERT_EQ(wire::int_append_hop(b, len, ref_of(std::vector<uint8_t>(b.begin(), b.begin() + len)),
                                 wire::make_int_hop(1, 2, 3, 4'000'000)),
            IntStatus::kOk);
  b.resize(len);
  rx(0, test::make_mbuf(b));
  const auto out = drain(1, TimeNs::from_us(1));
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].size(), b.size());
  const wire::IntShim s = wire::int_read(out[0], ref_of(out[0]));
  ASSERT_EQ(s.status, IntStatus::kOk);
  EXPECT_EQ(s.hops.size(), 1u);
  EXPECT_TRUE(s.overflow());
  EXPECT_EQ(node_->counters(1).int_full, 1u);
  EXPECT_EQ(node_->counters(1).int_records, 0u);
  EXPECT_EQ(node_->counters(1).tx_packets, 1u);
}

// 4. Unchanged byte for byte: frames without the flag on an INT queue (a
// plain WRITE, a non-RoCE UDP-less frame), an ACK-like echo, and an INT frame
// on a queue without INT (queue 3 of port 2: INT on its other queues only).
TEST_F(SwitchIntTest, OtherFramesLeaveUnchanged) {
  make(doc(R"({"Ethernet4|0-7": {}, "Ethernet8|0-2,4-7": {}})"));
  const std::vector<uint8_t> plain = int_bytes(kHostB, 200, false);
  const std::vector<uint8_t> flag_no_shim_to_c = int_bytes(kHostC, 200);
  std::vector<uint8_t> echo = int_bytes(kHostB, 64, true, false);
  uint32_t len = static_cast<uint32_t>(echo.size());
  echo.resize(len + 64);
  const wire::IntHop hops[1] = {wire::make_int_hop(5, 6, 7, 8'000'000)};
  ASSERT_EQ(wire::int_echo(echo, len, ref_of(std::vector<uint8_t>(echo.begin(), echo.begin() + len)), hops),
            IntStatus::kOk);
  echo.resize(len);
  rx(0, test::make_mbuf(plain));
  rx(0, test::make_mbuf(echo));
  rx(0, test::make_mbuf(flag_no_shim_to_c));  // DSCP 26 -> TC 3 -> queue 3 on port 2 (no INT there)
  const auto out1 = drain(1, TimeNs::from_us(1));
  ASSERT_EQ(out1.size(), 2u);
  EXPECT_EQ(out1[0], plain);
  EXPECT_EQ(out1[1], echo);
  const auto out2 = drain(2, TimeNs::from_us(1));
  ASSERT_EQ(out2.size(), 1u);
  EXPECT_EQ(out2[0], flag_no_shim_to_c);
  for (uint16_t p = 0; p < 3; ++p) {
    const PortCounters& pc = node_->counters(p);
    EXPECT_EQ(pc.int_records + pc.int_full + pc.int_no_room + pc.int_bad_shim, 0u) << "port " << p;
  }
}

// 5. A flooded INT frame (one mbuf shared by its copies): no copy is
// written; the INT port counts int_no_room and forwards it unchanged.
TEST_F(SwitchIntTest, SharedFloodedFrameIsCountedNoRoom) {
  make(doc(R"({"Ethernet4|0-7": {}})"));
  const wire::MacAddr unknown{{0x02, 0, 0, 0, 0, 0x77}};
  const std::vector<uint8_t> b = int_bytes(unknown, 100);
  rx(0, test::make_mbuf(b));
  const auto out1 = drain(1, TimeNs::from_us(1));
  const auto out2 = drain(2, TimeNs::from_us(1));
  ASSERT_EQ(out1.size(), 1u);
  ASSERT_EQ(out2.size(), 1u);
  EXPECT_EQ(out1[0], b);
  EXPECT_EQ(out2[0], b);
  EXPECT_EQ(node_->counters(1).int_no_room, 1u);
  EXPECT_EQ(node_->counters(1).int_records, 0u);
}

// 6. A chained frame (payload over 256-byte segments) gets its record in the
// last segment; the result is the same bytes as for the flat frame.
TEST_F(SwitchIntTest, ChainedFrameGetsRecord) {
  make(doc(R"({"Ethernet4|0-7": {}})"));
  const std::vector<uint8_t> b = int_bytes(kHostB, 1500);
  rx(0, test::make_mbuf(b, 256));
  const auto chained = drain(1, TimeNs::from_us(2));
  rx(0, test::make_mbuf(b));
  const auto flat = drain(1, TimeNs::from_us(2));
  ASSERT_EQ(chained.size(), 1u);
  ASSERT_EQ(flat.size(), 1u);
  EXPECT_EQ(chained[0].size(), b.size() + 16);
  // Same record but txBytes (the first frame was sent before the second).
  const wire::IntShim s = wire::int_read(chained[0], ref_of(chained[0]));
  ASSERT_EQ(s.status, IntStatus::kOk);
  ASSERT_EQ(s.hops.size(), 1u);
  EXPECT_EQ(s.hops[0].ts_ns.value(), 2000u);
  const size_t rec = chained[0].size() - 4 - 4 - 16;
  EXPECT_TRUE(std::equal(chained[0].begin(), chained[0].begin() + rec, flat[0].begin()));
  EXPECT_EQ(node_->counters(1).int_records, 2u);
}

// 7. Bad INT tables are refused naming the JSON path.
TEST(SwitchIntConfig, BadValuesNamePath) {
  auto err = [](const std::string& t) {
    return test::config_error_of([&] { parse_switch_config(config::parse_text(doc(t))); });
  };
  EXPECT_EQ(err(R"({"Ethernet9|3": {}})"), "INT.Ethernet9|3: unknown port \"Ethernet9\" (not in PORT)");
  EXPECT_EQ(err(R"({"Ethernet4|8": {}})"), "INT.Ethernet4|8: bad queue \"8\" (want 0..7, e.g. 3 or 3-4)");
  EXPECT_EQ(err(R"({"Ethernet4|3": {"enable": "yes"}})"), "INT.Ethernet4|3.enable: expected true or false, got \"yes\"");
  EXPECT_NE(err(R"({"Ethernet4|3": {"max_hops": 3}})").find("INT.Ethernet4|3"), std::string::npos);
  EXPECT_NE(err(R"({"Ethernet4": {}})").find("INT.Ethernet4"), std::string::npos);
  const SwitchConfig c = parse_switch_config(
      config::parse_text(doc(R"({"Ethernet0,Ethernet4|0-7": {}, "Ethernet4|5": {"enable": false}})")));
  ASSERT_EQ(c.int_queues.size(), 3u);
  EXPECT_EQ(c.int_queues[0], 0xFF);
  EXPECT_EQ(c.int_queues[1], 0xDF);
  EXPECT_EQ(c.int_queues[2], 0);
}

}  // namespace
}  // namespace sf::sw
