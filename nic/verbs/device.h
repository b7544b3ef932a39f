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

using Qp = rc::Qp;    // struct ibv_qp
using Srq = rc::Srq;  // struct ibv_srq

// struct ibv_srq_init_attr's attr (max_wr, max_sge; srq_limit must be 0:
// there is no limit event).
struct SrqAttr {
  uint32_t max_wr = 0;
  uint32_t max_sge = 0;
  uint32_t srq_limit = 0;
};

// enum ibv_port_state.
enum class PortState : uint8_t { kNop = 0, kDown = 1, kInit = 2, kArmed = 3, kActive = 4, kActiveDefer = 5 };
const char* to_string(PortState s);
// IBV_LINK_LAYER_*.
enum class LinkLayer : uint8_t { kUnspecified = 0, kInfiniband = 1, kEthernet = 2 };
const char* to_string(LinkLayer l);

// struct ibv_port_attr (the fields a RoCE program reads). sf: the node does
// not see its links, so an existing port is always kActive; max_mtu =
// active_mtu = the port's RoCE MTU (NicPortConfig::mtu); the speed is the
// port's line rate, as IB's width x speed code (active_width 1 = 1X,
// active_speed 0 = none of IB's rates) and exactly in active_speed_mbps
// (sf; rdma-core's active_speed_ex is also Mb/s).
struct PortAttr {
  PortState state = PortState::kNop;
  Mtu max_mtu = Mtu::k4096;
  Mtu active_mtu = Mtu::k4096;
  int gid_tbl_len = 0;       // 2: index 0 = IPv4-mapped, 1 = IPv6 (an absent family's entry is empty)
  uint32_t port_cap_flags = 0;
  uint32_t max_msg_sz = 0;
  uint16_t lid = 0;          // RoCE: 0
  uint8_t active_width = 1;  // 1X
  uint8_t active_speed = 0;
  uint8_t phys_state = 0;    // 5 = LinkUp
  LinkLayer link_layer = LinkLayer::kEthernet;
  uint64_t active_speed_mbps = 0;
};

// struct ibv_context: one host of a NicNode.
class Context {
 public:
  Context(NicNode& node, size_t host) : node_(&node), host_(host) {}
  NicNode& node() const { return *node_; }
  Host& host() const { return node_->host(host_); }
  size_t host_index() const { return host_; }
  // ibv_query_gid(ctx, port_num, index, gid): port `port_num`'s GID table
  // (0 = IPv4-mapped, 1 = IPv6); false for an absent entry or port.
  bool query_gid(uint8_t port_num, uint8_t index, Gid* gid) const;
  // Port 1's table (a single-port host's).
  bool query_gid(uint8_t index, Gid* gid) const { return query_gid(1, index, gid); }
  // ibv_query_device's phys_port_cnt: the host's verbs ports (1..N).
  uint8_t phys_port_cnt() const { return host().num_ports(); }

 private:
  NicNode* node_;
  size_t host_;
};

// ibv_open_device for host `host` of `node`; nullptr (errno EINVAL) if no such host.
std::unique_ptr<Context> open_device(NicNode& node, size_t host);

// ibv_query_port: EINVAL for a null context or attr or port_num outside 1..phys_port_cnt.
int query_port(Context* ctx, uint8_t port_num, PortAttr* attr);
// The MAC of port `port_num` (sf: what the kernel's netdev of the port holds);
// EINVAL as query_port.
int query_port_mac(Context* ctx, uint8_t port_num, wire::MacAddr* mac);

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
// libmrc's mrc_modify_qp: an MRC QP's EV profile and transport knobs
// (MrcQpAttr, kMrc* mask bits; docs/mrc.md "Verbs"). EINVAL with
// qp->mrc_error() saying why (not an MRC QP, a bad value, a profile field
// after INIT).
int mrc_modify_qp(Qp* qp, const MrcQpAttr* attr, int attr_mask);
int query_qp(Qp* qp, QpAttr* attr, int attr_mask, QpInitAttr* init_attr);
// ibv_modify_qp_rate_limit: the QP's pacing rate (kbps, 0 = line rate) and
// burst bucket (max_burst_sz bytes, 0 = strict; docs/nic.md "Pacing").
// EINVAL (as rdma-core's mlx5 provider) for a null qp or attr, a comp_mask
// other than 0, or max_burst_sz / typical_pkt_sz without a rate_limit.
int modify_qp_rate_limit(Qp* qp, QpRateLimitAttr* attr);
int post_send(Qp* qp, SendWr* wr, SendWr** bad_wr);
int post_recv(Qp* qp, RecvWr* wr, RecvWr** bad_wr);
// ibv_create_srq / ibv_destroy_srq / ibv_query_srq / ibv_post_srq_recv
// (rc/srq.h). create: EINVAL for max_wr outside 1..kMaxWr, max_sge above
// kMaxSge or a srq_limit (errno). destroy: EBUSY while a QP uses it.
Srq* create_srq(Pd* pd, const SrqAttr* attr);
int destroy_srq(Srq* srq);
int query_srq(Srq* srq, SrqAttr* attr);
int post_srq_recv(Srq* srq, RecvWr* wr, RecvWr** bad_wr);
// ibv_poll_cq: >= 0 completions, or a negative value (CQ overrun).
int poll_cq(Cq* cq, int num_entries, Wc* wc);

}  // namespace sf::nic::verbs
