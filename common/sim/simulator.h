// Simulator: the virtual-time driver (DESIGN section 1). A deterministic
// discrete-event engine that runs the same sf::Node objects as the real-time
// driver, connected by full-duplex links with a rate, a propagation delay,
// loss and corruption injection, and up/down events.
//
// Semantics (each link direction is a "channel" with its own wire):
//  * A node is asked to transmit(port, span of 1) only when that port's wire is
//    free. A frame that comes out occupies the wire for
//    rate.tx_time(wire_bytes(pkt_len)) and reaches the peer's receive() at
//    departure + serialisation + delay, one frame per receive() call.
//  * The engine offers every idle port of a node a transmit after each
//    receive() and advance() of that node, when the port's wire frees, and at
//    start; to a node that tracks_tx_ports(), only the idle ports
//    next_tx_port() names (the others' transmit would do nothing), so an
//    event costs what it changes, not the node's port count. A node that declines (returns 0) is asked again only then, so a
//    node that wants to send later (pacing) reports that time in next_wakeup().
//  * next_wakeup() is queried after every call into the node; advance(t) runs at
//    that time. A wakeup at or before `now` right after advance(now) is deferred
//    by 1 ns (progress guarantee against a node that keeps asking for "now").
//  * Loss: the frame occupies the wire, then is freed (rte_pktmbuf_free) and
//    counted as lost. Corruption: one bit of one byte at an offset drawn from
//    [corrupt_skip_bytes, pkt_len) is flipped and the frame is delivered, so an
//    ICRC/CRC check at the receiver catches it. Draws come from a per-channel
//    Rng stream derived from the seed.
//  * Link down is a cable pull: both endpoints are told (Node::set_port_link,
//    as a real driver reports a link change; a switch then flushes the
//    port's queues and stops using it). Ports keep being offered transmit
//    (as the real-time driver keeps calling tx_burst), but nothing is
//    delivered. Frames sent while down and frames in flight when the link
//    goes down are freed and counted as down_dropped. Links start up.
//  * Fault injection (docs/sf-sim.md "Events"), all scheduled at setup or
//    any time before they happen, deterministic for a seed: flapping
//    (flap_link: down/up pairs), a silent blackhole of a port or a whole node
//    (frames sent by it or to it are freed and counted as blackholed, the
//    link stays up and nobody is told), a link's loss rate changed at t, and
//    a reboot (every link of the node down, Node::reset(), links up after
//    the down time).
//  * Events at the same time run in scheduling order (time, seq): identical
//    inputs and seed give identical runs (trace_hash() proves it).
//
// Threading: one thread; the Simulator owns the in-flight mbufs (freed on
// destruction) and holds references to nodes, which must outlive it.
// Allocation: setup (add_node, connect) allocates; a run allocates only when
// the event heap or a channel's FIFO of frames in flight grows past its
// previous high-water mark.
//
// Cost: a channel's frames in flight (a 1 us link at 400 Gb/s holds ~12 MTU
// frames) take one slot of the event heap, not one each (Channel::fifo),
// so the heap holds about one event per busy wire and node; the order of
// events is unchanged (each keeps the seq taken when it was scheduled).
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/node.h"
#include "common/sim/event_queue.h"
#include "common/rng.h"
#include "common/time.h"

namespace sf::sim {

using NodeId = uint32_t;
using LinkId = uint32_t;

// Ethernet header bytes left alone by corruption by default, so that a
// corrupted frame still reaches its L2 destination and fails there (ICRC).
inline constexpr uint32_t kDefaultCorruptSkipBytes = 14;

struct LinkParams {
  BitRate rate;          // per direction; BitRate(0) = no serialisation time
  TimeNs delay;          // propagation delay
  double loss = 0;       // probability [0, 1] a frame is lost
  double corrupt = 0;    // probability [0, 1] a frame gets one bit flipped
  uint32_t corrupt_skip_bytes = kDefaultCorruptSkipBytes;
};

// Counters of one link direction. Frames and bytes are mbuf pkt_len (no FCS,
// no preamble); tx = lost + down_dropped + blackholed + delivered + (in flight).
struct LinkStats {
  uint64_t tx_pkts = 0;
  uint64_t tx_bytes = 0;
  uint64_t delivered_pkts = 0;
  uint64_t delivered_bytes = 0;
  uint64_t lost_pkts = 0;
  uint64_t corrupted_pkts = 0;     // flipped (then delivered, unless the link went down)
  uint64_t down_dropped_pkts = 0;  // sent while down, or in flight when it went down
  uint64_t blackholed_pkts = 0;    // dropped by a blackhole of either end (link up)

