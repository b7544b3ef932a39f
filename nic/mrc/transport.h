// mrc::Transport: the MRC protocol engine of one MRC QP (docs/mrc.md
// "Transport"). An MRC QP is an rc::Qp created with QpType::kMrc: the verbs
// handle, its state machine, SQ/RQ rings, CQ pushes, MR checks, pacing wheel
// accounting and the CC seam stay rc::Qp's; rc::Qp owns a Transport and hands
// it every datapath entry (on_rx, has_ctrl / make_ctrl, has_data / make_data,
// next_deadline, advance) behind one predictable branch (`mrc_ != nullptr`),
// so the RC fast path is unchanged otherwise. Shared state is reached through
// friend access to rc::Qp (the Transport is part of the QP, not a client of
// it): `q_.sq_at()`, `q_.push_cqe()`, `q_.to_error()`, `q_.env_`, ...
//
// Requester: segments WRITE / WRITE_IMM into MRC data packets (METH + full
// RETH each, ImmDt on the last), one PSN per packet, a pseudo-random EV per
// packet (EvSet::pick_next), window = payload bytes in flight <= window_bytes
// and PSN span <= the peer's mpr; SACKs via SackScoreboard (exactly the
// missing PSNs retransmitted, RTX, on another EV), NACKs (trim -> immediate
// retransmit), per-PSN RTO, reliability probes when SACKs stop, background
// probes of retired EVs, completions in WQE order once every PSN up to the
// WQE's last is acknowledged.
// Responder: PSN window (SackTracker), MR check and placement of every
// packet at its RETH address, per-message completion (MsgTracker),
// WRITE_IMM completions in message order, SACK coalescing, NACKs.
//
// Pure logic: `now` passed in, randomness from a seeded Rng (G2). Allocation:
// create and modify (control path) only; none per packet (G6).
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/rng.h"
#include "common/time.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/mrc_builder.h"
#include "nic/cc/cc_event.h"
#include "nic/mrc/ev_set.h"
#include "nic/mrc/msg_tracker.h"
#include "nic/mrc/sack_tracker.h"
#include "nic/verbs/verbs.h"

namespace sf::nic::rc {
class Qp;
}

// Small per-packet members (the plane served, the window, the peer check,
// the QP's deadline) get hidden visibility: the library is built with
// -fPIC, where a default-visibility function may be interposed, so GCC
// would call each of them out of line even inside transport.cc. Hidden, they
// inline there like static functions (callers in other files of the
// library, linked statically, still reach them).
#define SF_MRC_HIDDEN [[gnu::visibility("hidden")]]

