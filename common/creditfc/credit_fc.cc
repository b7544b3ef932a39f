// Credit-based flow control. See credit_fc.h.
#include "common/creditfc/credit_fc.h"

namespace sf {

CreditSender::CreditSender(const CreditFcConfig& cfg) {
  for (int v = 0; v < kMaxVls; ++v) limit_[v] = cfg.credits(v);
}

void CreditSender::on_update(int vl, uint32_t granted_total, TimeNs now) {
  // Cumulative: a stale (reordered) update never takes credits back.
  if (static_cast<int32_t>(granted_total - limit_[vl]) > 0) limit_[vl] = granted_total;
  if (stalled_[vl] && can_send(vl, need_[vl])) end_stall(vl, now);
}

void CreditSender::note_backlog(int vl, uint32_t head_credits, TimeNs now) {
  need_[vl] = head_credits;
  const bool stall = head_credits != 0 && !can_send(vl, head_credits);
  if (stall && !stalled_[vl]) {
    stalled_[vl] = true;
    stall_since_[vl] = now;
    ++stall_[vl].stalls;
    ++all_.stalls;
  } else if (!stall && stalled_[vl]) {
    end_stall(vl, now);
  }
}

void CreditSender::end_stall(int vl, TimeNs now) {
  stalled_[vl] = false;
  const TimeNs d = now - stall_since_[vl];
  stall_[vl].stalled_time += d;
  all_.stalled_time += d;
  int b = 0;
  for (int64_t us = d.ns() / 1000; us > 0 && b < kStallBuckets - 1; us >>= 1) ++b;
  ++stall_[vl].histogram[b];
  ++all_.histogram[b];
}

CreditReceiver::CreditReceiver(const CreditFcConfig& cfg)
    : threshold_(cfg.update_threshold == 0 ? 1 : cfg.update_threshold) {
  for (int v = 0; v < kMaxVls; ++v) granted_[v] = credits_[v] = advertised_[v] = cfg.credits(v);
}

bool CreditReceiver::on_arrival(int vl, uint32_t credits) {
  occupied_[vl] += credits;
  received_[vl] += credits;
  return static_cast<int32_t>(received_[vl] - advertised_[vl]) <= 0;
}

void CreditReceiver::sent_updates(uint16_t mask) {
  for (int v = 0; v < kMaxVls; ++v) {
    if ((mask >> v) & 1u) advertised_[v] = granted_[v];
  }
  due_ = static_cast<uint16_t>(due_ & ~mask);
}

void CreditReceiver::on_freed(int vl, uint32_t credits) {
  occupied_[vl] -= credits < occupied_[vl] ? credits : occupied_[vl];
  granted_[vl] += credits;
  freed_since_update_[vl] += credits;
  if (freed_since_update_[vl] >= threshold_) {
    freed_since_update_[vl] = 0;
    due_ = static_cast<uint16_t>(due_ | 1u << vl);
  }
}

int VlArbiter::pick(uint16_t ready) {
  if (ready == 0) return -1;
  for (int i = 0; i <= kMaxVls; ++i) {
    const bool ok = ((ready >> cur_) & 1u) && weight_[cur_] > 0 && used_ < weight_[cur_];
    if (ok) {
      ++used_;
      return cur_;
    }
    cur_ = (cur_ + 1) % kMaxVls;
    used_ = 0;
  }
  return -1;
}

}  // namespace sf
