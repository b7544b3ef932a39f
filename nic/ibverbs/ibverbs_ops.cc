// libsfverbs: the ibv_context ops table the inline ibv_post_send /
// ibv_post_recv / ibv_poll_cq / ibv_req_notify_cq dispatch through. No
// allocation: WRs and completions go through stack arrays.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "nic/ibverbs/ibverbs_objects.h"

namespace sf::nic::ibverbs::abi {

namespace {

// Stack room for N objects of one of the NIC's WR/WC structs, left
// uninitialised: their default member initialisers would zero the whole array
// on every call (2 KiB per ibv_post_send: 16 SendWr and 64 Sge; 1.5 KiB per
// ibv_poll_cq that finds a completion: 32 Wc), where each element used is
// assigned in full before it is read (convert_send, v::poll_cq).
template <class T, int N>
struct Scratch {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  union {
    T v[N];
  };
  Scratch() {}  // NOLINT(modernize-use-equals-default): = default would initialise v
};

}  // namespace

void channel_notify(void* arg) {
  SfCq* cq = static_cast<SfCq*>(arg);
  SfChannel* ch = cq->channel;
  if (ch == nullptr) return;
  ch->pending.push_back(cq);  // capacity reserved: never allocates here
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(ch->ch.fd, &one, sizeof one);
}

// ---- the inline verbs (ibv_context_ops) ----------------------------------------

int op_poll_cq(ibv_cq* ibcq, int num_entries, ibv_wc* wc) {
  SfCq* cq = sf_of<SfCq>(ibcq);
  Runtime& rt = rt_of(ibcq->context);
  if (num_entries <= 0) return num_entries == 0 ? 0 : -EINVAL;
  // An empty CQ costs one atomic load: no lock, no syscall, no doorbell
  // (Runtime::ring() says why the progress thread needs no wake here); with
  // inline progress this thread first moves the datapath itself (try_lock:
  // never blocks). Every empty poll counts towards SFVERBS_POLL_YIELD
  // (Runtime::empty_poll()).
  if (cq->w.depth.load(std::memory_order_acquire) == 0) {
    if (!rt.inline_enabled()) {
      rt.empty_poll();
      return 0;
    }
    rt.inline_progress();
    if (cq->w.depth.load(std::memory_order_acquire) == 0) {
      rt.empty_poll();
      return 0;
    }
  }
  Scratch<v::Wc, 32> tmp;
  int got = 0;
  std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt.lock());
  while (got < num_entries) {
    const int want = std::min<int>(num_entries - got, 32);
    const int n = v::poll_cq(cq->w.cq, want, tmp.v);
    if (n < 0) {
      if (got == 0) got = n;
      break;
    }
    for (int i = 0; i < n; ++i) {
      ibv_wc& o = wc[got + i];
      const v::Wc& s = tmp.v[i];
      std::memset(&o, 0, sizeof o);
      o.wr_id = s.wr_id;
      o.status = static_cast<ibv_wc_status>(s.status);
      o.opcode = static_cast<ibv_wc_opcode>(s.opcode);
      o.vendor_err = s.vendor_err;
      o.byte_len = s.byte_len;
      o.imm_data = s.imm_data;
      o.qp_num = s.qp_num;
      o.src_qp = s.src_qp;
      o.wc_flags = s.wc_flags;
      o.pkey_index = s.pkey_index;
      o.slid = s.slid;
      o.sl = s.sl;
      o.dlid_path_bits = s.dlid_path_bits;
    }
    got += n;
    if (n < want) break;
  }
  cq->w.depth.store(cq->w.cq->depth() + (cq->w.cq->overrun() ? 1u : 0u), std::memory_order_release);
  return got;
}

int op_req_notify_cq(ibv_cq* ibcq, int) {
  SfCq* cq = sf_of<SfCq>(ibcq);
  // Without a channel the arm has no one to tell: accepted, as on hardware.
  // A CQ that already holds a completion raises its event now, under the
  // lock (as refresh() would), rather than at the next locked section with
  // work, which may never come; a later completion raises it in the section
  // that stores it. So arming needs no doorbell (Runtime::ring()).
  std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt_of(ibcq->context).lock());
  if (cq->w.cq->depth() > 0 || cq->w.cq->overrun()) {
    if (cq->w.notify != nullptr) cq->w.notify(cq->w.notify_arg);
    cq->w.armed.store(false, std::memory_order_relaxed);
  } else {
    cq->w.armed.store(true, std::memory_order_relaxed);
  }
  return 0;
}

