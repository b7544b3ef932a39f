// PacketIo: what the poll loop needs from a port (STYLE G4, G5). A DPDK Port,
// an in-memory test double or anything else with burst rx/tx satisfies it; the
// loop is a template on it, so there is no per-packet indirection.
#pragma once

#include <concepts>
#include <cstdint>
#include <span>

struct rte_mbuf;

namespace sf::dpdk {

// Packets per rx burst and tx offer of a poll loop: kDefaultBurst unless
// the loop's options say otherwise (LoopOptions::burst, at most kMaxBurst:
// the size of the loop's arrays and what mempool sizing assumes). 32 is the
// DPDK custom (l2fwd, testpmd); sf-switch bursts 64 by default (--burst): a
// loop iteration's fixed cost (timers, transmit offers, the tx burst call)
// spread over twice the packets.
inline constexpr uint16_t kMaxBurst = 64;
inline constexpr uint16_t kDefaultBurst = 32;

// rx_burst fills `pkts` with up to pkts.size() mbufs (ownership to the caller)
// and returns how many. tx_burst takes the first n it returns (ownership to the
// io); the rest stay with the caller. Both are called from one lcore.
template <typename P>
concept PacketIo = requires(P& p, std::span<rte_mbuf*> pkts) {
  { p.rx_burst(pkts) } -> std::convertible_to<uint16_t>;
  { p.tx_burst(pkts) } -> std::convertible_to<uint16_t>;
};

}  // namespace sf::dpdk
