// The switch pipeline in credit mode (CREDIT_FC ports) on real mbufs: a
// credit port sends only with a credit of the packet's VL, stalls are timed,
// slots of packets received on a credit port are freed when they leave (or
// are dropped) and advertised once `update_threshold` are free, ahead of
// data; VL arbitration shares a port by weight; bad credit frames are counted
// and ignored. Numbered scenarios.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <vector>

#include "common/config/json_loader.h"
#include "common/wire/credit_frame.h"
#include "common/wire/frame_builder.h"
#include "switch/app/switch_stats.h"
#include "switch/pipeline/switch_node.h"
#include "tests/support/eal_env.h"

namespace sf::sw {
namespace {

using wire::MacAddr;

const MacAddr kHostA{{0x02, 0, 0, 0, 0, 0x0A}};
const MacAddr kHostB{{0x02, 0, 0, 0, 0, 0x0B}};

// Port 0 (host A) and port 1 (host B, static FDB entry), both 100G; `credit`
// is the CREDIT_FC table (may be empty).
std::string doc(const std::string& credit) {
  return R"({"PORT": {"Ethernet0": {"devargs": "a", "speed": 100, "mtu": 4000},
                      "Ethernet4": {"devargs": "b", "speed": 100, "mtu": 4000}},
             "FDB": {")" +
         std::string("02:00:00:00:00:0b") + R"(": {"port": "Ethernet4"}, "02:00:00:00:00:0a": {"port": "Ethernet0"}})" +
         (credit.empty() ? "" : ", \"CREDIT_FC\": " + credit) + "}";
}

class SwitchCreditTest : public testing::Test {
 protected:
  void make(const std::string& credit) {
    cfg_ = parse_switch_config(config::parse_text(doc(credit)));
    macs_ = {{0x02, 0x53, 0x46, 0, 0, 0}, {0x02, 0x53, 0x46, 0, 0, 1}};
    free_before_ = rte_mempool_avail_count(test::mbuf_pool());
    node_ = std::make_unique<SwitchNode>(cfg_, macs_, test::mbuf_pool());
  }
  void TearDown() override {
    node_.reset();
    EXPECT_EQ(rte_mempool_avail_count(test::mbuf_pool()), free_before_) << "mbuf leak";
  }
  // A 1 KiB WRITE from `src` to `dst` with `dscp` (TC = dscp >> 3).
  static rte_mbuf* data(MacAddr dst, MacAddr src, uint8_t dscp = 26, size_t payload = 1024) {
    wire::RoceFrameSpec s;
    s.l2 = {dst, src, std::nullopt};
    wire::Ipv4Spec ip;
    ip.src.bytes = {10, 0, 0, 1};
    ip.dst.bytes = {10, 0, 0, 2};
    ip.dscp = dscp;
    s.l3 = ip;
    s.bth.opcode = wire::Opcode::kRcWriteOnly;
    s.ext.reth_dma_length = static_cast<uint32_t>(payload);
    std::vector<uint8_t> buf(payload + 200);
    const auto r = wire::build_roce_frame(buf, s, std::vector<uint8_t>(payload, 0x5A));
    EXPECT_TRUE(r.ok());
    buf.resize(r.frame_bytes);
    return test::make_mbuf(buf);
  }
  static rte_mbuf* credit_frame(std::initializer_list<wire::CreditGrant> g) {
    std::vector<uint8_t> b(wire::kCreditFrameMaxBytes);
    b.resize(wire::build_credit_frame(b, kHostB, {g.begin(), g.size()}));
    return test::make_mbuf(b);
  }
  void rx(uint16_t port, rte_mbuf* m, TimeNs now = TimeNs(0)) {
    rte_mbuf* one[1] = {m};
    node_->receive(port, one, now);
  }
  // One transmit offer of one frame on `port`: its bytes (empty: none); freed.
  std::vector<uint8_t> tx1(uint16_t port, TimeNs now = TimeNs(0)) {
    rte_mbuf* m = nullptr;
    if (node_->transmit(port, {&m, 1}, now) == 0) return {};
    std::vector<uint8_t> b(rte_pktmbuf_mtod(m, uint8_t*), rte_pktmbuf_mtod(m, uint8_t*) + m->data_len);
    rte_pktmbuf_free(m);
    return b;
  }
  // Frames `port` sends now, until it declines.
  std::vector<std::vector<uint8_t>> drain(uint16_t port, TimeNs now = TimeNs(0)) {
    std::vector<std::vector<uint8_t>> out;
    for (auto b = tx1(port, now); !b.empty(); b = tx1(port, now)) out.push_back(std::move(b));
    return out;
  }
  static bool is_credit(const std::vector<uint8_t>& b) {
    return b.size() >= 14 && b[0] == 0x03 && b[5] == 0x00 && b[12] == 0x88 && b[13] == 0xB5;
  }

