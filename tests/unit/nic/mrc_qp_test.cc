// The MRC QP end to end between two NicNodes over a test link in virtual
// time (mrc_qp_harness.h): byte-exact WRITEs, WRITE_IMM completion order
// under every reordering, duplicates, selective retransmission of exactly the
// dropped PSNs on another EV, trim NACK -> retransmit, a black-holed EV
// retired while traffic continues, MR bounds on a crafted packet, the verbs
// refusals, PSN wrap, retry exhaustion.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <set>
#include <utility>

#include "common/rng.h"
#include "common/wire/mrc_builder.h"
#include "tests/unit/nic/mrc_qp_harness.h"

namespace sf::nic::test {
namespace {

using wire::MrcOp;

// 1. WRITEs of 1 B .. 4 MiB arrive byte exact (and nothing around them is
//    touched); one completion each, success; on a clean link nothing is
//    retransmitted and the packets spread over the EVs.
TEST(MrcQp, WriteSizesByteExact) {
  MrcRig rig;
  constexpr size_t kBuf = (4u << 20) + 8192;
  Endpoint x = make_mrc_endpoint(rig.a, kBuf);
  Endpoint y = make_mrc_endpoint(rig.b, kBuf);
  fill_pattern(x.buf, 11);
  connect_mrc(x, y);
  uint64_t id = 0;
  for (uint32_t len : {1u, 3u, 1023u, 4095u, 4096u, 4097u, 12288u, 65537u, 1u << 20, 4u << 20}) {
    std::fill(y.buf.begin(), y.buf.end(), 0xEE);
    const uint64_t doff = 4096 + (len & 7);
    ASSERT_EQ(post_write(x, ++id, 3, len, y.addr() + doff, y.mr->rkey), 0);
    const auto wc = wait_send(rig, x, 1);
    ASSERT_EQ(wc.size(), 1u) << len;
    EXPECT_EQ(wc[0].status, v::WcStatus::kSuccess);
    EXPECT_EQ(wc[0].wr_id, id);
    EXPECT_EQ(wc[0].byte_len, len);
    expect_same(x, 3, y, doff, len);
    EXPECT_EQ(y.buf[doff - 1], 0xEE);
    EXPECT_EQ(y.buf[doff + len], 0xEE);
  }
  EXPECT_EQ(mctr(x).tx_retransmits, 0u);
  EXPECT_EQ(mctr(x).timeouts, 0u);
  EXPECT_EQ(x.qp->state(), v::QpState::kRts);
  // ~1,300 packets over 128 EVs: every EV used, none more than a few times its share.
  const mrc::EvSet& evs = *x.qp->mrc()->ev_set();
  uint64_t total = 0, most = 0;
  for (uint16_t i = 0; i < evs.size(); ++i) {
    EXPECT_GT(evs.counters(i).sent, 0u) << "ev " << i;
    total += evs.counters(i).sent;
    most = std::max(most, evs.counters(i).sent);
  }
  EXPECT_EQ(total, mctr(x).tx_data_pkts);
  EXPECT_LT(most, 3 * total / evs.size());
  // The EV rides in the UDP source port of every data packet.
  for (const LinkPkt& k : rig.log) {
    if (k.data) {
      EXPECT_EQ(k.udp_sport, 0xC000 | (k.ev & 0x3FFF));
    }
  }
  EXPECT_GT(mctr(y).tx_sacks, 0u);
  EXPECT_EQ(mctr(y).rx[static_cast<int>(mrc::MrcRx::kPlaced)], mctr(x).tx_data_pkts);
}

// 2. IPv6: the EV is also the flow label.
TEST(MrcQp, Ipv6EvInFlowLabel) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 16);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 16);
  fill_pattern(x.buf, 2);
  ConnParams p;
  p.ipv6 = true;
  connect_mrc(x, y, nullptr, 0, p);
  ASSERT_EQ(post_write(x, 1, 0, 1 << 16, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  expect_same(x, 0, y, 0, 1 << 16);
  size_t n = 0;
  for (const LinkPkt& k : rig.log) {
    if (!k.data) continue;
    ++n;
    EXPECT_EQ(k.flow_label, k.ev & 0xFFFFF);
  }
  EXPECT_EQ(n, 16u);
}

// 2b. Every data frame the transport sends (headers from its per-kind
//    cache with the packet's fields written over them, the ICRC from a saved
//    state plus the EV's source port) is byte for byte what build_mrc_frame
//    makes of the same fields: IPv4 and IPv6, WRITE and WRITE_IMM (solicited
//    too), sizes that end in a short LAST packet (pad), messages of one
//    packet, and retransmissions (RTX, on another EV) of dropped PSNs; EV
//    bases with their low 8 bits 0 (the source port's share from two
//    nibble tables) and not (one share per EV; 0x3FC3: the ports wrap
//    within the 14 bits).
TEST(MrcQp, DataFramesAsBuilt) {
  for (const auto& [v6, ev_base] : {std::pair{false, 0u}, std::pair{true, 0u}, std::pair{false, 0x3FC3u},
                                    std::pair{true, 0x12300u}, std::pair{true, 0x3FC3u}}) {
    MrcRig rig;
    Endpoint x = make_mrc_endpoint(rig.a, 1 << 18);
    Endpoint y = make_mrc_endpoint(rig.b, 1 << 18);
    fill_pattern(x.buf, 7);
    ConnParams p;
    p.ipv6 = v6;
    v::MrcQpAttr ma;
    ma.ev_base = ev_base;
    connect_mrc(x, y, &ma, v::kMrcEvBase, p);
    for (int i = 0; i < 8; ++i) ASSERT_EQ(post_recv(y, 100 + i, 0, 0), 0);
    size_t frames = 0, rtx = 0, bad = 0, sacks = 0, bad_sacks = 0;
    rig.tap = [&](int from, PortId, const std::vector<uint8_t>& b) {
      if (from != 0) {
        // The responder's SACKs (header cache) as built from their fields too.
        const wire::FrameInfo fi = wire::parse_frame(b);
        if (fi.ok() && fi.kind == wire::FrameKind::kMrc && fi.mrc.op == wire::MrcOp::kSack) {
          ++sacks;
          bad_sacks += sack_frame_as_built(b) ? 0 : 1;
        }
        return;
      }
      const LinkPkt k = describe(b, from, 0);
      if (!k.data) return;
      ++frames;
      rtx += k.rtx ? 1 : 0;
      bad += data_frame_as_built(b) ? 0 : 1;
    };
    rig.filter = [&](const LinkPkt& k) {
      return k.data && !k.rtx && (k.psn - p.sq_psn) % 11 == 5 ? Fate::kDrop : Fate::kDeliver;
    };
    uint64_t id = 0;
    const uint32_t lens[] = {1, 3, 4096, 4097, 10001, 65536, 1000, 8190};
    for (size_t i = 0; i < std::size(lens); ++i) {
      const uint32_t len = lens[i];
      const bool imm = i % 2 == 1;
      ASSERT_EQ(post_write(x, ++id, i * 3, len, y.addr() + 8 * i, y.mr->rkey,
                           imm ? v::WrOpcode::kRdmaWriteWithImm : v::WrOpcode::kRdmaWrite, 0xA0000000u + i,
                           v::kSendSignaled | (i % 4 == 3 ? v::kSendSolicited : 0u)),
                0);
      const auto wc = wait_send(rig, x, 1);
      ASSERT_EQ(wc.size(), 1u) << len;
      EXPECT_EQ(wc[0].status, v::WcStatus::kSuccess);
      expect_same(x, i * 3, y, 8 * i, len);
    }
    EXPECT_EQ(frames - rtx, 27u);  // the packets of the eight WRITEs
    EXPECT_GT(rtx, 0u);
    EXPECT_EQ(bad, 0u) << (v6 ? "IPv6" : "IPv4") << " ev_base " << ev_base;
    EXPECT_GT(sacks, 8u);
    EXPECT_EQ(bad_sacks, 0u) << (v6 ? "IPv6" : "IPv4") << " ev_base " << ev_base;
  }
}

// 3. Verbs: SEND / READ refused on an MRC QP; mrc_modify_qp refuses bad
//    values with a reason, profile changes after INIT, SRv6, an RC QP.
TEST(MrcQp, VerbsRefusals) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 4096);
  Endpoint y = make_mrc_endpoint(rig.b, 4096);
  v::MrcQpAttr a;
  a.num_evs = 300;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcNumEvs), EINVAL);
  EXPECT_NE(std::string(x.qp->mrc_error()).find("num_evs"), std::string::npos);
  a = {};
  a.mpr = 257;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcMpr), EINVAL);
  EXPECT_NE(std::string(x.qp->mrc_error()).find("mpr: must be 1..256"), std::string::npos);
  a = {};
  a.sack_align = 4;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcSackAlign), EINVAL);
  EXPECT_NE(std::string(x.qp->mrc_error()).find("sack_align"), std::string::npos);
  a = {};
  a.ev_mode = v::MrcEvMode::kSrv6;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcEvMode), EINVAL);
  EXPECT_NE(std::string(x.qp->mrc_error()).find("SRv6"), std::string::npos);
  a = {};
  a.num_planes = 2;  // the host has one port
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcNumPlanes), EINVAL);
  a = {};
  a.backup_per_plane = 128;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcBackupPerPlane), EINVAL);
  a = {};
  a.rto_ns = 10;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcRto), EINVAL);
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, 1 << 30), EINVAL);
  a = {};
  a.num_evs = 64;
  a.backup_per_plane = 8;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcNumEvs | v::kMrcBackupPerPlane), 0) << x.qp->mrc_error();
  connect_mrc(x, y);
  EXPECT_EQ(x.qp->mrc()->ev_set()->size(), 64);
  // After INIT the profile is fixed; the tunables are not.
  a.num_evs = 128;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcNumEvs), EINVAL);
  EXPECT_NE(std::string(x.qp->mrc_error()).find("RESET or INIT"), std::string::npos);
  a.rto_ns = 200000;
  EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, v::kMrcRto), 0);
  EXPECT_EQ(x.qp->mrc()->attr().rto_ns, 200000u);
  // SEND / SEND_WITH_IMM / READ: EINVAL at post, nothing posted.
  for (v::WrOpcode op : {v::WrOpcode::kSend, v::WrOpcode::kSendWithImm, v::WrOpcode::kRdmaRead}) {
    EXPECT_EQ(post_write(x, 9, 0, 16, y.addr(), y.mr->rkey, op), EINVAL) << v::to_string(op);
  }
  EXPECT_EQ(x.qp->sq_outstanding(), 0u);
  // An RC QP has no MRC attributes.
  Endpoint r = make_endpoint(rig.a, 0, 4096);
  EXPECT_EQ(v::mrc_modify_qp(r.qp, &a, v::kMrcRto), EINVAL);
  EXPECT_FALSE(r.qp->is_mrc());
}

