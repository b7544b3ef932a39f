// The switch pipeline on real mbufs: forwarding (L2 learn/flood, LPM + ECMP,
// SRv6 uN), classification, ECN marking, MMU drops with reasons, pause mask,
// and buffer accounting back to zero after draining.
#include "switch/pipeline/switch_node.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <map>
#include <vector>

#include "common/config/json_loader.h"
#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/srv6.h"
#include "tests/support/eal_env.h"
#include "tests/unit/switch/switch_node_fixture.h"

namespace sf::sw {
namespace {

using wire::MacAddr;

std::string three_ports(const std::string& extra) {
  return R"({"PORT": {"Ethernet0": {"devargs": "a", "speed": 100, "mtu": 9100},
                      "Ethernet4": {"devargs": "b", "speed": 100, "mtu": 9100},
                      "Ethernet8": {"devargs": "c", "speed": 100, "mtu": 1500}})" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

using SwitchNodeTest = SwitchNodeFixture;

// 1. Unknown unicast floods to every other port; the reply is learned and
// goes to one port only.
TEST_F(SwitchNodeTest, L2FloodThenLearn) {
  make(three_ports(""));
  rx(0, frame(v4(kHostB, kHostA)));
  EXPECT_EQ(drain(0).size(), 0u);
  EXPECT_EQ(drain(1).size(), 1u);
  EXPECT_EQ(drain(2).size(), 1u);
  EXPECT_EQ(node_->counters(0).flooded, 1u);
  rx(1, frame(v4(kHostA, kHostB)));
  EXPECT_EQ(drain(0).size(), 1u);
  EXPECT_EQ(drain(2).size(), 0u);
  EXPECT_EQ(node_->fdb().lookup(kHostB.bytes, kDefaultVlan), 1);
  // A frame to a host learned on the ingress port is a hairpin drop.
  rx(1, frame(v4(kHostB, kHostC)));
  EXPECT_EQ(node_->counters(1).drops[static_cast<size_t>(DropCause::kHairpin)], 1u);
}

// 1b. Untagged and priority-tagged (VID 0) frames belong to VLAN 1 (every
// port's PVID): a static `Vlan1|MAC` entry and a bare MAC entry both match
// them; a `Vlan10|MAC` entry matches only frames tagged 10, and VLAN 10 does
// not see VLAN 1's entries.
TEST_F(SwitchNodeTest, UntaggedFramesAreVlan1) {
  make(three_ports(R"("FDB": {"Vlan1|02:00:00:00:00:0b": {"port": "Ethernet4"},
                             "02:00:00:00:00:0c": {"port": "Ethernet8"},
                             "Vlan10|02:00:00:00:00:0a": {"port": "Ethernet0"}})"));
  auto tagged = [](wire::RoceFrameSpec s, uint16_t vid) {
    s.l2.vlan = wire::VlanSpec{3, false, vid};
    return s;
  };
  rx(0, frame(v4(kHostB, kHostA)));  // untagged, to Vlan1|B
  EXPECT_EQ(drain(1).size(), 1u);
  EXPECT_EQ(drain(2).size(), 0u);
  rx(0, frame(v4(kHostC, kHostA)));  // untagged, to the bare-MAC entry C
  EXPECT_EQ(drain(1).size(), 0u);
  EXPECT_EQ(drain(2).size(), 1u);
  rx(0, frame(tagged(v4(kHostB, kHostA), 0)));  // priority-tagged: VLAN 1 too
  EXPECT_EQ(drain(1).size(), 1u);
  EXPECT_EQ(drain(2).size(), 0u);
  EXPECT_EQ(node_->counters(0).flooded, 0u);
  rx(2, frame(tagged(v4(kHostA, kHostC), 10)));  // VLAN 10, to Vlan10|A
  EXPECT_EQ(drain(0).size(), 1u);
  EXPECT_EQ(drain(1).size(), 0u);
  EXPECT_EQ(node_->counters(2).flooded, 0u);
  rx(2, frame(tagged(v4(kHostB, kHostC), 10)));  // VLAN 10 does not know B: flooded
  EXPECT_EQ(drain(0).size(), 1u);
  EXPECT_EQ(drain(1).size(), 1u);
  EXPECT_EQ(node_->counters(2).flooded, 1u);
  // What untagged frames taught the FDB is VLAN 1's.
  EXPECT_EQ(node_->fdb().lookup(kHostA.bytes, kDefaultVlan), 0);
  EXPECT_FALSE(node_->fdb().lookup(kHostA.bytes, 0).has_value());
}

constexpr const char* kRoutes = R"(
  "NEIGH": {"Ethernet4|10.0.1.1": {"neigh": "02:00:00:00:01:01"},
            "Ethernet8|10.0.2.1": {"neigh": "02:00:00:00:02:01"}},
  "STATIC_ROUTE": {"10.1.0.0/16": {"nexthop": "10.0.1.1,10.0.2.1", "ifname": "Ethernet4,Ethernet8"},
                   "10.9.0.0/16": {"nexthop": "10.0.1.1", "ifname": "Ethernet4"}})";

