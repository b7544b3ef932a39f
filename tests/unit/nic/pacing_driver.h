// HandDriver: drives a NicNode's port 0 at hand-picked poll times, like a
// real-time poll loop whose polls never line up with the departures (the
// pacing tests, pacing_test.cc and pacing_burst_test.cc).
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "common/time.h"
#include "nic/host/nic_node.h"

namespace sf::nic::test {

struct Departure {
  TimeNs at;
  uint32_t len;
};

// Drives `node` port 0 like the poll loop: at each poll time, advance() when
// due, then transmit(); records and frees every frame.
class HandDriver {
 public:
  explicit HandDriver(NicNode& node) : node_(node) {}
  void poll(TimeNs now) {
    polls.push_back(now);
    if (node_.next_wakeup(now) <= now) node_.advance(now);
    std::array<rte_mbuf*, 32> out{};
    const uint16_t n = node_.transmit(0, std::span<rte_mbuf*>(out.data(), out.size()), now);
    for (uint16_t i = 0; i < n; ++i) {
      sent.push_back({now, out[i]->pkt_len});
      rte_pktmbuf_free(out[i]);
    }
    last_burst = n;
  }
  std::vector<TimeNs> polls;
  std::vector<Departure> sent;
  uint16_t last_burst = 0;

 private:
  NicNode& node_;
};

// Poll intervals of 0.7-2.7 us from a fixed xorshift sequence: always less
// than the 3.343 us gap of a 4 KiB frame at 10 Gb/s, never aligned with it.
class Jitter {
 public:
  TimeNs next() {
    x_ ^= x_ << 13;
    x_ ^= x_ >> 7;
    x_ ^= x_ << 17;
    return TimeNs(700 + static_cast<int64_t>(x_ % 2000));
  }

 private:
  uint64_t x_ = 0x9E3779B97F4A7C15ull;
};

// The first poll time at or after `t`.
inline TimeNs first_poll_at_or_after(const std::vector<TimeNs>& polls, TimeNs t) {
  for (TimeNs p : polls) {
    if (p >= t) return p;
  }
  return TimeNs::max();
}

// Posts message 1 at t = 1 us and polls with `j`'s intervals until the first
// 16 frames left (or 1 ms passed); returns the time after the last poll.
// `PairT` has post(uint64_t id) (the pacing tests' own Pair types).
template <class PairT>
TimeNs send_first_message(PairT& p, HandDriver& d, Jitter& j) {
  TimeNs now(1000);
  d.poll(now);
  p.post(1);
  while (d.sent.size() < 16 && now < TimeNs::from_us(1000)) {
    d.poll(now);
    now = now + j.next();
  }
  return now;
}

}  // namespace sf::nic::test
