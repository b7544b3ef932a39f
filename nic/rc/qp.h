// Qp: one RC queue pair of the softfabric NIC, requester and responder
// (endpoint.md 1.3-1.10, IBA ch. 9). The verbs handle (ibv_qp) and the
// protocol engine are this one object; its definition is split by concern:
//   qp.cc        create, modify_qp (state machine and attribute checks), query, flush
//   qp_post.cc   post_send / post_recv
//   qp_tx.cc     requester packets (segmentation, AckReq), read responses, ACK/NAK/CNP frames
//   qp_rx.cc     source address / P_Key checks; responder: PSN check, duplicates,
//                SEND/WRITE/READ execution, access checks on every packet
//   qp_ack.cc    requester: ACK / NAK / RNR NAK / read-response handling, completions
//   qp_retx.cc   go-back-N rewind, retransmit timer, RNR wait, retry exhaustion
//   qp_cc.cc     the congestion-control seams (cc_seam.h)
// An MRC QP (QpType::kMrc, docs/mrc.md) is this same object with an
// mrc::Transport (nic/mrc/transport.h) that takes every datapath entry
// behind one predictable branch (`mrc_ != nullptr`); it shares the verbs
// state, rings, CQ pushes, MR checks, pacing and CC seam through friend access.
//
// Pure logic: every entry takes `TimeNs now`; nothing reads a clock. No
// allocation after create(): work queues are fixed rings, frames come from the
// mempool in QpEnv. The host (nic/host) owns the QP table (an array indexed by
// QPN), demultiplexes arrivals to on_rx(), and asks for frames with
// make_ctrl() / make_data() when the QP's pacing slot is due.
// Threading: the node's thread only (the app's verbs calls run there too).
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/time.h"
#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/int_shim.h"
#include "common/wire/psn.h"
#include "nic/cc/rate_sample.h"
#include "nic/rc/cc_seam.h"
#include "nic/rc/identifiers.h"
#include "nic/rc/srq.h"
#include "nic/rc/tx_header_cache.h"
#include "nic/verbs/cq.h"
#include "nic/verbs/mr.h"
#include "nic/verbs/verbs.h"

namespace sf::nic::mrc {
class Transport;
}

