// libsfverbs: the exported libibverbs entry points for completion channels,
// CQs and QPs, and the verbs not offered (EOPNOTSUPP, NULL with errno).
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

#include "nic/ibverbs/ibverbs_objects.h"

using namespace sf::nic::ibverbs::abi;
using sf::nic::ibverbs::Runtime;

extern "C" {

// ---- completion channels and CQs ----

__attribute__((visibility("default"))) ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
  if (context == nullptr) return fail_null<ibv_comp_channel>(EINVAL);
  auto* ch = new (std::nothrow) SfChannel();
  if (ch == nullptr) return fail_null<ibv_comp_channel>(ENOMEM);
  ch->ch.context = context;
  ch->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
  ch->ch.refcnt = 0;
  if (ch->ch.fd < 0) {
    const int e = errno;
    delete ch;
    return fail_null<ibv_comp_channel>(e);
  }
  ch->pending.reserve(ctx_of(context)->vctx->host().config().max_cqs);
  return &ch->ch;
}

__attribute__((visibility("default"))) int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
  if (channel == nullptr) return EINVAL;
  SfChannel* ch = sf_of<SfChannel>(channel);
  if (ch->ch.refcnt != 0) return EBUSY;
  close(ch->ch.fd);
  delete ch;
  return 0;
}

__attribute__((visibility("default"))) ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context,
                                                             ibv_comp_channel* channel, int comp_vector) {
  if (context == nullptr || cqe <= 0 || comp_vector < 0 || comp_vector >= context->num_comp_vectors) {
    return fail_null<ibv_cq>(EINVAL);
  }
  SfContext* c = ctx_of(context);
  auto* cq = new (std::nothrow) SfCq();
  if (cq == nullptr) return fail_null<ibv_cq>(ENOMEM);
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(c->rt->lock());
    cq->w.cq = v::create_cq(c->vctx.get(), cqe);
    if (cq->w.cq != nullptr) {
      cq->w.notify = channel_notify;
      cq->w.notify_arg = cq;
      cq->channel = sf_of<SfChannel>(channel);
      if (channel != nullptr) ++channel->refcnt;
      c->rt->watch(&cq->w);
    }
  }
  if (cq->w.cq == nullptr) {
    const int e = errno;
    delete cq;
    return fail_null<ibv_cq>(e);
  }
  cq->cq.context = context;
  cq->cq.channel = channel;
  cq->cq.cq_context = cq_context;
  cq->cq.cqe = cqe;
  pthread_mutex_init(&cq->cq.mutex, nullptr);
  pthread_cond_init(&cq->cq.cond, nullptr);
  return &cq->cq;
}

__attribute__((visibility("default"))) int ibv_destroy_cq(ibv_cq* ibcq) {
  if (ibcq == nullptr) return EINVAL;
  SfCq* cq = sf_of<SfCq>(ibcq);
  Runtime& rt = rt_of(ibcq->context);
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt.lock());
    if (const int rc = v::destroy_cq(cq->w.cq); rc != 0) return rc;
    rt.unwatch(&cq->w);
    if (cq->channel != nullptr) {
      auto& p = cq->channel->pending;
      p.erase(std::remove(p.begin(), p.end(), cq), p.end());
      --cq->channel->ch.refcnt;
    }
  }
  pthread_mutex_destroy(&cq->cq.mutex);
  pthread_cond_destroy(&cq->cq.cond);
  delete cq;
  return 0;
}

__attribute__((visibility("default"))) int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context) {
  if (channel == nullptr || cq == nullptr || cq_context == nullptr) return -1;
  SfChannel* ch = sf_of<SfChannel>(channel);
  uint64_t v = 0;
  if (read(ch->ch.fd, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return -1;  // EAGAIN when non-blocking and none
  Runtime& rt = rt_of(channel->context);
  std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt.lock());
  if (ch->pending.empty()) {
    errno = EAGAIN;  // its CQ was destroyed meanwhile
    return -1;
  }
  SfCq* c = ch->pending.front();
  ch->pending.erase(ch->pending.begin());
  ++c->events;
  *cq = &c->cq;
  *cq_context = c->cq.cq_context;
  return 0;
}

__attribute__((visibility("default"))) void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  if (cq == nullptr) return;
  pthread_mutex_lock(&cq->mutex);
  cq->comp_events_completed += nevents;
  pthread_mutex_unlock(&cq->mutex);
}

__attribute__((visibility("default"))) int ibv_resize_cq(ibv_cq*, int) { return EOPNOTSUPP; }

// ---- QPs ----