// Posts two messages on x: a 2-packet WRITE (wr 1) and a 2-packet WRITE_IMM
// (wr 2) into y, with a receive posted on y.
void post_pair(Endpoint& x, Endpoint& y) {
  ASSERT_EQ(post_recv(y, 100, 0, 0), 0);
  ASSERT_EQ(post_write(x, 1, 0, 8000, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(post_write(x, 2, 8192, 5000, y.addr() + 8192, y.mr->rkey, v::WrOpcode::kRdmaWriteWithImm, 0xABCD), 0);
}

// 4. Every order of the 4 data packets of a WRITE + WRITE_IMM pair: the
//    memory is exact and the immediate completes once, after everything.
TEST(MrcQp, WriteImmEveryPermutation) {
  std::vector<size_t> order = {0, 1, 2, 3};
  int perms = 0;
  do {
    MrcRig rig;
    Endpoint x = make_mrc_endpoint(rig.a, 1 << 15);
    Endpoint y = make_mrc_endpoint(rig.b, 1 << 15);
    fill_pattern(x.buf, 7);
    connect_mrc(x, y);
    rig.filter = [](const LinkPkt& k) { return k.data && !k.rtx ? Fate::kHold : Fate::kDeliver; };
    post_pair(x, y);
    rig.run_until([&] { return rig.held.size() == 4; }, TimeNs::from_us(100));
    ASSERT_EQ(rig.held.size(), 4u);
    rig.release(order);
    // Before the last packet lands, no immediate completion.
    const auto wc = wait_send(rig, x, 2);
    ASSERT_EQ(wc.size(), 2u);
    EXPECT_EQ(wc[0].wr_id, 1u);
    EXPECT_EQ(wc[1].wr_id, 2u);
    const auto rc = drain(y.rcq);
    ASSERT_EQ(rc.size(), 1u);
    EXPECT_EQ(rc[0].opcode, v::WcOpcode::kRecvRdmaWithImm);
    EXPECT_EQ(rc[0].imm_data, 0xABCDu);
    EXPECT_EQ(rc[0].byte_len, 5000u);
    EXPECT_EQ(rc[0].wr_id, 100u);
    expect_same(x, 0, y, 0, 8000);
    expect_same(x, 8192, y, 8192, 5000);
    EXPECT_EQ(mctr(x).tx_retransmits, 0u);
    ++perms;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(perms, 24);
}

// 5. Three WRITE_IMMs of 5 packets each, the 15 packets in 30 random orders:
//    immediates complete in message order, each after its whole message.
TEST(MrcQp, WriteImmOrderRandomPermutations) {
  Rng rng(42);
  for (int round = 0; round < 30; ++round) {
    MrcRig rig;
    Endpoint x = make_mrc_endpoint(rig.a, 1 << 17);
    Endpoint y = make_mrc_endpoint(rig.b, 1 << 17);
    fill_pattern(x.buf, static_cast<uint32_t>(round));
    connect_mrc(x, y);
    rig.filter = [](const LinkPkt& k) { return k.data && !k.rtx ? Fate::kHold : Fate::kDeliver; };
    for (int i = 0; i < 3; ++i) ASSERT_EQ(post_recv(y, 200 + i, 0, 0), 0);
    for (uint32_t i = 0; i < 3; ++i) {
      ASSERT_EQ(post_write(x, i, i * 20480, 20000, y.addr() + i * 20480, y.mr->rkey, v::WrOpcode::kRdmaWriteWithImm,
                           0x100 + i),
                0);
    }
    rig.run_until([&] { return rig.held.size() == 15; }, TimeNs::from_us(100));
    ASSERT_EQ(rig.held.size(), 15u);
    std::vector<size_t> order(15);
    std::iota(order.begin(), order.end(), 0);
    for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng.next_u64() % (i + 1)]);
    rig.release(order);
    ASSERT_EQ(wait_send(rig, x, 3).size(), 3u);
    const auto rc = drain(y.rcq);
    ASSERT_EQ(rc.size(), 3u);
    for (uint32_t i = 0; i < 3; ++i) {
      EXPECT_EQ(rc[i].imm_data, 0x100 + i);
      EXPECT_EQ(rc[i].wr_id, 200u + i);
      EXPECT_EQ(rc[i].byte_len, 20000u);
      expect_same(x, i * 20480, y, i * 20480, 20000);
    }
  }
}

// 6. Every data packet duplicated by the network: placed once, the copies
//    counted as duplicates and re-SACKed, one completion.
TEST(MrcQp, DuplicatesIgnored) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 18);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 18);
  fill_pattern(x.buf, 3);
  connect_mrc(x, y);
  rig.filter = [](const LinkPkt& k) { return k.data ? Fate::kDup : Fate::kDeliver; };
  ASSERT_EQ(post_recv(y, 1, 0, 0), 0);
  ASSERT_EQ(post_write(x, 1, 0, 1 << 18, y.addr(), y.mr->rkey, v::WrOpcode::kRdmaWriteWithImm, 5), 0);
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  rig.run_for(TimeNs::from_us(50));
  expect_same(x, 0, y, 0, 1 << 18);
  EXPECT_EQ(mctr(y).rx[static_cast<int>(mrc::MrcRx::kPlaced)], 64u);
  EXPECT_EQ(mctr(y).rx[static_cast<int>(mrc::MrcRx::kDuplicate)], 64u);
  EXPECT_EQ(drain(y.rcq).size(), 1u);
  EXPECT_EQ(mctr(x).tx_retransmits, 0u);
}

