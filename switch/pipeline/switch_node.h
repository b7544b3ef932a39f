// SwitchNode: the switch pipeline as a Node (DESIGN.md section 1): parse,
// classify (DSCP/PCP -> TC -> PG, queue), forward (L2 FDB with learning and
// flooding, IPv4/IPv6 LPM with ECMP, SRv6 uN), MMU admission, WRED/ECN, then
// per-port strict+DWRR scheduling on transmit. Pure logic: time comes in as
// `now`, randomness from a seeded Rng; no ethdev, no allocation per packet.
//
// Threading: one lcore calls every method. A sharded switch (ShardedSwitch,
// switch_node_shard.cc, docs/architecture.md "Sharding") runs one SwitchNode
// per datapath lcore, each owning the RX and TX of its ports. Ownership:
// receive() takes every mbuf; transmit() hands them back to the driver.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/node.h"
#include "common/rng.h"
#include "common/wire/frame_parser.h"
#include "switch/config/switch_config.h"
#include "switch/fwd/fdb.h"
#include "switch/fwd/route_table.h"
#include "switch/fwd/router_if.h"
#include "switch/lossless/pfc_watchdog.h"
#include "switch/lossless/port_pfc.h"
#include "switch/lossless/port_watchdog.h"
#include "switch/mmu/mmu.h"
#include "switch/pipeline/admission_stage.h"
#include "switch/pipeline/burst_learner.h"
#include "switch/pipeline/classify_stage.h"
#include "switch/pipeline/counters.h"
#include "switch/pipeline/credit_link.h"
#include "switch/pipeline/egress_queue.h"
#include "switch/pipeline/forward_stage.h"
#include "switch/pipeline/lookup_stage.h"
#include "switch/pipeline/port_state.h"
#include "switch/pipeline/switch_port.h"
#include "switch/pipeline/trimmer.h"
#include "switch/qos/scheduler.h"
#include "switch/qos/wred.h"

struct rte_mempool;

namespace sf::sw {

// The drop cause of an MMU refusal.
DropCause drop_cause_of(DropReason r);

struct ShardLink;  // switch/pipeline/shard_ring.h

// How a shard's SwitchNode is built (ShardedSwitch): `tables_from` is the
// first shard, whose FDB (created `concurrent_fdb`) and route tables the
// others share; only the first shard ages the FDB.
struct ShardInit {
  const class SwitchNode* tables_from = nullptr;
  bool concurrent_fdb = false;
};

class SwitchNode final : public Node {
 public:
  // `cfg` must outlive the node. `port_macs[i]` is port i's own MAC (the router
  // MAC that L3 traffic is addressed to); the app takes it from the device when
  // the config has none. `ctrl_pool` supplies the mbufs of the PFC frames the
  // switch sends (nullptr: it honours PFC but never sends any). Throws at
  // setup (std::runtime_error) if tables fail.
  SwitchNode(const SwitchConfig& cfg, std::span<const std::array<uint8_t, 6>> port_macs,
             rte_mempool* ctrl_pool = nullptr, const ShardInit& shard = {});
  // The node keeps a reference to its config: a temporary would dangle
  // (seen: every route lookup then missed, silently), so it does not compile.
  SwitchNode(SwitchConfig&& cfg, std::span<const std::array<uint8_t, 6>> port_macs,
             rte_mempool* ctrl_pool = nullptr, const ShardInit& shard = {}) = delete;
  ~SwitchNode() override;
  // The route table's sizes for `cfg` (its IPv4 / IPv6 routes and their
  // depths); sf-sim sizes its EAL memory from route_table_dpdk_bytes() of it.
  static RouteTableLimits route_limits(const SwitchConfig& cfg);

  uint16_t num_ports() const override { return static_cast<uint16_t>(ports_.size()); }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override;
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) override;
  TimeNs next_wakeup(TimeNs now) const override;
  void advance(TimeNs now) override;
  // Transmit offers (sf-sim, Node::next_tx_port; switch_node_tx.cc "Transmit
  // offers"): the ports with a queued packet, a PFC frame owed or due, a
  // received pause to refresh, a watchdog or credit FC, found from two
  // bitmaps kept as packets are queued and PFC state changes, not by a scan.
  bool tracks_tx_ports() const override { return track_offers_; }
  PortId next_tx_port(PortId from, TimeNs now) override;
  // Off: tracks_tx_ports() says no and sf-sim offers every idle port (the
  // reference the tracked offers must equal; set before the simulator's add_node).
  void set_offer_tracking(bool on) { track_offers_ = on; }