__attribute__((visibility("default"))) ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* init) {
  if (pd == nullptr || init == nullptr || init->send_cq == nullptr || init->recv_cq == nullptr) {
    return fail_null<ibv_qp>(EINVAL);
  }
  if (init->qp_type != IBV_QPT_RC) return fail_null<ibv_qp>(EOPNOTSUPP);
  // An MRC QP has no SRQ (rc/srq.h): refused by create_qp (EINVAL).
  constexpr uint32_t kMaxInline = 1024;
  if (init->cap.max_inline_data > kMaxInline) return fail_null<ibv_qp>(EINVAL);
  SfPd* p = sf_of<SfPd>(pd);
  SfContext* c = ctx_of(pd->context);
  auto* qp = new (std::nothrow) SfQp();
  if (qp == nullptr) return fail_null<ibv_qp>(ENOMEM);
  v::QpInitAttr a;
  a.send_cq = sf_of<SfCq>(init->send_cq)->w.cq;
  a.recv_cq = sf_of<SfCq>(init->recv_cq)->w.cq;
  a.cap.max_send_wr = init->cap.max_send_wr;
  a.cap.max_recv_wr = init->cap.max_recv_wr;
  a.cap.max_send_sge = init->cap.max_send_sge;
  a.cap.max_recv_sge = init->cap.max_recv_sge;
  a.cap.max_inline_data = 0;  // inline data is this library's (the bounce region)
  // SFVERBS_TRANSPORT=mrc: the application's RC QP is an MRC QP with the
  // default profile (one plane per port, 128 EVs; docs/mrc.md): WRITE and
  // WRITE_WITH_IMM only, both ends must be MRC.
  a.qp_type = c->rt->config().mrc ? v::QpType::kMrc : v::QpType::kRc;
  a.sq_sig_all = init->sq_sig_all;
  if (init->srq != nullptr) a.srq = sf_of<SfSrq>(init->srq)->v;
  qp->max_inline = init->cap.max_inline_data;
  qp->max_send_wr = std::max<uint32_t>(init->cap.max_send_wr, 1);
  if (qp->max_inline > 0) {
    try {
      qp->bounce.assign(static_cast<size_t>(qp->max_inline) * qp->max_send_wr, 0);
    } catch (const std::bad_alloc&) {
      delete qp;
      return fail_null<ibv_qp>(ENOMEM);
    }
  }
  int err = 0;
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(c->rt->lock());
    qp->v = v::create_qp(p->v, &a);
    err = errno;
    if (qp->v != nullptr && a.qp_type == v::QpType::kMrc) {
      // The MRC timers of a software datapath sharing cores with the
      // application (docs/ibverbs.md "MRC"): round trips of milliseconds
      // under load, where the profile's 100 us RTO expired a PSN seven times
      // and failed the QP (RETRY_EXC_ERR) in 3 of 4 runs.
      v::MrcQpAttr m;
      m.rto_ns = 10'000'000;
      m.ooo_tolerance_ns = 1'000'000;
      m.probe_interval_ns = 2'000'000;
      m.ev_probe_interval_ns = 5'000'000;
      if (const int e = v::mrc_modify_qp(qp->v, &m, v::kMrcRto | v::kMrcOooTolerance | v::kMrcProbeInterval |
                                                        v::kMrcEvProbeInterval);
          e != 0) {
        err = e;
        v::destroy_qp(qp->v);
        qp->v = nullptr;
      }
    }
    if (qp->v != nullptr && qp->max_inline > 0) {
      qp->bounce_mr = v::reg_mr(p->v, qp->bounce.data(), qp->bounce.size(), v::kAccessLocalWrite);
      if (qp->bounce_mr == nullptr) {
        err = errno;
        v::destroy_qp(qp->v);
        qp->v = nullptr;
      }
    }
  }
  if (qp->v == nullptr) {
    delete qp;
    return fail_null<ibv_qp>(err);
  }
  qp->qp.context = pd->context;
  qp->qp.qp_context = init->qp_context;
  qp->qp.pd = pd;
  qp->qp.send_cq = init->send_cq;
  qp->qp.recv_cq = init->recv_cq;
  qp->qp.srq = init->srq;
  qp->qp.handle = qp->v->qp_num();
  qp->qp.qp_num = qp->v->qp_num();
  qp->qp.state = IBV_QPS_RESET;
  qp->qp.qp_type = IBV_QPT_RC;
  pthread_mutex_init(&qp->qp.mutex, nullptr);
  pthread_cond_init(&qp->qp.cond, nullptr);
  if (init->cap.max_send_sge == 0) init->cap.max_send_sge = 1;
  if (init->cap.max_recv_sge == 0) init->cap.max_recv_sge = 1;
  return &qp->qp;
}

