// The same NicNodes under the real-time driver (common/dpdk PollLoop) with a
// ManualClock and an in-memory cross-connected PacketIo: receive and
// transmit in bursts of up to 32 (the simulator asks one frame at a time),
// the port shaper at 100 Gb/s, every 50th frame lost. No sleeping: the test
// advances the manual clock.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>

#include "common/dpdk/clock.h"
#include "common/dpdk/poll_loop.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

struct Wire {
  std::deque<rte_mbuf*> q;
  uint64_t sent = 0;
  uint64_t lost = 0;
  uint32_t max_burst = 0;
  ~Wire() {
    for (auto* m : q) rte_pktmbuf_free(m);
  }
};

// rx from `in`, tx to `out`; every `loss_every`-th transmitted frame is lost.
struct CrossIo {
  Wire* in;
  Wire* out;
  uint64_t loss_every;
  uint16_t rx_burst(std::span<rte_mbuf*> pkts) {
    uint16_t n = 0;
    while (n < pkts.size() && !in->q.empty()) {
      pkts[n++] = in->q.front();
      in->q.pop_front();
    }
    return n;
  }
  uint16_t tx_burst(std::span<rte_mbuf*> pkts) {
    out->max_burst = std::max<uint32_t>(out->max_burst, static_cast<uint32_t>(pkts.size()));
    for (rte_mbuf* m : pkts) {
      if (loss_every != 0 && ++out->sent % loss_every == 0) {
        ++out->lost;
        rte_pktmbuf_free(m);
      } else {
        out->q.push_back(m);
      }
    }
    return static_cast<uint16_t>(pkts.size());
  }
};
static_assert(dpdk::PacketIo<CrossIo>);

// 1. 8 MiB of WRITEs and 2 MiB of READs, unpaced QPs (bursts), 2% loss.
//    Expect: all succeed, bytes equal, transmit bursts above one frame,
//    frames lost and recovered.
TEST(NicPollLoop, RealTimeDriverBurstsWithLoss) {
  NicNode a(one_host_cfg(0), sf::test::mbuf_pool());
  NicNode b(one_host_cfg(1), sf::test::mbuf_pool());
  Wire ab;
  Wire ba;
  CrossIo io_a{&ba, &ab, 50};
  CrossIo io_b{&ab, &ba, 50};
  dpdk::ManualClock clock;
  dpdk::PollLoop<CrossIo, dpdk::ManualClock> loop(clock);
  ASSERT_TRUE(static_cast<bool>(loop.add_port(io_a, a, 0, {BitRate::gbps(100)})));
  ASSERT_TRUE(static_cast<bool>(loop.add_port(io_b, b, 0, {BitRate::gbps(100)})));
  Endpoint ea = make_endpoint(a, 0, 12 << 20);
  Endpoint eb = make_endpoint(b, 0, 12 << 20);
  ConnParams p;
  p.timeout = 5;
  connect_pair(ea, eb, p);
  fill_pattern(ea.buf, 31);
  fill_pattern(eb.buf, 32);
  const std::vector<uint8_t> b_orig = eb.buf;
  for (int i = 0; i < 8; ++i) ASSERT_EQ(post_write(ea, i, i << 20, 1 << 20, eb.addr() + (i << 20), eb.mr->rkey), 0);
  ASSERT_EQ(post_write(ea, 8, 10 << 20, 2 << 20, eb.addr() + (10 << 20), eb.mr->rkey, v::WrOpcode::kRdmaRead), 0);
  std::vector<v::Wc> done;
  for (int i = 0; i < 400000 && done.size() < 9; ++i) {
    clock.advance(TimeNs(100));
    loop.poll_once();
    for (const auto& wc : drain(ea.scq)) done.push_back(wc);
  }
  ASSERT_EQ(done.size(), 9u);
  for (const auto& wc : done) EXPECT_EQ(wc.status, v::WcStatus::kSuccess) << v::to_string(wc.status);
  EXPECT_EQ(0, std::memcmp(eb.buf.data(), ea.buf.data(), 8 << 20));
  EXPECT_EQ(0, std::memcmp(ea.buf.data() + (10 << 20), b_orig.data() + (10 << 20), 2 << 20));
  EXPECT_GT(ab.max_burst, 1u);
  EXPECT_GT(ab.lost + ba.lost, 0u);
  EXPECT_GT(ea.qp->counters().tx_retransmit_pkts, 0u);
  // The shaper held the port to 100 Gb/s: 8 MiB cannot have left faster.
  EXPECT_GE(clock.now(), BitRate::gbps(100).tx_time(8u << 20));
}

}  // namespace
}  // namespace sf::nic::test
