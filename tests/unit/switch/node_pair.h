// Two SwitchNodes built from one config for the equivalence tests of the
// staged paths: `node_` takes each burst whole (stage passes of up to 32
// frames: bulk lookups ahead of learning, run admission) and transmits in
// bursts (batched release, scheduler repeat()); `ref_`, the per-frame
// reference, takes the same frames one receive() call each (a pass of one
// frame: its lookups, learning and admission done before the next frame
// arrives, every run one copy long) and, where a test asks (compare_port's
// `ref_per_packet`), sends one packet per transmit() call (a scheduler pick
// and a cell release per packet; the calls for one of `node_`'s bursts stop
// at the first empty one, as the burst's loop stops at its first empty pick).
// There is one receive path in the product (SwitchNode::receive_stages): the
// reference is how the test drives it.
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
  }
  size_t sent() const { return sent_; }

 protected:
  // The same frames to both: `node_` in one receive() call, `ref_` one
  // frame per call. `mbufs()` makes one node's mbufs of the burst.
  template <class MakeMbufs>
  void receive_both(uint16_t port, MakeMbufs mbufs, TimeNs now) {
    std::vector<rte_mbuf*> burst = mbufs();
    node_->receive(port, burst, now);
    for (rte_mbuf* m : mbufs()) ref_->receive(port, {&m, 1}, now);
  }
  // Transmits up to `budget` frames of `port` from both (`ref_` one packet
  // per transmit() call when `ref_per_packet`); expects the same bytes.
  // (Per packet, a PFC frame owed by `port` at a release during its own
  // transmit goes out before the next data frame instead of at the next
  // call: only for tests whose ports do not send and receive data both.)
  void compare_port(uint16_t port, TimeNs now, uint16_t budget, bool ref_per_packet = false) {
    const auto a = drain(*node_, port, now, budget);
    const auto b = drain(*ref_, port, now, budget, ref_per_packet);
    ASSERT_EQ(a.size(), b.size()) << "port " << port;
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "port " << port << " frame " << i;
    sent_ += a.size();
  }
  static std::vector<std::vector<uint8_t>> drain(SwitchNode& n, uint16_t p, TimeNs now, uint16_t budget,
                                                 bool per_packet = false) {
    std::vector<std::vector<uint8_t>> out;
    rte_mbuf* burst[32];
    // One burst of up to `max`, or the same one packet per call.
    auto tx = [&](uint16_t max) -> uint16_t {
      if (!per_packet) return n.transmit(p, {burst, max}, now);
      uint16_t got = 0;
      while (got < max && n.transmit(p, {burst + got, 1}, now) == 1) ++got;
      return got;
    };
    uint16_t got;
    while (budget > 0 && (got = tx(std::min<uint16_t>(32, budget))) > 0) {
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
