// ibv_post_send / ibv_post_recv on a Qp. See qp.h.
//
// Posting follows the verbs rules: post_send needs RTS (EINVAL otherwise; in
// ERR the WR is accepted and completes at once with WR_FLUSH_ERR); post_recv
// works from INIT on. A local key or range error is not a post-time error in
// verbs: the WR is accepted and completes with LOC_PROT_ERR (moving the QP to
// ERR) when the send queue reaches it.
#include <cerrno>

#include "nic/rc/qp.h"

namespace sf::nic::rc {

using verbs::QpState;
using verbs::WcStatus;
using verbs::WrOpcode;

int Qp::post_send(verbs::SendWr* wr, verbs::SendWr** bad, TimeNs now) {
  if (bad != nullptr) *bad = nullptr;
  for (; wr != nullptr; wr = wr->next) {
    auto fail = [&](int e) {
      if (bad != nullptr) *bad = wr;
      return e;
    };
    if (!in_use_ || (state_ != QpState::kRts && state_ != QpState::kErr)) return fail(EINVAL);
    if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > init_.cap.max_send_sge ||
        (wr->num_sge > 0 && wr->sg_list == nullptr)) {
      return fail(EINVAL);
    }
    switch (wr->opcode) {
      case WrOpcode::kSend:
      case WrOpcode::kSendWithImm:
      case WrOpcode::kRdmaWrite:
      case WrOpcode::kRdmaWriteWithImm:
      case WrOpcode::kRdmaRead: break;
      default: return fail(EINVAL);
    }
    if ((wr->send_flags & verbs::kSendInline) != 0) return fail(EINVAL);  // max_inline_data is 0
    if (sq_posted_ - sq_done_ >= sq_.size()) return fail(ENOMEM);
    uint64_t total = 0;
    for (int i = 0; i < wr->num_sge; ++i) total += wr->sg_list[i].length;
    if (total > kMaxMessageBytes) return fail(EINVAL);

    SendWqe& w = sq_at(sq_posted_);
    w = SendWqe{};
    w.wr_id = wr->wr_id;
    w.opcode = wr->opcode;
    w.signaled = (wr->send_flags & verbs::kSendSignaled) != 0;
    w.solicited = (wr->send_flags & verbs::kSendSolicited) != 0;
    w.fence = (wr->send_flags & verbs::kSendFence) != 0;
    w.num_sge = static_cast<uint8_t>(wr->num_sge);
    for (int i = 0; i < wr->num_sge; ++i) w.sge[i] = wr->sg_list[i];
    w.length = static_cast<uint32_t>(total);
    w.remote_addr = wr->rdma.remote_addr;
    w.rkey = wr->rdma.rkey;
    w.imm = wr->imm_data;
    w.local_err = WcStatus::kSuccess;
    // Local protection: every SGE must lie in an MR of this QP's PD; READ
    // destinations need LOCAL_WRITE.
    const int need = wr->opcode == WrOpcode::kRdmaRead ? verbs::kAccessLocalWrite : 0;
    for (int i = 0; i < wr->num_sge; ++i) {
      if (w.sge[i].length == 0) continue;
      if (env_.mrs->check(w.sge[i].lkey, false, pd_, w.sge[i].addr, w.sge[i].length, need) != verbs::MrCheck::kOk) {
        w.local_err = WcStatus::kLocProtErr;
      }
    }
    w.npkts = w.length == 0 ? 1 : (w.length + mtu_ - 1) / mtu_;
    w.first_psn = next_psn_;
    next_psn_ += w.npkts;
    ++sq_posted_;
    if (state_ == QpState::kErr) flush_all(now);
  }
  check_overrun(now);
  return 0;
}

int Qp::post_recv(verbs::RecvWr* wr, verbs::RecvWr** bad, TimeNs now) {
  if (bad != nullptr) *bad = nullptr;
  for (; wr != nullptr; wr = wr->next) {
    auto fail = [&](int e) {
      if (bad != nullptr) *bad = wr;
      return e;
    };
    if (!in_use_ || state_ == QpState::kReset) return fail(EINVAL);
    if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > init_.cap.max_recv_sge ||
        (wr->num_sge > 0 && wr->sg_list == nullptr)) {
      return fail(EINVAL);
    }
    if (rq_count_ >= init_.cap.max_recv_wr) return fail(ENOMEM);
    RecvWqe& r = rq_[(rq_head_ + rq_count_) % rq_.size()];
    r = RecvWqe{};
    r.wr_id = wr->wr_id;
    r.num_sge = static_cast<uint8_t>(wr->num_sge);
    uint64_t total = 0;
    for (int i = 0; i < wr->num_sge; ++i) {
      r.sge[i] = wr->sg_list[i];
      total += wr->sg_list[i].length;
    }
    r.length = total > kMaxMessageBytes ? kMaxMessageBytes : static_cast<uint32_t>(total);
    ++rq_count_;
    if (state_ == QpState::kErr) flush_all(now);
  }
  check_overrun(now);
  return 0;
}

}  // namespace sf::nic::rc
