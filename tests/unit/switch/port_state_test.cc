// Port state of the switch (docs/switch.md "Port state"): PORT.admin_status
// honoured, link down / admin down ports left out of flooding and ECMP and
// their queues flushed as counted link_down drops with the cells back in the
// pool, blackhole and random loss knobs, reset (reboot), requests from
// another thread applied by advance(), and the same across shards.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "switch/pipeline/sharded_switch.h"
#include "switch/pipeline/switch_node.h"
#include "tests/unit/switch/switch_node_fixture.h"

namespace sf::sw {
namespace {

using wire::MacAddr;

std::string ports(const std::string& eth8_extra = "", const std::string& extra = "") {
  return R"({"PORT": {"Ethernet0": {"devargs": "a", "speed": 100},
                      "Ethernet4": {"devargs": "b", "speed": 100},
                      "Ethernet8": {"devargs": "c", "speed": 100)" + eth8_extra + R"(}})" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

constexpr const char* kEcmp = R"(
  "NEIGH": {"Ethernet4|10.0.1.1": {"neigh": "02:00:00:00:01:01"},
            "Ethernet8|10.0.2.1": {"neigh": "02:00:00:00:02:01"}},
  "STATIC_ROUTE": {"10.1.0.0/16": {"nexthop": "10.0.1.1,10.0.2.1", "ifname": "Ethernet4,Ethernet8"}})";

wire::RoceFrameSpec spec_v4(MacAddr dst, MacAddr src) {
  wire::RoceFrameSpec s;
  s.l2 = {dst, src, std::nullopt};
  wire::Ipv4Spec ip;
  ip.src.bytes = {10, 0, 0, 1};
  ip.dst.bytes = {10, 1, 0, 2};
  ip.dscp = 26;
  s.l3 = ip;
  s.bth.opcode = wire::Opcode::kRcWriteOnly;
  s.ext.reth_dma_length = 64;
  return s;
}

size_t cause(const PortCounters& c, DropCause d) { return c.drops[static_cast<size_t>(d)]; }

class PortStateTest : public SwitchNodeFixture {
 protected:
  // Every copy the switch made is transmitted or a counted drop.
  void expect_conserved(size_t copies) {
    uint64_t dropped = 0;
    for (PortId p = 0; p < node_->num_ports(); ++p) dropped += node_->counters(p).dropped;
    EXPECT_EQ(copies, dropped + tx_total());
  }
  uint64_t tx_total() const {
    uint64_t t = 0;
    for (PortId p = 0; p < node_->num_ports(); ++p) t += node_->counters(p).tx_packets;
    return t;
  }
};

// PORT.admin_status "down": the port is down from the start; a flood skips
// it; what arrives on it is a counted port_down drop.
TEST_F(PortStateTest, AdminStatusDownFromConfig) {
  make(ports(R"(, "admin_status": "down")"));
  EXPECT_TRUE(node_->port_oper_up(0));
  EXPECT_FALSE(node_->port_oper_up(2));
  EXPECT_EQ(node_->port_states().bits(2), kPortLinkUp);
  rx(0, frame(v4(kHostB, kHostA)));  // unknown unicast: flood
  EXPECT_EQ(drain(1).size(), 1u);
  EXPECT_EQ(drain(2).size(), 0u);
  EXPECT_EQ(node_->counters(2).queues[3].enqueued_packets, 0u);
  rx(2, frame(v4(kHostA, kHostC)));
  EXPECT_EQ(cause(node_->counters(2), DropCause::kPortDown), 1u);
  EXPECT_EQ(drain(0).size(), 0u);
  EXPECT_FALSE(node_->fdb().lookup(kHostC.bytes, kDefaultVlan).has_value());  // nothing learned from a down port
  EXPECT_EQ(node_->counters(2).dropped_mac_control, 0u);
  // A PFC frame on the down port: a port_down drop too, and counted apart as
  // MAC control (not data: the lab's byte accounts leave it out).
  rx(2, test::make_mbuf(pfc_bytes(0x08, 100)));
  EXPECT_EQ(cause(node_->counters(2), DropCause::kPortDown), 2u);
  EXPECT_EQ(node_->counters(2).dropped, 2u);
  EXPECT_EQ(node_->counters(2).dropped_mac_control, 1u);
  EXPECT_EQ(node_->counters(2).rx_mac_control, 0u);  // the lossless layer never saw it
  // Admin up: it takes part again.
  node_->set_port_admin(2, true, TimeNs(10));
  rx(0, frame(v4(kHostB, kHostA)));
  EXPECT_EQ(drain(1).size(), 1u);
  EXPECT_EQ(drain(2).size(), 1u);
  EXPECT_EQ(node_->mmu().total_used(), 0u);
}

