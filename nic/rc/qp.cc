// Qp creation, the RC state machine (ibv_modify_qp rules, endpoint.md 2.3),
// query and the error flush. See qp.h.
#include "nic/rc/qp.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <iterator>

#include "nic/mrc/transport.h"

namespace sf::nic::rc {

BitRate Qp::static_rate_of(uint8_t ibv_rate) {
  // enum ibv_rate (<infiniband/verbs.h>) -> Mb/s; 0 = IBV_RATE_MAX or unknown.
  static constexpr uint32_t kMbps[] = {0,      0,      2500,   10000,  30000,   5000,    20000,   40000,
                                       60000,  80000,  120000, 14000,  56000,   112000,  168000,  25000,
                                       100000, 200000, 300000, 28000,  50000,   400000,  600000,  800000,
                                       1200000};
  return ibv_rate < std::size(kMbps) ? BitRate(uint64_t{kMbps[ibv_rate]} * 1'000'000) : BitRate(0);
}

using verbs::QpState;
using verbs::WcStatus;

const char* to_string(RxAction a) {
  switch (a) {
    case RxAction::kAccepted: return "accepted";
    case RxAction::kDuplicate: return "duplicate";
    case RxAction::kNakSeqSent: return "nak_seq_sent";
    case RxAction::kOutOfSeqDropped: return "out_of_seq_dropped";
    case RxAction::kRnrNakSent: return "rnr_nak_sent";
    case RxAction::kNakInvalid: return "nak_invalid_request";
    case RxAction::kNakAccess: return "nak_remote_access";
    case RxAction::kNakRemoteOp: return "nak_remote_op";
    case RxAction::kAckProcessed: return "ack_processed";
    case RxAction::kStaleResponse: return "stale_response";
    case RxAction::kGhostResponse: return "ghost_response";
    case RxAction::kBadResponse: return "bad_response";
    case RxAction::kCnp: return "cnp";
    case RxAction::kWrongState: return "wrong_state";
    case RxAction::kBadSrc: return "rx_bad_src";
    case RxAction::kBadPkey: return "rx_bad_pkey";
    case RxAction::kLocProtErr: return "loc_prot_err";
    case RxAction::kCount: break;
  }
  return "?";
}

int Qp::create(const QpEnv& env, uint32_t qpn, verbs::Pd* pd, const verbs::QpInitAttr& init) {
  if (in_use_) return EBUSY;
  if (pd == nullptr || init.send_cq == nullptr || init.recv_cq == nullptr ||
      (init.qp_type != verbs::QpType::kRc && init.qp_type != verbs::QpType::kMrc)) {
    return EINVAL;
  }
  if (init.cap.max_send_wr == 0 || init.cap.max_send_wr > kMaxWr || init.cap.max_recv_wr > kMaxWr ||
      init.cap.max_send_sge > kMaxSge || init.cap.max_recv_sge > kMaxSge || init.cap.max_inline_data != 0) {
    return EINVAL;
  }
  // An SRQ of this QP's context; an MRC QP places WRITE_WITH_IMM completions
  // out of order from its own receive queue: no SRQ.
  if (init.srq != nullptr && (init.qp_type != verbs::QpType::kRc || init.srq->context() != pd->context)) {
    return EINVAL;
  }
  env_ = env;
  qpn_ = qpn;
  pd_ = pd;
  init_ = init;
  if (init_.cap.max_send_sge == 0) init_.cap.max_send_sge = 1;
  if (init_.cap.max_recv_sge == 0) init_.cap.max_recv_sge = 1;
  // Power-of-two rings; the capacities checked at post time stay init_.cap's.
  sq_.assign(std::bit_ceil(init.cap.max_send_wr), SendWqe{});
  sq_mask_ = sq_.size() - 1;
  srq_ = init.srq;
  if (srq_ != nullptr) {
    ++srq_->qps;
    init_.cap.max_recv_wr = 0;  // ibv_create_qp ignores max_recv_wr / max_recv_sge with an SRQ
  }
  rq_.assign(std::bit_ceil(std::max<uint32_t>(init_.cap.max_recv_wr, 1)), RecvWqe{});
  rq_mask_ = static_cast<uint32_t>(rq_.size() - 1);
  attr_ = verbs::QpAttr{};
  attr_.cap = init_.cap;
  set_state(QpState::kReset);
  rate_ = BitRate(0);
  rate_limit_ = BitRate(0);
  static_rate_ = BitRate(0);
  pace_burst_bytes_ = 0;
  pace_burst_ns_ = TimeNs(0);
  pace_next_ = TimeNs(0);
  pace_filed_ = TimeNs(0);
  pace_per_port_ = false;
  tx_port_ = 0;
  ctr_ = QpCounters{};
  // A new QP in a reused slot starts without congestion control.
  cc_ = CongestionControl(std::in_place_type<FixedRate>, BitRate(0));
  cc_active_ = cc_acks_ = cc_int_ = false;
  cc_window_ = kNoWindow;
  cc_tx_.clear();
  cc_stats_ = QpCcStats{};
  av_set_ = false;
  pkey_ = env.cfg->pkey_table.empty() ? wire::Bth::kDefaultPkey : env.cfg->pkey_table[0];
  cnp_gate_ = CnpGate(env.cfg->cnp_interval);
  reset_queues();
  if (init.qp_type == verbs::QpType::kMrc) {
    mrc_ = std::make_unique<mrc::Transport>(*this);
  } else {
    mrc_.reset();
  }
  in_use_ = true;
  return 0;
}

void Qp::destroy() {
  in_use_ = false;
  if (srq_ != nullptr) --srq_->qps;
  srq_ = nullptr;
  mrc_.reset();
  sq_.clear();
  rq_.clear();
  set_state(QpState::kReset);
}

void Qp::reset_queues() {
  sq_posted_ = sq_done_ = sq_next_ = 0;
  tx_pkt_ = 0;
  pkts_since_ackreq_ = 0;
  retx_deadline_ = TimeNs::max();
  rnr_until_ = TimeNs::max();
  read_rewound_ = false;
  rq_head_ = rq_count_ = 0;
  msn_ = 0;
  nak_seq_sent_ = false;
  in_msg_ = InMsg::kNone;
  recv_claimed_ = false;
  recv_offset_ = 0;
  write_va_ = 0;
  write_rkey_ = 0;
  write_left_ = write_total_ = 0;
  read_head_ = read_count_ = 0;
  ack_pending_ = nak_pending_ = cnp_pending_ = false;
  cq_overrun_ = false;
}

namespace {

struct Rule {
  int required;
  int optional;
};

// Attribute masks per RC transition (ibv_modify_qp(3), IBA table 91). A
// `valid` false means the transition is illegal.
bool transition_rule(QpState cur, QpState next, Rule* r) {
  using namespace verbs;
  if (next == QpState::kReset || next == QpState::kErr) {
    *r = {kQpState, 0};
    return cur != QpState::kUnknown;
  }
  const int rts_opt = kQpCurState | kQpAccessFlags | kQpMinRnrTimer | kQpPathMigState | kQpAltPath | kQpRateLimit;
  if (cur == QpState::kReset && next == QpState::kInit) {
    *r = {kQpState | kQpPkeyIndex | kQpPort | kQpAccessFlags, 0};
  } else if (cur == QpState::kInit && next == QpState::kInit) {
    *r = {0, kQpPkeyIndex | kQpPort | kQpAccessFlags};
  } else if (cur == QpState::kInit && next == QpState::kRtr) {
    *r = {kQpState | kQpAv | kQpPathMtu | kQpDestQpn | kQpRqPsn | kQpMaxDestRdAtomic | kQpMinRnrTimer,
          kQpAltPath | kQpAccessFlags | kQpPkeyIndex};
  } else if (cur == QpState::kRtr && next == QpState::kRts) {
    *r = {kQpState | kQpSqPsn | kQpMaxQpRdAtomic | kQpRetryCnt | kQpRnrRetry | kQpTimeout, rts_opt};
  } else if (cur == QpState::kRts && next == QpState::kRts) {
    *r = {0, rts_opt};
  } else {
    return false;
  }
  return true;
}

bool valid_gid_index(const LocalAddr& local, const verbs::GlobalRoute& grh) {
  // GID table of a host: index 0 = its IPv4 address as ::ffff:a.b.c.d,
  // index 1 = its IPv6 address (docs/nic.md). The destination must be of the
  // same family.
  const bool v4 = verbs::gid_is_ipv4(grh.dgid);
  if (grh.sgid_index == 0) return local.has_ipv4 && v4;
  if (grh.sgid_index == 1) return local.has_ipv6 && !v4;
  return false;
}

}  // namespace

int Qp::modify(const verbs::QpAttr& a, int mask, TimeNs now) {
  using namespace verbs;
  if (!in_use_) return EINVAL;
  const QpState cur = state_;
  if ((mask & kQpCurState) != 0 && a.cur_qp_state != cur) return EINVAL;
  const QpState next = (mask & kQpState) != 0 ? a.qp_state : cur;
  Rule rule{};
  if (!transition_rule(cur, next, &rule)) return EINVAL;
  const int allowed = rule.required | rule.optional | kQpState | kQpCurState;
  if ((mask & rule.required) != rule.required || (mask & ~allowed) != 0) return EINVAL;

  // Values (all checked before anything changes).
  if ((mask & kQpPort) && (a.port_num < 1 || a.port_num > env_.num_ports)) return EINVAL;
  // pkey_index: an entry of the P_Key table, and a valid P_Key (IBA 10.9.1).
  const std::vector<uint16_t>& pkeys = env_.cfg->pkey_table;
  if ((mask & kQpPkeyIndex) &&
      (a.pkey_index >= pkeys.size() || a.pkey_index >= kMaxPkeys || (pkeys[a.pkey_index] & 0x7FFFu) == 0)) {
    return EINVAL;
  }
  if ((mask & kQpAccessFlags) &&
      (a.qp_access_flags & ~(kAccessLocalWrite | kAccessRemoteWrite | kAccessRemoteRead | kAccessRemoteAtomic)) != 0) {
    return EINVAL;
  }
  if (mask & kQpAv) {
    // The GID table of the port the QP is bound to (this call's port_num, else its own).
    const uint8_t port = (mask & kQpPort) ? a.port_num : attr_.port_num;
    if (a.ah_attr.is_global != 1 || a.ah_attr.sl > 7 || !valid_gid_index(local_of(port), a.ah_attr.grh) ||
        a.ah_attr.grh.flow_label > 0xFFFFF ||
        (a.ah_attr.static_rate != 0 && static_rate_of(a.ah_attr.static_rate).bps() == 0)) {
      return EINVAL;
    }
  }
  if ((mask & kQpPathMtu) && mtu_bytes(a.path_mtu) == 0) return EINVAL;
  if ((mask & kQpDestQpn) && a.dest_qp_num > Psn::kMask) return EINVAL;
  if ((mask & kQpRqPsn) && a.rq_psn > Psn::kMask) return EINVAL;
  if ((mask & kQpSqPsn) && a.sq_psn > Psn::kMask) return EINVAL;
  if ((mask & kQpMaxDestRdAtomic) && a.max_dest_rd_atomic > kMaxRdAtomic) return EINVAL;
  if ((mask & kQpMaxQpRdAtomic) && a.max_rd_atomic > kMaxRdAtomic) return EINVAL;
  if ((mask & kQpMinRnrTimer) && a.min_rnr_timer > 31) return EINVAL;
  if ((mask & kQpTimeout) && a.timeout > 31) return EINVAL;
  if ((mask & kQpRetryCnt) && a.retry_cnt > 7) return EINVAL;
  if ((mask & kQpRnrRetry) && a.rnr_retry > 7) return EINVAL;
  if (mrc_ != nullptr && next == QpState::kRtr && cur != QpState::kRtr) {
    if (const int e = mrc_->check_rtr(mtu_bytes((mask & kQpPathMtu) ? a.path_mtu : attr_.path_mtu),
                                        (mask & kQpAv) ? a.ah_attr : attr_.ah_attr); e != 0) return e;
  }

  // Apply.
  if (mask & kQpPort) attr_.port_num = a.port_num;
  if (mask & kQpPkeyIndex) {
    attr_.pkey_index = a.pkey_index;
    pkey_ = pkeys[a.pkey_index];
    if (av_set_) build_spec();  // sent with the new P_Key
  }
  if (mask & kQpAccessFlags) attr_.qp_access_flags = a.qp_access_flags;
  if (mask & kQpAv) {
    attr_.ah_attr = a.ah_attr;
    static_rate_ = static_rate_of(a.ah_attr.static_rate);
    apply_cc_rate();
  }
  if (mask & kQpPathMtu) attr_.path_mtu = a.path_mtu;
  if (mask & kQpDestQpn) attr_.dest_qp_num = a.dest_qp_num;
  if (mask & kQpRqPsn) attr_.rq_psn = a.rq_psn;
  if (mask & kQpSqPsn) attr_.sq_psn = a.sq_psn;
  if (mask & kQpMaxDestRdAtomic) attr_.max_dest_rd_atomic = a.max_dest_rd_atomic;
  if (mask & kQpMaxQpRdAtomic) attr_.max_rd_atomic = a.max_rd_atomic;
  if (mask & kQpMinRnrTimer) attr_.min_rnr_timer = a.min_rnr_timer;
  if (mask & kQpTimeout) attr_.timeout = a.timeout;
  if (mask & kQpRetryCnt) attr_.retry_cnt = a.retry_cnt;
  if (mask & kQpRnrRetry) attr_.rnr_retry = a.rnr_retry;
  if (mask & kQpRateLimit) {
    // IBV_QP_RATE_LIMIT: the same limit as ibv_modify_qp_rate_limit (kept
    // under congestion control), its burst bucket unchanged.
    attr_.rate_limit = a.rate_limit;
    set_rate_limit(BitRate(uint64_t{a.rate_limit} * 1000), pace_burst_bytes_);
  }

  if (next == cur) return 0;
  switch (next) {
    case QpState::kReset:
      reset_queues();
      av_set_ = false;
      if (mrc_ != nullptr) mrc_->on_reset();
      break;
    case QpState::kInit:
      break;
    case QpState::kRtr:
      mtu_ = mtu_bytes(attr_.path_mtu);
      mtu_shift_ = static_cast<uint32_t>(std::countr_zero(mtu_));
      epsn_ = Psn(attr_.rq_psn);
      build_spec();
      if (mrc_ != nullptr) mrc_->on_rtr(now);
      break;
    case QpState::kRts:
      next_psn_ = Psn(attr_.sq_psn);
      acked_psn_ = next_psn_ - 1;
      sent_next_psn_ = next_psn_;
      cc_acked_psn_ = acked_psn_;
      cc_reset_tracking();
      retry_left_ = attr_.retry_cnt;
      rnr_left_ = attr_.rnr_retry;
      set_state(next);
      if (mrc_ != nullptr) mrc_->on_rts(now);
      return 0;
    case QpState::kErr:
      set_state(QpState::kErr);
      flush_all(now);
      if (mrc_ != nullptr) mrc_->on_error();
      return 0;
    default:
      return EINVAL;
  }
  set_state(next);
  return 0;
}

int Qp::query(verbs::QpAttr* attr, verbs::QpInitAttr* init) const {
  if (!in_use_ || attr == nullptr) return EINVAL;
  *attr = attr_;
  attr->qp_state = state_;
  attr->cur_qp_state = state_;
  attr->sq_psn = next_psn_.value();
  attr->rq_psn = epsn_.value();
  if (init != nullptr) *init = init_;
  return 0;
}

// The frame addresses of a connected QP (RC and MRC): L2 to the AH's MAC, or
// to the port's gateway when routed; L3 from our port to the AH's GID, DSCP
// from its traffic class, ECT(0) when ECN-capable.
void peer_addressing(const verbs::AhAttr& ah, const LocalAddr& local, bool ecn_capable, wire::L2Spec* l2,
                     wire::L3Spec* l3) {
  using namespace verbs;
  for (int i = 0; i < 6; ++i) l2->dst.bytes[i] = ah.dmac[i];
  if (local.has_gateway) l2->dst = local.gateway;  // routed: to the next hop, IP to the peer
  l2->src = local.mac;
  const uint8_t dscp = static_cast<uint8_t>(ah.grh.traffic_class >> 2);
  const wire::Ecn ecn = ecn_capable ? wire::Ecn::kEct0 : wire::Ecn::kNotEct;
  if (gid_is_ipv4(ah.grh.dgid)) {
    wire::Ipv4Spec ip;
    ip.src = local.ipv4;
    ip.dst = gid_to_ipv4(ah.grh.dgid);
    ip.dscp = dscp;
    ip.ecn = ecn;
    ip.ttl = ah.grh.hop_limit;
    *l3 = ip;
  } else {
    wire::Ipv6Spec ip;
    ip.src = local.ipv6;
    ip.dst = ah.grh.dgid;
    ip.dscp = dscp;
    ip.ecn = ecn;
    ip.flow_label = ah.grh.flow_label;
    ip.hop_limit = ah.grh.hop_limit;
    *l3 = ip;
  }
}

void Qp::build_spec() {
  using namespace verbs;
  const AhAttr& ah = attr_.ah_attr;
  const LocalAddr& local = local_of(attr_.port_num);  // the source of the QP's port
  spec_ = wire::RoceFrameSpec{};
  tx_hdr_.clear();
  peer_addressing(ah, local, env_.cfg->ecn_capable, &spec_.l2, &spec_.l3);
  // rdma-core: rdma_calc_flow_label() when the AH has none, then
  // ibv_flow_label_to_udp_sport() (endpoint.md 1.8).
  uint32_t fl = ah.grh.flow_label;
  if (fl == 0) {
    uint64_t v = uint64_t{qpn_} * attr_.dest_qp_num;
    v ^= v >> 20;
    v ^= v >> 40;
    fl = static_cast<uint32_t>(v & 0xFFFFF);
  }
  uint32_t low = fl & 0x3FFF;
  const uint32_t high = fl & 0xFC000;
  low ^= high >> 14;
  spec_.udp_src_port = static_cast<uint16_t>(low | 0xC000);
  spec_.bth.dest_qp = attr_.dest_qp_num;
  spec_.bth.pkey = pkey_;
  av_set_ = true;
}

bool Qp::push_cqe(verbs::Cq* cq, const verbs::Wc& wc) {
  if (cq->push(wc)) return true;
  ++ctr_.cq_overruns;
  cq_overrun_ = true;
  return false;
}

void Qp::check_overrun(TimeNs now) {
  if (cq_overrun_ && state_ != QpState::kErr) {
    set_state(QpState::kErr);
    flush_all(now);
  }
}

void Qp::complete_send(uint64_t abs, WcStatus st) {
  const SendWqe& w = sq_at(abs);
  if (st == WcStatus::kSuccess && !reports_success(w)) return;
  verbs::Wc wc;
  wc.wr_id = w.wr_id;
  wc.status = st;
  switch (w.opcode) {
    case verbs::WrOpcode::kRdmaWrite:
    case verbs::WrOpcode::kRdmaWriteWithImm: wc.opcode = verbs::WcOpcode::kRdmaWrite; break;
    case verbs::WrOpcode::kRdmaRead: wc.opcode = verbs::WcOpcode::kRdmaRead; break;
    default: wc.opcode = verbs::WcOpcode::kSend; break;
  }
  wc.byte_len = st == WcStatus::kSuccess ? w.length : 0;
  wc.qp_num = qpn_;
  wc.src_qp = attr_.dest_qp_num;
  push_cqe(init_.send_cq, wc);
}

void Qp::to_error(WcStatus sq_status, uint64_t failed_sq_index, WcStatus rq_status, TimeNs) {
  set_state(QpState::kErr);
  // Send queue in order: the failed WQE gets its status, the rest are flushed.
  for (uint64_t i = sq_done_; i < sq_posted_; ++i) complete_send(i, i == failed_sq_index ? sq_status : WcStatus::kWrFlushErr);
  sq_done_ = sq_next_ = sq_posted_;
  tx_pkt_ = 0;
  for (uint32_t k = 0; k < rq_count_; ++k) {
    const RecvWqe& r = rq_at(k);
    verbs::Wc wc;
    wc.wr_id = r.wr_id;
    wc.status = (k == 0 && recv_claimed_) ? rq_status : WcStatus::kWrFlushErr;
    wc.opcode = verbs::WcOpcode::kRecv;
    wc.qp_num = qpn_;
    wc.src_qp = attr_.dest_qp_num;
    push_cqe(init_.recv_cq, wc);
  }
  rq_head_ = rq_count_ = 0;
  // A receive taken from the SRQ ends with the error; the SRQ's other WQEs
  // belong to its other QPs and stay.
  if (srq_ != nullptr && recv_claimed_) {
    verbs::Wc wc;
    wc.wr_id = srq_wqe_.wr_id;
    wc.status = rq_status;
    wc.opcode = verbs::WcOpcode::kRecv;
    wc.qp_num = qpn_;
    wc.src_qp = attr_.dest_qp_num;
    push_cqe(init_.recv_cq, wc);
  }
  recv_claimed_ = false;
  read_count_ = 0;
  in_msg_ = InMsg::kNone;
  ack_pending_ = false;
  cnp_pending_ = false;
  retx_deadline_ = TimeNs::max();
  rnr_until_ = TimeNs::max();
}

}  // namespace sf::nic::rc
