// Packet trimming (NDP; SONiC packet_trimming; UET): where a switch would drop
// an IP packet it cuts it to `size` bytes of frame instead, keeping every
// header intact (Ethernet, IP(s), UDP, and for RoCEv2 the BTH and its extended
// headers), rewrites the DSCP, and fixes the IP and UDP lengths (and the IPv4
// checksums) so that the receiver parses it and can tell it was trimmed: the
// DSCP is the trim code point and the payload (and ICRC) are gone.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/wire/frame_parser.h"

namespace sf::wire {

enum class TrimRefusal : uint8_t { kNone, kNotIp, kHeadersNotInHead };
std::string_view to_string(TrimRefusal r);

struct TrimResult {
  TrimRefusal refusal = TrimRefusal::kNone;
  uint32_t frame_bytes = 0;  // new frame length (<= the old one)
  bool cut = false;          // false: already short enough, only remarked
  bool ok() const { return refusal == TrimRefusal::kNone; }
};

// Bytes a trimmed frame keeps at least: the end of the last header.
uint32_t trim_header_end(const FrameInfo& f);

// Trims the frame parsed as `f` (headers in `head`, the contiguous start of a
// frame of f.frame_bytes) to max(size, trim_header_end(f)) bytes and sets the
// DSCP (ECN kept) of every IP header; the UDP checksum becomes 0. Writes only inside `head`; the caller
// drops the bytes past the returned length (rte_pktmbuf_trim / free segments).
TrimResult trim_frame(std::span<uint8_t> head, const FrameInfo& f, uint32_t size, uint8_t dscp);

}  // namespace sf::wire