// Link down with packets queued: the queue is flushed (link_down, charged to
// the ingress port and the egress queue), every cell back; unicast to it is
// then port_down, floods skip it; link up restores it.
TEST_F(PortStateTest, LinkDownFlushesQueuesAndCellsReturn) {
  make(ports());
  rx(2, frame(v4(kHostA, kHostC)));  // learn C on port 2
  drain(0);
  drain(1);
  for (int i = 0; i < 10; ++i) rx(0, frame(v4(kHostC, kHostA), 1000));
  EXPECT_EQ(node_->queue_packets(2, 3), 10u);
  EXPECT_GT(node_->mmu().total_used(), 0u);
  node_->set_port_link(2, false, TimeNs(100));
  EXPECT_FALSE(node_->port_oper_up(2));
  EXPECT_EQ(node_->queue_packets(2, 3), 0u);
  EXPECT_EQ(node_->mmu().total_used(), 0u);
  EXPECT_EQ(cause(node_->counters(0), DropCause::kLinkDown), 10u);
  EXPECT_EQ(node_->counters(2).queues[3].dropped, 10u);
  EXPECT_EQ(node_->counters(2).down_events, 1u);
  EXPECT_EQ(node_->transmit(2, std::span<rte_mbuf*>(), TimeNs(100)), 0u);
  rx(0, frame(v4(kHostC, kHostA)), TimeNs(200));  // FDB still says port 2
  EXPECT_EQ(cause(node_->counters(0), DropCause::kPortDown), 1u);
  rx(0, frame(v4(kHostB, kHostA)), TimeNs(200));  // flood: port 1 only
  EXPECT_EQ(drain(1, TimeNs(200)).size(), 1u);
  EXPECT_EQ(drain(2, TimeNs(200)).size(), 0u);
  node_->set_port_link(2, true, TimeNs(300));
  EXPECT_TRUE(node_->port_oper_up(2));
  rx(0, frame(v4(kHostC, kHostA)), TimeNs(300));
  EXPECT_EQ(drain(2, TimeNs(300)).size(), 1u);
  EXPECT_EQ(node_->mmu().total_used(), 0u);
  // Copies: the first flood 2, the 10 unicast, the port_down unicast, the
  // flood with port 2 down 1, the last unicast.
  expect_conserved(2 + 10 + 1 + 1 + 1);
}

// A flood when every other port is down: a counted port_down drop, no copy.
TEST_F(PortStateTest, FloodWithEveryOtherPortDown) {
  make(ports());
  node_->set_port_link(1, false, TimeNs(0));
  node_->set_port_admin(2, false, TimeNs(0));
  rx(0, frame(v4(kHostB, kHostA)));
  EXPECT_EQ(cause(node_->counters(0), DropCause::kPortDown), 1u);
  EXPECT_EQ(drain(1).size() + drain(2).size(), 0u);
  EXPECT_EQ(node_->counters(0).flooded, 1u);
}

// ECMP: a down member's flows move to the live one; flows of the live one
// stay where they were; every member down is a counted port_down drop.
TEST_F(PortStateTest, EcmpPicksLiveMembers) {
  make(ports("", kEcmp));
  const int flows = 400;
  auto send = [&](TimeNs now) {
    for (int i = 0; i < flows; ++i) {
      auto s = v4(MacAddr{kRouterMac}, kHostA, 5);
      s.udp_src_port = static_cast<uint16_t>(0xC000 + i);
      rx(0, frame(s), now);
      if (i % 100 == 99) {
        drain(1, now);
        drain(2, now);
      }
    }
  };
  send(TimeNs(0));
  const uint64_t on1 = node_->counters(1).tx_packets;
  EXPECT_GT(on1, 100u);
  EXPECT_GT(node_->counters(2).tx_packets, 100u);
  node_->set_port_link(2, false, TimeNs(1000));
  send(TimeNs(1000));
  EXPECT_EQ(node_->counters(1).tx_packets, on1 + flows);
  EXPECT_EQ(cause(node_->counters(0), DropCause::kPortDown), 0u);
  node_->set_port_admin(1, false, TimeNs(2000));
  send(TimeNs(2000));
  EXPECT_EQ(cause(node_->counters(0), DropCause::kPortDown), static_cast<size_t>(flows));
  EXPECT_EQ(node_->counters(1).tx_packets, on1 + flows);
  // Both back: the spread is the one before.
  node_->set_port_admin(1, true, TimeNs(3000));
  node_->set_port_link(2, true, TimeNs(3000));
  send(TimeNs(3000));
  EXPECT_EQ(node_->counters(1).tx_packets, 2 * on1 + flows);
  EXPECT_EQ(node_->mmu().total_used(), 0u);
}

