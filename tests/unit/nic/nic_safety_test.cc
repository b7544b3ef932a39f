// Bad-input safety of the responder, with crafted frames (common/wire
// builders, correct ICRC) fed to a NicNode and its output taken from
// transmit(): remote access errors that rc_crafted_test does not cover
// (another PD's rkey, an address below the MR, a VA + length that overflows
// 64 bits, a multi-packet WRITE with a bad rkey, READ without the QP's
// REMOTE_READ right, WRITE_WITH_IMM with a bad rkey), each answered by a
// remote access error NAK with not one byte changed in the MR nor in the
// 64 KiB guards on each side of it; out-of-window PSNs (duplicates far in
// the past, PSNs far ahead of the ePSN) handled per IBA 9.7.5.1; zero-length
// RDMA without rkey checks (C9-88); length mismatches NAKed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/crafted_frames.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

using wire::Opcode;
using wire::Psn;

constexpr size_t kGuardBytes = 64 * 1024;
constexpr size_t kMrBytes = 4096;
constexpr uint8_t kGuardByte = 0xA5;

// Node `a` (host 0) is the peer whose addresses the crafted frames carry;
// node `b` (host 1) is the responder under test. `region` is 64 KiB guard +
// 4 KiB MR (`mr`, all remote rights) + 64 KiB guard, guards filled with
// kGuardByte; `mr_ro` (local write only) and `mr_wo` (no REMOTE_READ) cover
// the MR's bytes too; `other` is an MR of another PD on b's host.
struct Safety {
  NicNode a;
  NicNode b;
  Endpoint ea;
  Endpoint eb;
  std::vector<uint8_t> region;
  v::Mr* mr = nullptr;
  v::Mr* mr_ro = nullptr;
  v::Mr* mr_wo = nullptr;
  v::Pd* other_pd = nullptr;
  std::vector<uint8_t> other_buf;
  v::Mr* other = nullptr;

  explicit Safety(ConnParams p = {})
      : a(one_host_cfg(0), sf::test::mbuf_pool()),
        b(one_host_cfg(1), sf::test::mbuf_pool()),
        region(kGuardBytes + kMrBytes + kGuardBytes, kGuardByte),
        other_buf(kMrBytes, 0) {
    ea = make_endpoint(a, 0, 1 << 12);
    eb = make_endpoint(b, 0, 1 << 12);
    std::memset(region.data() + kGuardBytes, 0, kMrBytes);
    mr = v::reg_mr(eb.pd, mr_base(), kMrBytes, kAllAccess);
    mr_ro = v::reg_mr(eb.pd, mr_base(), kMrBytes, v::kAccessLocalWrite);
    mr_wo = v::reg_mr(eb.pd, mr_base(), kMrBytes, v::kAccessLocalWrite | v::kAccessRemoteWrite);
    other_pd = v::alloc_pd(eb.ctx.get());
    other = v::reg_mr(other_pd, other_buf.data(), other_buf.size(), kAllAccess);
    connect_pair(ea, eb, p);
  }
  uint8_t* mr_base() { return region.data() + kGuardBytes; }
  uint64_t va() { return reinterpret_cast<uint64_t>(mr_base()); }

  wire::RoceFrameSpec req(Opcode op, uint32_t psn, bool ack_req = true) const {
    wire::RoceFrameSpec s = host_frame(0, 1, eb.qp->qp_num(), op, psn);
    s.bth.ack_req = ack_req;
    return s;
  }
  void feed(const wire::RoceFrameSpec& s, std::span<const uint8_t> payload) {
    rte_mbuf* m = craft(s, payload);
    ASSERT_NE(m, nullptr);
    b.receive(0, {&m, 1}, TimeNs(0));
  }
  // Guards still kGuardByte, the MR still all `mr_byte`, the other PD's MR zero.
  void expect_untouched(const char* what, uint8_t mr_byte = 0) const {
    for (size_t i = 0; i < region.size(); ++i) {
      const bool in_mr = i >= kGuardBytes && i < kGuardBytes + kMrBytes;
      const uint8_t want = in_mr ? mr_byte : kGuardByte;
      ASSERT_EQ(region[i], want) << what << ": byte " << static_cast<int64_t>(i) - static_cast<int64_t>(kGuardBytes)
                                 << " relative to the MR start changed";
    }
    for (uint8_t c : other_buf) ASSERT_EQ(c, 0) << what << ": the other PD's MR changed";
  }
};