// 7. Chosen PSNs dropped once: the SACKs show them missing and exactly those
//    are retransmitted (RTX), each on another EV; no timeout.
TEST(MrcQp, DroppedPsnsRetransmittedExactlyOnAnotherEv) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 18);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 18);
  fill_pattern(x.buf, 4);
  ConnParams p;
  connect_mrc(x, y, nullptr, 0, p);
  const std::set<uint32_t> drop = {p.sq_psn + 3, p.sq_psn + 7, p.sq_psn + 8, p.sq_psn + 40};
  std::map<uint32_t, uint32_t> first_ev;
  rig.filter = [&](const LinkPkt& k) {
    if (k.data && !k.rtx) {
      first_ev[k.psn] = k.ev;
      if (drop.count(k.psn)) return Fate::kDrop;
    }
    return Fate::kDeliver;
  };
  ASSERT_EQ(post_write(x, 1, 0, 1 << 18, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  expect_same(x, 0, y, 0, 1 << 18);
  std::set<uint32_t> rtx;
  for (const LinkPkt& k : rig.log) {
    if (!k.data || !k.rtx) continue;
    EXPECT_TRUE(rtx.insert(k.psn).second) << "PSN " << k.psn << " retransmitted twice";
    EXPECT_NE(k.ev, first_ev[k.psn]) << "retransmission on the same EV";
  }
  EXPECT_EQ(rtx, drop);
  EXPECT_EQ(mctr(x).rtx_sack, drop.size());
  EXPECT_EQ(mctr(x).timeouts, 0u);
  EXPECT_GT(mctr(y).ooo_arrivals, 0u);
  // A silently lost packet retires its EV (loss with neither trim nor SACK).
  const mrc::EvSet& evs = *x.qp->mrc()->ev_set();
  for (const auto& [psn, ev] : first_ev) {
    if (drop.count(psn)) {
      EXPECT_GE(evs.counters(*evs.index_of(ev)).retired, 1u);
    }
  }
}

// 7b. A SACK window past 64 (mpr 256, docs/mrc.md "SACK window past 64")
//    on a long link (20 us each way, a byte window of 8 MiB): the QP keeps
//    up to 256 PSNs in flight, so the 4 MiB WRITE completes in well under
//    the time mpr 64 takes (386 against 677 us); PSNs dropped 3, 100
//    and 200 past the first -- the last two beyond any 64-PSN bitmap based
//    at CACK + 1 -- are each retransmitted exactly once (SACK holes; the
//    windows ending at their triggers show them), the memory byte-exact,
//    while the hole at 3 held CACK the responder took PSNs up to ~200 past
//    it.
//    With sack_align 8 every SACK's bitmap base is a multiple of 8
//    (UET-style) and the same PSNs, only those, are resent.
TEST(MrcQp, SackWindowPast64) {
  TimeNs took[2]{};
  int run = 0;
  struct Case {
    uint16_t mpr;
    uint8_t align;
    bool lossy;
  };
  for (const Case c : {Case{64, 1, false}, Case{256, 1, false}, Case{256, 1, true}, Case{256, 8, true}}) {
    const uint16_t mpr = c.mpr;
    const uint8_t align = c.align;
    MrcRig rig(1, BitRate::gbps(100), TimeNs::from_us(20));
    Endpoint x = make_mrc_endpoint(rig.a, 4u << 20);
    Endpoint y = make_mrc_endpoint(rig.b, 4u << 20);
    fill_pattern(x.buf, 77);
    v::MrcQpAttr a;
    a.mpr = mpr;
    a.window_bytes = 8u << 20;
    a.sack_align = align;
    a.rto_ns = 1'000'000;
    a.ooo_tolerance_ns = 50'000;
    a.probe_interval_ns = 200'000;
    ConnParams p;
    connect_mrc(x, y, &a, v::kMrcMpr | v::kMrcWindowBytes | v::kMrcSackAlign | v::kMrcRto | v::kMrcOooTolerance |
                              v::kMrcProbeInterval, p);
    const bool lossy = c.lossy;
    const std::set<uint32_t> drop = {p.sq_psn + 3, p.sq_psn + 100, p.sq_psn + 200};
    uint32_t highest = 0, most_ahead = 0;
    std::set<uint32_t> acked_upto;
    rig.filter = [&](const LinkPkt& k) {
      if (k.data && !k.rtx) {
        highest = std::max(highest, k.psn - p.sq_psn);
        if (lossy && drop.count(k.psn)) return Fate::kDrop;
      }
      return Fate::kDeliver;
    };
    uint32_t sacks = 0, misaligned = 0;
    rig.tap = [&](int from, PortId, const std::vector<uint8_t>& b) {
      const wire::FrameInfo fi = wire::parse_frame(b);
      if (from == 1 && fi.kind == wire::FrameKind::kMrc && fi.mrc.seth != nullptr) {
        ++sacks;
        const wire::Psn base = wire::mrc_sack_base(wire::Psn(fi.bth->psn.value()), fi.mrc.seth->base_offset());
        if (base.value() % 8 != 0) ++misaligned;
        // PSNs sent so far past the CACK this SACK carries.
        most_ahead = std::max(most_ahead, highest - (fi.bth->psn.value() - p.sq_psn));
      }
    };
    ASSERT_EQ(post_write(x, 1, 0, 4u << 20, y.addr(), y.mr->rkey), 0);
    ASSERT_EQ(wait_send(rig, x, 1, TimeNs::from_ms(50)).size(), 1u) << "mpr " << mpr << " align " << int{align};
    expect_same(x, 0, y, 0, 4u << 20);
    std::set<uint32_t> rtx;
    for (const LinkPkt& k : rig.log) {
      if (k.data && k.rtx) {
        EXPECT_TRUE(rtx.insert(k.psn).second) << "PSN " << k.psn << " resent twice";
      }
    }
    EXPECT_EQ(rtx, lossy ? drop : std::set<uint32_t>{}) << "mpr " << mpr << " align " << int{align};
    EXPECT_EQ(mctr(x).timeouts, 0u);
    if (align == 8) {
      EXPECT_GT(sacks, 100u);
      EXPECT_EQ(misaligned, 0u);
    }
    std::printf("mpr %u align %u: %.1f us, %u PSNs at most past a SACK's CACK, %zu resent\n", mpr, align,
                static_cast<double>(rig.now.ns()) / 1000, most_ahead, rtx.size());
    if (run < 2) took[run] = rig.now;
    EXPECT_LE(most_ahead, uint32_t{mpr} + 1);
    if (mpr == 256 && lossy) {
      EXPECT_GT(most_ahead, 64u);  // sent while PSN 3's hole held CACK: tracked past any 64-PSN window
    }
    ++run;
  }
  // Lossless: 64 PSNs of 4 KiB per 40 us round trip, ~52 Gb/s; 256: the link's 100 Gb/s.
  EXPECT_LT(took[1].ns() * 3, took[0].ns() * 2) << "mpr 256 " << took[1].ns() << " ns, mpr 64 " << took[0].ns();
}

// 8. A tail loss (nothing after it to SACK a hole): SACKs stop, the
//    reliability probe (probe_interval 20 us) is answered without the PSN,
//    which the reordering tolerance then makes lost: retransmitted long
//    before its RTO.
TEST(MrcQp, TailLossRecoveredByProbe) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 16);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 16);
  fill_pattern(x.buf, 5);
  ConnParams p;
  connect_mrc(x, y, nullptr, 0, p);
  rig.filter = [&](const LinkPkt& k) {
    return k.data && !k.rtx && k.psn == p.sq_psn + 15 ? Fate::kDrop : Fate::kDeliver;
  };
  ASSERT_EQ(post_write(x, 1, 0, 1 << 16, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  expect_same(x, 0, y, 0, 1 << 16);
  EXPECT_EQ(mctr(x).tx_retransmits, 1u);
  EXPECT_EQ(mctr(x).probe_holes, 1u);
  EXPECT_EQ(mctr(x).rtx_sack, 1u);
  EXPECT_EQ(mctr(x).rtx_timeout, 0u);
  EXPECT_EQ(mctr(x).rtx_alive_ev, 1u);  // resent on the EV the probe proved alive
  EXPECT_GT(mctr(x).tx_probes, 0u);     // SACKs stopped with data in flight
  EXPECT_LT(rig.now, TimeNs(x.qp->mrc()->attr().rto_ns / 2));
}

// 8b. The same tail loss with the probes lost too: the RTO retransmits it.
TEST(MrcQp, TailLossRecoveredByTimeout) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 16);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 16);
  fill_pattern(x.buf, 5);
  ConnParams p;
  connect_mrc(x, y, nullptr, 0, p);
  rig.filter = [&](const LinkPkt& k) {
    if (k.from == 0 && k.op == wire::MrcOp::kProbe) return Fate::kDrop;
    return k.data && !k.rtx && k.psn == p.sq_psn + 15 ? Fate::kDrop : Fate::kDeliver;
  };
  ASSERT_EQ(post_write(x, 1, 0, 1 << 16, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  expect_same(x, 0, y, 0, 1 << 16);
  EXPECT_EQ(mctr(x).tx_retransmits, 1u);
  EXPECT_EQ(mctr(x).rtx_timeout, 1u);
  EXPECT_EQ(mctr(x).probe_holes, 0u);
  EXPECT_GE(rig.now, TimeNs(x.qp->mrc()->attr().rto_ns));
  EXPECT_GT(mctr(x).tx_probes, 0u);  // SACKs stopped with data in flight
}

// 8c. A late answer to an earlier probe dates no hole: every SACK held, a
//     WRITE goes out, SACKs stop, probe 1 leaves; a second WRITE goes out,
//     probe 2 leaves; then probe 1's answer (the responder had not seen the
//     second WRITE yet) arrives. It answers a probe that was given up, so it
//     must not make the second WRITE's packet a hole (before the echoed-id
//     check it did: a spurious loss, its EV retired).
TEST(MrcQp, LateProbeAnswerDatesNoHole) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 16);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 16);
  fill_pattern(x.buf, 25);
  connect_mrc(x, y);
  size_t probes = 0;
  rig.filter = [&](const LinkPkt& k) {
    if (k.from == 0 && k.op == wire::MrcOp::kProbe) ++probes;
    return k.from == 1 && k.op == wire::MrcOp::kSack ? Fate::kHold : Fate::kDeliver;
  };
  ASSERT_EQ(post_write(x, 1, 0, 4096, y.addr(), y.mr->rkey), 0);
  ASSERT_TRUE(rig.run_until([&] { return probes == 1; }, TimeNs::from_us(100)));
  ASSERT_EQ(post_write(x, 2, 4096, 4096, y.addr() + 4096, y.mr->rkey), 0);
  ASSERT_TRUE(rig.run_until([&] { return probes == 2; }, rig.now + TimeNs::from_us(100)));
  rig.run_for(TimeNs::from_us(3));  // probe 1's answer is back (held), probe 2's not yet
  size_t first_answer = rig.held.size();
  for (size_t i = 0; i < rig.held.size(); ++i) {
    if (rig.held[i].first.probe_response) {
      first_answer = i;
      break;
    }
  }
  ASSERT_LT(first_answer, rig.held.size());
  rig.filter = nullptr;
  rig.release({first_answer});  // the rest (data SACKs, probe 2's answer) lost
  rig.run_for(TimeNs::from_us(2));
  EXPECT_EQ(mctr(x).probe_holes, 0u);
  EXPECT_EQ(mctr(x).rtx_sack, 0u);
  EXPECT_EQ(mctr(x).tx_retransmits, 0u);
  const auto wc = wait_send(rig, x, 2, TimeNs::from_ms(2));
  ASSERT_EQ(wc.size(), 2u);
  expect_same(x, 0, y, 0, 8192);
}

