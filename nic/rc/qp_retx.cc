// Qp retransmission: go-back-N rewind (NAK, timeout, RNR, lost READ
// responses), the retransmit timer (4.096 us x 2^timeout, restarted on
// progress), the RNR wait, and retry exhaustion: the oldest WQE completes with
// RETRY_EXC_ERR / RNR_RETRY_EXC_ERR, the QP goes to ERR and every other WQE
// is flushed (rxe rxe_comp.c COMPST_ERROR_RETRY, endpoint.md 1.10).
#include <algorithm>

#include "nic/mrc/transport.h"
#include "nic/rc/qp.h"
#include "nic/rc/rnr_timer.h"

namespace sf::nic::rc {

using verbs::QpState;
using verbs::WcStatus;
using verbs::WrOpcode;

void Qp::go_back(Psn psn, TimeNs now) {
  ++ctr_.go_back;
  for (uint64_t i = sq_done_; i < sq_posted_; ++i) {
    const SendWqe& w = sq_at(i);
    if (psn.after(w.last_psn())) continue;
    sq_next_ = i;
    if (w.opcode == WrOpcode::kRdmaRead) {
      tx_pkt_ = w.read_done_pkts;
    } else {
      tx_pkt_ = static_cast<uint32_t>(std::max<int32_t>(0, Psn::diff(psn, w.first_psn)));
    }
    break;
  }
  pkts_since_ackreq_ = 0;
  // Everything from `psn` is resent: out of flight until it is (its bytes
  // count again as it leaves; qp_cc.cc).
  if (cc_acks_) {
    uint64_t unused = 0;
    cc_stats_.lost_bytes += cc_release(psn - 1, sent_next_psn_ - 1, true, &unused);
  }
  arm_retx(now);
}

void Qp::arm_retx(TimeNs now) { retx_deadline_ = sat_add(now, retx_timeout(attr_.timeout)); }

void Qp::fail_oldest(WcStatus st, TimeNs now) { to_error(st, sq_done_, WcStatus::kWrFlushErr, now); }

void Qp::advance(TimeNs now) {
  if (!in_use_) return;
  if (mrc_ != nullptr) [[unlikely]] {
    mrc_->advance(now);
    return;
  }
  if (rnr_until_ != TimeNs::max() && now >= rnr_until_) {
    // The wait is over: the rewound WQEs go out again (make_request re-arms
    // the retransmit timer).
    rnr_until_ = TimeNs::max();
  }
  if (retx_deadline_ <= now) {
    retx_deadline_ = TimeNs::max();
    if (state_ == QpState::kRts && outstanding()) {
      ++ctr_.timeouts;
      if (cc_acks_) cc_rto(now);
      if (retry_left_ == 0) {
        fail_oldest(WcStatus::kRetryExcErr, now);
      } else {
        --retry_left_;
        read_rewound_ = false;
        go_back(acked_psn_ + 1, now);
      }
    }
  }
  cc_advance(now);
  check_overrun(now);
}

}  // namespace sf::nic::rc