// 2. Routed IPv4: MACs rewritten, TTL decremented, checksum still valid, ICRC
// still valid (TTL is masked out of it).
TEST_F(SwitchNodeTest, RoutedIpv4Rewrite) {
  make(three_ports(kRoutes));
  auto s = v4(MacAddr{kRouterMac}, kHostA);
  std::get<wire::Ipv4Spec>(s.l3).dst.bytes = {10, 9, 0, 7};
  rx(0, frame(s));
  const auto out = drain(1);
  ASSERT_EQ(out.size(), 1u);
  const wire::FrameInfo f = wire::parse_frame(out[0]);
  ASSERT_TRUE(f.ok()) << wire::to_string(f.reason);
  EXPECT_EQ(f.ipv4->ttl, 63);
  EXPECT_EQ(f.eth->dst.bytes, (std::array<uint8_t, 6>{0x02, 0, 0, 0, 1, 1}));
  EXPECT_EQ(f.eth->src.bytes, kRouterMac);
  EXPECT_EQ(node_->counters(0).routed, 1u);
  // No route and TTL 1 are counted drops.
  std::get<wire::Ipv4Spec>(s.l3).dst.bytes = {11, 0, 0, 1};
  rx(0, frame(s));
  std::get<wire::Ipv4Spec>(s.l3).dst.bytes = {10, 9, 0, 1};
  std::get<wire::Ipv4Spec>(s.l3).ttl = 1;
  rx(0, frame(s));
  EXPECT_EQ(node_->counters(0).drops[static_cast<size_t>(DropCause::kNoRoute)], 1u);
  EXPECT_EQ(node_->counters(0).drops[static_cast<size_t>(DropCause::kTtlExpired)], 1u);
}

// 3. ECMP through the pipeline: flows differing only in UDP source port
// spread over both members within 10%.
TEST_F(SwitchNodeTest, EcmpSpreadsFlows) {
  make(three_ports(kRoutes));
  const int flows = 2000;
  for (int i = 0; i < flows; ++i) {
    auto s = v4(MacAddr{kRouterMac}, kHostA, 5);
    s.udp_src_port = static_cast<uint16_t>(0xC000 + i);
    rx(0, frame(s));
    if (i % 500 == 499) {
      drain(1);
      drain(2);
    }
  }
  const double a = static_cast<double>(node_->counters(1).tx_packets);
  const double b = static_cast<double>(node_->counters(2).tx_packets);
  EXPECT_EQ(a + b, flows);
  EXPECT_NEAR(a, flows / 2.0, flows / 2.0 * 0.1);
}

// 4. SRv6 uN: our uSID is consumed (shift left 16) and the next one picks the port.
TEST_F(SwitchNodeTest, Srv6UsidShiftAndForward) {
  make(three_ports(R"("SRV6": {"locator_block": "fcbb:bbbb::/32", "usid": "100",
      "next": {"200": {"port": "Ethernet8", "mac": "02:00:00:00:02:02"}}})"));
  wire::RoceFrameSpec s = v4(MacAddr{kRouterMac}, kHostA);
  wire::Srv6Spec sr;
  const uint8_t block[4] = {0xfc, 0xbb, 0xbb, 0xbb};
  const uint16_t usids[3] = {0x100, 0x200, 0x300};
  ASSERT_TRUE(wire::make_usid_address(sr.outer.dst, block, usids));
  sr.inner.dst.bytes[15] = 9;
  s.l3 = sr;
  rx(0, frame(s));
  const auto out = drain(2);
  ASSERT_EQ(out.size(), 1u);
  const wire::FrameInfo f = wire::parse_frame(out[0]);
  ASSERT_NE(f.outer_ipv6, nullptr);
  EXPECT_EQ(wire::active_usid(f.outer_ipv6->dst), 0x200);
  EXPECT_EQ(f.outer_ipv6->dst.bytes[6], 0x03);  // 0x300 moved up
  EXPECT_EQ(f.outer_ipv6->hop_limit, 63);
  // An unknown next uSID is a counted no-route drop.
  const uint16_t bad[2] = {0x100, 0x999};
  ASSERT_TRUE(wire::make_usid_address(sr.outer.dst, block, bad));
  s.l3 = sr;
  rx(0, frame(s));
  EXPECT_EQ(node_->counters(0).drops[static_cast<size_t>(DropCause::kNoRoute)], 1u);
}

