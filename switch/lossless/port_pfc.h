// PFC of a switch port as a port component (802.1Qbb PFC and 802.3x PAUSE;
// docs/switch.md "PFC"; docs/architecture.md "Switch pipeline"): both
// halves of the port's link-level flow control.
//  * generation: each lossless ingress PG whose profile has pfc_enable
//    priorities mapped to it asserts XOFF for them when it has used up its
//    shared allowance (the next bytes go to headroom) or holds headroom, and
//    XON once the headroom is empty and the shared use is xon_offset below
//    the limit, or the PG is down to xon bytes (update(); idle() is the
//    inline test that nothing is or should be asserted, true for most
//    packets). The frames owed (XOFF, refresh, XON) come from poll();
//  * reception: PFC / PAUSE frames that end at this hop pause the port's
//    transmit queues (on_frame(): PFC honoured for pfc_enable priorities
//    only; a frame not sent to 01-80-C2-00-00-01 is ignored; every frame
//    counted, what is ignored under why); refresh() gives the queues paused
//    as of `now` (pfc_to_queue).
// Every port has one (a PAUSE frame pauses any port); a port without
// lossless PGs pays, per packet, the idle() test of a zero priority mask
// on release. The node wires it in (switch_node_admit.cc, switch_node_tx.cc): the PG occupancy comes
// from the Mmu, the frames from its ctrl_pool, and the watchdog (a port
// component of its own) hears of pauses. Pure logic, no allocation.
#pragma once

#include <array>
#include <cstdint>

#include "common/pfc/pfc_generator.h"
#include "common/pfc/pfc_receiver.h"
#include "common/time.h"
#include "common/wire/frame_parser.h"
#include "switch/config/switch_config.h"
#include "switch/mmu/mmu.h"
#include "switch/pipeline/counters.h"

namespace sf::sw {

class PortPfc {
 public:
  PortPfc() = default;
  // `qos` (pfc_enable, tc_to_pg, pfc_to_queue) must outlive it.
  PortPfc(BitRate speed, const PortQos& qos) : rx_(speed), tx_(speed), qos_(&qos) {}

  // Setup: ingress PG `pg` of this port is lossless with XON thresholds in
  // cells; its PFC priorities are the pfc_enable ones mapped to it.
  void set_lossless_pg(uint8_t pg, uint32_t xon_offset_cells, uint32_t xon_cells) {
    Pg& pp = pg_[pg];
    pp.prios = 0;
    for (int prio = 0; prio < kPfcPrios; ++prio) {
      if (((qos_->pfc_enable >> prio) & 1u) && qos_->tc_to_pg[prio] == pg) pp.prios = static_cast<uint8_t>(pp.prios | 1u << prio);
    }
    pp.xon_offset_cells = xon_offset_cells;
    pp.xon_cells = xon_cells;
  }
  // The PFC priorities PG `pg` asserts (0: none, a lossy PG).
  uint8_t pg_prios(uint8_t pg) const { return pg_[pg].prios; }

  // ---- generation (this port's ingress PGs, port index `port` in `mmu`)
  // Whether update() would do nothing now: no PFC priority maps to the PG,
  // or none is asserted and none should be.
  [[gnu::always_inline]] bool idle(const Mmu& mmu, uint16_t port, uint8_t pg) const {
    const Pg& pp = pg_[pg];
    if (pp.prios == 0) return true;
    const BufferUse& u = mmu.pg_use(port, pg);
    return (tx_.xoff_mask() & pp.prios) == 0 && u.hdrm == 0 && u.shared < mmu.pg_shared_limit(port, pg);
  }
  // XOFF / XON for the PG's priorities from its occupancy; true when some
  // priority is or was asserted (the owner then has timers to watch).
  bool update(const Mmu& mmu, uint16_t port, uint8_t pg, TimeNs now) {
    const Pg& pp = pg_[pg];
    const BufferUse& u = mmu.pg_use(port, pg);
    const uint8_t asserted = tx_.xoff_mask() & pp.prios;
    const uint64_t limit = mmu.pg_shared_limit(port, pg);
    const bool over = u.hdrm > 0 || u.shared >= limit;
    if (asserted == 0 && !over) return false;
    const bool drained = uint64_t{u.shared} + pp.xon_offset_cells <= limit || u.used <= pp.xon_cells;
    const bool keep = !(u.hdrm == 0 && drained);
    for (int prio = 0; prio < kPfcPrios; ++prio) {
      if (!((pp.prios >> prio) & 1u)) continue;
      tx_.set_xoff(prio, ((asserted >> prio) & 1u) ? keep : over, now);
    }
    return true;
  }
  // The frame owed at `now`, if one is due (XOFF / refresh / XON).
  bool poll(TimeNs now, PfcFrameRequest* req) { return tx_.poll(now, req); }
  TimeNs next_deadline() const { return tx_.next_deadline(); }
  uint8_t xoff_mask() const { return tx_.xoff_mask(); }

