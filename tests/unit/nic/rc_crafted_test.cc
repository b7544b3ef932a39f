// The RC engine fed crafted frames (built with common/wire, ICRC included)
// and its output captured from NicNode::transmit: bad input is dropped and
// counted, access errors NAK without writing a byte outside a registered
// region, PSN windows, duplicates, ACK coalescing, NAK paths, exact
// retransmit timing. Time is whatever the test passes (no clock).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "common/wire/frame_builder.h"
#include "common/wire/mac_control.h"
#include "common/wire/mbuf_icrc.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/crafted_frames.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

using wire::Opcode;
using wire::Psn;

// Host 1 (node `b`, driven by hand) has a QP connected to a QP of host 0
// (node `a`, used for its addresses and as a requester driven by hand).
struct Crafted {
  NicNode a;
  NicNode b;
  Endpoint ea;
  Endpoint eb;
  std::vector<uint8_t> big;  // canaries around eb's region: eb.mr2 covers big[4096, 8192)
  v::Mr* mr2 = nullptr;
  v::Mr* mr_ro = nullptr;    // local-write only
  Crafted(ConnParams p = {})
      : a(one_host_cfg(0), sf::test::mbuf_pool()), b(one_host_cfg(1), sf::test::mbuf_pool()), big(12288, 0) {
    ea = make_endpoint(a, 0, 1 << 16);
    eb = make_endpoint(b, 0, 1 << 16);
    mr2 = v::reg_mr(eb.pd, big.data() + 4096, 4096, kAllAccess);
    mr_ro = v::reg_mr(eb.pd, eb.buf.data(), 1 << 16, v::kAccessLocalWrite);
    connect_pair(ea, eb, p);
  }
  // A request to eb's QP as ea's QP would send it.
  wire::RoceFrameSpec to_b(Opcode op, uint32_t psn, bool ack_req = true) const {
    wire::RoceFrameSpec s = host_frame(0, 1, eb.qp->qp_num(), op, psn);
    std::get<wire::Ipv4Spec>(s.l3).ecn = wire::Ecn::kEct0;
    s.bth.ack_req = ack_req;
    return s;
  }
  // A response to ea's QP as eb's QP would send it.
  wire::RoceFrameSpec to_a(Opcode op, uint32_t psn, uint8_t syndrome = kAck) const {
    wire::RoceFrameSpec s = host_frame(1, 0, ea.qp->qp_num(), op, psn);
    s.ext.aeth_syndrome = syndrome;
    return s;
  }
};

void feed(NicNode& n, rte_mbuf* m, TimeNs now = TimeNs(0)) {
  ASSERT_NE(m, nullptr);
  n.receive(0, {&m, 1}, now);
}

uint64_t drops(const NicNode& n, RxDrop d) { return n.counters(0).drops[static_cast<int>(d)]; }

