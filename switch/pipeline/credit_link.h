// CreditLink: a switch port's credit-based link flow control (CREDIT_FC): the
// shared per-port credit state (common/creditfc/credit_port.h) plus the
// switch's view of it: which VL each egress queue belongs to (SL = traffic
// class; queue = TC_TO_QUEUE of that TC) and the queues of each VL, so that
// the VL arbiter picks a VL and the queue scheduler a queue of it. Built at
// setup by SwitchNode (switch_node_credit.cc); owned by the port's lcore.
#pragma once

#include <array>
#include <cstdint>

#include "common/creditfc/credit_port.h"
#include "switch/config/switch_config.h"
#include "switch/mmu/mmu_config.h"

namespace sf::sw {

// QueuedPkt::credit_vl when the packet holds no ingress credit slot.
inline constexpr uint8_t kNoCreditVl = 0xFF;

struct CreditLink {
  CreditLink(const CreditFcConfig& cfg, const PortQos& qos) : fc(cfg) {
    for (int tc = 0; tc < kNumQueues; ++tc) {
      const uint8_t q = qos.tc_to_queue[tc];
      queue_vl[q] = cfg.sl_to_vl[tc];  // one VL per queue (checked by parse_credit_fc)
    }
    for (int q = 0; q < kNumQueues; ++q) queues_of_vl[queue_vl[q]] = static_cast<uint8_t>(queues_of_vl[queue_vl[q]] | 1u << q);
    default_vl = cfg.sl_to_vl[0];
  }

  CreditPort fc;
  std::array<uint8_t, kNumQueues> queue_vl{};    // egress queue -> VL
  std::array<uint8_t, kMaxVls> queues_of_vl{};   // VL -> queue mask
  uint8_t default_vl = 0;  // VL charged for a frame dropped before it could be classified
};

}  // namespace sf::sw
