// "No congestion control": the QP always paces at one fixed rate (the line
// rate) and ignores CNPs and timers. The kNone alternative of CongestionControl.
#pragma once

#include <cstdint>

#include "common/time.h"

namespace sf::nic {

class FixedRate {
 public:
  explicit FixedRate(BitRate rate) : rate_(rate) {}

  void on_cnp(TimeNs /*now*/) { ++cnps_; }
  void on_tx_bytes(uint64_t /*bytes*/, TimeNs /*now*/) {}
  void advance(TimeNs /*now*/) {}
  TimeNs next_deadline() const { return TimeNs::max(); }
  BitRate rate() const { return rate_; }
  uint64_t cnps_ignored() const { return cnps_; }

 private:
  BitRate rate_;
  uint64_t cnps_ = 0;
};

}  // namespace sf::nic
