// Rng: the project's deterministic pseudo-random generator (xoshiro256**,
// seeded through splitmix64). Same seed, same sequence, on every platform and
// standard library (no std::random_device, no std:: distributions). Nodes that
// need randomness (WRED, DCQCN) take an Rng& from their owner (STYLE G2).
#pragma once

#include <cstdint>

namespace sf {

class Rng {
 public:
  explicit Rng(uint64_t seed = 1) {
    uint64_t st = seed;
    for (uint64_t& w : s_) w = splitmix64(st);
  }

  // splitmix64 step: advances `state` and returns a well-mixed value. Also used
  // to derive independent per-stream seeds from one master seed.
  static constexpr uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Seed of stream `index` derived from `seed` (distinct streams per link, so
  // adding a link does not change another link's loss pattern).
  static constexpr uint64_t stream_seed(uint64_t seed, uint64_t index) {
    uint64_t st = seed ^ (0xD1B54A32D192ED03ull * (index + 1));
    return splitmix64(st);
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Bernoulli draw: true with probability p (p <= 0 never, p >= 1 always).
  bool chance(double p) { return uniform() < p; }

  // Uniform in [0, n) for n > 0 (multiply-shift; bias < n / 2^64).
  uint64_t below(uint64_t n) {
    __extension__ using U128 = unsigned __int128;
    return static_cast<uint64_t>((static_cast<U128>(next_u64()) * n) >> 64);
  }

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  uint64_t s_[4];
};

}  // namespace sf
