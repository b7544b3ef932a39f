// RC transport between two NicNodes over a virtual-time link (common/sim):
// WRITE / WRITE_WITH_IMM / SEND / SEND_WITH_IMM / READ with bytes verified,
// every path MTU, IPv4 and IPv6, chained mbufs (2 KiB segments carrying 4 KiB
// frames), random loss recovered by go-back-N, retry exhaustion to ERR with
// the right status and flush, RNR.
#include <gtest/gtest.h>

#include <cstring>

#include "common/sim/simulator.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

struct Fabric {
  NicNode a;
  NicNode b;
  ScriptApp app_a;
  ScriptApp app_b;
  sim::Simulator sim;
  sim::LinkId link;
  Endpoint ea;
  Endpoint eb;
  Fabric(size_t buf_bytes, ConnParams p = {}, sim::LinkParams lp = {BitRate::gbps(100), TimeNs::from_us(1)},
         uint64_t seed = 1)
      : a(one_host_cfg(0), sf::test::mbuf_pool()), b(one_host_cfg(1), sf::test::mbuf_pool()), sim(seed) {
    a.set_app(&app_a);
    b.set_app(&app_b);
    const auto ia = sim.add_node(a, "a");
    const auto ib = sim.add_node(b, "b");
    link = sim.connect(ia, 0, ib, 0, lp);
    ea = make_endpoint(a, 0, buf_bytes);
    eb = make_endpoint(b, 0, buf_bytes);
    connect_pair(ea, eb, p);
  }
};

// 1. WRITE of 1 MiB (256 x 4 KiB packets). Expect: one success completion,
//    every byte at the responder equal, no receive completion.
TEST(RcFabric, Write1MiBVerified) {
  Fabric f(1 << 20);
  fill_pattern(f.ea.buf, 1);
  ASSERT_EQ(post_write(f.ea, 7, 0, 1 << 20, f.eb.addr(), f.eb.mr->rkey), 0);
  f.sim.run_for(TimeNs::from_ms(2));
  const auto wcs = drain(f.ea.scq);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].wr_id, 7u);
  EXPECT_EQ(wcs[0].status, v::WcStatus::kSuccess) << v::to_string(wcs[0].status);
  EXPECT_EQ(wcs[0].opcode, v::WcOpcode::kRdmaWrite);
  EXPECT_EQ(wcs[0].byte_len, 1u << 20);
  EXPECT_EQ(f.ea.buf, f.eb.buf);
  EXPECT_TRUE(drain(f.eb.rcq).empty());
  EXPECT_EQ(f.ea.qp->counters().tx_data_pkts, 256u);
  EXPECT_EQ(f.ea.qp->counters().tx_retransmit_pkts, 0u);
  EXPECT_EQ(f.b.counters(0).dropped(), 0u);
}


// 2. SEND_WITH_IMM of 10000 B into a posted 16 KiB receive, then SEND (no
//    imm) and WRITE_WITH_IMM. Expect: receive completions in order with
//    opcode, byte_len, imm and WITH_IMM flag; bytes placed.
TEST(RcFabric, SendAndImmediateCompletions) {
  Fabric f(1 << 16);
  fill_pattern(f.ea.buf, 2);
  ASSERT_EQ(post_recv(f.eb, 100, 0, 16384), 0);
  ASSERT_EQ(post_recv(f.eb, 101, 16384, 16384), 0);
  ASSERT_EQ(post_recv(f.eb, 102, 32768, 16), 0);
  ASSERT_EQ(post_write(f.ea, 1, 0, 10000, 0, 0, v::WrOpcode::kSendWithImm, 0xCAFEBABE), 0);
  ASSERT_EQ(post_write(f.ea, 2, 10000, 300, 0, 0, v::WrOpcode::kSend), 0);
  ASSERT_EQ(post_write(f.ea, 3, 20000, 5000, f.eb.addr() + 40000, f.eb.mr->rkey, v::WrOpcode::kRdmaWriteWithImm, 42), 0);
  f.sim.run_for(TimeNs::from_ms(1));
  const auto s = drain(f.ea.scq);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].opcode, v::WcOpcode::kSend);
  EXPECT_EQ(s[2].opcode, v::WcOpcode::kRdmaWrite);
  for (const auto& wc : s) EXPECT_EQ(wc.status, v::WcStatus::kSuccess);
  const auto r = drain(f.eb.rcq);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].wr_id, 100u);
  EXPECT_EQ(r[0].opcode, v::WcOpcode::kRecv);
  EXPECT_EQ(r[0].byte_len, 10000u);
  EXPECT_EQ(r[0].imm_data, 0xCAFEBABEu);
  EXPECT_EQ(r[0].wc_flags & v::kWcWithImm, v::kWcWithImm);
  EXPECT_EQ(r[0].src_qp, f.ea.qp->qp_num());
  EXPECT_EQ(r[1].wr_id, 101u);
  EXPECT_EQ(r[1].byte_len, 300u);
  EXPECT_EQ(r[1].wc_flags & v::kWcWithImm, 0u);
  EXPECT_EQ(r[2].wr_id, 102u);
  EXPECT_EQ(r[2].opcode, v::WcOpcode::kRecvRdmaWithImm);
  EXPECT_EQ(r[2].byte_len, 5000u);
  EXPECT_EQ(r[2].imm_data, 42u);
  EXPECT_EQ(0, std::memcmp(f.eb.buf.data(), f.ea.buf.data(), 10000));
  EXPECT_EQ(0, std::memcmp(f.eb.buf.data() + 16384, f.ea.buf.data() + 10000, 300));
  EXPECT_EQ(0, std::memcmp(f.eb.buf.data() + 40000, f.ea.buf.data() + 20000, 5000));
}