namespace sf::nic::rc {

using wire::Psn;

// kMaxSge, kMaxWr, kMaxMessageBytes: srq.h (with RecvWqe).
inline constexpr uint32_t kMaxRdAtomic = 16;   // outstanding READs per direction
// Zero-copy transmit (HostConfig::tx_zero_copy) for payload pieces of at
// least this size; smaller ones are cheaper to copy than to attach.
inline constexpr uint32_t kZeroCopyMinBytes = 512;

// One port's addresses as the QP needs them (GID table: docs/nic.md).
struct LocalAddr {
  wire::MacAddr mac;
  bool has_ipv4 = false;
  wire::Ipv4Addr ipv4;
  bool has_ipv6 = false;
  wire::Ipv6Addr ipv6;
  // A routed port's next hop: the destination MAC of every frame (instead of
  // the AH's dmac).
  bool has_gateway = false;
  wire::MacAddr gateway;
};

// Transport tunables shared by the QPs of a host.
struct RcConfig {
  uint32_t max_unacked_psns = 128;  // requester window (rxe RXE_MAX_UNACKED_PSNS)
  uint32_t ack_req_every_pkts = 64; // AckReq at least this often (rxe RXE_MAX_PKT_PER_ACK)
  TimeNs cnp_interval = TimeNs::from_us(50);
  uint8_t cnp_dscp = 48;
  bool ecn_capable = true;          // data frames carry ECT(0)
  // The P_Key table of the host's ports (ibv_query_pkey; a QP's pkey_index
  // indexes it). Entry 0 is the default partition, full member. At most
  // kMaxPkeys entries; an entry whose low 15 bits are 0 is invalid (unusable).
  std::vector<uint16_t> pkey_table = {wire::Bth::kDefaultPkey};
  // Seed of the host's unpredictable identifiers (MR key tags, QPN base,
  // initial PSNs an app draws with it): 0 in tests and sf-sim (their runs
  // stay deterministic by their own seed); sf-nic draws it from getrandom()
  // at start. Read at setup only, never on the data path (STYLE G2).
  uint64_t seed = 0;
};
inline constexpr size_t kMaxPkeys = 128;

// IBA 10.9.3 P_Key match (rxe pkey_match): the same partition (low 15 bits,
// not 0) and at least one of the two a full member (bit 15).
constexpr bool pkey_match(uint16_t a, uint16_t b) {
  return (a & 0x7FFFu) != 0 && (a & 0x7FFFu) == (b & 0x7FFFu) && ((a | b) & 0x8000u) != 0;
}

// The peer addressing of a connected QP's frames (RC and MRC: qp.cc).
void peer_addressing(const verbs::AhAttr& ah, const LocalAddr& local, bool ecn_capable, wire::L2Spec* l2,
                     wire::L3Spec* l3);

// Everything a QP needs from its host; outlives the QP.
struct QpEnv {
  rte_mempool* pool = nullptr;
  const verbs::MrTable* mrs = nullptr;
  const LocalAddr* local = nullptr;  // num_ports entries: port_num k's addresses are local[k - 1]
  const RcConfig* cfg = nullptr;
  uint8_t num_ports = 1;            // valid port_num values: 1..num_ports
  // Zero-copy transmit: the host's per-MR-slot shared info (index = Mr::handle);
  // nullptr = payload is copied.
  rte_mbuf_ext_shared_info* mr_shinfo = nullptr;
  // Line rate of each port (index port_num - 1); nullptr = 100 Gb/s each.
  // An MRC QP's default window is one BDP of its ports.
  const BitRate* port_rate = nullptr;
};

// What happened to an arriving frame (counted per QP).
enum class RxAction : uint8_t {
  kAccepted,         // in-sequence request or expected response, executed
  kDuplicate,        // PSN in the past: re-ACKed or READ re-executed
  kNakSeqSent,       // PSN ahead: one PSN-sequence-error NAK
  kOutOfSeqDropped,  // PSN ahead after the NAK was sent: silently dropped
  kRnrNakSent,       // SEND / WRITE-with-imm without a posted receive
  kNakInvalid,       // invalid request NAK (bad opcode sequence, length)
  kNakAccess,        // remote access error NAK (rkey, bounds, rights)
  kNakRemoteOp,      // remote operational error NAK (local failure on our side)
  kAckProcessed,     // ACK / NAK / RNR NAK that moved requester state
  kStaleResponse,    // ACK/NAK/response for a PSN already acknowledged
  kGhostResponse,    // response for a PSN never sent
  kBadResponse,      // malformed response (length, opcode where none expected)
  kCnp,              // CNP received
  kWrongState,       // the QP state does not accept this frame
  kBadSrc,           // source IP / GID is not the QP's remote address (ah_attr dgid): dropped
  kBadPkey,          // BTH P_Key does not match the QP's partition: dropped
  kLocProtErr,       // requester: a READ response's destination failed its lkey check: QP to ERR
  kCount
};
const char* to_string(RxAction a);
inline constexpr int kNumRxActions = static_cast<int>(RxAction::kCount);

struct QpCounters {
  std::array<uint64_t, kNumRxActions> rx{};
  uint64_t tx_data_pkts = 0;
  uint64_t tx_data_bytes = 0;      // frame bytes
  uint64_t tx_retransmit_pkts = 0;
  uint64_t tx_acks = 0;
  uint64_t tx_naks = 0;
  uint64_t tx_rnr_naks = 0;
  uint64_t tx_cnps = 0;
  uint64_t rx_cnps = 0;            // CC SEAM input: CNPs received (see cc_on_cnp)
  uint64_t rx_ce = 0;              // CE-marked data arrivals
  uint64_t timeouts = 0;
  uint64_t go_back = 0;            // rewinds (NAK, timeout, RNR, lost read response)
  uint64_t rnr_waits = 0;
  uint64_t alloc_failures = 0;
  uint64_t cq_overruns = 0;
  // Pacing time accounts (paced or not): after the first data frame, the time
  // between departures is their wire times at the rate + pace_lost_ns (the
  // driver served the QP more than a gap late, beyond what the burst bucket
  // keeps: not made up) + pace_idle_ns (due, but nothing it could send: no
  // WR, window full, RNR wait, paused; beyond the bucket) - the time made up
  // from the bucket (at most max_burst_sz at the rate; 0 without a bucket).
  uint64_t pace_lost_ns = 0;
  uint64_t pace_idle_ns = 0;
  // Frame bytes (like tx_data_bytes) of data frames sent from the bucket:
  // frames that were already a whole wire time overdue when the QP was
  // filed, i.e. sent back to back to make up lost or idle time. Always 0
  // with max_burst_sz = 0.
  uint64_t pace_burst_bytes = 0;
};

// The ACK-driven congestion control's view of a QP (qp_cc.cc; docs/cc.md
// "RC integration"): RTT samples from the NIC's transmit and receive times,
// the window and rate in force. Zero while the QP runs no ACK-driven CC.
struct QpCcStats {
  uint64_t acks = 0;             // ACK / NAK / read-response events delivered to the CC
  uint64_t rtt_samples = 0;      // of which with an RTT (Karn: not of a retransmitted packet)
  uint64_t rtt_sum_ns = 0;
  TimeNs rtt_min = TimeNs::max();
  TimeNs rtt_max{0};
  TimeNs rtt_last{0};
  uint64_t rtos = 0;             // retransmission timeouts delivered (cc_on_rto)
  uint64_t lost_bytes = 0;       // bytes declared lost by go-back-N (taken out of flight)
  uint64_t int_acks = 0;         // ACKs that carried an INT echo (with 0 records when no INT switch was on the path)
  uint64_t int_opened = 0;       // requests sent with an (empty) INT shim (HPCC)
  uint64_t int_unopened = 0;     // requests of an HPCC QP sent without one (no room: docs/cc.md)
  uint64_t int_echoed = 0;       // responder: ACKs that echoed a request's INT records
  // Swift remote_delay: ACKs that carried the responder's turnaround (t3 - t2), their sum
  uint64_t remote_delay_samples = 0;
  uint64_t remote_delay_sum_ns = 0;
  TimeNs rtt_avg() const { return TimeNs(rtt_samples == 0 ? 0 : static_cast<int64_t>(rtt_sum_ns / rtt_samples)); }
  TimeNs remote_delay_avg() const {
    return TimeNs(remote_delay_samples == 0 ? 0 : static_cast<int64_t>(remote_delay_sum_ns / remote_delay_samples));
  }
};

class Qp {
 public:
  Qp();
  ~Qp();
  Qp(const Qp&) = delete;
  Qp& operator=(const Qp&) = delete;