// 1. Malformed input: truncated frame, bad ICRC, unknown QPN, wrong MAC,
//    wrong IP, UDP port other than 4791, headers split across segments.
//    Expect: each dropped and counted under its reason, no byte written, no
//    frame sent, the QP still RTS.
TEST(RcCrafted, MalformedFramesDroppedAndCounted) {
  Crafted c;
  const std::vector<uint8_t> pay(64, 0xAB);
  const auto w = with_reth(c.to_b(Opcode::kRcWriteOnly, 0x100), c.eb.addr(), c.eb.mr->rkey, 64);
  std::vector<uint8_t> frame(wire::roce_frame_bytes(w, 64));
  ASSERT_TRUE(wire::build_roce_frame(frame, w, pay).ok());
  feed(c.b, sf::test::make_mbuf(std::span<const uint8_t>(frame).first(30)));
  EXPECT_EQ(drops(c.b, RxDrop::kMalformed), 1u);
  std::vector<uint8_t> bad = frame;
  bad[100] ^= 0x01;  // a payload bit
  feed(c.b, sf::test::make_mbuf(bad));
  EXPECT_EQ(drops(c.b, RxDrop::kBadIcrc), 1u);
  auto q = w;
  q.bth.dest_qp = 0x777;
  feed(c.b, craft(q, pay));
  EXPECT_EQ(drops(c.b, RxDrop::kUnknownQp), 1u);
  q = w;
  q.l2.dst = host_mac(9);
  feed(c.b, craft(q, pay));
  EXPECT_EQ(drops(c.b, RxDrop::kWrongMac), 1u);
  q = w;
  std::get<wire::Ipv4Spec>(q.l3).dst = host_ip4(9);
  feed(c.b, craft(q, pay));
  EXPECT_EQ(drops(c.b, RxDrop::kWrongIp), 1u);
  std::vector<uint8_t> port = frame;
  port[14 + 20 + 3] = 0xB8;  // UDP dst 4792
  feed(c.b, sf::test::make_mbuf(port));
  EXPECT_EQ(drops(c.b, RxDrop::kNotRoce), 1u);
  feed(c.b, sf::test::make_mbuf(frame, 40));  // BTH beyond the first segment
  EXPECT_EQ(drops(c.b, RxDrop::kNotContiguous), 1u);
  EXPECT_EQ(std::vector<uint8_t>(1 << 16, 0), c.eb.buf);
  EXPECT_TRUE(pull(c.b, TimeNs(0)).empty());
  EXPECT_EQ(c.eb.qp->state(), v::QpState::kRts);
  // The same frame, valid, over a chain of 72-byte segments: placed, ACKed.
  feed(c.b, sf::test::make_mbuf(frame, 72));
  EXPECT_EQ(0, std::memcmp(c.eb.buf.data(), pay.data(), 64));
  const auto out = pull(c.b, TimeNs(0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kAck);
  EXPECT_EQ(out[0].psn, 0x100u);
}

// 2. Remote access errors, each with crafted WRITE/READ requests on a fresh
//    QP: invalid rkey, a range crossing the MR's end, an MR without REMOTE
//    WRITE, a QP without remote write rights, a READ of an MR without
//    REMOTE_READ. Expect: a NAK "remote access error" (0x62) for the PSN,
//    the responder QP in ERR, and not one byte written anywhere (canaries on
//    both sides of the registered region).
TEST(RcCrafted, RemoteAccessErrorsNeverWrite) {
  const std::vector<uint8_t> pay(100, 0xEE);
  struct Case {
    const char* what;
    int qp_access;
    bool read;
    int which;  // 0 bad rkey, 1 past MR end, 2 MR without right
  };
  const Case cases[] = {{"bad rkey", kAllAccess, false, 0},
                        {"past MR end", kAllAccess, false, 1},
                        {"MR lacks REMOTE_WRITE", kAllAccess, false, 2},
                        {"QP lacks REMOTE_WRITE", v::kAccessRemoteRead, false, 3},
                        {"READ, MR lacks REMOTE_READ", kAllAccess, true, 2},
                        {"READ past MR end", kAllAccess, true, 1}};
  for (const Case& k : cases) {
    ConnParams p;
    p.access = k.qp_access;
    Crafted c(p);
    const uint64_t base = reinterpret_cast<uint64_t>(c.big.data());
    uint64_t va = base + 4096;
    uint32_t rkey = c.mr2->rkey;
    if (k.which == 0) rkey ^= 0x5A00;
    if (k.which == 1) va = base + 8192 - 10;
    if (k.which == 2) {
      va = c.eb.addr();
      rkey = c.mr_ro->rkey;
    }
    const Opcode op = k.read ? Opcode::kRcReadRequest : Opcode::kRcWriteOnly;
    feed(c.b, craft(with_reth(c.to_b(op, 0x100), va, rkey, 100), k.read ? std::span<const uint8_t>() : pay));
    const auto out = pull(c.b, TimeNs(0));
    ASSERT_EQ(out.size(), 1u) << k.what;
    EXPECT_EQ(out[0].opcode, static_cast<uint8_t>(Opcode::kRcAck)) << k.what;
    EXPECT_EQ(out[0].syndrome, kNakAcc) << k.what;
    EXPECT_EQ(out[0].psn, 0x100u) << k.what;
    EXPECT_EQ(c.eb.qp->state(), v::QpState::kErr) << k.what;
    EXPECT_EQ(std::vector<uint8_t>(12288, 0), c.big) << k.what;
    EXPECT_EQ(std::vector<uint8_t>(1 << 16, 0), c.eb.buf) << k.what;
  }
}

// 3. A WRITE_FIRST whose RETH is valid, then a LAST carrying more than the
//    RETH length. Expect: invalid request NAK (0x61), nothing past the RETH
//    range written.
TEST(RcCrafted, WriteLongerThanRethIsInvalidRequest) {
  ConnParams p;
  p.mtu = v::Mtu::k256;
  Crafted c(p);
  const uint64_t va = reinterpret_cast<uint64_t>(c.big.data()) + 4096;
  const std::vector<uint8_t> pay(256, 0x11);
  feed(c.b, craft(with_reth(c.to_b(Opcode::kRcWriteFirst, 0x100, false), va, c.mr2->rkey, 300), pay));
  feed(c.b, craft(c.to_b(Opcode::kRcWriteLast, 0x101), pay));  // 256 > 44 left
  const auto out = pull(c.b, TimeNs(0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kNakInv);
  EXPECT_EQ(out[0].psn, 0x101u);
  for (size_t i = 4096 + 256; i < c.big.size(); ++i) ASSERT_EQ(c.big[i], 0) << i;
  // Opcode sequence: a MIDDLE with no message open is invalid too.
  Crafted d(p);
  feed(d.b, craft(d.to_b(Opcode::kRcWriteMiddle, 0x100), pay));
  const auto out2 = pull(d.b, TimeNs(0));
  ASSERT_EQ(out2.size(), 1u);
  EXPECT_EQ(out2[0].syndrome, kNakInv);
}

// 4. PSN windows at the responder (ePSN 0x100): PSN 0x105 (ahead) -> one
//    PSN-sequence NAK naming 0x100; PSN 0x106 -> silently dropped; 0x100
//    accepted and ACKed; a duplicate 0x100 with other bytes -> re-ACKed,
//    memory unchanged; PSN 0x100 + 2^23 (the far edge, "behind" by the
//    24-bit compare) -> treated as a duplicate.
TEST(RcCrafted, OutOfWindowAndDuplicatePsns) {
  Crafted c;
  const std::vector<uint8_t> one(32, 0x01);
  const std::vector<uint8_t> two(32, 0x02);
  auto wr = [&](uint32_t psn, const std::vector<uint8_t>& pay) {
    return craft(with_reth(c.to_b(Opcode::kRcWriteOnly, psn), c.eb.addr(), c.eb.mr->rkey, 32), pay);
  };
  feed(c.b, wr(0x105, one));
  auto out = pull(c.b, TimeNs(0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kNakSeq);
  EXPECT_EQ(out[0].psn, 0x100u);
  feed(c.b, wr(0x106, one));
  EXPECT_TRUE(pull(c.b, TimeNs(0)).empty());
  EXPECT_EQ(c.eb.qp->counters().rx[static_cast<int>(rc::RxAction::kOutOfSeqDropped)], 1u);
  EXPECT_EQ(c.eb.buf[0], 0);
  feed(c.b, wr(0x100, one));
  out = pull(c.b, TimeNs(0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kAck);
  EXPECT_EQ(out[0].psn, 0x100u);
  EXPECT_EQ(out[0].msn, 1u);
  feed(c.b, wr(0x100, two));
  out = pull(c.b, TimeNs(0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kAck);
  EXPECT_EQ(out[0].psn, 0x100u);
  EXPECT_EQ(c.eb.buf[0], 0x01);
  feed(c.b, wr(0x101 + (1u << 23), two));
  out = pull(c.b, TimeNs(0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kAck);
  EXPECT_EQ(c.eb.buf[0], 0x01);
  EXPECT_EQ(c.eb.qp->expected_psn(), Psn(0x101));
}

// 5. Responder PSN wrap: ePSN 0xFFFFFF, WRITE_FIRST at 0xFFFFFF and
//    WRITE_LAST at 0x000000. Expect: both placed, one ACK for PSN 0.
TEST(RcCrafted, ResponderPsnWrap) {
  ConnParams p;
  p.mtu = v::Mtu::k256;
  p.sq_psn = 0xFFFFFF;  // a's send PSN = b's expected PSN
  p.rq_psn = 0x10;
  Crafted c(p);
  std::vector<uint8_t> pay(512);
  fill_pattern(pay, 3);
  feed(c.b, craft(with_reth(c.to_b(Opcode::kRcWriteFirst, 0xFFFFFF, false), c.eb.addr(), c.eb.mr->rkey, 512),
                  std::span<const uint8_t>(pay).first(256)));
  feed(c.b, craft(c.to_b(Opcode::kRcWriteLast, 0), std::span<const uint8_t>(pay).subspan(256)));
  const auto out = pull(c.b, TimeNs(0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].psn, 0u);
  EXPECT_EQ(out[0].syndrome, kAck);
  EXPECT_EQ(0, std::memcmp(c.eb.buf.data(), pay.data(), 512));
}

// 6. ACK coalescing at the responder: FIRST, MIDDLE, MIDDLE (AckReq), LAST
//    (AckReq) arrive before the port can send. Expect: exactly one ACK, for
//    the LAST's PSN.
TEST(RcCrafted, ResponderCoalescesAcks) {
  ConnParams p;
  p.mtu = v::Mtu::k256;
  Crafted c(p);
  const std::vector<uint8_t> pay(256, 7);
  feed(c.b, craft(with_reth(c.to_b(Opcode::kRcWriteFirst, 0x100, false), c.eb.addr(), c.eb.mr->rkey, 1024), pay));
  feed(c.b, craft(c.to_b(Opcode::kRcWriteMiddle, 0x101, false), pay));
  feed(c.b, craft(c.to_b(Opcode::kRcWriteMiddle, 0x102, true), pay));
  feed(c.b, craft(c.to_b(Opcode::kRcWriteLast, 0x103, true), pay));
  const auto out = pull(c.b, TimeNs(0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].psn, 0x103u);
  EXPECT_EQ(c.eb.qp->counters().tx_acks, 1u);
}

// 7. Duplicate READ: a READ of 600 B (MTU 256: 3 responses) at PSN 0x100,
//    then the same request again. Expect: 3 responses, then the same 3
//    again with the same bytes (re-executed); ePSN stays 0x103.
TEST(RcCrafted, DuplicateReadReExecuted) {
  ConnParams p;
  p.mtu = v::Mtu::k256;
  Crafted c(p);
  fill_pattern(c.eb.buf, 11);
  const auto rd = with_reth(c.to_b(Opcode::kRcReadRequest, 0x100), c.eb.addr() + 8, c.eb.mr->rkey, 600);
  feed(c.b, craft(rd, {}));
  const auto r1 = pull(c.b, TimeNs(0));
  ASSERT_EQ(r1.size(), 3u);
  EXPECT_EQ(r1[0].opcode, static_cast<uint8_t>(Opcode::kRcReadResponseFirst));
  EXPECT_EQ(r1[1].opcode, static_cast<uint8_t>(Opcode::kRcReadResponseMiddle));
  EXPECT_EQ(r1[2].opcode, static_cast<uint8_t>(Opcode::kRcReadResponseLast));
  EXPECT_EQ(r1[2].psn, 0x102u);
  EXPECT_EQ(c.eb.qp->expected_psn(), Psn(0x103));
  feed(c.b, craft(rd, {}));
  const auto r2 = pull(c.b, TimeNs(0));
  ASSERT_EQ(r2.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r2[i].psn, r1[i].psn);
    EXPECT_EQ(r2[i].payload, r1[i].payload);
  }
  EXPECT_EQ(0, std::memcmp(r1[0].payload.data(), c.eb.buf.data() + 8, 256));
  EXPECT_EQ(c.eb.qp->expected_psn(), Psn(0x103));
  EXPECT_EQ(c.eb.qp->counters().rx[static_cast<int>(rc::RxAction::kDuplicate)], 1u);
}

// 7b. Duplicate READ with other READs queued (IBA 9.7.5.1.2: re-execute the
//     duplicate only). READ A (600 B, PSNs 0x100-0x102) and READ B (256 B,
//     0x103) arrive; A's three responses leave, B's is still queued when A
//     arrives again. Expect: A's three responses again, then B's (B kept,
//     in PSN order); a duplicate of A's tail (PSN 0x101, VA + 256, 344 B):
//     responses 0x101 (FIRST) and 0x102 (LAST) with those bytes; a duplicate
//     of A while A is still queued re-executes it in place (no extra
//     responses); a duplicate beyond the READ size cap: nothing. ePSN stays
//     0x104, the QP RTS.
TEST(RcCrafted, DuplicateReadKeepsQueuedReads) {
  ConnParams p;
  p.mtu = v::Mtu::k256;
  Crafted c(p);
  fill_pattern(c.eb.buf, 12);
  const auto a = with_reth(c.to_b(Opcode::kRcReadRequest, 0x100), c.eb.addr() + 8, c.eb.mr->rkey, 600);
  const auto b = with_reth(c.to_b(Opcode::kRcReadRequest, 0x103), c.eb.addr() + 4000, c.eb.mr->rkey, 256);
  feed(c.b, craft(a, {}));
  feed(c.b, craft(b, {}));
  for (int i = 0; i < 3; ++i) {
    rte_mbuf* m = nullptr;
    ASSERT_EQ(c.b.transmit(0, {&m, 1}, TimeNs(0)), 1u);
    rte_pktmbuf_free(m);
  }
  feed(c.b, craft(a, {}));  // A again while B waits
  auto out = pull(c.b, TimeNs(0));
  ASSERT_EQ(out.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(out[i].psn, 0x100u + i) << i;
  EXPECT_EQ(out[0].opcode, static_cast<uint8_t>(Opcode::kRcReadResponseFirst));
  EXPECT_EQ(out[2].opcode, static_cast<uint8_t>(Opcode::kRcReadResponseLast));
  EXPECT_EQ(out[3].opcode, static_cast<uint8_t>(Opcode::kRcReadResponseOnly));
  EXPECT_EQ(0, std::memcmp(out[0].payload.data(), c.eb.buf.data() + 8, 256));
  EXPECT_EQ(0, std::memcmp(out[3].payload.data(), c.eb.buf.data() + 4000, 256));
  // The tail of A only.
  feed(c.b, craft(with_reth(c.to_b(Opcode::kRcReadRequest, 0x101), c.eb.addr() + 8 + 256, c.eb.mr->rkey, 344), {}));
  out = pull(c.b, TimeNs(0));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].psn, 0x101u);
  EXPECT_EQ(out[0].opcode, static_cast<uint8_t>(Opcode::kRcReadResponseFirst));
  EXPECT_EQ(out[1].psn, 0x102u);
  EXPECT_EQ(out[1].payload_bytes, 88u);
  EXPECT_EQ(0, std::memcmp(out[0].payload.data(), c.eb.buf.data() + 8 + 256, 256));
  // A queued twice: one set of responses.
  feed(c.b, craft(a, {}));
  feed(c.b, craft(a, {}));
  EXPECT_EQ(pull(c.b, TimeNs(0)).size(), 3u);
  // Beyond the size cap of a new READ: dropped.
  feed(c.b, craft(with_reth(c.to_b(Opcode::kRcReadRequest, 0x100), c.eb.addr(), c.eb.mr->rkey,
                            rc::kMaxMessageBytes + 1), {}));
  EXPECT_TRUE(pull(c.b, TimeNs(0)).empty());
  EXPECT_EQ(c.eb.qp->expected_psn(), Psn(0x104));
  EXPECT_EQ(c.eb.qp->state(), v::QpState::kRts);
  EXPECT_EQ(c.eb.qp->counters().rx[static_cast<int>(rc::RxAction::kDuplicate)], 5u);
}

// 8. Requester: 4 WRITE_ONLY WRs (1 packet each) leave with AckReq; one
//    coalesced ACK for the 4th PSN completes all four in order.
TEST(RcCrafted, RequesterOneAckCompletesAll) {
  Crafted c;
  for (int i = 0; i < 4; ++i) ASSERT_EQ(post_write(c.ea, i, 0, 100, c.eb.addr(), c.eb.mr->rkey), 0);
  const auto req = pull(c.a, TimeNs(0));
  ASSERT_EQ(req.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(req[i].psn, 0x100u + i);
    EXPECT_TRUE(req[i].ack_req);
    EXPECT_EQ(req[i].opcode, static_cast<uint8_t>(Opcode::kRcWriteOnly));
  }
  feed(c.a, craft(c.to_a(Opcode::kRcAck, 0x103), {}));
  const auto s = drain(c.ea.scq);
  ASSERT_EQ(s.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(s[i].wr_id, static_cast<uint64_t>(i));
    EXPECT_EQ(s[i].status, v::WcStatus::kSuccess);
  }
}

// 9. Requester AckReq cadence: one 200-packet WRITE (MTU 256). Expect:
//    AckReq on packets 64 and 128 (every 64) of the 128 the window lets out,
//    RETH only on the FIRST; after an ACK for packet 127 the rest follow and
//    the LAST has AckReq.
TEST(RcCrafted, RequesterAckReqEvery64AndWindow) {
  ConnParams p;
  p.mtu = v::Mtu::k256;
  Crafted c(p);
  ASSERT_EQ(post_write(c.ea, 1, 0, 200 * 256, c.eb.addr(), c.eb.mr->rkey), 0);
  const auto req = pull(c.a, TimeNs(0));
  ASSERT_EQ(req.size(), 128u);  // max_unacked_psns
  for (size_t i = 0; i < req.size(); ++i) {
    EXPECT_EQ(req[i].ack_req, i == 63 || i == 127) << i;
    EXPECT_EQ(req[i].reth_len, i == 0 ? 200u * 256 : 0u) << i;
  }
  feed(c.a, craft(c.to_a(Opcode::kRcAck, 0x100 + 127), {}));
  const auto rest = pull(c.a, TimeNs(10));
  ASSERT_EQ(rest.size(), 72u);
  EXPECT_EQ(rest.back().opcode, static_cast<uint8_t>(Opcode::kRcWriteLast));
  EXPECT_TRUE(rest.back().ack_req);
  EXPECT_TRUE(drain(c.ea.scq).empty());
  feed(c.a, craft(c.to_a(Opcode::kRcAck, 0x100 + 199), {}));
  EXPECT_EQ(drain(c.ea.scq).size(), 1u);
}

// 10. Requester NAK paths: three WRITEs, then a NAK for the second one's PSN.
//     Invalid request -> 1st success (implied ACK), 2nd "remote invalid
//     request error", 3rd flushed, ERR; likewise remote access -> "remote
//     access error", remote operational -> "remote operation error".
TEST(RcCrafted, RequesterNakErrorsToErr) {
  const struct {
    uint8_t syndrome;
    v::WcStatus status;
  } cases[] = {{kNakInv, v::WcStatus::kRemInvReqErr},
               {kNakAcc, v::WcStatus::kRemAccessErr},
               {kNakOp, v::WcStatus::kRemOpErr}};
  for (const auto& k : cases) {
    Crafted c;
    for (int i = 0; i < 3; ++i) ASSERT_EQ(post_write(c.ea, i, 0, 100, c.eb.addr(), c.eb.mr->rkey), 0);
    ASSERT_EQ(pull(c.a, TimeNs(0)).size(), 3u);
    feed(c.a, craft(c.to_a(Opcode::kRcAck, 0x101, k.syndrome), {}));
    const auto s = drain(c.ea.scq);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].status, v::WcStatus::kSuccess);
    EXPECT_EQ(s[1].status, k.status) << v::to_string(s[1].status);
    EXPECT_EQ(s[2].status, v::WcStatus::kWrFlushErr);
    EXPECT_EQ(c.ea.qp->state(), v::QpState::kErr);
    EXPECT_TRUE(pull(c.a, TimeNs(1)).empty());
  }
}

// 11. Requester PSN-sequence NAK for the 2nd of 3 WRITEs: the 1st completes,
//     the 2nd and 3rd are sent again (go-back-N); a stale ACK (an older PSN)
//     and a ghost ACK (a PSN never sent) change nothing.
TEST(RcCrafted, RequesterNakSeqGoesBack) {
  Crafted c;
  for (int i = 0; i < 3; ++i) ASSERT_EQ(post_write(c.ea, i, 0, 100, c.eb.addr(), c.eb.mr->rkey), 0);
  ASSERT_EQ(pull(c.a, TimeNs(0)).size(), 3u);
  feed(c.a, craft(c.to_a(Opcode::kRcAck, 0x101, kNakSeq), {}), TimeNs(5));
  EXPECT_EQ(drain(c.ea.scq).size(), 1u);
  const auto again = pull(c.a, TimeNs(5));
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].psn, 0x101u);
  EXPECT_EQ(again[1].psn, 0x102u);
  EXPECT_EQ(c.ea.qp->counters().tx_retransmit_pkts, 2u);
  feed(c.a, craft(c.to_a(Opcode::kRcAck, 0x0FF), {}), TimeNs(6));
  feed(c.a, craft(c.to_a(Opcode::kRcAck, 0x200), {}), TimeNs(6));
  EXPECT_TRUE(drain(c.ea.scq).empty());
  EXPECT_EQ(c.ea.qp->counters().rx[static_cast<int>(rc::RxAction::kStaleResponse)], 1u);
  EXPECT_EQ(c.ea.qp->counters().rx[static_cast<int>(rc::RxAction::kGhostResponse)], 1u);
  EXPECT_EQ(c.ea.qp->state(), v::QpState::kRts);
  feed(c.a, craft(c.to_a(Opcode::kRcAck, 0x102), {}), TimeNs(7));
  EXPECT_EQ(drain(c.ea.scq).size(), 2u);
}