__attribute__((visibility("default"))) int ibv_destroy_qp(ibv_qp* ibqp) {
  if (ibqp == nullptr) return EINVAL;
  SfQp* qp = sf_of<SfQp>(ibqp);
  Runtime& rt = rt_of(ibqp->context);
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt.lock());
    if (spdlog::should_log(spdlog::level::info)) {
      // SFVERBS_LOG=info: what the QP's datapath did (losses show as
      // retransmits and sequence NAKs), as sf-nic's report gives it.
      sf::nic::ibverbs::log_qp_counters(*qp->v, "destroyed");
    }
    if (const int rc = v::destroy_qp(qp->v); rc != 0) return rc;
    if (qp->bounce_mr != nullptr) v::dereg_mr(qp->bounce_mr);
    rt.refresh();
  }
  pthread_mutex_destroy(&qp->qp.mutex);
  pthread_cond_destroy(&qp->qp.cond);
  delete qp;
  return 0;
}

__attribute__((visibility("default"))) int ibv_modify_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int mask) {
  if (ibqp == nullptr || attr == nullptr) return EINVAL;
  SfQp* qp = sf_of<SfQp>(ibqp);
  Runtime& rt = rt_of(ibqp->context);
  // Attributes without meaning here (path migration, alternate path, SQD
  // notification) are refused as an RC device without them would.
  if ((mask & (IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY)) != 0) return EINVAL;
  v::QpAttr a;
  a.qp_state = static_cast<v::QpState>(attr->qp_state);
  a.cur_qp_state = static_cast<v::QpState>(attr->cur_qp_state);
  a.path_mtu = static_cast<v::Mtu>(attr->path_mtu);
  a.qkey = attr->qkey;
  a.rq_psn = attr->rq_psn;
  a.sq_psn = attr->sq_psn;
  a.dest_qp_num = attr->dest_qp_num;
  a.qp_access_flags = static_cast<int>(attr->qp_access_flags);
  a.pkey_index = attr->pkey_index;
  a.max_rd_atomic = attr->max_rd_atomic;
  a.max_dest_rd_atomic = attr->max_dest_rd_atomic;
  a.min_rnr_timer = attr->min_rnr_timer;
  a.port_num = attr->port_num;
  a.timeout = attr->timeout;
  a.retry_cnt = attr->retry_cnt;
  a.rnr_retry = attr->rnr_retry;
  a.rate_limit = attr->rate_limit;
  if (mask & IBV_QP_AV) {
    const ibv_ah_attr& h = attr->ah_attr;
    std::memcpy(a.ah_attr.grh.dgid.bytes.data(), h.grh.dgid.raw, 16);
    a.ah_attr.grh.flow_label = h.grh.flow_label;
    a.ah_attr.grh.sgid_index = h.grh.sgid_index;
    a.ah_attr.grh.hop_limit = h.grh.hop_limit;
    a.ah_attr.grh.traffic_class = h.grh.traffic_class;
    a.ah_attr.dlid = h.dlid;
    a.ah_attr.sl = h.sl;
    a.ah_attr.src_path_bits = h.src_path_bits;
    a.ah_attr.static_rate = h.static_rate;
    a.ah_attr.is_global = h.is_global;
    a.ah_attr.port_num = h.port_num == 0 ? 1 : h.port_num;
    // The peer's MAC: what the kernel's neighbour table gives a hardware
    // RoCE NIC; here SFVERBS_NEIGH or the derived MAC (sfverbs_config.h).
    const sf::wire::MacAddr mac = sf::nic::ibverbs::resolve_mac(rt.config(), h.grh.dgid.raw);
    std::memcpy(a.ah_attr.dmac, mac.bytes.data(), 6);
  }
  int rc;
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt.lock());
    const v::QpState before = qp->v->state();
    rc = v::modify_qp(qp->v, &a, mask);
    // SFVERBS_CC: the QP's congestion control from RTS on (as sf-nic sets it).
    if (rc == 0 && before == v::QpState::kRtr && qp->v->state() == v::QpState::kRts &&
        rt.cc().algorithm != sf::nic::CcAlgorithm::kNone) {
      qp->v->set_congestion_control(rt.cc(), sf::BitRate::gbps(rt.config().speed_gbps));
    }
    ibqp->state = static_cast<ibv_qp_state>(qp->v->state());
    rt.refresh();
  }
  rt.ring();
  return rc;
}