namespace sf::nic::mrc {

// What happened to an arriving MRC frame (counted per QP, MrcCounters::rx).
enum class MrcRx : uint8_t {
  kPlaced,          // new data packet, placed
  kDuplicate,       // data PSN already received: ignored, re-SACKed
  kOutOfWindow,     // data PSN beyond CACK + mpr: NACK PSN_OOR_WINDOW
  kMsgWindow,       // message too far ahead of the oldest open one: NACK NO_RESOURCE
  kTrimmed,         // trimmed data packet: NACK TRIMMED / TRIMMED_LASTHOP
  kAccessError,     // rkey / bounds / REMOTE_WRITE failed: NACK ACCESS_ERROR, nothing written, QP to ERR
  kInvalid,         // METH / RETH inconsistent with the message: NACK INVALID_REQUEST, QP to ERR
  kWrongState,      // the QP state does not accept this frame
  kBadSrc,          // source address is not the peer's
  kBadPkey,         // P_Key mismatch
  kNotMrc,          // a RoCE (non-MRC) frame for an MRC QP
  kUnexpectedOp,    // an MRC op the QP does not take (ACK, endpoint ops on a QP)
  kSack,            // SACK applied
  kSackInvalid,     // SACK acknowledging unsent PSNs: ignored
  kNack,            // NACK acted on
  kNackStale,       // NACK for a PSN already acknowledged / never sent
  kProbe,           // reliability probe answered
  kProbeResponse,   // SACK with PR: probe answered
  kPortStatus,      // port-status update applied
  kPortStatusAnswered,  // the peer's EETH answered our port-status update
  kEvProbe,         // the peer's ENDPOINT EV_PROBE: answered (EETH on the same path)
  kEvProbeAnswered, // the peer's EETH answered our EV_PROBE (a retired EV's path works)
  kCount
};
const char* to_string(MrcRx r);
inline constexpr int kNumMrcRx = static_cast<int>(MrcRx::kCount);

struct MrcCounters {
  std::array<uint64_t, kNumMrcRx> rx{};
  uint64_t tx_data_pkts = 0;      // first transmissions
  uint64_t tx_retransmits = 0;    // RTX packets
  uint64_t rtx_sack = 0;          //   of which: a SACK showed the PSN missing
  uint64_t rtx_nack = 0;          //   a NACK (trim, window) asked for it
  uint64_t rtx_timeout = 0;       //   its RTO expired
  uint64_t tx_sacks = 0;
  uint64_t tx_nacks = 0;
  uint64_t tx_probes = 0;         // reliability probes
  uint64_t tx_ev_probes = 0;      // probes of retired EVs
  uint64_t tx_probe_responses = 0;
  uint64_t tx_rcv_pen_sacks = 0;  // SACKs that asked the sender to back off (rcv_cwnd_pen > 0)
  uint64_t tx_port_status = 0;    // ERTH port-status updates sent
  uint64_t tx_ev_probe_responses = 0;  // EETH answers to the peer's EV_PROBEs
  uint64_t timeouts = 0;          // RTO expiries (PSNs)
  uint64_t stall_timeouts = 0;    //   of which: no feedback from the peer since the send (EV not blamed)
  uint64_t down_timeouts = 0;     //   of which: every local plane down (not counted towards max_timeouts)
  uint64_t ooo_arrivals = 0;      // data packets that arrived past a hole
  uint64_t ce_arrivals = 0;
  uint64_t imm_waiting_rq = 0;    // an immediate waited for a posted receive
  uint64_t no_usable_ev = 0;      // a packet found no usable EV (waited)
  uint64_t probe_holes = 0;       // PSNs a probe answer showed missing (sent before the probe, not received)
  uint64_t rtx_alive_ev = 0;      // retransmissions of a PSN lost by RTO / probe put on the plane's EV proven alive
  uint64_t nack_queue_full = 0;   // NACKs not sent: queue full (the sender's RTO recovers)
};

class Transport {
 public:
  explicit Transport(rc::Qp& q) : q_(q) {}
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // ---- control path ----------------------------------------------------------
  // mrc_modify_qp: checks every masked field (EINVAL with error() set, nothing
  // changed) and applies them.
  int modify(const verbs::MrcQpAttr& a, int mask, verbs::QpState state);
  const verbs::MrcQpAttr& attr() const { return attr_; }
  const char* error() const { return error_; }
  // The rcv_cwnd_pen the next SACK carries (MrcQpAttr rcv_pen_rq /
  // rcv_pen_ooo_pct; docs/mrc.md "Back-pressure").
  uint8_t rcv_penalty() const;
  // QP state changes (rc::Qp::modify after its own checks): RTR sets up the
  // responder and the EV set, RTS the requester. EINVAL (error() set) when the
  // profile does not fit the host (planes), before anything changed.
  int check_rtr(uint32_t path_mtu_bytes, const verbs::AhAttr& ah);  // ah: the RTR call's address vector
  void on_rtr(TimeNs now);
  void on_rts(TimeNs now);
  void on_reset();
  void on_error();
  // A receive was posted: held immediates may complete now.
  void on_recv_posted(TimeNs now);

