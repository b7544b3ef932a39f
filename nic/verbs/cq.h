// Completion queue (ibv_cq): a fixed ring of work completions. A completion
// that finds the ring full is not stored: the CQ is marked overrun (the
// verbs IBV_EVENT_CQ_ERR case), the producer QP goes to ERR, and poll()
// reports the overrun as an error return once the stored entries are read.
// Threading: the node's thread. Allocation: at construction.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "nic/verbs/verbs.h"

namespace sf::nic::verbs {

class Context;

class Cq {
 public:
  // Holds `cqe` completions; the ring is a power of two long (masked index).
  Cq(Context* ctx, uint32_t cqe)
      : context_(ctx), capacity_(cqe == 0 ? 1 : cqe), ring_(std::bit_ceil(capacity_)), mask_(static_cast<uint32_t>(ring_.size() - 1)) {}

  // Stores `wc`; false (and overrun) when `capacity()` entries are stored.
  bool push(const Wc& wc) {
    if (count_ == capacity_) return lose();
    ring_[(head_ + count_) & mask_] = wc;
    ++count_;
    return true;
  }
  // ibv_poll_cq: up to out.size() completions, oldest first; -EOVERFLOW when
  // the ring is empty and a completion was lost to an overrun.
  int poll(std::span<Wc> out);

  uint32_t capacity() const { return capacity_; }
  uint32_t depth() const { return count_; }
  bool overrun() const { return overrun_; }
  uint64_t lost() const { return lost_; }
  Context* context() const { return context_; }

 private:
  bool lose();

  Context* context_;
  uint32_t capacity_;
  std::vector<Wc> ring_;
  uint32_t mask_;
  uint32_t head_ = 0;
  uint32_t count_ = 0;
  bool overrun_ = false;
  uint64_t lost_ = 0;
};

}  // namespace sf::nic::verbs
