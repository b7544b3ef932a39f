// Zero-copy transmit (HostConfig::tx_zero_copy, docs/nic.md): a data
// frame's payload is an external mbuf segment pointing into the sender's MR,
// the ICRC is still computed over it, and the MR cannot be deregistered
// while such a frame is alive.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/sim/simulator.h"
#include "common/wire/mbuf_icrc.h"
#include "nic/rc/chain_copy.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {
namespace {

NicConfig zero_copy_cfg(int i) {
  NicConfig c = one_host_cfg(i);
  c.hosts[0].tx_zero_copy = true;
  return c;
}

// Frames of port 0 taken straight from transmit() at `now`.
std::vector<rte_mbuf*> take(NicNode& n, TimeNs now) {
  std::array<rte_mbuf*, 32> out{};
  const uint16_t k = n.transmit(0, std::span<rte_mbuf*>(out.data(), out.size()), now);
  return {out.begin(), out.begin() + k};
}

bool inside(const void* p, uint32_t len, const Endpoint& e) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  const auto b = reinterpret_cast<uintptr_t>(e.buf.data());
  return a >= b && a + len <= b + e.buf.size();
}

// 1. A 16 KiB WRITE (4 x 4 KiB frames) from a zero-copy host. Expect: each
//    frame is headers | one external segment of 4096 B that points at the
//    message's bytes in the MR (not a copy) | pad+ICRC; the ICRC over the
//    chain verifies; while the frames are alive dereg_mr is EBUSY and
//    mr_frames_in_flight counts them; once freed, dereg_mr succeeds.
TEST(NicZeroCopy, PayloadReferencesTheMrAndPinsIt) {
  NicNode a(zero_copy_cfg(0), sf::test::mbuf_pool());
  NicNode peer(one_host_cfg(1), sf::test::mbuf_pool());
  Endpoint ea = make_endpoint(a, 0, 1 << 16);
  Endpoint eb = make_endpoint(peer, 0, 1 << 16);
  ASSERT_EQ(connect_qp(ea, eb, ConnParams{}), 0);
  fill_pattern(ea.buf, 7);
  ASSERT_EQ(post_write(ea, 1, 4096, 4 * 4096, eb.addr(), eb.mr->rkey), 0);
  std::vector<rte_mbuf*> frames = take(a, TimeNs(1000));
  ASSERT_EQ(frames.size(), 4u);
  for (size_t i = 0; i < frames.size(); ++i) {
    rte_mbuf* m = frames[i];
    ASSERT_GE(m->nb_segs, 3u);
    const rte_mbuf* pay = m->next;
    ASSERT_TRUE(RTE_MBUF_HAS_EXTBUF(pay)) << "frame " << i;
    EXPECT_EQ(pay->data_len, 4096u);
    const auto* bytes = rte_pktmbuf_mtod(pay, const uint8_t*);
    EXPECT_TRUE(inside(bytes, pay->data_len, ea));
    EXPECT_EQ(bytes, ea.buf.data() + 4096 + i * 4096) << "frame " << i << " does not point at its message bytes";
    const wire::FrameInfo fi = wire::parse_mbuf(m);
    ASSERT_TRUE(fi.ok());
    EXPECT_EQ(wire::icrc_verify_mbuf(m, fi), wire::IcrcStatus::kOk) << "frame " << i;
  }
  EXPECT_EQ(a.host(0).mr_frames_in_flight(ea.mr), 4u);
  EXPECT_EQ(v::dereg_mr(ea.mr), EBUSY);
  rte_pktmbuf_free(frames[0]);
  rte_pktmbuf_free(frames[1]);
  EXPECT_EQ(a.host(0).mr_frames_in_flight(ea.mr), 2u);
  EXPECT_EQ(v::dereg_mr(ea.mr), EBUSY);
  rte_pktmbuf_free(frames[2]);
  rte_pktmbuf_free(frames[3]);
  EXPECT_EQ(a.host(0).mr_frames_in_flight(ea.mr), 0u);
  v::destroy_qp(ea.qp);
  EXPECT_EQ(v::dereg_mr(ea.mr), 0);
}

// 2. A 64 B WRITE from a zero-copy host. Expect: the payload is copied into
//    the frame (below kZeroCopyMinBytes attaching costs more than copying),
//    no MR reference is taken.
TEST(NicZeroCopy, SmallPayloadIsCopied) {
  NicNode a(zero_copy_cfg(0), sf::test::mbuf_pool());
  NicNode peer(one_host_cfg(1), sf::test::mbuf_pool());
  Endpoint ea = make_endpoint(a, 0, 1 << 12);
  Endpoint eb = make_endpoint(peer, 0, 1 << 12);
  ASSERT_EQ(connect_qp(ea, eb, ConnParams{}), 0);
  ASSERT_EQ(post_write(ea, 1, 0, 64, eb.addr(), eb.mr->rkey), 0);
  std::vector<rte_mbuf*> frames = take(a, TimeNs(1000));
  ASSERT_EQ(frames.size(), 1u);
  for (const rte_mbuf* s = frames[0]; s != nullptr; s = s->next) EXPECT_FALSE(RTE_MBUF_HAS_EXTBUF(s));
  EXPECT_EQ(a.host(0).mr_frames_in_flight(ea.mr), 0u);
  rte_pktmbuf_free(frames[0]);
}