constexpr const char* kEcnQueue = R"(
  "WRED_PROFILE": {"W": {"ecn": "ecn_all", "green_min_threshold": "4000", "green_max_threshold": "8000",
                         "green_drop_probability": "20"}},
  "QUEUE": {"Ethernet8|3": {"wred_profile": "W"}})";

// 5. ECN: while the queue is above Kmax every ECT packet is marked CE (IPv4
// checksum kept valid); below Kmin none is; non-ECT packets are never marked.
TEST_F(SwitchNodeTest, EcnMarksOnlyEctAboveThreshold) {
  make(three_ports(kEcnQueue));
  rx(2, frame(v4(kHostA, kHostC)));  // host C is learned on port 2
  drain(0);
  drain(1);
  // Host C lives on port 2; 40 frames of ~470 B from port 0 build the queue.
  for (int i = 0; i < 40; ++i) rx(0, frame(v4(kHostC, kHostA, 2, 26, i % 2 ? wire::Ecn::kEct0 : wire::Ecn::kNotEct), 400));
  const auto out = drain(2);
  ASSERT_EQ(out.size(), 40u);
  uint64_t queued = 0;
  int marked = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const wire::FrameInfo f = wire::parse_frame(out[i]);
    ASSERT_TRUE(f.ok()) << i << " " << wire::to_string(f.reason);
    const bool ect_sent = i % 2 == 1;
    if (!ect_sent) {
      EXPECT_EQ(f.ipv4->ecn(), wire::Ecn::kNotEct);
    } else if (queued >= 8000) {
      EXPECT_EQ(f.ipv4->ecn(), wire::Ecn::kCe) << i;
    } else if (queued <= 4000) {
      EXPECT_EQ(f.ipv4->ecn(), wire::Ecn::kEct0) << i;
    }
    marked += f.ipv4->ecn() == wire::Ecn::kCe;
    queued += out[i].size();
  }
  EXPECT_EQ(node_->counters(2).queues[3].ecn_marked, static_cast<uint64_t>(marked));
  EXPECT_GT(marked, 5);
}