  // ---- verbs (control path; errno values like libibverbs) -------------------
  // Sets up a RESET QP with `qpn`; sizes the rings (allocates: control path).
  int create(const QpEnv& env, uint32_t qpn, verbs::Pd* pd, const verbs::QpInitAttr& init);
  void destroy();
  bool in_use() const { return in_use_; }
  // ibv_modify_qp: all-or-nothing; EINVAL for an illegal transition, a
  // missing required attribute, an attribute not allowed in the transition
  // or an out-of-range value. `now` arms nothing; it dates the flushes.
  int modify(const verbs::QpAttr& attr, int attr_mask, TimeNs now);
  int query(verbs::QpAttr* attr, verbs::QpInitAttr* init) const;
  // ibv_post_send / ibv_post_recv on a list of WRs (linked by `next`).
  // EINVAL (bad state, opcode, num_sge), ENOMEM (queue full); *bad names the
  // first WR not posted, every WR before it is posted (as in libibverbs).
  int post_send(verbs::SendWr* wr, verbs::SendWr** bad, TimeNs now);
  int post_recv(verbs::RecvWr* wr, verbs::RecvWr** bad, TimeNs now);

  // ---- MRC (QpType::kMrc; docs/mrc.md "Verbs") -------------------------------
  bool is_mrc() const { return mrc_ != nullptr; }
  // libmrc's mrc_modify_qp: the EV profile and transport knobs (`mask`:
  // verbs::kMrc* bits). EINVAL, nothing changed, mrc_error() says why: not an
  // MRC QP, a bad value, a profile field outside RESET/INIT.
  int modify_mrc(const verbs::MrcQpAttr& attr, int mask);
  // Why the last modify_mrc / modify(RTR) of an MRC QP was refused ("" if not).
  const char* mrc_error() const;
  // The transport (EV set, counters per QP and per EV); nullptr for RC.
  mrc::Transport* mrc() { return mrc_.get(); }
  const mrc::Transport* mrc() const { return mrc_.get(); }

  uint32_t qp_num() const { return qpn_; }
  verbs::QpState state() const { return state_; }
  verbs::Pd* pd() const { return pd_; }
  uint8_t port_num() const { return attr_.port_num; }
  // The host ports the QP uses. RC: its own port. An MRC QP that sprays sends
  // data on every port whose plane is up at both ends (the host asks it for a
  // frame of the port it serves, set_tx_port() first) and control frames on
  // ctrl_port().
  bool sends_on(uint8_t port) const {
    if (mrc_ != nullptr) [[unlikely]] return mrc_sends_on(port);
    return attr_.port_num == port;
  }
  uint8_t ctrl_port() const {
    if (mrc_ != nullptr) [[unlikely]] return mrc_ctrl_port();
    return attr_.port_num;
  }
  // A spraying MRC QP keeps one pacer per port (docs/mrc.md "Pacing a
  // spraying QP"): serving another port swaps that port's schedule in.
  void set_tx_port(uint8_t port) {
    if (pace_per_port_ && port != tx_port_) [[unlikely]] switch_pace_port(port);
    tx_port_ = port;
  }
  uint8_t tx_port() const { return tx_port_; }
  // An MRC QP that sprays (one pacer per port); false for RC.
  bool pace_per_port() const { return pace_per_port_; }
  // The addresses of port `port_num` (port 1's before the QP is bound).
  const LocalAddr& local_of(uint8_t port_num) const {
    return env_.local[port_num >= 1 && port_num <= env_.num_ports ? port_num - 1 : 0];
  }
  uint8_t priority() const { return attr_.ah_attr.sl & 7u; }
  uint32_t dest_qp() const { return attr_.dest_qp_num; }

