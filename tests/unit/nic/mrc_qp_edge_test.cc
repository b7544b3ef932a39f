// MRC edge cases the other MRC tests leave open (issue 15 §5): placement of
// a small message pair under every order of its packets combined with every
// single loss and every single duplicate (byte-exact memory, nothing else
// touched, immediates in message order, exactly the lost PSN resent); the
// SACK / NACK codec across the 2^24 PSN wrap from the responder's tracker
// through real frames into the requester's scoreboard, and trim NACKs at the
// wrap through the QP; the MR checked on every packet of a WRITE (the
// responder's MR deregistered or re-registered mid-message: nothing written
// into it afterwards, REM_ACCESS_ERR; the requester's source MR deregistered
// mid-message: LOC_PROT_ERR, no packet read from it afterwards); every kind
// of bad MRC frame dropped and counted under exactly one reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "common/rng.h"
#include "common/wire/mrc_builder.h"
#include "nic/mrc/sack_tracker.h"
#include "tests/unit/nic/mrc_qp_harness.h"

namespace sf::nic::test {
namespace {

using wire::MrcOp;
using wire::Psn;

constexpr uint8_t kUntouched = 0xEE;
constexpr uint8_t kFreed = 0x5F;

uint64_t rx(const Endpoint& e, mrc::MrcRx r) { return mctr(e).rx[static_cast<int>(r)]; }

// ------------------------------------------------------------ placement

// Two WRITE_WITH_IMMs of 2 packets each (MTU 1024): their 4 first
// transmissions held and released in every one of the 24 orders, combined
// with no loss or the loss of any one packet (5) and no duplicate or a
// duplicate of any one packet (5): 600 runs. Each: the memory is exact, the
// bytes around untouched, the immediates complete once each in message order
// with their lengths, the requester completes both in order, and exactly the
// lost PSN (if any) is retransmitted, once.
TEST(MrcQpEdge, PlacementEveryOrderWithLossesAndDuplicates) {
  ConnParams cp;
  cp.mtu = v::Mtu::k1024;
  std::vector<size_t> order = {0, 1, 2, 3};
  int runs = 0;
  do {
    for (int lost = -1; lost < 4; ++lost) {
      for (int dup = -1; dup < 4; ++dup) {
        SCOPED_TRACE(::testing::Message() << "order " << order[0] << order[1] << order[2] << order[3] << " lost "
                                          << lost << " dup " << dup);
        MrcRig rig;
        Endpoint x = make_mrc_endpoint(rig.a, 8192);
        Endpoint y = make_mrc_endpoint(rig.b, 8192);
        fill_pattern(x.buf, static_cast<uint32_t>(runs));
        std::fill(y.buf.begin(), y.buf.end(), kUntouched);
        connect_mrc(x, y, nullptr, 0, cp);
        rig.filter = [](const LinkPkt& k) { return k.data && !k.rtx ? Fate::kHold : Fate::kDeliver; };
        ASSERT_EQ(post_recv(y, 100, 0, 0), 0);
        ASSERT_EQ(post_recv(y, 101, 0, 0), 0);
        // A: 2000 B at 1000, B: 1500 B at 5000 (2 packets each).
        ASSERT_EQ(post_write(x, 1, 0, 2000, y.addr() + 1000, y.mr->rkey, v::WrOpcode::kRdmaWriteWithImm, 0xA), 0);
        ASSERT_EQ(post_write(x, 2, 4096, 1500, y.addr() + 5000, y.mr->rkey, v::WrOpcode::kRdmaWriteWithImm, 0xB), 0);
        rig.run_until([&] { return rig.held.size() == 4; }, TimeNs::from_us(100));
        ASSERT_EQ(rig.held.size(), 4u);
        const uint32_t lost_psn = lost >= 0 ? rig.held[static_cast<size_t>(lost)].first.psn : 0;
        std::vector<size_t> rel;
        for (size_t i : order) {
          if (static_cast<int>(i) != lost) rel.push_back(i);
        }
        if (dup >= 0 && dup != lost) rel.push_back(static_cast<size_t>(dup));  // a late network copy
        rig.release(rel);
        const auto wc = wait_send(rig, x, 2);
        ASSERT_EQ(wc.size(), 2u);
        EXPECT_EQ(wc[0].wr_id, 1u);
        EXPECT_EQ(wc[1].wr_id, 2u);
        EXPECT_EQ(wc[0].status, v::WcStatus::kSuccess);
        EXPECT_EQ(wc[1].status, v::WcStatus::kSuccess);
        rig.run_for(TimeNs::from_us(20));
        const auto rc = drain(y.rcq);
        ASSERT_EQ(rc.size(), 2u);
        EXPECT_EQ(rc[0].imm_data, 0xAu);
        EXPECT_EQ(rc[0].byte_len, 2000u);
        EXPECT_EQ(rc[0].wr_id, 100u);
        EXPECT_EQ(rc[1].imm_data, 0xBu);
        EXPECT_EQ(rc[1].byte_len, 1500u);
        EXPECT_EQ(rc[1].wr_id, 101u);
        for (size_t i = 0; i < y.buf.size(); ++i) {
          uint8_t want = kUntouched;
          if (i >= 1000 && i < 3000) want = x.buf[i - 1000];
          if (i >= 5000 && i < 6500) want = x.buf[4096 + i - 5000];
          ASSERT_EQ(y.buf[i], want) << "byte " << i;
        }
        std::vector<uint32_t> rtx;
        for (const LinkPkt& k : rig.log) {
          if (k.data && k.rtx) rtx.push_back(k.psn);
        }
        if (lost >= 0) {
          EXPECT_EQ(rtx, std::vector<uint32_t>{lost_psn});
        } else {
          EXPECT_TRUE(rtx.empty());
        }
        EXPECT_EQ(rx(y, mrc::MrcRx::kPlaced), 4u);
        EXPECT_EQ(rx(y, mrc::MrcRx::kDuplicate), dup >= 0 && dup != lost ? 1u : 0u);
        ++runs;
      }
    }
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(runs, 600);
}

// ------------------------------------------------------------ SACK / NACK across the PSN wrap

// A frame from its spec (ICRC included), parsed back.
std::vector<uint8_t> build(const wire::MrcFrameSpec& s) {
  std::vector<uint8_t> f(512);
  const wire::BuildResult r = wire::build_mrc_frame(f, s, {});
  EXPECT_TRUE(r.ok());
  f.resize(r.frame_bytes);
  return f;
}

// The responder's SackTracker, encoded into SACK frames by the builder and
// decoded by the parser into the requester's SackScoreboard, with the first
// PSN at every offset of a window around 2^24 - 1 and random losses: every
// PSN the scoreboard says acknowledged was received, every PSN it reports
// missing was not, and after retransmitting exactly those everything is
// acknowledged.
TEST(MrcQpEdge, SackCodecAcrossPsnWrap) {
  Rng rng(77);
  for (uint32_t i = 0; i < 19; ++i) {
    const uint32_t start = (0xFFFFC0 + 7 * i) & Psn::kMask;  // 0xFFFFC0 .. 0x3E
    mrc::SackTracker rcv{Psn(start)};
    mrc::SackScoreboard snd{Psn(start), 128};
    std::set<uint32_t> got;
    std::array<Psn, 64> miss{};
    uint32_t sent = 0, rtx = 0;
    std::vector<Psn> wire_q;
    for (int round = 0; round < 400 && (sent < 150 || snd.in_flight() > 0); ++round) {
      while (sent < 150 && snd.can_send() && Psn::diff(snd.next(), snd.una()) < 64 && wire_q.size() < 8) {
        wire_q.push_back(snd.on_send());
        ++sent;
      }
      if (wire_q.empty()) {
        for (uint32_t i = 0; i < snd.in_flight(); ++i) {
          if (!snd.acked(snd.una() + i)) wire_q.push_back(snd.una() + i);
        }
      }
      Psn trigger = rcv.cack();
      for (const Psn p : wire_q) {
        if (rng.next_u64() % 5 == 0) continue;  // lost
        if (rcv.on_packet(p) == mrc::PsnVerdict::kNew) got.insert(p.value());
        trigger = p;
      }
      wire_q.clear();
      const mrc::SackFields f = rcv.sack(trigger);
      wire::MrcFrameSpec s;
      s.op = MrcOp::kSack;
      s.bth.psn = f.cack;
      s.sack.sack_offset = f.sack_offset;
      s.sack.ack_psn_offset = f.ack_psn_offset;
      s.sack.mpr = f.mpr;
      s.sack.bitmap = f.bitmap;
      const std::vector<uint8_t> frame = build(s);
      const wire::FrameInfo fi = wire::parse_frame(frame);
      ASSERT_TRUE(fi.ok());
      ASSERT_EQ(fi.mrc.op, MrcOp::kSack);
      const wire::Seth& h = *fi.mrc.seth;
      EXPECT_EQ(fi.bth->get_psn(), f.cack);
      EXPECT_EQ(fi.bth->get_psn() + static_cast<uint32_t>(static_cast<int32_t>(h.ack_offset())), trigger);
      const mrc::SackResult r = snd.on_sack(fi.bth->get_psn(), h.base_offset(), h.bitmap.value(), miss, [&](Psn p) {
        EXPECT_TRUE(got.count(p.value()) == 1) << "acknowledged PSN " << p.value() << " was never received";
      });
      ASSERT_NE(r.verdict, mrc::SackVerdict::kInvalid);
      for (uint16_t i = 0; i < r.missing; ++i) {
        EXPECT_EQ(got.count(miss[i].value()), 0u) << "PSN " << miss[i].value() << " reported missing but received";
        wire_q.push_back(miss[i]);
        ++rtx;
      }
    }
    EXPECT_EQ(snd.in_flight(), 0u) << "start " << start;
    EXPECT_EQ(got.size(), 150u) << "start " << start;
    EXPECT_EQ(rcv.cack(), Psn(start + 149)) << "start " << start;
  }
}

// NETH nack_psn and the BTH CACK of a NACK across the wrap, field by field.
TEST(MrcQpEdge, NackCodecAcrossPsnWrap) {
  for (uint32_t psn : {0xFFFFFDu, 0xFFFFFEu, 0xFFFFFFu, 0u, 1u, 2u}) {
    for (wire::MrcNackReason reason : {wire::MrcNackReason::kTrimmed, wire::MrcNackReason::kTrimmedLastHop,
                                       wire::MrcNackReason::kPsnOutOfWindow, wire::MrcNackReason::kAccessError}) {
      wire::MrcFrameSpec s;
      s.op = MrcOp::kNack;
      s.bth.psn = Psn(psn) + 0xFFFFFFu;  // CACK = nack_psn - 1, wrapping
      s.nack.reason = reason;
      s.nack.nack_psn = Psn(psn);
      s.nack.ev = 0xABCD0000u | psn;
      s.nack.rtx = true;
      const std::vector<uint8_t> f = build(s);
      const wire::FrameInfo fi = wire::parse_frame(f);
      ASSERT_TRUE(fi.ok());
      ASSERT_NE(fi.mrc.neth, nullptr);
      EXPECT_EQ(fi.mrc.neth->get_nack_psn(), Psn(psn));
      EXPECT_EQ(fi.bth->get_psn(), Psn((psn + 0xFFFFFF) & 0xFFFFFF));
      EXPECT_EQ(fi.mrc.neth->get_reason(), reason);
      EXPECT_EQ(fi.mrc.neth->ev.value(), 0xABCD0000u | psn);
      EXPECT_TRUE(fi.mrc.neth->rtx());
      EXPECT_EQ(wire::mrc_nack_fatal(reason), reason == wire::MrcNackReason::kAccessError);
    }
  }
}

// Through the QP: the data packets with PSNs 0xFFFFFF and 0 trimmed; each
// is NACKed TRIMMED with its own PSN and retransmitted exactly once.
TEST(MrcQpEdge, TrimNackAcrossPsnWrap) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 16);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 16);
  fill_pattern(x.buf, 5);
  ConnParams p;
  p.sq_psn = 0xFFFFFC;
  p.rq_psn = 0x10;
  connect_mrc(x, y, nullptr, 0, p);
  rig.filter = [](const LinkPkt& k) {
    return k.data && !k.rtx && (k.psn == 0xFFFFFF || k.psn == 0) ? Fate::kTrim : Fate::kDeliver;
  };
  ASSERT_EQ(post_write(x, 1, 0, 1 << 15, y.addr(), y.mr->rkey), 0);  // 8 packets: FFFFFC .. 3
  const auto wc = wait_send(rig, x, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kSuccess);
  EXPECT_TRUE(std::equal(x.buf.begin(), x.buf.begin() + (1 << 15), y.buf.begin()));
  std::multiset<uint32_t> nacked, rtx;
  for (const LinkPkt& k : rig.log) {
    if (k.op == MrcOp::kNack) {
      EXPECT_EQ(k.nack, wire::MrcNackReason::kTrimmed);
      nacked.insert(k.nack_psn);
    }
    if (k.data && k.rtx) rtx.insert(k.psn);
  }
  EXPECT_EQ(nacked, (std::multiset<uint32_t>{0xFFFFFF, 0}));
  EXPECT_EQ(rtx, (std::multiset<uint32_t>{0xFFFFFF, 0}));
  EXPECT_EQ(rx(y, mrc::MrcRx::kTrimmed), 2u);
  EXPECT_EQ(mctr(x).rtx_nack, 2u);
  EXPECT_EQ(y.qp->mrc()->sack_tracker()->cack(), Psn(3));
}

