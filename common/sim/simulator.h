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
// Threading: by default one thread and the order above. A partitioned
// simulator (Simulator(seed, Partitioned{threads})) splits the nodes into
// `threads` partitions, each with its own event heap and thread (the caller's
// thread runs partition 0), and runs them in windows of the lookahead: the
// smallest delay of a link between two partitions (> 0; a zero-delay link
// must stay inside one). Within a window [T, T + lookahead), T the earliest
// pending event anywhere, each partition runs its own events; a frame sent
// to another partition cannot arrive before the window ends, so it waits in
// an outbox and is filed there at the barrier. Its order of events at equal
// times is (time, origin node, origin's count): the node whose event
// scheduled it and how many that node had scheduled before, which is the
// same whatever the partitions, so a run with 1 or N threads and any
// partition map is the same run, event for event (trace_hash() then folds
// per-node hashes); it differs from the default order, which it does not
// replace. A link change or fault is applied on each end by its own event,
// at the same time. Nodes must not share mutable state across partitions
// (each Node is called from its partition's thread only); the mbuf pool is
// shared and must be thread-safe (DPDK's default ring ops are). The
// Simulator owns the in-flight mbufs (freed on destruction) and holds
// references to nodes, which must outlive it.
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

#include <atomic>
#include <barrier>
#include <exception>
#include <mutex>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
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

// The partitioned engine (see "Threading" above): `threads` partitions, one
// thread each.
struct Partitioned {
  uint32_t threads = 1;
};

class Simulator {
 public:
  explicit Simulator(uint64_t seed = 1);
  // The partitioned engine with p.threads (1..256) partitions; nodes go to
  // partition id mod threads unless set_partition() says otherwise.
  Simulator(uint64_t seed, Partitioned p);
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
  // Partitioned engine: the partition of `node` (< threads), before the first run.
  void set_partition(NodeId node, uint32_t partition);

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
  TimeNs now() const { return TimeNs(parts_[0]->now_ns); }
  // Something outside the events changed `node` between runs (an app
  // attached to it): its next_wakeup() is read again.
  void wake(NodeId node);

