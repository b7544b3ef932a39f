// Memory-region table. See mr.h.
#include "nic/verbs/mr.h"

#include <bit>
#include <cerrno>
#include <stdexcept>
#include <string>

#include "nic/verbs/verbs.h"

namespace sf::nic::verbs {

const char* to_string(MrCheck c) {
  switch (c) {
    case MrCheck::kOk: return "ok";
    case MrCheck::kBadKey: return "bad_key";
    case MrCheck::kWrongPd: return "wrong_pd";
    case MrCheck::kOutOfRange: return "out_of_range";
    case MrCheck::kNoAccess: return "no_access";
  }
  return "?";
}

namespace {

// splitmix64: seeds the permutation's keys (setup only).
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

MrTable::MrTable(uint32_t capacity, uint64_t seed) : slots_(capacity) {
  if (capacity == 0 || capacity > (1u << 16)) {
    throw std::invalid_argument("nic.mr_table: capacity " + std::to_string(capacity) + " not in 1..65536");
  }
  index_bits_ = static_cast<uint32_t>(std::bit_width(capacity - 1));
  if (index_bits_ == 0) index_bits_ = 1;
  index_mask_ = (1u << index_bits_) - 1;
  tag_mask_ = (1u << (32 - index_bits_)) - 1;
  uint64_t x = seed;
  for (uint32_t& k : mix_) k = static_cast<uint32_t>(splitmix64(x));
  mix_[0] |= 1;  // odd multipliers: bijective modulo 2^w
  mix_[2] |= 1;
}

// A bijection on the w = 32 - index_bits() bit tag space, keyed by mix_:
// distinct registration counts of a slot give distinct tags, so a key of the
// slot repeats only after 2^w registrations. Each step (add, odd multiply,
// xor-shift right, all modulo 2^w) is invertible. Not cryptographic: it
// keeps a peer from predicting keys, as rdma-core providers' key tags do.
uint32_t MrTable::tag_of(uint32_t slot, uint32_t gen) const {
  const uint32_t w = 32 - index_bits_;
  uint32_t x = (gen + slot * 0x9E3779B9u + mix_[1]) & tag_mask_;
  x = (x * mix_[0]) & tag_mask_;
  x ^= x >> (w / 2 + 1);
  x = (x * mix_[2] + mix_[3]) & tag_mask_;
  x ^= x >> (w / 2);
  return x;
}

Mr* MrTable::add(Pd* pd, void* addr, uint64_t length, int access, int* err) {
  *err = EINVAL;
  if (pd == nullptr || (addr == nullptr && length != 0) || (access & ~kAccessKnownMask) != 0) return nullptr;
  // ibv_reg_mr: remote write or atomic requires local write.
  if ((access & (kAccessRemoteWrite | kAccessRemoteAtomic)) != 0 && (access & kAccessLocalWrite) == 0) return nullptr;
  const uint64_t a = reinterpret_cast<uint64_t>(addr);
  if (a + length < a) return nullptr;  // wraps the address space
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.used) continue;
    s.used = true;
    const uint32_t key = (tag_of(i, s.gen++) << index_bits_) | i;
    s.mr = Mr{pd->context, pd, addr, length, i, key, key, access};
    ++used_;
    *err = 0;
    return &s.mr;
  }
  *err = ENOMEM;
  return nullptr;
}

int MrTable::remove(Mr* mr) {
  if (mr == nullptr) return EINVAL;
  const uint32_t i = mr->handle;
  if (i >= slots_.size() || !slots_[i].used || &slots_[i].mr != mr) return EINVAL;
  slots_[i].used = false;
  slots_[i].mr = Mr{};
  --used_;
  return 0;
}

}  // namespace sf::nic::verbs
