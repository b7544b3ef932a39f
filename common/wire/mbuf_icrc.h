// ICRC over chained rte_mbufs (endpoint.md 1.7): headers may sit in the first
// segment, payload spread over any number of segments, and the 4 ICRC bytes
// themselves split across segments. The CRC runs incrementally per segment
// (no linearisation). The only DPDK-dependent part of common/wire.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"

namespace sf::wire {

// parse_frame over an mbuf: headers must lie in the first segment
// (kNotContiguous otherwise); payload/ICRC offsets are relative to packet start.
// With the default options, parse_roce_fast() first (the same result).
FrameInfo parse_mbuf(const rte_mbuf* m, ParseOptions opt = {});

// ICRC of the chain per `fi` (from parse_mbuf or parse_frame of the same
// packet bytes). Returns 0 if fi has no ICRC position or the chain is shorter.
uint32_t icrc_compute_mbuf(const rte_mbuf* m, const FrameInfo& fi);
IcrcStatus icrc_verify_mbuf(const rte_mbuf* m, const FrameInfo& fi);
// Computes the ICRC and writes it little-endian at fi.icrc_offset, possibly
// across a segment boundary. Returns false if fi has no ICRC position.
bool icrc_store_mbuf(rte_mbuf* m, const FrameInfo& fi);

}  // namespace sf::wire
