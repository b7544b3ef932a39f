// libsfverbs: the exported libibverbs entry points for the device, its
// queries, protection domains and memory regions (symbol versions:
// libsfverbs.map; docs/ibverbs.md).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <chrono>
#include <sys/eventfd.h>
#include <unistd.h>

#include "nic/ibverbs/ibverbs_objects.h"

using namespace sf::nic::ibverbs::abi;
using sf::nic::ibverbs::Runtime;

namespace sf::nic::ibverbs::abi {
SfDevice g_device;
}  // namespace sf::nic::ibverbs::abi

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

// Test hook, not a libibverbs name (version SFVERBS_PRIVATE_1): the
// doorbell's counters, out[0] rings, out[1] futex wakes, out[2] progress-
// thread sleeps, out[3] SFVERBS_POLL_YIELD yields (Runtime::DoorbellStats),
// out[4] the SFVERBS_POLL_YIELD in effect (auto resolved), out[5] loop
// iterations run by application threads (SFVERBS_INLINE_PROGRESS), out[6]
// the progress thread's stand-back sleeps (SFVERBS_STAND_BACK_US); at most n
// of them. Returns how many were written, or -1 (errno ENODEV) before the
// datapath has started.
// tests/integration/ibverbs/verbs_check.c finds it with dlsym.
__attribute__((visibility("default"))) int sfverbs_doorbell_stats(uint64_t* out, int n) {
  std::string err;
  bool configured = false;
  Runtime* rt = Runtime::get(&err, &configured);
  if (rt == nullptr || !rt->started() || out == nullptr || n < 0) {
    errno = out == nullptr || n < 0 ? EINVAL : ENODEV;
    return -1;
  }
  const Runtime::DoorbellStats st = rt->doorbell_stats();
  const uint64_t v[7] = {st.rings,        st.wakes,           st.sleeps,        st.poll_yields,
                         rt->config().poll_yield, rt->inline_runs(), rt->stand_backs()};
  const int k = n < 7 ? n : 7;
  for (int i = 0; i < k; ++i) out[i] = v[i];
  return k;
}

}  // extern "C"