// 3. READ of 300 KiB (75 responses) and a 1-byte READ. Expect: success,
//    bytes equal, READ opcode in the completion.
TEST(RcFabric, ReadVerified) {
  Fabric f(1 << 20);
  fill_pattern(f.eb.buf, 3);
  ASSERT_EQ(post_write(f.ea, 9, 0, 300 * 1024, f.eb.addr(), f.eb.mr->rkey, v::WrOpcode::kRdmaRead), 0);
  ASSERT_EQ(post_write(f.ea, 10, 500000, 1, f.eb.addr() + 777, f.eb.mr->rkey, v::WrOpcode::kRdmaRead), 0);
  f.sim.run_for(TimeNs::from_ms(1));
  const auto s = drain(f.ea.scq);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].status, v::WcStatus::kSuccess) << v::to_string(s[0].status);
  EXPECT_EQ(s[0].opcode, v::WcOpcode::kRdmaRead);
  EXPECT_EQ(s[0].byte_len, 300u * 1024);
  EXPECT_EQ(s[1].status, v::WcStatus::kSuccess);
  EXPECT_EQ(0, std::memcmp(f.ea.buf.data(), f.eb.buf.data(), 300 * 1024));
  EXPECT_EQ(f.ea.buf[500000], f.eb.buf[777]);
  EXPECT_EQ(f.eb.qp->counters().tx_data_pkts, 76u);
}

// 4. Every path MTU 256..4096, IPv4 and IPv6: a 20001-byte WRITE, SEND and
//    READ each. Expect: packets = ceil(len / MTU), bytes verified.
TEST(RcFabric, EveryMtuBothIpVersions) {
  for (bool v6 : {false, true}) {
    for (v::Mtu mtu : {v::Mtu::k256, v::Mtu::k512, v::Mtu::k1024, v::Mtu::k2048, v::Mtu::k4096}) {
      ConnParams p;
      p.mtu = mtu;
      p.ipv6 = v6;
      Fabric f(1 << 17, p);
      fill_pattern(f.ea.buf, 4);
      fill_pattern(f.eb.buf, 5);
      const std::vector<uint8_t> b_orig = f.eb.buf;
      const uint32_t len = 20001;
      ASSERT_EQ(post_recv(f.eb, 1, 0, len), 0);
      ASSERT_EQ(post_write(f.ea, 1, 0, len, f.eb.addr() + 30000, f.eb.mr->rkey), 0);
      ASSERT_EQ(post_write(f.ea, 2, 30000, len, 0, 0, v::WrOpcode::kSend), 0);
      ASSERT_EQ(post_write(f.ea, 3, 60000, len, f.eb.addr() + 90000, f.eb.mr->rkey, v::WrOpcode::kRdmaRead), 0);
      f.sim.run_for(TimeNs::from_ms(1));
      const auto s = drain(f.ea.scq);
      ASSERT_EQ(s.size(), 3u) << "mtu " << v::mtu_bytes(mtu) << " v6 " << v6;
      for (const auto& wc : s) EXPECT_EQ(wc.status, v::WcStatus::kSuccess);
      EXPECT_EQ(0, std::memcmp(f.eb.buf.data() + 30000, f.ea.buf.data(), len));
      EXPECT_EQ(0, std::memcmp(f.eb.buf.data(), f.ea.buf.data() + 30000, len));
      EXPECT_EQ(0, std::memcmp(f.ea.buf.data() + 60000, b_orig.data() + 90000, len));
      const uint32_t pk = (len + v::mtu_bytes(mtu) - 1) / v::mtu_bytes(mtu);
      EXPECT_EQ(f.ea.qp->counters().tx_data_pkts, 2 * pk + 1);
      EXPECT_EQ(f.eb.qp->counters().tx_data_pkts, pk);
      EXPECT_EQ(f.a.counters(0).dropped() + f.b.counters(0).dropped(), 0u);
    }
  }
}

