// The MRC QP's cached deadline (mrc::Transport::next_deadline, docs/mrc.md
// "Deadline cache"): after every node call of random runs in virtual time
// (WRITEs both ways, frames dropped / duplicated / trimmed / CE-marked, EVs
// black-holed until they retire and their probes run, ports down and up,
// the RTO changed in RTS,
// QPs moved to ERR by modify_qp, by a NACK, by retry exhaustion and by a
// CQ overrun inside rc code, reset and connected again) the cached value
// equals the one computed from the timers (compute_deadline). A write of
// one of the deadline's inputs that does not invalidate the cache shows up
// at the first check after it.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/rng.h"
#include "tests/unit/nic/mrc_qp_harness.h"

namespace sf::nic::test {
namespace {

// make_mrc_endpoint with 64 WRs a queue and a send CQ of `scq_entries` (a
// small one overruns).
Endpoint make_ep(NicNode& node, size_t buf_bytes, int scq_entries) {
  return make_mrc_endpoint(node, buf_bytes, 64, scq_entries);
}

// Both QPs in RESET (from any state), then connected with `a` / `mask`;
// with planes > 1 each is told the peer's per-plane addresses.
void connect(MrcRig& rig, Endpoint& x, Endpoint& y, v::MrcQpAttr a, int mask, uint8_t planes, uint32_t psn) {
  for (Endpoint* e : {&x, &y}) {
    v::QpAttr r;
    r.qp_state = v::QpState::kReset;
    ASSERT_EQ(v::modify_qp(e->qp, &r, v::kQpState), 0);
  }
  if (planes > 1) {
    tell_peer_planes(rig, x, y, a, mask, planes);
    mask = 0;
  }
  ConnParams p;
  p.sq_psn = psn;
  p.rq_psn = (psn + 0x777) & 0xFFFFFF;
  connect_mrc(x, y, mask != 0 ? &a : nullptr, mask, p);
}

struct Coverage {
  uint64_t checks = 0;
  uint64_t timeouts = 0;
  uint64_t retired = 0;
  uint64_t ev_probes = 0;
  uint64_t ev_probe_answers = 0;
  uint64_t probes = 0;
  uint64_t nacks = 0;
  uint64_t port_status = 0;
  uint64_t errs = 0;
  uint64_t overruns = 0;
};

// One random run of `actions` steps; every node call checked.
void random_run(uint64_t seed, uint8_t planes, int actions, Coverage* cov) {
  Rng rng(seed);
  MrcRig rig(planes, BitRate::gbps(100), TimeNs::from_us(1));
  rig.burst = 1 + rng.below(2) * 7;  // 1 or 8 frames per transmit call
  const size_t buf = 256 * 1024;
  const bool small_cq = rng.below(2) == 0;  // x's send CQ overruns
  Endpoint x = make_ep(rig.a, buf, small_cq ? 2 : 4096);
  Endpoint y = make_ep(rig.b, buf, 4096);
  fill_pattern(x.buf, static_cast<uint32_t>(seed));
  fill_pattern(y.buf, static_cast<uint32_t>(seed + 1));
  v::MrcQpAttr a;
  a.num_evs = static_cast<uint16_t>(8 * planes);
  a.backup_per_plane = 2;
  a.rto_ns = 30000;
  a.ooo_tolerance_ns = 4000 + static_cast<uint32_t>(rng.below(4000));
  a.probe_interval_ns = 6000 + static_cast<uint32_t>(rng.below(6000));
  a.ev_probe_interval_ns = 3000 + static_cast<uint32_t>(rng.below(5000));
  a.max_timeouts = static_cast<uint8_t>(2 + rng.below(4));
  a.sack_every_pkts = static_cast<uint16_t>(1 + rng.below(8));
  a.sack_delay_ns = static_cast<uint32_t>(500 + rng.below(3000));
  a.ev_probe_endpoint = rng.below(2) == 0;  // retired EVs probed by ENDPOINT EV_PROBEs (answered by EETHs)
  const int mask = v::kMrcNumEvs | v::kMrcBackupPerPlane | v::kMrcRto | v::kMrcOooTolerance | v::kMrcProbeInterval |
                   v::kMrcEvProbeInterval | v::kMrcMaxTimeouts | v::kMrcSackCoalesce | v::kMrcEvProbeEndpoint;
  uint32_t psn = static_cast<uint32_t>(rng.below(1u << 24));
  connect(rig, x, y, a, mask, planes, psn);

  int reported = 0;
  rig.on_step = [&] {
    for (Endpoint* e : {&x, &y}) {
      const mrc::Transport* t = e->qp->mrc();
      if (t == nullptr) continue;
      ++cov->checks;
      const TimeNs cached = t->next_deadline();
      const TimeNs fresh = t->compute_deadline();
      if (cached != fresh && reported++ < 5) {
        ADD_FAILURE() << "seed " << seed << " planes " << int{planes} << " at " << rig.now.ns() << " ns, QP "
                      << e->qp->qp_num() << " (" << v::to_string(e->qp->state()) << "): cached deadline "
                      << cached.ns() << " ns, computed " << fresh.ns() << " ns";
      }
    }
  };
  double p_drop = 0, p_dup = 0, p_trim = 0, p_ce = 0;
  bool blackhole = false;
  rig.filter = [&](const LinkPkt& k) {
    if (blackhole && k.data && k.ev % 5 == 1) return Fate::kDrop;
    const double u = static_cast<double>(rng.below(1u << 20)) / (1u << 20);
    if (u < p_drop) return Fate::kDrop;
    if (u < p_drop + p_dup) return Fate::kDup;
    if (k.data && u < p_drop + p_dup + p_trim) return Fate::kTrim;
    if (u < p_drop + p_dup + p_trim + p_ce) return Fate::kCe;
    return Fate::kDeliver;
  };
  uint64_t id = 0;
  std::vector<bool> port_up(planes, true);
  for (int step = 0; step < actions; ++step) {
    const uint32_t r = static_cast<uint32_t>(rng.below(24));
    Endpoint& src = rng.below(3) == 0 ? y : x;
    Endpoint& dst = &src == &x ? y : x;
    if (r < 9) {
      const auto len = static_cast<uint32_t>(1 + rng.below(64 * 1024));
      const uint64_t off = rng.below(buf - len);
      post_write(src, ++id, off, len, dst.addr() + off, dst.mr->rkey);
    } else if (r == 9) {
      // Past the peer's MR: NACK ACCESS_ERROR, both QPs to ERR.
      post_write(src, ++id, 0, 8192, dst.addr() + buf - 4096, dst.mr->rkey);
    } else if (r < 13) {
      p_drop = rng.below(4) == 0 ? 0.0 : static_cast<double>(rng.below(20)) / 100;
      p_dup = static_cast<double>(rng.below(5)) / 100;
      p_trim = static_cast<double>(rng.below(10)) / 100;
      p_ce = static_cast<double>(rng.below(10)) / 100;
    } else if (r == 13) {
      blackhole = !blackhole;
    } else if (r == 14) {
      // A port (plane) down or up at one end, its link with it.
      const auto port = static_cast<PortId>(rng.below(planes));
      port_up[port] = !port_up[port];
      rig.link_up[port] = port_up[port];
      (rng.below(2) == 0 ? rig.a : rig.b).set_port_up(port, port_up[port]);
    } else if (r == 15) {
      v::QpAttr e;
      e.qp_state = v::QpState::kErr;
      ASSERT_EQ(v::modify_qp(src.qp, &e, v::kQpState), 0);
    } else if (r == 16) {
      // A tunable in RTS: the RTO (a retired-EV probe's timeout follows it).
      v::MrcQpAttr t = a;
      t.rto_ns = 20000 + static_cast<uint32_t>(rng.below(40000));
      ASSERT_EQ(v::mrc_modify_qp(src.qp, &t, v::kMrcRto), 0) << src.qp->mrc_error();
    } else if (r == 17 || x.qp->state() == v::QpState::kErr || y.qp->state() == v::QpState::kErr) {
      if (x.qp->state() == v::QpState::kErr) ++cov->errs;
      if (y.qp->state() == v::QpState::kErr) ++cov->errs;
      cov->overruns += x.qp->counters().cq_overruns;
      cov->timeouts += mctr(x).timeouts + mctr(y).timeouts;
      cov->probes += mctr(x).tx_probes + mctr(y).tx_probes;
      cov->ev_probes += mctr(x).tx_ev_probes + mctr(y).tx_ev_probes;
      cov->ev_probe_answers += mctr(x).rx[static_cast<int>(mrc::MrcRx::kEvProbeAnswered)] +
                               mctr(y).rx[static_cast<int>(mrc::MrcRx::kEvProbeAnswered)];
      cov->nacks += mctr(x).tx_nacks + mctr(y).tx_nacks;
      cov->port_status += mctr(x).tx_port_status + mctr(y).tx_port_status;
      for (Endpoint* e : {&x, &y}) {
        const mrc::EvSet* s = e->qp->mrc()->ev_set();
        for (uint16_t i = 0; s != nullptr && i < s->size(); ++i) cov->retired += s->counters(i).retired;
      }
      if (rng.below(2) == 0) {
        drain(x.scq);
        drain(y.scq);
        psn = static_cast<uint32_t>(rng.below(1u << 24));
        connect(rig, x, y, a, mask, planes, psn);
        for (uint8_t k = 0; k < planes; ++k) {
          if (!port_up[k]) {
            port_up[k] = true;
            rig.link_up[k] = true;
            rig.a.set_port_up(k, true);
            rig.b.set_port_up(k, true);
          }
        }
      }
    }
    rig.on_step();
    rig.run_for(TimeNs(static_cast<int64_t>(rng.below(rng.below(4) == 0 ? 200000 : 20000))));
    if (rng.below(small_cq ? 10 : 2) == 0) drain(x.scq);
    drain(y.scq);
  }
  rig.on_step = nullptr;
}

// 1. One plane: 200 random runs of 80 steps, every node call checked; the
//    runs between them time out, retire EVs and probe them, NACK, send
//    port status, move QPs to ERR (modify_qp, NACK, retry exhaustion, CQ
//    overrun).
TEST(MrcDeadline, CachedEqualsComputedOnePlane) {
  Coverage cov;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    random_run(seed, 1, 80, &cov);
    if (HasFailure()) return;
  }
  EXPECT_GT(cov.checks, 100000u);
  EXPECT_GT(cov.timeouts, 0u);
  EXPECT_GT(cov.retired, 0u);
  EXPECT_GT(cov.probes, 0u);
  EXPECT_GT(cov.ev_probes, 0u);
  EXPECT_GT(cov.ev_probe_answers, 0u);
  EXPECT_GT(cov.nacks, 0u);
  EXPECT_GT(cov.port_status, 0u);
  EXPECT_GT(cov.errs, 0u);
  EXPECT_GT(cov.overruns, 0u);
  std::printf("checks %llu timeouts %llu retired %llu probes %llu ev_probes %llu nacks %llu port_status %llu errs %llu "
              "overruns %llu\n",
              static_cast<unsigned long long>(cov.checks), static_cast<unsigned long long>(cov.timeouts),
              static_cast<unsigned long long>(cov.retired), static_cast<unsigned long long>(cov.probes),
              static_cast<unsigned long long>(cov.ev_probes), static_cast<unsigned long long>(cov.nacks),
              static_cast<unsigned long long>(cov.port_status), static_cast<unsigned long long>(cov.errs),
              static_cast<unsigned long long>(cov.overruns));
}

// 2. Two planes (2-port hosts): the same over 80 runs, planes going down
//    and up at either end (port-status updates both ways).
TEST(MrcDeadline, CachedEqualsComputedTwoPlanes) {
  Coverage cov;
  for (uint64_t seed = 1001; seed <= 1080; ++seed) {
    random_run(seed, 2, 80, &cov);
    if (HasFailure()) return;
  }
  EXPECT_GT(cov.checks, 50000u);
  EXPECT_GT(cov.port_status, 0u);
  EXPECT_GT(cov.timeouts, 0u);
}

}  // namespace
}  // namespace sf::nic::test
