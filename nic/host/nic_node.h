// NicNode: the softfabric NIC as an sf::Node. One node carries many hosts
// (DESIGN section 4: one sf-nic process can be 8 incast senders); each host
// has its ports (verbs port_num 1..N, each with its own MAC, IPv4/IPv6
// address and gateway when configured so: seed 002's planes), QP table (a
// preallocated array indexed by QPN), MRs and CQs. A QP sends on the port it
// is bound to (its INIT port_num). The node
//  * receives: PFC/PAUSE -> the port's PfcReceiver; RoCEv2 -> parse, check
//    the arriving port's MAC/IP and UDP 4791, verify the ICRC over the
//    (possibly chained) mbuf, demultiplex by destination QPN within the
//    port's host, hand to the Qp; every rejected frame is freed and counted
//    by RxDrop reason on the port it arrived at;
//  * transmits, per port: a due PFC frame first, then ACK/NAK/CNP control
//    frames, then data from the port's timing wheel (per-QP pacing rate,
//    Carousel: departure = max(now, previous departure + wire size / rate)),
//    skipping QPs whose priority the peer has paused;
//  * optionally models a slow host: a receive ring drained at a rate, whose
//    backlog asserts PFC (PfcGenerator with hysteresis).
// The app (the workload that calls the verbs) runs on the node's thread via
// App::poll(), after each receive burst and on its own wakeups.
// Threading: one thread (the driver's). Allocation: construction and verbs
// control calls only; the packet path allocates nothing but mbufs.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/node.h"
#include "common/pfc/pfc_generator.h"
#include "common/pfc/pfc_receiver.h"
#include "nic/host/neighbor.h"
#include "nic/host/nic_config.h"
#include "nic/host/timing_wheel.h"
#include "nic/rc/qp.h"
#include "nic/rc/srq.h"
#include "nic/verbs/cq.h"
#include "nic/verbs/mr.h"

namespace sf::nic {

// Why the node dropped a received frame.
enum class RxDrop : uint8_t {
  kMalformed,    // parse_frame rejected it (truncated, bad lengths, checksum ...)
  kNotContiguous,// headers not in the first segment
  kNotRoce,      // neither RoCEv2 nor MAC Control
  kWrongMac,     // destination MAC is not the host's (nor broadcast/PFC)
  kWrongIp,      // destination IP is not the host's
  kBadIcrc,
  kUnknownQp,    // no QP with that number in the host
  kMrcEndpoint,  // MRC endpoint request/response no MRC QP of the host takes (unknown peer, bad op)
  kRxRingFull,   // receive backlog full
  kBadInt,       // BTH INT flag set but no valid INT shim (or a chained frame): docs/cc.md
  kCount
};
const char* to_string(RxDrop d);
inline constexpr int kNumRxDrops = static_cast<int>(RxDrop::kCount);

struct NicPortCounters {
  uint64_t rx_pkts = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_pkts = 0;
  uint64_t tx_bytes = 0;
  uint64_t tx_ctrl_pkts = 0;
  uint64_t tx_pfc_frames = 0;
  uint64_t rx_pfc_frames = 0;
  uint64_t rx_int_frames = 0;   // frames whose INT shim was stripped (records of ACKs go to HPCC)
  uint64_t paused_skips = 0;  // a due QP was set aside because its priority is paused
  std::array<uint64_t, kNumRxDrops> drops{};
  uint64_t dropped() const {
    uint64_t s = 0;
    for (uint64_t d : drops) s += d;
    return s;
  }
};

// The workload on the node's thread (sf-nic's perftest loop, a test script).
class App {
 public:
  virtual ~App() = default;
  // Called after each receive burst and at wakeups; may call the verbs.
  virtual void poll(TimeNs now) = 0;
  // When poll() wants to run next without input; TimeNs::max() = only on input.
  virtual TimeNs next_wakeup(TimeNs) const { return TimeNs::max(); }
  // The node touched host `host` (a frame received or sent on its ports, a
  // QP timer fired, a post): its CQs, send queue room or memory may have
  // changed. An app may poll only what was touched (PerftestEngine).
  virtual void touch_host(size_t /*host*/) {}
};

// One host's device state (the object behind a verbs Context).
class Host {
 public:
  Host(const HostConfig& cfg, rte_mempool* pool, std::vector<PortId> ports);
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  const HostConfig& config() const { return cfg_; }
  // The addresses of verbs port `port_num` (1-based; no check): its MAC, GID
  // table and gateway. local() is port 1's.
  const rc::LocalAddr& local(uint8_t port_num) const { return locals_[port_num - 1]; }
  const rc::LocalAddr& local() const { return locals_[0]; }
  uint8_t num_ports() const { return static_cast<uint8_t>(ports_.size()); }
  PortId node_port(uint8_t port_num) const { return ports_[port_num - 1]; }