// 12. Retransmit timer exactness: timeout 3 = 4.096 us x 8 = 32.768 us,
//     retry_cnt 2. Expect: next_wakeup = send time + 32768 ns; the packet
//     goes again at exactly each expiry, then RETRY_EXC_ERR at the third.
TEST(RcCrafted, RetransmitTimerExact) {
  ConnParams p;
  p.timeout = 3;
  p.retry_cnt = 2;
  Crafted c(p);
  ASSERT_EQ(post_write(c.ea, 1, 0, 100, c.eb.addr(), c.eb.mr->rkey), 0);
  const TimeNs t0(1000);
  ASSERT_EQ(pull(c.a, t0).size(), 1u);
  const TimeNs rto(32768);
  TimeNs t = t0;
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(c.a.next_wakeup(t), t + rto);
    c.a.advance(t + rto - TimeNs(1));
    EXPECT_TRUE(pull(c.a, t + rto - TimeNs(1)).empty());
    t += rto;
    c.a.advance(t);
    const auto re = pull(c.a, t);
    ASSERT_EQ(re.size(), 1u) << i;
    EXPECT_EQ(re[0].psn, 0x100u);
  }
  EXPECT_EQ(c.a.next_wakeup(t), t + rto);
  c.a.advance(t + rto);
  EXPECT_EQ(c.ea.qp->state(), v::QpState::kErr);
  const auto s = drain(c.ea.scq);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, v::WcStatus::kRetryExcErr);
}

