// Srq: a shared receive queue (struct ibv_srq, IBA 10.2.9): one ring of
// receive WQEs that the RC QPs created with it draw from, oldest first. A QP
// takes the WQE at the first packet of a SEND (or at a WRITE_WITH_IMM) and
// keeps its copy until the message completes, so a slot is free for new
// posts at once and two QPs never hold the same WQE. The WQEs of an SRQ are
// not flushed when one of its QPs goes to ERR (only the one that QP had
// taken is completed, with the error); the MR checks of a WQE's scatter list
// are against the SRQ's PD. No limit event (`srq_limit`: there are no async
// events). MRC QPs have no SRQ. Threading: the node's thread.
// Allocation: the ring, at creation (control path).
#pragma once

#include <array>
#include <cerrno>
#include <cstdint>
#include <vector>

#include "nic/verbs/mr.h"
#include "nic/verbs/verbs.h"

namespace sf::nic::rc {

inline constexpr uint32_t kMaxSge = 4;     // per work request
inline constexpr uint32_t kMaxWr = 16384;  // per work queue
inline constexpr uint32_t kMaxMessageBytes = 1u << 31;

// One posted receive (a QP's receive queue and an SRQ alike).
struct RecvWqe {
  uint64_t wr_id = 0;
  uint8_t num_sge = 0;
  std::array<verbs::Sge, kMaxSge> sge{};
  uint32_t length = 0;  // the scatter list's bytes, at most kMaxMessageBytes
};

// `wr` as a WQE; false when its scatter list is not 0..max_sge entries.
bool to_recv_wqe(const verbs::RecvWr& wr, uint32_t max_sge, RecvWqe* out);

class Srq {
 public:
  // max_wr 1..kMaxWr, max_sge 1..kMaxSge (0 = 1); Context and PD as created with.
  Srq(verbs::Context* ctx, verbs::Pd* pd, uint32_t max_wr, uint32_t max_sge);

  // ibv_post_srq_recv: EINVAL (a bad scatter list) or ENOMEM (full) at the
  // first WR not posted, *bad pointing at it.
  int post(verbs::RecvWr* wr, verbs::RecvWr** bad);
  bool empty() const { return count_ == 0; }
  uint32_t count() const { return count_; }
  // Removes the oldest WQE and returns it (the caller checked !empty()).
  RecvWqe take() {
    const RecvWqe r = ring_[head_];
    head_ = (head_ + 1) & mask_;
    --count_;
    return r;
  }

  verbs::Context* context() const { return ctx_; }
  verbs::Pd* pd() const { return pd_; }
  uint32_t max_wr() const { return max_wr_; }
  uint32_t max_sge() const { return max_sge_; }
  // QPs created with this SRQ and not destroyed (destroy_srq: EBUSY while > 0).
  uint32_t qps = 0;

 private:
  verbs::Context* ctx_;
  verbs::Pd* pd_;
  uint32_t max_wr_;
  uint32_t max_sge_;
  std::vector<RecvWqe> ring_;
  uint32_t mask_ = 0;
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace sf::nic::rc