  SwitchConfig cfg_;
  std::vector<std::array<uint8_t, 6>> macs_;
  std::unique_ptr<SwitchNode> node_;
  unsigned free_before_ = 0;
};

// 1. Egress gating. Port 1 in credit mode with 2 credits (8 KiB / 4 KiB MTU).
// Three packets A -> B. Expect: two leave, the third waits (a stall from the
// offer at t=1 us); an update granting 3 in all at t=4 us releases it, and
// the stall lasted 3 us (bucket [2, 4) us).
TEST_F(SwitchCreditTest, EgressSendsOnlyWithCredit) {
  make(R"({"Ethernet4": {"mtu": 4096, "vl_buffer": 8192}})");
  ASSERT_NE(node_->credit(1), nullptr);
  EXPECT_EQ(node_->credit(0), nullptr);
  for (int i = 0; i < 3; ++i) rx(0, data(kHostB, kHostA));
  EXPECT_EQ(drain(1, TimeNs::from_us(1)).size(), 2u);
  EXPECT_EQ(node_->queue_packets(1, 3), 1u);
  EXPECT_TRUE(node_->credit(1)->sender().stalled(0));
  rx(1, credit_frame({{0, 2}}), TimeNs::from_us(2));  // stale: nothing new
  EXPECT_TRUE(drain(1, TimeNs::from_us(2)).empty());
  rx(1, credit_frame({{0, 3}}), TimeNs::from_us(4));
  EXPECT_EQ(drain(1, TimeNs::from_us(4)).size(), 1u);
  const CreditCounters c = node_->credit(1)->counters();
  EXPECT_EQ(c.credit_stalls, 1u);
  EXPECT_EQ(c.stall_histogram[2], 1u);
  EXPECT_EQ(c.stalled_time, TimeNs::from_us(3));
  EXPECT_EQ(c.rx_updates, 2u);
  EXPECT_EQ(node_->counters(1).dropped, 0u);
  // The app's report carries the same figures (PFC ports have none).
  const nlohmann::json j = port_snapshot(*node_, cfg_, 1);
  EXPECT_EQ(j["credit"]["credit_stalls"], 1u);
  EXPECT_EQ(j["credit"]["stall_histogram"][2], 1u);
  EXPECT_EQ(j["credit"]["stall_histogram_floor_us"][2], 2u);
  EXPECT_EQ(j["credit"]["stalled_us"], 3u);
  EXPECT_EQ(j["credit"]["vls"][0]["credits_available"], 0u);
  EXPECT_FALSE(port_snapshot(*node_, cfg_, 0).contains("credit"));
}

// 2. Ingress slots. Port 0 in credit mode, threshold 2. Two packets from A
// leave on port 1. Expect: the node asks to run again at once (next_wakeup =
// now), and port 0's next offer is a credit update (ahead of any data)
// granting 256 + 2 on VL 0; then nothing more is owed.
TEST_F(SwitchCreditTest, FreedSlotsAdvertisedAtThreshold) {
  make(R"({"Ethernet0": {"update_threshold": 2}})");
  rx(0, data(kHostB, kHostA));
  EXPECT_EQ(node_->credit(0)->receiver().occupied(0), 1u);
  EXPECT_EQ(drain(1).size(), 1u);
  EXPECT_TRUE(tx1(0).empty());  // 1 freed < threshold
  rx(0, data(kHostB, kHostA));
  rx(1, data(kHostA, kHostB));  // queued for port 0, behind the update
  EXPECT_EQ(drain(1).size(), 1u);
  EXPECT_EQ(node_->next_wakeup(TimeNs(7)), TimeNs(7));
  const std::vector<uint8_t> f = tx1(0);
  ASSERT_TRUE(is_credit(f));
  const wire::CreditFrameInfo fi = wire::parse_credit_frame(f);
  ASSERT_TRUE(fi.ok());
  ASSERT_EQ(fi.entries.size(), 1u);
  EXPECT_EQ(fi.entries[0].vl, 0);
  EXPECT_EQ(fi.entries[0].granted_total.value(), 256u + 2u);
  EXPECT_EQ(fi.header->version, wire::kCreditFcVersion);
  const std::vector<uint8_t> d = tx1(0);
  EXPECT_FALSE(d.empty());
  EXPECT_FALSE(is_credit(d));
  node_->advance(TimeNs(8));
  EXPECT_GT(node_->next_wakeup(TimeNs(8)), TimeNs(8));
  EXPECT_EQ(node_->credit(0)->counters().tx_updates, 1u);
  EXPECT_EQ(node_->credit(0)->receiver().occupied(0), 0u);
}