// 13. API misuse: a WR whose lkey is wrong is accepted by post_send (as in
//     verbs) and completes with "local protection error", moving the QP to
//     ERR; a READ into an MR without LOCAL_WRITE likewise; null objects are
//     EINVAL, never a crash.
TEST(RcCrafted, ApiMisuseIsAnErrorNotACrash) {
  Crafted c;
  v::Sge sge{c.ea.addr(), 64, c.ea.mr->lkey ^ 0x300};
  v::SendWr wr;
  wr.wr_id = 5;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = v::WrOpcode::kRdmaWrite;
  wr.rdma.remote_addr = c.eb.addr();
  wr.rdma.rkey = c.eb.mr->rkey;
  EXPECT_EQ(v::post_send(c.ea.qp, &wr, nullptr), 0);
  EXPECT_TRUE(pull(c.a, TimeNs(0)).empty());
  auto s = drain(c.ea.scq);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, v::WcStatus::kLocProtErr);
  EXPECT_STREQ(v::to_string(s[0].status), "local protection error");
  EXPECT_EQ(c.ea.qp->state(), v::QpState::kErr);
  // A local address outside the MR.
  Crafted d;
  v::Sge out_of_mr{d.ea.addr() + (1 << 16) - 8, 64, d.ea.mr->lkey};
  wr.sg_list = &out_of_mr;
  EXPECT_EQ(v::post_send(d.ea.qp, &wr, nullptr), 0);
  EXPECT_TRUE(pull(d.a, TimeNs(0)).empty());
  s = drain(d.ea.scq);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, v::WcStatus::kLocProtErr);
  EXPECT_EQ(v::post_send(nullptr, &wr, nullptr), EINVAL);
  EXPECT_EQ(v::post_recv(nullptr, nullptr, nullptr), EINVAL);
  EXPECT_EQ(v::modify_qp(nullptr, nullptr, 0), EINVAL);
  EXPECT_EQ(v::poll_cq(nullptr, 1, nullptr), -EINVAL);
  EXPECT_EQ(v::reg_mr(nullptr, nullptr, 0, 0), nullptr);
  EXPECT_EQ(v::create_cq(d.ea.ctx.get(), 0), nullptr);
  EXPECT_EQ(v::open_device(d.a, 5), nullptr);
}

