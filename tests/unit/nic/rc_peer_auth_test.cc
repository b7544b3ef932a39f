// Who may talk to a QP (issue 17 section 2): a frame whose source IP is not
// the QP's remote address (ah_attr dgid), or whose BTH P_Key does not match
// the QP's partition (IBA 10.9.3: same low 15 bits, one side a full member),
// is dropped and counted (RxAction kBadSrc / kBadPkey, "rx_bad_src" /
// "rx_bad_pkey"), never executed: no byte written, no ACK, no completion, no
// CNP reaction; the counts are in sf-nic's report (host_json). Crafted
// frames (common/wire, ICRC included) into a NicNode.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "nic/app/sf_nic_report.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/crafted_frames.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

using wire::Opcode;

uint64_t rx(const v::Qp* qp, rc::RxAction a) { return qp->counters().rx[static_cast<int>(a)]; }

void feed(NicNode& n, rte_mbuf* m) {
  ASSERT_NE(m, nullptr);
  n.receive(0, {&m, 1}, TimeNs(0));
}

// RESET -> INIT (pkey_index) -> RTR -> RTS towards `peer`, as connect_qp
// does with its defaults (MTU 4096; the peer's sq_psn is our rq_psn).
int connect_with_pkey(Endpoint& self, const Endpoint& peer, uint16_t pkey_index, uint32_t sq_psn, uint32_t rq_psn,
                      bool ipv6 = false) {
  v::QpAttr a;
  a.qp_state = v::QpState::kInit;
  a.pkey_index = pkey_index;
  a.port_num = 1;
  a.qp_access_flags = kAllAccess;
  int rc = v::modify_qp(self.qp, &a, v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags);
  if (rc != 0) return rc;
  ConnParams p;
  p.sq_psn = sq_psn;
  p.rq_psn = rq_psn;
  p.ipv6 = ipv6;
  const rc::LocalAddr& pl = peer.ctx->host().local();
  v::QpAttr r;
  r.qp_state = v::QpState::kRtr;
  r.path_mtu = p.mtu;
  r.dest_qp_num = peer.qp->qp_num();
  r.rq_psn = p.rq_psn;
  r.max_dest_rd_atomic = p.rd_atomic;
  r.min_rnr_timer = p.min_rnr_timer;
  r.ah_attr.is_global = 1;
  r.ah_attr.port_num = 1;
  r.ah_attr.grh.sgid_index = ipv6 ? 1 : 0;
  r.ah_attr.grh.dgid = ipv6 ? pl.ipv6 : v::gid_from_ipv4(pl.ipv4);
  for (int i = 0; i < 6; ++i) r.ah_attr.dmac[i] = pl.mac.bytes[i];
  rc = v::modify_qp(self.qp, &r,
                    v::kQpState | v::kQpAv | v::kQpPathMtu | v::kQpDestQpn | v::kQpRqPsn | v::kQpMaxDestRdAtomic |
                        v::kQpMinRnrTimer);
  if (rc != 0) return rc;
  v::QpAttr s;
  s.qp_state = v::QpState::kRts;
  s.sq_psn = p.sq_psn;
  s.max_rd_atomic = p.rd_atomic;
  s.retry_cnt = p.retry_cnt;
  s.rnr_retry = p.rnr_retry;
  s.timeout = p.timeout;
  return v::modify_qp(self.qp, &s,
                      v::kQpState | v::kQpSqPsn | v::kQpMaxQpRdAtomic | v::kQpRetryCnt | v::kQpRnrRetry | v::kQpTimeout);
}

// Node a (host 0) and node b (host 1); both hosts' P_Key tables are
// {0xFFFF, 0x8005 (partition 5, full), 0x0005 (partition 5, limited)}; the
// QPs use pkey_index `ia` (a) and `ib` (b).
struct Auth {
  NicNode a;
  NicNode b;
  Endpoint ea;
  Endpoint eb;
  static NicConfig cfg(int i) {
    NicConfig c = one_host_cfg(i);
    c.hosts[0].rc.pkey_table = {0xFFFF, 0x8005, 0x0005};
    return c;
  }
  explicit Auth(uint16_t ia = 0, uint16_t ib = 0, bool ipv6 = false)
      : a(cfg(0), sf::test::mbuf_pool()), b(cfg(1), sf::test::mbuf_pool()) {
    ea = make_endpoint(a, 0, 1 << 12);
    eb = make_endpoint(b, 0, 1 << 12);
    EXPECT_EQ(connect_with_pkey(ea, eb, ia, 0x100, 0x200, ipv6), 0);
    EXPECT_EQ(connect_with_pkey(eb, ea, ib, 0x200, 0x100, ipv6), 0);
  }
  // A WRITE_ONLY of 64 bytes of `b` to eb's buffer start, from host `src`
  // (its IPv4 address), with BTH P_Key `pkey`.
  rte_mbuf* write(int src, uint16_t pkey, uint32_t psn, uint8_t byte) const {
    wire::RoceFrameSpec s = host_frame(src, 1, eb.qp->qp_num(), Opcode::kRcWriteOnly, psn);
    s.l2.src = host_mac(0);
    s.bth.ack_req = true;
    s.bth.pkey = pkey;
    return craft(with_reth(s, eb.addr(), eb.mr->rkey, 64), std::vector<uint8_t>(64, byte));
  }
};