  // ---- datapath (rc::Qp forwards) -------------------------------------------
  int on_rx(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now);  // returns MrcRx
  bool has_ctrl() const {
    // One line of fields (see deadline_), OR-ed without branches: the host
    // asks after every frame.
    return (nack_count_ | probe_resp_count_ | ev_probe_resp_count_ | static_cast<uint32_t>(sack_due_) |
            static_cast<uint32_t>(port_status_pending_) | static_cast<uint32_t>(ep_resp_pending_)) != 0;
  }
  rte_mbuf* make_ctrl(TimeNs now);
  // Data frames (data, retransmissions, probes) for the port the host is
  // serving (rc::Qp::tx_port(): its plane when the QP sprays).
  bool has_data(TimeNs now) const;
  rte_mbuf* make_data(TimeNs now);
  // The QP sends data on host port `port_num` (its plane is up at both ends
  // when spraying; else the QP's own port).
  SF_MRC_HIDDEN bool sends_on(uint8_t port_num) const;
  // The port control frames (SACK, NACK, endpoint) leave on: the first plane
  // up at both ends (the QP's port when not spraying).
  SF_MRC_HIDDEN uint8_t ctrl_port() const;
  // The QP's next deadline (the earliest of its timers; TimeNs::max() when
  // none), from a cache: the host asks after every frame and every post,
  // and most frames change none of its inputs (docs/mrc.md "Deadline
  // cache").
  //
  // Invalidation rule (exact): the cache holds compute_deadline() of the
  // inputs as they were when it was filled. Its inputs are rto_deadline_,
  // sack_deadline_, port_status_repeat_, next_probe_at_, next_ev_probe_at_,
  // ev_probe_out_, ev_probe_sent_, ev_probe_pending_, retired_,
  // attr_.rto_ns, whether sb_ exists and sb_->in_flight() > 0, and the QP's
  // state (rc::Qp::state_). Every write of one of them is followed by
  // invalidate_deadline() before control leaves the Transport: at the write
  // on the per-frame paths (make_data, on_data, make_ctrl, where most calls
  // change nothing), at the top of the rarer entry points that may write
  // several (modify, on_rtr, on_rts, on_reset, on_error, on_sack, on_nack,
  // lost, fail, make_probe, advance, on_local_plane,
  // on_ev_probe_answered, on_port_status_answered); nothing between such
  // an invalidation and the writes reads next_deadline(). The QP's state
  // moves through rc::Qp::set_state(), which invalidates too (including
  // the moves to ERR inside rc code: to_error, check_overrun).
  // Tests: MrcDeadline.* (tests/unit/nic/mrc_deadline_test.cc) compare
  // next_deadline() with compute_deadline() after every step of random
  // runs.
  TimeNs next_deadline() const {
    if (deadline_ok_) [[likely]] return deadline_;
    deadline_ = compute_deadline();
    deadline_ok_ = true;
    return deadline_;
  }
  // The same, computed from the inputs now (no cache).
  SF_MRC_HIDDEN TimeNs compute_deadline() const;
  // Drops the cached deadline (the rule above).
  void invalidate_deadline() { deadline_ok_ = false; }
  // Per-port pacing of a spraying QP (docs/mrc.md "Pacing a spraying QP";
  // rc::Qp::set_tx_port): parks port `from`'s schedule (its next departure
  // and filing time) and loads port `to`'s.
  void swap_pace(uint8_t from, uint8_t to, TimeNs& next, TimeNs& filed);
  // The planes the QP sends data on now (at least 1): each port's pacing
  // gap is a frame's wire time at the QP's rate times this.
  uint32_t pace_planes() const;
  void advance(TimeNs now);

