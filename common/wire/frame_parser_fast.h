// parse_roce_fast(): the NIC receive path's fast decode of common, well-formed
// RoCE and MRC data frames, with exactly parse_frame()'s result; everything else is left
// to parse_frame().
#pragma once

#include <cstdint>
#include <span>

#include "common/wire/frame_parser.h"

namespace sf::wire {

// The fast path of parse_frame(head, frame_bytes) (default options) for the
// common, well-formed RoCE frames of the NIC receive path: Ethernet
// [802.1Q], IPv4 with IHL 5 (checksum verified, not a fragment) or IPv6
// without extension headers, all headers within `head`, UDP to port 4791,
// BTH with an RC opcode (0x00-0x14, 0x16, 0x17) and its extension headers,
// payload, pad, ICRC; or an MRC data frame of the default wire config (opcode
// base 0xC0 on RoCE's port, no trim code points: METH + RETH [+ ImmDt],
// payload, pad, ICRC, METH / RETH consistent; not trimmed) or an MRC SACK
// of that config (SETH + CC state, M and rcv_cwnd_pen valid: the frame a
// sender gets per few data frames). Returns true, with `out` exactly what parse_frame()
// returns (reason kOk), only for frames parse_frame() accepts; false for
// everything else (`out` then unspecified: call parse_frame()).
// tests/unit/wire/frame_parser_fast_test.cc and tests/fuzz/wire/fuzz_frame.cc
// hold it to that.
// `mrc` false: MRC frames are left to parse_frame() too (its options
// differ from the default MrcWireConfig: another port or opcode base, MRC
// off, or trim code points).
bool parse_roce_fast(std::span<const uint8_t> head, uint32_t frame_bytes, FrameInfo& out, bool mrc = true);

// Every field of two FrameInfos equal (pointers by address, the opcode
// layout flag by flag): what the fast-path tests compare.
bool same_frame_info(const FrameInfo& a, const FrameInfo& b);

}  // namespace sf::wire