// ------------------------------------------------------------ MR bounds per packet

// An 8-packet WRITE (MTU 1024) whose first 3 packets are placed; then the
// responder's MR is deregistered (variant 0) or deregistered and registered
// again over the same bytes with new keys (variant 1) and its bytes marked;
// the other 5 packets (old R_Key) arrive: none is written, the responder
// NACKs ACCESS_ERROR and goes to ERR, the requester's WQE completes
// REM_ACCESS_ERR; the first 3 packets' bytes were placed before.
TEST(MrcQpEdge, ResponderMrDeregisteredMidMessage) {
  for (int variant = 0; variant < 2; ++variant) {
    SCOPED_TRACE(variant);
    MrcRig rig;
    Endpoint x = make_mrc_endpoint(rig.a, 8192);
    Endpoint y = make_mrc_endpoint(rig.b, 8192);
    fill_pattern(x.buf, 31);
    ConnParams cp;
    cp.mtu = v::Mtu::k1024;
    connect_mrc(x, y, nullptr, 0, cp);
    rig.filter = [](const LinkPkt& k) { return k.data && !k.rtx ? Fate::kHold : Fate::kDeliver; };
    ASSERT_EQ(post_write(x, 9, 0, 8192, y.addr(), y.mr->rkey), 0);
    rig.run_until([&] { return rig.held.size() == 8; }, TimeNs::from_us(100));
    ASSERT_EQ(rig.held.size(), 8u);
    auto held = rig.held;
    rig.held.assign(held.begin(), held.begin() + 3);
    rig.release({0, 1, 2});
    rig.run_for(TimeNs::from_us(3));
    EXPECT_EQ(rx(y, mrc::MrcRx::kPlaced), 3u);
    EXPECT_TRUE(std::equal(x.buf.begin(), x.buf.begin() + 3072, y.buf.begin()));
    ASSERT_EQ(v::dereg_mr(y.mr), 0);
    y.mr = nullptr;
    std::fill(y.buf.begin(), y.buf.end(), kFreed);
    if (variant == 1) {
      y.mr = v::reg_mr(y.pd, y.buf.data(), y.buf.size(), kAllAccess);
      ASSERT_NE(y.mr, nullptr);
    }
    rig.held.assign(held.begin() + 3, held.end());
    rig.release({0, 1, 2, 3, 4});
    const auto wc = wait_send(rig, x, 1);
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].status, v::WcStatus::kRemAccessErr);
    EXPECT_EQ(x.qp->state(), v::QpState::kErr);
    EXPECT_EQ(y.qp->state(), v::QpState::kErr);
    EXPECT_EQ(rx(y, mrc::MrcRx::kPlaced), 3u);
    EXPECT_GE(rx(y, mrc::MrcRx::kAccessError), 1u);
    EXPECT_TRUE(std::all_of(y.buf.begin(), y.buf.end(), [](uint8_t c) { return c == kFreed; }))
        << "a packet was written into a deregistered MR";
    bool nack = false;
    for (const LinkPkt& k : rig.log) nack = nack || (k.op == MrcOp::kNack && k.nack == wire::MrcNackReason::kAccessError);
    EXPECT_TRUE(nack);
  }
}