  // A host port (plane) went up or down (NicNode::set_port_up): stop / resume
  // using that plane's EVs and tell the peer (ERTH port status).
  void on_local_plane(uint8_t plane, bool up, TimeNs now);
  // A port-status update from the peer (ERTH, delivered by the host): stop
  // using the EVs of its down planes; answered with an EETH.
  void on_peer_port_status(uint32_t up_mask, uint8_t num_ports, uint16_t request_id);
  // `fi` (an endpoint frame) comes from this QP's peer (its address, P_Key).
  bool from_peer(const wire::FrameInfo& fi) const;
  // The peer's EETH answered our port-status update: stop repeating it.
  void on_port_status_answered();
  // The peer's ENDPOINT EV_PROBE (delivered by the host to one QP of that
  // peer): answered with an EETH carrying `ev`'s entropy (UDP source port,
  // or in SRv6 mode `ev`'s uplink in the control plane's template), leaving
  // on the control plane as every control frame does. False (not taken)
  // when the answer queue is full.
  bool on_peer_ev_probe(uint16_t request_id, uint32_t ev, uint32_t tx_ts);
  // An EETH answering an EV_PROBE: true when it is this QP's retired-EV probe
  // in flight (same id and EV, the echoed send time its own, status OK; then
  // a probe success).
  bool on_ev_probe_answered(uint16_t request_id, uint32_t ev, uint32_t ts_echo, wire::MrcEndpointStatus status);

  // ---- introspection -------------------------------------------------------
  const MrcCounters& counters() const { return ctr_; }
  const EvSet* ev_set() const { return ev_ ? &*ev_ : nullptr; }
  uint32_t bytes_in_flight() const { return inflight_bytes_; }
  // The fixed window (window_bytes, or one BDP when 0); effective_window()
  // is what limits bytes in flight: the CC's window (NSCC) when the QP runs
  // one, capped by window_bytes when the profile names it.
  uint32_t window_bytes() const { return window_; }
  SF_MRC_HIDDEN uint64_t effective_window() const;
  uint8_t num_planes() const { return planes_; }
  // The port a plane's packets leave on (plane p = port p + 1 when the QP
  // sprays, else the QP's port).
  uint8_t port_of_plane(uint8_t plane) const;
  const SackTracker* sack_tracker() const { return st_ ? &*st_ : nullptr; }
  const SackScoreboard* scoreboard() const { return sb_ ? &*sb_ : nullptr; }
  const MsgTracker* msg_tracker() const { return mt_ ? &*mt_ : nullptr; }

 private:
  // The per-PSN send record (SACK, retransmission, RTO): 16 bytes, four to
  // a cache line (written at the send, read again at the SACK, a window
  // later: by then the payload copies have evicted it). The SQ index and
  // the send time are kept in part and rebuilt (wqe_of, sent_of); the
  // payload offset follows from the PSN and the WQE (build_data).
  struct SendRec {
    uint32_t wqe = 0;           // SQ index, low 32 bits (wqe_of)
    uint16_t len = 0;           // payload bytes (<= the path MTU, 4096)
    uint16_t ev = 0;            // EV index of the last transmission
    uint64_t sent : 48 = 0;     // last transmission, ns, low 48 bits (sent_of)
    uint64_t timeouts : 8 = 0;
    bool missing : 1 = false;   // a SACK showed it missing; lost once ooo_tolerance passed
    bool queued : 1 = false;    // in the retransmit queue
    bool live : 1 = false;      // sent and not yet acknowledged
    bool suspect : 1 = false;   // lost by its RTO or past a probe: resent on a path proven alive
  };
  static_assert(sizeof(SendRec) == 16);
  static constexpr uint64_t kSentMask = (uint64_t{1} << 48) - 1;
  static uint64_t sent_bits(TimeNs t) { return static_cast<uint64_t>(t.ns()) & kSentMask; }
  // A record's send time, rebuilt against `now`: exact while the two are
  // less than 2^47 ns (39 hours) apart (a live record is younger than its
  // RTO times 2^kRtoBackoffMax; nothing reads a dead one's).
  static TimeNs sent_of(const SendRec& r, TimeNs now) {
    const uint64_t d = (sent_bits(now) - r.sent) & kSentMask;
    return now - TimeNs(static_cast<int64_t>(d << 16) >> 16);
  }
  // A record's SQ index: every record was written at or before the SQ
  // index sq_next_ has now (it only moves forward between on_rts() and
  // the next reset, and on_rts() clears the records), less than 2^32 back.
  SF_MRC_HIDDEN uint64_t wqe_of(const SendRec& r) const;
  struct Nack {
    wire::MrcNackReason reason;
    wire::Psn psn;
    uint32_t ev;
    uint32_t ts;
    bool ce;
    bool rtx;
  };
  struct ProbeResp {
    uint16_t id;
    uint32_t ev;
    uint32_t ts;
  };
  // The last data packet that asked for a SACK.
  struct Trigger {
    wire::Psn psn;
    uint32_t ev = 0;
    uint32_t ts = 0;
    bool ce = false;
    TimeNs at{0};   // when it arrived (the SACK's service_time)
  };

