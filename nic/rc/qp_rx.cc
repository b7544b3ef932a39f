// Qp responder: the receive side of RC requests (rxe rxe_resp.c check_psn /
// check_op_seq / check_rkey / execute, IBA 9.7). Demultiplexes every arrival
// by opcode (requests here, responses in qp_ack.cc, CNPs to the CC seam),
// after checking who sent it: the source IP must be the QP's remote address
// (ah_attr dgid) and the BTH P_Key must match the QP's partition, or the
// frame is dropped and counted (kBadSrc, kBadPkey), never executed.
//
// PSN rules (endpoint.md 1.9, 1.10): PSN == ePSN is executed; a PSN in
// [ePSN - 2^23, ePSN) is a duplicate (SEND/WRITE re-ACKed; a READ re-executed
// alone, queued READs kept, IBA 9.7.5.1.2); a PSN in (ePSN, ePSN + 2^23)
// gets one PSN-sequence-error NAK, and every further out-of-order packet is
// dropped until ePSN arrives (commodity RoCE go-back-N).
//
// Memory: every packet that writes memory is checked by MrTable::check
// before its first byte is written: each WRITE packet against the message's
// rkey (the MR may have been deregistered since the FIRST), each SEND piece
// against its receive SGE's lkey. A failed check writes nothing of that
// packet: WRITE -> remote access error NAK, SEND -> remote operational error
// NAK (local protection error on the receive WQE); the QP goes to ERR.
#include <algorithm>
#include <array>
#include <cstring>

#include "nic/rc/chain_copy.h"
#include "nic/rc/qp.h"