// One ibv_send_wr as the NIC's SendWr; 0 or an errno. `seq`: the WR's post
// number on the QP (its inline bounce slot).
static int convert_send(SfQp* qp, const ibv_send_wr* w, v::SendWr* o, v::Sge* sges, uint64_t seq) {
  switch (w->opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_RDMA_READ:
      break;
    default:
      return EINVAL;  // atomics, memory windows, TSO, invalidate: not offered (ibv_query_device says so)
  }
  if (w->num_sge < 0 || w->num_sge > static_cast<int>(sf::nic::rc::kMaxSge)) return EINVAL;
  *o = v::SendWr{};
  o->wr_id = w->wr_id;
  o->opcode = static_cast<v::WrOpcode>(w->opcode);
  o->send_flags = w->send_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
  o->imm_data = w->imm_data;
  o->rdma.remote_addr = w->wr.rdma.remote_addr;
  o->rdma.rkey = w->wr.rdma.rkey;
  if ((w->send_flags & IBV_SEND_INLINE) != 0 && w->opcode != IBV_WR_RDMA_READ) {
    uint64_t total = 0;
    for (int i = 0; i < w->num_sge; ++i) total += w->sg_list[i].length;
    if (total > qp->max_inline) return EINVAL;
    uint8_t* slot = qp->bounce.data() + (seq % qp->max_send_wr) * qp->max_inline;
    uint64_t off = 0;
    for (int i = 0; i < w->num_sge; ++i) {
      std::memcpy(slot + off, reinterpret_cast<const void*>(w->sg_list[i].addr), w->sg_list[i].length);
      off += w->sg_list[i].length;
    }
    sges[0] = v::Sge{reinterpret_cast<uint64_t>(slot), static_cast<uint32_t>(total), qp->bounce_mr->lkey};
    o->sg_list = sges;
    o->num_sge = total == 0 ? 0 : 1;
    return 0;
  }
  for (int i = 0; i < w->num_sge; ++i) sges[i] = v::Sge{w->sg_list[i].addr, w->sg_list[i].length, w->sg_list[i].lkey};
  o->sg_list = sges;
  o->num_sge = w->num_sge;
  return 0;
}

// A WR list is converted and posted in batches of kPostBatch (one NIC
// post_send, one kick per batch), from stack arrays.
constexpr int kPostBatch = 16;

int op_post_send(ibv_qp* ibqp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  SfQp* qp = sf_of<SfQp>(ibqp);
  Runtime& rt = rt_of(ibqp->context);
  int rc = 0;
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt.lock());
    ibv_send_wr* w = wr;
    while (w != nullptr && rc == 0) {
      Scratch<v::SendWr, kPostBatch> wrs;
      Scratch<v::Sge, kPostBatch * sf::nic::rc::kMaxSge> sges;
      v::SendWr* o = wrs.v;
      ibv_send_wr* src[kPostBatch];
      int n = 0;
      int conv = 0;
      for (; w != nullptr && n < kPostBatch; w = w->next, ++n) {
        conv = convert_send(qp, w, &o[n], &sges.v[n * sf::nic::rc::kMaxSge], qp->posted + static_cast<uint64_t>(n));
        if (conv != 0) break;
        src[n] = w;
        if (n > 0) o[n - 1].next = &o[n];
      }
      if (n > 0) {
        v::SendWr* bad = nullptr;
        rc = v::post_send(qp->v, &o[0], &bad);
        if (rc != 0) {
          const int i = bad != nullptr ? static_cast<int>(bad - o) : 0;
          if (bad_wr != nullptr) *bad_wr = src[i];
          qp->posted += static_cast<uint64_t>(i);
          break;
        }
        qp->posted += static_cast<uint64_t>(n);
      }
      if (conv != 0) {
        rc = conv;
        if (bad_wr != nullptr) *bad_wr = w;
      }
    }
    rt.refresh();
  }
  rt.ring();
  return rc;
}

namespace {

// Each receive WR converted and posted by `post` (a QP's or an SRQ's), one
// at a time under the lock; the first refused is *bad_wr.
template <class Post>
int post_receives(Runtime& rt, ibv_recv_wr* wr, ibv_recv_wr** bad_wr, Post post) {
  int rc = 0;
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt.lock());
    for (ibv_recv_wr* w = wr; w != nullptr; w = w->next) {
      if (w->num_sge < 0 || w->num_sge > static_cast<int>(sf::nic::rc::kMaxSge)) {
        rc = EINVAL;
      } else {
        v::Sge sges[sf::nic::rc::kMaxSge];
        for (int i = 0; i < w->num_sge; ++i) sges[i] = v::Sge{w->sg_list[i].addr, w->sg_list[i].length, w->sg_list[i].lkey};
        v::RecvWr o;
        o.wr_id = w->wr_id;
        o.sg_list = sges;
        o.num_sge = w->num_sge;
        v::RecvWr* bad = nullptr;
        rc = post(&o, &bad);
      }
      if (rc != 0) {
        if (bad_wr != nullptr) *bad_wr = w;
        break;
      }
    }
    rt.refresh();
  }
  rt.ring();
  return rc;
}

}  // namespace

int op_post_recv(ibv_qp* ibqp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  SfQp* qp = sf_of<SfQp>(ibqp);
  return post_receives(rt_of(ibqp->context), wr, bad_wr,
                       [qp](v::RecvWr* o, v::RecvWr** bad) { return v::post_recv(qp->v, o, bad); });
}

int op_post_srq_recv(ibv_srq* ibsrq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  SfSrq* srq = sf_of<SfSrq>(ibsrq);
  return post_receives(rt_of(ibsrq->context), wr, bad_wr,
                       [srq](v::RecvWr* o, v::RecvWr** bad) { return v::post_srq_recv(srq->v, o, bad); });
}

ibv_mw* op_alloc_mw(ibv_pd*, ibv_mw_type) {
  errno = EOPNOTSUPP;
  return nullptr;
}
int op_bind_mw(ibv_qp*, ibv_mw*, ibv_mw_bind*) { return EOPNOTSUPP; }
int op_dealloc_mw(ibv_mw*) { return EOPNOTSUPP; }

}  // namespace sf::nic::ibverbs::abi
