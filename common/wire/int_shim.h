// HPCC in-band network telemetry (INT) on the wire (docs/wire-formats.md
// "INT shim"; facts: shared/reference/cc.md 2.1). A RoCEv2 / MRC frame of an
// INT-enabled flow carries, between its last payload (or ext header) byte and
// its ICRC, a stack of per-hop records and a 4-byte tail:
//
//   ... BTH (resv7 bit 6 = kBthIntFlag) | ext headers | payload | pad |
//       IntHop[0] .. IntHop[n-1] (16 B each, hop 0 = first switch) | IntTail (4 B) | ICRC
//
// * The sender sets kBthIntFlag before it computes the ICRC, then opens an
//   empty shim (int_open). The ICRC covers the frame *without* the shim (the
//   IP / UDP lengths as sent), so switches append without touching it and
//   the receiver verifies it after int_strip().
// * Each switch egress (at dequeue) appends one IntHop (int_append_hop) and
//   grows the IP / UDP lengths; a full stack gets the overflow flag instead.
// * The receiver reads the records (int_read), strips the shim, and echoes
//   the records in its ACK / SACK (int_echo: same place, tail flag kEcho),
//   which no switch appends to. A sender may ask for the responder's
//   turnaround (kFlagTurnaround, Swift's endpoint delay): the echo then
//   carries it in 4 bytes between the records and the tail.
// tshark dissects such a frame as RoCE: the shim sits where it looks for
// payload, the ICRC stays last. Pure functions on caller buffers: no
// allocation, never reads or writes outside the given span.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "common/wire/byte_order.h"
#include "common/wire/roce.h"

namespace sf::wire {

struct FrameInfo;
struct FwdHeaders;

// BTH byte 8 is AckReq(1) | resv7(7): bit 6 (the first reserved bit) set = an
// INT shim precedes the ICRC. Covered by the ICRC like the rest of byte 8.
inline constexpr uint8_t kBthIntFlag = 0x40;
inline constexpr bool bth_int_flag(const Bth& b) { return (b.ack_req & kBthIntFlag) != 0; }
inline constexpr void set_bth_int_flag(Bth& b, bool on) {
  b.ack_req = static_cast<uint8_t>(on ? (b.ack_req | kBthIntFlag) : (b.ack_req & ~kBthIntFlag));
}

// One switch hop, written at egress dequeue (HPCC's B, ts, txBytes, qLen).
// Counters are modular; a reader takes deltas between two records of the same
// hop (int_ts_delta_ns, int_tx_delta_bytes).
struct IntHop {
  static constexpr std::size_t kSize = 16;
  static constexpr uint32_t kTxUnitBytes = 64;  // tx_units counts 64-byte units

  Be32 ts_ns;       // egress dequeue time, ns mod 2^32 (wraps every 4.29 s)
  Be32 tx_units;    // bytes sent by the egress port before this packet / 64, mod 2^32
  Be32 qlen_bytes;  // bytes queued at the egress port (all queues), packet excluded; saturates
  Be32 rate_mbps;   // egress link capacity, Mb/s
};
static_assert(sizeof(IntHop) == IntHop::kSize);
static_assert(alignof(IntHop) == 1);

// A record from switch values (truncates to the wire widths; saturates qlen).
IntHop make_int_hop(uint64_t now_ns, uint64_t port_tx_bytes, uint64_t qlen_bytes, uint64_t rate_bps);

inline constexpr uint32_t int_ts_delta_ns(const IntHop& now, const IntHop& before) {
  return now.ts_ns.value() - before.ts_ns.value();
}
inline constexpr uint64_t int_tx_delta_bytes(const IntHop& now, const IntHop& before) {
  return uint64_t{static_cast<uint32_t>(now.tx_units.value() - before.tx_units.value())} * IntHop::kTxUnitBytes;
}

// The last 4 bytes before the ICRC.
struct IntTail {
  static constexpr std::size_t kSize = 4;
  static constexpr uint8_t kMagic = 0xA1;        // 0xA (INT) | version 1
  static constexpr uint8_t kFlagEcho = 0x01;     // echoed in an ACK: frozen, switches do not append
  static constexpr uint8_t kFlagOverflow = 0x02; // a switch found the stack full and did not append
  // In a request: the sender asks for the responder's turnaround. In an echo:
  // a Be32 turnaround_ns sits between the last record and the tail.
  static constexpr uint8_t kFlagTurnaround = 0x04;

