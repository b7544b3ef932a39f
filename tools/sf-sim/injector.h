// Injector: a one-port node that sends given frames into a switch port at
// given virtual times and rates -- sf-sim's "inject" event (docs/sf-sim.md
// "Events"), the virtual-time twin's misbehaving host: PFC storms and bursts
// of malformed / fuzzer-made frames (docs/soak.md "Virtual time").
//
// Bursts run one after another in the order of their start time (a burst
// that starts while another is still sending waits for it, as the real
// soak's rogue host sends one burst at a time). A burst sends `count` frames,
// cycling through its frame list, at `rate` (0: back to back at the link's
// rate), each frame copied into a chain of mbufs from the pool (any length
// from 1 byte; a frame longer than an mbuf's data room spans several). What
// the switch sends back to the injector (floods) is freed and counted.
// Frames leave whatever the link's state is: while the link is down the
// simulator counts them as down_dropped, as a real host keeps sending into
// an admin-down port.
//
// Threading: the simulator's thread. Allocation: add() at setup; a run
// allocates mbufs only.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/node.h"
#include "common/time.h"

namespace sf::simlab {

using Frames = std::vector<std::vector<uint8_t>>;

// The frames of a classic pcap file (microsecond or nanosecond magic, either
// byte order, link type Ethernet), in file order. Throws std::runtime_error
// naming what is wrong (unreadable, not a pcap, another link type, a
// truncated record, a frame over 16 KiB or of 0 bytes, no frame).
Frames read_pcap_frames(const std::string& path);

class Injector final : public Node {
 public:
  struct Burst {
    TimeNs at;
    std::shared_ptr<const Frames> frames;  // cycled; not empty
    uint64_t count = 0;                     // frames to send
    BitRate rate;                           // 0: back to back at line_rate
  };
  struct Stats {
    uint64_t bursts = 0;     // bursts begun
    uint64_t sent = 0;       // frames handed to the link
    uint64_t sent_bytes = 0;
    uint64_t received = 0;   // frames the switch sent to the injector (freed)
  };

  // line_rate, delay: the link's rate (the switch port's speed) and propagation delay.
  Injector(rte_mempool* pool, BitRate line_rate, TimeNs delay)
      : pool_(pool), line_rate_(line_rate), delay_(delay) {}

  // Before the run. Throws std::invalid_argument for an empty frame list or count 0.
  void add(Burst b);
  // Every burst's frames sent and, at `now`, arrived (serialised and propagated).
  bool done(TimeNs now) const { return sending_done() && now >= next_tx_ + delay_; }
  const Stats& stats() const { return stats_; }
  uint64_t frames_planned() const;

  uint16_t num_ports() const override { return 1; }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override;
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) override;
  TimeNs next_wakeup(TimeNs now) const override;
  void advance(TimeNs /*now*/) override {}

 private:
  rte_mbuf* build(const std::vector<uint8_t>& frame);
  bool sending_done() const { return idx_ >= bursts_.size(); }

  rte_mempool* pool_;
  BitRate line_rate_;
  TimeNs delay_;
  std::vector<Burst> bursts_;  // sorted by `at` (stable)
  size_t idx_ = 0;             // the burst sending now
  uint64_t sent_in_burst_ = 0;
  TimeNs next_tx_ = TimeNs(0);  // earliest time of the next frame (rate, wire)
  Stats stats_;
};

}  // namespace sf::simlab
