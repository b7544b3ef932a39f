// Fixture for the SwitchNode tests on real mbufs (switch_node_test,
// lossless_node_test; suite dpdk, EAL from tests/support/eal_env): the node
// built from a config document with one router MAC on every port, RoCEv2
// WRITE and PFC frames between test hosts, and receive/transmit by hand at a
// given virtual time.
#pragma once

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/config/json_loader.h"
#include "common/wire/frame_builder.h"
#include "common/wire/mac_control.h"
#include "switch/pipeline/switch_node.h"
#include "tests/support/eal_env.h"
#include "tests/support/mbuf_chain.h"
#include "tests/support/roce_frame.h"

namespace sf::sw {

inline constexpr std::array<uint8_t, 6> kRouterMac{0x02, 0x53, 0x46, 0, 0, 0x01};
inline const wire::MacAddr kHostA{{0x02, 0, 0, 0, 0, 0x0A}};
inline const wire::MacAddr kHostB{{0x02, 0, 0, 0, 0, 0x0B}};
inline const wire::MacAddr kHostC{{0x02, 0, 0, 0, 0, 0x0C}};

// A 60-byte PFC frame from host C: class-enable `enable`, `quanta` for every
// priority; to a wrong DA (not 01:80:c2:00:00:01) when !right_da.
inline std::vector<uint8_t> pfc_bytes(uint8_t enable, uint16_t quanta, bool right_da = true) {
  std::vector<uint8_t> b(60);
  std::array<uint16_t, 8> q{};
  q.fill(quanta);
  wire::build_pfc_frame(b, kHostC, enable, q);
  if (!right_da) b[5] = 0x02;
  return b;
}

class SwitchNodeFixture : public testing::Test {
 protected:
  void make(const std::string& doc) {
    cfg_ = parse_switch_config(config::parse_text(doc));
    macs_.assign(cfg_.ports.ports.size(), kRouterMac);
    node_ = std::make_unique<SwitchNode>(cfg_, macs_, sf::test::mbuf_pool());
  }
  void TearDown() override { node_.reset(); }

  // `spec` with `payload` bytes of 0x5A, in an mbuf.
  static rte_mbuf* frame(const wire::RoceFrameSpec& spec, size_t payload = 64) {
    return sf::test::make_mbuf(sf::test::roce_frame_bytes(spec, payload));
  }
  // An RC WRITE_ONLY from 10.0.0.1 to 10.1.0.<dst_last>.
  static wire::RoceFrameSpec v4(wire::MacAddr dst, wire::MacAddr src, uint8_t dst_last = 2, uint8_t dscp = 26,
                                wire::Ecn ecn = wire::Ecn::kEct0) {
    wire::RoceFrameSpec s;
    s.l2 = {dst, src, std::nullopt};
    wire::Ipv4Spec ip;
    ip.src.bytes = {10, 0, 0, 1};
    ip.dst.bytes = {10, 1, 0, dst_last};
    ip.dscp = dscp;
    ip.ecn = ecn;
    s.l3 = ip;
    s.bth.opcode = wire::Opcode::kRcWriteOnly;
    s.ext.reth_dma_length = 64;
    return s;
  }
  void rx(uint16_t port, rte_mbuf* m, TimeNs now = TimeNs(0)) {
    rte_mbuf* one[1] = {m};
    node_->receive(port, one, now);
  }
  // Everything port `p` sends at `now`: the frames' bytes; mbufs freed.
  std::vector<std::vector<uint8_t>> drain(uint16_t p, TimeNs now = TimeNs(0)) {
    std::vector<std::vector<uint8_t>> out;
    rte_mbuf* burst[32];
    uint16_t n;
    while ((n = node_->transmit(p, burst, now)) > 0) {
      for (uint16_t i = 0; i < n; ++i) {
        out.push_back(test::take_bytes(burst[i]));
      }
    }
    return out;
  }

  SwitchConfig cfg_;
  std::vector<std::array<uint8_t, 6>> macs_;
  std::unique_ptr<SwitchNode> node_;
};

}  // namespace sf::sw