// 3. A packet received on a credit port and dropped (hairpin: B is on port 1,
// and this one came in on port 1) still frees its slot; so does an
// unclassifiable runt. Expect: threshold 1 -> an update owed per drop.
TEST_F(SwitchCreditTest, DroppedPacketsFreeTheirSlot) {
  make(R"({"Ethernet4": {}})");
  rx(1, data(kHostB, kHostA));
  EXPECT_EQ(node_->counters(1).drops[static_cast<size_t>(DropCause::kHairpin)], 1u);
  std::vector<uint8_t> f = tx1(1);
  ASSERT_TRUE(is_credit(f));
  EXPECT_EQ(wire::parse_credit_frame(f).entries[0].granted_total.value(), 257u);
  const std::vector<uint8_t> runt(10, 0xFF);
  rx(1, test::make_mbuf(runt));
  EXPECT_EQ(node_->counters(1).drops[static_cast<size_t>(DropCause::kMalformed)], 1u);
  f = tx1(1);
  ASSERT_TRUE(is_credit(f));
  EXPECT_EQ(wire::parse_credit_frame(f).entries[0].granted_total.value(), 258u);
  EXPECT_EQ(node_->credit(1)->receiver().occupied(0), 0u);
  EXPECT_EQ(node_->credit(1)->counters().rx_overrun, 0u);
}

// 4. Bad credit frames. On credit port 1: truncated, bad version, VL 9 (the
// port has VL 0 only). On port 0 (PFC mode): a good one. Expect: counted
// (malformed by reason, unknown VL, ignored), credits unchanged, no drops,
// nothing forwarded, every mbuf freed.
TEST_F(SwitchCreditTest, BadCreditFramesCountedAndIgnored) {
  make(R"({"Ethernet4": {"mtu": 4096, "vl_buffer": 4096}})");
  rx(0, data(kHostB, kHostA));
  rx(0, data(kHostB, kHostA));
  EXPECT_EQ(drain(1).size(), 1u);  // one credit
  std::vector<uint8_t> good(wire::kCreditFrameMaxBytes);
  const wire::CreditGrant g{0, 100};
  good.resize(wire::build_credit_frame(good, kHostB, {&g, 1}));
  rx(1, test::make_mbuf(std::span<const uint8_t>(good).first(16)));
  std::vector<uint8_t> bad = good;
  bad[14] = 2;
  rx(1, test::make_mbuf(bad));
  rx(1, credit_frame({{9, 100}}));
  rx(0, credit_frame({{0, 100}}));
  EXPECT_TRUE(drain(1).empty());
  EXPECT_TRUE(drain(0).empty());
  const CreditCounters c = node_->credit(1)->counters();
  EXPECT_EQ(c.rx_malformed, 2u);
  EXPECT_EQ(c.rx_malformed_by_reason[static_cast<size_t>(wire::CreditParseReason::kTruncated)], 1u);
  EXPECT_EQ(c.rx_malformed_by_reason[static_cast<size_t>(wire::CreditParseReason::kBadVersion)], 1u);
  EXPECT_EQ(c.rx_unknown_vl, 1u);
  EXPECT_EQ(node_->counters(0).rx_credit_ignored, 1u);
  EXPECT_EQ(credit_snapshot(*node_, 1)["rx_credit_malformed_by_reason"]["bad_version"], 1u);
  EXPECT_EQ(node_->counters(0).dropped + node_->counters(1).dropped, 0u);
  EXPECT_EQ(node_->queue_packets(1, 3), 1u);  // still waiting for a credit
}

