// Shared receive queues (nic/rc/srq.h): two RC QPs of one host draw their
// receives from one SRQ, over a virtual-time link (common/sim). The SRQ's
// WQEs are taken oldest first by whichever QP's SEND arrives; an empty SRQ
// answers RNR until a receive is posted; a QP that fails ends only the WQE
// it took; misuse is refused.
#include <gtest/gtest.h>

#include <cstring>

#include "common/sim/simulator.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

struct SrqFabric {
  NicNode a{one_host_cfg(0), sf::test::mbuf_pool()};
  NicNode b{one_host_cfg(1), sf::test::mbuf_pool()};
  ScriptApp app_a, app_b;
  sim::Simulator sim{1};
  Endpoint a1, a2;  // requesters on A, each its own QP
  std::unique_ptr<v::Context> ctx;  // B: one PD, one SRQ, two QPs
  v::Pd* pd = nullptr;
  v::Cq* scq = nullptr;
  v::Cq* rcq = nullptr;
  v::Srq* srq = nullptr;
  v::Qp* b1 = nullptr;
  v::Qp* b2 = nullptr;
  std::vector<uint8_t> buf = std::vector<uint8_t>(1 << 16, 0);
  v::Mr* mr = nullptr;

  SrqFabric() {
    a.set_app(&app_a);
    b.set_app(&app_b);
    sim.connect(sim.add_node(a, "a"), 0, sim.add_node(b, "b"), 0, {BitRate::gbps(100), TimeNs::from_us(1)});
    a1 = make_endpoint(a, 0, 1 << 16);
    a2 = make_endpoint(a, 0, 1 << 16);
    fill_pattern(a1.buf, 1);
    fill_pattern(a2.buf, 2);
    ctx = v::open_device(b, 0);
    pd = v::alloc_pd(ctx.get());
    scq = v::create_cq(ctx.get(), 256);
    rcq = v::create_cq(ctx.get(), 256);
    v::SrqAttr sa;
    sa.max_wr = 8;
    sa.max_sge = 1;
    srq = v::create_srq(pd, &sa);
    mr = v::reg_mr(pd, buf.data(), buf.size(), kAllAccess);
    v::QpInitAttr ia;
    ia.send_cq = scq;
    ia.recv_cq = rcq;
    ia.srq = srq;
    ia.cap.max_send_wr = 16;
    ia.cap.max_recv_wr = 16;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    b1 = v::create_qp(pd, &ia);
    b2 = v::create_qp(pd, &ia);
    ConnParams p;
    ConnParams q = p;
    std::swap(q.sq_psn, q.rq_psn);
    EXPECT_EQ(connect_qp(a1.qp, *ctx, *b1, p), 0);
    EXPECT_EQ(connect_qp(b1, *a1.ctx, *a1.qp, q), 0);
    EXPECT_EQ(connect_qp(a2.qp, *ctx, *b2, p), 0);
    EXPECT_EQ(connect_qp(b2, *a2.ctx, *a2.qp, q), 0);
  }
  // One SRQ receive of `len` bytes at `off` of B's buffer, wr_id = off.
  int post(uint64_t off, uint32_t len) {
    v::Sge sge{reinterpret_cast<uint64_t>(buf.data()) + off, len, mr->lkey};
    v::RecvWr wr;
    wr.wr_id = off;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    v::RecvWr* bad = nullptr;
    return v::post_srq_recv(srq, &wr, &bad);
  }
};

