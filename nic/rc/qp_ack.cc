// Qp requester, receive side: ACKs (coalesced: one ACK acknowledges every
// PSN up to its own), NAKs (PSN sequence error -> go-back-N; invalid request,
// remote access, remote operational -> the WQE fails with REM_INV_REQ_ERR /
// REM_ACCESS_ERR / REM_OP_ERR and the QP goes to ERR), RNR NAKs (wait the
// timer, rnr_retry) and READ responses (placed in order; a gap asks again
// from the missing PSN). rxe rxe_comp.c check_psn / check_ack / do_read.
// Every response byte goes through MrTable::check (the READ's local SGEs,
// checked again per response) before it is written.
#include <algorithm>
#include <array>
#include <cstring>

#include "nic/rc/chain_copy.h"
#include "nic/rc/qp.h"
#include "nic/rc/rnr_timer.h"

namespace sf::nic::rc {

using verbs::QpState;
using verbs::WcStatus;
using verbs::WrOpcode;
using wire::Opcode;

void Qp::note_progress(TimeNs now) {
  retry_left_ = attr_.retry_cnt;
  rnr_left_ = attr_.rnr_retry;
  retx_deadline_ = TimeNs::max();
  if (outstanding()) arm_retx(now);
}

void Qp::ack_upto(Psn psn, TimeNs now) {
  if (!psn.after(acked_psn_)) return;
  Psn limit = psn;
  bool progress = false;
  while (sq_done_ < sq_posted_) {
    const SendWqe& w = sq_at(sq_done_);
    if (w.opcode == WrOpcode::kRdmaRead) {
      if (psn.before(w.first_psn)) break;
      // The acknowledgement stops before the READ's missing data.
      limit = w.first_psn + w.read_done_pkts - 1;
      if (!w.last_psn().after(psn) && !read_rewound_ && sq_next_ > sq_done_) {
        // The responder has moved past this READ (it sends a READ's
        // responses before any later ACK) but data is missing: the responses
        // were lost. Ask again from the first missing one.
        read_rewound_ = true;
        go_back(w.first_psn + w.read_done_pkts, now);
      }
      break;
    }
    if (w.last_psn().after(psn)) break;
    if (reports_success(w)) complete_send(sq_done_, WcStatus::kSuccess);  // unsignalled: retired silently
    ++sq_done_;
    progress = true;
  }
  if (limit.after(acked_psn_)) {
    acked_psn_ = limit;
    progress = true;
  }
  if (sq_next_ < sq_done_) {
    sq_next_ = sq_done_;
    tx_pkt_ = 0;
  }
  if (progress) note_progress(now);
}

RxAction Qp::on_response(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now) {
  if (state_ != QpState::kRts) return RxAction::kWrongState;
  if (fi.bth->opcode != static_cast<uint8_t>(Opcode::kRcAck)) return on_read_response(fi, m, now);
  const Psn psn = fi.bth->get_psn();
  const wire::Aeth& aeth = *fi.aeth;
  // Window: a response names a PSN in (acked, sent_next); a NAK may name
  // acked + 1 (nothing of the gap acknowledged).
  if (!psn.before(sent_next_psn_)) return RxAction::kGhostResponse;
  switch (aeth.type()) {
    case wire::AethType::kAck:
      if (!psn.after(acked_psn_)) return RxAction::kStaleResponse;
      ack_upto(psn, now);
      if (cc_acks_) cc_feedback(AckKind::kAck, psn, now);
      return RxAction::kAckProcessed;
    case wire::AethType::kRnrNak: {
      if (!psn.after(acked_psn_)) return RxAction::kStaleResponse;
      ack_upto(psn - 1, now);
      // Not congestion: the bytes before it are acknowledged, no RTT sample.
      if (cc_acks_) cc_feedback(AckKind::kAck, acked_psn_ + 1, now);
      if (state_ != QpState::kRts) return RxAction::kAckProcessed;
      if (rnr_left_ == 0) {
        fail_oldest(WcStatus::kRnrRetryExcErr, now);
        return RxAction::kAckProcessed;
      }
      if (rnr_left_ != 7) --rnr_left_;  // 7 = retry forever
      ++ctr_.rnr_waits;
      // acked + 1 is the NAK's PSN, or the first missing byte of an earlier
      // READ whose responses were lost.
      go_back(acked_psn_ + 1, now);
      rnr_until_ = now + rnr_delay(aeth.syndrome_value());
      retx_deadline_ = TimeNs::max();  // the RNR timer runs instead
      return RxAction::kAckProcessed;
    }
    case wire::AethType::kNak: {
      if (!psn.after(acked_psn_)) return RxAction::kStaleResponse;
      ack_upto(psn - 1, now);
      const auto code = static_cast<wire::NakCode>(aeth.syndrome_value());
      // A sequence-error NAK: the packet at `psn` was lost (kNackLoss).
      if (cc_acks_) {
        cc_feedback(code == wire::NakCode::kPsnSequenceError ? AckKind::kNackLoss : AckKind::kAck, acked_psn_ + 1, now);
      }
      if (state_ != QpState::kRts) return RxAction::kAckProcessed;
      if (code == wire::NakCode::kPsnSequenceError) {
        if (retry_left_ == 0) {
          fail_oldest(WcStatus::kRetryExcErr, now);
          return RxAction::kAckProcessed;
        }
        --retry_left_;
        go_back(acked_psn_ + 1, now);  // = psn unless an earlier READ is missing data
        return RxAction::kAckProcessed;
      }
      const WcStatus st = code == wire::NakCode::kInvalidRequest       ? WcStatus::kRemInvReqErr
                          : code == wire::NakCode::kRemoteAccessError ? WcStatus::kRemAccessErr
                                                                      : WcStatus::kRemOpErr;
      fail_oldest(st, now);
      return RxAction::kAckProcessed;
    }
    case wire::AethType::kReserved: break;
  }
  return RxAction::kBadResponse;
}

RxAction Qp::on_read_response(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now) {
  const Psn psn = fi.bth->get_psn();
  if (!psn.before(sent_next_psn_)) return RxAction::kGhostResponse;
  if (!psn.after(acked_psn_)) return RxAction::kStaleResponse;
  // A response implicitly acknowledges everything before it.
  ack_upto(psn - 1, now);
  if (state_ != QpState::kRts || sq_done_ == sq_posted_) return RxAction::kStaleResponse;
  SendWqe& w = sq_at(sq_done_);
  if (w.opcode == WrOpcode::kRdmaRead && psn.after(w.last_psn())) {
    // A response of a later READ while this one misses data: its responses
    // were lost. Ask again from the first missing one, once.
    if (!read_rewound_) {
      read_rewound_ = true;
      go_back(w.first_psn + w.read_done_pkts, now);
    }
    return RxAction::kOutOfSeqDropped;
  }
  if (w.opcode != WrOpcode::kRdmaRead || psn.before(w.first_psn)) return RxAction::kBadResponse;
  const Psn expected = w.first_psn + w.read_done_pkts;
  if (psn != expected) {
    if (psn.before(expected)) return RxAction::kStaleResponse;
    // A response is missing: ask again from it, once per gap.
    if (!read_rewound_) {
      read_rewound_ = true;
      if (retry_left_ == 0) {
        fail_oldest(WcStatus::kRetryExcErr, now);
        return RxAction::kAckProcessed;
      }
      --retry_left_;
      go_back(expected, now);
    }
    return RxAction::kOutOfSeqDropped;
  }
  read_rewound_ = false;
  const auto op = static_cast<Opcode>(fi.bth->opcode);
  const bool last = op == Opcode::kRcReadResponseLast || op == Opcode::kRcReadResponseOnly;
  const bool first = op == Opcode::kRcReadResponseFirst || op == Opcode::kRcReadResponseOnly;
  const uint32_t n = fi.payload_bytes;
  const uint32_t left = w.length - w.read_done_bytes;
  // FIRST only at the read's start (or its resumption), MIDDLE/FIRST full,
  // the final one exactly what is left.
  // (A FIRST may also start a resumed READ: the responder re-executes from
  // the PSN asked for, so `first` is not checked against read_done_pkts.)
  (void)first;
  if (n > mtu_ || (!last && n != mtu_) || (last && n != left) || (!last && n >= left)) {
    fail_oldest(WcStatus::kBadRespErr, now);
    return RxAction::kBadResponse;
  }
  // Scatter into the local SGEs. Each piece is checked again (lkey, bounds,
  // LOCAL_WRITE, PD) before any byte of this response is written: the MR may
  // have been deregistered since post_send checked it. A failed check writes
  // nothing; the READ completes with LOC_PROT_ERR and the QP goes to ERR.
  struct Piece {
    uint8_t* dst;
    uint32_t n;
  };
  std::array<Piece, kMaxSge> pieces;
  uint32_t np = 0;
  uint32_t skip = w.read_done_bytes;
  uint32_t left_bytes = n;
  for (uint32_t i = 0; i < w.num_sge && left_bytes > 0; ++i) {
    const verbs::Sge& s = w.sge[i];
    if (skip >= s.length) {
      skip -= s.length;
      continue;
    }
    const uint32_t k = std::min(s.length - skip, left_bytes);
    uint64_t local = 0;
    if (env_.mrs->check(s.lkey, false, pd_, s.addr + skip, k, verbs::kAccessLocalWrite, nullptr, &local) !=
        verbs::MrCheck::kOk) {
      fail_oldest(WcStatus::kLocProtErr, now);
      return RxAction::kLocProtErr;
    }
    pieces[np++] = Piece{reinterpret_cast<uint8_t*>(local), k};
    left_bytes -= k;
    skip = 0;
  }
  uint32_t off = fi.payload_offset;
  for (uint32_t i = 0; i < np; ++i) {
    if (!copy_from_chain(m, off, pieces[i].n, pieces[i].dst)) {
      fail_oldest(WcStatus::kBadRespErr, now);
      return RxAction::kBadResponse;
    }
    off += pieces[i].n;
  }
  w.read_done_bytes += n;
  ++w.read_done_pkts;
  acked_psn_ = psn;
  if (last) {
    complete_send(sq_done_, WcStatus::kSuccess);
    ++sq_done_;
    acked_psn_ = w.last_psn();
  }
  note_progress(now);
  // The READ request's PSN is its first response's: that one gives the RTT.
  if (cc_acks_) cc_feedback(AckKind::kAck, psn, now);
  // Later WQEs may already be covered by earlier coalesced ACKs.
  return RxAction::kAccepted;
}

}  // namespace sf::nic::rc