// Blackhole: link up, still flooded to, but everything to or from it is a
// counted blackhole drop; off again: forwards.
TEST_F(PortStateTest, BlackholeDropsBothDirections) {
  make(ports());
  node_->set_port_blackhole(1, true);
  EXPECT_TRUE(node_->port_oper_up(1));
  rx(0, frame(v4(kHostB, kHostA)));  // flood: port 2 gets it, port 1's copy is dropped
  EXPECT_EQ(drain(1).size(), 0u);
  EXPECT_EQ(drain(2).size(), 1u);
  EXPECT_EQ(cause(node_->counters(0), DropCause::kBlackhole), 1u);
  EXPECT_EQ(node_->counters(1).queues[3].dropped, 1u);
  rx(1, frame(v4(kHostA, kHostB)));
  EXPECT_EQ(cause(node_->counters(1), DropCause::kBlackhole), 1u);
  EXPECT_EQ(node_->counters(1).rx_packets, 1u);
  EXPECT_EQ(drain(0).size(), 0u);
  node_->set_port_blackhole(1, false);
  rx(1, frame(v4(kHostA, kHostB)));
  EXPECT_EQ(drain(0).size(), 1u);
  EXPECT_EQ(node_->port_states().faulty(), 0u);
  EXPECT_EQ(node_->mmu().total_used(), 0u);
}

// Random loss: about `rate` of what leaves through the port is lost, counted;
// a bad rate is refused.
TEST_F(PortStateTest, RandomLossCounted) {
  make(ports());
  rx(1, frame(v4(kHostA, kHostB)));  // learn B on port 1
  drain(0);
  drain(2);
  node_->set_port_loss(1, 0.25);
  const int n = 2000;
  size_t out = 0;
  for (int i = 0; i < n; ++i) {
    rx(0, frame(v4(kHostB, kHostA)));
    if (i % 100 == 99) out += drain(1).size();
  }
  const size_t lost = cause(node_->counters(0), DropCause::kRandomLoss);
  EXPECT_EQ(out + lost, static_cast<size_t>(n));
  EXPECT_NEAR(static_cast<double>(lost), n * 0.25, n * 0.05);
  EXPECT_THROW(node_->set_port_loss(1, 1.5), std::invalid_argument);
  EXPECT_THROW(node_->set_port_loss(1, -0.1), std::invalid_argument);
  node_->set_port_loss(1, 0);
  EXPECT_EQ(node_->port_states().faulty(), 0u);
}

// Reset (reboot): queues and hold FIFOs flushed (link_down), learned FDB
// entries gone (floods again), static entries kept, buffer empty.
TEST_F(PortStateTest, ResetFlushesBuffersAndFdb) {
  make(ports("", R"("FDB": {"02:00:00:00:00:0c": {"port": "Ethernet8"}})"));
  rx(1, frame(v4(kHostA, kHostB)));  // learn B on 1
  drain(0);
  drain(2);
  for (int i = 0; i < 5; ++i) rx(0, frame(v4(kHostB, kHostA), 500));
  for (int i = 0; i < 3; ++i) rx(0, frame(v4(kHostC, kHostA), 500));
  EXPECT_EQ(node_->queue_packets(1, 3), 5u);
  EXPECT_EQ(node_->queue_packets(2, 3), 3u);
  EXPECT_TRUE(node_->fdb().lookup(kHostB.bytes, kDefaultVlan).has_value());
  node_->reset(TimeNs(1000));
  EXPECT_EQ(node_->queue_packets(1, 3) + node_->queue_packets(2, 3), 0u);
  EXPECT_EQ(node_->mmu().total_used(), 0u);
  EXPECT_EQ(cause(node_->counters(0), DropCause::kLinkDown), 8u);
  EXPECT_FALSE(node_->fdb().lookup(kHostB.bytes, kDefaultVlan).has_value());
  EXPECT_FALSE(node_->fdb().lookup(kHostA.bytes, kDefaultVlan).has_value());
  EXPECT_EQ(node_->fdb().lookup(kHostC.bytes, kDefaultVlan), 2);  // static
  EXPECT_TRUE(node_->port_oper_up(1));
  rx(0, frame(v4(kHostB, kHostA)), TimeNs(2000));  // unknown again: floods
  EXPECT_EQ(drain(1, TimeNs(2000)).size(), 1u);
  EXPECT_EQ(drain(2, TimeNs(2000)).size(), 1u);
}