  SendRec& rec(wire::Psn p) { return recs_[p.value() & rec_mask_]; }
  // A PSN's retransmission timeout: rto_ns doubled per counted expiry of
  // it, at most kRtoBackoffMax times (docs/mrc.md "Timeout").
  static constexpr uint8_t kRtoBackoffMax = 3;
  TimeNs rto_of(const SendRec& r) const {
    return TimeNs(static_cast<int64_t>(attr_.rto_ns) << std::min<uint8_t>(r.timeouts, kRtoBackoffMax));
  }
  // The plane of the port being served (0 when not spraying).
  SF_MRC_HIDDEN uint8_t tx_plane() const;
  // An EV of `plane` for the next packet (pick_next when there is one plane:
  // no scan).
  std::optional<EvPick> pick(uint8_t plane, bool retransmission = false, std::optional<uint16_t> avoid = {}) {
    return planes_ == 1 ? ev_->pick_next(rng_, retransmission, avoid)
                        : ev_->pick_in_plane(rng_, plane, retransmission, avoid);
  }
  SF_MRC_HIDDEN uint8_t ctrl_plane() const;
  SF_MRC_HIDDEN bool peer_ok(const wire::FrameInfo& fi) const;
  rte_mbuf* make_probe(uint8_t plane, TimeNs now);
  void queue_rtx(wire::Psn p);
  void lost(wire::Psn p, bool timeout, TimeNs now);
  // Source port / flow label of `ev`, and plane `plane`'s addresses.
  void address(wire::MrcFrameSpec& s, uint32_t ev, uint8_t plane) const;
  // Builds one MRC frame of `spec` with `payload` (scratch) into an mbuf
  // (control frames).
  rte_mbuf* emit(wire::MrcFrameSpec& spec, uint32_t payload_bytes, uint32_t ev, uint8_t plane);
  // A data packet's own fields: what its headers do not share with every
  // other packet of its kind (TxHdr).
  struct DataFields {
    wire::MrcOp op = wire::MrcOp::kWriteOnly;
    bool se = false;
    bool rtx = false;
    wire::Psn psn;
    uint16_t rqmsn = 0;
    uint32_t msn = 0;
    uint32_t msg_offset = 0;
    uint32_t ev = 0;
    uint16_t ev_index = 0;  // ev's index in the EvSet (sport_share_)
    uint32_t tx_ts = 0;
    uint64_t reth_va = 0;
    uint32_t reth_rkey = 0;
    uint32_t reth_dma_length = 0;
    uint32_t imm = 0;
  };
  // A data frame: headers built in the mbuf (from the TxHdr of their kind
  // when there is one), `n` payload bytes at `off` of WQE `wqe` copied from
  // its SGEs straight into the chain (each piece's MR checked), ICRC folded
  // on the way: one copy of the payload. nullptr with *lkey_failed when an
  // SGE piece failed its MR check.
  SF_MRC_HIDDEN rte_mbuf* emit_data(const DataFields& f, uint64_t wqe, uint32_t off, uint32_t n, uint8_t plane, bool* lkey_failed);
  // The full frame spec of a data packet (a TxHdr miss).
  wire::MrcFrameSpec data_spec(const DataFields& f, uint8_t plane) const;
  // Data packet `psn` of WQE `wqe` (`len` payload bytes at `offset` of the
  // message) on EV index `ev`. Always inline (two callers in transport.cc:
  // the first transmission and the retransmission).
  [[gnu::always_inline]] SF_MRC_HIDDEN rte_mbuf* build_data(wire::Psn psn, uint64_t wqe, uint32_t offset, uint32_t len,
                                                            uint16_t ev, bool rtx, TimeNs now);
  bool gather(uint64_t wqe, uint32_t off, uint32_t n);
  SF_MRC_HIDDEN void complete_acked(TimeNs now);
  SF_MRC_HIDDEN void on_data(const wire::FrameInfo& fi, const rte_mbuf* m, MrcRx* out, TimeNs now);
  void on_sack(const wire::FrameInfo& fi, MrcRx* out, TimeNs now);
  void on_nack(const wire::FrameInfo& fi, MrcRx* out, TimeNs now);
  void push_nack(wire::MrcNackReason r, wire::Psn psn, const wire::FrameInfo& fi, bool ce);
  SF_MRC_HIDDEN void drain_completions();
  // Feedback for the QP's ACK-driven CC (NSCC; docs/cc.md "MRC integration").
  void cc_feedback(AckKind kind, uint64_t acked, std::optional<uint32_t> ts_echo, uint16_t service_ns, bool ce,
                   uint8_t pen, TimeNs now);
  void fail(verbs::WcStatus st, uint64_t wqe, TimeNs now);
  // The SACK (or probe answer) make_ctrl() owes: from sack_hdr_ when the
  // plane's entry is there (the headers copied, the per-SACK fields and the
  // ICRC written over them), else built by emit() and its headers kept.
  rte_mbuf* emit_sack(wire::Psn cack, const wire::SackSpec& k, const wire::MrcCcStateSpec& c, uint32_t ev,
                      uint8_t plane);
  uint32_t now_ts(TimeNs now) const { return static_cast<uint32_t>(now.ns()); }
  void set_profile_error(const char* e) { error_ = e; }
  // ev_mode kSrv6: what is wrong with n.srv6 for a QP of `planes` planes
  // (the message names the key), nullptr when it is usable.
  const char* srv6_error(const verbs::MrcQpAttr& n, uint16_t planes);
  // The outer DA of EV value `ev` sent on `plane` (precomputed at RTR):
  // uplink (index / planes) % num_uplinks of the plane's template.
  const wire::Ipv6Addr& srv6_da(uint32_t ev, uint8_t plane) const;

