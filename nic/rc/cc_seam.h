// The congestion-control seams of the RC engine (docs/nic.md "CC seams").
// Everything nic/cc plugs into is here or in qp_cc.cc:
//  * CnpGate: decides per QP whether a CE-marked arrival sends a CNP
//    (notification point). Replace the alias with nic/cc's CnpLimiter.
//  * Qp::cc_on_cnp(now)        a CNP arrived for this QP   -> Dcqcn::on_cnp
//  * Qp::cc_on_tx_bytes(n, now) a data frame left          -> Dcqcn::on_tx_bytes
//  * Qp::cc_next_deadline()     the CC's next timer        -> Dcqcn::next_deadline
//  * Qp::cc_advance(now)        run the CC's timers        -> Dcqcn::advance, then set_rate(rate())
//  * Qp::set_rate(BitRate)      the pacing rate the wheel enforces
#pragma once

#include "nic/rc/cnp_gate.h"

namespace sf::nic::rc {

using CnpGate = IntervalCnpGate;

}  // namespace sf::nic::rc