// 14. The receive CQ overflows: a CQ of 1 entry, two SEND_ONLYs each
//     completing a receive. Expect: the first completion stored, the second
//     lost; the responder QP goes to ERR; poll returns the stored one, then
//     an error.
TEST(RcCrafted, ReceiveCqOverflowMovesQpToErr) {
  Crafted c;
  v::Cq* tiny = v::create_cq(c.eb.ctx.get(), 1);
  v::QpInitAttr ia;
  ia.send_cq = c.eb.scq;
  ia.recv_cq = tiny;
  ia.cap.max_send_wr = 4;
  ia.cap.max_recv_wr = 4;
  Endpoint e2;
  e2.ctx = v::open_device(c.b, 0);
  e2.qp = v::create_qp(c.eb.pd, &ia);
  ASSERT_NE(e2.qp, nullptr);
  e2.mr = c.eb.mr;
  e2.buf.resize(0);
  ASSERT_EQ(connect_qp(e2, c.ea, ConnParams{}), 0);
  for (int i = 0; i < 2; ++i) {
    v::Sge sge{c.eb.addr() + 1000 * i, 100, c.eb.mr->lkey};
    v::RecvWr rw;
    rw.wr_id = i;
    rw.sg_list = &sge;
    rw.num_sge = 1;
    ASSERT_EQ(v::post_recv(e2.qp, &rw, nullptr), 0);
  }
  const std::vector<uint8_t> pay(50, 3);
  auto snd = c.to_b(Opcode::kRcSendOnly, 0x200);
  snd.bth.dest_qp = e2.qp->qp_num();
  feed(c.b, craft(snd, pay));
  snd.bth.psn = Psn(0x201);
  feed(c.b, craft(snd, pay));
  EXPECT_EQ(e2.qp->state(), v::QpState::kErr);
  EXPECT_EQ(e2.qp->counters().cq_overruns, 1u);
  v::Wc wc[4];
  EXPECT_EQ(v::poll_cq(tiny, 4, wc), 1);
  EXPECT_EQ(v::poll_cq(tiny, 4, wc), -EOVERFLOW);
}