  rc::Qp& q_;
  verbs::MrcQpAttr attr_{};
  const char* error_ = "";
  std::string error_buf_;          // error_ when it names values (control path only)
  // ev_mode kSrv6: outer DA per (plane, uplink), plane * kMrcSrv6MaxUplinks + uplink (RTR).
  std::vector<wire::Ipv6Addr> srv6_das_;
  uint8_t planes_ = 1;
  bool spray_ = false;         // planes map to the host's ports (port p + 1)
  uint32_t window_ = 0;        // window_bytes in effect
  uint32_t local_up_ = ~0u;    // our planes up (bit p)
  uint32_t peer_up_ = ~0u;     // the peer's planes up (its port-status updates)

  // Per-plane share of first transmissions (docs/mrc.md "Plane share"): a
  // sprayed QP gives plane p a new packet only while p's count is less than
  // kPlaneLead ahead of the least count among the planes it sends on
  // (sends_on), so a window opened by a SACK goes to the planes in turn, not
  // to whichever port asks first. Counts are relative (the least is taken
  // off after each send); retransmissions and probes are not held.
  static constexpr uint32_t kPlaneLead = 2;
  std::array<uint32_t, wire::kMrcMaxPorts> plane_sent_{};
  // Per-port pacers (ports 1..planes_; the one being served lives in rc::Qp).
  std::array<TimeNs, wire::kMrcMaxPorts> pace_next_port_{};
  std::array<TimeNs, wire::kMrcMaxPorts> pace_filed_port_{};
  // Bit p: plane p may carry data now (sends_on(p + 1)).
  SF_MRC_HIDDEN uint32_t sending_planes() const;
  // Whether plane p is within its share (always true when not spraying).
  SF_MRC_HIDDEN bool plane_in_share(uint8_t p) const;
  SF_MRC_HIDDEN void count_plane_send(uint8_t p);

