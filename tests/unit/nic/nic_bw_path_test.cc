// The write_bw data path's shape: perftest's buffer layout (every 64 KiB
// message to the same address, small ones cycling through 4 KiB), and the
// receive path over chained mbufs split at odd offsets.
#include <gtest/gtest.h>

#include <memory>

#include "common/sim/simulator.h"
#include "nic/app/perftest_engine.h"
#include "tests/support/eal_env.h"

namespace sf::nic::app {
namespace {

AppHost app_host(int i) {
  AppHost h;
  h.name = "h" + std::to_string(i);
  h.devargs = "net_null" + std::to_string(i);
  h.mac.bytes = {0x02, 0x50, 0x46, 0, 0, static_cast<uint8_t>(i + 1)};
  h.ipv4 = std::array<uint8_t, 4>{10, 9, 0, static_cast<uint8_t>(i + 1)};
  h.mtu_bytes = 4096;
  return h;
}

NicConfig node_cfg(const AppHost& h) {
  NicConfig c;
  HostConfig hc;
  hc.name = h.name;
  hc.mac.bytes = h.mac.bytes;
  hc.ipv4 = wire::Ipv4Addr{*h.ipv4};
  hc.ports = {0};
  c.hosts.push_back(hc);
  NicPortConfig p;
  p.line_rate = BitRate::gbps(h.speed_gbps);
  c.ports.push_back(p);
  return c;
}

// A client and a server workload of `type` between two nodes (not run).
struct Pair {
  AppHost ha = app_host(0);
  AppHost hb = app_host(1);
  NicNode a{node_cfg(ha), sf::test::mbuf_pool()};
  NicNode b{node_cfg(hb), sf::test::mbuf_pool()};
  std::unique_ptr<Workload> client, server;
  Pair(WorkloadType t, uint64_t size, bool verify) {
    AppWorkload w;
    w.type = t;
    w.size_bytes = size;
    w.iterations = 10;
    w.verify = verify;
    w.name = "c";
    w.role = Role::kClient;
    client = std::make_unique<Workload>(w, ha, a, 0);
    w.name = "s";
    w.role = Role::kServer;
    server = std::make_unique<Workload>(w, hb, b, 0);
  }
  // Whether the server's MR covers [va, va + n) of its advertised buffer.
  bool server_exposes(uint64_t offset, uint64_t n) const {
    const QpConnInfo& s = server->local_info()[0];
    return b.host(0).mrs().check(s.rkey, true, nullptr, s.va + offset, n, verbs::kAccessRemoteWrite) ==
           verbs::MrCheck::kOk;
  }
};

// 1. write_bw / read_bw of 64 KiB without --verify. Expect: the server's
//    buffer is one message long (perftest: messages > cycle_buffer / 2 all go
//    to the same address), not 16 MiB.
TEST(PerftestLayout, LargeMessagesShareOneBuffer) {
  for (WorkloadType t : {WorkloadType::kWriteBw, WorkloadType::kReadBw}) {
    SCOPED_TRACE(to_string(t));
    Pair p(t, 65536, false);
    EXPECT_TRUE(p.server_exposes(0, 65536));
    EXPECT_FALSE(p.server_exposes(0, 65537));
  }
}

// 2. 64 B messages without --verify. Expect: they cycle through 4 KiB
//    (perftest's cycle_buffer = the page size), so the buffer is 4 KiB.
TEST(PerftestLayout, SmallMessagesCycleThroughAPage) {
  Pair p(WorkloadType::kWriteBw, 64, false);
  EXPECT_TRUE(p.server_exposes(0, 4096));
  EXPECT_FALSE(p.server_exposes(0, 4097));
}

// 3. --verify and send_bw keep a slot per message in flight. Expect: a
//    64 KiB write_bw --verify buffer holds 256 slots (16 MiB), send_bw too.
TEST(PerftestLayout, VerifyAndSendKeepSlots) {
  Pair v(WorkloadType::kWriteBw, 65536, true);
  EXPECT_TRUE(v.server_exposes(0, 16ull << 20));
  Pair s(WorkloadType::kSendBw, 65536, false);
  const QpConnInfo& si = s.server->local_info()[0];
  EXPECT_EQ(s.b.host(0).mrs().check(si.rkey, true, nullptr, si.va, 16ull << 20, 0), verbs::MrCheck::kNoAccess)
      << "the key resolves; only the right is missing";
  EXPECT_EQ(s.b.host(0).mrs().check(si.rkey, true, nullptr, si.va, 16ull << 20, verbs::kAccessRemoteWrite),
            verbs::MrCheck::kOk);
}

}  // namespace
}  // namespace sf::nic::app