  // Queues paused by hand (bit q), on top of those paused by received PFC.
  void set_paused(PortId port, uint8_t queue_mask) { ports_[port].paused = queue_mask; }
  // Queues the scheduler skips: set by hand or paused by PFC / PAUSE (as of
  // the last transmit or receive on the port).
  uint8_t paused(PortId port) const { return ports_[port].paused | ports_[port].pfc.paused_queues(); }
  const PfcReceiver& pfc_rx(PortId port) const { return ports_[port].pfc.rx(); }
  const PfcGenerator& pfc_tx(PortId port) const { return ports_[port].pfc.tx(); }
  // `now` of the latest receive / transmit / advance call (for counters that
  // include a running interval, e.g. a pause in progress).
  TimeNs last_now() const { return now_; }

  const PortCounters& counters(PortId port) const { return ports_[port].ctr; }
  uint64_t queue_bytes(PortId port, uint8_t q) const { return ports_[port].queues[q].bytes(); }
  uint32_t queue_packets(PortId port, uint8_t q) const { return ports_[port].queues[q].packets(); }
  uint32_t held_packets(PortId port, uint8_t pg) const { return ports_[port].held[pg].packets(); }
  // PFC watchdog of `port` (PFC_WD); nullptr when the port has none.
  const PfcWatchdog* pfc_wd(PortId port) const { return ports_[port].wd ? &ports_[port].wd->timers() : nullptr; }
  // Storm / restore events in order (the first kWdLogCapacity; the total is counted).
  struct PfcWdLogEntry {
    TimeNs at;
    uint16_t port = 0;
    uint8_t queue = 0;
    bool storm = false;  // false: restored
  };
  static constexpr size_t kWdLogCapacity = 1024;
  const std::vector<PfcWdLogEntry>& pfc_wd_log() const { return wd_log_; }
  uint64_t pfc_wd_events() const { return wd_events_; }
  const Mmu& mmu() const { return mmu_; }
  // Credit-based link FC state of a CREDIT_FC port (nullptr: the port runs PFC).
  const CreditPort* credit(PortId port) const { return ports_[port].credit ? &ports_[port].credit->fc() : nullptr; }
  const Fdb& fdb() const { return *fdb_; }
  // Frames received through the express prefix of a pass (receive_express),
  // the others through the stages: which way frames took, for tests and
  // benchmarks (the outcome is the same either way).
  uint64_t express_frames() const { return express_frames_; }
  // Router interfaces (INTERFACE table; nullptr without one): switch/fwd/router_if.h.
  const RouterIf* router_if() const { return rif_.get(); }
  void clear_watermarks();

  // ---- port state (switch_node_ports.cc, port_state.h, docs/switch.md "Port state")
  // Operationally up = admin up AND link up. A port going down has its egress
  // queues flushed (counted drops, cause link_down, cells back to the pool) and
  // leaves flooding and ECMP; what still arrives on an admin-down port, or is
  // forwarded to a down port, is a counted port_down drop. Called on the
  // lcore that owns the port (its shard); the simulator calls set_port_link.
  void set_port_admin(PortId port, bool up, TimeNs now);
  void set_port_link(PortId port, bool up, TimeNs now) override;
  // Blackhole: the link stays up and the port stays in flooding and ECMP,
  // but every frame received on it or forwarded to it is dropped (blackhole).
  void set_port_blackhole(PortId port, bool on);
  // Random loss: each frame received on the port or forwarded to it is
  // dropped (random_loss) with probability `rate` (0 = off). Throws
  // std::invalid_argument when rate is not in [0, 1].
  void set_port_loss(PortId port, double rate);
  // Reboot: every egress queue and hold FIFO of the ports this node owns is
  // flushed (link_down), learned FDB entries are removed (static ones stay),
  // PFC XOFF is withdrawn as the buffer empties. Counters and port state stay.
  void reset(TimeNs now) override;
  bool port_oper_up(PortId port) const { return states_->oper_up(port); }
  // The driver's link state of a port, asked by the datapath when it is
  // about to leave out a port it believes link-down (a flood copy, a unicast
  // packet): a link that came up since the control thread's last poll
  // counts at once (at most one probe per port per kLinkProbeInterval; in
  // between, the last probe's answer stands, so a port another shard owns
  // stays usable from the probe that saw it up until its owner applies it).
  // None (the simulator): link changes come only through set_port_link.
  using LinkProbe = bool (*)(void* ctx, PortId port);
  void set_link_probe(LinkProbe probe, void* ctx) {
    link_probe_ = probe;
    link_probe_ctx_ = ctx;
    next_probe_.assign(ports_.size(), TimeNs(0));
    probe_up_.assign(ports_.size(), 0);
  }
  static constexpr TimeNs kLinkProbeInterval = TimeNs::from_us(100);
  const PortStates& port_states() const { return *states_; }
  // Requests from other threads (telemetry, link poller); see PortStates.
  PortStates& port_requests() const { return *states_; }