// The link probe (sf-switch: rte_eth_link_get_nowait): a port believed
// link-down whose link came up since the last poll gets its flood copy (and
// is up from then on); a probe saying down leaves it out; at most one probe
// per port per kLinkProbeInterval.
TEST_F(PortStateTest, LinkProbeCatchesAPeerThatJustConnected) {
  make(ports());
  struct Driver {
    bool up = false;
    int probes = 0;
  } drv;
  node_->set_link_probe(
      [](void* ctx, PortId p) {
        auto* d = static_cast<Driver*>(ctx);
        ++d->probes;
        return p == 2 && d->up;
      },
      &drv);
  node_->set_port_link(2, false, TimeNs(0));
  rx(0, frame(v4(kHostB, kHostA)), TimeNs(1000));  // probe: still down
  EXPECT_EQ(drv.probes, 1);
  EXPECT_EQ(drain(2, TimeNs(1000)).size(), 0u);
  drv.up = true;
  rx(0, frame(v4(kHostB, kHostA)), TimeNs(1000 + SwitchNode::kLinkProbeInterval.ns() / 2));  // too soon to ask again
  EXPECT_EQ(drv.probes, 1);
  rx(0, frame(v4(kHostB, kHostA)), TimeNs(1000) + SwitchNode::kLinkProbeInterval);
  EXPECT_EQ(drv.probes, 2);
  EXPECT_TRUE(node_->port_oper_up(2));
  EXPECT_EQ(drain(2, TimeNs(2000)).size(), 1u);
  EXPECT_EQ(drain(1, TimeNs(2000)).size(), 3u);
  EXPECT_EQ(node_->counters(2).down_events, 1u);
}

// Requests (telemetry, the link poller) are applied by advance(), which
// next_wakeup() asks for at once.
TEST_F(PortStateTest, RequestsAppliedByAdvance) {
  make(ports());
  PortStates& req = node_->port_requests();
  EXPECT_EQ(node_->next_wakeup(TimeNs(5)) > TimeNs(5), true);
  req.request(2, PortStates::Field::kAdmin, false);
  req.request_loss(1, 0.5);
  EXPECT_TRUE(node_->port_oper_up(2));  // not yet
  EXPECT_EQ(node_->next_wakeup(TimeNs(5)), TimeNs(5));
  node_->advance(TimeNs(5));
  EXPECT_FALSE(node_->port_oper_up(2));
  EXPECT_EQ(node_->port_states().bits(1), kPortPlainUp | kPortLossy);
  EXPECT_DOUBLE_EQ(node_->port_states().loss(1), 0.5);
  EXPECT_GT(node_->next_wakeup(TimeNs(6)), TimeNs(6));
  req.request(2, PortStates::Field::kAdmin, true);
  req.request(1, PortStates::Field::kBlackhole, true);
  req.request_reset();
  node_->advance(TimeNs(7));
  EXPECT_TRUE(node_->port_oper_up(2));
  EXPECT_EQ(node_->port_states().bits(1), kPortPlainUp | kPortLossy | kPortBlackhole);
}

