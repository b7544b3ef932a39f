// MRs deregistered while a message is in flight (issue 17 section 1): every
// packet that writes (or reads) memory is checked against the MR again, so a
// WRITE's MIDDLE/LAST, a READ response's MIDDLE/LAST, a SEND's MIDDLE and a
// request's payload after dereg_mr touch nothing. The buffers sit between
// PROT_NONE guard pages and are made read-only (or unmapped) once their MR
// is gone, as if freed: a stray write (or read) is a SIGSEGV that kills the
// test, and every byte is compared after. Crafted frames (common/wire, ICRC
// included) in, NicNode::transmit out; no clock.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/support/eal_env.h"
#include "tests/unit/nic/crafted_frames.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

using wire::Opcode;

constexpr size_t kPage = 4096;

// `pages` read-write pages between two PROT_NONE guard pages, zeroed.
class GuardedBuf {
 public:
  explicit GuardedBuf(size_t pages) : pages_(pages) {
    void* p = mmap(nullptr, (pages + 2) * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    base_ = static_cast<uint8_t*>(p);
    EXPECT_EQ(mprotect(data(), bytes(), PROT_READ | PROT_WRITE), 0);
  }
  ~GuardedBuf() { munmap(base_, (pages_ + 2) * kPage); }
  GuardedBuf(const GuardedBuf&) = delete;
  GuardedBuf& operator=(const GuardedBuf&) = delete;
  uint8_t* data() const { return base_ + kPage; }
  uint64_t addr() const { return reinterpret_cast<uint64_t>(data()); }
  size_t bytes() const { return pages_ * kPage; }
  // The buffer is "freed": writes fault from now on, reads still work (so
  // the test can check its bytes).
  void freeze() { EXPECT_EQ(mprotect(data(), bytes(), PROT_READ), 0); }
  // Freed for real: reads fault too.
  void unmap() { EXPECT_EQ(mprotect(data(), bytes(), PROT_NONE), 0); }
  // Every byte in [from, bytes()) equals `b`.
  void expect_all(size_t from, uint8_t b, const char* what) const {
    for (size_t i = from; i < bytes(); ++i) ASSERT_EQ(data()[i], b) << what << ": byte " << i;
  }

 private:
  size_t pages_;
  uint8_t* base_ = nullptr;
};

// Node b (host 1) is the responder under test, node a (host 0) the
// requester; QPs connected with MTU 256 (b expects PSN 0x100, a's first request is 0x100).
struct Pair {
  NicNode a;
  NicNode b;
  Endpoint ea;
  Endpoint eb;
  Pair() : a(one_host_cfg(0), sf::test::mbuf_pool()), b(one_host_cfg(1), sf::test::mbuf_pool()) {
    ea = make_endpoint(a, 0, 1 << 12);
    eb = make_endpoint(b, 0, 1 << 12);
    ConnParams p;
    p.mtu = v::Mtu::k256;
    connect_pair(ea, eb, p);
  }
  wire::RoceFrameSpec to_b(Opcode op, uint32_t psn, bool ack_req = false) const {
    wire::RoceFrameSpec s = host_frame(0, 1, eb.qp->qp_num(), op, psn);
    s.bth.ack_req = ack_req;
    return s;
  }
  wire::RoceFrameSpec to_a(Opcode op, uint32_t psn) const {
    wire::RoceFrameSpec s = host_frame(1, 0, ea.qp->qp_num(), op, psn);
    s.ext.aeth_syndrome = kAck;
    return s;
  }
};

void feed(NicNode& n, rte_mbuf* m) {
  ASSERT_NE(m, nullptr);
  n.receive(0, {&m, 1}, TimeNs(0));
}

uint64_t rx(const v::Qp* qp, rc::RxAction a) { return qp->counters().rx[static_cast<int>(a)]; }

// 1. Responder, WRITE: a 1024-byte WRITE (4 packets) into an MR of two
//    guarded pages; the FIRST is placed, then the MR is deregistered and its
//    pages made read-only (freed). MIDDLE, MIDDLE, LAST follow.
//    Expect: one frame out, a remote access error NAK (0x62) for the first
//    MIDDLE's PSN; the QP in ERR; the FIRST's 256 bytes in place and every
//    other byte still 0 (a write would have faulted).
TEST(RcMrLifetime, WriteMiddleAfterDeregIsRemoteAccessError) {
  Pair c;
  GuardedBuf g(2);
  v::Mr* mr = v::reg_mr(c.eb.pd, g.data(), g.bytes(), kAllAccess);
  ASSERT_NE(mr, nullptr);
  const uint32_t rkey = mr->rkey;
  feed(c.b, craft(with_reth(c.to_b(Opcode::kRcWriteFirst, 0x100), g.addr(), rkey, 1024),
                  std::vector<uint8_t>(256, 0x11)));
  for (int i = 0; i < 256; ++i) ASSERT_EQ(g.data()[i], 0x11) << i;
  ASSERT_EQ(v::dereg_mr(mr), 0);
  g.freeze();
  feed(c.b, craft(c.to_b(Opcode::kRcWriteMiddle, 0x101), std::vector<uint8_t>(256, 0x22)));
  feed(c.b, craft(c.to_b(Opcode::kRcWriteMiddle, 0x102), std::vector<uint8_t>(256, 0x33)));
  feed(c.b, craft(c.to_b(Opcode::kRcWriteLast, 0x103, true), std::vector<uint8_t>(256, 0x44)));
  const auto out = pull(c.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].opcode, static_cast<uint8_t>(Opcode::kRcAck));
  EXPECT_EQ(out[0].syndrome, kNakAcc);
  EXPECT_EQ(out[0].psn, 0x101u);
  EXPECT_EQ(c.eb.qp->state(), v::QpState::kErr);
  EXPECT_EQ(rx(c.eb.qp, rc::RxAction::kNakAccess), 1u);
  g.expect_all(256, 0, "after dereg");
}