// 9. A trimmed packet: NACK TRIMMED at once, retransmitted before any timer.
TEST(MrcQp, TrimmedPacketNackedAndRetransmitted) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 16);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 16);
  fill_pattern(x.buf, 6);
  ConnParams p;
  connect_mrc(x, y, nullptr, 0, p);
  const uint32_t victim = p.sq_psn + 5;
  rig.filter = [&](const LinkPkt& k) { return k.data && !k.rtx && k.psn == victim ? Fate::kTrim : Fate::kDeliver; };
  ASSERT_EQ(post_write(x, 1, 0, 1 << 16, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  expect_same(x, 0, y, 0, 1 << 16);
  bool nacked = false;
  for (const LinkPkt& k : rig.log) {
    if (k.op == MrcOp::kNack) {
      EXPECT_EQ(k.nack, wire::MrcNackReason::kTrimmed);
      EXPECT_EQ(k.nack_psn, victim);
      nacked = true;
    }
  }
  EXPECT_TRUE(nacked);
  EXPECT_EQ(mctr(y).rx[static_cast<int>(mrc::MrcRx::kTrimmed)], 1u);
  EXPECT_EQ(mctr(x).rtx_nack, 1u);
  EXPECT_EQ(mctr(x).tx_retransmits, 1u);
  EXPECT_EQ(mctr(x).timeouts, 0u);
  EXPECT_LT(rig.now, TimeNs::from_us(30));
  const mrc::EvSet& evs = *x.qp->mrc()->ev_set();
  uint64_t skipped = 0;
  for (uint16_t i = 0; i < evs.size(); ++i) skipped += evs.counters(i).skipped;
  EXPECT_EQ(skipped, 1u);  // the trimmed packet's EV skipped for a rotation
}

// 9b. A switch trims to SWITCH_TRIMMING.size (128 B: 38 B of payload kept
//     past the IPv4 MRC headers) and marks DSCP 48. A node whose ports know
//     that code point (NicPortConfig::mrc_trimmed_dscp_mask, sf-nic host key
//     mrc_trim_dscp) NACKs it TRIMMED; without it the frame is an ICRC
//     failure (bad_icrc), found by scenario a (docs/scenarios.md).
TEST(MrcQp, TrimmedTo128BytesNackedWithTrimDscp) {
  for (const bool knows : {true, false}) {
    MrcRig rig(1, BitRate::gbps(100), TimeNs::from_us(1), knows ? uint64_t{1} << 48 : 0);
    rig.trim_size = 128;
    rig.trim_dscp = 48;
    Endpoint x = make_mrc_endpoint(rig.a, 1 << 16);
    Endpoint y = make_mrc_endpoint(rig.b, 1 << 16);
    fill_pattern(x.buf, 6);
    ConnParams p;
    connect_mrc(x, y, nullptr, 0, p);
    const uint32_t victim = p.sq_psn + 5;
    rig.filter = [&](const LinkPkt& k) { return k.data && !k.rtx && k.psn == victim ? Fate::kTrim : Fate::kDeliver; };
    ASSERT_EQ(post_write(x, 1, 0, 1 << 16, y.addr(), y.mr->rkey), 0);
    ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
    expect_same(x, 0, y, 0, 1 << 16);
    const uint64_t bad_icrc = rig.b.counters(0).drops[static_cast<int>(RxDrop::kBadIcrc)];
    if (knows) {
      EXPECT_EQ(mctr(y).rx[static_cast<int>(mrc::MrcRx::kTrimmed)], 1u);
      EXPECT_EQ(mctr(x).rtx_nack, 1u);
      EXPECT_EQ(bad_icrc, 0u);
    } else {
      EXPECT_EQ(mctr(y).rx[static_cast<int>(mrc::MrcRx::kTrimmed)], 0u);
      EXPECT_EQ(mctr(x).rtx_nack, 0u);
      EXPECT_EQ(bad_icrc, 1u);  // recovered from the SACK hole instead
    }
    EXPECT_EQ(mctr(x).tx_retransmits, 1u);
  }
}

// 10. An EV whose packets are always dropped (a black hole) is retired and
//     the transfer goes on over the others; its probes fail, so it stays out.
TEST(MrcQp, BlackHoledEvRetired) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 20);
  fill_pattern(x.buf, 8);
  v::MrcQpAttr a;
  a.num_evs = 16;
  a.backup_per_plane = 4;
  a.ev_base = 0x1000;
  connect_mrc(x, y, &a, v::kMrcNumEvs | v::kMrcBackupPerPlane | v::kMrcEvBase);
  const uint32_t bad = 0x1000 + 2;
  rig.filter = [&](const LinkPkt& k) { return k.from == 0 && k.ev == bad ? Fate::kDrop : Fate::kDeliver; };
  ASSERT_EQ(post_write(x, 1, 0, 1 << 20, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  expect_same(x, 0, y, 0, 1 << 20);
  const mrc::EvSet& evs = *x.qp->mrc()->ev_set();
  EXPECT_EQ(evs.state(2), mrc::EvState::kAssumedBad);
  EXPECT_FALSE(evs.active(2));
  EXPECT_EQ(evs.counters(2).retired, 1u);
  // Only what left in the first loss-detection time (~ooo_tolerance, 15 us)
  // went on it; after the retirement no data did (probes only), and the
  // rest of the 256 packets went on the others.
  size_t after = 0, data_on_bad = 0;
  for (const LinkPkt& k : rig.log) {
    if (k.from != 0 || !k.data) continue;
    if (k.ev == bad) {
      ++data_on_bad;
      after = 0;
    } else {
      ++after;
    }
  }
  EXPECT_GE(data_on_bad, 1u);
  EXPECT_LE(data_on_bad, 12u);
  EXPECT_GT(after, 150u);
  // Its probes fail: still retired later on.
  rig.run_for(TimeNs::from_us(500));
  EXPECT_GT(evs.counters(2).probes, 0u);
  EXPECT_EQ(evs.counters(2).probe_ok, 0u);
  EXPECT_EQ(evs.state(2), mrc::EvState::kAssumedBad);
  EXPECT_EQ(x.qp->state(), v::QpState::kRts);
}

// 11. A retired EV whose path heals is re-admitted after 3 good probes.
TEST(MrcQp, RetiredEvReadmittedByProbes) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 18);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 18);
  v::MrcQpAttr a;
  a.num_evs = 8;
  a.backup_per_plane = 2;
  connect_mrc(x, y, &a, v::kMrcNumEvs | v::kMrcBackupPerPlane);
  bool broken = true;
  rig.filter = [&](const LinkPkt& k) { return broken && k.from == 0 && k.ev == 1 ? Fate::kDrop : Fate::kDeliver; };
  ASSERT_EQ(post_write(x, 1, 0, 1 << 18, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  const mrc::EvSet& evs = *x.qp->mrc()->ev_set();
  ASSERT_EQ(evs.state(1), mrc::EvState::kAssumedBad);
  broken = false;
  rig.run_for(TimeNs::from_us(400));
  EXPECT_EQ(evs.state(1), mrc::EvState::kGood);
  EXPECT_EQ(evs.counters(1).readmitted, 1u);
  EXPECT_GE(evs.counters(1).probe_ok, 3u);
}

// 12. A crafted WRITE past the end of the MR (and one with a bad rkey):
//     nothing written, counted, NACK ACCESS_ERROR, the responder QP to ERR.
TEST(MrcQp, MrBoundsOnCraftedPacketWritesNothing) {
  for (int variant = 0; variant < 2; ++variant) {
    MrcRig rig;
    Endpoint x = make_mrc_endpoint(rig.a, 4096);
    Endpoint y = make_mrc_endpoint(rig.b, 8192);
    ConnParams p;
    connect_mrc(x, y, nullptr, 0, p);
    std::fill(y.buf.begin(), y.buf.end(), 0x5A);
    wire::MrcFrameSpec s;
    const rc::LocalAddr& la = rig.a.host(0).local();
    const rc::LocalAddr& lb = rig.b.host(0).local();
    s.l2.src = la.mac;
    s.l2.dst = lb.mac;
    wire::Ipv4Spec ip;
    ip.src = la.ipv4;
    ip.dst = lb.ipv4;
    s.l3 = ip;
    s.op = MrcOp::kWriteOnly;
    s.bth.dest_qp = y.qp->qp_num();
    s.bth.psn = wire::Psn(p.sq_psn);
    s.reth_va = variant == 0 ? y.addr() + 8192 - 100 : y.addr();  // 256 bytes: 156 past the end
    s.reth_rkey = variant == 0 ? y.mr->rkey : y.mr->rkey ^ 0x100;
    s.reth_dma_length = 256;
    std::vector<uint8_t> payload(256, 0x11), frame(1024);
    const wire::BuildResult r = wire::build_mrc_frame(frame, s, payload);
    ASSERT_TRUE(r.ok());
    frame.resize(r.frame_bytes);
    rig.put(1, 0, frame);
    rig.run_for(TimeNs::from_us(20));
    EXPECT_TRUE(std::all_of(y.buf.begin(), y.buf.end(), [](uint8_t c) { return c == 0x5A; }));
    EXPECT_EQ(mctr(y).rx[static_cast<int>(mrc::MrcRx::kAccessError)], 1u);
    EXPECT_EQ(y.qp->state(), v::QpState::kErr);
    bool nack = false;
    for (const LinkPkt& k : rig.log) nack = nack || (k.op == MrcOp::kNack && k.nack == wire::MrcNackReason::kAccessError);
    EXPECT_TRUE(nack);
  }
}

// 13. A real WRITE beyond the peer's MR: the requester's WQE fails with
//     REM_ACCESS_ERR (fatal NACK), nothing written.
TEST(MrcQp, RemoteAccessErrorFailsTheWqe) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 14);
  Endpoint y = make_mrc_endpoint(rig.b, 4096);
  connect_mrc(x, y);
  ASSERT_EQ(post_write(x, 7, 0, 8192, y.addr(), y.mr->rkey), 0);
  const auto wc = wait_send(rig, x, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kRemAccessErr);
  EXPECT_EQ(x.qp->state(), v::QpState::kErr);
}