// 15. Notification point: CE-marked WRITEs at t = 0, 10 us and 60 us with
//     the default 50 us CNP interval. Expect: a CNP (opcode 0x81, BECN, to
//     the sender's QPN) for the first and the third only; a CNP arriving at
//     the requester is counted on its QP (the CC seam's input).
TEST(RcCrafted, CnpAtMostOncePerIntervalAndCounted) {
  Crafted c;
  const std::vector<uint8_t> pay(64, 1);
  auto ce_write = [&](uint32_t psn) {
    auto s = with_reth(c.to_b(Opcode::kRcWriteOnly, psn), c.eb.addr(), c.eb.mr->rkey, 64);
    std::get<wire::Ipv4Spec>(s.l3).ecn = wire::Ecn::kCe;
    return craft(s, pay);
  };
  int cnps = 0;
  for (const auto& [psn, t] : {std::pair{0x100u, TimeNs(0)}, std::pair{0x101u, TimeNs::from_us(10)},
                               std::pair{0x102u, TimeNs::from_us(60)}}) {
    feed(c.b, ce_write(psn), t);
    for (const SentFrame& o : pull(c.b, t)) {
      if (o.opcode != static_cast<uint8_t>(Opcode::kCnp)) continue;
      ++cnps;
      EXPECT_EQ(o.dest_qp, c.ea.qp->qp_num());
      EXPECT_NE(psn, 0x101u) << "CNP inside the interval";
    }
  }
  EXPECT_EQ(cnps, 2);
  EXPECT_EQ(c.eb.qp->counters().rx_ce, 3u);
  EXPECT_EQ(c.eb.qp->counters().tx_cnps, 2u);
  wire::RoceFrameSpec cnp = c.to_a(Opcode::kCnp, 0);
  std::vector<uint8_t> buf(128);
  const wire::BuildResult r = wire::build_cnp_frame(buf, cnp);
  ASSERT_TRUE(r.ok());
  buf.resize(r.frame_bytes);
  feed(c.a, sf::test::make_mbuf(buf));
  EXPECT_EQ(c.ea.qp->counters().rx_cnps, 1u);
}

// 16. PFC honoured per priority: the QP's priority (sl 3) is paused with
//     0xFFFF quanta (0xFFFF x 512 bit times at 100 Gb/s = 335.5 us) while
//     two WRITEs are posted. Expect: nothing leaves until the pause expires,
//     then the frames go; an XON (quanta 0) resumes at once; a PAUSE on
//     another priority does not hold the QP.
TEST(RcCrafted, PfcPausesOnlyThePausedPriority) {
  Crafted c;
  auto pfc = [&](uint8_t mask, uint16_t q, TimeNs t) {
    std::array<uint16_t, 8> quanta{};
    quanta.fill(q);
    std::vector<uint8_t> f(wire::kMacControlFrameBytes);
    ASSERT_EQ(wire::build_pfc_frame(f, host_mac(1), mask, quanta), wire::kMacControlFrameBytes);
    feed(c.a, sf::test::make_mbuf(f), t);
  };
  pfc(1u << 3, 0xFFFF, TimeNs(0));
  ASSERT_EQ(post_write(c.ea, 1, 0, 100, c.eb.addr(), c.eb.mr->rkey), 0);
  EXPECT_TRUE(pull(c.a, TimeNs(0)).empty());
  const TimeNs until = BitRate::gbps(100).tx_time(uint64_t{0xFFFF} * 64);
  EXPECT_EQ(c.a.next_wakeup(TimeNs(1)), until);
  EXPECT_TRUE(pull(c.a, until - TimeNs(1)).empty());
  EXPECT_EQ(pull(c.a, until).size(), 1u);
  // Pause again, then XON at 10 us: sends at 10 us.
  pfc(1u << 3, 0xFFFF, until);
  ASSERT_EQ(post_write(c.ea, 2, 0, 100, c.eb.addr(), c.eb.mr->rkey), 0);
  EXPECT_TRUE(pull(c.a, until + TimeNs(5)).empty());
  pfc(1u << 3, 0, until + TimeNs::from_us(10));
  EXPECT_EQ(pull(c.a, until + TimeNs::from_us(10)).size(), 1u);
  // Another priority paused: the QP (priority 3) is not held.
  pfc(1u << 5, 0xFFFF, until + TimeNs::from_us(11));
  ASSERT_EQ(post_write(c.ea, 3, 0, 100, c.eb.addr(), c.eb.mr->rkey), 0);
  EXPECT_EQ(pull(c.a, until + TimeNs::from_us(11)).size(), 1u);
  EXPECT_EQ(c.a.pfc_rx(0).counters().pause_frames[3], 3u);
}


