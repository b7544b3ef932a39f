// Unpredictable identifiers of the RC transport, derived from a per-process
// seed (RcConfig::seed) at setup, never on the data path (STYLE G2): the
// base of a host's QPNs and the initial PSNs an app picks. The same seed
// gives the same identifiers (tests and sf-sim run with seed 0 and stay
// deterministic); sf-nic draws its seed from getrandom(), so two processes
// started the same way differ (as rdma-core's providers and perftest's
// lrand48() PSNs do). MR keys: nic/verbs/mr.h. docs/nic.md "Memory keys".
#pragma once

#include <cstdint>

namespace sf::nic::rc {

// splitmix64's finaliser: a bijection of 64-bit values with good diffusion.
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The first QPN of a host with `max_qps` QP slots: 0x11 with seed 0, else
// drawn from the seed in [0x11, 2^24 - max_qps] (QPNs are 24 bits; 0 and 1
// are special in IB).
constexpr uint32_t first_qpn(uint64_t seed, uint32_t max_qps) {
  constexpr uint32_t kLow = 0x11;
  const uint32_t span = (1u << 24) - kLow - (max_qps < (1u << 23) ? max_qps : (1u << 23));
  return seed == 0 ? kLow : kLow + static_cast<uint32_t>(mix64(seed ^ 0x51504E) % span);
}

// An initial PSN (24 bits) for the QP `qpn` of a process seeded `seed`.
constexpr uint32_t initial_psn(uint64_t seed, uint32_t qpn) {
  return static_cast<uint32_t>(mix64(seed ^ (uint64_t{qpn} << 32 | 0x50534E)) & 0xFFFFFF);
}

}  // namespace sf::nic::rc