namespace sf::nic::rc {

using verbs::QpState;
using verbs::WcStatus;
using wire::Opcode;

namespace {

enum class ReqKind : uint8_t { kSend, kWrite, kRead, kNone };
struct ReqInfo {
  ReqKind kind = ReqKind::kNone;
  bool first = false;
  bool last = false;
  bool imm = false;
};

constexpr ReqInfo classify_op(uint8_t op) {
  switch (static_cast<Opcode>(op)) {
    case Opcode::kRcSendFirst: return {ReqKind::kSend, true, false, false};
    case Opcode::kRcSendMiddle: return {ReqKind::kSend, false, false, false};
    case Opcode::kRcSendLast: return {ReqKind::kSend, false, true, false};
    case Opcode::kRcSendLastImm: return {ReqKind::kSend, false, true, true};
    case Opcode::kRcSendOnly: return {ReqKind::kSend, true, true, false};
    case Opcode::kRcSendOnlyImm: return {ReqKind::kSend, true, true, true};
    case Opcode::kRcWriteFirst: return {ReqKind::kWrite, true, false, false};
    case Opcode::kRcWriteMiddle: return {ReqKind::kWrite, false, false, false};
    case Opcode::kRcWriteLast: return {ReqKind::kWrite, false, true, false};
    case Opcode::kRcWriteLastImm: return {ReqKind::kWrite, false, true, true};
    case Opcode::kRcWriteOnly: return {ReqKind::kWrite, true, true, false};
    case Opcode::kRcWriteOnlyImm: return {ReqKind::kWrite, true, true, true};
    case Opcode::kRcReadRequest: return {ReqKind::kRead, true, true, false};
    default: return {};
  }
}

// classify_op for every opcode byte, looked up per received request (one
// load instead of the switch's compare-and-branch chain).
constexpr std::array<ReqInfo, 256> kReqInfo = [] {
  std::array<ReqInfo, 256> t{};
  for (int op = 0; op < 256; ++op) t[op] = classify_op(static_cast<uint8_t>(op));
  return t;
}();

inline ReqInfo classify(uint8_t op) { return kReqInfo[op]; }

bool is_response(uint8_t op) {
  return op >= static_cast<uint8_t>(Opcode::kRcReadResponseFirst) && op <= static_cast<uint8_t>(Opcode::kRcAck);
}

bool is_ce(const wire::FrameInfo& fi) {
  if (fi.ipv4 != nullptr) return fi.ipv4->ecn() == wire::Ecn::kCe;
  if (fi.ipv6 != nullptr) return fi.ipv6->ecn() == wire::Ecn::kCe;
  return false;
}

}  // namespace

RxAction Qp::check_peer(const wire::FrameInfo& fi) const {
  if (!pkey_match(fi.bth->pkey.value(), pkey_)) return RxAction::kBadPkey;
  if (!av_set_) return RxAction::kAccepted;  // no remote address yet: the state check refuses it
  const verbs::Gid& dgid = attr_.ah_attr.grh.dgid;
  if (fi.ipv4 != nullptr) {
    if (!verbs::gid_is_ipv4(dgid) || !(fi.ipv4->src == verbs::gid_to_ipv4(dgid))) return RxAction::kBadSrc;
  } else if (fi.ipv6 == nullptr || verbs::gid_is_ipv4(dgid) || !(fi.ipv6->src == dgid)) {
    return RxAction::kBadSrc;
  }
  return RxAction::kAccepted;
}

RxAction Qp::on_rx(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now) {
  if (mrc_ != nullptr || fi.kind != wire::FrameKind::kRoce) [[unlikely]] return on_rx_mrc(fi, m, now);
  const uint8_t op = fi.bth->opcode;
  RxAction a = check_peer(fi);
  if (a != RxAction::kAccepted) {
    ++ctr_.rx[static_cast<int>(a)];
    return a;
  }
  if (op == static_cast<uint8_t>(Opcode::kCnp)) {
    ++ctr_.rx_cnps;
    cc_on_cnp(now);
    a = RxAction::kCnp;
  } else {
    // Notification point: a CE-marked data packet may send a CNP (CC SEAM).
    if (fi.payload_bytes > 0 && is_ce(fi) && (state_ == QpState::kRtr || state_ == QpState::kRts)) {
      ++ctr_.rx_ce;
      if (cnp_gate_.should_send(now)) cnp_pending_ = true;
    }
    if (rx_int_present_ && !is_response(op) && (rx_int_flags_ & wire::IntTail::kFlagEcho) == 0) [[unlikely]] {
      take_rx_int(rx_int_.data(), static_cast<uint32_t>(rx_int_.size()), rx_int_flags_, now);
    }
    a = is_response(op) ? on_response(fi, m, now) : on_request(fi, m, now);
  }
  ++ctr_.rx[static_cast<int>(a)];
  check_overrun(now);
  return a;
}

RxAction Qp::nak(wire::NakCode code, Psn psn, bool to_err, WcStatus rq_status, TimeNs now) {
  nak_pending_ = true;
  ack_pending_ = false;
  nak_syndrome_ = wire::Aeth::make_syndrome(wire::AethType::kNak, static_cast<uint8_t>(code));
  nak_psn_ = psn;
  if (to_err) to_error(WcStatus::kWrFlushErr, UINT64_MAX, rq_status, now);
  switch (code) {
    case wire::NakCode::kRemoteAccessError: return RxAction::kNakAccess;
    case wire::NakCode::kRemoteOperationalError: return RxAction::kNakRemoteOp;
    default: return RxAction::kNakInvalid;
  }
}

// An RNR NAK for `psn` (no receive WQE). The packets the requester sent
// after it are out of sequence until it sends `psn` again (after the RNR
// timer): they are dropped without a NAK of their own, as after a sequence
// NAK (nak_seq_sent_). A sequence-error NAK for the same PSN would replace
// the RNR NAK still pending (one NAK slot) and make the requester go back at
// once, each time counted against retry_cnt instead of rnr_retry: a requester
// whose responder ran out of (shared) receives failed with RETRY_EXC_ERR
// (ib_send_bw --use-srq, 2 QPs, about 1 run in 10).
void Qp::rnr_nak(Psn psn) {
  nak_pending_ = true;
  ack_pending_ = false;
  nak_syndrome_ = wire::Aeth::make_syndrome(wire::AethType::kRnrNak, attr_.min_rnr_timer);
  nak_psn_ = psn;
  nak_seq_sent_ = true;
}

RxAction Qp::on_request(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now) {
  if (state_ != QpState::kRtr && state_ != QpState::kRts) return RxAction::kWrongState;
  const Psn psn = fi.bth->get_psn();
  const int32_t d = Psn::diff(psn, epsn_);
  if (d < 0) return on_duplicate(fi, now);
  if (d > 0) {
    if (nak_seq_sent_) return RxAction::kOutOfSeqDropped;
    nak_seq_sent_ = true;
    nak_pending_ = true;
    ack_pending_ = false;
    nak_syndrome_ = wire::Aeth::make_syndrome(wire::AethType::kNak, static_cast<uint8_t>(wire::NakCode::kPsnSequenceError));
    nak_psn_ = epsn_;
    return RxAction::kNakSeqSent;
  }
  return execute(fi, m, now);
}

RxAction Qp::on_duplicate(const wire::FrameInfo& fi, TimeNs) {
  const ReqInfo r = classify(fi.bth->opcode);
  if (r.kind == ReqKind::kRead) {
    // IBA 9.7.5.1.2 (rxe duplicate_request): re-execute this READ alone,
    // from its PSN with its RETH (the requester may ask for the tail of the
    // original), after the same checks as a new READ. READs still queued are
    // kept: a queued READ whose PSN range holds this PSN is re-executed in
    // place (from this PSN); otherwise the READ goes in front of the queue
    // when its PSN precedes every queued one (responses stay in PSN order).
    // Anything else (beyond the size cap, rights, a PSN between queued
    // READs, no room) is dropped: the original was NAKed or is still queued.
    const Psn psn = fi.bth->get_psn();
    const uint64_t va = fi.reth->va.value();
    const uint32_t len = fi.reth->dma_length.value();
    const uint32_t rkey = fi.reth->rkey.value();
    if (len > kMaxMessageBytes || (attr_.qp_access_flags & verbs::kAccessRemoteRead) == 0 ||
        (len > 0 && env_.mrs->check(rkey, true, pd_, va, len, verbs::kAccessRemoteRead) != verbs::MrCheck::kOk)) {
      return RxAction::kDuplicate;
    }
    const uint32_t npkts = len == 0 ? 1 : (len + mtu_ - 1) / mtu_;
    const ReadCtx ctx{va, rkey, len, 0, psn, psn + npkts};
    for (uint32_t k = 0; k < read_count_; ++k) {
      ReadCtx& q = reads_[(read_head_ + k) % kMaxRdAtomic];
      // q covers [q.end - its packets, q.end): the PSN is inside when it is
      // before q.end and not before q's first PSN (q.psn - sent packets).
      const Psn q_first = q.psn - ((q.sent_bytes + mtu_ - 1) / mtu_);
      if (!psn.before(q_first) && psn.before(q.end)) {
        q = ctx;
        return RxAction::kDuplicate;
      }
    }
    if (read_count_ >= kMaxRdAtomic) return RxAction::kDuplicate;
    if (read_count_ > 0 && !psn.before(reads_[read_head_].psn)) return RxAction::kDuplicate;
    read_head_ = (read_head_ + kMaxRdAtomic - 1) % kMaxRdAtomic;
    reads_[read_head_] = ctx;
    ++read_count_;
    return RxAction::kDuplicate;
  }
  // Duplicate SEND / WRITE: acknowledge again (C9-105), do not re-execute.
  ack_pending_ = true;
  return RxAction::kDuplicate;
}

bool Qp::scatter_recv(const rte_mbuf* m, uint32_t off, uint32_t n) {
  const RecvWqe& r = recv_wqe();
  verbs::Pd* const pd = srq_ != nullptr ? srq_->pd() : pd_;  // an SRQ's WQEs are checked against its PD
  // Pass 1: every piece of this packet checked (key, bounds, LOCAL_WRITE,
  // PD) before any byte is written; pass 2 copies.
  struct Piece {
    uint8_t* dst;
    uint32_t n;
  };
  std::array<Piece, kMaxSge> pieces;
  uint32_t np = 0;
  uint32_t skip = recv_offset_;
  uint32_t left = n;
  for (uint32_t i = 0; i < r.num_sge && left > 0; ++i) {
    const verbs::Sge& s = r.sge[i];
    if (skip >= s.length) {
      skip -= s.length;
      continue;
    }
    const uint32_t k = std::min(s.length - skip, left);
    uint64_t local = 0;
    if (env_.mrs->check(s.lkey, false, pd, s.addr + skip, k, verbs::kAccessLocalWrite, nullptr, &local) !=
        verbs::MrCheck::kOk) {
      return false;
    }
    pieces[np++] = Piece{reinterpret_cast<uint8_t*>(local), k};
    left -= k;
    skip = 0;
  }
  if (left != 0) return false;
  for (uint32_t i = 0; i < np; ++i) {
    if (!copy_from_chain(m, off, pieces[i].n, pieces[i].dst)) return false;
    off += pieces[i].n;
  }
  return true;
}

void Qp::complete_recv(WcStatus st, uint32_t byte_len, bool imm, uint32_t imm_v, bool write_imm) {
  const RecvWqe& r = recv_wqe();
  verbs::Wc wc;
  wc.wr_id = r.wr_id;
  wc.status = st;
  wc.opcode = write_imm ? verbs::WcOpcode::kRecvRdmaWithImm : verbs::WcOpcode::kRecv;
  wc.byte_len = byte_len;
  wc.imm_data = imm_v;
  wc.wc_flags = imm ? verbs::kWcWithImm : 0;
  wc.qp_num = qpn_;
  wc.src_qp = attr_.dest_qp_num;
  wc.sl = priority();
  push_cqe(init_.recv_cq, wc);
  if (srq_ == nullptr) {
    rq_head_ = (rq_head_ + 1) & rq_mask_;
    --rq_count_;
  }
  recv_claimed_ = false;
  recv_offset_ = 0;
}

RxAction Qp::execute(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now) {
  const Psn psn = fi.bth->get_psn();
  nak_seq_sent_ = false;
  const ReqInfo r = classify(fi.bth->opcode);
  const uint32_t n = fi.payload_bytes;
  // Opcode sequence (IBA C9-93): FIRST/ONLY/READ only between messages,
  // MIDDLE/LAST only inside a message of the same kind.
  const bool between = in_msg_ == InMsg::kNone;
  if (r.kind == ReqKind::kNone) {
    return nak(wire::NakCode::kInvalidRequest, psn, true, WcStatus::kWrFlushErr, now);
  }
  if (r.first != between ||
      (!between && ((in_msg_ == InMsg::kSend) != (r.kind == ReqKind::kSend)))) {
    return nak(wire::NakCode::kInvalidRequest, psn, true, WcStatus::kWrFlushErr, now);
  }
  // Non-final packets carry exactly one PMTU, final ones at most one.
  if ((!r.last && n != mtu_) || n > mtu_) {
    return nak(wire::NakCode::kInvalidRequest, psn, true, WcStatus::kWrFlushErr, now);
  }

  if (r.kind == ReqKind::kRead) {
    const uint64_t va = fi.reth->va.value();
    const uint32_t len = fi.reth->dma_length.value();
    const uint32_t rkey = fi.reth->rkey.value();
    if (len > kMaxMessageBytes) return nak(wire::NakCode::kInvalidRequest, psn, true, WcStatus::kWrFlushErr, now);
    if ((attr_.qp_access_flags & verbs::kAccessRemoteRead) == 0 ||
        (len > 0 && env_.mrs->check(rkey, true, pd_, va, len, verbs::kAccessRemoteRead) != verbs::MrCheck::kOk)) {
      return nak(wire::NakCode::kRemoteAccessError, psn, true, WcStatus::kWrFlushErr, now);
    }
    const uint32_t limit = std::max<uint32_t>(1, attr_.max_dest_rd_atomic);
    if (read_count_ >= limit) return nak(wire::NakCode::kInvalidRequest, psn, true, WcStatus::kWrFlushErr, now);
    const uint32_t npkts = len == 0 ? 1 : (len + mtu_ - 1) / mtu_;
    reads_[(read_head_ + read_count_) % kMaxRdAtomic] = ReadCtx{va, rkey, len, 0, psn, psn + npkts};
    ++read_count_;
    epsn_ += npkts;
    msn_ = (msn_ + 1) & Psn::kMask;
    return RxAction::kAccepted;
  }

  if (r.kind == ReqKind::kWrite) {
    if (r.first) {
      const uint64_t va = fi.reth->va.value();
      const uint32_t len = fi.reth->dma_length.value();
      const uint32_t rkey = fi.reth->rkey.value();
      if ((attr_.qp_access_flags & verbs::kAccessRemoteWrite) == 0 ||
          (len > 0 && env_.mrs->check(rkey, true, pd_, va, len, verbs::kAccessRemoteWrite) != verbs::MrCheck::kOk)) {
        return nak(wire::NakCode::kRemoteAccessError, psn, true, WcStatus::kWrFlushErr, now);
      }
      write_va_ = va;  // the RETH address (ZERO_BASED MRs take offsets), resolved per packet
      write_rkey_ = rkey;
      write_left_ = len;
      write_total_ = len;
    }
    // The payload must fit the RETH length, and end exactly with it.
    if (n > write_left_ || (r.last && n != write_left_)) {
      return nak(wire::NakCode::kInvalidRequest, psn, true, WcStatus::kWrFlushErr, now);
    }
    if (r.imm && !recv_available()) {
      // RNR before placing the final packet: the requester retries it.
      rnr_nak(psn);
      if (r.first) write_left_ = 0;  // an ONLY_IMM is re-executed from its RETH
      return RxAction::kRnrNakSent;
    }
    if (n > 0) {
      // Checked again for this packet: the MR may have been deregistered (or
      // the QP's rights changed) since the FIRST packet's check.
      uint64_t local = 0;
      if ((attr_.qp_access_flags & verbs::kAccessRemoteWrite) == 0 ||
          env_.mrs->check(write_rkey_, true, pd_, write_va_, n, verbs::kAccessRemoteWrite, nullptr, &local) !=
              verbs::MrCheck::kOk) {
        return nak(wire::NakCode::kRemoteAccessError, psn, true, WcStatus::kWrFlushErr, now);
      }
      if (!copy_from_chain(m, fi.payload_offset, n, reinterpret_cast<uint8_t*>(local))) {
        return nak(wire::NakCode::kInvalidRequest, psn, true, WcStatus::kWrFlushErr, now);
      }
      write_va_ += n;
      write_left_ -= n;
    }
    in_msg_ = r.last ? InMsg::kNone : InMsg::kWrite;
    if (r.last && r.imm) {
      claim_recv();
      complete_recv(WcStatus::kSuccess, write_total_, true, fi.immdt->imm.value(), true);
    }
  } else {  // SEND
    if (r.first) {
      if (!recv_available()) {
        rnr_nak(psn);
        return RxAction::kRnrNakSent;
      }
      claim_recv();
    }
    const RecvWqe& rw = recv_wqe();
    if (recv_offset_ + n > rw.length) {
      // Does not fit the posted buffer: local length error here, invalid
      // request for the requester.
      return nak(wire::NakCode::kInvalidRequest, psn, true, WcStatus::kLocLenErr, now);
    }
    if (!scatter_recv(m, fi.payload_offset, n)) {
      return nak(wire::NakCode::kRemoteOperationalError, psn, true, WcStatus::kLocProtErr, now);
    }
    recv_offset_ += n;
    in_msg_ = r.last ? InMsg::kNone : InMsg::kSend;
    if (r.last) complete_recv(WcStatus::kSuccess, recv_offset_, r.imm, r.imm ? fi.immdt->imm.value() : 0, false);
  }
  epsn_ += 1;
  if (r.last) msn_ = (msn_ + 1) & Psn::kMask;
  if (fi.bth->ack_requested()) ack_pending_ = true;
  return RxAction::kAccepted;
}

}  // namespace sf::nic::rc