// 1. Remote access errors not covered by rc_crafted_test, each on a fresh
//    responder QP (ePSN 0x100): a WRITE_ONLY with the rkey of an MR of
//    another PD; a WRITE_ONLY starting 16 bytes below the MR; a WRITE_ONLY
//    whose VA + length wraps past 2^64 (VA = 2^64 - 16, 100 bytes); a READ
//    with the same wrapping range; a WRITE_FIRST of a 3-packet write with a
//    bad rkey followed by its MIDDLE and LAST; a READ of an MR without
//    REMOTE_READ (write-only MR); a READ on a QP whose access flags lack
//    REMOTE_READ; a WRITE_ONLY_WITH_IMM with a bad rkey (a receive posted).
//    Expect: exactly one frame out, an ACK-opcode NAK with syndrome 0x62
//    (remote access error) for PSN 0x100; the responder QP in ERR, counted as
//    kNakAccess; no receive completion other than a flush; the MR, the 64 KiB
//    guards on both sides and the other PD's MR unchanged. Then a valid WRITE
//    at the next PSN: still nothing written (the QP is in ERR).
TEST(NicSafety, RemoteAccessErrorsNakAndWriteNothing) {
  std::vector<uint8_t> pay(256);
  fill_pattern(pay, 9);
  enum class Kind { kOtherPd, kBelowMr, kWrapWrite, kWrapRead, kFirstBadRkey, kReadWoMr, kReadQpNoRight, kImmBadRkey };
  struct Case {
    const char* what;
    Kind kind;
  };
  const Case cases[] = {{"rkey of another PD's MR", Kind::kOtherPd},
                        {"VA 16 bytes below the MR", Kind::kBelowMr},
                        {"WRITE VA + length overflows 64 bits", Kind::kWrapWrite},
                        {"READ VA + length overflows 64 bits", Kind::kWrapRead},
                        {"WRITE_FIRST with a bad rkey, then MIDDLE and LAST", Kind::kFirstBadRkey},
                        {"READ of an MR without REMOTE_READ", Kind::kReadWoMr},
                        {"READ on a QP without REMOTE_READ", Kind::kReadQpNoRight},
                        {"WRITE_WITH_IMM with a bad rkey", Kind::kImmBadRkey}};
  for (const Case& k : cases) {
    ConnParams p;
    p.mtu = v::Mtu::k256;
    if (k.kind == Kind::kReadQpNoRight) p.access = v::kAccessLocalWrite | v::kAccessRemoteWrite;
    Safety s(p);
    const uint64_t wrap_va = ~uint64_t{0} - 15;
    switch (k.kind) {
      case Kind::kOtherPd:
        s.feed(with_reth(s.req(Opcode::kRcWriteOnly, 0x100), reinterpret_cast<uint64_t>(s.other_buf.data()),
                         s.other->rkey, 100),
               std::span<const uint8_t>(pay).first(100));
        break;
      case Kind::kBelowMr:
        s.feed(with_reth(s.req(Opcode::kRcWriteOnly, 0x100), s.va() - 16, s.mr->rkey, 100),
               std::span<const uint8_t>(pay).first(100));
        break;
      case Kind::kWrapWrite:
        s.feed(with_reth(s.req(Opcode::kRcWriteOnly, 0x100), wrap_va, s.mr->rkey, 100),
               std::span<const uint8_t>(pay).first(100));
        break;
      case Kind::kWrapRead:
        s.feed(with_reth(s.req(Opcode::kRcReadRequest, 0x100), wrap_va, s.mr->rkey, 100), {});
        break;
      case Kind::kFirstBadRkey:
        s.feed(with_reth(s.req(Opcode::kRcWriteFirst, 0x100, false), s.va(), s.mr->rkey ^ 0x100, 700), pay);
        s.feed(s.req(Opcode::kRcWriteMiddle, 0x101, false), pay);
        s.feed(s.req(Opcode::kRcWriteLast, 0x102), std::span<const uint8_t>(pay).first(188));
        break;
      case Kind::kReadWoMr:
        s.feed(with_reth(s.req(Opcode::kRcReadRequest, 0x100), s.va(), s.mr_wo->rkey, 64), {});
        break;
      case Kind::kReadQpNoRight:
        s.feed(with_reth(s.req(Opcode::kRcReadRequest, 0x100), s.va(), s.mr->rkey, 64), {});
        break;
      case Kind::kImmBadRkey: {
        ASSERT_EQ(post_recv(s.eb, 5, 0, 64), 0);
        auto w = with_reth(s.req(Opcode::kRcWriteOnlyImm, 0x100), s.va(), s.mr_ro->rkey, 64);
        w.ext.immdt = 0x1234;
        s.feed(w, std::span<const uint8_t>(pay).first(64));
        break;
      }
    }
    const auto out = pull(s.b);
    ASSERT_EQ(out.size(), 1u) << k.what;
    EXPECT_EQ(out[0].opcode, static_cast<uint8_t>(Opcode::kRcAck)) << k.what;
    EXPECT_EQ(out[0].syndrome, kNakAcc) << k.what;
    EXPECT_EQ(out[0].psn, 0x100u) << k.what;
    EXPECT_EQ(s.eb.qp->state(), v::QpState::kErr) << k.what;
    EXPECT_EQ(s.eb.qp->counters().rx[static_cast<int>(rc::RxAction::kNakAccess)], 1u) << k.what;
    for (const v::Wc& wc : drain(s.eb.rcq)) EXPECT_EQ(wc.status, v::WcStatus::kWrFlushErr) << k.what;
    s.expect_untouched(k.what);
    // The QP is in ERR: a valid WRITE next is not placed.
    const PortId port = 0;
    const uint64_t rx_before = s.b.counters(port).rx_pkts;
    s.feed(with_reth(s.req(Opcode::kRcWriteOnly, 0x101), s.va(), s.mr->rkey, 64),
           std::span<const uint8_t>(pay).first(64));
    EXPECT_EQ(s.b.counters(port).rx_pkts, rx_before + 1) << k.what;
    EXPECT_TRUE(pull(s.b).empty()) << k.what;
    s.expect_untouched(k.what);
  }
}

