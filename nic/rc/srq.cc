// Shared receive queue. See srq.h.
#include "nic/rc/srq.h"

#include <algorithm>
#include <bit>

namespace sf::nic::rc {

bool to_recv_wqe(const verbs::RecvWr& wr, uint32_t max_sge, RecvWqe* out) {
  if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > max_sge || (wr.num_sge > 0 && wr.sg_list == nullptr)) {
    return false;
  }
  out->wr_id = wr.wr_id;
  out->num_sge = static_cast<uint8_t>(wr.num_sge);
  uint64_t total = 0;
  for (int i = 0; i < wr.num_sge; ++i) {
    out->sge[static_cast<size_t>(i)] = wr.sg_list[i];
    total += wr.sg_list[i].length;
  }
  out->length = total > kMaxMessageBytes ? kMaxMessageBytes : static_cast<uint32_t>(total);
  return true;
}

Srq::Srq(verbs::Context* ctx, verbs::Pd* pd, uint32_t max_wr, uint32_t max_sge)
    : ctx_(ctx), pd_(pd), max_wr_(max_wr), max_sge_(max_sge == 0 ? 1 : max_sge),
      ring_(std::bit_ceil(std::max<uint32_t>(max_wr, 1))), mask_(static_cast<uint32_t>(ring_.size() - 1)) {}

int Srq::post(verbs::RecvWr* wr, verbs::RecvWr** bad) {
  for (; wr != nullptr; wr = wr->next) {
    if (count_ >= max_wr_) {
      if (bad != nullptr) *bad = wr;
      return ENOMEM;
    }
    if (!to_recv_wqe(*wr, max_sge_, &ring_[(head_ + count_) & mask_])) {
      if (bad != nullptr) *bad = wr;
      return EINVAL;
    }
    ++count_;
  }
  return 0;
}

}  // namespace sf::nic::rc
