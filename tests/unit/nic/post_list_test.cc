// Lists of work requests (ibv_post_send / ibv_post_recv with `next`): posted
// in order up to the first bad one, which *bad names; everything before it
// stays posted, nothing after it is. Queue capacities that are not a power of
// two (the rings are rounded up inside, the limits are the caller's), and the
// CQ ring across its wrap. Pure logic: a QP without a node, no mbufs.
#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <vector>

#include "nic/rc/qp.h"
#include "nic/verbs/cq.h"
#include "tests/unit/nic/qp_harness.h"

namespace sf::nic {
namespace {

namespace v = verbs;

// A QP with its environment, connected as far as RTS (the peer is never
// needed: nothing is transmitted).
struct ListBench : test::QpHarness {
  std::array<v::Sge, 8> sge{};
  std::array<v::SendWr, 8> wr{};
  std::array<v::RecvWr, 8> rwr{};

  explicit ListBench(uint32_t max_wr = 5) : QpHarness(max_wr, 1) {
    for (size_t i = 0; i < sge.size(); ++i) sge[i] = {reinterpret_cast<uint64_t>(buf.data()) + i * 100, 100, mr->lkey};
  }
  // WRs 0..n-1 of `w` chained, ids from `first_id`, one SGE each (sge[i]).
  template <class Wr, size_t N>
  Wr* chain(std::array<Wr, N>& w, size_t n, uint64_t first_id) {
    for (size_t i = 0; i < n; ++i) {
      w[i] = Wr{};
      w[i].wr_id = first_id + i;
      w[i].next = i + 1 < n ? &w[i + 1] : nullptr;
      w[i].sg_list = &sge[i];
      w[i].num_sge = 1;
    }
    return w.data();
  }
  // WRs 0..n-1 chained, WRITE of 100 B each (one 1024 B packet), signalled.
  v::SendWr* send_list(size_t n) {
    chain(wr, n, 100);
    for (size_t i = 0; i < n; ++i) {
      wr[i].opcode = v::WrOpcode::kRdmaWrite;
      wr[i].send_flags = v::kSendSignaled;
    }
    return wr.data();
  }
  v::RecvWr* recv_list(size_t n) { return chain(rwr, n, 200); }
  void to(v::QpState s) {
    if (s == v::QpState::kErr) {
      v::QpAttr e;
      e.qp_state = v::QpState::kErr;
      ASSERT_EQ(qp.modify(e, v::kQpState, TimeNs(0)), 0);
      return;
    }
    v::QpAttr a;
    a.qp_state = v::QpState::kInit;
    a.port_num = 1;
    ASSERT_EQ(qp.modify(a, v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags, TimeNs(0)), 0);
    if (s == v::QpState::kInit) return;
    a = v::QpAttr{};
    a.qp_state = v::QpState::kRtr;
    a.path_mtu = v::Mtu::k1024;
    a.dest_qp_num = 0x22;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = v::gid_from_ipv4({{10, 0, 0, 2}});
    ASSERT_EQ(qp.modify(a,
                        v::kQpState | v::kQpAv | v::kQpPathMtu | v::kQpDestQpn | v::kQpRqPsn | v::kQpMaxDestRdAtomic |
                            v::kQpMinRnrTimer,
                        TimeNs(0)),
              0);
    if (s == v::QpState::kRtr) return;
    a = v::QpAttr{};
    a.qp_state = v::QpState::kRts;
    a.sq_psn = 0x100;
    ASSERT_EQ(qp.modify(a,
                        v::kQpState | v::kQpSqPsn | v::kQpMaxQpRdAtomic | v::kQpRetryCnt | v::kQpRnrRetry |
                            v::kQpTimeout,
                        TimeNs(0)),
              0);
  }
};

// 1. A list of 4 WRs whose third has too many SGEs. Expect: EINVAL, *bad is
//    the third, the first two are posted (two PSNs used), the fourth is not.
TEST(PostList, BadWrInTheMiddleIsNamedAndEarlierOnesStayPosted) {
  ListBench b;
  b.to(v::QpState::kRts);
  v::SendWr* list = b.send_list(4);
  b.wr[2].num_sge = 2;  // max_send_sge = 1
  v::SendWr* bad = nullptr;
  EXPECT_EQ(b.qp.post_send(list, &bad, TimeNs(0)), EINVAL);
  EXPECT_EQ(bad, &b.wr[2]);
  EXPECT_EQ(b.qp.sq_outstanding(), 2u);
  EXPECT_EQ(b.qp.next_psn(), wire::Psn(0x102));
  // Fixed and posted again from the bad one: all four are in.
  b.wr[2].num_sge = 1;
  EXPECT_EQ(b.qp.post_send(bad, &bad, TimeNs(0)), 0);
  EXPECT_EQ(bad, nullptr);
  EXPECT_EQ(b.qp.sq_outstanding(), 4u);
  EXPECT_EQ(b.qp.next_psn(), wire::Psn(0x104));
}

// 2. Other bad WRs in a list (unknown opcode, INLINE, negative num_sge, no
//    sg_list). Expect: each is named by *bad with EINVAL, and the WRs
//    before it are posted.
TEST(PostList, EveryKindOfBadWrStopsTheList) {
  auto spoil = std::array<void (*)(v::SendWr&), 4>{
      [](v::SendWr& w) { w.opcode = static_cast<v::WrOpcode>(9); },
      [](v::SendWr& w) { w.send_flags |= v::kSendInline; },
      [](v::SendWr& w) { w.num_sge = -1; },
      [](v::SendWr& w) { w.sg_list = nullptr; },
  };
  for (size_t k = 0; k < spoil.size(); ++k) {
    ListBench b;
    b.to(v::QpState::kRts);
    v::SendWr* list = b.send_list(3);
    spoil[k](b.wr[1]);
    v::SendWr* bad = nullptr;
    EXPECT_EQ(b.qp.post_send(list, &bad, TimeNs(0)), EINVAL) << k;
    EXPECT_EQ(bad, &b.wr[1]) << k;
    EXPECT_EQ(b.qp.sq_outstanding(), 1u) << k;
  }
}

// 3. A list longer than the room left in a 5-entry send queue (not a power
//    of two). Expect: exactly 5 posted, ENOMEM, *bad is the sixth.
TEST(PostList, QueueFullInTheMiddleIsEnomem) {
  ListBench b(5);
  b.to(v::QpState::kRts);
  v::SendWr* bad = nullptr;
  EXPECT_EQ(b.qp.post_send(b.send_list(7), &bad, TimeNs(0)), ENOMEM);
  EXPECT_EQ(bad, &b.wr[5]);
  EXPECT_EQ(b.qp.sq_outstanding(), 5u);
  v::QpInitAttr init;
  v::QpAttr attr;
  ASSERT_EQ(b.qp.query(&attr, &init), 0);
  EXPECT_EQ(init.cap.max_send_wr, 5u);  // the capacity asked for, not the ring's
}

// 4. A list in a state that cannot post (RTR). Expect: EINVAL, *bad is the
//    first WR, nothing posted.
TEST(PostList, WrongStateNamesTheFirstWr) {
  ListBench b;
  b.to(v::QpState::kRtr);
  v::SendWr* bad = nullptr;
  EXPECT_EQ(b.qp.post_send(b.send_list(3), &bad, TimeNs(0)), EINVAL);
  EXPECT_EQ(bad, &b.wr[0]);
  EXPECT_EQ(b.qp.sq_outstanding(), 0u);
  // A null list posts nothing and is no error.
  EXPECT_EQ(b.qp.post_send(nullptr, &bad, TimeNs(0)), 0);
  EXPECT_EQ(bad, nullptr);
}

// 5. A list of 7 (more than the 5-entry queue) posted in ERR. Expect: each
//    WR completes at once with WR_FLUSH_ERR, in list order (the queue never
//    fills), the call succeeds.
TEST(PostList, ListInErrFlushesEveryWrInOrder) {
  ListBench b(5);
  b.to(v::QpState::kRts);
  b.to(v::QpState::kErr);
  v::SendWr* list = b.send_list(7);
  b.wr[3].send_flags = 0;  // unsignalled: a flush completes it anyway
  v::SendWr* bad = nullptr;
  EXPECT_EQ(b.qp.post_send(list, &bad, TimeNs(0)), 0);
  EXPECT_EQ(bad, nullptr);
  v::Wc wc[8];
  ASSERT_EQ(b.scq.poll(wc), 7);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(wc[i].wr_id, 100u + i);
    EXPECT_EQ(wc[i].status, v::WcStatus::kWrFlushErr);
  }
  EXPECT_EQ(b.qp.sq_outstanding(), 0u);
}

// 6. Receive lists: a bad second WR (too many SGEs) is named, the first stays
//    posted; a list past the 5-entry receive queue stops at ENOMEM on the
//    sixth.
TEST(PostList, RecvListBadWrAndFullQueue) {
  ListBench b(5);
  b.to(v::QpState::kInit);
  v::RecvWr* list = b.recv_list(3);
  b.rwr[1].num_sge = 2;
  v::RecvWr* bad = nullptr;
  EXPECT_EQ(b.qp.post_recv(list, &bad, TimeNs(0)), EINVAL);
  EXPECT_EQ(bad, &b.rwr[1]);
  EXPECT_EQ(b.qp.rq_posted(), 1u);
  EXPECT_EQ(b.qp.post_recv(b.recv_list(6), &bad, TimeNs(0)), ENOMEM);
  EXPECT_EQ(bad, &b.rwr[4]);
  EXPECT_EQ(b.qp.rq_posted(), 5u);
  // ERR flushes the five in posting order.
  b.to(v::QpState::kErr);
  v::Wc wc[8];
  ASSERT_EQ(b.rcq.poll(wc), 5);
  EXPECT_EQ(wc[0].wr_id, 200u);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(wc[i].wr_id, 200u + i - 1);
}

// 7. A CQ of 3 entries (its ring is 4 long) used across the ring's wrap.
//    Expect: the fourth outstanding completion is lost (overrun), entries
//    come back oldest first however the ring wraps.
TEST(PostList, CqCapacityIsTheOneAskedForAndOrderSurvivesTheWrap) {
  v::Cq cq(nullptr, 3);
  EXPECT_EQ(cq.capacity(), 3u);
  uint64_t next_id = 0;
  uint64_t expect_id = 0;
  auto push = [&] {
    v::Wc wc;
    wc.wr_id = next_id;
    const bool ok = cq.push(wc);
    if (ok) ++next_id;
    return ok;
  };
  v::Wc out[4];
  for (int round = 0; round < 5; ++round) {
    while (cq.depth() < 3) ASSERT_TRUE(push());
    const int n = cq.poll(std::span<v::Wc>(out, 2));
    ASSERT_EQ(n, 2);
    for (int i = 0; i < n; ++i) EXPECT_EQ(out[i].wr_id, expect_id++);
  }
  EXPECT_FALSE(cq.overrun());
  ASSERT_TRUE(push());
  ASSERT_TRUE(push());
  EXPECT_FALSE(push());  // 3 stored
  EXPECT_TRUE(cq.overrun());
  EXPECT_EQ(cq.lost(), 1u);
  ASSERT_EQ(cq.poll(out), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i].wr_id, expect_id++);
  EXPECT_EQ(cq.poll(out), -EOVERFLOW);
}

}  // namespace
}  // namespace sf::nic
