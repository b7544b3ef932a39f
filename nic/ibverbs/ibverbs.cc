// libsfverbs: libibverbs' exported entry points (rdma-core 44 ABI, symbol
// versions from libsfverbs.map) over the softfabric NIC, so that
// LD_PRELOAD=libsfverbs.so runs an unmodified verbs binary (docs/ibverbs.md).
// The objects handed out embed the libibverbs structs (ibv_context first, its
// `ops` filled for the inline ibv_post_send / ibv_post_recv / ibv_poll_cq /
// ibv_req_notify_cq) and point at the NIC's verbs objects. The context is not
// extended (abi_compat is not __VERBS_ABI_IS_EXTENDED): every inline extended
// verb then fails cleanly or falls back to its legacy call. Every exported
// call libibverbs has that takes one of our objects is defined here; the
// unsupported ones fail with EOPNOTSUPP (NULL and errno for pointers).
// Threading: every call that touches the NIC holds the runtime's DeviceLock
// (runtime.h).
#include <errno.h>
#include <infiniband/verbs.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "nic/ibverbs/runtime.h"
#include "nic/verbs/device.h"

// verbs.h makes these names function-like macros over inline wrappers; the
// exported functions defined here are the ones those wrappers call.
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova
#undef ibv_get_device_list

using sf::nic::ibverbs::Runtime;
using sf::nic::ibverbs::WatchedCq;
namespace v = sf::nic::verbs;

namespace {

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

SfDevice g_device;

template <class T>
T* sf_of(void* p) {
  return reinterpret_cast<T*>(p);
}

SfContext* ctx_of(ibv_context* c) { return reinterpret_cast<SfContext*>(c); }
Runtime& rt_of(ibv_context* c) { return *ctx_of(c)->rt; }

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
  if (cq->w.depth.load(std::memory_order_acquire) == 0) {
    if (rt.inline_enabled()) {
      rt.inline_progress();  // this thread moves the datapath while it waits
    } else {
      rt.ring();  // an application waiting for completions: the progress thread stays awake
    }
    if (cq->w.depth.load(std::memory_order_acquire) == 0) return 0;
  }
  v::Wc tmp[32];
  int got = 0;
  std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt.lock());
  while (got < num_entries) {
    const int want = std::min<int>(num_entries - got, 32);
    const int n = v::poll_cq(cq->w.cq, want, tmp);
    if (n < 0) {
      if (got == 0) got = n;
      break;
    }
    for (int i = 0; i < n; ++i) {
      ibv_wc& o = wc[got + i];
      const v::Wc& s = tmp[i];
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
  std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt_of(ibcq->context).lock());
  cq->w.armed.store(true, std::memory_order_relaxed);
  return 0;
}

