// Memory-region table. See mr.h.
#include "nic/verbs/mr.h"

#include <cerrno>

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

MrTable::MrTable(uint32_t capacity) : slots_(capacity) {}

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
    s.tag = static_cast<uint8_t>(s.tag + 1);
    const uint32_t key = (i << 8) | s.tag;
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

MrCheck MrTable::check(uint32_t key, bool remote, const Pd* pd, uint64_t addr, uint64_t length, int need_access,
                       const Mr** out, uint64_t* local) const {
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
