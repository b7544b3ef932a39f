// The Node contract: the seam between protocol logic (switch/, nic/) and the two
// drivers that run it (common/dpdk real time, common/sim virtual time).
// See docs/architecture.md and DESIGN.md section 1.
#pragma once

#include <cstdint>
#include <span>

#include "common/time.h"

struct rte_mbuf;

namespace sf {

using PortId = uint16_t;

// Ethernet bytes on the wire that are not in the mbuf: preamble+SFD (8),
// inter-frame gap (12) and FCS (4). Frames shorter than 60 B are padded.
inline constexpr uint32_t kEthMinFrameNoFcs = 60;
inline constexpr uint32_t kEthWireOverheadBytes = 8 + 12 + 4;

// Bytes a frame of `frame_len` (mbuf pkt_len, no FCS) occupies on the wire.
// Both drivers charge exactly this, so real and virtual time agree on rates.
constexpr uint32_t wire_bytes(uint32_t frame_len) {
  return (frame_len < kEthMinFrameNoFcs ? kEthMinFrameNoFcs : frame_len) + kEthWireOverheadBytes;
}

// A node is anything with ports. Drivers call it from one thread only.
// One virtual call per burst, never per packet. Implementations never read a
// clock, never call ethdev, never sleep and never allocate per packet.
class Node {
 public:
  virtual ~Node() = default;

  // Number of ports; PortId values are 0..num_ports()-1.
  virtual uint16_t num_ports() const = 0;

  // Packets that arrived on `port`. The node takes ownership of every mbuf
  // (it frees, queues or forwards each one).
  virtual void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) = 0;

  // The wire of `port` is free: fill `out` with at most out.size() packets to
  // send now and return how many. Ownership passes to the driver.
  virtual uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) = 0;

  // Earliest time the node must run without new input (timers, pacing);
  // TimeNs::max() when nothing is pending.
  virtual TimeNs next_wakeup(TimeNs now) const = 0;

  // Run timers due at or before `now`.
  virtual void advance(TimeNs now) = 0;

  // Optional, for a driver that offers transmit port by port after every
  // call (sf-sim). A node that tracks_tx_ports() answers next_tx_port: the
  // lowest port >= `from` whose transmit(now) may send a frame or change
  // the node's state, num_ports() when none; transmit on any port it skips
  // would return 0 and change nothing, so offering only those is offering
  // every idle port, at a cost that follows the ports with work.
  virtual bool tracks_tx_ports() const { return false; }
  virtual PortId next_tx_port(PortId from, TimeNs /*now*/) { return from; }

  // The link of `port` went down or came up (the driver saw it: a memif peer
  // left or connected, a NIC link changed, a simulated link event). Default:
  // ignored.
  virtual void set_port_link(PortId /*port*/, bool /*up*/, TimeNs /*now*/) {}

  // A reboot (fault injection): the node drops what it buffers and forgets
  // what it learned, as after a restart. Default: nothing.
  virtual void reset(TimeNs /*now*/) {}
};

}  // namespace sf
