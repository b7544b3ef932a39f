// One port of a switch as SwitchNode composes it (docs/architecture.md
// "Switch pipeline"): the port's own state (MAC, MTU, QoS maps, egress
// queues and their WRED, the scheduler, the hold FIFOs of its lossless
// ingress PGs, counters) and the port components its config enables:
//   PortPfc        every port (a PAUSE pauses any port)    switch/lossless/port_pfc.h
//   PortWatchdog   PFC_WD ports; null otherwise             switch/lossless/port_watchdog.h
//   CreditLink     CREDIT_FC ports; null otherwise          switch/pipeline/credit_link.h
//   int_queues     INT queues; 0 otherwise                  switch/pipeline/int_stage.h
// A plain port pays two null pointers and a zero byte. Built once at setup
// (init(), switch_port.cc); then read and written by the lcore that owns
// the port only.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "switch/config/switch_config.h"
#include "switch/lossless/port_pfc.h"
#include "switch/lossless/port_watchdog.h"
#include "switch/mmu/mmu.h"
#include "switch/pipeline/counters.h"
#include "switch/pipeline/credit_link.h"
#include "switch/pipeline/egress_queue.h"
#include "switch/qos/scheduler.h"
#include "switch/qos/wred.h"

namespace sf::sw {

struct SwitchPort {
  std::array<uint8_t, 6> mac{};
  uint32_t max_frame_bytes = 0;  // MTU + Ethernet header + VLAN tag
  const PortQos* qos = nullptr;
  std::array<Wred, kNumQueues> wred;
  PortScheduler sched;
  std::array<EgressQueue, kNumQueues> queues;
  std::array<EgressQueue, kNumPgs> held;  // lossless PGs only (others capacity 1, unused)
  uint8_t paused = 0;  // by hand (SwitchNode::set_paused)
  // Port component PFC: XOFF / XON of the lossless ingress PGs, the pauses
  // received (queues paused by PFC / PAUSE).
  PortPfc pfc;
  // Port component PFC_WD (applied by switch_node_watchdog.cc); null: none.
  std::unique_ptr<PortWatchdog> wd;
  uint8_t lossless_pgs = 0;  // bit pg: the PG's ingress profile is lossless
  PortCounters ctr;
  uint8_t int_queues = 0;  // INT: bit q = append a hop record at dequeue from queue q
  uint64_t rate_bps = 0;   // line rate (the INT record's B)
  // Port component CREDIT_FC (wired in by switch_node_credit.cc); null: none.
  std::unique_ptr<CreditLink> credit;
  // Offer round of the last transmit() that found nothing to send with the
  // port up; kNotIdle: none since (busy or down). SwitchNode "Transmit offers".
  static constexpr uint64_t kNotIdle = UINT64_MAX;
  uint64_t idle_round = 0;

  // Port `p` of `cfg` with its components: `ring` descriptors per egress
  // queue and per lossless PG's hold FIFO (one for the other PGs), taken
  // from `arena` (sized by ring_slots()); `mmu` gives the PGs' profiles.
  void init(size_t p, const SwitchConfig& cfg, const Mmu& mmu, QueueArena& arena, uint32_t ring, const std::array<uint8_t, 6>& mac);
  // The arena slots every port's rings take.
  static uint64_t ring_slots(const SwitchConfig& cfg, uint32_t ring);

  bool queues_empty() const {
    for (const EgressQueue& q : queues) {
      if (!q.empty()) return false;
    }
    return true;
  }
  // PFC, watchdog or credit work or timers: the node watches this port.
  bool ctl_active() const { return pfc.active() || wd || credit; }
};

}  // namespace sf::sw