  // QPNs are first_qpn() + slot, first_qpn() >= kFirstQpn (QPN 0 and 1 are
  // special in IB): kFirstQpn with RcConfig::seed 0, else drawn from the seed.
  static constexpr uint32_t kFirstQpn = 0x11;
  uint32_t first_qpn() const { return first_qpn_; }
  rc::Qp* qp_by_qpn(uint32_t qpn) {
    const uint32_t i = qpn - first_qpn_;
    return qpn >= first_qpn_ && i < qps_.size() && qps_[i].in_use() ? &qps_[i] : nullptr;
  }
  rc::Qp& qp_slot(uint32_t i) { return qps_[i]; }
  const rc::Qp& qp_slot(uint32_t i) const { return qps_[i]; }
  uint32_t qp_capacity() const { return static_cast<uint32_t>(qps_.size()); }

  // Verbs object management (control path).
  verbs::Pd* alloc_pd(verbs::Context* ctx);
  int dealloc_pd(verbs::Pd* pd);
  verbs::Mr* reg_mr(verbs::Pd* pd, void* addr, uint64_t length, int access, int* err);
  // EBUSY while zero-copy frames referencing the MR are alive (not yet freed
  // by the driver / the peer); the caller retries after they left.
  int dereg_mr(verbs::Mr* mr);
  // Zero-copy frames alive that reference `mr` (0 without tx_zero_copy).
  uint32_t mr_frames_in_flight(const verbs::Mr* mr) const;
  verbs::Cq* create_cq(verbs::Context* ctx, uint32_t cqe);
  int destroy_cq(verbs::Cq* cq);
  rc::Qp* create_qp(verbs::Pd* pd, const verbs::QpInitAttr& init, int* err);
  int destroy_qp(rc::Qp* qp);
  // Shared receive queues are owned here like PDs and CQs (freed with the
  // host when an application never destroyed them). EINVAL for a PD not of
  // this host; destroy_srq EBUSY while a QP uses it.
  rc::Srq* create_srq(verbs::Pd* pd, uint32_t max_wr, uint32_t max_sge, int* err);
  int destroy_srq(rc::Srq* srq);
  const verbs::MrTable& mrs() const { return mrs_; }
  // Line rate of verbs port `port_num` (set by NicNode; an MRC QP's default
  // window is one BDP of its ports).
  void set_port_rate(uint8_t port_num, BitRate r) { port_rates_[port_num - 1] = r; }
  // The resolved next hop of verbs port `port_num` (Neighbors): every frame
  // the port sends goes to this MAC from now on.
  void set_gateway_mac(uint8_t port_num, const wire::MacAddr& mac) {
    locals_[port_num - 1].has_gateway = true;
    locals_[port_num - 1].gateway = mac;
  }
  // The L3 configuration of verbs port `port_num`.
  const PortL3& port_l3(uint8_t port_num) const {
    return port_num - 1u < cfg_.port_l3.size() ? cfg_.port_l3[port_num - 1] : cfg_.l3;
  }