  // ---- reception
  // A PAUSE / PFC frame parsed as `f` arrived (counted in `ctr`). Returns
  // the priorities it pauses (time > 0; PAUSE: all), or -1 when it was
  // ignored (unknown opcode, malformed, wrong DA): nothing changed then.
  int on_frame(const wire::FrameInfo& f, PortCounters& ctr, TimeNs now) {
    ctr.rx_mac_control++;
    if (f.reason == wire::ParseReason::kUnknownMacControlOpcode) {
      ++ctr.rx_unsupported_op;
      return -1;
    }
    if (f.pfc == nullptr && f.pause == nullptr) {
      ++ctr.rx_mac_control_malformed;
      return -1;
    }
    if (!f.mac_control_dst_ok) {
      ++ctr.rx_mac_control_bad_da;
      return -1;
    }
    uint8_t pausing = 0;
    if (f.pfc != nullptr) {
      if (f.pfc->enable_vector.value() > 0xFF) ++ctr.rx_pfc_reserved_bits;
      const uint8_t named = f.pfc->enabled_mask();
      if ((named & ~qos_->pfc_enable) != 0) ++ctr.rx_pfc_disabled_prio;
      const auto honoured = static_cast<uint8_t>(named & qos_->pfc_enable);
      std::array<uint16_t, kPfcPrios> q{};
      for (int p = 0; p < kPfcPrios; ++p) {
        q[p] = f.pfc->time_quanta[p].value();
        if (((honoured >> p) & 1u) && q[p] != 0) pausing = static_cast<uint8_t>(pausing | 1u << p);
      }
      rx_.on_pfc(honoured, q, now);
    } else {
      rx_.on_pause(f.pause->pause_quanta.value(), now);
      if (f.pause->pause_quanta.value() != 0) pausing = 0xFF;
    }
    return pausing;
  }
  // The transmit queues paused by received frames as of `now` (kept for paused_queues()).
  uint8_t refresh(TimeNs now) {
    const uint8_t prios = rx_.paused_mask(now);
    uint8_t queues = 0;
    for (int p = 0; p < kPfcPrios; ++p) {
      if ((prios >> p) & 1u) queues = static_cast<uint8_t>(queues | 1u << qos_->pfc_to_queue[p]);
    }
    paused_queues_ = queues;
    return queues;
  }
  // As of the last refresh().
  uint8_t paused_queues() const { return paused_queues_; }
  // Received pauses of `prios` are ignored from `now` on (the watchdog's storms).
  void set_ignore(uint8_t prios, TimeNs now) { rx_.set_ignore(prios, now); }
  TimeNs next_expiry() const { return rx_.next_expiry(); }

  // Timers running or a pause in force: the owner must watch this port.
  bool active() const { return rx_.next_expiry() != TimeNs::max() || paused_queues_ != 0 || tx_.next_deadline() != TimeNs::max(); }
  const PfcReceiver& rx() const { return rx_; }
  const PfcGenerator& tx() const { return tx_; }

 private:
  // PFC generation inputs of one ingress PG, fixed at setup.
  struct Pg {
    uint8_t prios = 0;  // pfc_enable priorities mapped to this lossless PG
    uint32_t xon_offset_cells = 0;
    uint32_t xon_cells = 0;
  };
  std::array<Pg, kNumPgs> pg_{};
  PfcReceiver rx_;  // pause timers of received frames
  PfcGenerator tx_;  // frames we owe the peer (XOFF / refresh / XON)
  uint8_t paused_queues_ = 0;
  const PortQos* qos_ = nullptr;
};

}  // namespace sf::sw