// Sharded (2 shards, one thread): a port of shard 1 going down leaves the
// floods of shard 0's ports and its queue (filled from shard 0) is flushed.
TEST(PortStateSharded, DownPortAcrossShards) {
  const std::string doc = R"({"PORT": {"Ethernet0": {"devargs": "a", "speed": 100}, "Ethernet4": {"devargs": "b", "speed": 100},
                      "Ethernet8": {"devargs": "c", "speed": 100}, "Ethernet12": {"devargs": "d", "speed": 100}}})";
  const SwitchConfig cfg = parse_switch_config(config::parse_text(doc));
  std::vector<std::array<uint8_t, 6>> macs(4, kRouterMac);
  ShardedSwitch sw(cfg, macs, test::mbuf_pool(), {0, 0, 1, 1});
  ShardedSwitchNode node(sw);
  auto rxf = [&](PortId p, const wire::MacAddr& dst, const wire::MacAddr& src, TimeNs now) {
    rte_mbuf* m = test::make_mbuf(test::roce_frame_bytes(spec_v4(dst, src), 64));
    node.receive(p, std::span<rte_mbuf*>(&m, 1), now);
  };
  auto drain = [&](PortId p, TimeNs now) {
    size_t n = 0;
    rte_mbuf* b[32];
    uint16_t k;
    while ((k = node.transmit(p, b, now)) > 0) {
      for (uint16_t i = 0; i < k; ++i) rte_pktmbuf_free(b[i]);
      n += k;
    }
    return n;
  };
  rxf(2, kHostA, kHostC, TimeNs(0));  // C learned on port 2 (shard 1)
  for (PortId p = 0; p < 4; ++p) drain(p, TimeNs(0));
  for (int i = 0; i < 4; ++i) rxf(0, kHostC, kHostB, TimeNs(0));
  EXPECT_EQ(sw.owner(2).queue_packets(2, 3), 4u);
  node.set_port_link(2, false, TimeNs(10));
  EXPECT_EQ(sw.owner(2).queue_packets(2, 3), 0u);
  EXPECT_FALSE(sw.shard(0).port_oper_up(2));  // shard 0 sees it too
  EXPECT_EQ(sw.counters(0).drops[static_cast<size_t>(DropCause::kLinkDown)], 4u);
  rxf(0, kHostA, kHostB, TimeNs(20));  // A unknown: the flood skips port 2
  EXPECT_EQ(drain(2, TimeNs(20)), 0u);
  EXPECT_EQ(drain(1, TimeNs(20)) + drain(3, TimeNs(20)), 2u);
  EXPECT_EQ(sw.mmu().total_used(), 0u);
  node.reset(TimeNs(30));
  EXPECT_FALSE(sw.fdb().lookup(kHostC.bytes, kDefaultVlan).has_value());
}

// A link probe by a shard that does not own the port: while the owner has
// not applied the request (its lcore stalled), the probe's "up" stands for
// the probe interval, so every flood copy in it is made (before, only the
// packet that probed got one: a loaded 2-core run lost 141 of 20,000). The
// owner takes the copies even with the link not yet applied: a packet from
// another shard makes it probe at once.
TEST(PortStateSharded, RemoteProbeHoldsUntilTheOwnerApplies) {
  const std::string doc = R"({"PORT": {"Ethernet0": {"devargs": "a", "speed": 100}, "Ethernet4": {"devargs": "b", "speed": 100},
                      "Ethernet8": {"devargs": "c", "speed": 100}, "Ethernet12": {"devargs": "d", "speed": 100}}})";
  const SwitchConfig cfg = parse_switch_config(config::parse_text(doc));
  std::vector<std::array<uint8_t, 6>> macs(4, kRouterMac);
  ShardedSwitch sw(cfg, macs, test::mbuf_pool(), {0, 0, 1, 1});
  ShardedSwitchNode node(sw);
  struct Driver {
    bool up = false;
    int probes = 0;
  } drv;
  for (uint16_t s = 0; s < 2; ++s) {
    sw.shard(s).set_link_probe(
        [](void* ctx, PortId p) {
          auto* d = static_cast<Driver*>(ctx);
          ++d->probes;
          return p != 2 || d->up;
        },
        &drv);
  }
  node.set_port_link(2, false, TimeNs(0));
  drv.up = true;  // the peer connected; nobody polled yet
  // Shard 0 alone runs: five floods within one probe interval.
  for (int i = 0; i < 5; ++i) {
    rte_mbuf* m = test::make_mbuf(test::roce_frame_bytes(spec_v4(kHostA, kHostB), 64));
    sw.shard(0).receive(0, std::span<rte_mbuf*>(&m, 1), TimeNs(1000 + 10 * i));
  }
  EXPECT_EQ(drv.probes, 1);
  EXPECT_FALSE(sw.shard(0).port_oper_up(2));  // requested, not applied
  EXPECT_EQ(sw.shard_counters(0).forwarded, 10u);  // 5 to port 2, 5 to port 3
  auto drain = [&](PortId p, TimeNs now) {
    size_t n = 0;
    rte_mbuf* b[32];
    uint16_t k;
    while ((k = node.transmit(p, b, now)) > 0) {
      for (uint16_t i = 0; i < k; ++i) rte_pktmbuf_free(b[i]);
      n += k;
    }
    return n;
  };
  sw.pump_all(TimeNs(2000));  // shard 1 runs again
  EXPECT_EQ(drain(2, TimeNs(2000)), 5u);
  EXPECT_EQ(drain(3, TimeNs(2000)), 5u);
  EXPECT_TRUE(sw.shard(1).port_oper_up(2));
  EXPECT_EQ(drain(1, TimeNs(2000)), 5u);  // shard 0's own copies
  EXPECT_EQ(sw.counters(0).dropped, 0u);
  EXPECT_EQ(sw.mmu().total_used(), 0u);
}

}  // namespace
}  // namespace sf::sw
