// Completion queue (ibv_cq): a fixed ring of work completions. A completion
// that finds the ring full is not stored: the CQ is marked overrun (the
// verbs IBV_EVENT_CQ_ERR case), the producer QP goes to ERR, and poll()
// reports the overrun as an error return once the stored entries are read.
// Threading: the node's thread. Allocation: at construction.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nic/verbs/verbs.h"

namespace sf::nic::verbs {

class Context;

class Cq {
 public:
  Cq(Context* ctx, uint32_t cqe) : context_(ctx), ring_(cqe == 0 ? 1 : cqe) {}

  // Stores `wc`; false (and overrun) when the ring is full.
  bool push(const Wc& wc);
  // ibv_poll_cq: up to out.size() completions, oldest first; -EOVERFLOW when
  // the ring is empty and a completion was lost to an overrun.
  int poll(std::span<Wc> out);

  uint32_t capacity() const { return static_cast<uint32_t>(ring_.size()); }
  uint32_t depth() const { return count_; }
  bool overrun() const { return overrun_; }
  uint64_t lost() const { return lost_; }
  Context* context() const { return context_; }

 private:
  Context* context_;
  std::vector<Wc> ring_;
  uint32_t head_ = 0;
  uint32_t count_ = 0;
  bool overrun_ = false;
  uint64_t lost_ = 0;
};

}  // namespace sf::nic::verbs
