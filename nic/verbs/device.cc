// Verbs entry points over NicNode hosts. See device.h.
#include "nic/verbs/device.h"

#include <cerrno>
#include <new>
#include <span>

namespace sf::nic::verbs {

namespace {
Context* ctx_of(const Qp* qp) { return qp != nullptr && qp->pd() != nullptr ? qp->pd()->context : nullptr; }
}  // namespace

const char* to_string(PortState s) {
  switch (s) {
    case PortState::kNop: return "NOP";
    case PortState::kDown: return "DOWN";
    case PortState::kInit: return "INIT";
    case PortState::kArmed: return "ARMED";
    case PortState::kActive: return "ACTIVE";
    case PortState::kActiveDefer: return "ACTIVE_DEFER";
  }
  return "?";
}

const char* to_string(LinkLayer l) {
  switch (l) {
    case LinkLayer::kUnspecified: return "Unspecified";
    case LinkLayer::kInfiniband: return "InfiniBand";
    case LinkLayer::kEthernet: return "Ethernet";
  }
  return "?";
}

bool Context::query_gid(uint8_t port_num, uint8_t index, Gid* gid) const {
  if (port_num < 1 || port_num > host().num_ports() || gid == nullptr) return false;
  const rc::LocalAddr& l = host().local(port_num);
  if (index == 0 && l.has_ipv4) {
    *gid = gid_from_ipv4(l.ipv4);
    return true;
  }
  if (index == 1 && l.has_ipv6) {
    *gid = l.ipv6;
    return true;
  }
  return false;
}

std::unique_ptr<Context> open_device(NicNode& node, size_t host) {
  if (host >= node.num_hosts()) {
    errno = EINVAL;
    return nullptr;
  }
  return std::make_unique<Context>(node, host);
}

namespace {
Mtu mtu_of(uint32_t bytes) {
  if (bytes >= 4096) return Mtu::k4096;
  if (bytes >= 2048) return Mtu::k2048;
  if (bytes >= 1024) return Mtu::k1024;
  if (bytes >= 512) return Mtu::k512;
  return Mtu::k256;
}
}  // namespace

int query_port(Context* ctx, uint8_t port_num, PortAttr* attr) {
  if (ctx == nullptr || attr == nullptr || port_num < 1 || port_num > ctx->phys_port_cnt()) return EINVAL;
  const PortId np = ctx->host().node_port(port_num);
  const NicPortConfig& pc = ctx->node().port_config(np);
  *attr = PortAttr{};
  attr->state = PortState::kActive;
  attr->phys_state = 5;  // LinkUp
  attr->max_mtu = mtu_of(pc.mtu_bytes);
  attr->active_mtu = attr->max_mtu;
  attr->gid_tbl_len = 2;
  attr->max_msg_sz = rc::kMaxMessageBytes;
  attr->link_layer = LinkLayer::kEthernet;
  attr->active_speed_mbps = pc.line_rate.bps() / 1000000;
  return 0;
}

int query_port_mac(Context* ctx, uint8_t port_num, wire::MacAddr* mac) {
  if (ctx == nullptr || mac == nullptr || port_num < 1 || port_num > ctx->phys_port_cnt()) return EINVAL;
  *mac = ctx->host().local(port_num).mac;
  return 0;
}

Pd* alloc_pd(Context* ctx) {
  if (ctx == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  Pd* pd = ctx->host().alloc_pd(ctx);
  if (pd == nullptr) errno = ENOMEM;
  return pd;
}

int dealloc_pd(Pd* pd) { return pd == nullptr || pd->context == nullptr ? EINVAL : pd->context->host().dealloc_pd(pd); }

Mr* reg_mr(Pd* pd, void* addr, size_t length, int access) {
  if (pd == nullptr || pd->context == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  int err = 0;
  Mr* mr = pd->context->host().reg_mr(pd, addr, length, access, &err);
  if (mr == nullptr) errno = err;
  return mr;
}

int dereg_mr(Mr* mr) { return mr == nullptr || mr->context == nullptr ? EINVAL : mr->context->host().dereg_mr(mr); }

Cq* create_cq(Context* ctx, int cqe) {
  if (ctx == nullptr || cqe <= 0) {
    errno = EINVAL;
    return nullptr;
  }
  Cq* cq = ctx->host().create_cq(ctx, static_cast<uint32_t>(cqe));
  if (cq == nullptr) errno = ENOMEM;
  return cq;
}

int destroy_cq(Cq* cq) { return cq == nullptr || cq->context() == nullptr ? EINVAL : cq->context()->host().destroy_cq(cq); }

Qp* create_qp(Pd* pd, QpInitAttr* init_attr) {
  if (pd == nullptr || pd->context == nullptr || init_attr == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  int err = 0;
  Qp* qp = pd->context->host().create_qp(pd, *init_attr, &err);
  if (qp == nullptr) errno = err;
  return qp;
}

int destroy_qp(Qp* qp) {
  Context* ctx = ctx_of(qp);
  return ctx == nullptr ? EINVAL : ctx->host().destroy_qp(qp);
}

int modify_qp(Qp* qp, QpAttr* attr, int attr_mask) {
  Context* ctx = ctx_of(qp);
  if (ctx == nullptr || attr == nullptr) return EINVAL;
  const int rc = qp->modify(*attr, attr_mask, ctx->node().now());
  if (rc == 0) ctx->node().kick(ctx->host_index(), *qp);
  return rc;
}

int mrc_modify_qp(Qp* qp, const MrcQpAttr* attr, int attr_mask) {
  Context* ctx = ctx_of(qp);
  if (ctx == nullptr || attr == nullptr) return EINVAL;
  const int rc = qp->modify_mrc(*attr, attr_mask);
  if (rc == 0) ctx->node().kick(ctx->host_index(), *qp);
  return rc;
}

int query_qp(Qp* qp, QpAttr* attr, int, QpInitAttr* init_attr) {
  return qp == nullptr ? EINVAL : qp->query(attr, init_attr);
}

int modify_qp_rate_limit(Qp* qp, QpRateLimitAttr* attr) {
  if (ctx_of(qp) == nullptr || attr == nullptr || attr->comp_mask != 0) return EINVAL;
  if ((attr->max_burst_sz != 0 || attr->typical_pkt_sz != 0) && attr->rate_limit == 0) return EINVAL;
  qp->set_rate_limit(BitRate(uint64_t{attr->rate_limit} * 1000), attr->max_burst_sz);
  return 0;
}

int post_send(Qp* qp, SendWr* wr, SendWr** bad_wr) {
  Context* ctx = ctx_of(qp);
  if (ctx == nullptr) return EINVAL;
  const int rc = qp->post_send(wr, bad_wr, ctx->node().now());
  ctx->node().kick(ctx->host_index(), *qp);
  return rc;
}

Srq* create_srq(Pd* pd, const SrqAttr* attr) {
  if (pd == nullptr || pd->context == nullptr || attr == nullptr || attr->max_wr == 0 || attr->max_wr > rc::kMaxWr ||
      attr->max_sge > rc::kMaxSge || attr->srq_limit != 0) {
    errno = EINVAL;
    return nullptr;
  }
  int err = 0;
  Srq* srq = pd->context->host().create_srq(pd, attr->max_wr, attr->max_sge, &err);
  if (srq == nullptr) errno = err;
  return srq;
}

int destroy_srq(Srq* srq) {
  return srq == nullptr || srq->context() == nullptr ? EINVAL : srq->context()->host().destroy_srq(srq);
}

int query_srq(Srq* srq, SrqAttr* attr) {
  if (srq == nullptr || attr == nullptr) return EINVAL;
  *attr = SrqAttr{srq->max_wr(), srq->max_sge(), 0};
  return 0;
}

int post_srq_recv(Srq* srq, RecvWr* wr, RecvWr** bad_wr) {
  if (bad_wr != nullptr) *bad_wr = nullptr;
  if (srq == nullptr) return EINVAL;
  return srq->post(wr, bad_wr);
}

int post_recv(Qp* qp, RecvWr* wr, RecvWr** bad_wr) {
  Context* ctx = ctx_of(qp);
  if (ctx == nullptr) return EINVAL;
  const int rc = qp->post_recv(wr, bad_wr, ctx->node().now());
  ctx->node().kick(ctx->host_index(), *qp);
  return rc;
}

int poll_cq(Cq* cq, int num_entries, Wc* wc) {
  if (cq == nullptr || num_entries < 0 || (num_entries > 0 && wc == nullptr)) return -EINVAL;
  return cq->poll(std::span<Wc>(wc, static_cast<size_t>(num_entries)));
}

}  // namespace sf::nic::verbs