// One ibv_send_wr as the NIC's SendWr; 0 or an errno. `seq`: the WR's post
// number on the QP (its inline bounce slot).
int convert_send(SfQp* qp, const ibv_send_wr* w, v::SendWr* o, v::Sge* sges, uint64_t seq) {
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
      v::SendWr o[kPostBatch];
      v::Sge sges[kPostBatch][sf::nic::rc::kMaxSge];
      ibv_send_wr* src[kPostBatch];
      int n = 0;
      int conv = 0;
      for (; w != nullptr && n < kPostBatch; w = w->next, ++n) {
        conv = convert_send(qp, w, &o[n], sges[n], qp->posted + static_cast<uint64_t>(n));
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

int op_post_recv(ibv_qp* ibqp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  SfQp* qp = sf_of<SfQp>(ibqp);
  Runtime& rt = rt_of(ibqp->context);
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
        rc = v::post_recv(qp->v, &o, &bad);
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

int op_post_srq_recv(ibv_srq*, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  if (bad_wr != nullptr) *bad_wr = wr;
  return EOPNOTSUPP;
}

ibv_mw* op_alloc_mw(ibv_pd*, ibv_mw_type) {
  errno = EOPNOTSUPP;
  return nullptr;
}
int op_bind_mw(ibv_qp*, ibv_mw*, ibv_mw_bind*) { return EOPNOTSUPP; }
int op_dealloc_mw(ibv_mw*) { return EOPNOTSUPP; }

template <class T>
T* fail_null(int e) {
  errno = e;
  return nullptr;
}

}  // namespace

// ---- the exported entry points ------------------------------------------------------
extern "C" {

__attribute__((visibility("default"))) ibv_device** ibv_get_device_list(int* num_devices) {
  std::string err;
  bool configured = false;
  Runtime* rt = Runtime::get(&err, &configured);
  if (!err.empty()) {
    std::fprintf(stderr, "libsfverbs: %s\n", err.c_str());
    if (num_devices != nullptr) *num_devices = 0;
    return fail_null<ibv_device*>(EINVAL);
  }
  auto* list = static_cast<ibv_device**>(calloc(2, sizeof(ibv_device*)));
  if (list == nullptr) return fail_null<ibv_device*>(ENOMEM);
  int n = 0;
  if (configured) {
    if (g_device.rt == nullptr) {
      std::memset(&g_device.dev, 0, sizeof g_device.dev);
      g_device.dev.node_type = IBV_NODE_CA;
      g_device.dev.transport_type = IBV_TRANSPORT_IB;
      std::snprintf(g_device.dev.name, sizeof g_device.dev.name, "%s", rt->config().device_name.c_str());
      std::snprintf(g_device.dev.dev_name, sizeof g_device.dev.dev_name, "sfverbs0");
      std::snprintf(g_device.dev.dev_path, sizeof g_device.dev.dev_path, "/sys/class/infiniband_verbs/sfverbs0");
      std::snprintf(g_device.dev.ibdev_path, sizeof g_device.dev.ibdev_path, "/sys/class/infiniband/%s",
                    g_device.dev.name);
      g_device.rt = rt;
    }
    list[n++] = &g_device.dev;
  } else {
    static bool told = false;
    if (!told) std::fprintf(stderr, "libsfverbs: SFVERBS_PORT is not set: no device (docs/ibverbs.md)\n");
    told = true;
  }
  if (num_devices != nullptr) *num_devices = n;
  return list;
}

__attribute__((visibility("default"))) void ibv_free_device_list(ibv_device** list) { free(list); }

__attribute__((visibility("default"))) const char* ibv_get_device_name(ibv_device* device) {
  return device == nullptr ? nullptr : device->name;
}

__attribute__((visibility("default"))) int ibv_get_device_index(ibv_device* device) {
  return device == &g_device.dev ? 0 : -1;
}

// The node GUID: EUI-64 of the port's MAC (as a RoCE NIC's), network order.
static uint64_t node_guid() {
  const auto& m = g_device.rt->config().mac.bytes;
  const uint8_t g[8] = {static_cast<uint8_t>(m[0] ^ 2), m[1], m[2], 0xFF, 0xFE, m[3], m[4], m[5]};
  uint64_t v;
  std::memcpy(&v, g, 8);
  return v;
}

__attribute__((visibility("default"))) __be64 ibv_get_device_guid(ibv_device* device) {
  return device == &g_device.dev && g_device.rt != nullptr ? node_guid() : 0;
}

__attribute__((visibility("default"))) ibv_context* ibv_open_device(ibv_device* device) {
  if (device != &g_device.dev || g_device.rt == nullptr) return fail_null<ibv_context>(ENODEV);
  Runtime* rt = g_device.rt;
  if (const std::string e = rt->start(); !e.empty()) {
    std::fprintf(stderr, "libsfverbs: %s\n", e.c_str());
    return fail_null<ibv_context>(ENODEV);
  }
  auto* c = new (std::nothrow) SfContext();
  if (c == nullptr) return fail_null<ibv_context>(ENOMEM);
  std::memset(&c->ctx, 0, sizeof c->ctx);
  c->ctx.device = device;
  c->ctx.cmd_fd = -1;
  c->ctx.async_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);  // no async events are ever raised
  c->ctx.num_comp_vectors = 1;
  pthread_mutex_init(&c->ctx.mutex, nullptr);
  c->ctx.abi_compat = nullptr;  // not extended (see the file comment)
  c->ctx.ops.poll_cq = op_poll_cq;
  c->ctx.ops.req_notify_cq = op_req_notify_cq;
  c->ctx.ops.post_send = op_post_send;
  c->ctx.ops.post_recv = op_post_recv;
  c->ctx.ops.post_srq_recv = op_post_srq_recv;
  c->ctx.ops.alloc_mw = op_alloc_mw;
  c->ctx.ops.bind_mw = op_bind_mw;
  c->ctx.ops.dealloc_mw = op_dealloc_mw;
  c->rt = rt;
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt->lock());
    c->vctx = v::open_device(rt->node(), 0);
  }
  return &c->ctx;
}