// 3. End to end in virtual time: a zero-copy sender WRITEs 256 KiB (64
//    frames) to a copying receiver over a 100 Gb/s link with 1 us delay.
//    Expect: the WRITE completes, the receiver's buffer equals the sender's
//    bytes, no ICRC drop at the receiver, and no MR reference is left once
//    the frames were delivered and freed.
TEST(NicZeroCopy, WriteLandsIntact) {
  NicNode a(zero_copy_cfg(0), sf::test::mbuf_pool());
  NicNode b(one_host_cfg(1), sf::test::mbuf_pool());
  sim::Simulator sim(1);
  const auto ia = sim.add_node(a, "a");
  const auto ib = sim.add_node(b, "b");
  sim.connect(ia, 0, ib, 0, {BitRate::gbps(100), TimeNs::from_us(1)});
  Endpoint ea = make_endpoint(a, 0, 1 << 18);
  Endpoint eb = make_endpoint(b, 0, 1 << 18);
  connect_pair(ea, eb);
  fill_pattern(ea.buf, 3);
  ASSERT_EQ(post_write(ea, 9, 0, 1 << 18, eb.addr(), eb.mr->rkey), 0);
  sim.run_for(TimeNs::from_us(200));
  const std::vector<v::Wc> wc = drain(ea.scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, v::WcStatus::kSuccess);
  EXPECT_EQ(std::memcmp(ea.buf.data(), eb.buf.data(), ea.buf.size()), 0);
  EXPECT_EQ(b.counters(0).drops[static_cast<int>(RxDrop::kBadIcrc)], 0u);
  EXPECT_EQ(a.host(0).mr_frames_in_flight(ea.mr), 0u);
}

// 4. The same 3-frame WRITE (12 KiB + 100 B: a LAST frame with pad) built by a
//    zero-copy host and by a copying one. Expect: byte-identical frames
//    (headers, payload, pad, ICRC), so the interop test's independent ICRC
//    and dissector checks of copied frames (tests/interop) cover these too.
TEST(NicZeroCopy, FramesAreByteIdenticalToCopiedOnes) {
  std::vector<std::vector<uint8_t>> built[2];
  for (int zc = 0; zc < 2; ++zc) {
    NicNode a(zc == 1 ? zero_copy_cfg(0) : one_host_cfg(0), sf::test::mbuf_pool());
    NicNode peer(one_host_cfg(1), sf::test::mbuf_pool());
    Endpoint ea = make_endpoint(a, 0, 1 << 15);
    Endpoint eb = make_endpoint(peer, 0, 1 << 15);
    ASSERT_EQ(connect_qp(ea, eb, ConnParams{}), 0);
    fill_pattern(ea.buf, 11);
    // A fixed remote VA and rkey: only the sender runs, and the frames must not
    // differ by where the two peers' buffers happen to be.
    ASSERT_EQ(post_write(ea, 1, 0, 3 * 4096 + 101, 0x7000'0000'1040ull, 0x1234), 0);
    for (rte_mbuf* m : take(a, TimeNs(1000))) {
      std::vector<uint8_t> bytes(m->pkt_len);
      ASSERT_TRUE(rc::copy_from_chain(m, 0, m->pkt_len, bytes.data()));
      built[zc].push_back(std::move(bytes));
      rte_pktmbuf_free(m);
    }
  }
  ASSERT_EQ(built[0].size(), 4u);
  ASSERT_EQ(built[1].size(), built[0].size());
  for (size_t i = 0; i < built[0].size(); ++i) EXPECT_EQ(built[1][i], built[0][i]) << "frame " << i;
}

// 5. copy_bytes (every payload copy into an MR) at every length around its
//    2 KiB pieces, at the source / destination offsets whose page distance is
//    glibc's slow case (1..31) and others. Expect: the destination equals the
//    source byte for byte, and not one byte around it is written.
TEST(NicCopyBytes, EveryLengthAroundThePieceSizeAndEveryNearOffset) {
  constexpr uint32_t kMax = 3 * rc::kCopyPieceBytes + 64;
  std::vector<uint8_t> src(kMax + 4096);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  std::vector<uint8_t> dst(kMax + 2 * 4096);
  const std::vector<uint32_t> lengths = {0, 1, 31, 2047, 2048, 2049, 4095, 4096, 4097, 6143, 6144, 6145, kMax};
  for (uint32_t n : lengths) {
    for (uint32_t d : {0u, 1u, 2u, 16u, 30u, 31u, 32u, 33u, 4064u, 4095u}) {
      std::fill(dst.begin(), dst.end(), 0xEE);
      const uint32_t src_off = 182;  // where a received payload starts in an mbuf
      const uint32_t dst_off = 4096 + ((src_off + d) & 4095);
      rc::copy_bytes(dst.data() + dst_off, src.data() + src_off, n);
      ASSERT_TRUE(std::equal(src.begin() + src_off, src.begin() + src_off + n, dst.begin() + dst_off))
          << "n " << n << " d " << d;
      ASSERT_TRUE(std::all_of(dst.begin(), dst.begin() + dst_off, [](uint8_t b) { return b == 0xEE; }));
      ASSERT_TRUE(std::all_of(dst.begin() + dst_off + n, dst.end(), [](uint8_t b) { return b == 0xEE; }));
    }
  }
}

}  // namespace
}  // namespace sf::nic::test