__attribute__((visibility("default"))) int ibv_query_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int mask,
                                                        ibv_qp_init_attr* init) {
  if (ibqp == nullptr || attr == nullptr || init == nullptr) return EINVAL;
  SfQp* qp = sf_of<SfQp>(ibqp);
  v::QpAttr a;
  v::QpInitAttr ia;
  int rc;
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt_of(ibqp->context).lock());
    rc = v::query_qp(qp->v, &a, mask, &ia);
  }
  if (rc != 0) return rc;
  std::memset(attr, 0, sizeof *attr);
  attr->qp_state = static_cast<ibv_qp_state>(a.qp_state);
  attr->cur_qp_state = static_cast<ibv_qp_state>(a.cur_qp_state);
  attr->path_mtu = static_cast<ibv_mtu>(a.path_mtu);
  attr->path_mig_state = IBV_MIG_MIGRATED;
  attr->qkey = a.qkey;
  attr->rq_psn = a.rq_psn;
  attr->sq_psn = a.sq_psn;
  attr->dest_qp_num = a.dest_qp_num;
  attr->qp_access_flags = static_cast<unsigned>(a.qp_access_flags);
  attr->cap.max_send_wr = ia.cap.max_send_wr;
  attr->cap.max_recv_wr = ia.cap.max_recv_wr;
  attr->cap.max_send_sge = ia.cap.max_send_sge;
  attr->cap.max_recv_sge = ia.cap.max_recv_sge;
  attr->cap.max_inline_data = qp->max_inline;
  std::memcpy(attr->ah_attr.grh.dgid.raw, a.ah_attr.grh.dgid.bytes.data(), 16);
  attr->ah_attr.grh.flow_label = a.ah_attr.grh.flow_label;
  attr->ah_attr.grh.sgid_index = a.ah_attr.grh.sgid_index;
  attr->ah_attr.grh.hop_limit = a.ah_attr.grh.hop_limit;
  attr->ah_attr.grh.traffic_class = a.ah_attr.grh.traffic_class;
  attr->ah_attr.sl = a.ah_attr.sl;
  attr->ah_attr.static_rate = a.ah_attr.static_rate;
  attr->ah_attr.is_global = a.ah_attr.is_global;
  attr->ah_attr.port_num = a.ah_attr.port_num;
  attr->pkey_index = a.pkey_index;
  attr->sq_draining = a.sq_draining;
  attr->max_rd_atomic = a.max_rd_atomic;
  attr->max_dest_rd_atomic = a.max_dest_rd_atomic;
  attr->min_rnr_timer = a.min_rnr_timer;
  attr->port_num = a.port_num;
  attr->timeout = a.timeout;
  attr->retry_cnt = a.retry_cnt;
  attr->rnr_retry = a.rnr_retry;
  attr->rate_limit = a.rate_limit;
  std::memset(init, 0, sizeof *init);
  init->qp_context = ibqp->qp_context;
  init->send_cq = ibqp->send_cq;
  init->recv_cq = ibqp->recv_cq;
  init->cap = attr->cap;
  init->qp_type = IBV_QPT_RC;
  init->sq_sig_all = ia.sq_sig_all;
  init->srq = ibqp->srq;
  return 0;
}

__attribute__((visibility("default"))) int ibv_query_qp_data_in_order(ibv_qp*, enum ibv_wr_opcode, uint32_t) {
  return 0;  // no in-order guarantee is promised to the application
}

__attribute__((visibility("default"))) ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp*) {
  return fail_null<ibv_qp_ex>(EOPNOTSUPP);  // the new post-send API (ibv_wr_*) is not offered
}

__attribute__((visibility("default"))) int ibv_query_ece(ibv_qp*, ibv_ece*) { return EOPNOTSUPP; }
__attribute__((visibility("default"))) int ibv_set_ece(ibv_qp*, ibv_ece*) { return EOPNOTSUPP; }

// ---- shared receive queues (nic/rc/srq.h) ----

__attribute__((visibility("default"))) ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* init) {
  if (pd == nullptr || init == nullptr) return fail_null<ibv_srq>(EINVAL);
  auto* s = new (std::nothrow) SfSrq();
  if (s == nullptr) return fail_null<ibv_srq>(ENOMEM);
  v::SrqAttr a;
  a.max_wr = init->attr.max_wr;
  a.max_sge = init->attr.max_sge;
  a.srq_limit = init->attr.srq_limit;  // no limit event: non-zero is EINVAL
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt_of(pd->context).lock());
    s->v = v::create_srq(sf_of<SfPd>(pd)->v, &a);
  }
  if (s->v == nullptr) {
    const int e = errno;
    delete s;
    return fail_null<ibv_srq>(e);
  }
  std::memset(&s->srq, 0, sizeof s->srq);
  s->srq.context = pd->context;
  s->srq.srq_context = init->srq_context;
  s->srq.pd = pd;
  pthread_mutex_init(&s->srq.mutex, nullptr);
  pthread_cond_init(&s->srq.cond, nullptr);
  init->attr.max_wr = s->v->max_wr();  // what was created, as a provider reports it
  init->attr.max_sge = s->v->max_sge();
  return &s->srq;
}

