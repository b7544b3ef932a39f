// Protection domains and memory regions (ibv_pd, ibv_mr) and the table that
// resolves lkeys/rkeys with access and bounds checks. Every byte the NIC
// reads or writes on behalf of a work request or a remote request goes
// through MrTable::check(), so nothing outside a registered region is touched.
// Threading: the node's thread (docs/nic.md). Allocation: at construction.
#pragma once

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

// Fixed-capacity table of MRs. Keys are (slot << 8) | tag, so a stale key of
// a deregistered and reused slot does not match (the tag changes).
class MrTable {
 public:
  explicit MrTable(uint32_t capacity);

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

 private:
  struct Slot {
    Mr mr;
    bool used = false;
    uint8_t tag = 0;
  };
  std::vector<Slot> slots_;
  uint32_t used_ = 0;
};

inline MrCheck MrTable::check(uint32_t key, bool remote, const Pd* pd, uint64_t addr, uint64_t length,
                              int need_access, const Mr** out, uint64_t* local) const {
  const uint32_t i = key >> 8;
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
