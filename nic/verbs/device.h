// The verbs entry points of the softfabric NIC: ibv_open_device ...
// ibv_poll_cq with the same shapes and errno conventions, over one host of a
// NicNode (docs/nic.md has a side-by-side with a libibverbs program).
//
// Threading: every call runs on the node's thread, between bursts (from an
// App::poll() the node calls, or before the driver starts). `now` for the
// protocol is the node's latest driver time. Nothing here blocks.
// Returns: int calls return 0 or a positive errno (EINVAL, ENOMEM, EBUSY) as
// libibverbs does; pointer calls return nullptr and set errno.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "nic/host/nic_node.h"
#include "nic/rc/qp.h"
#include "nic/verbs/cq.h"
#include "nic/verbs/mr.h"
#include "nic/verbs/verbs.h"

namespace sf::nic::verbs {

using Qp = rc::Qp;  // struct ibv_qp

// struct ibv_context: one host of a NicNode.
class Context {
 public:
  Context(NicNode& node, size_t host) : node_(&node), host_(host) {}
  NicNode& node() const { return *node_; }
  Host& host() const { return node_->host(host_); }
  size_t host_index() const { return host_; }
  // The GID table (ibv_query_gid): 0 = IPv4-mapped, 1 = IPv6; false if absent.
  bool query_gid(uint8_t index, Gid* gid) const;

 private:
  NicNode* node_;
  size_t host_;
};

// ibv_open_device for host `host` of `node`; nullptr (errno EINVAL) if no such host.
std::unique_ptr<Context> open_device(NicNode& node, size_t host);

Pd* alloc_pd(Context* ctx);
int dealloc_pd(Pd* pd);
// ibv_reg_mr: access = kAccess* flags. REMOTE_WRITE needs LOCAL_WRITE.
Mr* reg_mr(Pd* pd, void* addr, size_t length, int access);
int dereg_mr(Mr* mr);
// ibv_create_cq (no channel, no vector).
Cq* create_cq(Context* ctx, int cqe);
int destroy_cq(Cq* cq);
Qp* create_qp(Pd* pd, QpInitAttr* init_attr);
int destroy_qp(Qp* qp);
int modify_qp(Qp* qp, QpAttr* attr, int attr_mask);
int query_qp(Qp* qp, QpAttr* attr, int attr_mask, QpInitAttr* init_attr);
// ibv_modify_qp_rate_limit: the QP's pacing rate (kbps, 0 = line rate) and
// burst bucket (max_burst_sz bytes, 0 = strict; docs/nic.md "Pacing").
// EINVAL (as rdma-core's mlx5 provider) for a null qp or attr, a comp_mask
// other than 0, or max_burst_sz / typical_pkt_sz without a rate_limit.
int modify_qp_rate_limit(Qp* qp, QpRateLimitAttr* attr);
int post_send(Qp* qp, SendWr* wr, SendWr** bad_wr);
int post_recv(Qp* qp, RecvWr* wr, RecvWr** bad_wr);
// ibv_poll_cq: >= 0 completions, or a negative value (CQ overrun).
int poll_cq(Cq* cq, int num_entries, Wc* wc);

}  // namespace sf::nic::verbs