// 5. 2% random loss in both directions, WRITEs, SENDs and READs mixed, 4 MiB
//    in all. Expect: every WR succeeds, every byte equal, go-back-N used.
TEST(RcFabric, RandomLossRecoveredByGoBackN) {
  ConnParams p;
  p.timeout = 6;  // 262 us
  sim::LinkParams lp{BitRate::gbps(100), TimeNs::from_us(2), 0.02};
  Fabric f(8 << 20, p, lp, 7);
  fill_pattern(f.ea.buf, 6);
  fill_pattern(f.eb.buf, 7);
  const std::vector<uint8_t> b_orig = f.eb.buf;
  const uint32_t chunk = 256 * 1024;
  for (uint32_t i = 0; i < 8; ++i) ASSERT_EQ(post_recv(f.eb, 100 + i, (4u << 20) + i * chunk, chunk), 0);
  uint64_t id = 0;
  for (uint32_t i = 0; i < 8; ++i) {
    ASSERT_EQ(post_write(f.ea, id++, i * chunk, chunk, f.eb.addr() + i * chunk, f.eb.mr->rkey), 0);
    ASSERT_EQ(post_write(f.ea, id++, (2u << 20) + i * chunk, chunk, 0, 0, v::WrOpcode::kSend), 0);
    ASSERT_EQ(post_write(f.ea, id++, (4u << 20) + i * chunk, chunk, f.eb.addr() + (6u << 20) + i * chunk,
                         f.eb.mr->rkey, v::WrOpcode::kRdmaRead), 0);
  }
  f.sim.run_for(TimeNs::from_ms(200));
  const auto s = drain(f.ea.scq);
  ASSERT_EQ(s.size(), 24u);
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].wr_id, i);
    EXPECT_EQ(s[i].status, v::WcStatus::kSuccess) << v::to_string(s[i].status);
  }
  EXPECT_EQ(drain(f.eb.rcq).size(), 8u);
  EXPECT_EQ(0, std::memcmp(f.eb.buf.data(), f.ea.buf.data(), 2u << 20));
  EXPECT_EQ(0, std::memcmp(f.eb.buf.data() + (4u << 20), f.ea.buf.data() + (2u << 20), 2u << 20));
  EXPECT_EQ(0, std::memcmp(f.ea.buf.data() + (4u << 20), b_orig.data() + (6u << 20), 2u << 20));
  EXPECT_GT(f.sim.stats(f.link, sim::LinkDir::kAtoB).lost_pkts, 0u);
  EXPECT_GT(f.ea.qp->counters().go_back, 0u);
  EXPECT_GT(f.ea.qp->counters().tx_retransmit_pkts, 0u);
  EXPECT_GT(f.eb.qp->counters().rx[static_cast<int>(rc::RxAction::kNakSeqSent)], 0u);
}