// 6. MMU: a small static egress threshold drops with its reason; after
// draining every cell is back.
TEST_F(SwitchNodeTest, MmuDropsCountedAndNoLeak) {
  make(three_ports(R"(
    "BUFFER_POOL": {"ip": {"type": "ingress", "mode": "dynamic", "size": "1MiB"},
                    "ep": {"type": "egress", "mode": "static", "size": "1MiB"}},
    "BUFFER_PROFILE": {"small": {"pool": "ep", "size": "0", "static_th": "2048"},
                       "in": {"pool": "ip", "size": "0", "dynamic_th": "0"}},
    "BUFFER_QUEUE": {"Ethernet8|3": {"profile": "small"}})"));
  rx(2, frame(v4(kHostA, kHostC)));
  drain(0);
  drain(1);
  for (int i = 0; i < 20; ++i) rx(0, frame(v4(kHostC, kHostA), 200));
  const PortCounters& c = node_->counters(0);
  EXPECT_GT(c.drops[static_cast<size_t>(DropCause::kEgressLimit)], 0u);
  EXPECT_EQ(c.dropped, c.drops[static_cast<size_t>(DropCause::kEgressLimit)]);
  const size_t sent = drain(2).size();
  EXPECT_EQ(sent + c.dropped, 20u);
  EXPECT_EQ(node_->mmu().total_used(), 0u);
}

// 7. Bad frames: oversize for the port MTU, truncated IP, runt: counted drops.
TEST_F(SwitchNodeTest, BadFramesAreCountedDrops) {
  make(three_ports(""));
  rx(2, frame(v4(kHostB, kHostC), 2000));  // port 2 has MTU 1500
  EXPECT_EQ(node_->counters(2).drops[static_cast<size_t>(DropCause::kOversize)], 1u);
  std::vector<uint8_t> buf(200);
  auto r = wire::build_roce_frame(buf, v4(kHostB, kHostA), std::vector<uint8_t>(64, 1));
  ASSERT_TRUE(r.ok());
  buf.resize(r.frame_bytes - 30);  // IP total length now runs past the frame
  rx(0, test::make_mbuf(buf));
  const uint8_t runt[10] = {};
  rx(0, test::make_mbuf(runt));
  EXPECT_EQ(node_->counters(0).drops[static_cast<size_t>(DropCause::kMalformed)], 2u);
  EXPECT_EQ(drain(1).size(), 0u);
}

// 8. A paused queue is skipped; other queues still go; unpausing releases it.
TEST_F(SwitchNodeTest, PausedQueueSkipped) {
  make(three_ports(""));
  rx(2, frame(v4(kHostA, kHostC)));
  drain(0);
  drain(1);
  rx(0, frame(v4(kHostC, kHostA, 2, 26)));  // DSCP 26 -> TC 3
  rx(0, frame(v4(kHostC, kHostA, 2, 8)));   // DSCP 8 -> TC 1
  node_->set_paused(2, 1u << 3);
  auto out = drain(2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(wire::parse_frame(out[0]).ipv4->dscp(), 8);
  node_->set_paused(2, 0);
  out = drain(2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(wire::parse_frame(out[0]).ipv4->dscp(), 26);
}

// 9. Multi-segment frames (memif delivers 4 KiB as 2 KiB segments) forward intact.
TEST_F(SwitchNodeTest, MultiSegmentFramesForward) {
  make(three_ports(""));
  rx(1, frame(v4(kHostA, kHostB)));
  drain(0);
  drain(2);
  std::vector<uint8_t> buf(9300);
  const auto r = wire::build_roce_frame(buf, v4(kHostB, kHostA), std::vector<uint8_t>(4096, 7));
  ASSERT_TRUE(r.ok());
  buf.resize(r.frame_bytes);
  rx(0, test::make_mbuf(buf, 2048));
  const auto out = drain(1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], buf);
}

}  // namespace
}  // namespace sf::sw

namespace sf::sw {
namespace {

// Lossless PG 3 with headroom; egress queue 3 either dynamic with a tiny alpha
// (the seed-000 drift) or static and large; WRED Kmin 8 KB on queue 3.
std::string lossless_doc(bool drift) {
  const std::string eg_pool = drift ? R"({"type": "egress", "mode": "dynamic", "size": "1MiB"})"
                                    : R"({"type": "egress", "mode": "static", "size": "1MiB"})";
  const std::string eg_prof = drift ? R"({"pool": "ep", "size": "0", "dynamic_th": "-7"})"
                                    : R"({"pool": "ep", "size": "0", "static_th": "1MiB"})";
  return R"({"PORT": {"Ethernet0": {"devargs": "a", "speed": 100}, "Ethernet4": {"devargs": "b", "speed": 100},
                      "Ethernet8": {"devargs": "c", "speed": 100}},
    "BUFFER_POOL": {"ip": {"type": "ingress", "mode": "static", "size": "1MiB"}, "ep": )" + eg_pool + R"(},
    "BUFFER_PROFILE": {"pg3": {"pool": "ip", "size": "0", "static_th": "200000", "xoff": "100000"},
                       "q3": )" + eg_prof + R"(},
    "BUFFER_PG": {"Ethernet0,Ethernet4,Ethernet8|3": {"profile": "pg3"}},
    "BUFFER_QUEUE": {"Ethernet0,Ethernet4,Ethernet8|3": {"profile": "q3"}},
    "PORT_QOS_MAP": {"global": {"pfc_enable": "3"}},
    "WRED_PROFILE": {"W": {"ecn": "ecn_all", "green_min_threshold": "8000", "green_max_threshold": "9000",
                           "green_drop_probability": "100"}},
    "QUEUE": {"Ethernet8|3": {"wred_profile": "W"}}})";
}