  // ---- inspection
  size_t num_nodes() const { return nodes_.size(); }
  size_t num_links() const { return links_.size(); }
  std::optional<NodeId> find_node(std::string_view name) const;
  const std::string& node_name(NodeId id) const { return nodes_.at(id).name; }
  bool link_up(LinkId link) const { return links_.at(link).side[0].up; }
  double link_loss(LinkId link) const { return channels_[links_.at(link).channel[0]].loss; }
  // Whether frames on this direction of the link are blackholed now.
  bool blackholed(LinkId link, LinkDir dir) const {
    return channels_[links_.at(link).channel[static_cast<size_t>(dir)]].blackhole != 0;
  }
  // The link on `port` of `node`, if connected.
  std::optional<LinkId> link_of(NodeId node, PortId port) const;
  LinkStats stats(LinkId link, LinkDir dir) const;
  LinkStats total_stats(LinkId link) const;  // both directions summed
  uint64_t events_processed() const;
  // Hash over every dispatched event (time, kind, target, frame length): equal
  // for identical runs, different as soon as one event differs. Partitioned:
  // each node's events hashed in its order, the nodes' hashes folded by id.
  uint64_t trace_hash() const;
  // Partitioned engine: threads (0 for the default engine), the lookahead
  // (known after the first run; TimeNs::max() when no link joins two
  // partitions), windows run so far.
  uint32_t threads() const { return partitioned_ ? static_cast<uint32_t>(parts_.size()) : 0; }
  TimeNs lookahead() const { return lookahead_ns_ >= kNoLookahead ? TimeNs::max() : TimeNs(lookahead_ns_); }
  uint64_t windows() const { return windows_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr int64_t kNoLookahead = INT64_MAX / 4;  // no link joins two partitions: one window per run

  struct NodeSlot {
    Node* node;
    std::string name;
    uint16_t num_ports;
    uint32_t first_port;       // index of port 0 in port_channel_
    int64_t wakeup_ns;         // pending kWakeup time; INT64_MAX when none
    int64_t last_advance_ns;   // time of the last advance(); -1 before any
    bool tracks_tx;            // node.tracks_tx_ports(): offers go to next_tx_port()'s ports only
    uint32_t part = 0;         // partition
    uint64_t scheduled = 0;    // partitioned: events this node's events scheduled (the order key)
    uint64_t trace = 0xCBF29CE484222325ull;  // partitioned: hash of this node's events
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
    LinkStats stats;  // the sender's side; the receiver's: rx_*
    uint16_t blackhole = 0;  // blackholes covering this direction (port and node ones may overlap)
    uint8_t src_side = 0;    // Link::side of the sender (0: connect()'s first endpoint)
    // The receiver's side (its partition's thread writes these):
    alignas(64) uint64_t rx_delivered_pkts = 0;
    uint64_t rx_delivered_bytes = 0;
    uint64_t rx_down_dropped_pkts = 0;
    // Deliveries in flight: a channel's arrive in the order they were sent
    // (departure times increase, the delay is fixed), so only the earliest is
    // filed in the event heap (`deliver_filed`); the later ones wait here, in
    // a ring of a power-of-two size, and the next is filed when one arrives.
    bool deliver_filed = false;
    uint32_t fifo_head = 0;
    uint32_t fifo_count = 0;
    std::vector<InFlight> fifo{};
  };
  // A link as each end sees it (the default engine changes both at once).
  struct LinkSide {
    bool up = true;
    uint16_t epoch = 0;  // incremented on every down transition
  };
  struct Link {
    uint32_t channel[2];  // [LinkDir]
    LinkSide side[2];     // [0]: connect()'s first endpoint, [1]: its second
  };

  // A scheduled fault action (EventKind::kFault, target = index).
  // kSides: both ends (the default engine); else the end (0, 1) the event's
  // partition applies.
  static constexpr uint8_t kSides = 2;
  enum class FaultKind : uint8_t { kBlackholeOn, kBlackholeOff, kLoss, kRebootDown, kRebootUp };
  struct Fault {
    FaultKind kind;
    uint32_t target;  // link (blackhole, loss) or node (reboot)
    double value = 0;  // kLoss: the rate
    uint8_t side = kSides;  // blackhole, loss: the end applying it
  };
  // A frame for another partition, filed there at the window's end.
  struct Outgoing {
    int64_t time_ns;
    uint64_t seq;
    rte_mbuf* pkt;
    uint32_t channel;
    uint16_t epoch;
  };
  // One partition: its events, clock and outboxes (the default engine has one).
  struct Part {
    EventQueue queue;
    int64_t now_ns = 0;
    uint64_t events = 0;
    uint64_t seq = 0;               // default engine: the next seq
    uint32_t origin = kNone;        // partitioned: the node whose event runs (kNone: setup)
    uint64_t trace = 0xCBF29CE484222325ull;  // default engine's trace hash
    std::vector<std::vector<Outgoing>> outbox;  // [destination partition]
    alignas(64) std::atomic<int64_t> next_ns{0};  // published at a barrier
  };

  void schedule_fault(TimeNs at, const Fault& f, uint32_t node);
  void apply_fault(Part& pt, const Fault& f);
  // Link state change: the default engine changes both ends and tells both;
  // set_link_side one end, told (its partition's event).
  void set_link(Part& pt, uint32_t link, bool up);
  void set_link_side(Part& pt, uint32_t link, uint8_t side, bool up, bool call);
  uint32_t checked_link_of(NodeId node, PortId port) const;
  uint32_t side_node(uint32_t link, uint8_t side) const { return channels_[links_[link].channel[side]].src_node; }
  // The order key of an event scheduled now in `pt` (see "Threading").
  uint64_t next_seq(Part& pt) {
    if (!partitioned_) return pt.seq++;
    if (pt.origin == kNone) return setup_seq_++;
    return (static_cast<uint64_t>(pt.origin + 1) << 40) | nodes_[pt.origin].scheduled++;
  }
  void push(Part& pt, int64_t time_ns, EventKind kind, uint32_t target, rte_mbuf* pkt = nullptr, uint16_t aux = 0) {
    pt.queue.push_seq(time_ns, next_seq(pt), kind, target, pkt, aux);
  }
  Part& part_of(uint32_t node) { return *parts_[nodes_[node].part]; }
  // The node an event is about (its partition runs it).
  uint32_t owner(const Event& ev) const;

  void start();
  void run_window(Part& pt, int64_t limit_ns);  // every event before limit_ns
  void run_partitioned(int64_t end_ns);
  void partition_loop(uint32_t p, int64_t end_ns);
  void drain_outboxes(uint32_t p);
  void worker(uint32_t p);
  void dispatch(Part& pt, const Event& ev);
  void prefetch(const Event& ev) const;  // a cache hint for the next event
  // Offers a transmit to the channel's sender (the wire is idle).
  void try_transmit(Part& pt, uint32_t channel);
  // After a call into `node`: offer transmit on its idle ports, re-arm wakeup.
  void after_node_call(Part& pt, uint32_t node);
  void update_wakeup(Part& pt, uint32_t node);
  void corrupt_frame(Channel& ch, rte_mbuf* pkt);
  // Files the channel's delivery at `time_ns` (order key seq) or queues it behind the filed one.
  void schedule_delivery(Part& pt, uint32_t channel, int64_t time_ns, uint64_t seq, rte_mbuf* pkt, uint16_t epoch);
  // After a delivery on the channel ran: files the next one in flight, if any.
  void file_next_delivery(Part& pt, uint32_t channel);
  void mix_trace(Part& pt, uint32_t node, uint64_t v) {
    uint64_t& h = partitioned_ ? nodes_[node].trace : pt.trace;
    h = (h ^ v) * 0x100000001B3ull;
  }

  uint64_t seed_;
  bool partitioned_ = false;
  bool started_ = false;
  std::vector<std::unique_ptr<Part>> parts_;
  std::vector<NodeSlot> nodes_;
  std::vector<uint32_t> port_channel_;  // node.first_port + port -> outgoing channel, kNone
  std::vector<Channel> channels_;
  std::vector<Link> links_;
  std::vector<Fault> faults_;
  uint64_t setup_seq_ = 0;  // partitioned: order keys of events scheduled outside any node's event
  int64_t lookahead_ns_ = 0;
  uint64_t windows_ = 0;
  // Partitioned threads: parts_[0] runs on the caller's thread.
  std::vector<std::thread> workers_;
  std::unique_ptr<std::barrier<>> barrier_;
  int64_t run_end_ns_ = 0;  // the current run_until's end (written before the start barrier)
  bool stopping_ = false;
  // A node that threw in a partition's thread: every thread leaves the run at
  // the window's barrier and run_until rethrows it on the caller's thread.
  std::mutex error_lock_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
  void record_error();
};

}  // namespace sf::sim