// 14. PSNs across the 2^24 wrap.
TEST(MrcQp, PsnWrap) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 19);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 19);
  fill_pattern(x.buf, 9);
  ConnParams p;
  p.sq_psn = 0xFFFFF0;
  p.rq_psn = 0xFFFFE0;
  connect_mrc(x, y, nullptr, 0, p);
  rig.filter = [&](const LinkPkt& k) {
    return k.data && !k.rtx && (k.psn == 0xFFFFFE || k.psn == 0x000002) ? Fate::kDrop : Fate::kDeliver;
  };
  ASSERT_EQ(post_write(x, 1, 0, 1 << 19, y.addr(), y.mr->rkey), 0);  // 128 packets
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  expect_same(x, 0, y, 0, 1 << 19);
  EXPECT_EQ(mctr(x).tx_retransmits, 2u);
  EXPECT_EQ(y.qp->mrc()->sack_tracker()->cack(), wire::Psn(0xFFFFF0 + 127));
}

// 15. Everything from the requester lost: after max_timeouts RTOs of one PSN
//     the QP goes to ERR, the WQE completes RETRY_EXC_ERR; never a hang.
TEST(MrcQp, RetryExhaustion) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 14);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 14);
  v::MrcQpAttr a;
  a.max_timeouts = 2;
  connect_mrc(x, y, &a, v::kMrcMaxTimeouts);
  rig.filter = [](const LinkPkt& k) { return k.from == 0 ? Fate::kDrop : Fate::kDeliver; };
  ASSERT_EQ(post_write(x, 1, 0, 8192, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(post_write(x, 2, 0, 100, y.addr(), y.mr->rkey), 0);
  const auto wc = wait_send(rig, x, 2, TimeNs::from_ms(10));
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kRetryExcErr);
  EXPECT_EQ(wc[1].status, v::WcStatus::kWrFlushErr);
  EXPECT_EQ(x.qp->state(), v::QpState::kErr);
}