// 10. Seed-000 drift at unit level: two senders into one port. With the dynamic
// egress profile the queue is capped below Kmin (alpha x free < 8 KB), the
// excess waits at ingress, and nothing is marked although more than Kmin is
// buffered for that port; with the static profile the queue grows past Kmin
// and packets are marked. Lossless either way: every packet is delivered.
TEST_F(SwitchNodeTest, DynamicThresholdDriftSuppressesMarking) {
  for (bool drift : {true, false}) {
    make(lossless_doc(drift));
    rx(2, frame(v4(kHostA, kHostC)));
    drain(0);
    drain(1);
    const int per_sender = 60;
    for (int i = 0; i < per_sender; ++i) {
      rx(0, frame(v4(kHostC, kHostA), 400));
      rx(1, frame(v4(kHostC, kHostB), 400));
    }
    const uint64_t buffered = node_->mmu().pg_use(0, 3).used + node_->mmu().pg_use(1, 3).used;
    EXPECT_GT(buffered * node_->mmu().cell_bytes(), 8000u * 2) << "drift=" << drift;
    if (drift) {
      EXPECT_LT(node_->queue_bytes(2, 3), 8000u);
      EXPECT_GT(node_->held_packets(0, 3) + node_->held_packets(1, 3), 0u);
    }
    const size_t delivered = drain(2).size();
    EXPECT_EQ(delivered, 2u * per_sender) << "drift=" << drift;
    const uint64_t marked = node_->counters(2).queues[3].ecn_marked;
    if (drift) {
      EXPECT_EQ(marked, 0u);
    } else {
      EXPECT_GT(marked, 10u);
    }
    EXPECT_EQ(node_->counters(0).dropped + node_->counters(1).dropped, 0u);
    EXPECT_EQ(node_->mmu().total_used(), 0u);
  }
}

}  // namespace
}  // namespace sf::sw

namespace sf::sw {
namespace {

// 11. A lossless packet that could never fit its egress queue (no buffer
// profile, or larger than the queue's largest limit) is dropped with its
// reason, never held: holding it would block its PG forever.
TEST_F(SwitchNodeTest, LosslessNeverHeldWhenItCouldNeverFit) {
  std::string doc = lossless_doc(true);
  const std::string key = R"("Ethernet0,Ethernet4,Ethernet8|3": {"profile": "q3"}})";
  doc.replace(doc.find(key), key.size(),
              R"("Ethernet0,Ethernet4|3": {"profile": "q3"}, "Ethernet8|3": {"profile": "NULL"}})");
  make(doc);
  rx(2, frame(v4(kHostA, kHostC)));
  drain(0);
  drain(1);
  rx(0, frame(v4(kHostC, kHostA), 400));
  EXPECT_EQ(node_->held_packets(0, 3), 0u);
  EXPECT_EQ(node_->counters(0).drops[static_cast<size_t>(DropCause::kNoBuffer)], 1u);
  EXPECT_EQ(node_->mmu().total_used(), 0u);

  // dynamic_th -7 on a 1 MiB pool caps the queue at 8 KiB: a 9 KB frame never fits.
  make(lossless_doc(true));
  rx(2, frame(v4(kHostA, kHostC)));
  drain(0);
  drain(1);
  rx(0, frame(v4(kHostC, kHostA), 8500));
  EXPECT_EQ(node_->held_packets(0, 3), 0u);
  EXPECT_EQ(node_->counters(0).drops[static_cast<size_t>(DropCause::kEgressLimit)], 1u);
  EXPECT_EQ(node_->mmu().total_used(), 0u);
}

}  // namespace
}  // namespace sf::sw