  // ---- datapath (host) ------------------------------------------------------
  // A parsed, ICRC-checked frame for this QP. Does not take the mbuf.
  RxAction on_rx(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now);
  // ACK / NAK / CNP owed (sent ahead of data, not paced).
  // A pending ACK/NAK waits behind queued READ responses, so responses
  // leave in PSN order (an ACK past a READ then proves its data was lost).
  bool has_ctrl() const {
    if (mrc_ != nullptr) [[unlikely]] return mrc_has_ctrl();
    return ((ack_pending_ || nak_pending_) && read_count_ == 0) || cnp_pending_;
  }
  rte_mbuf* make_ctrl(TimeNs now);
  // A data frame (request or read response) may be built now (window,
  // RNR wait, read limit); pacing is the host's wheel.
  bool has_data(TimeNs now) const;
  // The next data frame. Precondition: has_data(now), checked by the caller
  // with nothing changed since (the host's transmit loop; not re-checked here).
  // A READ response whose MR check fails yields the remote access error NAK
  // instead (the QP goes to ERR); nullptr when nothing could be built.
  rte_mbuf* make_data(TimeNs now);
  // Earliest timer (retransmit, RNR wait end, CC); TimeNs::max() if none.
  // Inline: the host asks after every frame and every post.
  TimeNs next_deadline() const {
    if (!in_use_) return TimeNs::max();
    if (mrc_ != nullptr) [[unlikely]] return mrc_next_deadline();
    const TimeNs t = retx_deadline_ < rnr_until_ ? retx_deadline_ : rnr_until_;
    if (!cc_active_) return t;
    const TimeNs c = cc_next_deadline();
    return c < t ? c : t;
  }
  void advance(TimeNs now);

  // ---- pacing (nic/host's wheel reads these) ---------------------------------
  BitRate rate() const { return rate_; }
  // The rate limit and burst bucket (ibv_modify_qp_rate_limit's rate_limit
  // and max_burst_sz); BitRate(0) = no limit. Without congestion control the
  // limit is the pacing rate (0 = unpaced, the port's line rate); with it,
  // the pacing rate is min(CC rate, limit). The bucket is counted in wire
  // bytes (sf::wire_bytes, as the rate is) and holds max_burst_bytes / rate
  // of time at the current pacing rate; 0 = strict Carousel (the default).
  // Credit already held keeps its time across a rate change (a cut shrinks
  // it in bytes; a rise is clamped to the new B / rate at the next filing or
  // departure, the trimmed time counted as pace_idle_ns / pace_lost_ns), so
  // no burst exceeds B bytes beyond what strict pacing sends.
  void set_rate_limit(BitRate r, uint32_t max_burst_bytes) {
    rate_limit_ = r;
    attr_.rate_limit = static_cast<uint32_t>(std::min<uint64_t>(r.bps() / 1000, UINT32_MAX));  // query_qp
    pace_burst_bytes_ = max_burst_bytes;
    apply_cc_rate();
    pace_burst_ns_ = rate_.tx_time(pace_burst_bytes_);
  }
  BitRate rate_limit() const { return rate_limit_; }
  // The address vector's static rate (ah_attr.static_rate, an ibv_rate
  // value: IBV_RATE_2_5_GBPS = 2, ..., 0 = the port's rate): a second cap on
  // the pacing rate beside rate_limit, the smaller applying (InfiniBand's
  // static rate control; perftest --rate_limit_type HW). 0 for an unknown value.
  static BitRate static_rate_of(uint8_t ibv_rate);
  BitRate static_rate() const { return static_rate_; }
  uint32_t max_burst_bytes() const { return pace_burst_bytes_; }
  // Departure time of the next data frame (Carousel, endpoint.md 6.1, with a
  // burst bucket of B = max_burst_bytes): a frame scheduled for t makes the
  // next one due at max(now - B / rate, t + wire size / rate). The next
  // departure follows from the previous *scheduled* time, not from when the
  // driver got round to it, so serving a frame late by less than a gap costs
  // no rate. A QP served later than that (a descheduled process) keeps at
  // most B / rate of the time it lost: with B = 0 it starts again from now
  // and never bursts to catch up; with B > 0 at most B bytes leave back to
  // back (counted in pace_burst_bytes), then even gaps again. The time lost
  // beyond the bucket is counted in QpCounters::pace_lost_ns. May be before
  // `now` (credit from the bucket).
  TimeNs pace_next() const { return pace_next_; }
  // The host files the QP in its wheel at `now`: the next frame is due at
  // max(now, pace_next()), with pace_next() raised to at least now - B /
  // rate (an idle QP banks at most the bucket; the time it was due but had
  // nothing it could send beyond that is counted in pace_idle_ns; the first
  // frame ever banks nothing). Returns the due time (>= now).
  TimeNs file_departure(TimeNs now) {
    if (ctr_.tx_data_pkts == 0) {
      if (pace_next_ < now) pace_next_ = now;
    } else if (const TimeNs floor = now - pace_burst_ns_; pace_next_ < floor) {
      ctr_.pace_idle_ns += static_cast<uint64_t>((floor - pace_next_).ns());
      pace_next_ = floor;
    }
    pace_filed_ = now;
    return pace_next_ < now ? now : pace_next_;
  }
  // A data frame of `frame_bytes` left at `now` (>= its scheduled time).
  void on_departed(uint32_t frame_bytes, TimeNs now);

