// Two SwitchNodes built from one config for the equivalence tests of the
// staged paths: `node_` as configured (staged receive, run admission, batched
// transmit) and `ref_`, the per-frame reference (set_staged_receive(false)).
// Also the host MACs those tests address.
#pragma once

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/config/json_loader.h"
#include "switch/pipeline/switch_node.h"
#include "tests/support/eal_env.h"
#include "tests/support/mbuf_chain.h"

namespace sf::sw::node_pair {

inline constexpr std::array<uint8_t, 6> kRouterMac{0x02, 0x53, 0x46, 0, 0, 0x01};
inline const wire::MacAddr kRouter{kRouterMac};
inline const wire::MacAddr kHostA{{0x02, 0, 0, 0, 0, 0x0A}};
inline const wire::MacAddr kHostB{{0x02, 0, 0, 0, 0, 0x0B}};
inline const wire::MacAddr kHostC{{0x02, 0, 0, 0, 0, 0x0C}};
inline const wire::MacAddr kHostD{{0x02, 0, 0, 0, 0, 0x0D}};
inline const wire::MacAddr kHostE{{0x02, 0, 0, 0, 0, 0x0E}};
inline const wire::MacAddr kBroadcast{{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}};

class NodePair {
 public:
  explicit NodePair(const char* config)
      : cfg_(parse_switch_config(config::parse_text(config))), macs_(cfg_.ports.ports.size(), kRouterMac) {
    node_ = std::make_unique<SwitchNode>(cfg_, macs_, sf::test::mbuf_pool());
    ref_ = std::make_unique<SwitchNode>(cfg_, macs_, sf::test::mbuf_pool());
    ref_->set_staged_receive(false);
  }
  size_t sent() const { return sent_; }

 protected:
  // Transmits up to `budget` frames of `port` from both; expects the same bytes.
  void compare_port(uint16_t port, TimeNs now, uint16_t budget) {
    const auto a = drain(*node_, port, now, budget);
    const auto b = drain(*ref_, port, now, budget);
    ASSERT_EQ(a.size(), b.size()) << "port " << port;
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "port " << port << " frame " << i;
    sent_ += a.size();
  }
  static std::vector<std::vector<uint8_t>> drain(SwitchNode& n, uint16_t p, TimeNs now, uint16_t budget) {
    std::vector<std::vector<uint8_t>> out;
    rte_mbuf* burst[32];
    uint16_t got;
    while (budget > 0 && (got = n.transmit(p, {burst, std::min<uint16_t>(32, budget)}, now)) > 0) {
      budget = static_cast<uint16_t>(budget - got);
      for (uint16_t i = 0; i < got; ++i) out.push_back(sf::test::take_bytes(burst[i]));
    }
    return out;
  }

  SwitchConfig cfg_;
  std::vector<std::array<uint8_t, 6>> macs_;
  std::unique_ptr<SwitchNode> node_;
  std::unique_ptr<SwitchNode> ref_;
  size_t sent_ = 0;
};

}  // namespace sf::sw::node_pair