// 6. The link goes down for good. Expect: retransmissions at the timeout
//    (4.096 us x 2^timeout), then after retry_cnt retries the oldest WQE
//    completes with "transport retry counter exceeded", the QP is in ERR and
//    the next WQEs complete with "Work Request Flushed Error".
TEST(RcFabric, RetryExhaustionToErr) {
  ConnParams p;
  p.timeout = 8;    // 1.048576 ms
  p.retry_cnt = 3;
  Fabric f(1 << 16, p);
  f.sim.set_link_state_at(f.link, TimeNs(0), false);
  ASSERT_EQ(post_write(f.ea, 1, 0, 8192, f.eb.addr(), f.eb.mr->rkey), 0);
  ASSERT_EQ(post_write(f.ea, 2, 0, 100, f.eb.addr(), f.eb.mr->rkey, v::WrOpcode::kRdmaWrite, 0, 0), 0);
  ASSERT_EQ(post_write(f.ea, 3, 0, 100, f.eb.addr(), f.eb.mr->rkey, v::WrOpcode::kSend), 0);
  TimeNs err_at = TimeNs::max();
  f.app_a.every([&](TimeNs now) {
    if (err_at == TimeNs::max() && f.ea.qp->state() == v::QpState::kErr) err_at = now;
  });
  const TimeNs t_out = TimeNs(4096ll << 8);
  f.sim.run_for(t_out * 3 + TimeNs::from_us(500));
  EXPECT_EQ(f.ea.qp->state(), v::QpState::kRts);
  EXPECT_EQ(f.ea.qp->counters().timeouts, 3u);
  f.sim.run_for(t_out);
  EXPECT_EQ(f.ea.qp->state(), v::QpState::kErr);
  EXPECT_EQ(f.ea.qp->counters().timeouts, 4u);
  // First send at t=0 (+ serialisation), so ERR comes 4 timeouts later.
  EXPECT_GE(err_at, t_out * 4);
  EXPECT_LT(err_at, t_out * 4 + TimeNs::from_us(5));
  const auto s = drain(f.ea.scq);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].wr_id, 1u);
  EXPECT_EQ(s[0].status, v::WcStatus::kRetryExcErr);
  EXPECT_STREQ(v::to_string(s[0].status), "transport retry counter exceeded");
  EXPECT_EQ(s[1].wr_id, 2u);  // unsignaled, but errors always complete
  EXPECT_EQ(s[1].status, v::WcStatus::kWrFlushErr);
  EXPECT_EQ(s[2].status, v::WcStatus::kWrFlushErr);
  EXPECT_STREQ(v::to_string(s[2].status), "Work Request Flushed Error");
  // In ERR a new WR completes at once with a flush error.
  ASSERT_EQ(post_write(f.ea, 4, 0, 100, f.eb.addr(), f.eb.mr->rkey), 0);
  const auto s2 = drain(f.ea.scq);
  ASSERT_EQ(s2.size(), 1u);
  EXPECT_EQ(s2[0].status, v::WcStatus::kWrFlushErr);
}

// 7. SEND with no receive posted, rnr_retry 7 (infinite), min_rnr_timer
//    code 3 (30 us); the receive is posted at 200 us. Expect: RNR NAKs,
//    waits of 30 us, then success and the bytes placed.
TEST(RcFabric, RnrWaitThenSuccess) {
  ConnParams p;
  p.min_rnr_timer = 3;
  Fabric f(1 << 16, p);
  fill_pattern(f.ea.buf, 8);
  ASSERT_EQ(post_write(f.ea, 1, 0, 6000, 0, 0, v::WrOpcode::kSend), 0);
  f.app_b.at(TimeNs::from_us(200), [&](TimeNs) { ASSERT_EQ(post_recv(f.eb, 5, 100, 8000), 0); });
  f.sim.run_for(TimeNs::from_us(150));
  const uint64_t waits = f.ea.qp->counters().rnr_waits;
  EXPECT_GE(waits, 3u);
  EXPECT_LE(waits, 5u);  // 150 us / (30 us + RTT)
  f.sim.run_for(TimeNs::from_us(200));
  const auto s = drain(f.ea.scq);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, v::WcStatus::kSuccess);
  const auto r = drain(f.eb.rcq);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].byte_len, 6000u);
  EXPECT_EQ(0, std::memcmp(f.eb.buf.data() + 100, f.ea.buf.data(), 6000));
  EXPECT_EQ(f.eb.qp->counters().tx_rnr_naks, f.ea.qp->counters().rnr_waits);
}