// 17. Robustness: 30000 frames derived from valid requests and responses
//     with random bytes of the BTH / ext headers / payload changed and the
//     ICRC recomputed (so they reach the QPs), at PSNs around the expected
//     ones, fed to both the responder and the requester. Expect: no crash,
//     every byte outside the registered region untouched, every frame
//     accounted (dropped with a reason or handled by a QP).
TEST(RcCrafted, RandomisedFramesNeverWriteOutsideRegions) {
  ConnParams p;
  p.mtu = v::Mtu::k256;
  Crafted c(p);
  const uint64_t base = reinterpret_cast<uint64_t>(c.big.data());
  for (int i = 0; i < 8; ++i) ASSERT_EQ(post_recv(c.eb, i, 0, 1000), 0);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(post_write(c.ea, i, 0, 600, base + 4096, c.mr2->rkey), 0);
  (void)pull(c.a, TimeNs(0));
  // Receive SGEs of eb point into eb.buf, whose MR covers it all; the
  // region under test for remote writes is big[4096, 8192) (mr2).
  std::vector<uint8_t> pay(256);
  fill_pattern(pay, 5);
  const Opcode ops[] = {Opcode::kRcWriteFirst,     Opcode::kRcWriteMiddle,        Opcode::kRcWriteLast,
                        Opcode::kRcWriteOnly,      Opcode::kRcWriteOnlyImm,       Opcode::kRcSendFirst,
                        Opcode::kRcSendOnly,       Opcode::kRcSendLastImm,        Opcode::kRcReadRequest,
                        Opcode::kRcAck,            Opcode::kRcReadResponseFirst,  Opcode::kRcReadResponseLast,
                        Opcode::kRcReadResponseOnly, Opcode::kCnp};
  uint64_t x = 88172645463325252ull;
  auto rnd = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  uint64_t fed_b = 0;
  uint64_t fed_a = 0;
  uint64_t recoveries = 0;
  for (int i = 0; i < 30000; ++i) {
    const Opcode op = ops[rnd() % (sizeof(ops) / sizeof(ops[0]))];
    const bool to_requester = op >= Opcode::kRcReadResponseFirst && op != Opcode::kCnp ? true : (rnd() % 8) == 0;
    const uint32_t epsn = to_requester ? c.ea.qp->acked_psn().value() + 1 : c.eb.qp->expected_psn().value();
    wire::RoceFrameSpec s = to_requester ? c.to_a(op, epsn + static_cast<uint32_t>(rnd() % 7) - 2,
                                                  static_cast<uint8_t>(rnd() & 0x7F))
                                         : c.to_b(op, epsn + static_cast<uint32_t>(rnd() % 7) - 2, rnd() & 1);
    s.ext.reth_va = base + 4096 + (rnd() % 5000) - 500;
    s.ext.reth_rkey = (rnd() % 4) == 0 ? static_cast<uint32_t>(rnd()) : c.mr2->rkey;
    s.ext.reth_dma_length = static_cast<uint32_t>(rnd() % 1500);
    const auto layout = wire::opcode_layout(static_cast<uint8_t>(op));
    const size_t n = layout && layout->payload ? rnd() % 257 : 0;
    std::vector<uint8_t> frame(wire::roce_frame_bytes(s, n));
    ASSERT_TRUE(wire::build_roce_frame(frame, s, std::span<const uint8_t>(pay).first(n)).ok());
    // Scribble over the BTH and what follows, then make the ICRC right again.
    const size_t bth = 14 + 20 + 8;
    for (int k = rnd() % 4; k > 0; --k) frame[bth + rnd() % (frame.size() - bth - 4)] = static_cast<uint8_t>(rnd());
    frame[bth] = static_cast<uint8_t>(op);  // keep the opcode (its layout sized the frame)
    const wire::FrameInfo fi = wire::parse_frame(frame);
    if (fi.ok()) wire::icrc_store(frame, fi);
    NicNode& node = to_requester ? c.a : c.b;
    feed(node, sf::test::make_mbuf(frame, rnd() % 2 ? 0 : 96), TimeNs(i * 100));
    (to_requester ? fed_a : fed_b)++;
    node.advance(TimeNs(i * 100));
    (void)pull(c.a, TimeNs(i * 100));
    (void)pull(c.b, TimeNs(i * 100));
    (void)drain(c.ea.scq);
    (void)drain(c.eb.rcq);
    (void)drain(c.eb.scq);
    // A QP driven to ERR by garbage is reset and connected again, so the
    // garbage keeps meeting live state machines.
    for (auto [self, peer] : {std::pair{&c.eb, &c.ea}, std::pair{&c.ea, &c.eb}}) {
      if (self->qp->state() != v::QpState::kErr) continue;
      ++recoveries;
      v::QpAttr r;
      r.qp_state = v::QpState::kReset;
      ASSERT_EQ(v::modify_qp(self->qp, &r, v::kQpState), 0);
      ConnParams q = p;
      if (self == &c.eb) std::swap(q.sq_psn, q.rq_psn);
      ASSERT_EQ(connect_qp(*self, *peer, q), 0);
      if (self == &c.eb) {
        for (int k = 0; k < 8; ++k) ASSERT_EQ(post_recv(c.eb, k, 0, 1000), 0);
      } else {
        for (int k = 0; k < 8; ++k) ASSERT_EQ(post_write(c.ea, k, 0, 600, base + 4096, c.mr2->rkey), 0);
        (void)pull(c.a, TimeNs(i * 100));
      }
    }
  }
  for (size_t k = 0; k < c.big.size(); ++k) {
    if (k >= 4096 && k < 8192) continue;
    ASSERT_EQ(c.big[k], 0) << "byte " << k << " outside the MR was written";
  }
  uint64_t handled_b = 0;
  for (uint64_t v : c.eb.qp->counters().rx) handled_b += v;
  EXPECT_EQ(handled_b + c.b.counters(0).dropped(), fed_b);
  uint64_t handled_a = 0;
  for (uint64_t v : c.ea.qp->counters().rx) handled_a += v;
  EXPECT_EQ(handled_a + c.a.counters(0).dropped(), fed_a);
  EXPECT_GT(handled_b, 1000u);
  EXPECT_GT(recoveries, 10u);
  EXPECT_GT(c.eb.qp->counters().rx[static_cast<int>(rc::RxAction::kAccepted)] +
                c.eb.qp->counters().rx[static_cast<int>(rc::RxAction::kNakAccess)],
            0u);
  std::printf("recoveries %lu\n", recoveries);
  for (int k = 0; k < rc::kNumRxActions; ++k) {
    std::printf("%s: responder %lu requester %lu\n", rc::to_string(static_cast<rc::RxAction>(k)),
                c.eb.qp->counters().rx[k], c.ea.qp->counters().rx[k]);
  }
}


