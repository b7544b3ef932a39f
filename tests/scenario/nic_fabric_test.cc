// The NIC through the switch in virtual time: NicNodes (nic/) and a
// SwitchNode (switch/) on common/sim links.
//  1. Two hosts write 1 GiB through the switch with 1% random loss on every
//     link (both directions), every byte verified: go-back-N end to end.
//  2. One NicNode carrying 8 hosts (one process = 8 incast senders) writing
//     into one receiver through the switch, every byte verified.
//  3. IPv6-only hosts: WRITEs and READs through the switch with loss.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "common/config/json_loader.h"
#include "common/sim/simulator.h"
#include "switch/config/switch_config.h"
#include "switch/pipeline/switch_node.h"
#include "tests/scenario/scenario.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::scenario {
namespace {

using namespace sf::nic;
using namespace sf::nic::test;

std::vector<std::array<uint8_t, 6>> switch_macs(size_t n) {
  std::vector<std::array<uint8_t, 6>> m;
  for (size_t p = 0; p < n; ++p) m.push_back({0x02, 0x53, 0x46, 0x00, 0x00, static_cast<uint8_t>(p)});
  return m;
}

// 1. 64 passes of 16 x 1 MiB WRITEs (1 GiB in all) from host A to host B
//    through the switch, 1% loss on each link direction. After every pass
//    the whole 16 MiB region at B is compared with A's source pattern for
//    that pass. Expect: every WR succeeds, every byte equal, losses seen and
//    recovered (NAK + go-back-N, timeouts), no frame dropped by the NICs.
TEST(NicFabricScenario, OneGibWriteThroughSwitchWithOnePercentLoss) {
  constexpr uint32_t kRegion = 16u << 20;
  constexpr uint32_t kMsg = 1u << 20;
  constexpr int kPasses = 64;
  sw::SwitchConfig cfg = sw::parse_switch_config(config::parse_text("{" + port_table(2, 100) + "}"));
  cfg.fdb.push_back({host_mac(0).bytes, sw::kDefaultVlan, 0});
  cfg.fdb.push_back({host_mac(1).bytes, sw::kDefaultVlan, 1});
  const auto macs = switch_macs(2);
  sw::SwitchNode sw(cfg, macs);
  NicNode a(one_host_cfg(0), scenario_pool());
  NicNode b(one_host_cfg(1), scenario_pool());
  ScriptApp app;
  a.set_app(&app);
  sim::Simulator sim(2026);
  const auto is = sim.add_node(sw, "switch");
  const auto ia = sim.add_node(a, "a");
  const auto ib = sim.add_node(b, "b");
  const sim::LinkParams lp{BitRate::gbps(100), TimeNs::from_us(1), 0.01};
  const auto la = sim.connect(ia, 0, is, 0, lp);
  const auto lb = sim.connect(is, 1, ib, 0, lp);
  Endpoint ea = make_endpoint(a, 0, kRegion);
  Endpoint eb = make_endpoint(b, 0, kRegion);
  ConnParams p;
  p.timeout = 5;  // 131 us
  connect_pair(ea, eb, p);

  int pass = 0;
  int verified = 0;
  uint32_t done_in_pass = 0;
  uint64_t failures = 0;
  auto start_pass = [&] {
    fill_pattern(ea.buf, static_cast<uint32_t>(pass + 1));
    for (uint32_t k = 0; k < kRegion / kMsg; ++k) {
      ASSERT_EQ(post_write(ea, uint64_t(pass) << 32 | k, k * kMsg, kMsg, eb.addr() + k * kMsg, eb.mr->rkey), 0);
    }
  };
  start_pass();
  app.every([&](TimeNs) {
    for (const v::Wc& wc : drain(ea.scq)) {
      if (wc.status != v::WcStatus::kSuccess) ++failures;
      ++done_in_pass;
    }
    if (done_in_pass < kRegion / kMsg || pass >= kPasses) return;
    if (std::memcmp(ea.buf.data(), eb.buf.data(), kRegion) == 0) ++verified;
    done_in_pass = 0;
    if (++pass < kPasses) start_pass();
  });
  for (int i = 0; i < 400 && pass < kPasses && failures == 0; ++i) sim.run_for(TimeNs::from_ms(5));
  const sim::LinkStats sa = sim.stats(la, sim::LinkDir::kAtoB);
  const sim::LinkStats sb = sim.stats(lb, sim::LinkDir::kAtoB);
  const rc::QpCounters& c = ea.qp->counters();
  std::printf("1 GiB in %.3f ms virtual: %lu data frames (%lu retransmitted), %lu go-back, %lu timeouts; "
              "lost a->sw %lu, sw->b %lu, acks lost %lu\n",
              sim.now().us() / 1e3, c.tx_data_pkts, c.tx_retransmit_pkts, c.go_back, c.timeouts, sa.lost_pkts,
              sb.lost_pkts, sim.stats(lb, sim::LinkDir::kBtoA).lost_pkts + sim.stats(la, sim::LinkDir::kBtoA).lost_pkts);
  EXPECT_EQ(failures, 0u);
  EXPECT_EQ(pass, kPasses);
  EXPECT_EQ(verified, kPasses);
  EXPECT_GT(sa.lost_pkts, 1000u);
  EXPECT_GT(sb.lost_pkts, 1000u);
  EXPECT_GT(c.tx_retransmit_pkts, 0u);
  EXPECT_EQ(a.counters(0).dropped() + b.counters(0).dropped(), 0u);
  EXPECT_EQ(ea.qp->state(), v::QpState::kRts);
}

// 2. Incast from one process: a NicNode with 8 hosts (own MAC/IP, switch
//    ports 0..7) each writing 2 MiB into its own slice of one receiver (port
//    8). Expect: all 8 WRs succeed and every slice equals its sender's data
//    (switch drops, if the egress buffer overflows, are recovered).
TEST(NicFabricScenario, EightHostsInOneNodeIncast) {
  constexpr size_t kSenders = 8;
  constexpr uint32_t kBytes = 2u << 20;
  sw::SwitchConfig cfg = sw::parse_switch_config(config::parse_text("{" + port_table(kSenders + 1, 100) + "}"));
  NicConfig nc;
  for (size_t i = 0; i < kSenders; ++i) {
    nc.hosts.push_back(host_cfg(static_cast<int>(i), {static_cast<PortId>(i)}));
    nc.ports.push_back(NicPortConfig{});
    cfg.fdb.push_back({host_mac(static_cast<int>(i)).bytes, sw::kDefaultVlan, static_cast<uint16_t>(i)});
  }
  cfg.fdb.push_back({host_mac(50).bytes, sw::kDefaultVlan, static_cast<uint16_t>(kSenders)});
  const auto macs = switch_macs(kSenders + 1);
  sw::SwitchNode sw(cfg, macs);
  NicNode senders(nc, scenario_pool());
  NicNode rx(one_host_cfg(50), scenario_pool());
  sim::Simulator sim(8);
  const auto is = sim.add_node(sw, "switch");
  const auto isn = sim.add_node(senders, "senders");
  const auto irx = sim.add_node(rx, "rx");
  for (size_t i = 0; i < kSenders; ++i) {
    sim.connect(isn, static_cast<PortId>(i), is, static_cast<PortId>(i), {BitRate::gbps(100), TimeNs::from_us(1)});
  }
  sim.connect(is, static_cast<PortId>(kSenders), irx, 0, {BitRate::gbps(100), TimeNs::from_us(1)});
  Endpoint dst = make_endpoint(rx, 0, kSenders * kBytes);
  std::vector<Endpoint> src;
  std::vector<Endpoint> rxq;
  ConnParams p;
  p.timeout = 6;
  for (size_t i = 0; i < kSenders; ++i) {
    src.push_back(make_endpoint(senders, i, kBytes));
    Endpoint r;
    r.ctx = v::open_device(rx, 0);
    r.pd = dst.pd;
    r.scq = dst.scq;
    r.rcq = dst.rcq;
    v::QpInitAttr ia;
    ia.send_cq = dst.scq;
    ia.recv_cq = dst.rcq;
    ia.cap.max_send_wr = 16;
    ia.cap.max_recv_wr = 16;
    r.qp = v::create_qp(dst.pd, &ia);
    r.mr = dst.mr;
    rxq.push_back(std::move(r));
    connect_pair(src[i], rxq[i], p);
    fill_pattern(src[i].buf, static_cast<uint32_t>(i + 7));
    ASSERT_EQ(post_write(src[i], i, 0, kBytes, dst.addr() + i * kBytes, dst.mr->rkey), 0);
  }
  sim.run_for(TimeNs::from_ms(30));
  uint64_t switch_drops = 0;
  for (uint16_t port = 0; port < sw.num_ports(); ++port) switch_drops += sw.counters(port).dropped;
  std::printf("8-host incast: switch drops %lu, done at %.1f us\n", switch_drops, sim.now().us());
  for (size_t i = 0; i < kSenders; ++i) {
    const auto s = drain(src[i].scq);
    ASSERT_EQ(s.size(), 1u) << i;
    EXPECT_EQ(s[0].status, v::WcStatus::kSuccess) << i;
    EXPECT_EQ(0, std::memcmp(dst.buf.data() + i * kBytes, src[i].buf.data(), kBytes)) << i;
    EXPECT_GT(senders.counters(static_cast<PortId>(i)).tx_pkts, kBytes / 4096 - 1) << i;
  }
  EXPECT_EQ(senders.num_hosts(), kSenders);
}


// 3. IPv6 through the switch: 64 MiB of WRITEs and 16 MiB of READs between
//    two IPv6-only hosts (GID index 1), 1% loss per link. Expect: all
//    succeed, bytes equal, losses recovered, no frame dropped by the NICs.
TEST(NicFabricScenario, Ipv6WriteAndReadThroughSwitchWithLoss) {
  constexpr uint32_t kRegion = 16u << 20;
  sw::SwitchConfig cfg = sw::parse_switch_config(config::parse_text("{" + port_table(2, 100) + "}"));
  cfg.fdb.push_back({host_mac(0).bytes, sw::kDefaultVlan, 0});
  cfg.fdb.push_back({host_mac(1).bytes, sw::kDefaultVlan, 1});
  const auto macs = switch_macs(2);
  sw::SwitchNode sw(cfg, macs);
  NicConfig ca = one_host_cfg(0);
  NicConfig cb = one_host_cfg(1);
  ca.hosts[0].ipv4.reset();  // IPv6-only hosts
  cb.hosts[0].ipv4.reset();
  NicNode a(ca, scenario_pool());
  NicNode b(cb, scenario_pool());
  ScriptApp app;
  a.set_app(&app);
  sim::Simulator sim(66);
  const auto is = sim.add_node(sw, "switch");
  const sim::LinkParams lp{BitRate::gbps(100), TimeNs::from_us(1), 0.01};
  sim.connect(sim.add_node(a, "a"), 0, is, 0, lp);
  sim.connect(is, 1, sim.add_node(b, "b"), 0, lp);
  Endpoint ea = make_endpoint(a, 0, 2 * kRegion);
  Endpoint eb = make_endpoint(b, 0, 2 * kRegion);
  ConnParams p;
  p.ipv6 = true;
  p.timeout = 5;
  connect_pair(ea, eb, p);
  fill_pattern(eb.buf, 99);
  const std::vector<uint8_t> b_orig(eb.buf.begin() + kRegion, eb.buf.end());
  int pass = 0;
  int verified = 0;
  uint32_t done = 0;
  uint64_t failures = 0;
  std::vector<uint8_t> pattern(kRegion);
  auto start = [&] {
    fill_pattern(pattern, static_cast<uint32_t>(pass + 1000));  // the WRITE half only: READs land in the other
    std::memcpy(ea.buf.data(), pattern.data(), kRegion);
    for (uint32_t k = 0; k < 16; ++k) {
      ASSERT_EQ(post_write(ea, k, k << 20, 1 << 20, eb.addr() + (k << 20), eb.mr->rkey), 0);
    }
    ASSERT_EQ(post_write(ea, 99, kRegion + (pass << 22), 4 << 20, eb.addr() + kRegion + (pass << 22), eb.mr->rkey,
                         v::WrOpcode::kRdmaRead), 0);
  };
  start();
  app.every([&](TimeNs) {
    for (const v::Wc& wc : drain(ea.scq)) {
      if (wc.status != v::WcStatus::kSuccess) ++failures;
      ++done;
    }
    if (done < 17 || pass >= 4) return;
    if (std::memcmp(ea.buf.data(), eb.buf.data(), kRegion) == 0) ++verified;
    done = 0;
    if (++pass < 4) start();
  });
  for (int i = 0; i < 200 && pass < 4 && failures == 0; ++i) sim.run_for(TimeNs::from_ms(5));
  EXPECT_EQ(failures, 0u);
  EXPECT_EQ(verified, 4);
  EXPECT_EQ(0, std::memcmp(ea.buf.data() + kRegion, b_orig.data(), kRegion));
  EXPECT_GT(ea.qp->counters().tx_retransmit_pkts, 0u);
  EXPECT_EQ(a.counters(0).dropped() + b.counters(0).dropped(), 0u);
}

}  // namespace
}  // namespace sf::scenario
