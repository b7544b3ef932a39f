// Verbs objects and the RC QP state machine as pure logic (no mbufs):
// ibv_wc_status_str strings, MR key/bounds/access checks, CQ overrun, every
// modify_qp transition with its required and allowed attributes, value
// checks, and posting rules per state.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "nic/rc/qp.h"
#include "nic/rc/rnr_timer.h"
#include "nic/verbs/cq.h"
#include "nic/verbs/mr.h"
#include "nic/verbs/verbs.h"
#include "tests/unit/nic/qp_harness.h"

namespace sf::nic {
namespace {

namespace v = verbs;

// 1. Every ibv_wc_status has rdma-core's exact ibv_wc_status_str() text.
TEST(Verbs, WcStatusStringsMatchRdmaCore) {
  const char* const expected[] = {"success", "local length error", "local QP operation error",
                                  "local EE context operation error", "local protection error",
                                  "Work Request Flushed Error", "memory management operation error",
                                  "bad response error", "local access error", "remote invalid request error",
                                  "remote access error", "remote operation error", "transport retry counter exceeded",
                                  "RNR retry counter exceeded", "local RDD violation error",
                                  "remote invalid RD request", "aborted error", "invalid EE context number",
                                  "invalid EE context state", "fatal error", "response timeout error", "general error",
                                  "TM error", "TM software rendezvous"};
  for (int i = 0; i < 24; ++i) {
    EXPECT_STREQ(v::wc_status_str(i), expected[i]) << i;
    EXPECT_STREQ(v::to_string(static_cast<v::WcStatus>(i)), expected[i]);
  }
  EXPECT_STREQ(v::wc_status_str(24), "unknown");
  EXPECT_STREQ(v::wc_status_str(-1), "unknown");
  EXPECT_EQ(static_cast<int>(v::WcStatus::kRetryExcErr), 12);
  EXPECT_EQ(static_cast<int>(v::WcStatus::kRnrRetryExcErr), 13);
}

// 2. Enum values are ibv's.
TEST(Verbs, EnumValuesAreIbvs) {
  EXPECT_EQ(static_cast<int>(v::WcOpcode::kRecvRdmaWithImm), 129);
  EXPECT_EQ(static_cast<int>(v::WrOpcode::kRdmaRead), 4);
  EXPECT_EQ(v::kQpDestQpn, 1 << 20);
  EXPECT_EQ(v::kQpRateLimit, 1 << 25);
  EXPECT_EQ(v::mtu_bytes(v::Mtu::k256), 256u);
  EXPECT_EQ(v::mtu_bytes(v::Mtu::k4096), 4096u);
  EXPECT_EQ(v::mtu_bytes(static_cast<v::Mtu>(6)), 0u);
  EXPECT_EQ(rc::retx_timeout(14), TimeNs(4096ll << 14));
  EXPECT_EQ(rc::retx_timeout(0), TimeNs::max());
  EXPECT_EQ(rc::rnr_delay(1), TimeNs::from_us(10));
  EXPECT_EQ(rc::rnr_delay(0), TimeNs::from_us(655360));
  EXPECT_EQ(rc::rnr_delay(31), TimeNs::from_us(491520));
}

// 3. MR registration rules and checks: remote write needs local write; keys,
//    bounds (including an access one byte past the end), rights, PD.
TEST(Verbs, MrTableChecks) {
  v::MrTable t(2);
  v::Pd pd{nullptr, 1};
  v::Pd other{nullptr, 2};
  std::vector<uint8_t> buf(4096);
  int err = 0;
  EXPECT_EQ(t.add(&pd, buf.data(), buf.size(), v::kAccessRemoteWrite, &err), nullptr);
  EXPECT_EQ(err, EINVAL);
  EXPECT_EQ(t.add(&pd, buf.data(), buf.size(), 1 << 12, &err), nullptr);
  v::Mr* mr = t.add(&pd, buf.data(), buf.size(), v::kAccessLocalWrite | v::kAccessRemoteWrite, &err);
  ASSERT_NE(mr, nullptr);
  const uint64_t a = reinterpret_cast<uint64_t>(buf.data());
  EXPECT_EQ(t.check(mr->rkey, true, &pd, a, 4096, v::kAccessRemoteWrite), v::MrCheck::kOk);
  EXPECT_EQ(t.check(mr->rkey, true, &pd, a + 1, 4096, v::kAccessRemoteWrite), v::MrCheck::kOutOfRange);
  EXPECT_EQ(t.check(mr->rkey, true, &pd, a - 1, 2, v::kAccessRemoteWrite), v::MrCheck::kOutOfRange);
  EXPECT_EQ(t.check(mr->rkey, true, &pd, a + 4095, UINT64_MAX, v::kAccessRemoteWrite), v::MrCheck::kOutOfRange);
  EXPECT_EQ(t.check(mr->rkey, true, &pd, a, 16, v::kAccessRemoteRead), v::MrCheck::kNoAccess);
  EXPECT_EQ(t.check(mr->rkey, true, &pd, a, 16, 0), v::MrCheck::kNoAccess);
  EXPECT_EQ(t.check(mr->rkey, true, &other, a, 16, v::kAccessRemoteWrite), v::MrCheck::kWrongPd);
  EXPECT_EQ(t.check(mr->rkey + 1, true, &pd, a, 16, v::kAccessRemoteWrite), v::MrCheck::kBadKey);
  EXPECT_EQ(t.check(0xFFFFFF00u, true, &pd, a, 16, v::kAccessRemoteWrite), v::MrCheck::kBadKey);
  // A deregistered key stays dead when the slot is reused.
  const uint32_t old_key = mr->rkey;
  EXPECT_EQ(t.remove(mr), 0);
  v::Mr* again = t.add(&pd, buf.data(), buf.size(), v::kAccessLocalWrite | v::kAccessRemoteWrite, &err);
  ASSERT_NE(again, nullptr);
  EXPECT_NE(again->rkey, old_key);
  EXPECT_EQ(t.check(old_key, true, &pd, a, 16, v::kAccessRemoteWrite), v::MrCheck::kBadKey);
  EXPECT_NE(t.add(&pd, buf.data(), 16, 0, &err), nullptr);
  EXPECT_EQ(t.add(&pd, buf.data(), 16, 0, &err), nullptr);  // full
  EXPECT_EQ(err, ENOMEM);
}

// 3b. Memory keys: a key is (tag << b) | slot, the tag a keyed permutation
//     of the slot's registration count. Expect: tables with different seeds
//     give different keys, the same seed the same keys (deterministic in
//     tests and sf-sim); successive keys of one slot are not a progression;
//     a stale key of a slot matches again only after key_period()
//     registrations of that slot (2^(32 - b): 2^16 with 65536 slots, 2^26
//     with the default 64), never before.
TEST(Verbs, MrKeysUnpredictableAndStaleKeyBound) {
  v::Pd pd{nullptr, 1};
  std::vector<uint8_t> buf(64);
  int err = 0;
  auto keys = [&](uint64_t seed, int n) {
    v::MrTable t(64, seed);
    std::vector<uint32_t> k;
    for (int i = 0; i < n; ++i) {
      v::Mr* mr = t.add(&pd, buf.data(), buf.size(), v::kAccessLocalWrite, &err);
      EXPECT_NE(mr, nullptr);
      k.push_back(mr->rkey);
      EXPECT_EQ(mr->lkey, mr->rkey);
      EXPECT_EQ(t.remove(mr), 0);
    }
    return k;
  };
  const auto k1 = keys(1, 64);
  const auto k2 = keys(2, 64);
  EXPECT_EQ(k1, keys(1, 64));
  EXPECT_NE(k1[0], k2[0]);
  size_t same = 0;
  for (size_t i = 0; i < k1.size(); ++i) same += k1[i] == k2[i] ? 1 : 0;
  EXPECT_EQ(same, 0u);
  // One slot (0) reused: distinct tags, differences not constant.
  std::set<uint32_t> seen(k1.begin(), k1.end());
  EXPECT_EQ(seen.size(), k1.size());
  std::set<uint32_t> diffs;
  for (size_t i = 1; i < k1.size(); ++i) diffs.insert(k1[i] - k1[i - 1]);
  EXPECT_GT(diffs.size(), k1.size() / 2);
  EXPECT_EQ(v::MrTable(64).index_bits(), 6u);
  EXPECT_EQ(v::MrTable(64).key_period(), uint64_t{1} << 26);
  EXPECT_THROW(v::MrTable(0), std::invalid_argument);
  EXPECT_THROW(v::MrTable(65537), std::invalid_argument);
  // The bound, exactly: 65536 slots leave a 16-bit tag.
  v::MrTable big(65536, 7);
  ASSERT_EQ(big.key_period(), 65536u);
  v::Mr* first = big.add(&pd, buf.data(), buf.size(), v::kAccessLocalWrite, &err);
  const uint32_t stale = first->rkey;
  ASSERT_EQ(big.remove(first), 0);
  for (uint64_t i = 1; i <= big.key_period(); ++i) {
    v::Mr* mr = big.add(&pd, buf.data(), buf.size(), v::kAccessLocalWrite, &err);
    ASSERT_NE(mr, nullptr);
    ASSERT_EQ(mr->handle, 0u);
    if (i < big.key_period()) {
      ASSERT_EQ(big.check(stale, false, &pd, reinterpret_cast<uint64_t>(buf.data()), 1, 0), v::MrCheck::kBadKey) << i;
    } else {
      EXPECT_EQ(mr->rkey, stale);  // the period: only now
    }
    ASSERT_EQ(big.remove(mr), 0);
  }
}

// 4. CQ overrun: the completion that does not fit is lost and counted, the
//    stored ones are returned, then poll reports the overrun.
TEST(Verbs, CqOverrunIsAnErrorReturn) {
  v::Cq cq(nullptr, 2);
  v::Wc wc;
  EXPECT_TRUE(cq.push(wc));
  EXPECT_TRUE(cq.push(wc));
  EXPECT_FALSE(cq.push(wc));
  EXPECT_TRUE(cq.overrun());
  EXPECT_EQ(cq.lost(), 1u);
  v::Wc out[4];
  EXPECT_EQ(cq.poll(out), 2);
  EXPECT_EQ(cq.poll(out), -EOVERFLOW);
}

// A QP with its environment, without a node (no mbufs needed for the
// control path).
struct QpBench : test::QpHarness {
  QpBench() : QpHarness(4, 2) {}
  static v::QpAttr init_attr() {
    v::QpAttr a;
    a.qp_state = v::QpState::kInit;
    a.port_num = 1;
    a.qp_access_flags = v::kAccessRemoteWrite;
    return a;
  }
  static constexpr int kInitMask = v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags;
  static v::QpAttr rtr_attr() {
    v::QpAttr a;
    a.qp_state = v::QpState::kRtr;
    a.path_mtu = v::Mtu::k1024;
    a.dest_qp_num = 0x22;
    a.rq_psn = 0x123;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = v::gid_from_ipv4({{10, 0, 0, 2}});
    return a;
  }
  static constexpr int kRtrMask = v::kQpState | v::kQpAv | v::kQpPathMtu | v::kQpDestQpn | v::kQpRqPsn |
                                  v::kQpMaxDestRdAtomic | v::kQpMinRnrTimer;
  static v::QpAttr rts_attr() {
    v::QpAttr a;
    a.qp_state = v::QpState::kRts;
    a.sq_psn = 0xFFFFF0;
    a.max_rd_atomic = 4;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.timeout = 14;
    return a;
  }
  static constexpr int kRtsMask =
      v::kQpState | v::kQpSqPsn | v::kQpMaxQpRdAtomic | v::kQpRetryCnt | v::kQpRnrRetry | v::kQpTimeout;
  int post(uint64_t id, int num_sge = 1, v::WrOpcode op = v::WrOpcode::kSend) {
    v::Sge sge[4] = {{reinterpret_cast<uint64_t>(buf.data()), 100, mr->lkey}, {reinterpret_cast<uint64_t>(buf.data()), 1, mr->lkey},
                     {}, {}};
    v::SendWr wr;
    wr.wr_id = id;
    wr.sg_list = sge;
    wr.num_sge = num_sge;
    wr.opcode = op;
    wr.send_flags = v::kSendSignaled;
    v::SendWr* bad = nullptr;
    return qp.post_send(&wr, &bad, TimeNs(0));
  }
};

// 5. RESET -> INIT needs STATE, PKEY_INDEX, PORT, ACCESS_FLAGS: each missing
//    bit fails with EINVAL and leaves the QP in RESET; an illegal jump
//    (RESET -> RTR / RTS) fails; the full set succeeds.
TEST(QpStateMachine, ResetToInitRequiredAttributes) {
  QpBench b;
  for (int bit : {v::kQpPkeyIndex, v::kQpPort, v::kQpAccessFlags}) {
    EXPECT_EQ(b.qp.modify(QpBench::init_attr(), QpBench::kInitMask & ~bit, TimeNs(0)), EINVAL) << bit;
    EXPECT_EQ(b.qp.state(), v::QpState::kReset);
  }
  EXPECT_EQ(b.qp.modify(QpBench::rtr_attr(), QpBench::kRtrMask, TimeNs(0)), EINVAL);
  EXPECT_EQ(b.qp.modify(QpBench::rts_attr(), QpBench::kRtsMask, TimeNs(0)), EINVAL);
  v::QpAttr bad_port = QpBench::init_attr();
  bad_port.port_num = 2;  // the host has one port
  EXPECT_EQ(b.qp.modify(bad_port, QpBench::kInitMask, TimeNs(0)), EINVAL);
  bad_port.port_num = 0;
  EXPECT_EQ(b.qp.modify(bad_port, QpBench::kInitMask, TimeNs(0)), EINVAL);
  // An attribute not allowed in this transition.
  EXPECT_EQ(b.qp.modify(QpBench::init_attr(), QpBench::kInitMask | v::kQpSqPsn, TimeNs(0)), EINVAL);
  EXPECT_EQ(b.qp.state(), v::QpState::kReset);
  EXPECT_EQ(b.qp.modify(QpBench::init_attr(), QpBench::kInitMask, TimeNs(0)), 0);
  EXPECT_EQ(b.qp.state(), v::QpState::kInit);
}

// 6. INIT -> RTR: every required bit, and the value checks (MTU enum, 24-bit
//    PSN and QPN, global AV with a GID of the host's family, sl, RNR code).
//    A failure changes nothing (all-or-nothing).
TEST(QpStateMachine, InitToRtrRequiredAttributesAndValues) {
  QpBench b;
  ASSERT_EQ(b.qp.modify(QpBench::init_attr(), QpBench::kInitMask, TimeNs(0)), 0);
  for (int bit : {v::kQpAv, v::kQpPathMtu, v::kQpDestQpn, v::kQpRqPsn, v::kQpMaxDestRdAtomic, v::kQpMinRnrTimer}) {
    EXPECT_EQ(b.qp.modify(QpBench::rtr_attr(), QpBench::kRtrMask & ~bit, TimeNs(0)), EINVAL) << bit;
  }
  auto bad = [&](auto mutate) {
    v::QpAttr a = QpBench::rtr_attr();
    mutate(a);
    return b.qp.modify(a, QpBench::kRtrMask, TimeNs(0));
  };
  EXPECT_EQ(bad([](v::QpAttr& a) { a.path_mtu = static_cast<v::Mtu>(0); }), EINVAL);
  EXPECT_EQ(bad([](v::QpAttr& a) { a.path_mtu = static_cast<v::Mtu>(6); }), EINVAL);
  EXPECT_EQ(bad([](v::QpAttr& a) { a.rq_psn = 1u << 24; }), EINVAL);
  EXPECT_EQ(bad([](v::QpAttr& a) { a.dest_qp_num = 1u << 24; }), EINVAL);
  EXPECT_EQ(bad([](v::QpAttr& a) { a.ah_attr.is_global = 0; }), EINVAL);
  EXPECT_EQ(bad([](v::QpAttr& a) { a.ah_attr.grh.sgid_index = 1; }), EINVAL);  // the host has no IPv6 GID
  EXPECT_EQ(bad([](v::QpAttr& a) { a.ah_attr.grh.dgid = v::Gid{{0xFD}}; }), EINVAL);  // IPv6 peer from an IPv4 GID
  EXPECT_EQ(bad([](v::QpAttr& a) { a.ah_attr.sl = 8; }), EINVAL);
  EXPECT_EQ(bad([](v::QpAttr& a) { a.min_rnr_timer = 32; }), EINVAL);
  EXPECT_EQ(bad([](v::QpAttr& a) { a.max_dest_rd_atomic = 200; }), EINVAL);
  EXPECT_EQ(b.qp.modify(QpBench::rtr_attr(), QpBench::kRtrMask | v::kQpSqPsn, TimeNs(0)), EINVAL);
  EXPECT_EQ(b.qp.state(), v::QpState::kInit);
  EXPECT_EQ(b.qp.modify(QpBench::rtr_attr(), QpBench::kRtrMask, TimeNs(0)), 0);
  EXPECT_EQ(b.qp.state(), v::QpState::kRtr);
  EXPECT_EQ(b.qp.expected_psn(), wire::Psn(0x123));
}

// 7. RTR -> RTS: required bits and ranges (timeout 5 bits, retry and RNR
//    retry 3 bits); RTS -> RTS allows only the optional set; query returns
//    the attributes.
TEST(QpStateMachine, RtrToRtsAndRtsModify) {
  QpBench b;
  ASSERT_EQ(b.qp.modify(QpBench::init_attr(), QpBench::kInitMask, TimeNs(0)), 0);
  ASSERT_EQ(b.qp.modify(QpBench::rtr_attr(), QpBench::kRtrMask, TimeNs(0)), 0);
  for (int bit : {v::kQpSqPsn, v::kQpMaxQpRdAtomic, v::kQpRetryCnt, v::kQpRnrRetry, v::kQpTimeout}) {
    EXPECT_EQ(b.qp.modify(QpBench::rts_attr(), QpBench::kRtsMask & ~bit, TimeNs(0)), EINVAL) << bit;
  }
  v::QpAttr a = QpBench::rts_attr();
  a.timeout = 32;
  EXPECT_EQ(b.qp.modify(a, QpBench::kRtsMask, TimeNs(0)), EINVAL);
  a = QpBench::rts_attr();
  a.retry_cnt = 8;
  EXPECT_EQ(b.qp.modify(a, QpBench::kRtsMask, TimeNs(0)), EINVAL);
  a = QpBench::rts_attr();
  a.rnr_retry = 8;
  EXPECT_EQ(b.qp.modify(a, QpBench::kRtsMask, TimeNs(0)), EINVAL);
  EXPECT_EQ(b.qp.state(), v::QpState::kRtr);
  ASSERT_EQ(b.qp.modify(QpBench::rts_attr(), QpBench::kRtsMask, TimeNs(0)), 0);
  EXPECT_EQ(b.qp.state(), v::QpState::kRts);
  v::QpAttr m;
  m.min_rnr_timer = 5;
  EXPECT_EQ(b.qp.modify(m, v::kQpMinRnrTimer, TimeNs(0)), 0);
  EXPECT_EQ(b.qp.modify(m, v::kQpSqPsn, TimeNs(0)), EINVAL);
  m.cur_qp_state = v::QpState::kRtr;
  EXPECT_EQ(b.qp.modify(m, v::kQpCurState | v::kQpMinRnrTimer, TimeNs(0)), EINVAL);
  v::QpAttr q;
  v::QpInitAttr qi;
  ASSERT_EQ(b.qp.query(&q, &qi), 0);
  EXPECT_EQ(q.qp_state, v::QpState::kRts);
  EXPECT_EQ(q.min_rnr_timer, 5);
  EXPECT_EQ(q.timeout, 14);
  EXPECT_EQ(q.sq_psn, 0xFFFFF0u);
  EXPECT_EQ(qi.cap.max_send_wr, 4u);
}

// 8. Posting per state: post_send is EINVAL in RESET, INIT, RTR; post_recv
//    EINVAL in RESET and fine from INIT. In RTS: too many SGEs -> EINVAL
//    with bad_wr, a full send queue -> ENOMEM, a bad lkey is accepted (a
//    completion error later, as in verbs).
TEST(QpStateMachine, PostingRulesPerState) {
  QpBench b;
  EXPECT_EQ(b.post(1), EINVAL);
  v::Sge sge{reinterpret_cast<uint64_t>(b.buf.data()), 64, b.mr->lkey};
  v::RecvWr rw;
  rw.sg_list = &sge;
  rw.num_sge = 1;
  v::RecvWr* rbad = nullptr;
  EXPECT_EQ(b.qp.post_recv(&rw, &rbad, TimeNs(0)), EINVAL);
  EXPECT_EQ(rbad, &rw);
  ASSERT_EQ(b.qp.modify(QpBench::init_attr(), QpBench::kInitMask, TimeNs(0)), 0);
  EXPECT_EQ(b.post(1), EINVAL);
  EXPECT_EQ(b.qp.post_recv(&rw, &rbad, TimeNs(0)), 0);
  ASSERT_EQ(b.qp.modify(QpBench::rtr_attr(), QpBench::kRtrMask, TimeNs(0)), 0);
  EXPECT_EQ(b.post(1), EINVAL);
  ASSERT_EQ(b.qp.modify(QpBench::rts_attr(), QpBench::kRtsMask, TimeNs(0)), 0);
  EXPECT_EQ(b.post(1, 3), EINVAL);  // max_send_sge = 2
  EXPECT_EQ(b.post(1, -1), EINVAL);
  EXPECT_EQ(b.post(1, 1, static_cast<v::WrOpcode>(9)), EINVAL);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(b.post(10 + i), 0);
  EXPECT_EQ(b.post(20), ENOMEM);
  EXPECT_EQ(b.qp.sq_outstanding(), 4u);
  // PSNs are assigned per packet at post (MTU 1024: 100 B = 1 packet each),
  // wrapping 24 bits: 0xFFFFF0 + 4.
  EXPECT_EQ(b.qp.next_psn(), wire::Psn(0xFFFFF4));
}

// 9. Any state -> ERR flushes every outstanding WR with WR_FLUSH_ERR (also
//    unsignaled ones, and receives); ERR -> RESET -> INIT works again.
TEST(QpStateMachine, ErrorFlushesAndResetRecovers) {
  QpBench b;
  ASSERT_EQ(b.qp.modify(QpBench::init_attr(), QpBench::kInitMask, TimeNs(0)), 0);
  ASSERT_EQ(b.qp.modify(QpBench::rtr_attr(), QpBench::kRtrMask, TimeNs(0)), 0);
  ASSERT_EQ(b.qp.modify(QpBench::rts_attr(), QpBench::kRtsMask, TimeNs(0)), 0);
  ASSERT_EQ(b.post(1), 0);
  ASSERT_EQ(b.post(2), 0);
  v::Sge sge{reinterpret_cast<uint64_t>(b.buf.data()), 64, b.mr->lkey};
  v::RecvWr rw;
  rw.wr_id = 77;
  rw.sg_list = &sge;
  rw.num_sge = 1;
  ASSERT_EQ(b.qp.post_recv(&rw, nullptr, TimeNs(0)), 0);
  v::QpAttr e;
  e.qp_state = v::QpState::kErr;
  ASSERT_EQ(b.qp.modify(e, v::kQpState, TimeNs(0)), 0);
  v::Wc wc[8];
  ASSERT_EQ(b.scq.poll(wc), 2);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kWrFlushErr);
  EXPECT_EQ(wc[1].wr_id, 2u);
  ASSERT_EQ(b.rcq.poll(wc), 1);
  EXPECT_EQ(wc[0].wr_id, 77u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kWrFlushErr);
  EXPECT_EQ(wc[0].opcode, v::WcOpcode::kRecv);
  // ERR -> RTS is illegal; ERR -> RESET -> INIT is fine.
  EXPECT_EQ(b.qp.modify(QpBench::rts_attr(), QpBench::kRtsMask, TimeNs(0)), EINVAL);
  v::QpAttr r;
  r.qp_state = v::QpState::kReset;
  ASSERT_EQ(b.qp.modify(r, v::kQpState, TimeNs(0)), 0);
  EXPECT_EQ(b.qp.sq_outstanding(), 0u);
  EXPECT_EQ(b.qp.modify(QpBench::init_attr(), QpBench::kInitMask, TimeNs(0)), 0);
}

// 10. CQ overrun while flushing: the QP is in ERR, the lost completions are
//     counted on the QP and the CQ reports the overrun.
TEST(QpStateMachine, CqOverrunCounted) {
  QpBench b;
  v::Cq tiny(nullptr, 1);
  rc::Qp qp;
  rc::QpEnv env{nullptr, &b.mrs, &b.local, &b.cfg, 1};
  v::QpInitAttr ia;
  ia.send_cq = &tiny;
  ia.recv_cq = &tiny;
  ia.cap.max_send_wr = 4;
  ia.cap.max_recv_wr = 4;
  ASSERT_EQ(qp.create(env, 0x12, &b.pd, ia), 0);
  ASSERT_EQ(qp.modify(QpBench::init_attr(), QpBench::kInitMask, TimeNs(0)), 0);
  v::Sge sge{reinterpret_cast<uint64_t>(b.buf.data()), 64, b.mr->lkey};
  for (int i = 0; i < 3; ++i) {
    v::RecvWr rw;
    rw.sg_list = &sge;
    rw.num_sge = 1;
    ASSERT_EQ(qp.post_recv(&rw, nullptr, TimeNs(0)), 0);
  }
  v::QpAttr e;
  e.qp_state = v::QpState::kErr;
  ASSERT_EQ(qp.modify(e, v::kQpState, TimeNs(0)), 0);
  EXPECT_EQ(qp.counters().cq_overruns, 2u);
  v::Wc wc[4];
  EXPECT_EQ(tiny.poll(wc), 1);
  EXPECT_EQ(tiny.poll(wc), -EOVERFLOW);
}


// 11. docs/nic.md shows the verbs example that RcFabric.DocsVerbsExampleRuns
//     compiles and runs: the span between "// 8< verbs-example" and "// >8"
//     in the test source appears verbatim in the doc (STYLE G15).
TEST(NicDocs, VerbsExampleMatchesSource) {
  const char* root = std::getenv("SF_SOURCE_ROOT");
  ASSERT_NE(root, nullptr) << "run through meson test";
  auto slurp = [](const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  const std::string src = slurp(std::string(root) + "/tests/unit/nic/rc_fabric_test.cc");
  const std::string doc = slurp(std::string(root) + "/docs/nic.md");
  const std::string open = "// 8< verbs-example\n";
  const auto a = src.find(open);
  const auto b = src.find("// >8\n", a);
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  const std::string span = src.substr(a + open.size(), b - a - open.size());
  EXPECT_GT(span.size(), 500u);
  EXPECT_NE(doc.find(span), std::string::npos) << "docs/nic.md does not contain the example from rc_fabric_test.cc";
}


// 12. A ZERO_BASED MR: remote addresses are offsets (translated to the
//     process address), bounded by the MR length; local keys still take
//     process addresses.
TEST(Verbs, ZeroBasedMr) {
  v::MrTable t(2);
  v::Pd pd{nullptr, 1};
  std::vector<uint8_t> buf(1000);
  int err = 0;
  v::Mr* mr = t.add(&pd, buf.data(), buf.size(), v::kAccessLocalWrite | v::kAccessRemoteWrite | v::kAccessZeroBased, &err);
  ASSERT_NE(mr, nullptr);
  uint64_t local = 0;
  EXPECT_EQ(t.check(mr->rkey, true, &pd, 100, 900, v::kAccessRemoteWrite, nullptr, &local), v::MrCheck::kOk);
  EXPECT_EQ(local, reinterpret_cast<uint64_t>(buf.data()) + 100);
  EXPECT_EQ(t.check(mr->rkey, true, &pd, 101, 900, v::kAccessRemoteWrite), v::MrCheck::kOutOfRange);
  EXPECT_EQ(t.check(mr->rkey, true, &pd, reinterpret_cast<uint64_t>(buf.data()), 8, v::kAccessRemoteWrite),
            v::MrCheck::kOutOfRange);
  EXPECT_EQ(t.check(mr->lkey, false, &pd, reinterpret_cast<uint64_t>(buf.data()), 8, 0, nullptr, &local),
            v::MrCheck::kOk);
  EXPECT_EQ(local, reinterpret_cast<uint64_t>(buf.data()));
}

}  // namespace
}  // namespace sf::nic