// 1. Source address: WRITE_ONLY frames to b's QP (connected to host 0 at
//    10.1.0.1) from host 2's IPv4 address, from host 0's IPv6 address (the
//    QP's AV is IPv4), and a CNP from host 2. Expect: each dropped, counted
//    kBadSrc ("rx_bad_src"); nothing written, no frame out, the QP still RTS,
//    no CNP counted. Then the same WRITE from host 0: placed and ACKed.
TEST(RcPeerAuth, WrongSourceAddressDroppedAndCounted) {
  Auth c;
  feed(c.b, c.write(2, 0xFFFF, 0x100, 0xAB));
  wire::RoceFrameSpec v6 = host_frame(0, 1, c.eb.qp->qp_num(), Opcode::kRcWriteOnly, 0x100);
  wire::Ipv6Spec ip6;
  ip6.src = host_ip6(0);
  ip6.dst = host_ip6(1);
  v6.l3 = ip6;
  feed(c.b, craft(with_reth(v6, c.eb.addr(), c.eb.mr->rkey, 64), std::vector<uint8_t>(64, 0xAB)));
  wire::RoceFrameSpec cnp = host_frame(2, 1, c.eb.qp->qp_num(), Opcode::kCnp, 0);
  cnp.l2.src = host_mac(0);
  std::vector<uint8_t> buf(128);
  const wire::BuildResult r = wire::build_cnp_frame(buf, cnp);
  ASSERT_TRUE(r.ok());
  buf.resize(r.frame_bytes);
  feed(c.b, sf::test::make_mbuf(buf));
  EXPECT_EQ(rx(c.eb.qp, rc::RxAction::kBadSrc), 3u);
  EXPECT_STREQ(rc::to_string(rc::RxAction::kBadSrc), "rx_bad_src");
  EXPECT_EQ(app::host_json(c.b, 0)["rx_bad_src"], 3u);  // sf-nic's --report
  EXPECT_EQ(c.eb.qp->counters().rx_cnps, 0u);
  EXPECT_EQ(std::vector<uint8_t>(1 << 12, 0), c.eb.buf);
  EXPECT_TRUE(pull(c.b).empty());
  EXPECT_EQ(c.eb.qp->state(), v::QpState::kRts);
  EXPECT_EQ(c.eb.qp->expected_psn(), wire::Psn(0x100));
  feed(c.b, c.write(0, 0xFFFF, 0x100, 0xAB));
  EXPECT_EQ(c.eb.buf[0], 0xAB);
  const auto out = pull(c.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].syndrome, kAck);
}

// 2. Source address at the requester: an ACK for a posted WRITE from host
//    2's address. Expect: dropped (kBadSrc), the WR not completed; the real
//    ACK from host 1 completes it.
TEST(RcPeerAuth, ResponseFromWrongSourceDoesNotComplete) {
  Auth c;
  ASSERT_EQ(post_write(c.ea, 1, 0, 64, c.eb.addr(), c.eb.mr->rkey), 0);
  ASSERT_EQ(pull(c.a).size(), 1u);
  wire::RoceFrameSpec ack = host_frame(2, 0, c.ea.qp->qp_num(), Opcode::kRcAck, 0x100);
  ack.l2.src = host_mac(1);
  ack.ext.aeth_syndrome = kAck;
  feed(c.a, craft(ack, {}));
  EXPECT_EQ(rx(c.ea.qp, rc::RxAction::kBadSrc), 1u);
  EXPECT_TRUE(drain(c.ea.scq).empty());
  wire::RoceFrameSpec good = host_frame(1, 0, c.ea.qp->qp_num(), Opcode::kRcAck, 0x100);
  good.ext.aeth_syndrome = kAck;
  feed(c.a, craft(good, {}));
  const auto wc = drain(c.ea.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kSuccess);
}

// 3. IPv6 AV: a frame from host 0's IPv4 address to a QP connected over
//    IPv6 is dropped (kBadSrc); from host 2's IPv6 address too; from host
//    0's IPv6 address it is executed.
TEST(RcPeerAuth, Ipv6SourceChecked) {
  Auth c(0, 0, true);
  auto v6_write = [&](int src, uint8_t byte) {
    wire::RoceFrameSpec s = host_frame(src, 1, c.eb.qp->qp_num(), Opcode::kRcWriteOnly, 0x100);
    s.l2.src = host_mac(0);
    wire::Ipv6Spec ip6;
    ip6.src = host_ip6(src);
    ip6.dst = host_ip6(1);
    s.l3 = ip6;
    s.bth.ack_req = true;
    return craft(with_reth(s, c.eb.addr(), c.eb.mr->rkey, 64), std::vector<uint8_t>(64, byte));
  };
  feed(c.b, c.write(0, 0xFFFF, 0x100, 0x11));  // IPv4 from the right host
  feed(c.b, v6_write(2, 0x22));
  EXPECT_EQ(rx(c.eb.qp, rc::RxAction::kBadSrc), 2u);
  EXPECT_EQ(c.eb.buf[0], 0);
  feed(c.b, v6_write(0, 0x33));
  EXPECT_EQ(c.eb.buf[0], 0x33);
}

