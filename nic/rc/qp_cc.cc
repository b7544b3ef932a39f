// The congestion-control seams of a Qp (cc_seam.h, docs/nic.md "CC seams").
// Today they only count; nic/cc's Dcqcn plugs in here:
//   cc_on_cnp       -> dcqcn_.on_cnp(now)
//   cc_on_tx_bytes  -> dcqcn_.on_tx_bytes(bytes, now)
//   cc_next_deadline-> dcqcn_.next_deadline()
//   cc_advance      -> dcqcn_.advance(now); set_rate(dcqcn_.rate())
// The host calls next_deadline()/advance() of every active QP, so a CC timer
// reported here is honoured in both drivers.
#include "nic/rc/qp.h"

namespace sf::nic::rc {

void Qp::cc_on_cnp(TimeNs) {}

void Qp::cc_on_tx_bytes(uint64_t, TimeNs) {}

TimeNs Qp::cc_next_deadline() const { return TimeNs::max(); }

void Qp::cc_advance(TimeNs) {}

}  // namespace sf::nic::rc