// 8. RNR with rnr_retry 2 and never a receive. Expect: two retries, then
//    "RNR retry counter exceeded" and ERR.
TEST(RcFabric, RnrRetryExhausted) {
  ConnParams p;
  p.rnr_retry = 2;
  Fabric f(1 << 16, p);
  ASSERT_EQ(post_write(f.ea, 1, 0, 100, 0, 0, v::WrOpcode::kSend), 0);
  ASSERT_EQ(post_write(f.ea, 2, 0, 100, f.eb.addr(), f.eb.mr->rkey), 0);
  f.sim.run_for(TimeNs::from_ms(1));
  EXPECT_EQ(f.ea.qp->state(), v::QpState::kErr);
  EXPECT_EQ(f.ea.qp->counters().rnr_waits, 2u);
  EXPECT_EQ(f.eb.qp->counters().tx_rnr_naks, 3u);
  const auto s = drain(f.ea.scq);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].status, v::WcStatus::kRnrRetryExcErr);
  EXPECT_STREQ(v::to_string(s[0].status), "RNR retry counter exceeded");
  EXPECT_EQ(s[1].status, v::WcStatus::kWrFlushErr);
  // The responder is not harmed: still RTS.
  EXPECT_EQ(f.eb.qp->state(), v::QpState::kRts);
}

// 9. A remote access error end to end: WRITE with a wrong rkey. Expect: the
//    requester gets "remote access error" and ERR; the responder's QP goes
//    to ERR too (class C error); no byte written.
TEST(RcFabric, RemoteAccessErrorEndToEnd) {
  Fabric f(1 << 16);
  fill_pattern(f.ea.buf, 9);
  ASSERT_EQ(post_write(f.ea, 1, 0, 5000, f.eb.addr(), f.eb.mr->rkey ^ 0x100), 0);
  f.sim.run_for(TimeNs::from_us(100));
  const auto s = drain(f.ea.scq);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, v::WcStatus::kRemAccessErr);
  EXPECT_STREQ(v::to_string(s[0].status), "remote access error");
  EXPECT_EQ(f.ea.qp->state(), v::QpState::kErr);
  EXPECT_EQ(f.eb.qp->state(), v::QpState::kErr);
  EXPECT_EQ(std::vector<uint8_t>(f.eb.buf.size(), 0), f.eb.buf);
}


// The example of docs/nic.md (the verbs side-by-side), compiled and run.
// What the peer tells us out of band (as a verbs program exchanges it).
struct PeerInfo {
  uint32_t qpn;
  uint32_t psn;
  v::Gid gid;
  uint8_t mac[6];
  uint64_t addr;
  uint32_t rkey;
};

// 8< verbs-example
// Connects an RC QP to `peer` and writes `len` bytes of `buf` to it.
// Runs on the NicNode's thread (before the driver starts, or in App::poll).
int write_to_peer(NicNode& node, const PeerInfo& peer, void* buf, size_t len) {
  auto ctx = v::open_device(node, 0);                         // ibv_open_device
  v::Pd* pd = v::alloc_pd(ctx.get());                         // ibv_alloc_pd
  v::Mr* mr = v::reg_mr(pd, buf, len, v::kAccessLocalWrite);  // ibv_reg_mr
  v::Cq* cq = v::create_cq(ctx.get(), 16);                    // ibv_create_cq
  v::QpInitAttr init;                                         // struct ibv_qp_init_attr
  init.send_cq = cq;
  init.recv_cq = cq;
  init.cap.max_send_wr = 16;
  init.cap.max_recv_wr = 16;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.qp_type = v::QpType::kRc;
  v::Qp* qp = v::create_qp(pd, &init);                        // ibv_create_qp

  v::QpAttr attr;                                             // RESET -> INIT
  attr.qp_state = v::QpState::kInit;
  attr.pkey_index = 0;
  attr.port_num = 1;
  attr.qp_access_flags = v::kAccessRemoteWrite;
  if (int rc = v::modify_qp(qp, &attr, v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags)) return rc;

  attr = {};                                                  // INIT -> RTR
  attr.qp_state = v::QpState::kRtr;
  attr.path_mtu = v::Mtu::k4096;
  attr.dest_qp_num = peer.qpn;
  attr.rq_psn = peer.psn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.is_global = 1;
  attr.ah_attr.grh.dgid = peer.gid;
  attr.ah_attr.grh.sgid_index = 0;
  attr.ah_attr.sl = 3;
  std::memcpy(attr.ah_attr.dmac, peer.mac, 6);                // sf: the peer's MAC (no ARP here)
  attr.ah_attr.port_num = 1;
  if (int rc = v::modify_qp(qp, &attr, v::kQpState | v::kQpAv | v::kQpPathMtu | v::kQpDestQpn | v::kQpRqPsn |
                                           v::kQpMaxDestRdAtomic | v::kQpMinRnrTimer)) return rc;

  attr = {};                                                  // RTR -> RTS
  attr.qp_state = v::QpState::kRts;
  attr.sq_psn = 0x1234;
  attr.timeout = 14;
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;
  attr.max_rd_atomic = 1;
  if (int rc = v::modify_qp(qp, &attr, v::kQpState | v::kQpTimeout | v::kQpRetryCnt | v::kQpRnrRetry |
                                           v::kQpSqPsn | v::kQpMaxQpRdAtomic)) return rc;

  v::Sge sge{reinterpret_cast<uint64_t>(buf), static_cast<uint32_t>(len), mr->lkey};
  v::SendWr wr;                                               // struct ibv_send_wr
  wr.wr_id = 1;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = v::WrOpcode::kRdmaWrite;
  wr.send_flags = v::kSendSignaled;
  wr.rdma.remote_addr = peer.addr;
  wr.rdma.rkey = peer.rkey;
  v::SendWr* bad = nullptr;
  return v::post_send(qp, &wr, &bad);                         // ibv_post_send
}
// >8