  // ---- CC seams (qp_cc.cc) --------------------------------------------------
  void cc_on_cnp(TimeNs now);
  void cc_on_tx_bytes(uint64_t bytes, TimeNs now);
  TimeNs cc_next_deadline() const;
  void cc_advance(TimeNs now);
  CnpGate& cnp_gate() { return cnp_gate_; }
  // Control path (after RTS: it restarts the ACK-driven CC's tracking): the
  // QP's congestion control (docs/cc.md); the CC starts at `line_rate`.
  // CcAlgorithm::kNone (the default) = no CC. The ACK-driven algorithms
  // (Swift, BBR, HPCC) run on RC QPs only; false (and no CC set) for a
  // choice cc_refusal() names (NSCC; any ACK-driven one on an MRC QP).
  bool set_congestion_control(const CcChoice& c, BitRate line_rate);
  const CongestionControl& congestion_control() const { return cc_; }
  bool cc_active() const { return cc_active_; }
  // Why `c` cannot run on a QP of this kind (nullptr: it can).
  static const char* cc_refusal(const CcChoice& c, bool mrc);
  // The ACK-driven CC's state: bytes in flight (payload of data packets sent
  // and neither acknowledged nor declared lost), the window (kNoWindow
  // without one), RTT statistics.
  uint64_t cc_inflight_bytes() const { return cc_inflight_; }
  uint64_t cc_window() const { return cc_window_; }
  const QpCcStats& cc_stats() const { return cc_stats_; }
  // The host, for the frame it is about to hand to on_rx(): the INT shim it
  // stripped from it (`present`), its records and tail flags, and an echo's
  // turnaround (IntShim::turnaround_ns). An echo in an ACK is HPCC's input
  // (and Swift's remote delay); a request's records are echoed in the next
  // ACK.
  void set_rx_int(std::span<const wire::IntHop> hops, bool present, uint8_t flags, uint32_t turnaround_ns = 0) {
    rx_int_ = hops;
    rx_int_present_ = present;
    rx_int_flags_ = flags;
    rx_int_turnaround_ns_ = turnaround_ns;
  }

  const QpCounters& counters() const { return ctr_; }
  // Introspection for tests and telemetry.
  Psn expected_psn() const { return epsn_; }
  Psn acked_psn() const { return acked_psn_; }
  Psn next_psn() const { return next_psn_; }
  Psn sent_next_psn() const { return sent_next_psn_; }  // one past the highest PSN sent
  uint32_t sq_outstanding() const { return static_cast<uint32_t>(sq_posted_ - sq_done_); }
  uint32_t rq_posted() const { return rq_count_; }
  Srq* srq() const { return srq_; }
  uint8_t retry_left() const { return retry_left_; }

 private:
  friend class mrc::Transport;
  // The per-frame forwards to an MRC QP's Transport: inline, defined at the
  // end of this header (after transport.h), so an MRC QP pays no extra call
  // for them (NicNode asks each QP for them after every frame).
  inline bool mrc_has_ctrl() const;
  inline bool mrc_sends_on(uint8_t port) const;
  inline uint8_t mrc_ctrl_port() const;
  inline TimeNs mrc_next_deadline() const;
  // Every move of state_ goes through here: an MRC QP's cached deadline
  // depends on the state (mrc::Transport::next_deadline's rule), and rc
  // code moves to ERR on its own (to_error, check_overrun).
  inline void set_state(verbs::QpState s);
  RxAction on_rx_mrc(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now);

