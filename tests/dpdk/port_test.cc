// Port bring-up on in-process vdevs (suite `dpdk`): hotplug by devargs, the
// canonical bring-up, rx/tx on a net_ring loopback, stats/xstats, errors.
#define ALLOW_EXPERIMENTAL_API 1  // rte_intr_instance_alloc and friends (InterruptBarrier)
#include "common/dpdk/port.h"

#include <gtest/gtest.h>
#include <rte_interrupts.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <thread>
#include <vector>

#include "common/dpdk/eal.h"
#include "common/dpdk/mempool.h"
#include "tests/support/eal_env.h"
#include "tests/support/unmapped_page.h"

namespace sf::dpdk {
namespace {

// 1. A net_ring vdev (no args: its tx ring is its rx ring). Expect: opens,
//    link up, 8 frames sent come back, stats and xstats agree.
TEST(Port, RingLoopbackRxTxStats) {
  PortConfig cfg;
  cfg.devargs = "net_ring_pt0";
  cfg.rx_desc = 256;
  cfg.tx_desc = 256;
  auto port = Port::open(cfg, sf::test::mbuf_pool());
  ASSERT_TRUE(port) << port.error();
  EXPECT_EQ(port->name(), "net_ring_pt0");
  EXPECT_EQ(port->driver(), "net_ring");
  EXPECT_FALSE(port->guarded());  // only memif bursts run under the fault guard
  EXPECT_TRUE(port->link_up());
  std::array<rte_mbuf*, 8> tx{};
  std::vector<uint8_t> bytes(128, 0x5a);
  for (auto& m : tx) m = sf::test::make_mbuf(bytes);
  EXPECT_EQ(port->tx_burst(tx), 8);
  std::array<rte_mbuf*, 32> rx{};
  const uint16_t n = port->rx_burst(rx);
  ASSERT_EQ(n, 8);
  for (uint16_t i = 0; i < n; ++i) {
    EXPECT_EQ(rte_pktmbuf_pkt_len(rx[i]), 128u);
    rte_pktmbuf_free(rx[i]);
  }
  auto st = port->stats();
  ASSERT_TRUE(st) << st.error();
  EXPECT_EQ(st->tx_pkts, 8u);
  EXPECT_EQ(st->rx_pkts, 8u);
  auto xs = port->xstats();
  ASSERT_TRUE(xs) << xs.error();
  ASSERT_TRUE(xs->count("rx_good_packets"));
  EXPECT_EQ(xs->at("rx_good_packets"), 8u);
  auto one = port->xstat("tx_good_packets");
  ASSERT_TRUE(one) << one.error();
  EXPECT_EQ(*one, 8u);
  EXPECT_FALSE(port->xstat("no_such_counter"));
  port->close();
  EXPECT_FALSE(port->is_open());
  // Closed and detached: the same name can be probed again.
  auto again = Port::open(cfg, sf::test::mbuf_pool());
  EXPECT_TRUE(again) << again.error();
}

// 2. net_null with multi-queue. Expect: opens, multi-seg tx offered or not
//    without failing, rx returns synthetic packets.
TEST(Port, NullDeviceTwoQueues) {
  PortConfig cfg;
  cfg.devargs = "net_null_pt0,size=64";
  cfg.rx_queues = 2;
  cfg.tx_queues = 2;
  auto port = Port::open(cfg, sf::test::mbuf_pool());
  ASSERT_TRUE(port) << port.error();
  std::array<rte_mbuf*, 32> rx{};
  const uint16_t n = port->rx_burst(rx, 1);
  EXPECT_GT(n, 0);
  rte_pktmbuf_free_bulk(rx.data(), n);
}

// 3. Unknown driver. Expect: an error naming the device and the step.
TEST(Port, UnknownDriverErrorNamesPortAndStep) {
  PortConfig cfg;
  cfg.devargs = "net_nonexistent0";
  auto port = Port::open(cfg, sf::test::mbuf_pool());
  ASSERT_FALSE(port);
  EXPECT_NE(port.error().find("net_nonexistent0"), std::string::npos) << port.error();
  const bool step_named = port.error().find("rte_dev_probe") != std::string::npos ||
                         port.error().find("rte_devargs_parse") != std::string::npos;
  EXPECT_TRUE(step_named) << port.error();
}

// 4. MTU below the device minimum (68 for IPv4). Expect: error, port released.
TEST(Port, BadMtuRejected) {
  PortConfig cfg;
  cfg.devargs = "net_ring_pt1";
  cfg.mtu = 10;
  auto port = Port::open(cfg, sf::test::mbuf_pool());
  ASSERT_FALSE(port);
  EXPECT_NE(port.error().find("mtu"), std::string::npos) << port.error();
}

// 5. Mempool helper. Expect: a pool of mbuf_count() mbufs.
TEST(Mempool, CreateSizedPool) {
  MempoolSizing s;
  s.rx_desc = 128;
  s.tx_desc = 128;
  auto mp = create_pktmbuf_pool("pt_pool", s);
  ASSERT_TRUE(mp) << mp.error();
  EXPECT_EQ((*mp)->size, mbuf_count(s));
  rte_mempool_free(*mp);
  auto bad = create_pktmbuf_pool("pt_pool_bad", 0u, 0u);
  EXPECT_FALSE(bad);
}

}  // namespace
// N. interrupt_thread_barrier() returns only after a callback that was
//    running on EAL's interrupt thread when it was called has returned (what
//    Port::close() relies on between stop and close). The callback blocks
//    until the test lets it go, from a thread started after the barrier call
//    began; the barrier must see `done` set. Expect: true, and done.
TEST(InterruptBarrier, WaitsForTheRunningCallback) {
  struct Cb {
    int fd = -1;
    std::atomic<bool> started{false}, release{false}, done{false};
  };
  Cb cb;
  cb.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_GE(cb.fd, 0);
  rte_intr_handle* h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(rte_intr_fd_set(h, cb.fd), 0);
  ASSERT_EQ(rte_intr_type_set(h, RTE_INTR_HANDLE_EXT), 0);
  auto fn = [](void* arg) {
    auto* c = static_cast<Cb*>(arg);
    uint64_t v = 0;
    (void)!read(c->fd, &v, sizeof v);
    c->started.store(true);
    while (!c->release.load()) std::this_thread::yield();
    c->done.store(true);
  };
  ASSERT_EQ(rte_intr_callback_register(h, fn, &cb), 0);
  const uint64_t one = 1;
  ASSERT_EQ(write(cb.fd, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  while (!cb.started.load()) std::this_thread::yield();
  std::atomic<bool> barrier_returned{false};
  bool done_at_return = false;
  bool ok = false;
  std::thread waiter([&] {
    ok = interrupt_thread_barrier(20000);
    done_at_return = cb.done.load();
    barrier_returned.store(true);
  });
  // The callback still runs: the barrier cannot have returned.
  for (int i = 0; i < 1000; ++i) {
    ASSERT_FALSE(barrier_returned.load());
    std::this_thread::yield();
  }
  cb.release.store(true);
  waiter.join();
  EXPECT_TRUE(ok);
  EXPECT_TRUE(done_at_return);
  EXPECT_GT(rte_intr_callback_unregister_sync(h, fn, &cb), 0);
  rte_intr_instance_free(h);
  close(cb.fd);
  // With nothing running, it returns at once (well inside its bound).
  EXPECT_TRUE(interrupt_thread_barrier(20000));
}

}  // namespace sf::dpdk

// memif ports get one buffer per frame for MTUs above 2 KiB (DPDK 22.11
// splits descriptor chains under load); other devargs are left alone.
TEST(PortDevargs, MemifBufferSizedForTheMtu) {
  EXPECT_EQ(sf::dpdk::memif_devargs_for_mtu("net_memif0,role=client,socket=/x", 4224),
            "net_memif0,role=client,socket=/x,bsize=8192");
  EXPECT_EQ(sf::dpdk::memif_devargs_for_mtu("net_memif1", 9100), "net_memif1,bsize=16384");
  EXPECT_EQ(sf::dpdk::memif_devargs_for_mtu("net_memif0,socket=/x", 1500), "net_memif0,socket=/x");
  EXPECT_EQ(sf::dpdk::memif_devargs_for_mtu("net_memif0,bsize=4096", 9100), "net_memif0,bsize=4096");
  EXPECT_EQ(sf::dpdk::memif_devargs_for_mtu("net_memif0", 0), "net_memif0");
  EXPECT_EQ(sf::dpdk::memif_devargs_for_mtu("net_ring0", 9100), "net_ring0");
  EXPECT_EQ(sf::dpdk::memif_devargs_for_mtu("0000:3b:00.0", 9100), "0000:3b:00.0");
  // A link's default (sf-pktio, sf-nic): a jumbo frame in one descriptor
  // whatever the local MTU (none, 1500, 4224), the MTU's if larger; a
  // user's bsize and other drivers untouched.
  EXPECT_EQ(sf::dpdk::memif_devargs_for_link("net_memif0,role=client", 0), "net_memif0,role=client,bsize=16384");
  EXPECT_EQ(sf::dpdk::memif_devargs_for_link("net_memif0", 1500), "net_memif0,bsize=16384");
  EXPECT_EQ(sf::dpdk::memif_devargs_for_link("net_memif0", 4224), "net_memif0,bsize=16384");
  EXPECT_EQ(sf::dpdk::memif_devargs_for_link("net_memif0", 20000), "net_memif0,bsize=32768");
  EXPECT_EQ(sf::dpdk::memif_devargs_for_link("net_memif0,bsize=2048", 0), "net_memif0,bsize=2048");
  EXPECT_EQ(sf::dpdk::memif_devargs_for_link("net_pcap0,rx_pcap=a.pcap", 0), "net_pcap0,rx_pcap=a.pcap");
}

// 5. A memif server port (no peer needed to open it). Expect: its bursts run
// under the fault guard (burst_guard.h), and with no peer they return 0
// without a fault.
TEST(Port, MemifBurstsAreGuarded) {
  sf::dpdk::PortConfig cfg;
  cfg.devargs = "net_memif_pt9,role=server,socket=/tmp/sf-port-test-guard-" + std::to_string(getpid()) + ".sock";
  cfg.link_wait = sf::dpdk::LinkWait::kSkip;
  auto port = sf::dpdk::Port::open(cfg, sf::test::mbuf_pool());
  ASSERT_TRUE(port) << port.error();
  EXPECT_TRUE(port->guarded());
  std::array<rte_mbuf*, 4> b{};
  EXPECT_EQ(port->rx_burst(b), 0);
  EXPECT_EQ(port->tx_burst(std::span<rte_mbuf*>(b.data(), 0)), 0);
  EXPECT_EQ(port->burst_faults(), 0u);
  port->close();
}

// 6. A fault inside a guarded burst, driven through the Port: a net_ring
// port guarded for the test, with an rx / tx burst callback (run inside
// rte_eth_rx/tx_burst, as memif's copy is) that writes to an unmapped page.
// Expect, with the link down (what memif's disconnect sets before it
// unmaps): rx returns 0, tx returns all n and counts them dropped (freed:
// none was sent), one fault each; every mbuf is returned or counted (the
// pool's use); the port works again afterwards. With the link up the fault is not
// the peer leaving: the process aborts.
namespace {
volatile uint8_t* g_unmapped = nullptr;
volatile bool g_fault_on = false;
// As memif's copy path: rx allocates what it delivers, a slot written once
// its packet is complete; tx copies and frees packets in order.
volatile bool g_memif_like = false;
uint16_t faulting_rx_cb(uint16_t, uint16_t, rte_mbuf** pkts, uint16_t n, uint16_t, void*) {
  if (g_fault_on && g_memif_like) {
    rte_mbuf* done = rte_pktmbuf_alloc(sf::test::mbuf_pool());
    rte_pktmbuf_chain(done, rte_pktmbuf_alloc(sf::test::mbuf_pool()));
    pkts[0] = done;  // one 2-segment packet delivered
    rte_mbuf* building = rte_pktmbuf_alloc(sf::test::mbuf_pool());
    rte_pktmbuf_chain(building, rte_pktmbuf_alloc(sf::test::mbuf_pool()));
    rte_pktmbuf_chain(building, rte_pktmbuf_alloc(sf::test::mbuf_pool()));  // 3 mbufs, in no slot
  }
  if (g_fault_on) g_unmapped[0] = 1;
  return n;
}
uint16_t faulting_tx_cb(uint16_t, uint16_t, rte_mbuf** pkts, uint16_t n, void*) {
  if (g_fault_on && g_memif_like) {
    rte_pktmbuf_free(pkts[0]);  // copied and freed
    rte_pktmbuf_free(pkts[1]);
  }
  if (g_fault_on) g_unmapped[0] = 1;
  return n;
}
}  // namespace

TEST(Port, FaultInsideAGuardedBurstIsAnAbandonedBurst) {
  sf::dpdk::PortConfig cfg;
  cfg.devargs = "net_ring_pt8";
  auto port = sf::dpdk::Port::open(cfg, sf::test::mbuf_pool());
  ASSERT_TRUE(port) << port.error();
  port->guard_bursts_for_test();
  g_unmapped = sf::test::unmapped_page();
  ASSERT_NE(g_unmapped, nullptr);
  ASSERT_NE(rte_eth_add_rx_callback(port->port_id(), 0, faulting_rx_cb, nullptr), nullptr);
  ASSERT_NE(rte_eth_add_tx_callback(port->port_id(), 0, faulting_tx_cb, nullptr), nullptr);
  ASSERT_EQ(rte_eth_dev_set_link_down(port->port_id()), 0);
  ASSERT_FALSE(port->link_up());
  std::vector<uint8_t> bytes(100, 0x11);
  std::array<rte_mbuf*, 4> tx{};
  for (auto& m : tx) m = sf::test::make_mbuf(bytes);
  rte_mempool* mp = sf::test::mbuf_pool();
  const unsigned used0 = rte_mempool_in_use_count(mp);
  g_fault_on = true;
  EXPECT_EQ(port->tx_burst(tx), 4);  // all taken; none sent, all freed here
  EXPECT_EQ(port->burst_faults(), 1u);
  EXPECT_EQ(port->burst_fault_pkts(), 4u);
  EXPECT_EQ(rte_mempool_in_use_count(mp), used0 - 4);
  std::array<rte_mbuf*, 8> rx{};
  EXPECT_EQ(port->rx_burst(rx), 0);
  EXPECT_EQ(port->burst_faults(), 2u);
  EXPECT_EQ(port->burst_fault_pkts(), 4u);  // rx loses nothing it handed over
  // memif-like: tx had freed 2 of 4 when the fault came: the other 2 are
  // freed here (dropped); rx had delivered one 2-segment packet and was
  // building a 3-mbuf one: the first is returned, the 3 counted as leaked.
  // Every mbuf returned or counted: the pool's use moves by exactly that.
  for (auto& m : tx) m = sf::test::make_mbuf(bytes);
  const unsigned used1 = rte_mempool_in_use_count(mp);
  g_memif_like = true;
  EXPECT_EQ(port->tx_burst(tx), 4);
  EXPECT_EQ(port->burst_fault_pkts(), 6u);
  EXPECT_EQ(rte_mempool_in_use_count(mp), used1 - 4);
  EXPECT_EQ(port->rx_burst(rx), 1);
  ASSERT_NE(rx[0], nullptr);
  EXPECT_EQ(rx[0]->nb_segs, 2);
  rte_pktmbuf_free(rx[0]);
  EXPECT_EQ(port->burst_fault_leaked_mbufs(), 3u);
  EXPECT_EQ(rte_mempool_in_use_count(mp), used1 - 4 + 3);
  EXPECT_EQ(port->burst_fault_inexact(), 0u);
  EXPECT_EQ(port->burst_faults(), 4u);
  g_memif_like = false;
  // No fault: the burst goes through (the ring loops the frames back).
  g_fault_on = false;
  ASSERT_EQ(rte_eth_dev_set_link_up(port->port_id()), 0);
  for (auto& m : tx) m = sf::test::make_mbuf(bytes);
  EXPECT_EQ(port->tx_burst(tx), 4);
  const uint16_t n = port->rx_burst(rx);
  EXPECT_EQ(n, 4);
  rte_pktmbuf_free_bulk(rx.data(), n);
  EXPECT_EQ(port->burst_faults(), 4u);
  // With the link up, a fault is a bug, and stays a crash.
  EXPECT_DEATH(
      {
        g_fault_on = true;
        rte_mbuf* b[8];
        port->rx_burst(std::span<rte_mbuf*>(b, 8));
      },
      "memory fault inside the PMD's rx burst with the link up");
  port->close();
}

// 7. A memif port asked for a 9100 B MTU (DPDK 22.11's memif reports a
// 1500 B maximum it never enforces: it chains any frame). Expect: opens
// without a note, and mtu() says 9100, the MTU it carries.
TEST(Port, MemifCarriesTheMtuAskedFor) {
  sf::dpdk::PortConfig cfg;
  cfg.devargs = "net_memif_pt10,role=server,socket=/tmp/sf-port-test-mtu-" + std::to_string(getpid()) + ".sock";
  cfg.link_wait = sf::dpdk::LinkWait::kSkip;
  cfg.mtu = 9100;
  auto port = sf::dpdk::Port::open(cfg, sf::test::mbuf_pool());
  ASSERT_TRUE(port) << port.error();
  EXPECT_EQ(port->mtu(), 9100);
  EXPECT_TRUE(port->mtu_note().empty()) << port->mtu_note();
  port->close();
}