  bool operator==(const LinkStats&) const = default;
  LinkStats& operator+=(const LinkStats& o);
};

// Direction of a link: kAtoB is from connect()'s first endpoint to its second.
enum class LinkDir : uint8_t { kAtoB = 0, kBtoA = 1 };

class Simulator {
 public:
  explicit Simulator(uint64_t seed = 1);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // ---- setup (before the first run; throw std::invalid_argument / logic_error)
  // Registers `node` (not owned; must outlive the simulator). Names are unique.
  NodeId add_node(Node& node, std::string name);
  // Connects port pa of a with port pb of b. Each port carries at most one link.
  LinkId connect(NodeId a, PortId pa, NodeId b, PortId pb, const LinkParams& params);
  // Schedules the link to go up or down at `at` (>= now()); any time.
  void set_link_state_at(LinkId link, TimeNs at, bool up);

  // ---- fault injection (throw std::invalid_argument on bad arguments or a time in the past)
  // From `from` until `until`, every `period` the link goes down for
  // `down_for` (0 < down_for < period), then up; it is up at `until`.
  void flap_link(LinkId link, TimeNs from, TimeNs until, TimeNs period, TimeNs down_for);
  // Silent blackhole of `port` of `node` (both directions of its link) from
  // `at` until `until` (TimeNs::max(): for good). The port must be connected.
  void blackhole_port(NodeId node, PortId port, TimeNs at, TimeNs until);
  // Every connected port of `node`.
  void blackhole_node(NodeId node, TimeNs at, TimeNs until);
  // The link's loss probability (both directions) from `at` on.
  void set_link_loss_at(LinkId link, TimeNs at, double loss);
  // Reboot: at `at` every link of `node` goes down (both ends told) and the
  // node's reset() runs; at `at + down_for` the links come up again.
  void reboot_node(NodeId node, TimeNs at, TimeNs down_for);

  // ---- running
  // Runs every event with time <= end, then sets now() to end (if later).
  void run_until(TimeNs end);
  void run_for(TimeNs duration) { run_until(now() + duration); }
  TimeNs now() const { return TimeNs(now_ns_); }
  // Something outside the events changed `node` between runs (an app
  // attached to it): its next_wakeup() is read again.
  void wake(NodeId node);