// 1. Four receives in the SRQ; A1 sends 3000 B, A2 5000 B (two packets),
//    A1 100 B. Expect three receive completions, each naming the QP the SEND
//    came in on, the WQEs taken in order (offsets 0, 16 Ki, 32 Ki), each
//    holding its sender's bytes; one WQE left.
TEST(Srq, SharedByTwoQps) {
  SrqFabric f;
  for (uint64_t k = 0; k < 4; ++k) ASSERT_EQ(f.post(k * 16384, 16384), 0);
  // Posted on A's thread at 0, 20 and 40 us (the node's script), so they
  // arrive in that order.
  f.app_a.at(TimeNs(0), [&](TimeNs) { ASSERT_EQ(post_write(f.a1, 1, 0, 3000, 0, 0, v::WrOpcode::kSend), 0); });
  f.app_a.at(TimeNs::from_us(20), [&](TimeNs) { ASSERT_EQ(post_write(f.a2, 2, 0, 5000, 0, 0, v::WrOpcode::kSend), 0); });
  f.app_a.at(TimeNs::from_us(40), [&](TimeNs) { ASSERT_EQ(post_write(f.a1, 3, 4096, 100, 0, 0, v::WrOpcode::kSend), 0); });
  f.sim.run_for(TimeNs::from_us(100));
  const auto r = drain(f.rcq);
  ASSERT_EQ(r.size(), 3u);
  const struct {
    uint64_t wr_id;
    uint32_t qpn;
    uint32_t len;
    const Endpoint* from;
    uint64_t from_off;
  } want[] = {{0, f.b1->qp_num(), 3000, &f.a1, 0}, {16384, f.b2->qp_num(), 5000, &f.a2, 0},
              {32768, f.b1->qp_num(), 100, &f.a1, 4096}};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r[i].status, v::WcStatus::kSuccess) << i;
    EXPECT_EQ(r[i].wr_id, want[i].wr_id) << i;
    EXPECT_EQ(r[i].qp_num, want[i].qpn) << i;
    EXPECT_EQ(r[i].byte_len, want[i].len) << i;
    EXPECT_EQ(std::memcmp(f.buf.data() + want[i].wr_id, want[i].from->buf.data() + want[i].from_off, want[i].len), 0)
        << i;
  }
  EXPECT_EQ(f.srq->count(), 1u);
  for (const auto& wc : drain(f.a1.scq)) EXPECT_EQ(wc.status, v::WcStatus::kSuccess);
}

// 2. An empty SRQ: the SEND is answered RNR; once a receive is posted the
//    requester's retry lands in it.
TEST(Srq, EmptyIsReceiverNotReady) {
  SrqFabric f;
  ASSERT_EQ(post_write(f.a1, 1, 0, 2000, 0, 0, v::WrOpcode::kSend), 0);
  f.app_b.at(TimeNs::from_us(30), [&](TimeNs) {
    EXPECT_TRUE(drain(f.rcq).empty());
    EXPECT_GE(f.b1->counters().tx_rnr_naks, 1u);
    ASSERT_EQ(f.post(0, 4096), 0);
  });
  f.sim.run_for(TimeNs::from_us(300));
  const auto r = drain(f.rcq);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, v::WcStatus::kSuccess);
  EXPECT_EQ(r[0].byte_len, 2000u);
  const auto s = drain(f.a1.scq);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, v::WcStatus::kSuccess);
}

// 2b. An empty SRQ under a train of SENDs: the first is answered RNR, the
//     ones behind it (out of sequence now) are dropped without a NAK of
//     their own, so the requester sees the RNR NAK (waits its timer, counted
//     against rnr_retry), not a sequence-error NAK in its place (go back at
//     once, counted against retry_cnt: RETRY_EXC_ERR once the receives came
//     late enough, ib_send_bw --use-srq). Receives posted at 30 us: all 8
//     land, in order.
TEST(Srq, RnrWithSendsBehindItIsNotASequenceError) {
  SrqFabric f;
  for (uint64_t k = 0; k < 8; ++k) {
    ASSERT_EQ(post_write(f.a1, k, k * 2048, 2000, 0, 0, v::WrOpcode::kSend), 0) << k;
  }
  f.app_b.at(TimeNs::from_us(30), [&](TimeNs) {
    EXPECT_TRUE(drain(f.rcq).empty());
    for (uint64_t k = 0; k < 8; ++k) ASSERT_EQ(f.post(k * 4096, 4096), 0);
  });
  f.sim.run_for(TimeNs::from_us(500));
  const auto r = drain(f.rcq);
  ASSERT_EQ(r.size(), 8u);
  for (uint64_t k = 0; k < 8; ++k) {
    EXPECT_EQ(r[k].status, v::WcStatus::kSuccess) << k;
    EXPECT_EQ(std::memcmp(f.buf.data() + r[k].wr_id, f.a1.buf.data() + k * 2048, 2000), 0) << k;
  }
  const auto& b = f.b1->counters();
  EXPECT_GE(b.rx[static_cast<int>(rc::RxAction::kRnrNakSent)], 1u);
  EXPECT_EQ(b.rx[static_cast<int>(rc::RxAction::kNakSeqSent)], 0u);  // no sequence NAK in the RNR's place
  EXPECT_GE(b.rx[static_cast<int>(rc::RxAction::kOutOfSeqDropped)], 1u);
  EXPECT_GE(f.a1.qp->counters().rnr_waits, 1u);
  const auto s = drain(f.a1.scq);
  ASSERT_EQ(s.size(), 8u);
  for (const auto& wc : s) EXPECT_EQ(wc.status, v::WcStatus::kSuccess);
}