// 15b. A PSN's RTO doubles per counted expiry (up to 8 x rto_ns): with
//      max_timeouts 3 a path dead for 5 RTOs is survived (expiries at 1 and
//      3 RTOs, the third at 7 finds it healed), where a fixed RTO failed the
//      QP at 4.
TEST(MrcQp, RtoBacksOff) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 14);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 14);
  fill_pattern(x.buf, 14);
  v::MrcQpAttr a;
  a.max_timeouts = 3;
  connect_mrc(x, y, &a, v::kMrcMaxTimeouts);
  const TimeNs rto(x.qp->mrc()->attr().rto_ns);
  bool dead = true;
  rig.filter = [&](const LinkPkt& k) { return dead && k.from == 0 ? Fate::kDrop : Fate::kDeliver; };
  ASSERT_EQ(post_write(x, 1, 0, 4096, y.addr(), y.mr->rkey), 0);
  rig.run_for(TimeNs(rto.ns() * 5));
  EXPECT_EQ(x.qp->state(), v::QpState::kRts);
  EXPECT_EQ(mctr(x).timeouts, 2u);
  dead = false;
  const auto wc = wait_send(rig, x, 1, TimeNs(rto.ns() * 10));
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kSuccess);
  expect_same(x, 0, y, 0, 4096);
}

