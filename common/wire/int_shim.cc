// HPCC INT shim. See int_shim.h and docs/wire-formats.md "INT shim".
#include "common/wire/int_shim.h"

#include <algorithm>
#include <cstring>

#include "common/wire/frame_parser.h"
#include "common/wire/ipv4.h"
#include "common/wire/ipv6.h"
#include "common/wire/udp.h"

namespace sf::wire {

std::string_view to_string(IntStatus s) {
  switch (s) {
    case IntStatus::kOk: return "ok";
    case IntStatus::kNoFlag: return "no_flag";
    case IntStatus::kNotRoce: return "not_roce";
    case IntStatus::kBadShim: return "bad_shim";
    case IntStatus::kEcho: return "echo";
    case IntStatus::kFull: return "full";
    case IntStatus::kNoRoom: return "no_room";
    case IntStatus::kBadArgument: return "bad_argument";
  }
  return "unknown";
}

IntHop make_int_hop(uint64_t now_ns, uint64_t port_tx_bytes, uint64_t qlen_bytes, uint64_t rate_bps) {
  IntHop h;
  h.ts_ns.set(static_cast<uint32_t>(now_ns));
  h.tx_units.set(static_cast<uint32_t>(port_tx_bytes / IntHop::kTxUnitBytes));
  h.qlen_bytes.set(static_cast<uint32_t>(std::min<uint64_t>(qlen_bytes, UINT32_MAX)));
  h.rate_mbps.set(static_cast<uint32_t>(std::min<uint64_t>(rate_bps / 1'000'000, UINT32_MAX)));
  return h;
}

IntFrameRef int_frame_ref(const FrameInfo& f) {
  IntFrameRef r;
  if ((f.kind != FrameKind::kRoce && f.kind != FrameKind::kMrc) || f.udp == nullptr || f.bth == nullptr) return r;
  r.ip_version = f.ipv4 != nullptr ? 4 : f.ipv6 != nullptr ? 6 : 0;
  r.ip_offset = static_cast<uint16_t>(f.ip_offset);
  r.udp_offset = static_cast<uint16_t>(f.udp_offset);
  r.outer_ipv6_offset = f.outer_ipv6 != nullptr ? static_cast<uint16_t>(f.l3_offset) : 0;
  r.min_shim_offset = static_cast<uint16_t>(f.payload_offset);
  return r;
}

IntFrameRef int_frame_ref(const FwdHeaders& h) {
  IntFrameRef r;
  if (h.udp_offset == 0 || (h.ip_version != 4 && h.ip_version != 6)) return r;
  r.ip_version = h.ip_version;
  r.ip_offset = h.l3_offset;
  r.udp_offset = h.udp_offset;
  return r;
}

namespace {

uint16_t load16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
void store16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// The frame's UDP payload bounds, checked against the bytes we have.
struct Bounds {
  bool ok = false;
  uint32_t bth = 0;      // BTH offset
  uint32_t udp_end = 0;  // one past the UDP payload (ICRC included)
};

Bounds bounds(std::span<const uint8_t> frame, uint32_t frame_bytes, const IntFrameRef& r) {
  Bounds b;
  if (r.ip_version != 4 && r.ip_version != 6) return b;
  const uint32_t ip_hdr = r.ip_version == 4 ? Ipv4Header::kSize : Ipv6Header::kSize;
  if (frame_bytes > frame.size()) return b;
  if (r.outer_ipv6_offset != 0 && r.outer_ipv6_offset + Ipv6Header::kSize > r.ip_offset) return b;
  if (r.ip_offset + ip_hdr > r.udp_offset) return b;
  const uint32_t bth = r.udp_offset + static_cast<uint32_t>(UdpHeader::kSize);
  if (uint64_t{bth} + Bth::kSize + kIcrcBytes > frame_bytes) return b;
  const uint32_t udp_len = load16(frame.data() + r.udp_offset + 4);
  const uint64_t udp_end = uint64_t{r.udp_offset} + udp_len;
  if (udp_len < UdpHeader::kSize + Bth::kSize + kIcrcBytes || udp_end > frame_bytes) return b;
  b.ok = true;
  b.bth = bth;
  b.udp_end = static_cast<uint32_t>(udp_end);
  return b;
}

bool int_flag_at(std::span<const uint8_t> frame, uint32_t bth) {
  return (frame[bth + 8] & kBthIntFlag) != 0;
}

// Adds `delta` (may be negative) to every length from the outer IP header to UDP.
void adjust_lengths(std::span<uint8_t> buf, const IntFrameRef& r, int32_t delta) {
  auto add16 = [&](uint32_t off) {
    store16(buf.data() + off, static_cast<uint16_t>(load16(buf.data() + off) + delta));
  };
  if (r.outer_ipv6_offset != 0) add16(r.outer_ipv6_offset + Ipv6Header::kOffPayloadLength);
  if (r.ip_version == 4) {
    add16(r.ip_offset + Ipv4Header::kOffTotalLength);
    ipv4_set_checksum(*reinterpret_cast<Ipv4Header*>(buf.data() + r.ip_offset));
  } else {
    add16(r.ip_offset + Ipv6Header::kOffPayloadLength);
  }
  add16(r.udp_offset + 4);
  store16(buf.data() + r.udp_offset + UdpHeader::kOffChecksum, 0);  // covered bytes changed (RoCE sends 0)
}

// Room to grow by `grow` bytes: in the buffer and in every 16-bit length.
bool has_room(std::span<const uint8_t> buf, const IntFrameRef& r, const Bounds& b, uint32_t grow) {
  if (uint64_t{b.udp_end} + grow > buf.size()) return false;
  const uint32_t udp_len = b.udp_end - r.udp_offset;
  const uint32_t ip_len = b.udp_end - r.ip_offset;  // >= every inner length
  const uint32_t outer_len = r.outer_ipv6_offset != 0 ? b.udp_end - r.outer_ipv6_offset : ip_len;
  return udp_len + grow <= 0xFFFF && ip_len + grow <= 0xFFFF && outer_len + grow <= 0xFFFF;
}

// `turnaround_ns`: an echo's turnaround field (flags has kEcho and
// kFlagTurnaround), written between the records and the tail.
IntStatus insert_shim(std::span<uint8_t> buf, uint32_t& frame_bytes, const IntFrameRef& r,
                      std::span<const IntHop> hops, uint8_t flags, uint8_t max_hops,
                      std::optional<uint32_t> turnaround_ns = std::nullopt) {
  if (max_hops == 0 || max_hops > kIntMaxHops || hops.size() > max_hops) return IntStatus::kBadArgument;
  const Bounds b = bounds(buf, frame_bytes, r);
  if (!b.ok) return IntStatus::kNotRoce;
  if (!int_flag_at(buf, b.bth)) return IntStatus::kNoFlag;
  const IntTail t{IntTail::kMagic, flags, static_cast<uint8_t>(hops.size()), max_hops};
  const uint32_t grow = int_shim_bytes(t);
  if (!has_room(buf, r, b, grow)) return IntStatus::kNoRoom;
  uint8_t* icrc = buf.data() + b.udp_end - kIcrcBytes;
  std::memmove(icrc + grow, icrc, kIcrcBytes);
  if (!hops.empty()) std::memcpy(icrc, hops.data(), hops.size() * IntHop::kSize);
  uint8_t* at = icrc + hops.size() * IntHop::kSize;
  if (grow != int_shim_bytes(t.hop_count)) {
    Be32 ta;
    ta.set(turnaround_ns.value_or(0));
    std::memcpy(at, &ta, kIntTurnaroundBytes);
    at += kIntTurnaroundBytes;
  }
  std::memcpy(at, &t, IntTail::kSize);
  adjust_lengths(buf, r, static_cast<int32_t>(grow));
  frame_bytes = b.udp_end + grow;  // an Ethernet pad after the IP packet is dropped (the PMD pads)
  return IntStatus::kOk;
}

}  // namespace

IntShim int_read(std::span<const uint8_t> frame, const IntFrameRef& r) {
  IntShim s;
  const Bounds b = bounds(frame, static_cast<uint32_t>(frame.size()), r);
  if (!b.ok) {
    s.status = IntStatus::kNotRoce;
    return s;
  }
  if (!int_flag_at(frame, b.bth)) return s;  // kNoFlag
  s.status = IntStatus::kBadShim;
  const uint32_t min_end = b.bth + Bth::kSize + IntTail::kSize + kIcrcBytes;
  if (b.udp_end < min_end) return s;
  IntTail t;
  std::memcpy(&t, frame.data() + b.udp_end - kIcrcBytes - IntTail::kSize, IntTail::kSize);
  if (t.magic != IntTail::kMagic || t.max_hops == 0 || t.max_hops > kIntMaxHops || t.hop_count > t.max_hops) return s;
  const uint32_t bytes = int_shim_bytes(t);
  const uint32_t first = std::max<uint32_t>(b.bth + Bth::kSize, r.min_shim_offset);
  if (b.udp_end - kIcrcBytes < first || b.udp_end - kIcrcBytes - first < bytes) return s;
  s.status = IntStatus::kOk;
  s.flags = t.flags;
  s.max_hops = t.max_hops;
  s.offset = b.udp_end - kIcrcBytes - bytes;
  s.hops = std::span<const IntHop>(reinterpret_cast<const IntHop*>(frame.data() + s.offset), t.hop_count);
  if (s.has_turnaround()) {
    Be32 ta;
    std::memcpy(&ta, frame.data() + s.offset + t.hop_count * IntHop::kSize, kIntTurnaroundBytes);
    s.turnaround_ns = ta.value();
  }
  return s;
}

IntStatus int_open(std::span<uint8_t> buf, uint32_t& frame_bytes, const IntFrameRef& r, uint8_t max_hops,
                   uint8_t flags) {
  if ((flags & ~IntTail::kFlagTurnaround) != 0) return IntStatus::kBadArgument;
  return insert_shim(buf, frame_bytes, r, {}, flags, max_hops);
}

IntStatus int_echo(std::span<uint8_t> buf, uint32_t& frame_bytes, const IntFrameRef& r, std::span<const IntHop> hops,
                   uint8_t extra_flags, std::optional<uint32_t> turnaround_ns) {
  const uint8_t max_hops = static_cast<uint8_t>(std::max<std::size_t>(hops.size(), 1));
  uint8_t flags = static_cast<uint8_t>((IntTail::kFlagEcho | extra_flags) & ~IntTail::kFlagTurnaround);
  if (turnaround_ns) flags = static_cast<uint8_t>(flags | IntTail::kFlagTurnaround);
  return insert_shim(buf, frame_bytes, r, hops, flags, max_hops, turnaround_ns);
}

IntStatus int_append_hop(std::span<uint8_t> buf, uint32_t& frame_bytes, const IntFrameRef& r, const IntHop& hop) {
  if (frame_bytes > buf.size()) return IntStatus::kNotRoce;
  const IntShim s = int_read(buf.first(frame_bytes), r);
  if (s.status != IntStatus::kOk) return s.status;
  if (s.echo()) return IntStatus::kEcho;
  const Bounds b = bounds(buf, frame_bytes, r);
  uint8_t* tail = buf.data() + b.udp_end - kIcrcBytes - IntTail::kSize;
  if (s.hops.size() >= s.max_hops) {
    tail[1] = static_cast<uint8_t>(tail[1] | IntTail::kFlagOverflow);
    return IntStatus::kFull;
  }
  if (!has_room(buf, r, b, IntHop::kSize)) return IntStatus::kNoRoom;
  // tail + ICRC move up by one record; the record takes the tail's place.
  std::memmove(tail + IntHop::kSize, tail, IntTail::kSize + kIcrcBytes);
  std::memcpy(tail, &hop, IntHop::kSize);
  tail[IntHop::kSize + 2] = static_cast<uint8_t>(s.hops.size() + 1);
  adjust_lengths(buf, r, static_cast<int32_t>(IntHop::kSize));
  frame_bytes = b.udp_end + static_cast<uint32_t>(IntHop::kSize);
  return IntStatus::kOk;
}

IntStatus int_append_hop_chain(std::span<uint8_t> head, uint32_t frame_bytes, std::span<uint8_t> last,
                               uint32_t last_used, const IntFrameRef& r, const IntHop& hop) {
  if (r.ip_version != 4 && r.ip_version != 6) return IntStatus::kNotRoce;
  const uint32_t ip_hdr = r.ip_version == 4 ? Ipv4Header::kSize : Ipv6Header::kSize;
  const uint32_t bth = r.udp_offset + static_cast<uint32_t>(UdpHeader::kSize);
  if (r.ip_offset + ip_hdr > r.udp_offset || uint64_t{bth} + Bth::kSize > head.size()) return IntStatus::kNotRoce;
  if (last_used > last.size() || last_used > frame_bytes) return IntStatus::kNotRoce;
  const uint32_t udp_len = load16(head.data() + r.udp_offset + 4);
  // The UDP datagram must end where the frame does (no pad): the tail is then
  // the last segment's bytes [last_used - 8, last_used - 4).
  if (uint64_t{r.udp_offset} + udp_len != frame_bytes || udp_len < UdpHeader::kSize + Bth::kSize + kIcrcBytes) {
    return IntStatus::kNotRoce;
  }
  if ((head[bth + 8] & kBthIntFlag) == 0) return IntStatus::kNoFlag;
  if (last_used < IntTail::kSize + kIcrcBytes) return IntStatus::kNoRoom;  // tail split across segments
  uint8_t* tail = last.data() + last_used - kIcrcBytes - IntTail::kSize;
  IntTail t;
  std::memcpy(&t, tail, IntTail::kSize);
  const uint32_t first = std::max<uint32_t>(bth + Bth::kSize, r.min_shim_offset);
  if (t.magic != IntTail::kMagic || t.max_hops == 0 || t.max_hops > kIntMaxHops || t.hop_count > t.max_hops ||
      frame_bytes - kIcrcBytes < first + int_shim_bytes(t)) {
    return IntStatus::kBadShim;
  }
  if ((t.flags & IntTail::kFlagEcho) != 0) return IntStatus::kEcho;
  if (t.hop_count >= t.max_hops) {
    tail[1] = static_cast<uint8_t>(tail[1] | IntTail::kFlagOverflow);
    return IntStatus::kFull;
  }
  const uint32_t udp_end = frame_bytes;
  const uint32_t ip_len = udp_end - r.ip_offset;
  const uint32_t outer_len = r.outer_ipv6_offset != 0 ? udp_end - r.outer_ipv6_offset : ip_len;
  if (uint64_t{last_used} + IntHop::kSize > last.size() || udp_len + IntHop::kSize > 0xFFFF ||
      ip_len + IntHop::kSize > 0xFFFF || outer_len + IntHop::kSize > 0xFFFF) {
    return IntStatus::kNoRoom;
  }
  std::memmove(tail + IntHop::kSize, tail, IntTail::kSize + kIcrcBytes);
  std::memcpy(tail, &hop, IntHop::kSize);
  tail[IntHop::kSize + 2] = static_cast<uint8_t>(t.hop_count + 1);
  adjust_lengths(head, r, static_cast<int32_t>(IntHop::kSize));
  return IntStatus::kOk;
}

IntStatus int_strip(std::span<uint8_t> buf, uint32_t& frame_bytes, const IntFrameRef& r) {
  if (frame_bytes > buf.size()) return IntStatus::kNotRoce;
  const IntShim s = int_read(buf.first(frame_bytes), r);
  if (s.status != IntStatus::kOk) return s.status;
  const uint32_t bytes = s.bytes();
  std::memmove(buf.data() + s.offset, buf.data() + s.offset + bytes, kIcrcBytes);
  adjust_lengths(buf, r, -static_cast<int32_t>(bytes));
  frame_bytes = s.offset + static_cast<uint32_t>(kIcrcBytes);
  return IntStatus::kOk;
}

}  // namespace sf::wire