__attribute__((visibility("default"))) int ibv_close_device(ibv_context* context) {
  if (context == nullptr) return EINVAL;
  SfContext* c = ctx_of(context);
  if (c->ctx.async_fd >= 0) close(c->ctx.async_fd);
  pthread_mutex_destroy(&c->ctx.mutex);
  delete c;
  return 0;
}

__attribute__((visibility("default"))) int ibv_query_device(ibv_context* context, ibv_device_attr* a) {
  if (context == nullptr || a == nullptr) return EINVAL;
  SfContext* c = ctx_of(context);
  const sf::nic::HostConfig& hc = c->vctx->host().config();
  std::memset(a, 0, sizeof *a);
  std::snprintf(a->fw_ver, sizeof a->fw_ver, "softfabric");
  a->node_guid = node_guid();
  a->sys_image_guid = a->node_guid;
  a->max_mr_size = UINT64_MAX;
  a->page_size_cap = 0xFFFFF000u;  // any page size from 4 KiB
  a->vendor_id = 0;
  a->vendor_part_id = 0;
  a->hw_ver = 0;
  a->max_qp = static_cast<int>(hc.max_qps);
  a->max_qp_wr = static_cast<int>(sf::nic::rc::kMaxWr);
  a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT;
  a->max_sge = static_cast<int>(sf::nic::rc::kMaxSge);
  a->max_sge_rd = static_cast<int>(sf::nic::rc::kMaxSge);
  a->max_cq = static_cast<int>(hc.max_cqs);
  a->max_cqe = 1 << 20;
  a->max_mr = static_cast<int>(hc.max_mrs);
  a->max_pd = static_cast<int>(hc.max_pds);
  a->max_qp_rd_atom = static_cast<int>(sf::nic::rc::kMaxRdAtomic);
  a->max_res_rd_atom = static_cast<int>(hc.max_qps * sf::nic::rc::kMaxRdAtomic);
  a->max_qp_init_rd_atom = static_cast<int>(sf::nic::rc::kMaxRdAtomic);
  a->atomic_cap = IBV_ATOMIC_NONE;
  a->max_pkeys = 1;
  a->local_ca_ack_delay = 15;
  a->phys_port_cnt = c->vctx->phys_port_cnt();
  return 0;
}

// The exported (non-inline) ibv_query_port: called by ___ibv_query_port with a
// zeroed struct ibv_port_attr. Only the fields of rdma-core's
// struct _compat_ibv_port_attr (up to `flags`) are written, so an older
// binary's smaller struct is not overrun.
__attribute__((visibility("default"))) int ibv_query_port(ibv_context* context, uint8_t port_num,
                                                          struct _compat_ibv_port_attr* out) {
  if (context == nullptr || out == nullptr) return EINVAL;
  SfContext* c = ctx_of(context);
  v::PortAttr pa;
  int rc;
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(c->rt->lock());
    rc = v::query_port(c->vctx.get(), port_num, &pa);
  }
  if (rc != 0) return rc;
  auto* a = reinterpret_cast<ibv_port_attr*>(out);
  a->state = IBV_PORT_ACTIVE;
  a->max_mtu = static_cast<ibv_mtu>(pa.max_mtu);
  a->active_mtu = static_cast<ibv_mtu>(pa.active_mtu);
  a->gid_tbl_len = pa.gid_tbl_len;
  a->port_cap_flags = 0;
  a->max_msg_sz = pa.max_msg_sz;
  a->bad_pkey_cntr = 0;
  a->qkey_viol_cntr = 0;
  a->pkey_tbl_len = 1;
  a->lid = 0;
  a->sm_lid = 0;
  a->lmc = 0;
  a->max_vl_num = 1;
  a->sm_sl = 0;
  a->subnet_timeout = 0;
  a->init_type_reply = 0;
  // Width x speed nearest the line rate (IB codes: width 1=1X 2=4X; speed
  // 1=SDR 2=DDR 4=QDR 8=FDR10 16=FDR 32=EDR 64=HDR 128=NDR).
  const uint64_t mbps = pa.active_speed_mbps;
  a->active_width = 2;  // 4X
  a->active_speed = mbps >= 400000 ? 128 : mbps >= 200000 ? 64 : mbps >= 100000 ? 32 : mbps >= 40000 ? 4 : 1;
  a->phys_state = 5;  // LinkUp
  a->link_layer = IBV_LINK_LAYER_ETHERNET;
  a->flags = 0;
  return 0;
}

