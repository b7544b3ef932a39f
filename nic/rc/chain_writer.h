// ChainWriter: appends bytes to an mbuf chain, allocating segments as
// needed, and feeds the ICRC: bytes that follow on in memory (header tail,
// copied payload, pad) are folded in one update() rather than one per piece
// (one call into the CRC kernel per contiguous run: its set-up costs more
// than a header's bytes). The transmit path of RC (Qp::build) and of MRC
// (mrc::Transport::emit_data) both build data frames with it.
#pragma once

#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/wire/byte_order.h"
#include "common/wire/icrc.h"
#include "nic/rc/chain_copy.h"

namespace sf::nic::rc {

class ChainWriter {
 public:
  ChainWriter(rte_mempool* pool, rte_mbuf* head) : pool_(pool), head_(head), tail_(head) {}
  // Queues [p, p + n) for the ICRC (after everything queued before).
  [[gnu::always_inline]] void fold(wire::IcrcAccumulator* acc, const uint8_t* p, uint32_t n) {
    if (acc == nullptr || n == 0) return;
    if (p != pend_ + pend_n_ || acc != pend_acc_) {
      flush();
      pend_ = p;
      pend_acc_ = acc;
    }
    pend_n_ += n;
  }
  // Folds what is queued (before value()).
  void flush() {
    if (pend_n_ != 0) pend_acc_->update({pend_, pend_n_});
    pend_n_ = 0;
  }
  // Zero-copy: a segment referencing [src, src + n) of an MR (n <= the
  // MTU), counted in the MR's shared info until the mbuf is freed.
  bool attach(const uint8_t* src, uint32_t n, rte_mbuf_ext_shared_info* sh, wire::IcrcAccumulator* acc) {
    rte_mbuf* seg = rte_pktmbuf_alloc(pool_);
    if (seg == nullptr) return false;
    rte_mbuf_ext_refcnt_update(sh, 1);
    // buf_len = n exactly: no tailroom, so nothing is ever written into the MR.
    rte_pktmbuf_attach_extbuf(seg, const_cast<uint8_t*>(src), RTE_BAD_IOVA, static_cast<uint16_t>(n), sh);
    seg->data_len = static_cast<uint16_t>(n);
    tail_->next = seg;
    tail_ = seg;
    head_->nb_segs++;
    head_->pkt_len += n;
    fold(acc, src, n);
    return true;
  }
  // The 4 ICRC bytes: stored in place when the last segment has room (or
  // in a new segment when it has none, as after an MR segment), else split
  // by append().
  [[gnu::always_inline]] bool append_icrc(uint32_t icrc) {
    if (rte_pktmbuf_tailroom(tail_) == 0) {
      rte_mbuf* seg = rte_pktmbuf_alloc(pool_);
      if (seg == nullptr) return false;
      tail_->next = seg;
      tail_ = seg;
      head_->nb_segs++;
    }
    if (rte_pktmbuf_tailroom(tail_) < wire::kIcrcBytes) {
      uint8_t b[wire::kIcrcBytes];
      wire::store_le32(b, icrc);
      return append(b, wire::kIcrcBytes, nullptr);
    }
    wire::store_le32(rte_pktmbuf_mtod_offset(tail_, uint8_t*, tail_->data_len), icrc);
    tail_->data_len = static_cast<uint16_t>(tail_->data_len + wire::kIcrcBytes);
    head_->pkt_len += wire::kIcrcBytes;
    return true;
  }
  [[gnu::always_inline]] bool append(const uint8_t* src, uint32_t n, wire::IcrcAccumulator* acc) {
    while (n > 0) {
      uint32_t room = rte_pktmbuf_tailroom(tail_);
      if (room == 0) {
        rte_mbuf* seg = rte_pktmbuf_alloc(pool_);
        if (seg == nullptr) return false;
        tail_->next = seg;
        tail_ = seg;
        head_->nb_segs++;
        room = rte_pktmbuf_tailroom(seg);
      }
      const uint32_t k = std::min(room, n);
      uint8_t* dst = rte_pktmbuf_mtod_offset(tail_, uint8_t*, tail_->data_len);
      if (src != nullptr) {
        copy_bytes(dst, src, k);  // not glibc memcpy above 2 KiB: chain_copy.h
        src += k;
      } else {
        std::memset(dst, 0, k);
      }
      fold(acc, dst, k);
      tail_->data_len = static_cast<uint16_t>(tail_->data_len + k);
      head_->pkt_len += k;
      n -= k;
    }
    return true;
  }

 private:
  rte_mempool* pool_;
  rte_mbuf* head_;
  rte_mbuf* tail_;
  const uint8_t* pend_ = nullptr;
  uint32_t pend_n_ = 0;
  wire::IcrcAccumulator* pend_acc_ = nullptr;
};

}  // namespace sf::nic::rc