  // frame template (RTR)
  wire::MrcFrameSpec spec_{};
  // Data-frame headers by kind: one entry per data opcode and plane (the
  // key's SE and payload bytes are checked, a mismatch rebuilds the entry).
  // A packet of a known kind copies the headers and writes its own PSN,
  // METH, RETH, ImmDt, UDP source port and flow label (and in SRv6 mode the
  // outer DA) over them; its ICRC starts from the entry's saved state, kept
  // with the UDP source port 0 and given the packet's port (its EV) by
  // IcrcAccumulator::xor_udp_sport: only the bytes from the BTH's AckReq on
  // are folded per packet, as for RC (TxHeaderCache).
  static constexpr uint32_t kTxHdrBytes = 160;
  static constexpr uint32_t kDataOps = 6;  // MrcOp kWriteFirst .. kWriteOnlyImm
  struct TxHdr {
    bool valid = false;
    bool se = false;
    uint16_t bytes = 0;
    uint16_t icrc_from = 0;  // the first header byte `icrc` has not seen
    uint32_t n = 0;
    wire::IcrcAccumulator icrc;  // after [ip, icrc_from) with UDP source port 0
    std::array<uint8_t, kTxHdrBytes> b{};
  };
  std::vector<TxHdr> tx_hdr_;      // kDataOps x planes_ (RTR)
  // The share of EV index i's UDP source port (0xC000 | ((ev_base + i) &
  // 0x3FFF)) in a data frame's ICRC state (IcrcAccumulator::udp_sport_share)
  // for implementation sport_share_impl_ (filled at RTR; again if the saved
  // state's implementation differs, crc32_select_impl() in tests).
  // When ev_base's low 8 bits are 0 (the default 0 among them) the port is
  // sport_hi | i for i < 256, and the share is linear over GF(2):
  // sport_k_ ^ sport_nib_[i & 15] ^ sport_nib_[16 + (i >> 4)] (sport_nib_ok_):
  // two cache lines every frame reads, which stay in D1. Otherwise one word
  // per EV (sport_share_), a random line of num_evs x 4 bytes per frame,
  // which the payload copies evict (a D1 miss 0.44 times a frame at 128 EVs).
  SF_MRC_HIDDEN uint32_t sport_share(uint16_t ev_index) const {
    if (sport_nib_ok_) [[likely]] return sport_k_ ^ sport_nib_[ev_index & 15u] ^ sport_nib_[16u + (ev_index >> 4)];
    return sport_share_[ev_index];
  }
  alignas(64) std::array<uint32_t, 32> sport_nib_{};
  uint32_t sport_k_ = 0;
  bool sport_nib_ok_ = false;
  std::vector<uint32_t> sport_share_;
  wire::Crc32Impl sport_share_impl_ = wire::Crc32Impl::kIsal;
  SF_MRC_HIDDEN void fill_sport_share(wire::Crc32Impl impl);
  // SACK headers by plane (the control plane they leave on), as TxHdr for
  // data frames: everything up to the ICRC but the UDP source port (the
  // reflected EV), flow label, PSN (CACK), SETH and CC state is the QP's;
  // `icrc` is the state after [ip, icrc_from) with source port 0. Not used
  // in SRv6 mode (the outer DA follows the EV): generic build there.
  std::vector<TxHdr> sack_hdr_;    // planes_ (RTR)
  // Offsets of the data headers (RTR: they follow from spec_'s L2 / L3):
  // the first IP header, the ICRC's (inner, in SRv6 mode) IP header.
  uint32_t hdr_outer_off_ = 0;
  uint32_t hdr_ip_off_ = 0;
  bool hdr_v4_ = true;
  bool hdr_sr_ = false;
  std::vector<uint8_t> payload_;   // one packet's payload (gathered)
  std::vector<uint8_t> frame_;     // one frame

