// The per-ACK input of the ACK-driven congestion controllers (Swift, BBR,
// HPCC, NSCC; docs/cc.md "Interface"). One plain struct, filled by the QP from
// its ACK / SACK / NACK processing and passed by const reference: no
// allocation, no virtual call. A field an algorithm does not use is ignored by
// it; a field the QP cannot fill keeps its "none" value (below), and the
// algorithms that need it then skip the part of their update that uses it.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

#include "common/time.h"
#include "common/wire/int_shim.h"

namespace sf::nic {

// An RTT sample that is not there.
inline constexpr TimeNs kNoRtt{-1};
// The window of a controller that does not limit bytes in flight (DCQCN, none).
inline constexpr uint64_t kNoWindow = std::numeric_limits<uint64_t>::max();

// What the feedback says about the acknowledged packet(s).
enum class AckKind : uint8_t {
  kAck,       // ACK or SACK that acknowledges data (acked_bytes may be 0 for a duplicate)
  kNackTrim,  // NACK of a trimmed packet: congestion loss (MRC/UET trimming)
  kNackLoss,  // NACK / SACK hole judged lost (fast retransmit), not a trim
};
std::string_view to_string(AckKind k);

struct AckEvent {
  AckKind kind = AckKind::kAck;

  // --- what is acknowledged ---
  uint64_t acked_bytes = 0;     // payload bytes newly acknowledged (cumulative advance + new SACK bits)
  // Sender's byte sequence, unwrapped (64-bit, never wraps): the highest byte
  // acknowledged so far and the next byte to be sent when this ACK arrived.
  // HPCC and BBR end a round when ack_seq passes the snd_nxt of the last round.
  uint64_t ack_seq = 0;
  uint64_t snd_nxt = 0;
  uint64_t inflight_bytes = 0;  // sent and neither acknowledged nor declared lost, after this ACK

  // --- delay (NIC timestamps t1..t4, docs/cc.md) ---
  TimeNs rtt = kNoRtt;             // t4 - t1 of the packet this ACK was triggered by
  TimeNs remote_delay{0};          // t3 - t2 carried in the ACK (responder turnaround); 0 = unknown
  uint8_t hops = 0;                // switch hops on the forward path (TTL decrement); 0 = unknown

  // --- delivery rate (BBR; the Linux rate sample of the acked packet) ---
  uint64_t delivered_bytes = 0;    // bytes delivered between that packet's send and this ACK
  TimeNs delivery_interval{0};     // the time they took (max of send and ACK intervals); 0 = no sample
  bool app_limited = false;        // the sender had nothing to send for part of the interval

  // --- marks and receiver feedback ---
  bool ecn_echo = false;           // the acknowledged packet arrived CE-marked (per packet / per EV)
  uint8_t rcv_cwnd_pen = 0;        // NSCC responder back-pressure 0..127 (MRC CC state)

  // --- HPCC: the INT stack of the acknowledged data packet, echoed in this ACK ---
  std::span<const wire::IntHop> int_hops{};

  bool has_rtt() const { return rtt.ns() >= 0; }
};

}  // namespace sf::nic
