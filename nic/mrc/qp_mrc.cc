// rc::Qp's MRC glue: the members that hand an MRC QP's work to its
// mrc::Transport (docs/mrc.md "Transport"). Compiled into sf_nic_rc with the
// rest of rc::Qp (the Transport uses Qp's internals as a friend).
#include <cerrno>

#include "nic/mrc/transport.h"
#include "nic/rc/qp.h"

namespace sf::nic::rc {

Qp::Qp() = default;
Qp::~Qp() = default;

int Qp::modify_mrc(const verbs::MrcQpAttr& attr, int mask) {
  if (!in_use_ || mrc_ == nullptr) return EINVAL;
  return mrc_->modify(attr, mask, state_);
}

const char* Qp::mrc_error() const {
  if (mrc_ == nullptr) return "not an MRC QP";
  return mrc_->error();
}

bool Qp::mrc_has_ctrl() const { return mrc_->has_ctrl(); }

bool Qp::mrc_sends_on(uint8_t port) const { return mrc_->sends_on(port); }

uint8_t Qp::mrc_ctrl_port() const { return mrc_->ctrl_port(); }

TimeNs Qp::mrc_next_deadline() const { return mrc_->next_deadline(); }

void Qp::switch_pace_port(uint8_t port) { mrc_->swap_pace(tx_port_, port, pace_next_, pace_filed_); }

uint32_t Qp::mrc_pace_planes() const { return mrc_->pace_planes(); }

RxAction Qp::on_rx_mrc(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now) {
  RxAction a = RxAction::kWrongState;  // an RC QP takes no MRC frame
  if (mrc_ != nullptr) {
    switch (static_cast<mrc::MrcRx>(mrc_->on_rx(fi, m, now))) {
      case mrc::MrcRx::kPlaced: a = RxAction::kAccepted; break;
      case mrc::MrcRx::kDuplicate: a = RxAction::kDuplicate; break;
      case mrc::MrcRx::kAccessError: a = RxAction::kNakAccess; break;
      case mrc::MrcRx::kInvalid: a = RxAction::kNakInvalid; break;
      case mrc::MrcRx::kSack:
      case mrc::MrcRx::kNack:
      case mrc::MrcRx::kProbeResponse: a = RxAction::kAckProcessed; break;
      case mrc::MrcRx::kNackStale: a = RxAction::kStaleResponse; break;
      case mrc::MrcRx::kWrongState: a = RxAction::kWrongState; break;
      case mrc::MrcRx::kBadSrc: a = RxAction::kBadSrc; break;
      case mrc::MrcRx::kBadPkey: a = RxAction::kBadPkey; break;
      case mrc::MrcRx::kOutOfWindow:
      case mrc::MrcRx::kMsgWindow:
      case mrc::MrcRx::kTrimmed:
      case mrc::MrcRx::kProbe:
      case mrc::MrcRx::kPortStatus: a = RxAction::kAccepted; break;
      default: a = RxAction::kBadResponse; break;
    }
  }
  ++ctr_.rx[static_cast<int>(a)];
  return a;
}

}  // namespace sf::nic::rc