// The requester's source MR deregistered after 3 of 8 packets left: the next
// packet's gather fails its lkey check (checked per packet), the WQE
// completes LOC_PROT_ERR, the QP goes to ERR and no further data packet is
// sent.
TEST(MrcQpEdge, RequesterMrDeregisteredMidMessage) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 8192);
  Endpoint y = make_mrc_endpoint(rig.b, 8192);
  fill_pattern(x.buf, 3);
  ConnParams cp;
  cp.mtu = v::Mtu::k1024;
  connect_mrc(x, y, nullptr, 0, cp);
  ASSERT_EQ(post_write(x, 4, 0, 8192, y.addr(), y.mr->rkey), 0);
  size_t data = 0;
  rig.filter = [&](const LinkPkt& k) {
    if (k.data) ++data;
    return Fate::kDeliver;
  };
  rig.run_until([&] { return data == 3; }, TimeNs::from_us(100));
  ASSERT_EQ(data, 3u);
  ASSERT_EQ(v::dereg_mr(x.mr), 0);
  x.mr = nullptr;
  const auto wc = wait_send(rig, x, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kLocProtErr);
  EXPECT_EQ(x.qp->state(), v::QpState::kErr);
  rig.run_for(TimeNs::from_us(5));  // what was on the wire lands
  EXPECT_EQ(data, 3u) << "a packet was gathered from a deregistered MR";
  EXPECT_EQ(rx(y, mrc::MrcRx::kPlaced), 3u);
}

