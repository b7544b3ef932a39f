// Protection domains and memory regions (ibv_pd, ibv_mr) and the table that
// resolves lkeys/rkeys with access and bounds checks. Every byte the NIC
// reads or writes on behalf of a work request or a remote request goes
// through MrTable::check() in the packet that moves it (nic/rc: each WRITE /
// SEND / READ-response packet at both ends, each request payload piece), so
// nothing outside a registered region is touched, also when an MR is
// deregistered while a message is in flight (docs/invariants.md).
// Threading: the node's thread (docs/nic.md). Allocation: at construction.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "nic/verbs/verbs.h"

namespace sf::nic::verbs {

class Context;

// struct ibv_pd.
struct Pd {
  Context* context = nullptr;
  uint32_t handle = 0;
};

// struct ibv_mr. `addr` is a virtual address of this process (as in verbs).
struct Mr {
  Context* context = nullptr;
  Pd* pd = nullptr;
  void* addr = nullptr;
  uint64_t length = 0;  // bytes
  uint32_t handle = 0;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  int access = 0;       // ibv_access_flags
};

// Why a key lookup failed (counted by the caller; maps to a completion
// status or a NAK).
enum class MrCheck : uint8_t { kOk, kBadKey, kWrongPd, kOutOfRange, kNoAccess };
const char* to_string(MrCheck c);

// Fixed-capacity table of MRs. A key (lkey = rkey) is (tag << b) | slot,
// b = index_bits() bits of slot index, and a (32 - b)-bit tag that is a keyed
// permutation of the slot's registration count: unpredictable without the
// table's seed (a peer cannot guess the next key from one it saw), and a
// stale key of a deregistered slot matches again only after 2^(32 - b)
// registrations of that slot (docs/nic.md "Memory keys").
class MrTable {
 public:
  // capacity: 1..65536 MRs (std::invalid_argument otherwise). seed: from the
  // host's RcConfig::seed (getrandom() in sf-nic, fixed in tests / sf-sim).
  explicit MrTable(uint32_t capacity, uint64_t seed = 0);

  // Registers [addr, addr+length) with `access`; nullptr when full or the
  // arguments are invalid (sets *err to an errno value).
  Mr* add(Pd* pd, void* addr, uint64_t length, int access, int* err);
  // Returns 0, or EINVAL for an MR not in this table.
  int remove(Mr* mr);

  // Resolves `key` (an lkey when `remote` is false, else an rkey) and checks
  // that [addr, addr+length) lies inside the MR, that the MR belongs to `pd`
  // and that it grants every bit of `need_access` (0 for a local read).
  // For a remote access to a ZERO_BASED MR, `addr` is an offset into it.
  // *local (if given) receives the process address of `addr`.
  // Inline: every posted SGE and every remote request is checked.
  MrCheck check(uint32_t key, bool remote, const Pd* pd, uint64_t addr, uint64_t length, int need_access,
                const Mr** out = nullptr, uint64_t* local = nullptr) const;

  uint32_t size() const { return used_; }
  // Bits of slot index in a key (the rest is the tag).
  uint32_t index_bits() const { return index_bits_; }
  // Registrations of one slot before a key of that slot repeats.
  uint64_t key_period() const { return uint64_t{1} << (32 - index_bits_); }

 private:
  struct Slot {
    Mr mr;
    bool used = false;
    uint32_t gen = 0;  // registrations of this slot so far
  };
  uint32_t tag_of(uint32_t slot, uint32_t gen) const;
  std::vector<Slot> slots_;
  uint32_t used_ = 0;
  uint32_t index_bits_ = 1;
  uint32_t index_mask_ = 1;
  uint32_t tag_mask_ = 0;
  std::array<uint32_t, 4> mix_{};  // the permutation's keys, from the seed
};

inline MrCheck MrTable::check(uint32_t key, bool remote, const Pd* pd, uint64_t addr, uint64_t length,
                              int need_access, const Mr** out, uint64_t* local) const {
  const uint32_t i = key & index_mask_;
  if (i >= slots_.size() || !slots_[i].used) return MrCheck::kBadKey;
  const Slot& s = slots_[i];
  if ((remote ? s.mr.rkey : s.mr.lkey) != key) return MrCheck::kBadKey;
  if (pd != nullptr && s.mr.pd != pd) return MrCheck::kWrongPd;
  if ((s.mr.access & need_access) != need_access) return MrCheck::kNoAccess;
  if (remote && need_access == 0) return MrCheck::kNoAccess;  // a remote op always needs a right
  const uint64_t base = reinterpret_cast<uint64_t>(s.mr.addr);
  if (remote && (s.mr.access & kAccessZeroBased) != 0) {
    if (length > s.mr.length || addr > s.mr.length - length) return MrCheck::kOutOfRange;
    if (local != nullptr) *local = base + addr;
  } else {
    if (addr < base || length > s.mr.length || addr - base > s.mr.length - length) return MrCheck::kOutOfRange;
    if (local != nullptr) *local = addr;
  }
  if (out != nullptr) *out = &s.mr;
  return MrCheck::kOk;
}

}  // namespace sf::nic::verbs