// 15a'. The same across 2^48 ns of virtual time: a send record keeps the
//       send time's low 48 bits and rebuilds it against `now` (16-byte
//       records, Transport::sent_of); the expiries, the backoff and the
//       recovery straddle the wrap of those bits and come out the same.
TEST(MrcQp, RtoBacksOffAcrossTheSendTimeWrap) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 14);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 14);
  fill_pattern(x.buf, 14);
  v::MrcQpAttr a;
  a.max_timeouts = 3;
  connect_mrc(x, y, &a, v::kMrcMaxTimeouts);
  const TimeNs rto(x.qp->mrc()->attr().rto_ns);
  rig.now = TimeNs((int64_t{1} << 48) - rto.ns() * 2);
  bool dead = true;
  rig.filter = [&](const LinkPkt& k) { return dead && k.from == 0 ? Fate::kDrop : Fate::kDeliver; };
  ASSERT_EQ(post_write(x, 1, 0, 4096, y.addr(), y.mr->rkey), 0);
  rig.run_for(TimeNs(rto.ns() * 5));
  EXPECT_EQ(x.qp->state(), v::QpState::kRts);
  EXPECT_EQ(mctr(x).timeouts, 2u);
  dead = false;
  const auto wc = wait_send(rig, x, 1, TimeNs(rto.ns() * 10));
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kSuccess);
  expect_same(x, 0, y, 0, 4096);
}