// 10. The docs example against a peer set up by the harness. Expect: the
//     WRITE completes (poll_cq on the example's CQ) and the bytes arrive.
TEST(RcFabric, DocsVerbsExampleRuns) {
  NicNode a(one_host_cfg(0), sf::test::mbuf_pool());
  NicNode b(one_host_cfg(1), sf::test::mbuf_pool());
  sim::Simulator sim(1);
  sim.connect(sim.add_node(a, "a"), 0, sim.add_node(b, "b"), 0, {BitRate::gbps(100), TimeNs::from_us(1)});
  std::vector<uint8_t> src(100000);
  fill_pattern(src, 77);
  Endpoint eb = make_endpoint(b, 0, 100000);
  PeerInfo peer{eb.qp->qp_num(), 0x200, v::gid_from_ipv4(host_ip4(1)), {}, eb.addr(), eb.mr->rkey};
  std::memcpy(peer.mac, host_mac(1).bytes.data(), 6);
  ASSERT_EQ(write_to_peer(a, peer, src.data(), src.size()), 0);
  // The peer's side: its QP towards ours (QPN 0x11, the first of host 0).
  Endpoint fake_a;
  fake_a.ctx = v::open_device(a, 0);
  fake_a.qp = a.host(0).qp_by_qpn(Host::kFirstQpn);
  ConnParams p;
  p.sq_psn = 0x200;
  p.rq_psn = 0x1234;
  ASSERT_EQ(connect_qp(eb, fake_a, p), 0);
  sim.run_for(TimeNs::from_ms(1));
  v::Wc wc;
  v::Cq* cq = nullptr;
  verbs::QpAttr qa;
  verbs::QpInitAttr qi;
  ASSERT_EQ(fake_a.qp->query(&qa, &qi), 0);
  cq = qi.send_cq;
  ASSERT_EQ(v::poll_cq(cq, 1, &wc), 1);
  EXPECT_EQ(wc.status, v::WcStatus::kSuccess);
  EXPECT_EQ(src, eb.buf);
}


// 11. A ZERO_BASED MR at the responder: the requester WRITEs to offset 1000
//     and READs from offset 5000 without knowing the peer's addresses; an
//     offset past the MR is a remote access error.
TEST(RcFabric, ZeroBasedRemoteAddresses) {
  Fabric f(1 << 16);
  std::vector<uint8_t> region(8192);
  fill_pattern(region, 21);
  const std::vector<uint8_t> orig = region;
  v::Mr* zb = v::reg_mr(f.eb.pd, region.data(), region.size(), kAllAccess | v::kAccessZeroBased);
  ASSERT_NE(zb, nullptr);
  fill_pattern(f.ea.buf, 22);
  ASSERT_EQ(post_write(f.ea, 1, 0, 3000, 1000, zb->rkey), 0);
  ASSERT_EQ(post_write(f.ea, 2, 10000, 2000, 5000, zb->rkey, v::WrOpcode::kRdmaRead), 0);
  // The next post runs on the node's thread at 101 us (scheduled before the
  // run: the simulator learns a node's wakeups only when it calls it).
  f.app_a.at(TimeNs::from_us(101), [&](TimeNs) { ASSERT_EQ(post_write(f.ea, 3, 0, 100, 8150, zb->rkey), 0); });
  f.sim.run_for(TimeNs::from_us(100));
  auto s = drain(f.ea.scq);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].status, v::WcStatus::kSuccess);
  EXPECT_EQ(s[1].status, v::WcStatus::kSuccess);
  EXPECT_EQ(0, std::memcmp(region.data() + 1000, f.ea.buf.data(), 3000));
  EXPECT_EQ(0, std::memcmp(f.ea.buf.data() + 10000, orig.data() + 5000, 2000));
  EXPECT_EQ(0, std::memcmp(region.data(), orig.data(), 1000));
  f.sim.run_for(TimeNs::from_us(100));
  s = drain(f.ea.scq);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, v::WcStatus::kRemAccessErr);
  EXPECT_EQ(0, std::memcmp(region.data() + 8150, orig.data() + 8150, 42));
}


