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

}  // namespace sf::nic::verbs