  // Receive stages: frames per stage pass and how far ahead stage A
  // prefetches frame data (classify_stage.h).
  static constexpr uint16_t kStageBurst = kRxStageBurst;
  static constexpr uint16_t kPrefetchAhead = kRxPrefetchAhead;

  // ---- sharding (switch_node_shard.cc) ----
  // Joins a sharded switch: `link` (outlives the node) names the ports this
  // shard owns and its rings; `buf` holds the switch-wide pool counters.
  void attach_shard(ShardLink* link, SharedBuffer* buf);
  // Takes in what other shards sent: packets for this shard's ports (egress
  // admission, WRED/ECN, enqueue) and release notes for cells of its ports'
  // PGs (release, PFC). Returns whether anything arrived.
  bool shard_pump(TimeNs now);
  // Whether a shard_pump() would find something (read-only, any lcore's view).
  bool shard_pending() const;
  // Held packets whose egress queue now has room move on. Cells released by
  // another shard raise the shared pool's free count (alpha x free
  // thresholds) without this shard seeing a release: its driver calls this
  // every loop iteration while holding(), the one-thread driver after every
  // transmit of another shard.
  void shard_recheck_holds(TimeNs now);
  bool holding() const { return held_pgs_ != 0; }

 private:
  // A port and its components (switch_port.h).
  using Port = SwitchPort;
  static constexpr uint64_t kNotIdle = SwitchPort::kNotIdle;
  // One stage pass over pkts[0, n), n <= kStageBurst (switch_node_rx.cc), the
  // only receive path (every port, every frame): stage A (classify_stage.h),
  // stage B (lookup_stage.h), stage C (learn: burst_learner.h, forward:
  // forward_stage.h; kSlow frames: slow_frame()), stage D (admission_stage.h).
  void receive_stages(uint16_t in, rte_mbuf** pkts, uint16_t n, TimeNs now);
  // The pass's express prefix (switch_node_rx.cc): stages A to C frame by
  // frame for the leading frames of the common shape (straight IPv4 / UDP,
  // L2, unicast destination in the FDB's cache on another port), each copy
  // straight into its run; returns how many it took (the rest: the stages).
  uint16_t receive_express(uint16_t in, rte_mbuf** pkts, uint16_t n, TimeNs now);
  // Its step for a frame whose source must be learned (switch_node_rx.cc).
  [[gnu::noinline]] int32_t express_learn(uint16_t in, rte_mbuf* m, uint64_t lo, TimeNs now);
  // ---- transmit offers and wakeups (switch_node_tx.cc "Transmit offers")
  // Bit p of tx_ports_: port p may have a queued packet (set on every push,
  // cleared lazily when found empty). Bit p of ctl_ports_: port p may have
  // PFC / watchdog / credit work or timers (ctl_active), set when its PFC
  // state changes; next_wakeup() reads these ports only.
  void mark_tx(uint16_t p) { tx_ports_[p >> 6] |= uint64_t{1} << (p & 63); }
  void mark_ctl(uint16_t p) { ctl_ports_[p >> 6] |= uint64_t{1} << (p & 63); }
  static bool ctl_active(const Port& p) { return p.ctl_active(); }
  static bool queues_empty(const Port& p) { return p.queues_empty(); }
  // The empty scheduler picks of the offer rounds that skipped the idle port
  // (each moves the DWRR turn by one), applied before the next transmit()
  // or when the port goes down, so the schedule is the one of offering every
  // idle port every round.
  void settle_idle(Port& p, uint64_t rounds);
  mutable std::vector<uint64_t> tx_ports_;
  mutable std::vector<uint64_t> ctl_ports_;
  uint64_t offer_rounds_ = 0;  // next_tx_port(0) calls: offer rounds begun
  bool track_offers_ = true;
  // Received-pause state of `port` at `now`, as a queue mask.
  uint8_t refresh_pfc_paused(Port& port, TimeNs now);
  // XOFF / XON for the priorities of lossless PG (port, pg) from its occupancy.
  // Inline: the check that nothing is or should be asserted (most calls).
  void update_pfc(uint16_t port, uint8_t pg, TimeNs now) {
    if (!pfc_idle(port, pg)) update_pfc_slow(port, pg, now);
  }
  void update_pfc_slow(uint16_t port, uint8_t pg, TimeNs now);
  // Whether update_pfc(port, pg) does nothing now: no pfc_enable priority of
  // a lossless profile maps to the PG, or none is asserted and none should be.
  bool pfc_idle(uint16_t port, uint8_t pg) const { return ports_[port].pfc.idle(mmu_, port, pg); }
  // A PFC frame for `port` if one is due (one mbuf from ctrl_pool_).
  rte_mbuf* pfc_frame(Port& port, TimeNs now);
  // Stage C's slow step for one frame stage A marked kSlow (full
  // parse_frame(): oversize, malformed, credit and MAC control frames,
  // ARP / ND for the router interfaces, IPv4 options, fragments, SRv6 ...),
  // at its place in the pass: what the fast steps do, from the full parse.
  void slow_frame(uint16_t in_port, rte_mbuf* m, TimeNs now);
  // Stage C forwarding, shared by the fast steps and slow_frame(), after
  // classification and learning: the decision of forward_stage.h, then the
  // header rewrite, counters and enqueue() of each copy (or the counted drop).
  // IPv4 (TTL already checked): `t` is the LPM result for the destination.
  void forward_v4(uint16_t in, QueuedPkt& pkt, wire::EthHeader* eth, wire::Ipv4Header* v4, uint16_t sp, uint16_t dp,
                  std::optional<RouteTarget> t);
  void forward_v6(uint16_t in, QueuedPkt& pkt, wire::EthHeader* eth, wire::Ipv6Header* v6, uint16_t sp, uint16_t dp);
  // L2: `out` is the FDB port of a unicast destination (nullopt: flood).
  void forward_l2(uint16_t in, QueuedPkt& pkt, std::optional<uint16_t> out);
  // ---- router interfaces (switch_node_router.cc, switch/fwd/router_if.h)
  // An ARP / ND frame (pkt.mbuf, classified) for our interfaces: answered
  // out of `in`, taken or dropped; false: not one, forward it as before.
  bool router_rx(uint16_t in, QueuedPkt& pkt);
  // A routed packet whose next hop is unresolved: sent as its ARP request /
  // NS when one is due, else dropped (no_neighbor).
  void neighbor_miss(uint16_t in, QueuedPkt& pkt, const NextHop& nh);
  std::shared_ptr<RouterIf> rif_;  // shared by the shards

