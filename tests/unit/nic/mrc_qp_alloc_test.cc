// STYLE G6: an MRC QP allocates nothing after create / modify_qp: two
// NicNodes back to back, WRITE and WRITE_IMM messages posted and completed
// in a steady state with every 37th frame of the requester lost (SACK holes,
// retransmissions on other EVs, EV retirements and probes); zero operator
// new calls; the same in SRv6 mode (IPv6-in-IPv6, the outer DA per EV). A
// binary of its own (alloc_count.h replaces operator new).
#include <gtest/gtest.h>

#include <array>

// alloc_count.h's operator delete frees what its operator new malloc'ed;
// -Wmismatched-new-delete cannot see that once it inlines them (release builds).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#include "tests/support/alloc_count.h"
#include "tests/unit/nic/mrc_qp_harness.h"

namespace sf::nic::test {
namespace {

void steady_state(bool srv6) {
  NicNode a(mrc_node_cfg(0, 1, BitRate::gbps(100)), sf::test::mbuf_pool());
  NicNode b(mrc_node_cfg(1, 1, BitRate::gbps(100)), sf::test::mbuf_pool());
  Endpoint x = make_mrc_endpoint(a, 1 << 20);
  Endpoint y = make_mrc_endpoint(b, 1 << 20);
  fill_pattern(x.buf, 1);
  if (srv6) {
    v::MrcQpAttr m;
    m.ev_mode = v::MrcEvMode::kSrv6;
    m.srv6.block[0] = 0xFC;
    m.srv6.block[1] = 0xBB;
    m.srv6.num_planes = 1;
    m.srv6.plane[0].num_before = 1;
    m.srv6.plane[0].before[0] = 0x1;
    m.srv6.plane[0].num_uplinks = 4;
    for (uint16_t u = 0; u < 4; ++u) m.srv6.plane[0].uplinks[u] = static_cast<uint16_t>(0x10 + u);
    m.srv6.plane[0].num_after = 2;
    m.srv6.plane[0].after[0] = 0x2;
    m.srv6.plane[0].after[1] = 0x8001;
    ConnParams p;
    p.ipv6 = true;
    connect_mrc(x, y, &m, v::kMrcEvMode | v::kMrcSrv6Path, p);
  } else {
    connect_mrc(x, y);
  }
  std::array<rte_mbuf*, 32> out{};
  std::array<v::Wc, 16> wc{};
  TimeNs now{0};
  uint64_t frames = 0, posted = 0, done = 0, recvs = 0;
  auto step = [&] {
    now = now + TimeNs(300);
    a.advance(now);
    b.advance(now);
    uint16_t k = a.transmit(0, out, now);
    uint16_t keep = 0;
    for (uint16_t i = 0; i < k; ++i) {
      if (++frames % 37 == 0) {
        rte_pktmbuf_free(out[i]);
      } else {
        out[keep++] = out[i];
      }
    }
    b.receive(0, std::span<rte_mbuf*>(out.data(), keep), now);
    k = b.transmit(0, out, now);
    a.receive(0, std::span<rte_mbuf*>(out.data(), k), now);
    for (int n = v::poll_cq(x.scq, 16, wc.data()); n > 0; n = v::poll_cq(x.scq, 16, wc.data())) {
      for (int i = 0; i < n; ++i) EXPECT_EQ(wc[i].status, v::WcStatus::kSuccess);
      done += static_cast<uint64_t>(n);
    }
    for (int n = v::poll_cq(y.rcq, 16, wc.data()); n > 0; n = v::poll_cq(y.rcq, 16, wc.data())) {
      recvs += static_cast<uint64_t>(n);
    }
    while (posted - done < 8) {
      const bool imm = posted % 2 == 1;
      if (imm) {
        EXPECT_EQ(post_recv(y, posted, 0, 0), 0);
      }
      EXPECT_EQ(post_write(x, posted, 0, 65536, y.addr() + (posted % 8) * 65536, y.mr->rkey,
                           imm ? v::WrOpcode::kRdmaWriteWithImm : v::WrOpcode::kRdmaWrite, 7),
                0);
      ++posted;
    }
  };
  for (int i = 0; i < 20000; ++i) step();  // warm up: every ring and table touched
  const uint64_t before = sf::test::allocations();
  const uint64_t done0 = done;
  for (int i = 0; i < 50000; ++i) step();
  EXPECT_EQ(sf::test::allocations() - before, 0u);
  EXPECT_GT(done - done0, 500u);
  EXPECT_GT(mctr(x).tx_retransmits, 100u);
  EXPECT_GT(recvs, 250u);
  EXPECT_EQ(x.qp->state(), v::QpState::kRts);
}

TEST(MrcQpAlloc, SteadyStateAllocatesNothing) { steady_state(false); }
TEST(MrcQpAlloc, Srv6SteadyStateAllocatesNothing) { steady_state(true); }

}  // namespace
}  // namespace sf::nic::test