// 18. Lost READ responses detected by later traffic: a 2-packet READ then a
//     WRITE. (a) A PSN-sequence NAK naming the WRITE (the responder executed
//     the READ, its responses were lost): the READ request goes again first,
//     then the WRITE. (b) A response of a later READ while the first misses
//     data: the first READ is asked again.
TEST(RcCrafted, LostReadResponsesAskedAgain) {
  ConnParams p;
  p.mtu = v::Mtu::k256;
  {
    Crafted c(p);
    ASSERT_EQ(post_write(c.ea, 1, 0, 512, c.eb.addr(), c.eb.mr->rkey, v::WrOpcode::kRdmaRead), 0);
    ASSERT_EQ(post_write(c.ea, 2, 1024, 100, c.eb.addr(), c.eb.mr->rkey), 0);
    const auto first = pull(c.a, TimeNs(0));
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[1].psn, 0x102u);
    feed(c.a, craft(c.to_a(Opcode::kRcAck, 0x102, kNakSeq), {}), TimeNs(10));
    const auto again = pull(c.a, TimeNs(10));
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again[0].opcode, static_cast<uint8_t>(Opcode::kRcReadRequest));
    EXPECT_EQ(again[0].psn, 0x100u);
    EXPECT_EQ(again[1].psn, 0x102u);
    EXPECT_TRUE(drain(c.ea.scq).empty());
  }
  {
    Crafted c(p);
    ASSERT_EQ(post_write(c.ea, 1, 0, 512, c.eb.addr(), c.eb.mr->rkey, v::WrOpcode::kRdmaRead), 0);
    ASSERT_EQ(post_write(c.ea, 2, 1024, 256, c.eb.addr(), c.eb.mr->rkey, v::WrOpcode::kRdmaRead), 0);
    ASSERT_EQ(pull(c.a, TimeNs(0)).size(), 2u);
    const std::vector<uint8_t> pay(256, 9);
    feed(c.a, craft(c.to_a(Opcode::kRcReadResponseOnly, 0x102), pay), TimeNs(10));
    const auto again = pull(c.a, TimeNs(10));
    ASSERT_GE(again.size(), 1u);
    EXPECT_EQ(again[0].opcode, static_cast<uint8_t>(Opcode::kRcReadRequest));
    EXPECT_EQ(again[0].psn, 0x100u);
    EXPECT_EQ(again[0].reth_len, 512u);
    // Now the responses come: both READs complete, in order.
    feed(c.a, craft(c.to_a(Opcode::kRcReadResponseFirst, 0x100), pay), TimeNs(20));
    feed(c.a, craft(c.to_a(Opcode::kRcReadResponseLast, 0x101), pay), TimeNs(20));
    feed(c.a, craft(c.to_a(Opcode::kRcReadResponseOnly, 0x102), pay), TimeNs(20));
    const auto s = drain(c.ea.scq);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].wr_id, 1u);
    EXPECT_EQ(s[1].wr_id, 2u);
    EXPECT_EQ(s[1].status, v::WcStatus::kSuccess);
  }
}


// 19. IBV_SEND_FENCE: a READ, then a fenced WRITE. Expect: only the READ
//     request leaves; once its response arrives, the WRITE follows. Without
//     the fence both leave at once.
TEST(RcCrafted, FencedWriteWaitsForEarlierRead) {
  Crafted c;
  ASSERT_EQ(post_write(c.ea, 1, 0, 100, c.eb.addr(), c.eb.mr->rkey, v::WrOpcode::kRdmaRead), 0);
  ASSERT_EQ(post_write(c.ea, 2, 200, 100, c.eb.addr(), c.eb.mr->rkey, v::WrOpcode::kRdmaWrite, 0,
                       v::kSendSignaled | v::kSendFence), 0);
  auto out = pull(c.a, TimeNs(0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].opcode, static_cast<uint8_t>(Opcode::kRcReadRequest));
  feed(c.a, craft(c.to_a(Opcode::kRcReadResponseOnly, 0x100), std::vector<uint8_t>(100, 4)), TimeNs(5));
  out = pull(c.a, TimeNs(5));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].opcode, static_cast<uint8_t>(Opcode::kRcWriteOnly));
  EXPECT_EQ(out[0].psn, 0x101u);
  Crafted d;
  ASSERT_EQ(post_write(d.ea, 1, 0, 100, d.eb.addr(), d.eb.mr->rkey, v::WrOpcode::kRdmaRead), 0);
  ASSERT_EQ(post_write(d.ea, 2, 200, 100, d.eb.addr(), d.eb.mr->rkey), 0);
  EXPECT_EQ(pull(d.a, TimeNs(0)).size(), 2u);
}


// 20. Remote operational error: the posted receive's SGE has a bad lkey.
//     A SEND_ONLY arrives. Expect: NAK "remote operational error" (0x63),
//     the receive completes with "local protection error", the responder
//     QP in ERR, nothing written.
TEST(RcCrafted, ReceiveWithBadLkeyIsRemoteOperationalError) {
  Crafted c;
  v::Sge sge{c.eb.addr(), 100, c.eb.mr->lkey ^ 0x700};
  v::RecvWr rw;
  rw.wr_id = 9;
  rw.sg_list = &sge;
  rw.num_sge = 1;
  ASSERT_EQ(v::post_recv(c.eb.qp, &rw, nullptr), 0);  // verbs does not check keys at post time
  feed(c.b, craft(c.to_b(Opcode::kRcSendOnly, 0x100), std::vector<uint8_t>(50, 7)));
  const auto out = pull(c.b, TimeNs(0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kNakOp);
  const auto r = drain(c.eb.rcq);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 9u);
  EXPECT_EQ(r[0].status, v::WcStatus::kLocProtErr);
  EXPECT_EQ(c.eb.qp->state(), v::QpState::kErr);
  EXPECT_EQ(std::vector<uint8_t>(1 << 16, 0), c.eb.buf);
}

// 21. A SEND longer than the posted receive: NAK invalid request, the
//     receive completes with "local length error", nothing past the
//     buffer's end written.
TEST(RcCrafted, SendLongerThanReceiveIsLengthError) {
  Crafted c;
  ASSERT_EQ(post_recv(c.eb, 3, 1000, 40), 0);
  feed(c.b, craft(c.to_b(Opcode::kRcSendOnly, 0x100), std::vector<uint8_t>(64, 7)));
  const auto out = pull(c.b, TimeNs(0));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kNakInv);
  const auto r = drain(c.eb.rcq);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, v::WcStatus::kLocLenErr);
  EXPECT_STREQ(v::to_string(r[0].status), "local length error");
  for (size_t i = 1040; i < c.eb.buf.size(); ++i) ASSERT_EQ(c.eb.buf[i], 0) << i;
}

}  // namespace
}  // namespace sf::nic::test