// 6. Jumbo frames on a 1 KiB-MTU credit port: a 3000-byte frame takes 3
// credits (one per 1024 + 128 bytes). Port 1 has 4. Expect: the first jumbo
// leaves, the second waits (1 credit left) until an update grants 3 more;
// port 0, a credit port too, frees 3 slots per jumbo (threshold 3: one
// update per jumbo, granting 3 each).
TEST_F(SwitchCreditTest, JumboFramesTakeSeveralCredits) {
  make(R"({"Ethernet0,Ethernet4": {"mtu": 1024, "vl_buffer": 4096, "update_threshold": 3}})");
  for (int i = 0; i < 2; ++i) rx(0, data(kHostB, kHostA, 26, 2900));
  EXPECT_EQ(node_->credit(0)->receiver().occupied(0), 6u);
  EXPECT_EQ(node_->credit(0)->counters().rx_overrun, 1u);  // 6 > 4: the test sender ignored credits
  EXPECT_EQ(drain(1).size(), 1u);
  EXPECT_EQ(node_->credit(1)->sender().available(0), 1u);
  EXPECT_TRUE(node_->credit(1)->sender().stalled(0));
  std::vector<uint8_t> f = tx1(0);
  ASSERT_TRUE(is_credit(f));
  EXPECT_EQ(wire::parse_credit_frame(f).entries[0].granted_total.value(), 4u + 3u);
  rx(1, credit_frame({{0, 7}}));
  EXPECT_EQ(drain(1).size(), 1u);
  f = tx1(0);
  ASSERT_TRUE(is_credit(f));
  EXPECT_EQ(wire::parse_credit_frame(f).entries[0].granted_total.value(), 4u + 6u);
  EXPECT_EQ(node_->credit(1)->counters().tx_without_credit, 0u);
}

// 7. Other 0x88B5 frames (sf-pktio's test traffic, local experimental
// EtherType) to a station address are plain L2 traffic, on credit ports too:
// forwarded, holding a slot like any data frame. Expect: out on port 1.
TEST_F(SwitchCreditTest, Other88B5FramesAreForwarded) {
  make(R"({"Ethernet0": {}})");
  std::vector<uint8_t> f(60, 0x11);
  std::copy(kHostB.bytes.begin(), kHostB.bytes.end(), f.begin());
  std::copy(kHostA.bytes.begin(), kHostA.bytes.end(), f.begin() + 6);
  f[12] = 0x88;
  f[13] = 0xB5;
  rx(0, test::make_mbuf(f));
  const auto out = drain(1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], f);
  EXPECT_EQ(node_->credit(0)->counters().rx_malformed, 0u);
  EXPECT_EQ(node_->credit(0)->receiver().granted_total(0), 257u);
}

// 5. VL arbitration. Port 1: VL 0 (TC 1) weight 3, VL 1 (TC 3) weight 1,
// plenty of credits, 40 packets of each queued. Expect: the first 40 sent
// split 30:10 by VL, in runs of 3 and 1.
TEST_F(SwitchCreditTest, VlArbitrationByWeight) {
  make(R"({"Ethernet4": {"vls": 2, "sl_to_vl": {"3": 1}, "vl_arbitration": {"0": 3, "1": 1}}})");
  for (int i = 0; i < 40; ++i) {
    rx(0, data(kHostB, kHostA, 10));  // TC 1 -> queue 1 -> VL 0
    rx(0, data(kHostB, kHostA, 26));  // TC 3 -> queue 3 -> VL 1
  }
  std::string order;
  for (int i = 0; i < 40; ++i) {
    const std::vector<uint8_t> b = tx1(1);
    ASSERT_FALSE(b.empty());
    order += (b[15] >> 2) == 26 ? 'h' : 'l';  // IPv4 DSCP
  }
  EXPECT_EQ(std::count(order.begin(), order.end(), 'l'), 30) << order;
  EXPECT_EQ(order.substr(0, 8), "lllhlllh");
  drain(1);
}

}  // namespace
}  // namespace sf::sw