namespace sf::sw {
namespace {

// 12. Received PFC pauses the queue of its priority for quanta x 512 bit times
// at the port speed (100G: 5.12 ns each); XON resumes; a frame to another DA or
// for a priority without pfc_enable is ignored.
TEST_F(SwitchNodeTest, ReceivedPfcPausesItsQueue) {
  make(lossless_doc(false));
  rx(2, frame(v4(kHostA, kHostC)));
  drain(0);
  drain(1);
  rte_mbuf* b[8];
  auto push = [&](uint8_t dscp) {
    rte_mbuf* m = frame(v4(kHostC, kHostA, 2, dscp));
    rte_mbuf* one[1] = {m};
    node_->receive(0, one, TimeNs(0));
  };
  rte_mbuf* pf = test::make_mbuf(pfc_bytes(1u << 3, 1000));
  rte_mbuf* one[1] = {pf};
  node_->receive(2, one, TimeNs(1000));          // pause prio 3 until 1000 + 5120 ns
  push(26);                                      // queue 3
  push(8);                                       // queue 1
  uint16_t n = node_->transmit(2, b, TimeNs(2000));
  ASSERT_EQ(n, 1u);                              // only queue 1 went
  EXPECT_EQ(wire::parse_frame({rte_pktmbuf_mtod(b[0], uint8_t*), b[0]->data_len}).ipv4->dscp(), 8);
  rte_pktmbuf_free(b[0]);
  EXPECT_EQ(node_->paused(2), 1u << 3);
  EXPECT_EQ(node_->next_wakeup(TimeNs(2000)), TimeNs(6120));
  EXPECT_EQ(node_->transmit(2, b, TimeNs(6119)), 0u);
  ASSERT_EQ(node_->transmit(2, b, TimeNs(6120)), 1u);
  rte_pktmbuf_free(b[0]);
  EXPECT_EQ(node_->pfc_rx(2).counters().pause_frames[3], 1u);
  EXPECT_EQ(node_->pfc_rx(2).counters().pause_duration[3], TimeNs(5120));

  // Wrong DA, or a priority without PFC: not honoured.
  rte_mbuf* bad1 = test::make_mbuf(pfc_bytes(1u << 3, 0xFFFF, false));
  rte_mbuf* bad2 = test::make_mbuf(pfc_bytes(1u << 1, 0xFFFF));
  one[0] = bad1;
  node_->receive(2, one, TimeNs(7000));
  one[0] = bad2;
  node_->receive(2, one, TimeNs(7000));
  EXPECT_EQ(node_->paused(2), 0u);
  // XON (time 0) resumes at once.
  one[0] = test::make_mbuf(pfc_bytes(1u << 3, 0xFFFF));
  node_->receive(2, one, TimeNs(8000));
  EXPECT_EQ(node_->paused(2), 1u << 3);
  one[0] = test::make_mbuf(pfc_bytes(1u << 3, 0));
  node_->receive(2, one, TimeNs(9000));
  EXPECT_EQ(node_->paused(2), 0u);
}

// 13. PFC generation: when lossless PG 3 of port 0 exhausts its shared limit
// (200 KB static) the switch sends port 0's peer an XOFF for priority 3 ahead of
// any data; once the PG drains, an XON (time 0).
TEST_F(SwitchNodeTest, CongestedLosslessPgSendsXoffThenXon) {
  make(lossless_doc(false));
  rx(2, frame(v4(kHostA, kHostC)));
  drain(0);
  drain(1);
  rte_mbuf* b[32];
  // 250 KB toward port 2, which does not transmit yet.
  for (int i = 0; i < 250; ++i) rx(0, frame(v4(kHostC, kHostA), 930));
  EXPECT_TRUE(node_->pfc_tx(0).xoff(3));
  EXPECT_GT(node_->mmu().pg_use(0, 3).hdrm, 0u);
  ASSERT_EQ(node_->transmit(0, b, TimeNs(10)), 1u);
  wire::FrameInfo f = wire::parse_frame({rte_pktmbuf_mtod(b[0], uint8_t*), b[0]->data_len});
  ASSERT_EQ(f.kind, wire::FrameKind::kMacControl);
  ASSERT_NE(f.pfc, nullptr);
  EXPECT_TRUE(f.mac_control_dst_ok);
  EXPECT_EQ(f.pfc->enabled_mask(), 1u << 3);
  EXPECT_EQ(f.pfc->time_quanta[3].value(), 0xFFFF);
  rte_pktmbuf_free(b[0]);
  EXPECT_EQ(node_->transmit(0, b, TimeNs(20)), 0u);  // nothing more owed yet
  // Port 2 drains everything: the PG empties and an XON is owed to port 0.
  drain(2);
  EXPECT_FALSE(node_->pfc_tx(0).xoff(3));
  ASSERT_EQ(node_->transmit(0, b, TimeNs(30)), 1u);
  f = wire::parse_frame({rte_pktmbuf_mtod(b[0], uint8_t*), b[0]->data_len});
  ASSERT_NE(f.pfc, nullptr);
  EXPECT_EQ(f.pfc->time_quanta[3].value(), 0);
  rte_pktmbuf_free(b[0]);
  EXPECT_EQ(node_->counters(0).tx_pfc_frames, 2u);
  EXPECT_EQ(node_->counters(0).drops[static_cast<size_t>(DropCause::kHeadroomOverflow)], 0u);
}

}  // namespace
}  // namespace sf::sw
