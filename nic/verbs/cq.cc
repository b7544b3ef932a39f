// Completion queue ring. See cq.h.
#include "nic/verbs/cq.h"

#include <algorithm>
#include <cerrno>

namespace sf::nic::verbs {

bool Cq::lose() {
  overrun_ = true;
  ++lost_;
  return false;
}

int Cq::poll(std::span<Wc> out) {
  const auto n = static_cast<uint32_t>(std::min<size_t>(out.size(), count_));
  for (uint32_t i = 0; i < n; ++i) out[i] = ring_[(head_ + i) & mask_];
  head_ = (head_ + n) & mask_;
  count_ -= n;
  if (n == 0 && overrun_) return -EOVERFLOW;
  return static_cast<int>(n);
}

}  // namespace sf::nic::verbs