__attribute__((visibility("default"))) int ibv_query_gid(ibv_context* context, uint8_t port_num, int index,
                                                         ibv_gid* gid) {
  if (context == nullptr || gid == nullptr) return -1;
  SfContext* c = ctx_of(context);
  if (port_num < 1 || port_num > c->vctx->phys_port_cnt() || index < 0 || index > 1) return -1;
  v::Gid g;
  std::memset(gid->raw, 0, sizeof gid->raw);
  if (c->vctx->query_gid(port_num, static_cast<uint8_t>(index), &g)) std::memcpy(gid->raw, g.bytes.data(), 16);
  return 0;  // an absent family's entry is all zero, as an unused hardware GID entry
}

__attribute__((visibility("default"))) int _ibv_query_gid_ex(ibv_context* context, uint32_t port_num,
                                                             uint32_t gid_index, ibv_gid_entry* entry, uint32_t flags,
                                                             size_t entry_size) {
  if (context == nullptr || entry == nullptr || flags != 0 || entry_size < sizeof(ibv_gid_entry)) return EINVAL;
  SfContext* c = ctx_of(context);
  if (port_num < 1 || port_num > c->vctx->phys_port_cnt() || gid_index > 1) return EINVAL;
  v::Gid g;
  if (!c->vctx->query_gid(static_cast<uint8_t>(port_num), static_cast<uint8_t>(gid_index), &g)) return ENODATA;
  std::memset(entry, 0, sizeof *entry);
  std::memcpy(entry->gid.raw, g.bytes.data(), 16);
  entry->gid_index = gid_index;
  entry->port_num = port_num;
  entry->gid_type = IBV_GID_TYPE_ROCE_V2;
  entry->ndev_ifindex = 0;
  return 0;
}

__attribute__((visibility("default"))) ssize_t _ibv_query_gid_table(ibv_context* context, ibv_gid_entry* entries,
                                                                    size_t max_entries, uint32_t flags,
                                                                    size_t entry_size) {
  if (context == nullptr || entries == nullptr || flags != 0 || entry_size < sizeof(ibv_gid_entry)) return -EINVAL;
  SfContext* c = ctx_of(context);
  size_t n = 0;
  for (uint8_t p = 1; p <= c->vctx->phys_port_cnt(); ++p) {
    for (uint32_t i = 0; i < 2; ++i) {
      ibv_gid_entry e;
      if (_ibv_query_gid_ex(context, p, i, &e, 0, sizeof e) != 0) continue;
      if (n == max_entries) return -EINVAL;
      std::memcpy(reinterpret_cast<uint8_t*>(entries) + n * entry_size, &e, sizeof e);
      ++n;
    }
  }
  return static_cast<ssize_t>(n);
}

// rdma-core's private ibv_query_gid_type (ibv_devinfo): 1 =
// IBV_GID_TYPE_SYSFS_ROCE_V2 for every entry.
__attribute__((visibility("default"))) int ibv_query_gid_type(ibv_context* context, uint8_t port_num,
                                                              unsigned int index, int* type) {
  if (context == nullptr || type == nullptr || port_num < 1 || index > 1) return -1;
  *type = 1;
  return 0;
}

__attribute__((visibility("default"))) int ibv_query_pkey(ibv_context* context, uint8_t port_num, int index,
                                                          __be16* pkey) {
  if (context == nullptr || pkey == nullptr || port_num < 1 || index != 0) return -1;
  *pkey = 0xFFFF;
  return 0;
}

__attribute__((visibility("default"))) int ibv_get_pkey_index(ibv_context* context, uint8_t port_num, __be16 pkey) {
  if (context == nullptr || port_num < 1) return -1;
  return pkey == 0xFFFF ? 0 : -1;
}

// ---- PD, MR ----

__attribute__((visibility("default"))) ibv_pd* ibv_alloc_pd(ibv_context* context) {
  if (context == nullptr) return fail_null<ibv_pd>(EINVAL);
  SfContext* c = ctx_of(context);
  auto* p = new (std::nothrow) SfPd();
  if (p == nullptr) return fail_null<ibv_pd>(ENOMEM);
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(c->rt->lock());
    p->v = v::alloc_pd(c->vctx.get());
  }
  if (p->v == nullptr) {
    const int e = errno;
    delete p;
    return fail_null<ibv_pd>(e);
  }
  p->pd.context = context;
  p->pd.handle = p->v->handle;
  return &p->pd;
}

