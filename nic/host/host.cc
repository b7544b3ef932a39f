// Host: one host's verbs objects (PDs, MRs, CQs, the QP table). See nic_node.h.
#include <algorithm>
#include <cerrno>

#include "nic/host/nic_node.h"

namespace sf::nic {

Host::Host(const HostConfig& cfg, rte_mempool* pool, std::vector<PortId> ports)
    : cfg_(cfg),
      ports_(std::move(ports)),
      port_rates_(std::max<size_t>(ports_.size(), 1), BitRate::gbps(100)),
      pool_(pool),
      mrs_(cfg.max_mrs, cfg.rc.seed),
      mr_shinfo_(cfg.tx_zero_copy ? cfg.max_mrs : 0),
      qps_(cfg.max_qps) {
  auto addr_of = [](const HostPortAddr& a) {
    rc::LocalAddr l;
    l.mac = a.mac;
    l.has_ipv4 = a.ipv4.has_value();
    if (a.ipv4) l.ipv4 = *a.ipv4;
    l.has_ipv6 = a.ipv6.has_value();
    if (a.ipv6) l.ipv6 = *a.ipv6;
    l.has_gateway = a.gateway_mac.has_value();
    if (a.gateway_mac) l.gateway = *a.gateway_mac;
    return l;
  };
  const HostPortAddr shared{cfg.mac, cfg.ipv4, cfg.ipv6, cfg.gateway_mac};
  for (size_t k = 0; k < std::max<size_t>(ports_.size(), 1); ++k) {
    locals_.push_back(addr_of(k < cfg.port_addrs.size() ? cfg.port_addrs[k] : shared));
  }
  first_qpn_ = rc::first_qpn(cfg.rc.seed, cfg.max_qps);
}

verbs::Pd* Host::alloc_pd(verbs::Context* ctx) {
  if (pds_.size() >= cfg_.max_pds) return nullptr;
  pds_.push_back(std::make_unique<verbs::Pd>(verbs::Pd{ctx, next_pd_++}));
  return pds_.back().get();
}

int Host::dealloc_pd(verbs::Pd* pd) {
  for (size_t i = 0; i < pds_.size(); ++i) {
    if (pds_[i].get() != pd) continue;
    for (const rc::Qp& q : qps_) {
      if (q.in_use() && q.pd() == pd) return EBUSY;
    }
    for (const auto& s : srqs_) {
      if (s->pd() == pd) return EBUSY;
    }
    pds_.erase(pds_.begin() + static_cast<std::ptrdiff_t>(i));
    return 0;
  }
  return EINVAL;
}

verbs::Mr* Host::reg_mr(verbs::Pd* pd, void* addr, uint64_t length, int access, int* err) {
  bool ours = false;
  for (const auto& p : pds_) ours = ours || p.get() == pd;
  if (!ours) {
    *err = EINVAL;
    return nullptr;
  }
  verbs::Mr* mr = mrs_.add(pd, addr, length, access, err);
  if (mr != nullptr && !mr_shinfo_.empty()) {
    // One reference held by the registration; each zero-copy frame adds one
    // and drops it when freed. The count never reaches 0 while registered.
    rte_mbuf_ext_shared_info& sh = mr_shinfo_[mr->handle];
    sh.free_cb = [](void*, void*) {};
    sh.fcb_opaque = nullptr;
    rte_mbuf_ext_refcnt_set(&sh, 1);
  }
  return mr;
}

uint32_t Host::mr_frames_in_flight(const verbs::Mr* mr) const {
  if (mr_shinfo_.empty() || mr == nullptr || mr->handle >= mr_shinfo_.size()) return 0;
  return static_cast<uint32_t>(rte_mbuf_ext_refcnt_read(&mr_shinfo_[mr->handle]) - 1);
}

int Host::dereg_mr(verbs::Mr* mr) {
  if (mr_frames_in_flight(mr) > 0) return EBUSY;
  return mrs_.remove(mr);
}

verbs::Cq* Host::create_cq(verbs::Context* ctx, uint32_t cqe) {
  if (cqs_.size() >= cfg_.max_cqs || cqe == 0 || cqe > (1u << 20)) return nullptr;
  cqs_.push_back(std::make_unique<verbs::Cq>(ctx, cqe));
  return cqs_.back().get();
}

int Host::destroy_cq(verbs::Cq* cq) {
  for (size_t i = 0; i < cqs_.size(); ++i) {
    if (cqs_[i].get() != cq) continue;
    for (const rc::Qp& q : qps_) {
      verbs::QpAttr a;
      verbs::QpInitAttr init;
      if (q.in_use() && q.query(&a, &init) == 0 && (init.send_cq == cq || init.recv_cq == cq)) return EBUSY;
    }
    cqs_.erase(cqs_.begin() + static_cast<std::ptrdiff_t>(i));
    return 0;
  }
  return EINVAL;
}

rc::Srq* Host::create_srq(verbs::Pd* pd, uint32_t max_wr, uint32_t max_sge, int* err) {
  bool ours = false;
  for (const auto& p : pds_) ours = ours || p.get() == pd;
  if (!ours) {
    *err = EINVAL;
    return nullptr;
  }
  srqs_.push_back(std::make_unique<rc::Srq>(pd->context, pd, max_wr, max_sge));
  return srqs_.back().get();
}

int Host::destroy_srq(rc::Srq* srq) {
  for (size_t i = 0; i < srqs_.size(); ++i) {
    if (srqs_[i].get() != srq) continue;
    if (srq->qps != 0) return EBUSY;
    srqs_.erase(srqs_.begin() + static_cast<std::ptrdiff_t>(i));
    return 0;
  }
  return EINVAL;
}

rc::Qp* Host::create_qp(verbs::Pd* pd, const verbs::QpInitAttr& init, int* err) {
  bool pd_ok = false;
  for (const auto& p : pds_) pd_ok = pd_ok || p.get() == pd;
  bool cq_ok_s = false;
  bool cq_ok_r = false;
  for (const auto& c : cqs_) {
    cq_ok_s = cq_ok_s || c.get() == init.send_cq;
    cq_ok_r = cq_ok_r || c.get() == init.recv_cq;
  }
  if (!pd_ok || !cq_ok_s || !cq_ok_r) {
    *err = EINVAL;
    return nullptr;
  }
  for (uint32_t i = 0; i < qps_.size(); ++i) {
    if (qps_[i].in_use()) continue;
    rc::QpEnv env{pool_, &mrs_, locals_.data(), &cfg_.rc, num_ports(), mr_shinfo_.empty() ? nullptr : mr_shinfo_.data(),
                  port_rates_.data()};
    *err = qps_[i].create(env, first_qpn_ + i, pd, init);
    return *err == 0 ? &qps_[i] : nullptr;
  }
  *err = ENOMEM;
  return nullptr;
}

int Host::destroy_qp(rc::Qp* qp) {
  for (rc::Qp& q : qps_) {
    if (&q == qp && q.in_use()) {
      q.destroy();
      return 0;
    }
  }
  return EINVAL;
}

}  // namespace sf::nic