// 15b'. A PSN's first expiry with no feedback at all since it left is a
//       stall and blames no EV; its second one does (scenario d: SACKs dying
//       on the same blackholed spine as the data kept every expiry a
//       "stall", so the dead EV was never retired and the QP failed).
TEST(MrcQp, SecondStallExpiryBlamesTheEv) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 14);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 14);
  fill_pattern(x.buf, 16);
  connect_mrc(x, y);
  const TimeNs rto(x.qp->mrc()->attr().rto_ns);
  bool dead = true;
  rig.filter = [&](const LinkPkt&) { return dead ? Fate::kDrop : Fate::kDeliver; };  // both ways
  ASSERT_EQ(post_write(x, 1, 0, 100, y.addr(), y.mr->rkey), 0);
  const mrc::EvSet& evs = *x.qp->mrc()->ev_set();
  auto retired = [&] {
    uint64_t n = 0;
    for (uint16_t i = 0; i < evs.size(); ++i) n += evs.counters(i).retired;
    return n;
  };
  rig.run_for(rto + TimeNs::from_us(5));  // first expiry: a stall
  EXPECT_EQ(mctr(x).stall_timeouts, 1u);
  EXPECT_EQ(retired(), 0u);
  rig.run_for(TimeNs(rto.ns() * 2));  // second expiry (backed off to 2 RTOs)
  EXPECT_EQ(mctr(x).timeouts, 2u);
  EXPECT_EQ(mctr(x).stall_timeouts, 1u);
  EXPECT_EQ(retired(), 1u);
  dead = false;
  const auto wc = wait_send(rig, x, 1, TimeNs(rto.ns() * 8));
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kSuccess);
  expect_same(x, 0, y, 0, 100);
}

// 15c. An expiry while the host's only port is down does not count towards
//      max_timeouts: the PSN already used its one allowed expiry, the port
//      goes down, its next expiry comes, the port comes back and the WRITE
//      completes byte-exact (counted, that expiry failed the QP).
TEST(MrcQp, TimeoutsWhileEveryPortIsDownAreNotCounted) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 14);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 14);
  fill_pattern(x.buf, 15);
  v::MrcQpAttr a;
  a.max_timeouts = 1;
  connect_mrc(x, y, &a, v::kMrcMaxTimeouts);
  const TimeNs rto(x.qp->mrc()->attr().rto_ns);
  rig.filter = [](const LinkPkt& k) { return k.from == 0 && k.data ? Fate::kDrop : Fate::kDeliver; };
  ASSERT_EQ(post_write(x, 1, 0, 4096, y.addr(), y.mr->rkey), 0);
  // Sent, lost (found by the probe's answer), retransmitted, lost, expired
  // once (a retransmission lost again waits for its RTO), retransmitted, lost.
  ASSERT_TRUE(rig.run_until([&] { return mctr(x).timeouts == 1; }, TimeNs(rto.ns() * 2)));
  EXPECT_EQ(mctr(x).probe_holes, 1u);
  rig.a.set_port_up(0, false);
  rig.run_for(TimeNs(rto.ns() * 4));  // the second expiry (at 3 RTOs) while down
  EXPECT_EQ(x.qp->state(), v::QpState::kRts);
  EXPECT_EQ(mctr(x).down_timeouts, 1u);
  rig.filter = nullptr;
  rig.a.set_port_up(0, true);
  const auto wc = wait_send(rig, x, 1, TimeNs(rto.ns() * 4));
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kSuccess);
  expect_same(x, 0, y, 0, 4096);
}

// 16. Bad MRC input at the QP is counted with a reason and dropped: an RC
//     opcode for an MRC QP, a SACK acknowledging PSNs never sent.
TEST(MrcQp, BadFramesCounted) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 4096);
  Endpoint y = make_mrc_endpoint(rig.b, 4096);
  ConnParams p;
  connect_mrc(x, y, nullptr, 0, p);
  const rc::LocalAddr& la = rig.a.host(0).local();
  const rc::LocalAddr& lb = rig.b.host(0).local();
  wire::RoceFrameSpec rs;
  rs.l2.src = la.mac;
  rs.l2.dst = lb.mac;
  wire::Ipv4Spec ip;
  ip.src = la.ipv4;
  ip.dst = lb.ipv4;
  rs.l3 = ip;
  rs.bth.opcode = wire::Opcode::kRcSendOnly;
  rs.bth.dest_qp = y.qp->qp_num();
  rs.bth.psn = wire::Psn(p.sq_psn);
  std::vector<uint8_t> f(256);
  const wire::BuildResult r1 = wire::build_roce_frame(f, rs, {});
  ASSERT_TRUE(r1.ok());
  f.resize(r1.frame_bytes);
  rig.put(1, 0, f);
  // A SACK to x acknowledging PSNs it never sent.
  wire::MrcFrameSpec s;
  s.l2.src = lb.mac;
  s.l2.dst = la.mac;
  wire::Ipv4Spec ip2;
  ip2.src = lb.ipv4;
  ip2.dst = la.ipv4;
  s.l3 = ip2;
  s.op = MrcOp::kSack;
  s.bth.dest_qp = x.qp->qp_num();
  s.bth.psn = wire::Psn(p.sq_psn + 10);
  std::vector<uint8_t> g(256);
  const wire::BuildResult r2 = wire::build_mrc_frame(g, s, {});
  ASSERT_TRUE(r2.ok());
  g.resize(r2.frame_bytes);
  rig.put(0, 0, g);
  rig.run_for(TimeNs::from_us(10));
  EXPECT_EQ(mctr(y).rx[static_cast<int>(mrc::MrcRx::kNotMrc)], 1u);
  EXPECT_EQ(mctr(x).rx[static_cast<int>(mrc::MrcRx::kSackInvalid)], 1u);
  EXPECT_EQ(x.qp->state(), v::QpState::kRts);
  EXPECT_EQ(y.qp->state(), v::QpState::kRts);
}

}  // namespace
}  // namespace sf::nic::test