  struct SendWqe {
    uint64_t wr_id;
    verbs::WrOpcode opcode;
    bool signaled;
    bool solicited;
    bool fence;  // IBV_SEND_FENCE: wait until earlier READs completed
    verbs::WcStatus local_err;  // kSuccess, or the error found at post time
    uint8_t num_sge;
    std::array<verbs::Sge, kMaxSge> sge;
    uint32_t length;
    uint64_t remote_addr;
    uint32_t rkey;
    uint32_t imm;
    Psn first_psn;
    uint32_t npkts;
    uint32_t read_done_bytes;  // READ: response bytes placed so far
    uint32_t read_done_pkts;
    uint16_t mrc_rqmsn;  // MRC: WRITE_IMM messages before this one (METH rqmsn)
    Psn last_psn() const { return first_psn + (npkts - 1); }
  };
  struct ReadCtx {
    uint64_t va;     // RETH VA (an offset for a ZERO_BASED MR), checked again per response
    uint32_t rkey;
    uint32_t length;
    uint32_t sent_bytes;
    Psn psn;  // PSN of the next response packet
    Psn end;  // one past the PSN of the last response
  };
  enum class InMsg : uint8_t { kNone, kSend, kWrite };

  // qp.cc
  void to_error(verbs::WcStatus sq_status, uint64_t failed_sq_index, verbs::WcStatus rq_status, TimeNs now);
  void flush_all(TimeNs now) { to_error(verbs::WcStatus::kWrFlushErr, UINT64_MAX, verbs::WcStatus::kWrFlushErr, now); }
  void reset_queues();
  bool push_cqe(verbs::Cq* cq, const verbs::Wc& wc);
  // A completion was lost to a full CQ: the QP goes to ERR (async CQ error).
  void check_overrun(TimeNs now);
  void build_spec();
  // qp_tx.cc
  // One request / read response: headers from tx_hdr_ or built from spec_ + f.
  rte_mbuf* build(const TxFields& f, const uint8_t* payload_contig, const SendWqe* wqe, uint32_t offset,
                  uint32_t payload_bytes);
  rte_mbuf* make_request(TimeNs now);
  // The payload bytes [off, off + n) of `w` lie in live MRs of the QP's PD
  // (checked again per packet; post_send checked them first).
  bool sges_readable(const SendWqe& w, uint32_t off, uint32_t n) const;
  rte_mbuf* make_read_response(TimeNs now);
  uint32_t reads_in_flight() const;
  // qp_rx.cc
  RxAction on_request(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now);
  RxAction on_duplicate(const wire::FrameInfo& fi, TimeNs now);
  RxAction execute(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now);
  RxAction nak(wire::NakCode code, Psn psn, bool to_err, verbs::WcStatus rq_status, TimeNs now);
  void rnr_nak(Psn psn);
  bool scatter_recv(const rte_mbuf* m, uint32_t off, uint32_t n);
  // The receive the message in progress lands in: the RQ's oldest, or the
  // copy taken from the SRQ.
  const RecvWqe& recv_wqe() const { return srq_ != nullptr ? srq_wqe_ : rq_[rq_head_]; }
  bool recv_available() const { return srq_ != nullptr ? !srq_->empty() : rq_count_ > 0; }
  // The first packet of a SEND or a WRITE_WITH_IMM takes the receive.
  void claim_recv() {
    if (srq_ != nullptr) srq_wqe_ = srq_->take();
    recv_claimed_ = true;
    recv_offset_ = 0;
  }
  // The remote address vector and partition (IBA 9.6.1.5 / 10.9.3): the
  // source IP of `fi` is the QP's dgid, its BTH P_Key matches the QP's.
  RxAction check_peer(const wire::FrameInfo& fi) const;
  void complete_recv(verbs::WcStatus st, uint32_t byte_len, bool imm, uint32_t imm_v, bool write_imm);
  // qp_ack.cc
  RxAction on_response(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now);
  RxAction on_read_response(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now);
  // Completes every non-READ WQE whose PSNs end at or before `psn`; a READ
  // still missing data whose range the ACK covers means lost responses.
  void ack_upto(Psn psn, TimeNs now);
  void complete_send(uint64_t abs, verbs::WcStatus st);
  void note_progress(TimeNs now);
  // The rings are a power of two long (at least the capacity asked for), so
  // an absolute index maps to its slot with a mask, not a division.
  SendWqe& sq_at(uint64_t abs) { return sq_[abs & sq_mask_]; }
  const SendWqe& sq_at(uint64_t abs) const { return sq_[abs & sq_mask_]; }
  RecvWqe& rq_at(uint32_t k) { return rq_[(rq_head_ + k) & rq_mask_]; }
  // A successful WQE completes silently unless signalled (ibv sq_sig_all too).
  bool reports_success(const SendWqe& w) const { return w.signaled || init_.sq_sig_all != 0; }
  // qp_retx.cc
  void go_back(Psn psn, TimeNs now);
  bool outstanding() const { return sent_next_psn_ != acked_psn_ + 1; }
  void arm_retx(TimeNs now);
  void fail_oldest(verbs::WcStatus st, TimeNs now);