// 2. Edges that are inside the MR are accepted: a WRITE of the MR's last
//    byte, a WRITE of exactly the whole MR (MTU 4096, one packet), a READ of
//    the whole MR. Expect: ACKs and the read data; the guards unchanged (so
//    test 1's NAKs are about the range, not the rkey path in general).
TEST(NicSafety, WritesAtTheMrEdgesAreAccepted) {
  Safety s;
  std::vector<uint8_t> pay(kMrBytes);
  fill_pattern(pay, 4);
  s.feed(with_reth(s.req(Opcode::kRcWriteOnly, 0x100), s.va() + kMrBytes - 1, s.mr->rkey, 1),
         std::span<const uint8_t>(pay).first(1));
  auto out = pull(s.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kAck);
  EXPECT_EQ(s.mr_base()[kMrBytes - 1], pay[0]);
  s.feed(with_reth(s.req(Opcode::kRcWriteOnly, 0x101), s.va(), s.mr->rkey, kMrBytes), pay);
  out = pull(s.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kAck);
  EXPECT_EQ(out[0].psn, 0x101u);
  EXPECT_EQ(0, std::memcmp(s.mr_base(), pay.data(), kMrBytes));
  s.feed(with_reth(s.req(Opcode::kRcReadRequest, 0x102), s.va(), s.mr->rkey, kMrBytes), {});
  out = pull(s.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].opcode, static_cast<uint8_t>(Opcode::kRcReadResponseOnly));
  EXPECT_EQ(out[0].payload_bytes, kMrBytes);
  for (size_t i = 0; i < kGuardBytes; ++i) {
    ASSERT_EQ(s.region[i], kGuardByte) << i;
    ASSERT_EQ(s.region[kGuardBytes + kMrBytes + i], kGuardByte) << i;
  }
}