// 2. Responder, WRITE into a ZERO_BASED MR: the same, the RETH VA an offset.
//    Also a re-registration of the same buffer (new rkey) before the
//    MIDDLE: the stale rkey of the open message no longer matches.
//    Expect: NAK 0x62 for the MIDDLE, nothing beyond the FIRST written.
TEST(RcMrLifetime, WriteMiddleAfterReregistrationIsRemoteAccessError) {
  Pair c;
  GuardedBuf g(1);
  v::Mr* mr = v::reg_mr(c.eb.pd, g.data(), g.bytes(), kAllAccess | v::kAccessZeroBased);
  ASSERT_NE(mr, nullptr);
  feed(c.b, craft(with_reth(c.to_b(Opcode::kRcWriteFirst, 0x100), 512, mr->rkey, 768),
                  std::vector<uint8_t>(256, 0x11)));
  for (int i = 512; i < 768; ++i) ASSERT_EQ(g.data()[i], 0x11) << i;
  const uint32_t old_rkey = mr->rkey;
  ASSERT_EQ(v::dereg_mr(mr), 0);
  v::Mr* again = v::reg_mr(c.eb.pd, g.data(), g.bytes(), v::kAccessLocalWrite);  // same slot, no remote rights
  ASSERT_NE(again, nullptr);
  EXPECT_NE(again->rkey, old_rkey);
  feed(c.b, craft(c.to_b(Opcode::kRcWriteMiddle, 0x101), std::vector<uint8_t>(256, 0x22)));
  feed(c.b, craft(c.to_b(Opcode::kRcWriteLast, 0x102, true), std::vector<uint8_t>(256, 0x33)));
  const auto out = pull(c.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kNakAcc);
  EXPECT_EQ(out[0].psn, 0x101u);
  EXPECT_EQ(c.eb.qp->state(), v::QpState::kErr);
  for (int i = 0; i < 512; ++i) ASSERT_EQ(g.data()[i], 0) << i;
  g.expect_all(768, 0, "after re-registration");
}

// 3. Requester, READ responses: a 768-byte READ into an MR of one guarded
//    page; the FIRST response is placed, then the MR is deregistered and the
//    page made read-only. MIDDLE and LAST responses follow.
//    Expect: the READ completes with "local protection error"
//    (IBV_WC_LOC_PROT_ERR), the QP in ERR, counted kLocProtErr; only the
//    FIRST's 256 bytes written.
TEST(RcMrLifetime, ReadResponseAfterDeregIsLocalProtectionError) {
  Pair c;
  GuardedBuf g(1);
  v::Mr* mr = v::reg_mr(c.ea.pd, g.data(), g.bytes(), v::kAccessLocalWrite);
  ASSERT_NE(mr, nullptr);
  v::Sge sge{g.addr(), 768, mr->lkey};
  v::SendWr wr;
  wr.wr_id = 7;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = v::WrOpcode::kRdmaRead;
  wr.send_flags = v::kSendSignaled;
  wr.rdma.remote_addr = c.eb.addr();
  wr.rdma.rkey = c.eb.mr->rkey;
  ASSERT_EQ(v::post_send(c.ea.qp, &wr, nullptr), 0);
  const auto req = pull(c.a);
  ASSERT_EQ(req.size(), 1u);
  ASSERT_EQ(req[0].opcode, static_cast<uint8_t>(Opcode::kRcReadRequest));
  ASSERT_EQ(req[0].psn, 0x100u);
  feed(c.a, craft(c.to_a(Opcode::kRcReadResponseFirst, 0x100), std::vector<uint8_t>(256, 0x55)));
  for (int i = 0; i < 256; ++i) ASSERT_EQ(g.data()[i], 0x55) << i;
  ASSERT_EQ(v::dereg_mr(mr), 0);
  g.freeze();
  wire::RoceFrameSpec mid = c.to_a(Opcode::kRcReadResponseMiddle, 0x101);
  feed(c.a, craft(mid, std::vector<uint8_t>(256, 0x66)));
  feed(c.a, craft(c.to_a(Opcode::kRcReadResponseLast, 0x102), std::vector<uint8_t>(256, 0x77)));
  const auto wc = drain(c.ea.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 7u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kLocProtErr);
  EXPECT_STREQ(v::to_string(wc[0].status), "local protection error");
  EXPECT_EQ(c.ea.qp->state(), v::QpState::kErr);
  EXPECT_EQ(rx(c.ea.qp, rc::RxAction::kLocProtErr), 1u);
  g.expect_all(256, 0, "after dereg");
}