  bool in_use_ = false;
  bool cq_overrun_ = false;
  QpEnv env_;
  uint32_t qpn_ = 0;
  verbs::Pd* pd_ = nullptr;
  verbs::QpInitAttr init_;
  verbs::QpAttr attr_;
  verbs::QpState state_ = verbs::QpState::kReset;  // written by set_state() only
  uint32_t mtu_ = 1024;
  uint32_t mtu_shift_ = 10;  // mtu_ = 1 << mtu_shift_
  wire::RoceFrameSpec spec_;  // peer addressing, built at RTR
  bool av_set_ = false;       // spec_ holds a remote address (RTR reached)
  uint16_t pkey_ = wire::Bth::kDefaultPkey;  // cfg pkey_table[attr_.pkey_index]

  // requester
  std::vector<SendWqe> sq_;
  uint64_t sq_mask_ = 0;    // sq_.size() - 1
  uint64_t sq_posted_ = 0;  // absolute WQE counters
  uint64_t sq_done_ = 0;    // completed (oldest not completed)
  uint64_t sq_next_ = 0;    // WQE being transmitted
  uint32_t tx_pkt_ = 0;     // packet index inside sq_next_
  Psn next_psn_;            // PSN for the next posted WQE
  Psn acked_psn_;           // everything up to here is acknowledged
  Psn sent_next_psn_;       // one past the highest PSN sent
  uint32_t pkts_since_ackreq_ = 0;
  uint8_t retry_left_ = 0;
  uint8_t rnr_left_ = 0;
  TimeNs retx_deadline_ = TimeNs::max();
  TimeNs rnr_until_ = TimeNs::max();
  bool read_rewound_ = false;  // a lost read response was asked for again

  // responder
  std::vector<RecvWqe> rq_;
  uint32_t rq_mask_ = 0;    // rq_.size() - 1
  uint32_t rq_head_ = 0;
  uint32_t rq_count_ = 0;
  Psn epsn_;
  uint32_t msn_ = 0;
  bool nak_seq_sent_ = false;
  InMsg in_msg_ = InMsg::kNone;
  bool recv_claimed_ = false;
  // A QP created with an SRQ takes its receives from it: the WQE of the
  // message in progress is this copy (srq.h), and rq_ stays empty.
  Srq* srq_ = nullptr;
  RecvWqe srq_wqe_{};
  uint32_t recv_offset_ = 0;
  // The open WRITE: its RETH VA (an offset for a ZERO_BASED MR) and rkey,
  // checked again (MrTable::check) for every packet before it is placed.
  uint64_t write_va_ = 0;
  uint32_t write_rkey_ = 0;
  uint32_t write_left_ = 0;
  uint32_t write_total_ = 0;
  std::array<ReadCtx, kMaxRdAtomic> reads_{};
  uint32_t read_head_ = 0;
  uint32_t read_count_ = 0;
  bool ack_pending_ = false;
  bool nak_pending_ = false;
  uint8_t nak_syndrome_ = 0;
  Psn nak_psn_;
  bool cnp_pending_ = false;
  CnpGate cnp_gate_{TimeNs::from_us(50)};

