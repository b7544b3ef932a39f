// The congestion-control seams of the RC engine (docs/nic.md "CC seams").
// nic/cc plugs in here and in qp_cc.cc:
//  * CnpGate = nic/cc's CnpLimiter: whether a CE-marked arrival sends a CNP
//    (notification point), at most one per interval per QP.
//  * Qp::cc_on_cnp(now)         a CNP arrived for this QP   -> cc_on_cnp (Dcqcn::on_cnp)
//  * Qp::cc_on_tx_bytes(n, now) a data frame left           -> cc_on_tx_bytes
//  * Qp::cc_next_deadline()     the CC's next timer         -> cc_next_deadline
//  * Qp::cc_advance(now)        run the CC's timers         -> cc_advance
// after each of which the QP's pacing rate follows the CC's rate (capped by
// a rate limit, ibv_modify_qp_rate_limit).
#pragma once

#include "nic/cc/cnp_limiter.h"
#include "nic/cc/congestion_control.h"

namespace sf::nic::rc {

using CnpGate = nic::CnpLimiter;

}  // namespace sf::nic::rc