// 4. Responder, SEND: a 1024-byte receive posted in an MR of one guarded
//    page; the SEND_FIRST is placed, then the MR is deregistered and the
//    page made read-only; the SEND_MIDDLE follows.
//    Expect: a remote operational error NAK (0x63) for its PSN, the receive
//    completes with "local protection error", the QP in ERR, nothing beyond
//    the FIRST written.
TEST(RcMrLifetime, SendMiddleAfterDeregIsLocalProtectionError) {
  Pair c;
  GuardedBuf g(1);
  v::Mr* mr = v::reg_mr(c.eb.pd, g.data(), g.bytes(), v::kAccessLocalWrite);
  ASSERT_NE(mr, nullptr);
  v::Sge sge{g.addr(), 1024, mr->lkey};
  v::RecvWr rw;
  rw.wr_id = 5;
  rw.sg_list = &sge;
  rw.num_sge = 1;
  ASSERT_EQ(v::post_recv(c.eb.qp, &rw, nullptr), 0);
  feed(c.b, craft(c.to_b(Opcode::kRcSendFirst, 0x100), std::vector<uint8_t>(256, 0x11)));
  for (int i = 0; i < 256; ++i) ASSERT_EQ(g.data()[i], 0x11) << i;
  ASSERT_EQ(v::dereg_mr(mr), 0);
  g.freeze();
  feed(c.b, craft(c.to_b(Opcode::kRcSendMiddle, 0x101), std::vector<uint8_t>(256, 0x22)));
  feed(c.b, craft(c.to_b(Opcode::kRcSendLast, 0x102, true), std::vector<uint8_t>(100, 0x33)));
  const auto out = pull(c.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kNakOp);
  EXPECT_EQ(out[0].psn, 0x101u);
  const auto r = drain(c.eb.rcq);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 5u);
  EXPECT_EQ(r[0].status, v::WcStatus::kLocProtErr);
  EXPECT_EQ(c.eb.qp->state(), v::QpState::kErr);
  g.expect_all(256, 0, "after dereg");
}

// 5. Responder, READ: a 768-byte READ of an MR deregistered (and unmapped)
//    after the request was accepted, before its responses left.
//    Expect: no response carries its bytes; a remote access error NAK for
//    the READ's PSN; the QP in ERR (an unmapped read would have faulted).
TEST(RcMrLifetime, ReadResponseOfDeregisteredMrIsRemoteAccessError) {
  Pair c;
  GuardedBuf g(1);
  v::Mr* mr = v::reg_mr(c.eb.pd, g.data(), g.bytes(), kAllAccess);
  ASSERT_NE(mr, nullptr);
  feed(c.b, craft(with_reth(c.to_b(Opcode::kRcReadRequest, 0x100, true), g.addr(), mr->rkey, 768), {}));
  ASSERT_EQ(v::dereg_mr(mr), 0);
  g.unmap();
  const auto out = pull(c.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].opcode, static_cast<uint8_t>(Opcode::kRcAck));
  EXPECT_EQ(out[0].syndrome, kNakAcc);
  EXPECT_EQ(out[0].psn, 0x100u);
  EXPECT_EQ(c.eb.qp->state(), v::QpState::kErr);
}

// 6. Requester, payload read: a 1024-byte SEND posted from an MR of one
//    guarded page, then the MR deregistered and the page unmapped before the
//    node transmits. Expect: no data frame leaves, the WR completes with
//    "local protection error", the QP in ERR (reading the page would have
//    faulted).
TEST(RcMrLifetime, SendPayloadOfDeregisteredMrIsLocalProtectionError) {
  Pair c;
  GuardedBuf g(1);
  v::Mr* mr = v::reg_mr(c.ea.pd, g.data(), g.bytes(), v::kAccessLocalWrite);
  ASSERT_NE(mr, nullptr);
  v::Sge sge{g.addr(), 1024, mr->lkey};
  v::SendWr wr;
  wr.wr_id = 9;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = v::WrOpcode::kSend;
  wr.send_flags = v::kSendSignaled;
  ASSERT_EQ(v::post_send(c.ea.qp, &wr, nullptr), 0);
  ASSERT_EQ(v::dereg_mr(mr), 0);
  g.unmap();
  EXPECT_TRUE(pull(c.a).empty());
  const auto wc = drain(c.ea.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 9u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kLocProtErr);
  EXPECT_EQ(c.ea.qp->state(), v::QpState::kErr);
}

}  // namespace
}  // namespace sf::nic::test