// ------------------------------------------------------------ bad frames

// Every reason counter a received frame can move on the rig's node b.
uint64_t reasons(NicNode& n, std::initializer_list<const Endpoint*> eps) {
  uint64_t s = n.counters(0).dropped();
  for (const Endpoint* e : eps) {
    for (uint64_t k : e->qp->counters().rx) s += k;
    s += mctr(*e).rx[static_cast<int>(mrc::MrcRx::kPortStatus)] +
         mctr(*e).rx[static_cast<int>(mrc::MrcRx::kPortStatusAnswered)] +
         mctr(*e).rx[static_cast<int>(mrc::MrcRx::kEvProbe)] +
         mctr(*e).rx[static_cast<int>(mrc::MrcRx::kEvProbeAnswered)];
  }
  return s;
}

// Each bad MRC frame (crafted towards node b's MRC QP y, or its idle MRC QP
// z in RESET) is dropped and counted under exactly one reason, the one
// expected, and moves no other reason counter; a NACK or SACK answers where
// the protocol says so; the QP stays RTS for every non-fatal case.
TEST(MrcQpEdge, BadFramesCountedWithReason) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 8192);
  Endpoint y = make_mrc_endpoint(rig.b, 8192);
  Endpoint z = make_mrc_endpoint(rig.b, 4096);  // a responder only: RTR towards x
  ConnParams p;
  connect_mrc(x, y, nullptr, 0, p);
  {
    v::QpAttr a;
    a.qp_state = v::QpState::kInit;
    a.port_num = 1;
    a.qp_access_flags = kAllAccess;
    ASSERT_EQ(v::modify_qp(z.qp, &a, v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags), 0);
    const rc::LocalAddr& pl = rig.a.host(0).local();
    v::QpAttr r;
    r.qp_state = v::QpState::kRtr;
    r.path_mtu = v::Mtu::k4096;
    r.dest_qp_num = x.qp->qp_num();
    r.rq_psn = p.sq_psn;
    r.max_dest_rd_atomic = 1;
    r.min_rnr_timer = 1;
    r.ah_attr.is_global = 1;
    r.ah_attr.port_num = 1;
    r.ah_attr.grh.dgid = v::gid_from_ipv4(pl.ipv4);
    for (int i = 0; i < 6; ++i) r.ah_attr.dmac[i] = pl.mac.bytes[i];
    ASSERT_EQ(v::modify_qp(z.qp, &r,
                           v::kQpState | v::kQpAv | v::kQpPathMtu | v::kQpDestQpn | v::kQpRqPsn |
                               v::kQpMaxDestRdAtomic | v::kQpMinRnrTimer),
              0)
        << z.qp->mrc_error();
  }
  // One clean WRITE first: y's CACK = sq_psn, its message window at msn 1.
  ASSERT_EQ(post_write(x, 1, 0, 100, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  const rc::LocalAddr& la = rig.a.host(0).local();
  const rc::LocalAddr& lb = rig.b.host(0).local();
  auto spec = [&](MrcOp op) {
    wire::MrcFrameSpec s;
    s.l2.src = la.mac;
    s.l2.dst = lb.mac;
    wire::Ipv4Spec ip;
    ip.src = la.ipv4;
    ip.dst = lb.ipv4;
    s.l3 = ip;
    s.op = op;
    s.bth.dest_qp = y.qp->qp_num();
    s.bth.psn = Psn(p.sq_psn + 1);
    s.meth.msn = 1;
    s.reth_va = y.addr() + 4096;
    s.reth_rkey = y.mr->rkey;
    s.reth_dma_length = 64;
    return s;
  };
  struct Case {
    const char* name;
    std::function<void(wire::MrcFrameSpec&)> edit;
    bool rx_drop;           // a node drop (else a QP reason)
    RxDrop drop = RxDrop::kMalformed;
    mrc::MrcRx reason = mrc::MrcRx::kPlaced;
    const Endpoint* at = nullptr;
    std::function<void(std::vector<uint8_t>&)> mangle = nullptr;
  };
  std::vector<Case> cases = {
      {"duplicate PSN", [&](wire::MrcFrameSpec& s) { s.bth.psn = Psn(p.sq_psn); }, false, {}, mrc::MrcRx::kDuplicate, &y},
      {"PSN beyond CACK + mpr", [&](wire::MrcFrameSpec& s) { s.bth.psn = Psn(p.sq_psn + 100); }, false, {},
       mrc::MrcRx::kOutOfWindow, &y},
      {"msn beyond the message window", [&](wire::MrcFrameSpec& s) { s.meth.msn = 1000; }, false, {},
       mrc::MrcRx::kMsgWindow, &y},
      {"trimmed", [&](wire::MrcFrameSpec&) {}, false, {}, mrc::MrcRx::kTrimmed, &y,
       [](std::vector<uint8_t>& f) {
         const wire::FrameInfo fi = wire::parse_frame(f);
         const wire::TrimResult r = wire::trim_frame(f, fi, 0, 46);
         ASSERT_TRUE(r.ok());
         f.resize(r.frame_bytes);
       }},
      {"source not the peer", [&](wire::MrcFrameSpec& s) { std::get<wire::Ipv4Spec>(s.l3).src.bytes[3] ^= 0x40; },
       false, {}, mrc::MrcRx::kBadSrc, &y},
      {"P_Key", [&](wire::MrcFrameSpec& s) { s.bth.pkey = 0x1234; }, false, {}, mrc::MrcRx::kBadPkey, &y},
      {"ACK op on an MRC QP", [&](wire::MrcFrameSpec& s) { s.op = MrcOp::kAck; }, false, {}, mrc::MrcRx::kUnexpectedOp,
       &y},
      {"NACK for a PSN never sent",
       [&](wire::MrcFrameSpec& s) {
         s.op = MrcOp::kNack;
         s.nack.nack_psn = Psn(p.rq_psn + 50);
       },
       false, {}, mrc::MrcRx::kNackStale, &y},
      {"SACK to a responder-only QP (RTR)",
       [&](wire::MrcFrameSpec& s) {
         s.op = MrcOp::kSack;
         s.bth.dest_qp = z.qp->qp_num();
       },
       false, {}, mrc::MrcRx::kWrongState, &z},
      {"unknown QPN", [&](wire::MrcFrameSpec& s) { s.bth.dest_qp = 0xABCD; }, true, RxDrop::kUnknownQp},
      {"bad ICRC", [&](wire::MrcFrameSpec&) {}, true, RxDrop::kBadIcrc, {}, nullptr,
       [](std::vector<uint8_t>& f) { f[f.size() - 1] ^= 1; }},
      {"truncated METH", [&](wire::MrcFrameSpec&) {}, true, RxDrop::kMalformed, {}, nullptr,
       [](std::vector<uint8_t>& f) { f.resize(14 + 20 + 8 + 12 + 6); }},
      {"METH LAST flag against the opcode", [&](wire::MrcFrameSpec&) {}, true, RxDrop::kMalformed, {}, nullptr,
       [](std::vector<uint8_t>& f) {
         f[14 + 20 + 8 + 12] ^= 0x40;  // METH byte 0 bit 6 (LAST) on a WRITE_ONLY: mrc_bad_meth
       }},
      {"endpoint EV_PROBE from the peer (answered by its QP)",
       [&](wire::MrcFrameSpec& s) {
         s.op = MrcOp::kEndpointRequest;
         s.ep_request.op = wire::MrcEndpointOp::kEvProbe;
       },
       false, {}, mrc::MrcRx::kEvProbe, &y},
      {"endpoint EV_PROBE from a stranger",
       [&](wire::MrcFrameSpec& s) {
         s.op = MrcOp::kEndpointRequest;
         s.ep_request.op = wire::MrcEndpointOp::kEvProbe;
         std::get<wire::Ipv4Spec>(s.l3).src.bytes[3] ^= 0x40;
       },
       true, RxDrop::kMrcEndpoint},
      {"a WRITE to the endpoint QPN 2 (no ERTH / EETH: mrc_bad_endpoint)",
       [&](wire::MrcFrameSpec& s) { s.bth.dest_qp = wire::kMrcEndpointQpn; }, true, RxDrop::kMalformed},
      {"a SACK to the endpoint QPN 2",
       [&](wire::MrcFrameSpec& s) {
         s.op = MrcOp::kSack;
         s.bth.dest_qp = wire::kMrcEndpointQpn;
       },
       true, RxDrop::kMalformed},
      {"endpoint EV_PROBE response nobody asked for",
       [&](wire::MrcFrameSpec& s) {
         s.op = MrcOp::kEndpointResponse;
         s.ep_response.op = wire::MrcEndpointOp::kEvProbe;
         s.ep_response.request_id = 0x8001;
       },
       true, RxDrop::kMrcEndpoint},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    wire::MrcFrameSpec s = spec(MrcOp::kWriteOnly);
    c.edit(s);
    std::vector<uint8_t> payload(wire::mrc_is_data(s.op) ? 64 : 0, 0x77);
    std::vector<uint8_t> f(1024);
    const wire::BuildResult r = wire::build_mrc_frame(f, s, payload);
    ASSERT_TRUE(r.ok());
    f.resize(r.frame_bytes);
    if (c.mangle) c.mangle(f);
    const uint64_t before = reasons(rig.b, {&y, &z});
    const uint64_t drop_before = rig.b.counters(0).drops[static_cast<int>(c.drop)];
    const uint64_t reason_before = c.at != nullptr ? rx(*c.at, c.reason) : 0;
    const std::vector<uint8_t> mem = y.buf;
    rig.put(1, 0, f);
    rig.run_for(TimeNs::from_us(5));
    EXPECT_EQ(reasons(rig.b, {&y, &z}) - before, 1u) << "not counted exactly once";
    if (c.rx_drop) {
      EXPECT_EQ(rig.b.counters(0).drops[static_cast<int>(c.drop)] - drop_before, 1u) << to_string(c.drop);
    } else {
      EXPECT_EQ(rx(*c.at, c.reason) - reason_before, 1u) << mrc::to_string(c.reason);
    }
    EXPECT_EQ(y.buf, mem) << "a dropped frame wrote memory";
    EXPECT_EQ(y.qp->state(), v::QpState::kRts);
    EXPECT_EQ(x.qp->state(), v::QpState::kRts);
  }
  // The NACKs the responder owed: PSN_OOR_WINDOW, NO_RESOURCE, TRIMMED.
  std::vector<wire::MrcNackReason> nacks;
  for (const LinkPkt& k : rig.log) {
    if (k.from == 1 && k.op == MrcOp::kNack) nacks.push_back(k.nack);
  }
  EXPECT_EQ(nacks, (std::vector<wire::MrcNackReason>{wire::MrcNackReason::kPsnOutOfWindow,
                                                     wire::MrcNackReason::kNoResource,
                                                     wire::MrcNackReason::kTrimmed}));
  // After all of it the QPs still work.
  fill_pattern(x.buf, 8);
  ASSERT_EQ(post_write(x, 2, 0, 4000, y.addr(), y.mr->rkey), 0);
  const auto wc = wait_send(rig, x, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kSuccess);
  EXPECT_TRUE(std::equal(x.buf.begin(), x.buf.begin() + 4000, y.buf.begin()));
}

}  // namespace
}  // namespace sf::nic::test