  // pacing and congestion control (qp_cc.cc)
  void apply_cc_rate();
  // ACK-driven CC (cc_acks_): one entry per PSN sent, at psn & mask (the
  // PSN window keeps every sent, unacknowledged PSN within max_unacked_psns
  // + 1 of acked_psn_, so live entries never collide).
  struct TxStamp {
    static constexpr uint32_t kEmpty = UINT32_MAX;
    uint32_t psn = kEmpty;      // 24-bit PSN, kEmpty = free slot
    uint32_t bytes = 0;         // payload bytes (0: READ request)
    TimeNs sent{0};             // last transmission (the NIC's now)
    uint64_t end_seq = 0;       // byte sequence after this packet (first transmission)
    TxRateStamp rate;           // delivery-rate state at first transmission
    bool in_flight = false;
    bool retransmitted = false; // Karn: its ACK gives no RTT / rate sample
  };
  // A data packet (request) with PSN `psn` and `bytes` of payload left at `now`.
  void cc_track_tx(Psn psn, uint32_t bytes, TimeNs now);
  // PSNs in (from, to]: acknowledged (sum their bytes, free the slots) or
  // declared lost (taken out of flight, kept for a late ACK's sample).
  uint64_t cc_release(Psn from, Psn to, bool lost, uint64_t* ack_seq);
  // An ACK / NAK / read response arrived (acked_psn_ moved, or not);
  // `trigger` is the PSN it names (its packet's send time gives the RTT).
  // Releases (cc_acked_psn_, acked_psn_].
  void cc_feedback(AckKind kind, Psn trigger, TimeNs now);
  void cc_rto(TimeNs now);
  void cc_reset_tracking();
  uint32_t next_request_bytes(const SendWqe& w) const;
  // qp_int.cc (HPCC's INT at the QP)
  void open_int(rte_mbuf* m);
  void take_rx_int(const wire::IntHop* hops, uint32_t n, uint8_t flags, TimeNs now);
  void echo_int(rte_mbuf* m, TimeNs now);
  BitRate rate_{0};
  BitRate rate_limit_{0};
  BitRate static_rate_{0};  // the address vector's static_rate (ibv_rate); 0 = none
  CongestionControl cc_{FixedRate(BitRate(0))};
  bool cc_active_ = false;
  bool cc_acks_ = false;          // the CC is an AckController (cc_needs_acks)
  std::vector<TxStamp> cc_tx_;    // allocated by set_congestion_control (control path)
  uint32_t cc_tx_mask_ = 0;
  Psn cc_acked_psn_;              // acked_psn_ as the CC last saw it
  uint64_t cc_snd_nxt_ = 0;       // payload bytes first sent (byte sequence)
  uint64_t cc_ack_seq_ = 0;       // highest byte sequence acknowledged
  uint64_t cc_inflight_ = 0;
  uint64_t cc_window_ = kNoWindow;
  DeliveryRateSampler cc_rs_;
  QpCcStats cc_stats_;
  std::span<const wire::IntHop> rx_int_{};
  bool rx_int_present_ = false;
  uint8_t rx_int_flags_ = 0;
  uint32_t rx_int_turnaround_ns_ = 0;
  bool cc_int_ = false;           // HPCC, or Swift with remote_delay: requests carry an INT shim
  uint8_t cc_int_open_flags_ = 0; // IntTail::kFlagTurnaround for Swift's remote_delay
  // responder: the latest request's INT records, echoed in the next ACK
  // (with its turnaround, now - int_rx_at_, when the request asked for it)
  std::array<wire::IntHop, wire::kIntMaxHops> int_rx_hops_{};
  uint8_t int_rx_n_ = 0;
  uint8_t int_rx_flags_ = 0;
  bool int_rx_pending_ = false;
  TimeNs int_rx_at_{0};
  TimeNs pace_next_{0};
  TimeNs pace_filed_{0};         // when file_departure() last filed the QP
  uint32_t pace_burst_bytes_ = 0;  // max_burst_sz, wire bytes
  TimeNs pace_burst_ns_{0};      // pace_burst_bytes_ at rate_

  QpCounters ctr_;
  // qp_tx.cc: the last MIDDLE / LAST request headers, reused with the PSN
  // and AckReq patched; emptied by build_spec().
  TxHeaderCache tx_hdr_;

  // MRC QPs only (created with QpType::kMrc).
  std::unique_ptr<mrc::Transport> mrc_;
  uint8_t tx_port_ = 0;  // the port the host is serving (MRC spraying)
  // Spraying MRC QP: pace_next_ / pace_filed_ are the schedule of port
  // tx_port_ (the others parked in the Transport), and a frame's gap is its
  // wire time at rate_ x the planes the QP sends on, so each port runs at
  // rate_ / planes and the QP at rate_.
  bool pace_per_port_ = false;
  void switch_pace_port(uint8_t port);
  uint32_t mrc_pace_planes() const;
};

}  // namespace sf::nic::rc

// mrc::Transport needs only a declaration of rc::Qp (it reaches the QP's
// state from transport.cc), so it is complete here, after rc::Qp.
#include "nic/mrc/transport.h"

namespace sf::nic::rc {

inline bool Qp::mrc_has_ctrl() const { return mrc_->has_ctrl(); }
inline bool Qp::mrc_sends_on(uint8_t port) const { return mrc_->sends_on(port); }
inline uint8_t Qp::mrc_ctrl_port() const { return mrc_->ctrl_port(); }
inline TimeNs Qp::mrc_next_deadline() const { return mrc_->next_deadline(); }
inline void Qp::set_state(verbs::QpState s) {
  state_ = s;
  if (mrc_ != nullptr) mrc_->invalidate_deadline();
}

}  // namespace sf::nic::rc