// 3. Duplicates far in the past (IBA 9.7.5.1.2: a PSN in the 2^23 window
//    behind the ePSN is a duplicate). After SEND (PSN 0x100, one receive
//    consumed) and WRITE (0x101) the ePSN is 0x102. Then: a SEND at
//    0x102 - 2^22 (far past) and a SEND at 0x102 - 2^23 (the oldest PSN that
//    is still "behind"), each with a receive posted; a WRITE at 0x102 - 2^22
//    with other bytes. Expect: each re-ACKed (ACK syndrome, no NAK), counted
//    as kDuplicate; no receive consumed (no completion, rq_posted stays 1);
//    the MR keeps the first WRITE's bytes; the ePSN stays 0x102.
TEST(NicSafety, DuplicatesFarInThePastReAckedNotExecuted) {
  Safety s;
  const std::vector<uint8_t> first(32, 0x11);
  const std::vector<uint8_t> other(32, 0x22);
  ASSERT_EQ(post_recv(s.eb, 1, 0, 64), 0);
  s.feed(s.req(Opcode::kRcSendOnly, 0x100), first);
  s.feed(with_reth(s.req(Opcode::kRcWriteOnly, 0x101), s.va(), s.mr->rkey, 32), first);
  auto out = pull(s.b);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.back().syndrome, kAck);
  EXPECT_EQ(out.back().psn, 0x101u);
  auto rwc = drain(s.eb.rcq);
  ASSERT_EQ(rwc.size(), 1u);
  EXPECT_EQ(rwc[0].wr_id, 1u);
  ASSERT_EQ(s.eb.qp->expected_psn(), Psn(0x102));
  ASSERT_EQ(post_recv(s.eb, 2, 0, 64), 0);
  const uint64_t dup_before = s.eb.qp->counters().rx[static_cast<int>(rc::RxAction::kDuplicate)];
  const uint32_t far = (0x102u - (1u << 22)) & 0xFFFFFFu;
  const uint32_t edge = (0x102u - (1u << 23)) & 0xFFFFFFu;
  for (uint32_t psn : {far, edge}) {
    s.feed(s.req(Opcode::kRcSendOnly, psn), other);
    out = pull(s.b);
    ASSERT_EQ(out.size(), 1u) << std::hex << psn;
    EXPECT_EQ(out[0].syndrome, kAck) << std::hex << psn;
  }
  s.feed(with_reth(s.req(Opcode::kRcWriteOnly, far), s.va(), s.mr->rkey, 32), other);
  out = pull(s.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kAck);
  EXPECT_EQ(s.eb.qp->counters().rx[static_cast<int>(rc::RxAction::kDuplicate)], dup_before + 3);
  EXPECT_TRUE(drain(s.eb.rcq).empty());
  EXPECT_EQ(s.eb.qp->rq_posted(), 1u);
  EXPECT_EQ(0, std::memcmp(s.mr_base(), first.data(), 32));
  EXPECT_EQ(s.eb.buf[0], 0x11);  // the receive buffer holds the first SEND
  EXPECT_EQ(s.eb.qp->expected_psn(), Psn(0x102));
  EXPECT_EQ(s.eb.qp->state(), v::QpState::kRts);
}

// 4. PSNs ahead of the ePSN (IBA 9.7.5.1.3): ePSN 0x100. A WRITE at
//    0x100 + 2^23 - 1 (the farthest PSN that is "ahead") -> one PSN sequence
//    error NAK naming 0x100; further ahead-PSN frames (0x101, 0x100 + 2^22)
//    are silently dropped; nothing written. Then the expected PSN 0x100
//    arrives: placed and ACKed; the next gap (0x103 while ePSN is 0x101) gets
//    a fresh NAK naming 0x101 (the one-NAK latch is reset by progress).
TEST(NicSafety, AheadOfEpsnNakOnceThenDropUntilProgress) {
  Safety s;
  const std::vector<uint8_t> pay(32, 0x5C);
  auto wr = [&](uint32_t psn) {
    s.feed(with_reth(s.req(Opcode::kRcWriteOnly, psn), s.va(), s.mr->rkey, 32), pay);
  };
  wr(0x100 + (1u << 23) - 1);
  auto out = pull(s.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kNakSeq);
  EXPECT_EQ(out[0].psn, 0x100u);
  wr(0x101);
  wr(0x100 + (1u << 22));
  EXPECT_TRUE(pull(s.b).empty());
  EXPECT_EQ(s.eb.qp->counters().rx[static_cast<int>(rc::RxAction::kOutOfSeqDropped)], 2u);
  s.expect_untouched("ahead-of-ePSN writes");
  wr(0x100);
  out = pull(s.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kAck);
  EXPECT_EQ(out[0].psn, 0x100u);
  EXPECT_EQ(s.mr_base()[0], 0x5C);
  wr(0x103);
  out = pull(s.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kNakSeq);
  EXPECT_EQ(out[0].psn, 0x101u);
  EXPECT_EQ(s.eb.qp->counters().rx[static_cast<int>(rc::RxAction::kNakSeqSent)], 2u);
  EXPECT_EQ(s.eb.qp->state(), v::QpState::kRts);
}

