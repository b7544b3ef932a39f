// libsfverbs' objects: the libibverbs structs it hands out, each embedded at
// the head of the library's own object (ibv_context* == SfContext*, ...) and
// pointing at the NIC's verbs object, and the helpers the entry points share.
// libibverbs' ABI is Debian 12's rdma-core 44 (<infiniband/verbs.h>);
// docs/ibverbs.md "The objects". Split by concern:
//   ibverbs_ops.cc     the context's ops table (post_send, post_recv, poll_cq, req_notify_cq)
//   ibverbs_device.cc  device list, open/close, queries, GIDs, PD, MR
//   ibverbs_queues.cc  completion channels, CQs, QPs, and the verbs not offered
// (SRQs are the shared receive queues of nic/rc/srq.h: ibv_create_srq and
// friends in ibverbs_queues.cc, ibv_post_srq_recv in the ops table.)
// The context is not an extended one (abi_compat is not
// __VERBS_ABI_IS_EXTENDED): every inline extended verb then falls back to its
// legacy call or fails cleanly with EOPNOTSUPP. Every exported libibverbs call
// that takes one of our objects is defined here, so libibverbs' own code never
// sees one.
// Threading: every call that touches the NIC holds the runtime's DeviceLock.
#pragma once

#include <errno.h>
#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "nic/ibverbs/runtime.h"
#include "nic/verbs/device.h"

// verbs.h makes these names function-like macros over inline wrappers; the
// exported functions defined here are the ones those wrappers call.
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova
#undef ibv_get_device_list

namespace sf::nic::ibverbs::abi {

namespace v = sf::nic::verbs;


// The one device of the process.
struct SfDevice {
  ibv_device dev;  // first: ibv_device* == SfDevice*
  Runtime* rt = nullptr;
};

struct SfContext {
  ibv_context ctx;  // first: ibv_context* == SfContext*
  Runtime* rt = nullptr;
  std::unique_ptr<v::Context> vctx;
};

struct SfPd {
  ibv_pd pd;
  v::Pd* v = nullptr;
};

struct SfMr {
  ibv_mr mr;
  v::Mr* v = nullptr;
};

struct SfChannel;

struct SfCq {
  ibv_cq cq;
  WatchedCq w;
  SfChannel* channel = nullptr;
  uint32_t events = 0;  // delivered by ibv_get_cq_event (under the lock)
};

// Completion channel: an eventfd (EFD_SEMAPHORE: one read per event) and the
// CQs whose events are pending, oldest first (at most one per CQ: an event
// disarms its CQ). Under the lock.
struct SfChannel {
  ibv_comp_channel ch;
  std::vector<SfCq*> pending;
};

struct SfSrq {
  ibv_srq srq;
  v::Srq* v = nullptr;
};

struct SfQp {
  ibv_qp qp;
  v::Qp* v = nullptr;
  // IBV_SEND_INLINE: the data is copied at post time into slot
  // (posted % max_send_wr) of a bounce region registered with the QP's PD;
  // a slot is reused only after max_send_wr later posts, when the SQ has
  // retired (acknowledged) its WR.
  uint32_t max_inline = 0;
  uint32_t max_send_wr = 0;
  uint64_t posted = 0;
  std::vector<uint8_t> bounce;
  v::Mr* bounce_mr = nullptr;
};

extern SfDevice g_device;  // ibverbs_device.cc

template <class T>
inline T* sf_of(void* p) {
  return reinterpret_cast<T*>(p);
}

inline SfContext* ctx_of(ibv_context* c) { return reinterpret_cast<SfContext*>(c); }
inline Runtime& rt_of(ibv_context* c) { return *ctx_of(c)->rt; }

template <class T>
inline T* fail_null(int e) {
  errno = e;
  return nullptr;
}


// Fires a CQ's completion event on its channel (WatchedCq::notify; under the lock).
void channel_notify(void* arg);

// The context's ops table (ibverbs_ops.cc).
int op_poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc);
int op_req_notify_cq(ibv_cq* cq, int solicited_only);
int op_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr);
int op_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
int op_post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
ibv_mw* op_alloc_mw(ibv_pd* pd, ibv_mw_type type);
int op_bind_mw(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* bind);
int op_dealloc_mw(ibv_mw* mw);

}  // namespace sf::nic::ibverbs::abi