// 3. A1's 8000 B SEND into a 4 KiB receive: B1 fails, the WQE it took ends
//    with LOC_LEN_ERR; the SRQ's other WQEs stay for B2, whose SEND lands.
TEST(Srq, AFailedQpEndsOnlyTheWqeItTook) {
  SrqFabric f;
  ASSERT_EQ(f.post(0, 4096), 0);
  ASSERT_EQ(f.post(16384, 16384), 0);
  ASSERT_EQ(f.post(32768, 16384), 0);
  ASSERT_EQ(post_write(f.a1, 1, 0, 8000, 0, 0, v::WrOpcode::kSend), 0);
  std::vector<v::Wc> r;
  f.app_a.at(TimeNs::from_us(30), [&](TimeNs) {
    r = drain(f.rcq);
    EXPECT_EQ(f.b1->state(), v::QpState::kErr);
    EXPECT_EQ(f.srq->count(), 2u);
    ASSERT_EQ(post_write(f.a2, 2, 0, 700, 0, 0, v::WrOpcode::kSend), 0);
  });
  f.sim.run_for(TimeNs::from_us(100));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 0u);
  EXPECT_EQ(r[0].status, v::WcStatus::kLocLenErr) << v::to_string(r[0].status);
  EXPECT_EQ(r[0].qp_num, f.b1->qp_num());
  r = drain(f.rcq);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, v::WcStatus::kSuccess);
  EXPECT_EQ(r[0].wr_id, 16384u);
  EXPECT_EQ(r[0].qp_num, f.b2->qp_num());
  EXPECT_EQ(std::memcmp(f.buf.data() + 16384, f.a2.buf.data(), 700), 0);
}

// 4. Misuse: a receive posted to a QP that has an SRQ, an SRQ with QPs
//    destroyed, an MRC QP or a bad size with an SRQ, a limit (no event).
TEST(Srq, Refusals) {
  SrqFabric f;
  v::Sge sge{reinterpret_cast<uint64_t>(f.buf.data()), 64, f.mr->lkey};
  v::RecvWr wr;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  v::RecvWr* bad = nullptr;
  EXPECT_EQ(v::post_recv(f.b1, &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
  wr.num_sge = 2;  // above the SRQ's max_sge
  EXPECT_EQ(v::post_srq_recv(f.srq, &wr, &bad), EINVAL);
  wr.num_sge = 1;
  for (int i = 0; i < 8; ++i) ASSERT_EQ(v::post_srq_recv(f.srq, &wr, &bad), 0);
  EXPECT_EQ(v::post_srq_recv(f.srq, &wr, &bad), ENOMEM);  // max_wr 8
  v::SrqAttr q;
  ASSERT_EQ(v::query_srq(f.srq, &q), 0);
  EXPECT_EQ(q.max_wr, 8u);
  EXPECT_EQ(q.max_sge, 1u);
  EXPECT_EQ(v::destroy_srq(f.srq), EBUSY);
  v::QpInitAttr ia;
  ia.send_cq = f.scq;
  ia.recv_cq = f.rcq;
  ia.srq = f.srq;
  ia.cap.max_send_wr = 4;
  ia.qp_type = v::QpType::kMrc;
  errno = 0;
  EXPECT_EQ(v::create_qp(f.pd, &ia), nullptr);
  EXPECT_EQ(errno, EINVAL);
  v::SrqAttr sa;
  sa.max_wr = 0;
  EXPECT_EQ(v::create_srq(f.pd, &sa), nullptr);
  sa.max_wr = 4;
  sa.srq_limit = 2;
  EXPECT_EQ(v::create_srq(f.pd, &sa), nullptr);
  EXPECT_EQ(errno, EINVAL);
  ASSERT_EQ(v::destroy_qp(f.b1), 0);
  ASSERT_EQ(v::destroy_qp(f.b2), 0);
  EXPECT_EQ(v::dealloc_pd(f.pd), EBUSY);  // the SRQ still uses it
  EXPECT_EQ(v::destroy_srq(f.srq), 0);
}

}  // namespace
}  // namespace sf::nic::test