  Rng rng_{1};
  std::optional<EvSet> ev_;
  std::optional<SackScoreboard> sb_;
  std::optional<SackTracker> st_;
  std::optional<MsgTracker> mt_;

  // requester
  std::vector<SendRec> recs_;
  uint32_t rec_mask_ = 0;
  std::vector<wire::Psn> rtxq_;    // retransmit queue (ring)
  uint32_t rtx_head_ = 0;
  uint32_t rtx_count_ = 0;
  std::array<wire::Psn, 64> missing_{};
  uint32_t inflight_bytes_ = 0;
  uint64_t cc_snd_nxt_ = 0;        // payload bytes sent (first transmissions), for the CC's AckEvent
  uint64_t cc_ack_seq_ = 0;        // payload bytes acknowledged
  bool cc_rto_ = false;            // an RTO expired in this advance()
  uint16_t peer_mpr_ = 64;
  uint16_t imm_sent_ = 0;          // rqmsn of the next message
  uint64_t rqmsn_wqe_ = 0;         // SQ index rqmsn was counted to
  TimeNs rto_deadline_ = TimeNs::max();
  TimeNs last_feedback_{0};
  bool probe_pending_ = false;
  bool probe_out_ = false;
  uint16_t probe_id_ = 0;
  TimeNs next_probe_at_ = TimeNs::max();
  uint16_t retired_ = 0;           // EVs retired and not re-admitted (probing runs while > 0)
  int ev_probe_pending_ = -1;      // EV index to probe
  int ev_probe_out_ = -1;          // EV index of the probe in flight
  TimeNs ev_probe_sent_{0};
  TimeNs probe_sent_{0};           // the reliability probe in flight left then
  // Per plane: the EV index of the latest SACK (or probe answer) whose
  // trigger arrived, i.e. a path proven alive; -1 none yet.
  std::array<int16_t, wire::kMrcMaxPorts> alive_ev_{};
  TimeNs next_ev_probe_at_{0};
  TimeNs port_status_repeat_ = TimeNs::max();
  uint16_t port_status_id_ = 0;
  uint16_t ep_resp_id_ = 0;

  // What the host reads after every frame (next_deadline, has_ctrl), on
  // one cache line: the deadline cache and the control-frame flags.
  alignas(64) mutable TimeNs deadline_ = TimeNs::max();
  mutable bool deadline_ok_ = false;
  bool sack_due_ = false;
  bool port_status_pending_ = false;
  bool ep_resp_pending_ = false;   // an EETH owed for the peer's port-status update
  uint32_t nack_count_ = 0;
  uint32_t probe_resp_count_ = 0;
  uint32_t ev_probe_resp_count_ = 0;

  // responder
  std::array<Nack, 32> nacks_{};
  uint32_t nack_head_ = 0;
  std::array<ProbeResp, 8> probe_resps_{};
  std::array<ProbeResp, 8> ev_probe_resps_{};  // EETHs owed for the peer's EV_PROBEs
  uint32_t ev_probe_resp_head_ = 0;
  uint32_t probe_resp_head_ = 0;
  Trigger trig_;
  uint32_t unsacked_ = 0;
  TimeNs sack_deadline_ = TimeNs::max();
  uint32_t rcvd_bytes_ = 0;
  uint16_t ecn_count_ = 0;

  MrcCounters ctr_;
};

}  // namespace sf::nic::mrc