// 4. P_Key, default partition (QP pkey 0xFFFF): BTH P_Keys 0x1234 (another
//    partition), 0x0000 and 0x8000 (invalid) are dropped and counted kBadPkey
//    ("rx_bad_pkey"), nothing written, no frame out; 0x7FFF (a limited
//    member of the default partition, the QP a full member) is accepted.
TEST(RcPeerAuth, WrongPkeyDroppedAndCounted) {
  Auth c;
  feed(c.b, c.write(0, 0x1234, 0x100, 0xAB));
  feed(c.b, c.write(0, 0x0000, 0x100, 0xAB));
  feed(c.b, c.write(0, 0x8000, 0x100, 0xAB));
  EXPECT_EQ(rx(c.eb.qp, rc::RxAction::kBadPkey), 3u);
  EXPECT_STREQ(rc::to_string(rc::RxAction::kBadPkey), "rx_bad_pkey");
  EXPECT_EQ(app::host_json(c.b, 0)["rx_bad_pkey"], 3u);
  EXPECT_EQ(std::vector<uint8_t>(1 << 12, 0), c.eb.buf);
  EXPECT_TRUE(pull(c.b).empty());
  EXPECT_EQ(c.eb.qp->state(), v::QpState::kRts);
  feed(c.b, c.write(0, 0x7FFF, 0x100, 0xCD));
  EXPECT_EQ(c.eb.buf[0], 0xCD);
}

// 5. Membership: b's QP on partition 5 as a limited member (pkey_index 2,
//    0x0005). Expect: a limited-member frame (0x0005) dropped (two limited
//    members may not talk), the default partition (0xFFFF) dropped, a
//    full-member frame (0x8005) accepted. The frames b sends carry its P_Key.
//    A QP on index 1 (0x8005) accepts the limited 0x0005.
TEST(RcPeerAuth, PartitionMembership) {
  {
    Auth c(1, 2);
    feed(c.b, c.write(0, 0x0005, 0x100, 0x11));
    feed(c.b, c.write(0, 0xFFFF, 0x100, 0x11));
    EXPECT_EQ(rx(c.eb.qp, rc::RxAction::kBadPkey), 2u);
    EXPECT_EQ(c.eb.buf[0], 0);
    feed(c.b, c.write(0, 0x8005, 0x100, 0x22));
    EXPECT_EQ(c.eb.buf[0], 0x22);
    rte_mbuf* m = nullptr;
    ASSERT_EQ(c.b.transmit(0, {&m, 1}, TimeNs(0)), 1u);
    std::vector<uint8_t> bytes(m->pkt_len);
    std::memcpy(bytes.data(), rte_pktmbuf_read(m, 0, m->pkt_len, bytes.data()), m->pkt_len);
    rte_pktmbuf_free(m);
    const wire::FrameInfo fi = wire::parse_frame(bytes);
    ASSERT_TRUE(fi.ok());
    EXPECT_EQ(fi.bth->pkey.value(), 0x0005);
  }
  {
    Auth c(2, 1);
    feed(c.b, c.write(0, 0x0005, 0x100, 0x33));
    EXPECT_EQ(c.eb.buf[0], 0x33);
    EXPECT_EQ(rx(c.eb.qp, rc::RxAction::kBadPkey), 0u);
  }
}

// 6. modify_qp: a pkey_index beyond the table, or naming an invalid P_Key,
//    is EINVAL.
TEST(RcPeerAuth, PkeyIndexValidated) {
  NicConfig cfg = one_host_cfg(0);
  cfg.hosts[0].rc.pkey_table = {0xFFFF, 0x8000};
  NicNode n(cfg, sf::test::mbuf_pool());
  Endpoint e = make_endpoint(n, 0, 64);
  v::QpAttr a;
  a.qp_state = v::QpState::kInit;
  a.port_num = 1;
  a.qp_access_flags = kAllAccess;
  const int mask = v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags;
  a.pkey_index = 2;
  EXPECT_EQ(v::modify_qp(e.qp, &a, mask), EINVAL);
  a.pkey_index = 1;
  EXPECT_EQ(v::modify_qp(e.qp, &a, mask), EINVAL);
  a.pkey_index = 0;
  EXPECT_EQ(v::modify_qp(e.qp, &a, mask), 0);
}

}  // namespace
}  // namespace sf::nic::test
