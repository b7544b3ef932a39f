// DCQCN notification point (NP) pacing for one QP: turns CE-marked arrivals
// into at most one CNP per interval (shared/reference/cc.md 1.3). Pure logic,
// owned by the lcore that owns the QP; the caller builds and sends the CNP
// (BTH opcode 0x81, DSCP/PCP from DcqcnParams) when told to.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/time.h"

namespace sf::nic {

// What happens to a CE mark inside the interval after a CNP.
enum class CnpCoalesce : uint8_t {
  // Firmware (min_time_between_cnps): it is counted as suppressed, nothing more.
  kSuppress,
  // Paper / htsim: it is remembered, and one CNP goes out when the interval
  // expires (advance() at next_deadline()).
  kDeferred,
};
std::string_view to_string(CnpCoalesce c);

struct CnpLimiterCounters {
  uint64_t sent = 0;        // CNPs the caller was told to send (immediate + deferred)
  uint64_t deferred = 0;    // of which sent at interval expiry (kDeferred)
  uint64_t suppressed = 0;  // CE marks that did not trigger an immediate CNP
};

class CnpLimiter {
 public:
  // interval: minimum spacing of CNPs for this QP (0 = one CNP per CE mark).
  explicit CnpLimiter(TimeNs interval, CnpCoalesce mode = CnpCoalesce::kSuppress)
      : interval_(interval), mode_(mode) {}

  // A CE-marked packet for this QP arrived at `now`: true = send a CNP now.
  bool should_send(TimeNs now);
  // kDeferred: true (once) when a CNP owed for suppressed marks must be sent now.
  bool advance(TimeNs now);
  // When advance() has work; TimeNs::max() when nothing is owed.
  TimeNs next_deadline() const { return pending_ ? sat_add(last_sent_, interval_) : TimeNs::max(); }

  bool pending() const { return pending_; }
  TimeNs interval() const { return interval_; }
  const CnpLimiterCounters& counters() const { return ctr_; }
  uint64_t sent() const { return ctr_.sent; }
  uint64_t suppressed() const { return ctr_.suppressed; }

 private:
  TimeNs interval_;
  CnpCoalesce mode_;
  bool sent_any_ = false;
  bool pending_ = false;
  TimeNs last_sent_;
  CnpLimiterCounters ctr_;
};

}  // namespace sf::nic