// 12. Determinism: the lossy mixed run twice with the same seed gives the
//     same event trace and counters; another seed gives another trace.
TEST(RcFabric, SameSeedSameRun) {
  auto run = [](uint64_t seed) {
    ConnParams p;
    p.timeout = 6;
    Fabric f(1 << 20, p, {BitRate::gbps(100), TimeNs::from_us(2), 0.02}, seed);
    fill_pattern(f.ea.buf, 1);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(post_write(f.ea, i, i << 18, 1 << 18, f.eb.addr() + (i << 18), f.eb.mr->rkey,
                           i % 2 ? v::WrOpcode::kRdmaRead : v::WrOpcode::kRdmaWrite), 0);
    }
    f.sim.run_for(TimeNs::from_ms(20));
    EXPECT_EQ(drain(f.ea.scq).size(), 4u);
    return std::pair{f.sim.trace_hash(), f.ea.qp->counters().tx_retransmit_pkts};
  };
  const auto a = run(11);
  const auto b = run(11);
  const auto c = run(12);
  EXPECT_EQ(a, b);
  EXPECT_NE(a.first, c.first);
  EXPECT_GT(a.second, 0u);
}

// 13. One post_send call with a list of 64 WRITEs of 512 B, only the 32nd
//     and the 64th signalled, over a lossy link (go-back-N rewinds through
//     unsignalled WQEs). Expect: exactly two success completions (wr_ids 31
//     and 63, in order), every byte placed, the send queue empty: ACKs
//     retire unsignalled WQEs silently.
TEST(RcFabric, UnsignalledListRetiredSilently) {
  Fabric f(1 << 16, {}, {BitRate::gbps(100), TimeNs::from_us(1), 0.05}, 5);
  fill_pattern(f.ea.buf, 13);
  std::vector<v::Sge> sge(64);
  std::vector<v::SendWr> wr(64);
  for (size_t i = 0; i < wr.size(); ++i) {
    sge[i] = {f.ea.addr() + i * 512, 512, f.ea.mr->lkey};
    wr[i].wr_id = i;
    wr[i].next = i + 1 < wr.size() ? &wr[i + 1] : nullptr;
    wr[i].sg_list = &sge[i];
    wr[i].num_sge = 1;
    wr[i].opcode = v::WrOpcode::kRdmaWrite;
    wr[i].send_flags = i == 31 || i == 63 ? v::kSendSignaled : 0;
    wr[i].rdma.remote_addr = f.eb.addr() + i * 512;
    wr[i].rdma.rkey = f.eb.mr->rkey;
  }
  v::SendWr* bad = nullptr;
  ASSERT_EQ(v::post_send(f.ea.qp, wr.data(), &bad), 0);
  EXPECT_EQ(f.ea.qp->sq_outstanding(), 64u);
  f.sim.run_for(TimeNs::from_ms(20));
  const auto s = drain(f.ea.scq);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].wr_id, 31u);
  EXPECT_EQ(s[1].wr_id, 63u);
  for (const auto& wc : s) {
    EXPECT_EQ(wc.status, v::WcStatus::kSuccess);
    EXPECT_EQ(wc.byte_len, 512u);
  }
  EXPECT_EQ(f.ea.qp->sq_outstanding(), 0u);
  EXPECT_EQ(0, std::memcmp(f.ea.buf.data(), f.eb.buf.data(), 64 * 512));
  EXPECT_GT(f.sim.stats(f.link, sim::LinkDir::kAtoB).lost_pkts, 0u);
}

}  // namespace
}  // namespace sf::nic::test
