// Completion queue ring. See cq.h.
#include "nic/verbs/cq.h"

#include <cerrno>

namespace sf::nic::verbs {

bool Cq::push(const Wc& wc) {
  if (count_ == ring_.size()) {
    overrun_ = true;
    ++lost_;
    return false;
  }
  ring_[(head_ + count_) % ring_.size()] = wc;
  ++count_;
  return true;
}

int Cq::poll(std::span<Wc> out) {
  uint32_t n = 0;
  while (n < out.size() && count_ > 0) {
    out[n++] = ring_[head_];
    head_ = (head_ + 1) % static_cast<uint32_t>(ring_.size());
    --count_;
  }
  if (n == 0 && overrun_) return -EOVERFLOW;
  return static_cast<int>(n);
}

}  // namespace sf::nic::verbs