// Neither resizing nor the limit event (IBV_SRQ_MAX_WR, IBV_SRQ_LIMIT) is offered.
__attribute__((visibility("default"))) int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr*, int) {
  return srq == nullptr ? EINVAL : EOPNOTSUPP;
}

__attribute__((visibility("default"))) int ibv_query_srq(ibv_srq* srq, ibv_srq_attr* attr) {
  if (srq == nullptr || attr == nullptr) return EINVAL;
  v::SrqAttr a;
  std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt_of(srq->context).lock());
  if (const int rc = v::query_srq(sf_of<SfSrq>(srq)->v, &a); rc != 0) return rc;
  attr->max_wr = a.max_wr;
  attr->max_sge = a.max_sge;
  attr->srq_limit = 0;
  return 0;
}

__attribute__((visibility("default"))) int ibv_destroy_srq(ibv_srq* srq) {
  if (srq == nullptr) return EINVAL;
  SfSrq* s = sf_of<SfSrq>(srq);
  int rc;
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt_of(srq->context).lock());
    rc = v::destroy_srq(s->v);  // EBUSY while a QP uses it
  }
  if (rc != 0) return rc;
  pthread_mutex_destroy(&s->srq.mutex);
  pthread_cond_destroy(&s->srq.cond);
  delete s;
  return 0;
}

// ---- not offered: AH (UD), multicast, async events, import ----
__attribute__((visibility("default"))) ibv_ah* ibv_create_ah(ibv_pd*, ibv_ah_attr*) {
  return fail_null<ibv_ah>(EOPNOTSUPP);
}
__attribute__((visibility("default"))) ibv_ah* ibv_create_ah_from_wc(ibv_pd*, ibv_wc*, ibv_grh*, uint8_t) {
  return fail_null<ibv_ah>(EOPNOTSUPP);
}
__attribute__((visibility("default"))) int ibv_init_ah_from_wc(ibv_context*, uint8_t, ibv_wc*, ibv_grh*,
                                                               ibv_ah_attr*) {
  return EOPNOTSUPP;
}
__attribute__((visibility("default"))) int ibv_destroy_ah(ibv_ah*) { return EOPNOTSUPP; }
__attribute__((visibility("default"))) int ibv_attach_mcast(ibv_qp*, const ibv_gid*, uint16_t) { return EOPNOTSUPP; }
__attribute__((visibility("default"))) int ibv_detach_mcast(ibv_qp*, const ibv_gid*, uint16_t) { return EOPNOTSUPP; }
__attribute__((visibility("default"))) int ibv_resolve_eth_l2_from_gid(ibv_context*, ibv_ah_attr*, uint8_t*,
                                                                       uint16_t*) {
  return EOPNOTSUPP;
}
__attribute__((visibility("default"))) int ibv_get_async_event(ibv_context* context, ibv_async_event*) {
  // No async event is ever raised: a blocking caller would wait forever on
  // the hardware; here the (non-blocking) async fd says EAGAIN.
  (void)context;
  errno = EAGAIN;
  return -1;
}
__attribute__((visibility("default"))) void ibv_ack_async_event(ibv_async_event*) {}
__attribute__((visibility("default"))) ibv_context* ibv_import_device(int) { return fail_null<ibv_context>(EOPNOTSUPP); }
__attribute__((visibility("default"))) ibv_pd* ibv_import_pd(ibv_context*, uint32_t) {
  return fail_null<ibv_pd>(EOPNOTSUPP);
}
__attribute__((visibility("default"))) void ibv_unimport_pd(ibv_pd*) {}
__attribute__((visibility("default"))) ibv_mr* ibv_import_mr(ibv_pd*, uint32_t) {
  return fail_null<ibv_mr>(EOPNOTSUPP);
}
__attribute__((visibility("default"))) void ibv_unimport_mr(ibv_mr*) {}
__attribute__((visibility("default"))) ibv_dm* ibv_import_dm(ibv_context*, uint32_t) {
  return fail_null<ibv_dm>(EOPNOTSUPP);
}
__attribute__((visibility("default"))) void ibv_unimport_dm(ibv_dm*) {}

}  // extern "C"