 private:
  HostConfig cfg_;
  std::vector<rc::LocalAddr> locals_;  // per port (QpEnv::local points here)
  std::vector<PortId> ports_;
  std::vector<BitRate> port_rates_;  // per port (QpEnv::port_rate points here)
  rte_mempool* pool_;
  verbs::MrTable mrs_;
  std::vector<rte_mbuf_ext_shared_info> mr_shinfo_;  // per MR slot, tx_zero_copy only
  std::vector<rc::Qp> qps_;
  std::vector<std::unique_ptr<verbs::Cq>> cqs_;
  std::vector<std::unique_ptr<verbs::Pd>> pds_;
  std::vector<std::unique_ptr<rc::Srq>> srqs_;
  uint32_t next_pd_ = 1;
  uint32_t first_qpn_ = kFirstQpn;
};

class NicNode final : public Node {
 public:
  // Verbs ports one host may have (seed 002: 8 planes; port_num is 8 bits).
  static constexpr size_t kMaxHostPorts = 32;
  // Throws std::invalid_argument for an inconsistent config (a port used by
  // two hosts, a host without ports or address, port count mismatch).
  NicNode(const NicConfig& cfg, rte_mempool* pool);
  NicNode(const NicNode&) = delete;
  NicNode& operator=(const NicNode&) = delete;

  // ---- sf::Node
  uint16_t num_ports() const override { return static_cast<uint16_t>(ports_.size()); }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override;
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) override;
  TimeNs next_wakeup(TimeNs now) const override;
  void advance(TimeNs now) override;
  bool tracks_tx_ports() const override { return true; }
  PortId next_tx_port(PortId from, TimeNs now) override;

  size_t num_hosts() const { return hosts_.size(); }
  Host& host(size_t i) { return *hosts_[i]; }
  const Host& host(size_t i) const { return *hosts_[i]; }
  // The workload run on this node's thread (not owned; nullptr = none).
  void set_app(App* app) { app_ = app; }
  // Whether received frames' ICRC is verified (default: yes; a bad one is a
  // kBadIcrc drop). Off only where no frame can arrive corrupted: sf-sim's
  // `--icrc trust` (docs/sf-sim.md "Cost"), on a plan with no corrupting
  // link and no injected frames. Senders compute and write the ICRC either way.
  void set_icrc_check(bool on) { icrc_check_ = on; }
  // The time of the latest driver call: what verbs calls made between
  // bursts use as `now`.
  TimeNs now() const { return now_; }

  // A QP may have become able to send (posted WR, state change, arrival):
  // file it in its port's wheel / control queue. Called by the verbs layer.
  void kick(size_t host, rc::Qp& qp);

  // Link state of a node port (a host port): a down port sends nothing; its
  // host's MRC QPs stop using that plane at once and tell their peers (ERTH
  // port status), RC QPs bound to it wait (their timers run). Up again: they
  // resume. Ports start up.
  void set_port_up(PortId port, bool up);
  bool port_up(PortId port) const { return ports_[port].up; }
  // The driver's (the simulator's) link event: the same as set_port_up, so a
  // host link going down in sf-sim stops the plane and sends the port status.
  void set_port_link(PortId port, bool up, TimeNs now) override {
    now_ = now;  // the event's time, not the last call's (port-status timers start from it)
    set_port_up(port, up);
  }

  // Per node port (a host's port_num k is node port host(h).node_port(k)).
  const NicPortCounters& counters(PortId port) const { return ports_[port].ctr; }
  const NicPortConfig& port_config(PortId port) const { return ports_[port].cfg; }
  const PfcReceiver& pfc_rx(PortId port) const { return ports_[port].pfc_rx; }
  const PfcGenerator& pfc_tx(PortId port) const { return ports_[port].pfc_tx; }
  uint64_t rx_backlog_bytes(PortId port) const { return ports_[port].backlog_bytes_total; }
  // ARP / ND and next hops of every node port (neighbor.h).
  const Neighbors& neighbors() const { return *nb_; }

 private:
  struct Port {
    NicPortConfig cfg;
    uint32_t host = 0;
    uint8_t port_num = 1;                   // the host's verbs port number of this node port
    bool up = true;                         // set_port_up()
    const rc::LocalAddr* addr = nullptr;    // its addresses (in the host)
    PfcReceiver pfc_rx;
    PfcGenerator pfc_tx;
    TimingWheel wheel;
    std::vector<uint32_t> ctrl;      // FIFO ring of QP slots with control frames owed
    uint32_t ctrl_head = 0;
    uint32_t ctrl_count = 0;
    std::vector<uint8_t> in_ctrl;    // per QP slot
    std::vector<uint32_t> paused;    // QP slots set aside while their priority is paused
    std::vector<rte_mbuf*> ring;     // receive backlog (rx_drain_rate > 0)
    uint32_t ring_head = 0;
    uint32_t ring_count = 0;
    std::array<uint64_t, 8> backlog_bytes{};
    uint64_t backlog_bytes_total = 0;
    TimeNs drain_next{0};
    NicPortCounters ctr;
    wire::ParseOptions rx_parse;     // receive parse options (cfg.mrc_trimmed_dscp_mask)
    Port(const NicPortConfig& c, uint32_t host_index, uint32_t qps);
  };