  // A received PAUSE / PFC frame (parsed as `f`); consumes nothing.
  void on_mac_control(uint16_t in_port, const wire::FrameInfo& f, TimeNs now);

  // PFC watchdog (switch_node_watchdog.cc). Received pause state and frames
  // are reported as they happen; wd_service() runs the timers due at `now`
  // and applies storms (ignore pauses, flush) and restorations.
  void wd_service(uint16_t port, TimeNs now);
  void wd_flush(uint16_t port, uint8_t queue);

  // Packet trimming (switch_node_trim.cc; the cut: trimmer_, trimmer.h):
  // cuts `p` to its headers and queues it on the trim queue instead of
  // dropping it for `cause`; counts and drops it when it cannot be trimmed
  // or queued.
  void trim(QueuedPkt p, DropCause cause);
  std::unique_ptr<Trimmer> trimmer_;  // SWITCH_TRIMMING; null without it
  void drop(uint16_t in_port, rte_mbuf* m, DropCause cause);
  // Admits one copy (`p` describes it) and queues it, holds it at ingress
  // (lossless PG whose egress queue is at its limit), or drops it counted.
  // In stage C (run_defer_: not a CREDIT_FC port's frame, not in slow_frame)
  // the copy joins the run of copies waiting with the same (PG, egress port,
  // queue) instead (the QueuedRun hand-off to stage D, admission_stage.h);
  // the run is admitted by flush_run() at the next other key, before a kSlow
  // frame and at the end of the stage pass, with the outcome of enqueue_one()
  // copy by copy (nothing else in stage C reads or changes what admission does).
  void enqueue(const QueuedPkt& p) {
    if (st_->faulty() != 0 && egress_fault(p)) [[unlikely]] return;  // port state: dropped
    if (!run_defer_) return enqueue_one(p);
    run_.add(p, [this] { flush_run(); });
  }
  void enqueue_one(const QueuedPkt& p);
  // Stage D: admits the waiting run, at once (enqueue_run) where that is
  // exact, else copy by copy.
  void flush_run();
  static QueuedPkt* run_slots(void* ctx, uint32_t key);  // QueuedRun::SlotsFor
  // The whole run into its egress queue in one step (admit_run_whole,
  // admission_stage.h) when the port components leave it to the MMU (no
  // watchdog drop, nothing held ahead, no shard); false: nothing done.
  bool enqueue_run(const QueuedPkt* run, uint16_t n);
  // Ingress-admitted packet into its egress queue: WRED/ECN, then push.
  void to_egress(const QueuedPkt& p, const Ticket& t);
  // Moves held packets whose egress queue now has room (head of line per PG).
  void drain_held();
  // Returns a queued packet's cells (ingress and egress) and updates PFC; the
  // ingress part goes back to the owning shard when that is another one.
  void release_cells(uint16_t in, uint8_t pg, uint16_t out, uint8_t q, const Ticket& t) {
    if (shard_ != nullptr && !shard_owns(in)) return shard_release_remote(in, pg, out, q, t);  // shard
    mmu_.release(in, pg, out, q, t);
    update_pfc(in, pg, now_);
  }