// 5. Zero-length RDMA (IBA C9-88: a zero-byte RDMA WRITE or READ need not
//    carry a valid VA or R_Key, and the responder does not check them; rxe
//    does the same): a WRITE_ONLY of 0 bytes with VA 0 and a bogus rkey, then
//    a READ of 0 bytes with the same. Expect: an ACK for the WRITE, a
//    READ_RESPONSE_ONLY without payload for the READ, the QP still RTS,
//    nothing written.
TEST(NicSafety, ZeroLengthRdmaSkipsTheRkeyCheck) {
  Safety s;
  s.feed(with_reth(s.req(Opcode::kRcWriteOnly, 0x100), 0, 0xBAD0BAD, 0), {});
  auto out = pull(s.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].opcode, static_cast<uint8_t>(Opcode::kRcAck));
  EXPECT_EQ(out[0].syndrome, kAck);
  EXPECT_EQ(out[0].psn, 0x100u);
  s.feed(with_reth(s.req(Opcode::kRcReadRequest, 0x101), 0, 0xBAD0BAD, 0), {});
  out = pull(s.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].opcode, static_cast<uint8_t>(Opcode::kRcReadResponseOnly));
  EXPECT_EQ(out[0].psn, 0x101u);
  EXPECT_EQ(out[0].payload_bytes, 0u);
  EXPECT_EQ(s.eb.qp->state(), v::QpState::kRts);
  s.expect_untouched("zero-length RDMA");
}

// 6. Length mismatches the MR bounds do not catch: a WRITE_ONLY carrying
//    fewer bytes than its RETH length (IBA 9.7.4.1.4: the payload of an ONLY
//    packet is the whole message), and a SEND larger than the posted receive
//    (64 bytes into a 32-byte receive). Expect: each an invalid request NAK
//    (0x61) for its PSN, the QP in ERR; for the SEND the receive completes in
//    error; not a byte beyond what the receive or the RETH allows is written.
TEST(NicSafety, LengthMismatchIsInvalidRequest) {
  const std::vector<uint8_t> pay(64, 0x77);
  {
    Safety s;
    s.feed(with_reth(s.req(Opcode::kRcWriteOnly, 0x100), s.va(), s.mr->rkey, 128), pay);
    const auto out = pull(s.b);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].syndrome, kNakInv);
    EXPECT_EQ(out[0].psn, 0x100u);
    EXPECT_EQ(s.eb.qp->state(), v::QpState::kErr);
    for (size_t i = kGuardBytes + 128; i < s.region.size(); ++i) {
      ASSERT_EQ(s.region[i], i < kGuardBytes + kMrBytes ? 0 : kGuardByte) << i;
    }
  }
  {
    Safety s;
    ASSERT_EQ(post_recv(s.eb, 7, 0, 32), 0);
    s.feed(s.req(Opcode::kRcSendOnly, 0x100), pay);
    const auto out = pull(s.b);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].syndrome, kNakInv);
    EXPECT_EQ(out[0].psn, 0x100u);
    EXPECT_EQ(s.eb.qp->state(), v::QpState::kErr);
    const auto wcs = drain(s.eb.rcq);
    ASSERT_FALSE(wcs.empty());
    EXPECT_EQ(wcs[0].wr_id, 7u);
    EXPECT_NE(wcs[0].status, v::WcStatus::kSuccess);
    for (size_t i = 32; i < s.eb.buf.size(); ++i) ASSERT_EQ(s.eb.buf[i], 0) << i;
  }
}

}  // namespace
}  // namespace sf::nic::test
