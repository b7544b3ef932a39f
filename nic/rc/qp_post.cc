// ibv_post_send / ibv_post_recv on a Qp. See qp.h.
//
// Posting follows the verbs rules: post_send needs RTS (EINVAL otherwise; in
// ERR the WR is accepted and completes at once with WR_FLUSH_ERR); post_recv
// works from INIT on. A local key or range error is not a post-time error in
// verbs: the WR is accepted and completes with LOC_PROT_ERR (moving the QP to
// ERR) when the send queue reaches it.
//
// A list of WRs is posted in order up to the first bad one: *bad names it and
// every WR before it stays posted (libibverbs). One call for a list is the
// cheap way to post many: the host is kicked once per call (verbs::post_send).
#include <cerrno>

#include "nic/mrc/transport.h"
#include "nic/rc/qp.h"

namespace sf::nic::rc {

using verbs::QpState;
using verbs::WcStatus;
using verbs::WrOpcode;

namespace {

bool valid_send_opcode(WrOpcode op) {
  switch (op) {
    case WrOpcode::kSend:
    case WrOpcode::kSendWithImm:
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm:
    case WrOpcode::kRdmaRead: return true;
  }
  return false;
}

}  // namespace

int Qp::post_send(verbs::SendWr* wr, verbs::SendWr** bad, TimeNs now) {
  if (bad != nullptr) *bad = nullptr;
  if (wr == nullptr) return 0;
  if (!in_use_) {
    if (bad != nullptr) *bad = wr;
    return EINVAL;
  }
  int err = 0;
  if (state_ != QpState::kRts && state_ != QpState::kErr) {
    err = EINVAL;
  } else {
    const auto max_sge = static_cast<int>(init_.cap.max_send_sge);
    const uint64_t max_wr = init_.cap.max_send_wr;
    for (; wr != nullptr; wr = wr->next) {
      if (wr->num_sge < 0 || wr->num_sge > max_sge || (wr->num_sge > 0 && wr->sg_list == nullptr) ||
          !valid_send_opcode(wr->opcode) ||
          // MRC: RDMA WRITE and WRITE_WITH_IMM only (the spec's scope).
          (mrc_ != nullptr && wr->opcode != WrOpcode::kRdmaWrite && wr->opcode != WrOpcode::kRdmaWriteWithImm) ||
          (wr->send_flags & verbs::kSendInline) != 0) {  // max_inline_data is 0
        err = EINVAL;
        break;
      }
      if (sq_posted_ - sq_done_ >= max_wr) {
        err = ENOMEM;
        break;
      }
      // One pass over the SGEs, into the slot (committed only by ++sq_posted_).
      // Local protection: every SGE must lie in an MR of this QP's PD; READ
      // destinations need LOCAL_WRITE.
      SendWqe& w = sq_at(sq_posted_);
      w.local_err = WcStatus::kSuccess;
      const int need = wr->opcode == WrOpcode::kRdmaRead ? verbs::kAccessLocalWrite : 0;
      uint64_t total = 0;
      for (int i = 0; i < wr->num_sge; ++i) {
        const verbs::Sge& s = wr->sg_list[i];
        w.sge[i] = s;
        total += s.length;
        if (s.length != 0 && env_.mrs->check(s.lkey, false, pd_, s.addr, s.length, need) != verbs::MrCheck::kOk) {
          w.local_err = WcStatus::kLocProtErr;
        }
      }
      if (total > kMaxMessageBytes) {
        err = EINVAL;
        break;
      }
      // Every other field is written too (the slot holds an old WQE): no
      // zeroing pass.
      w.wr_id = wr->wr_id;
      w.opcode = wr->opcode;
      const unsigned f = wr->send_flags;
      w.signaled = (f & verbs::kSendSignaled) != 0;
      w.solicited = (f & verbs::kSendSolicited) != 0;
      w.fence = (f & verbs::kSendFence) != 0;
      w.num_sge = static_cast<uint8_t>(wr->num_sge);
      w.length = static_cast<uint32_t>(total);
      w.remote_addr = wr->rdma.remote_addr;
      w.rkey = wr->rdma.rkey;
      w.imm = wr->imm_data;
      w.read_done_bytes = 0;
      w.read_done_pkts = 0;
      w.mrc_rqmsn = 0;
      w.npkts = w.length == 0 ? 1 : ((w.length - 1) >> mtu_shift_) + 1;
      w.first_psn = next_psn_;
      next_psn_ += w.npkts;
      ++sq_posted_;
      if (state_ == QpState::kErr) flush_all(now);  // completes at once, flushed
    }
  }
  if (err != 0 && bad != nullptr) *bad = wr;
  check_overrun(now);
  return err;
}

int Qp::post_recv(verbs::RecvWr* wr, verbs::RecvWr** bad, TimeNs now) {
  if (bad != nullptr) *bad = nullptr;
  if (wr == nullptr) return 0;
  if (!in_use_ || srq_ != nullptr) {  // a QP with an SRQ takes no receives of its own (post_srq_recv)
    if (bad != nullptr) *bad = wr;
    return EINVAL;
  }
  int err = 0;
  if (state_ == QpState::kReset) {
    err = EINVAL;
  } else {
    for (; wr != nullptr; wr = wr->next) {
      if (rq_count_ >= init_.cap.max_recv_wr) {
        err = ENOMEM;
        break;
      }
      if (!to_recv_wqe(*wr, init_.cap.max_recv_sge, &rq_at(rq_count_))) {
        err = EINVAL;
        break;
      }
      ++rq_count_;
      if (state_ == QpState::kErr) flush_all(now);
    }
    if (mrc_ != nullptr && state_ != QpState::kErr) mrc_->on_recv_posted(now);
  }
  if (err != 0 && bad != nullptr) *bad = wr;
  check_overrun(now);
  return err;
}

}  // namespace sf::nic::rc