  // ---- sharding (switch_node_shard.cc) ----
  bool shard_owns(uint16_t port) const;
  // An ingress-admitted packet for another shard's port: into the ring to it.
  void shard_forward(QueuedPkt p, const Ticket& t);
  // A packet from another shard (ingress admitted there): the egress half of enqueue().
  void shard_accept(QueuedPkt p);
  // Egress trim verdict for a packet from another shard (switch_node_trim.cc):
  // cuts it, shrinks its ingress ticket to the trimmed size (the rest goes
  // back to the owner as a release note) and admits it to the trim queue.
  void shard_trim(QueuedPkt p, DropCause cause);  // shard
  // Egress part released here, ingress part sent to the owner as a release note.
  void shard_release_remote(uint16_t in, uint8_t pg, uint16_t out, uint8_t q, const Ticket& t);
  // Credit slots of another shard's CREDIT_FC port `in` freed here: a credit
  // note to the port's shard, which frees them (shard_credit_freed,
  // switch_node_credit.cc) when it takes the note in.
  void shard_credit_remote(uint16_t in, uint8_t vl, uint8_t slots);
  void shard_credit_freed(uint16_t in, uint8_t vl, uint8_t slots);
  ShardLink* shard_ = nullptr;
  bool ages_fdb_ = true;