__attribute__((visibility("default"))) int ibv_dealloc_pd(ibv_pd* pd) {
  if (pd == nullptr) return EINVAL;
  SfPd* p = sf_of<SfPd>(pd);
  int rc;
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt_of(pd->context).lock());
    rc = v::dealloc_pd(p->v);
  }
  if (rc == 0) delete p;
  return rc;
}

static ibv_mr* reg_mr_common(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
  if (pd == nullptr) return fail_null<ibv_mr>(EINVAL);
  // iova: the address the peer uses. Equal to addr (plain), or 0 (the
  // NIC's zero-based MRs); any other offset is not offered.
  if (iova != reinterpret_cast<uintptr_t>(addr) && iova != 0) return fail_null<ibv_mr>(EOPNOTSUPP);
  if (iova == 0 && reinterpret_cast<uintptr_t>(addr) != 0) access |= v::kAccessZeroBased;
  // Access bits the NIC ignores (relaxed ordering, optional range) are dropped.
  access &= ~(static_cast<int>(IBV_ACCESS_RELAXED_ORDERING) | static_cast<int>(IBV_ACCESS_OPTIONAL_RANGE));
  SfPd* p = sf_of<SfPd>(pd);
  auto* m = new (std::nothrow) SfMr();
  if (m == nullptr) return fail_null<ibv_mr>(ENOMEM);
  {
    std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt_of(pd->context).lock());
    m->v = v::reg_mr(p->v, addr, length, access);
  }
  if (m->v == nullptr) {
    const int e = errno;
    delete m;
    return fail_null<ibv_mr>(e);
  }
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = addr;
  m->mr.length = length;
  m->mr.handle = m->v->handle;
  m->mr.lkey = m->v->lkey;
  m->mr.rkey = m->v->rkey;
  return &m->mr;
}

__attribute__((visibility("default"))) ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  return reg_mr_common(pd, addr, length, reinterpret_cast<uintptr_t>(addr), access);
}

__attribute__((visibility("default"))) ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                                                               int access) {
  return reg_mr_common(pd, addr, length, iova, access);
}

__attribute__((visibility("default"))) ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                                                                unsigned int access) {
  return reg_mr_common(pd, addr, length, iova, static_cast<int>(access));
}

__attribute__((visibility("default"))) ibv_mr* ibv_reg_dmabuf_mr(ibv_pd*, uint64_t, size_t, uint64_t, int, int) {
  return fail_null<ibv_mr>(EOPNOTSUPP);
}

__attribute__((visibility("default"))) int ibv_dereg_mr(ibv_mr* mr) {
  if (mr == nullptr) return EINVAL;
  SfMr* m = sf_of<SfMr>(mr);
  Runtime& rt = rt_of(mr->context);
  // EBUSY while zero-copy frames that point into the MR are still queued
  // (the driver frees them at tx_burst): the progress thread sends them
  // within a few iterations; wait up to 2 s for that, then report EBUSY.
  int rc = EBUSY;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    {
      std::lock_guard<sf::nic::ibverbs::DeviceLock> g(rt.lock());
      rc = v::dereg_mr(m->v);
    }
    if (rc != EBUSY || std::chrono::steady_clock::now() > end) break;
    rt.ring();
    std::this_thread::yield();
  }
  if (rc == 0) delete m;
  return rc;
}

__attribute__((visibility("default"))) int ibv_rereg_mr(ibv_mr*, int, ibv_pd*, void*, size_t, int) {
  errno = EOPNOTSUPP;
  return IBV_REREG_MR_ERR_INPUT;
}

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
  if (init->qp_type != IBV_QPT_RC || init->srq != nullptr) return fail_null<ibv_qp>(EOPNOTSUPP);
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
  a.qp_type = v::QpType::kRc;
  a.sq_sig_all = init->sq_sig_all;
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
  qp->qp.srq = nullptr;
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

// ---- not offered: SRQ, AH (UD), multicast, async events, import ----

__attribute__((visibility("default"))) ibv_srq* ibv_create_srq(ibv_pd*, ibv_srq_init_attr*) {
  return fail_null<ibv_srq>(EOPNOTSUPP);
}
__attribute__((visibility("default"))) int ibv_modify_srq(ibv_srq*, ibv_srq_attr*, int) { return EOPNOTSUPP; }
__attribute__((visibility("default"))) int ibv_query_srq(ibv_srq*, ibv_srq_attr*) { return EOPNOTSUPP; }
__attribute__((visibility("default"))) int ibv_destroy_srq(ibv_srq*) { return EOPNOTSUPP; }
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
