// rc::Qp's MRC glue: the members that hand an MRC QP's work to its
// mrc::Transport (docs/mrc.md "Transport"). Compiled into sf_nic_rc with the
// rest of rc::Qp (the Transport uses Qp's internals as a friend).
#include <array>
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

void Qp::switch_pace_port(uint8_t port) { mrc_->swap_pace(tx_port_, port, pace_next_, pace_filed_); }

uint32_t Qp::mrc_pace_planes() const { return mrc_->pace_planes(); }

namespace {

// What each MrcRx counts as in the QP's RxAction counters (a table, not a
// switch: one load per frame).
constexpr std::array<RxAction, mrc::kNumMrcRx> make_rx_actions() {
  using mrc::MrcRx;
  std::array<RxAction, mrc::kNumMrcRx> t{};
  t.fill(RxAction::kBadResponse);
  auto set = [&t](MrcRx r, RxAction a) { t[static_cast<size_t>(r)] = a; };
  set(MrcRx::kPlaced, RxAction::kAccepted);
  set(MrcRx::kDuplicate, RxAction::kDuplicate);
  set(MrcRx::kAccessError, RxAction::kNakAccess);
  set(MrcRx::kInvalid, RxAction::kNakInvalid);
  set(MrcRx::kSack, RxAction::kAckProcessed);
  set(MrcRx::kNack, RxAction::kAckProcessed);
  set(MrcRx::kProbeResponse, RxAction::kAckProcessed);
  set(MrcRx::kNackStale, RxAction::kStaleResponse);
  set(MrcRx::kWrongState, RxAction::kWrongState);
  set(MrcRx::kBadSrc, RxAction::kBadSrc);
  set(MrcRx::kBadPkey, RxAction::kBadPkey);
  set(MrcRx::kOutOfWindow, RxAction::kAccepted);
  set(MrcRx::kMsgWindow, RxAction::kAccepted);
  set(MrcRx::kTrimmed, RxAction::kAccepted);
  set(MrcRx::kProbe, RxAction::kAccepted);
  set(MrcRx::kPortStatus, RxAction::kAccepted);
  return t;
}
constexpr std::array<RxAction, mrc::kNumMrcRx> kRxActions = make_rx_actions();

}  // namespace

RxAction Qp::on_rx_mrc(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now) {
  RxAction a = RxAction::kWrongState;  // an RC QP takes no MRC frame
  if (mrc_ != nullptr) {
    const int r = mrc_->on_rx(fi, m, now);
    a = r >= 0 && r < mrc::kNumMrcRx ? kRxActions[static_cast<size_t>(r)] : RxAction::kBadResponse;
  }
  ++ctr_.rx[static_cast<int>(a)];
  return a;
}

}  // namespace sf::nic::rc