  // ---- port state (switch_node_ports.cc)
  // The packet's egress port is down, blackholed or (by a draw) lossy:
  // drops it counted and returns true.
  bool egress_fault(const QueuedPkt& p);
  // Drops the frames of a burst arriving on a faulty port (admin down,
  // blackhole, loss draws); returns how many are left, compacted in place.
  uint16_t ingress_faults(uint16_t in, std::span<rte_mbuf*> pkts);
  void apply_port_bits(uint16_t port, uint8_t bits, TimeNs now);
  // Every egress queue of `port` emptied: counted drops of `cause`.
  void flush_port(uint16_t port, DropCause cause);
  // Requests from PortStates (other threads), applied by advance().
  void apply_requests(TimeNs now);
  // Port `p` is admin up with its link believed down: asks the driver
  // (set_link_probe); true when the link is up and the port now is too.
  // `force` asks even within kLinkProbeInterval of the last probe.
  bool probe_link(uint16_t p, bool force = false);
  // Whether `p` is operationally up, probing a port believed link-down.
  bool usable(uint16_t p, bool force = false) { return st_->oper_up(p) || probe_link(p, force); }
  LinkProbe link_probe_ = nullptr;
  void* link_probe_ctx_ = nullptr;
  std::vector<TimeNs> next_probe_;  // per port: no probe before
  std::vector<uint8_t> probe_up_;   // per port: the last probe's answer
  std::vector<uint8_t> flood_to_;   // forward_l2 with a port down: the ports that get a copy
  std::shared_ptr<PortStates> states_;  // shared by the shards
  PortStates* st_ = nullptr;            // states_.get()
  uint64_t req_seen_ = 0;
  uint64_t reset_seen_ = 0;  // false: a shard that shares another's FDB

  // ---- credit-based link FC (switch_node_credit.cc) ----
  // Start of slow_frame(): the slots charged if the frame (`m`) is dropped unclassified.
  void credit_begin_rx(uint16_t in, const rte_mbuf* m);
  // After classification (stage C, slow_frame): sets the VL and slots the
  // packet holds (0xFF: none) and makes it the packet in hand.
  void credit_on_arrival(uint16_t in, QueuedPkt& pkt);
  // A flooded packet: its slots are freed now, the copies hold none.
  void credit_release_flooded(uint16_t in, QueuedPkt& pkt);
  // The packet in hand (to_egress): its slots are freed if it is dropped.
  void credit_in_hand(const QueuedPkt& pkt) { credit_hand_.set(pkt); }
  // drop(): frees the dropped packet's slots.
  void credit_on_drop(uint16_t in);
  // A credit update frame arrived (consumed).
  void on_credit_frame(Port& port, rte_mbuf* m, TimeNs now);
  // The credit update owed by `port`, if one is due (one ctrl_pool_ mbuf).
  rte_mbuf* credit_frame(Port& port);
  // A packet left `port` from queue q: spend its credit, free its ingress slot.
  void credit_on_dequeue(Port& port, int q, const QueuedPkt& pkt);
  // Frees the ingress slots a queued packet holds. A path that frees a
  // queued packet other than through transmit() must call it, or call
  // credit_in_hand(pkt) right before drop().
  void credit_release(const QueuedPkt& pkt);
  TimeNs credit_wakeup(TimeNs now) const;
  CreditInHand credit_hand_;  // the slots the packet in hand holds (credit_link.h)
  bool credit_kick_ = false;  // an update became due outside receive/advance: run again now

  const SwitchConfig& cfg_;
  QueueArena queue_arena_;  // every port's rings (declared before ports_: outlives them)
  std::vector<Port> ports_;
  Mmu mmu_;
  std::shared_ptr<Fdb> fdb_;  // shared by the shards of a sharded switch
  std::shared_ptr<RouteTable> routes_;  // read-only after setup
  uint32_t held_pgs_ = 0;  // number of non-empty hold FIFOs
  size_t held_rr_ = 0;     // hold FIFO (port * 8 + pg) drain_held() starts after
  Srv6Table srv6_;  // SRv6 uN (forward_stage.h); empty without cfg.srv6
  // FDB learning and lookups of the burst in progress (burst_learner.h).
  BurstLearner l2_;
  // The hand-offs of one receive stage pass, A -> B, C and B -> C (members,
  // not locals: not built again every pass; receive_stages is not re-entered).
  std::array<RxMeta, kRxStageBurst> rx_meta_;
  LookupBurst rx_found_;
  // Copies waiting for admission as one run (enqueue()): stage C -> D.
  QueuedRun run_;
  uint64_t express_frames_ = 0;
  bool run_defer_ = false;  // stage C in progress: enqueue() defers into run_
  rte_mempool* ctrl_pool_ = nullptr;
  TimeNs now_{0};  // `now` of the call in progress (receive / transmit / advance)
  Rng rng_;
  TimeNs next_age_;
  std::vector<PfcWdLogEntry> wd_log_;  // capacity kWdLogCapacity, reserved at setup
  uint64_t wd_events_ = 0;
  bool any_wd_ = false;
};

}  // namespace sf::sw
