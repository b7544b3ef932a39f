// SRv6 uSID (RFC 9800 NEXT-C-SID, endpoint.md 5) helpers for an IPv6-in-IPv6
// frame whose outer destination is locator block | active uSID | next uSIDs.
// Default format F3216: 32-bit block, 16-bit uSIDs (up to 6 per address).
#pragma once

#include <cstdint>
#include <span>

#include "common/wire/ipv6.h"

namespace sf::wire {

struct UsidFormat {
  uint8_t block_bytes = 4;  // locator block length; uSIDs are 16 bits
};

// The active uSID: the 16 bits right after the block.
uint16_t active_usid(const Ipv6Addr& da, UsidFormat f = {});
// True when no uSID follows the active one (the argument is all zero): the
// node then performs End processing instead of a shift.
bool usid_args_zero(const Ipv6Addr& da, UsidFormat f = {});
// uN shift: moves the uSIDs after the active one left by 16 bits and zeroes
// the last 16 bits; the block is unchanged.
void usid_shift(Ipv6Addr& da, UsidFormat f = {});
// Builds block | usids[0] | usids[1] ... | 0. Returns false (da untouched) when
// block.size() != f.block_bytes or the uSIDs do not fit in 128 bits.
bool make_usid_address(Ipv6Addr& da, std::span<const uint8_t> block, std::span<const uint16_t> usids,
                       UsidFormat f = {});

}  // namespace sf::wire
