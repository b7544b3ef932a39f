// The sf-nic side of the RDMA WRITE incast scenarios (dcqcn_incast_test,
// sharded_incast_test): hosts h0..hN (MTU 4096, PFC on priority 3) meant for
// switch ports 0..N, and a write_bw client on each of h0..h(N-1) paired with
// a verifying server on hN, each NicNode driven by its PerftestEngine.
// Virtual time only; one thread.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/sim/simulator.h"
#include "nic/app/perftest_engine.h"
#include "tests/scenario/scenario.h"

namespace sf::scenario {

inline nic::app::AppHost incast_host(size_t i) {
  nic::app::AppHost h;
  h.name = "h" + std::to_string(i);
  h.devargs = "sim" + std::to_string(i);
  h.mac.bytes = {0x02, 0x4E, 0x00, 0x00, 0x00, static_cast<uint8_t>(i + 1)};
  h.ipv4 = std::array<uint8_t, 4>{10, 8, 0, static_cast<uint8_t>(i + 1)};
  h.mtu_bytes = 4096;
  h.pfc_enable = 1u << 3;
  return h;
}

inline nic::NicConfig incast_node_cfg(const nic::app::AppHost& h) {
  nic::NicConfig c;
  nic::HostConfig hc;
  hc.name = h.name;
  hc.mac.bytes = h.mac.bytes;
  hc.ipv4 = wire::Ipv4Addr{*h.ipv4};
  hc.ports = {0};
  c.hosts.push_back(hc);
  nic::NicPortConfig p;
  p.line_rate = BitRate::gbps(h.speed_gbps);
  p.pfc_honour = true;
  c.ports.push_back(p);
  return c;
}

struct NicIncast {
  std::vector<nic::app::AppHost> hosts;  // senders 0..n-1, the receiver last
  std::vector<std::unique_ptr<nic::NicNode>> nodes;
  std::vector<std::unique_ptr<nic::app::Workload>> clients, servers;
  nic::app::PerftestEngine rx_engine;
  std::vector<std::unique_ptr<nic::app::PerftestEngine>> tx_engines;

  // `senders` x `msgs` WRITEs of `msg_bytes` (tx depth 32, verified), all
  // QPs with congestion control `cc` (nic::cc_choice_from_string).
  NicIncast(size_t senders, uint64_t msg_bytes, uint64_t msgs, const std::string& cc) {
    for (size_t i = 0; i <= senders; ++i) hosts.push_back(incast_host(i));
    for (const auto& h : hosts) nodes.push_back(std::make_unique<nic::NicNode>(incast_node_cfg(h), scenario_pool()));
    const size_t rx = senders;
    for (size_t i = 0; i < senders; ++i) {
      nic::app::AppWorkload w;
      w.type = nic::app::WorkloadType::kWriteBw;
      w.size_bytes = msg_bytes;
      w.iterations = msgs;
      w.tx_depth = 32;
      w.verify = true;
      w.cc = *nic::cc_choice_from_string(cc, nic::CcEvents::kAckDriven);
      w.name = "c" + std::to_string(i);
      w.role = nic::app::Role::kClient;
      clients.push_back(std::make_unique<nic::app::Workload>(w, hosts[i], *nodes[i], 0));
      w.name = "s" + std::to_string(i);
      w.role = nic::app::Role::kServer;
      servers.push_back(std::make_unique<nic::app::Workload>(w, hosts[rx], *nodes[rx], 0));
      EXPECT_EQ(servers[i]->connect(clients[i]->local_info(), TimeNs(0)), "");
      EXPECT_EQ(clients[i]->connect(servers[i]->local_info(), TimeNs(0)), "");
      tx_engines.push_back(std::make_unique<nic::app::PerftestEngine>());
      tx_engines.back()->add(clients[i].get());
      nodes[i]->set_app(tx_engines.back().get());
      rx_engine.add(servers[i].get());
    }
    nodes[rx]->set_app(&rx_engine);
  }
  ~NicIncast() {
    for (auto& n : nodes) n->set_app(nullptr);
  }
  NicIncast(const NicIncast&) = delete;
  NicIncast& operator=(const NicIncast&) = delete;

  // Host i on switch port i, every link `rate` with `delay`.
  void connect(sim::Simulator& sim, sim::NodeId sw_id, BitRate rate, TimeNs delay) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      const sim::NodeId id = sim.add_node(*nodes[i], hosts[i].name);
      sim.connect(id, 0, sw_id, static_cast<PortId>(i), {rate, delay});
    }
  }
  bool all_done() const {
    for (const auto& c : clients) {
      if (!c->traffic_done()) return false;
    }
    return true;
  }
};

}  // namespace sf::scenario
