// Test harness for the NIC (tests/unit/nic, tests/scenario): host configs
// with distinct addresses (tests/support/nic_hosts.h), an endpoint = context
// + PD + CQs + RC QP + one registered buffer, the verbs connection sequence
// RESET -> INIT -> RTR -> RTS (tests/support/nic_connect.h), a ScriptApp that runs test steps on the node's thread at given
// virtual times, and CQ draining. Header-only; EAL must be up for mbufs.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "nic/host/nic_node.h"
#include "nic/verbs/device.h"
#include "tests/support/nic_connect.h"
#include "tests/support/nic_hosts.h"

namespace sf::nic::test {

namespace v = sf::nic::verbs;

struct Endpoint {
  std::unique_ptr<v::Context> ctx;
  v::Pd* pd = nullptr;
  v::Cq* scq = nullptr;
  v::Cq* rcq = nullptr;
  v::Qp* qp = nullptr;
  std::vector<uint8_t> buf;
  v::Mr* mr = nullptr;
  uint64_t addr() const { return reinterpret_cast<uint64_t>(buf.data()); }
};

inline constexpr int kAllAccess = v::kAccessLocalWrite | v::kAccessRemoteWrite | v::kAccessRemoteRead;

inline Endpoint make_endpoint(NicNode& node, size_t host, size_t buf_bytes, int access = kAllAccess,
                              uint32_t max_wr = 256, int cqe = 1024) {
  Endpoint e;
  e.ctx = v::open_device(node, host);
  e.pd = v::alloc_pd(e.ctx.get());
  e.scq = v::create_cq(e.ctx.get(), cqe);
  e.rcq = v::create_cq(e.ctx.get(), cqe);
  v::QpInitAttr ia;
  ia.send_cq = e.scq;
  ia.recv_cq = e.rcq;
  ia.cap.max_send_wr = max_wr;
  ia.cap.max_recv_wr = max_wr;
  ia.cap.max_send_sge = 4;
  ia.cap.max_recv_sge = 4;
  e.qp = v::create_qp(e.pd, &ia);
  e.buf.assign(buf_bytes, 0);
  e.mr = v::reg_mr(e.pd, e.buf.data(), e.buf.size(), access);
  return e;
}

// RESET -> INIT -> RTR -> RTS towards `peer`; returns the first failing rc.
inline int connect_qp(Endpoint& self, const Endpoint& peer, const ConnParams& p) {
  return connect_qp(self.qp, *peer.ctx, *peer.qp, p);
}

// Connects a and b both ways (a's sq_psn = b's rq_psn and vice versa).
inline void connect_pair(Endpoint& a, Endpoint& b, ConnParams p = {}) {
  ConnParams pb = p;
  std::swap(pb.sq_psn, pb.rq_psn);
  ASSERT_EQ(connect_qp(a, b, p), 0);
  ASSERT_EQ(connect_qp(b, a, pb), 0);
}

// Runs steps on the node's thread: at(t, f) runs f(now) at the first node
// call at or after t; every(f) runs f on every poll.
class ScriptApp final : public App {
 public:
  void at(TimeNs t, std::function<void(TimeNs)> f) { steps_.push_back({t, std::move(f)}); }
  void every(std::function<void(TimeNs)> f) { every_.push_back(std::move(f)); }
  void poll(TimeNs now) override {
    for (auto& s : steps_) {
      if (s.f && s.t <= now) {
        auto f = std::move(s.f);
        s.f = nullptr;
        f(now);
      }
    }
    for (auto& f : every_) f(now);
  }
  TimeNs next_wakeup(TimeNs now) const override {
    TimeNs t = TimeNs::max();
    for (const auto& s : steps_) {
      if (s.f && s.t > now && s.t < t) t = s.t;
    }
    return t;
  }

 private:
  struct Step {
    TimeNs t;
    std::function<void(TimeNs)> f;
  };
  std::vector<Step> steps_;
  std::vector<std::function<void(TimeNs)>> every_;
};

inline std::vector<v::Wc> drain(v::Cq* cq) {
  std::vector<v::Wc> out;
  v::Wc wc[16];
  for (;;) {
    const int n = v::poll_cq(cq, 16, wc);
    if (n <= 0) break;
    out.insert(out.end(), wc, wc + n);
  }
  return out;
}

inline void fill_pattern(std::vector<uint8_t>& b, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (auto& c : b) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<uint8_t>(x);
  }
}

inline int post_write(Endpoint& e, uint64_t wr_id, uint64_t local_off, uint32_t len, uint64_t remote_addr, uint32_t rkey,
                      v::WrOpcode op = v::WrOpcode::kRdmaWrite, uint32_t imm = 0, unsigned flags = v::kSendSignaled) {
  v::Sge sge{e.addr() + local_off, len, e.mr->lkey};
  v::SendWr wr;
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = flags;
  wr.imm_data = imm;
  wr.rdma.remote_addr = remote_addr;
  wr.rdma.rkey = rkey;
  v::SendWr* bad = nullptr;
  return v::post_send(e.qp, &wr, &bad);
}

inline int post_recv(Endpoint& e, uint64_t wr_id, uint64_t off, uint32_t len) {
  v::Sge sge{e.addr() + off, len, e.mr->lkey};
  v::RecvWr wr;
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  v::RecvWr* bad = nullptr;
  return v::post_recv(e.qp, &wr, &bad);
}

// ibv_modify_qp_rate_limit with only the rate (kbps) and the burst bucket.
inline int set_rate_limit(v::Qp* qp, uint32_t kbps, uint32_t max_burst_sz = 0) {
  v::QpRateLimitAttr a;
  a.rate_limit = kbps;
  a.max_burst_sz = max_burst_sz;
  return v::modify_qp_rate_limit(qp, &a);
}

}  // namespace sf::nic::test
