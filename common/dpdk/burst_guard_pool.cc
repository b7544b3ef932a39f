// Counted mempool handler. See burst_guard_pool.h.
#include "common/dpdk/burst_guard_pool.h"

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace sf::dpdk {
namespace {

constexpr const char* kOpsName = "sf_counted";

__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_dequeued = 0;
__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_enqueued = 0;

std::atomic<rte_mempool*> g_pools[kMaxCountedPools];
std::atomic<int> g_own_index{-1};

// The handler every counted pool delegates to: the one a pool created by
// rte_pktmbuf_pool_create would get (resolved once, after EAL init).
const rte_mempool_ops* under() {
  static const rte_mempool_ops* ops = [] () -> const rte_mempool_ops* {
    const char* name = rte_mbuf_best_mempool_ops();
    for (unsigned i = 0; i < rte_mempool_ops_table.num_ops; ++i) {
      if (std::strcmp(rte_mempool_ops_table.ops[i].name, name) == 0) return &rte_mempool_ops_table.ops[i];
    }
    return nullptr;
  }();
  return ops;
}

int counted_alloc(rte_mempool* mp) {
  const rte_mempool_ops* u = under();
  if (u == nullptr || std::strcmp(u->name, kOpsName) == 0) return -ENOTSUP;
  if (const int rc = u->alloc(mp); rc != 0) return rc;
  for (auto& slot : g_pools) {
    rte_mempool* none = nullptr;
    if (slot.compare_exchange_strong(none, mp)) return 0;
  }
  u->free(mp);
  return -ENOSPC;  // more than kMaxCountedPools counted pools
}

void counted_free(rte_mempool* mp) {
  for (auto& slot : g_pools) {
    rte_mempool* self = mp;
    slot.compare_exchange_strong(self, nullptr);
  }
  under()->free(mp);
}

int counted_enqueue(rte_mempool* mp, void* const* objs, unsigned int n) {
  const int rc = under()->enqueue(mp, objs, n);
  if (rc == 0) t_enqueued += n;
  return rc;
}

int counted_dequeue(rte_mempool* mp, void** objs, unsigned int n) {
  const int rc = under()->dequeue(mp, objs, n);
  if (rc == 0) t_dequeued += n;
  return rc;
}

unsigned int counted_count(const rte_mempool* mp) { return under()->get_count(mp); }

ssize_t counted_calc_mem_size(const rte_mempool* mp, uint32_t obj_num, uint32_t pg_shift, size_t* min_chunk_size,
                              size_t* align) {
  const rte_mempool_ops* u = under();
  if (u->calc_mem_size != nullptr) return u->calc_mem_size(mp, obj_num, pg_shift, min_chunk_size, align);
  return rte_mempool_op_calc_mem_size_default(mp, obj_num, pg_shift, min_chunk_size, align);
}

int counted_populate(rte_mempool* mp, unsigned int max_objs, void* vaddr, rte_iova_t iova, size_t len,
                     rte_mempool_populate_obj_cb_t* obj_cb, void* obj_cb_arg) {
  const rte_mempool_ops* u = under();
  if (u->populate != nullptr) return u->populate(mp, max_objs, vaddr, iova, len, obj_cb, obj_cb_arg);
  return rte_mempool_op_populate_default(mp, max_objs, vaddr, iova, len, obj_cb, obj_cb_arg);
}

int counted_get_info(const rte_mempool* mp, rte_mempool_info* info) {
  const rte_mempool_ops* u = under();
  return u->get_info != nullptr ? u->get_info(mp, info) : -ENOTSUP;
}

rte_mempool_ops make_ops() {
  rte_mempool_ops o{};
  std::snprintf(o.name, sizeof(o.name), "%s", kOpsName);
  o.alloc = counted_alloc;
  o.free = counted_free;
  o.enqueue = counted_enqueue;
  o.dequeue = counted_dequeue;
  o.get_count = counted_count;
  o.calc_mem_size = counted_calc_mem_size;
  o.populate = counted_populate;
  o.get_info = counted_get_info;
  return o;
}

const rte_mempool_ops g_ops = make_ops();

}  // namespace

const char* counted_pool_ops_name() {
  static const int index = rte_mempool_register_ops(&g_ops);
  g_own_index.store(index, std::memory_order_relaxed);
  return index >= 0 ? kOpsName : nullptr;
}

bool pool_is_counted(const rte_mempool* mp) {
  const int own = g_own_index.load(std::memory_order_relaxed);
  return mp != nullptr && own >= 0 && mp->ops_index == own;
}

int64_t thread_pool_balance() {
  int64_t b = static_cast<int64_t>(t_dequeued - t_enqueued);
  const unsigned lcore = rte_lcore_id();
  for (const auto& slot : g_pools) {
    rte_mempool* mp = slot.load(std::memory_order_relaxed);
    if (mp == nullptr) continue;
    if (const rte_mempool_cache* c = rte_mempool_default_cache(mp, lcore); c != nullptr) b -= c->len;
  }
  return b;
}

}  // namespace sf::dpdk