  // ---- inspection
  size_t num_nodes() const { return nodes_.size(); }
  size_t num_links() const { return links_.size(); }
  std::optional<NodeId> find_node(std::string_view name) const;
  const std::string& node_name(NodeId id) const { return nodes_.at(id).name; }
  bool link_up(LinkId link) const { return links_.at(link).up; }
  double link_loss(LinkId link) const { return channels_[links_.at(link).channel[0]].loss; }
  // Whether frames on this direction of the link are blackholed now.
  bool blackholed(LinkId link, LinkDir dir) const {
    return channels_[links_.at(link).channel[static_cast<size_t>(dir)]].blackhole != 0;
  }
  // The link on `port` of `node`, if connected.
  std::optional<LinkId> link_of(NodeId node, PortId port) const;
  const LinkStats& stats(LinkId link, LinkDir dir) const;
  LinkStats total_stats(LinkId link) const;  // both directions summed
  uint64_t events_processed() const { return events_processed_; }
  // Hash over every dispatched event (time, kind, target, frame length): equal
  // for identical runs, different as soon as one event differs.
  uint64_t trace_hash() const { return trace_hash_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;

  struct NodeSlot {
    Node* node;
    std::string name;
    uint16_t num_ports;
    uint32_t first_port;       // index of port 0 in port_channel_
    int64_t wakeup_ns;         // pending kWakeup time; INT64_MAX when none
    int64_t last_advance_ns;   // time of the last advance(); -1 before any
    bool tracks_tx;            // node.tracks_tx_ports(): offers go to next_tx_port()'s ports only
  };
  // A delivery scheduled behind the one filed in the event heap (Channel::fifo).
  struct InFlight {
    int64_t time_ns;
    uint64_t seq;  // taken when it was scheduled: its place among equal times
    rte_mbuf* pkt;
    uint16_t epoch;
  };
  // One direction of a link.
  struct Channel {
    uint32_t src_node;
    uint32_t dst_node;
    PortId src_port;
    PortId dst_port;
    uint32_t link;
    bool busy;  // a kTxDone is pending: the wire is serialising a frame
    BitRate rate;
    int64_t delay_ns;
    double loss;
    double corrupt;
    uint32_t corrupt_skip_bytes;
    uint32_t last_len;  // memo of rate.tx_time(wire_bytes(last_len)): avoids a
    int64_t last_ser_ns;  // 128-bit division per frame for same-size frames
    Rng rng;
    LinkStats stats;
    uint16_t blackhole = 0;  // blackholes covering this direction (port and node ones may overlap)
    // Deliveries in flight: a channel's arrive in the order they were sent
    // (departure times increase, the delay is fixed), so only the earliest is
    // filed in the event heap (`deliver_filed`); the later ones wait here, in
    // a ring of a power-of-two size, and the next is filed when one arrives.
    bool deliver_filed = false;
    uint32_t fifo_head = 0;
    uint32_t fifo_count = 0;
    std::vector<InFlight> fifo{};
  };
  struct Link {
    uint32_t channel[2];  // [LinkDir]
    bool up;
    uint16_t epoch;  // incremented on every down transition
  };

  // A scheduled fault action (EventKind::kFault, target = index).
  enum class FaultKind : uint8_t { kBlackholeOn, kBlackholeOff, kLoss, kRebootDown, kRebootUp };
  struct Fault {
    FaultKind kind;
    uint32_t target;  // link (blackhole, loss) or node (reboot)
    double value = 0;  // kLoss: the rate
  };
  void schedule_fault(TimeNs at, const Fault& f);
  void apply_fault(const Fault& f);
  // Link state change; both endpoints are told.
  void set_link(uint32_t link, bool up);
  uint32_t checked_link_of(NodeId node, PortId port) const;

  void start();
  void dispatch(const Event& ev);
  void prefetch(const Event& ev) const;  // a cache hint for the next event
  // Offers a transmit to the channel's sender (the wire is idle).
  void try_transmit(uint32_t channel);
  // After a call into `node`: offer transmit on its idle ports, re-arm wakeup.
  void after_node_call(uint32_t node);
  void update_wakeup(uint32_t node);
  void corrupt_frame(Channel& ch, rte_mbuf* pkt);
  // Files the channel's delivery at `time_ns` (scheduled now) or queues it behind the filed one.
  void schedule_delivery(uint32_t channel, int64_t time_ns, rte_mbuf* pkt, uint16_t epoch);
  // After a delivery on the channel ran: files the next one in flight, if any.
  void file_next_delivery(uint32_t channel);
  void mix_trace(uint64_t v) { trace_hash_ = (trace_hash_ ^ v) * 0x100000001B3ull; }

  uint64_t seed_;
  int64_t now_ns_ = 0;
  bool started_ = false;
  EventQueue queue_;
  std::vector<NodeSlot> nodes_;
  std::vector<uint32_t> port_channel_;  // node.first_port + port -> outgoing channel, kNone
  std::vector<Channel> channels_;
  std::vector<Link> links_;
  std::vector<Fault> faults_;
  uint64_t events_processed_ = 0;
  uint64_t trace_hash_ = 0xCBF29CE484222325ull;
};

}  // namespace sf::sim