  uint8_t magic;      // kMagic
  uint8_t flags;      // kFlag*
  uint8_t hop_count;  // records before the tail
  uint8_t max_hops;   // records the sender allows (1..kIntMaxHops)
};
static_assert(sizeof(IntTail) == IntTail::kSize);

inline constexpr uint8_t kIntMaxHops = 8;
inline constexpr uint8_t kIntDefaultMaxHops = 5;  // HPCC ns-3
inline constexpr uint32_t kIntTurnaroundBytes = 4;
inline constexpr uint32_t int_shim_bytes(uint32_t hops) { return hops * IntHop::kSize + IntTail::kSize; }
// The shim a tail describes: its records, the echoed turnaround if any, the tail.
inline constexpr uint32_t int_shim_bytes(const IntTail& t) {
  const bool ta = (t.flags & IntTail::kFlagEcho) != 0 && (t.flags & IntTail::kFlagTurnaround) != 0;
  return int_shim_bytes(t.hop_count) + (ta ? kIntTurnaroundBytes : 0);
}

enum class IntStatus : uint8_t {
  kOk,
  kNoFlag,       // BTH kBthIntFlag clear: no shim (int_read/strip/append), or open/echo on a frame without it
  kNotRoce,      // no UDP / BTH where the reference says, or lengths inconsistent with the buffer
  kBadShim,      // tail magic wrong, hop_count > max_hops, max_hops 0 or > kIntMaxHops, or longer than the UDP payload
  kEcho,         // int_append_hop: the shim is an echo (switches leave it alone)
  kFull,         // int_append_hop: hop_count == max_hops (overflow flag set, nothing appended)
  kNoRoom,       // the buffer cannot hold the grown frame, or the IP length would exceed 65535
  kBadArgument,  // int_open / int_echo: max_hops 0 or > kIntMaxHops, more hops than max_hops
};
std::string_view to_string(IntStatus s);

// Where a frame's headers are: the IP header right before UDP (the one the
// ICRC covers), an outer IPv6 header (SRv6, 0 = none) and UDP. The BTH is at
// udp_offset + 8.
struct IntFrameRef {
  uint16_t outer_ipv6_offset = 0;
  uint16_t ip_offset = 0;
  uint8_t ip_version = 0;  // 4 or 6
  uint16_t udp_offset = 0;
  // A shim never starts before this offset (the end of the BTH's extended
  // headers when known; 0 = right after the BTH), so that a frame whose tail
  // was cut (trimmed) cannot have its headers taken for records.
  uint16_t min_shim_offset = 0;
};
// From a parsed RoCE / MRC frame (kind kRoce or kMrc): min_shim_offset is the
// payload offset. ip_version 0 if it is not one.
IntFrameRef int_frame_ref(const FrameInfo& f);
// From the switch's fast parse (no SRv6; the shim may start right after the
// BTH); ip_version 0 if not UDP.
IntFrameRef int_frame_ref(const FwdHeaders& h);

// A shim as found in a frame. `hops` points into the frame.
struct IntShim {
  IntStatus status = IntStatus::kNoFlag;
  uint8_t flags = 0;
  uint8_t max_hops = 0;
  uint32_t offset = 0;  // frame offset of hops[0] (or of the tail when empty)
  std::span<const IntHop> hops{};
  uint32_t turnaround_ns = 0;  // an echo's responder turnaround (has_turnaround())
  bool echo() const { return (flags & IntTail::kFlagEcho) != 0; }
  bool overflow() const { return (flags & IntTail::kFlagOverflow) != 0; }
  // Request: asks for the turnaround. Echo: carries it (turnaround_ns).
  bool turnaround_asked() const { return (flags & IntTail::kFlagTurnaround) != 0; }
  bool has_turnaround() const { return echo() && turnaround_asked(); }
  uint32_t bytes() const {
    return int_shim_bytes(static_cast<uint32_t>(hops.size())) + (has_turnaround() ? kIntTurnaroundBytes : 0);
  }
};

// The shim of a frame of `frame.size()` bytes (status kOk), or why not.
IntShim int_read(std::span<const uint8_t> frame, const IntFrameRef& r);

// Sender: adds an empty shim (0 hops, `max_hops`, `flags`: 0 or
// IntTail::kFlagTurnaround to ask for the responder's turnaround) to a frame
// of `frame_bytes` in `buf` whose BTH INT flag is set and whose ICRC is final.
// Grows the frame by 4 bytes; updates frame_bytes. Call it once per frame:
// whether a frame already has a shim cannot be told from its bytes (the
// payload may hold anything).
IntStatus int_open(std::span<uint8_t> buf, uint32_t& frame_bytes, const IntFrameRef& r,
                   uint8_t max_hops = kIntDefaultMaxHops, uint8_t flags = 0);
// Switch egress: appends `hop` to the shim (16 bytes). kEcho / kFull / kNoFlag
// leave the frame as it is (kFull sets the overflow flag).
IntStatus int_append_hop(std::span<uint8_t> buf, uint32_t& frame_bytes, const IntFrameRef& r, const IntHop& hop);
// Switch egress, chained frame: as int_append_hop for a frame of
// `frame_bytes` whose headers lie in `head` (its first segment) and whose last
// `last_used` bytes are last[0, last_used) (its last segment; `last` runs on
// over the segment's tailroom). The tail and ICRC must lie in that segment
// (last_used >= 8); kNoRoom when it lacks 16 bytes of tailroom. On kOk the
// caller grows the last segment and the frame by IntHop::kSize.
IntStatus int_append_hop_chain(std::span<uint8_t> head, uint32_t frame_bytes, std::span<uint8_t> last,
                               uint32_t last_used, const IntFrameRef& r, const IntHop& hop);
// Receiver of an ACK-to-be: adds a shim with `hops` and the echo flag (plus
// `extra_flags`, e.g. the data packet's overflow flag) to an ACK / SACK frame
// whose BTH INT flag is set and whose ICRC is final. With `turnaround_ns`
// the echo also carries the responder's turnaround (kFlagTurnaround and 4
// bytes before the tail); without it kFlagTurnaround in extra_flags is
// ignored.
IntStatus int_echo(std::span<uint8_t> buf, uint32_t& frame_bytes, const IntFrameRef& r, std::span<const IntHop> hops,
                   uint8_t extra_flags = 0, std::optional<uint32_t> turnaround_ns = std::nullopt);
// Receiver: removes the shim (moves the ICRC back, restores the lengths): the
// frame is again what the sender's ICRC covers. Copy the records (int_read)
// first: they are overwritten.
IntStatus int_strip(std::span<uint8_t> buf, uint32_t& frame_bytes, const IntFrameRef& r);

}  // namespace sf::wire