  // Received mbufs the node is done with, freed in bulk
  // (rte_pktmbuf_free_bulk) when full and at the end of each burst.
  struct FreeBatch {
    std::array<rte_mbuf*, 64> m{};
    uint32_t n = 0;
    void add(rte_mbuf* x) {
      m[n++] = x;
      if (n == m.size()) flush();
    }
    void flush() {
      if (n > 0) rte_pktmbuf_free_bulk(m.data(), n);
      n = 0;
    }
  };
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  // Handles one received frame; frees it into `done`. Returns the QP slot
  // (of the port's host) the frame was handed to, kNoSlot if none: the
  // caller schedules that QP once per run of frames for it.
  uint32_t process(PortId port, rte_mbuf* m, TimeNs now, FreeBatch& done);
  // An MRC endpoint request / response (BTH DestQP 2, docs/mrc.md): handed to
  // every MRC QP of the host whose peer sent it.
  void endpoint_frame(uint32_t host, const wire::FrameInfo& fi, TimeNs now);
  void drain(PortId port, TimeNs now);
  // What schedule() does but the wheel: files the QP's timer and its
  // control frames.
  void file_timer_and_ctrl(uint32_t host, uint32_t slot);
  void update_pfc(PortId port, TimeNs now);
  void schedule(uint32_t host, uint32_t slot, TimeNs now);
  // schedule()'s wheel part for an MRC QP: filed on every port it sends on.
  void schedule_mrc(uint32_t host, uint32_t slot, TimeNs now);
  // schedule() for a QP that has just sent a frame on `p`, with its
  // has_data(now) already known (no second call).
  void schedule_after_frame(Port& p, uint32_t host, uint32_t slot, TimeNs now, bool has_data);
  void run_app(TimeNs now);
  static uint8_t frame_priority(const rte_mbuf* m);
  static uint32_t total_qps(const NicConfig& cfg);

  // ---- wakeup bookkeeping (cost follows the work: no scan over every port)
  // Every port of `host` may have changed (an entry point acted on the host).
  void mark_host(uint32_t host) const;
  // Files the marked ports' deadlines and the due ones' next; sets their
  // transmit candidacy at `now`.
  void settle(TimeNs now) const;
  // Files the port's earliest deadline after `now` (wheel, PFC refresh,
  // neighbour probe, pause expiry for waiting QPs), as next_wakeup counts it,
  // and sets its transmit candidacy: transmit(now) may send or change state.
  void settle_port(PortId port, TimeNs now) const;
  struct PortDue {
    TimeNs at;
    PortId port;
    bool operator>(const PortDue& o) const { return at > o.at || (at == o.at && port > o.port); }
  };
  mutable std::vector<uint8_t> port_marked_;
  mutable std::vector<PortId> marked_ports_;
  mutable std::vector<TimeNs> port_due_;    // each port's filed deadline (max: none)
  mutable std::vector<PortDue> due_heap_;   // lazy min-heap: stale entries dropped at the top
  mutable std::vector<uint64_t> tx_cand_;   // bitmap: ports to offer transmit
  std::vector<PortId> ring_ports_;          // ports with a receive ring or PFC generation (advance, drain)

  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<Port> ports_;
  // QP timers (retransmit, RNR, CC) of every host, one wheel: id = the
  // host's first id + QP slot. timer_at_ is each id's filed time.
  std::vector<uint32_t> host_first_id_;
  std::vector<uint32_t> id_host_;
  std::vector<TimeNs> timer_at_;
  TimingWheel timers_;
  std::unique_ptr<Neighbors> nb_;
  rte_mempool* pool_;
  App* app_ = nullptr;
  bool in_app_ = false;
  bool icrc_check_ = true;
  TimeNs now_{0};
};

}  // namespace sf::nic
