// The write_bw data path's shape: perftest's buffer layout (every 64 KiB
// message to the same address, small ones cycling through 4 KiB), and the
// receive path over chained mbufs split at odd offsets.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/ipv4.h"
#include "nic/app/perftest_engine.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/perftest_hosts.h"
#include "tests/support/mbuf_chain.h"

namespace sf::nic::app {
namespace {

AppHost app_host(int i) { return test::app_host(i, 4096); }
using test::node_cfg;

// A client and a server workload of `type` between two nodes (not run).
struct Pair {
  AppHost ha = app_host(0);
  AppHost hb = app_host(1);
  NicNode a;
  NicNode b{node_cfg(hb), sf::test::mbuf_pool()};
  std::unique_ptr<Workload> client, server;
  PerftestEngine ea, eb;
  Pair(WorkloadType t, uint64_t size, bool verify, uint64_t iters = 10, bool zero_copy = false)
      : a(node_cfg(ha, zero_copy), sf::test::mbuf_pool()) {
    AppWorkload w;
    w.type = t;
    w.size_bytes = size;
    w.iterations = iters;
    w.verify = verify;
    w.name = "c";
    w.role = Role::kClient;
    client = std::make_unique<Workload>(w, ha, a, 0);
    w.name = "s";
    w.role = Role::kServer;
    server = std::make_unique<Workload>(w, hb, b, 0);
  }
  void connect() {
    ASSERT_EQ(server->connect(client->local_info(), TimeNs(0)), "");
    ASSERT_EQ(client->connect(server->local_info(), TimeNs(0)), "");
    ea.add(client.get());
    eb.add(server.get());
    a.set_app(&ea);
    b.set_app(&eb);
  }
  ~Pair() {
    a.set_app(nullptr);
    b.set_app(nullptr);
  }
  // Runs both nodes back to back (1 us per round) until the client is done;
  // every frame a sends goes through `wire` (bytes in, the frame to deliver
  // out, or nullptr to lose it) before b receives it.
  template <typename Wire>
  void run(Wire&& wire, int max_rounds = 100000) {
    std::array<rte_mbuf*, 32> burst{};
    TimeNs now(1000);
    for (int i = 0; i < max_rounds && !client->traffic_done(); ++i, now += TimeNs::from_us(1)) {
      for (NicNode* n : {&a, &b}) {
        if (n->next_wakeup(now) <= now) n->advance(now);
      }
      const uint16_t k = a.transmit(0, std::span<rte_mbuf*>(burst.data(), burst.size()), now);
      std::vector<rte_mbuf*> fwd;
      for (uint16_t j = 0; j < k; ++j) {
        if (rte_mbuf* m = wire(burst[j]); m != nullptr) fwd.push_back(m);
      }
      if (!fwd.empty()) b.receive(0, std::span<rte_mbuf*>(fwd.data(), fwd.size()), now);
      const uint16_t r = b.transmit(0, std::span<rte_mbuf*>(burst.data(), burst.size()), now);
      if (r > 0) a.receive(0, std::span<rte_mbuf*>(burst.data(), r), now);
    }
    if (client->traffic_done()) server->set_peer_done();
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

// The frames of a client's data packets as bytes.
struct Capture {
  std::vector<std::vector<uint8_t>> frames;
};

// 4. A write_bw --verify of 5-packet messages (20 KiB, 4 KiB MTU): the MIDDLE
//    and LAST packets reuse the QP's cached headers with the PSN and AckReq
//    patched. Expect: every data frame parses (IPv4 checksum included) with
//    a good ICRC and consecutive PSNs; all MIDDLE frames have the same bytes
//    up to the BTH but for PSN and AckReq; the server checked every message.
TEST(TxHeaders, CachedHeadersAreExact) {
  Pair p(WorkloadType::kWriteBw, 5 * 4096, true, 6);
  p.connect();
  Capture cap;
  p.run([&](rte_mbuf* m) {
    std::vector<uint8_t> bytes(m->pkt_len);
    const void* d = rte_pktmbuf_read(m, 0, m->pkt_len, bytes.data());
    if (d != bytes.data()) std::memcpy(bytes.data(), d, bytes.size());
    cap.frames.push_back(bytes);
    return m;
  });
  ASSERT_TRUE(p.client->traffic_done());
  EXPECT_EQ(p.client->result().status, "ok");
  EXPECT_EQ(p.server->result().messages, 6u);
  EXPECT_EQ(p.server->result().verify_errors, 0u);
  std::vector<uint8_t> middle;  // headers of the first MIDDLE seen, PSN / AckReq cleared
  uint32_t middles = 0;
  uint32_t psn = 0;
  bool first = true;
  for (const auto& f : cap.frames) {
    const wire::FrameInfo fi = wire::parse_frame(f);
    ASSERT_TRUE(fi.ok()) << wire::to_string(fi.reason);
    EXPECT_EQ(wire::icrc_verify(f, fi), wire::IcrcStatus::kOk);
    if (!first) {
      EXPECT_EQ(fi.bth->get_psn().value(), (psn + 1) & wire::Psn::kMask);
    }
    first = false;
    psn = fi.bth->get_psn().value();
    if (fi.bth->opcode != static_cast<uint8_t>(wire::Opcode::kRcWriteMiddle)) continue;
    EXPECT_EQ(fi.payload_bytes, 4096u);
    std::vector<uint8_t> h(f.begin(), f.begin() + fi.payload_offset);
    auto* bth = reinterpret_cast<wire::Bth*>(h.data() + fi.bth_offset);
    bth->psn.set(0);
    bth->set_ack_req(false);
    if (middle.empty()) middle = h;
    EXPECT_EQ(h, middle);
    ++middles;
  }
  EXPECT_EQ(middles, 6u * 3);
}

// 5. The same transfer with every data frame re-chained at odd offsets
//    (headers + 1 byte, then 777, 1, 1531 ... byte segments, the ICRC split
//    across segments), and one frame with a payload bit flipped in an odd
//    segment. Expect: the bad frame is dropped as bad_icrc (nothing of it
//    written: the go-back-N resend lands instead) and every message verified.
TEST(RxChains, OddSegmentsLandIntact) {
  Pair p(WorkloadType::kWriteBw, 5 * 4096, true, 6);
  p.connect();
  uint32_t n = 0;
  bool corrupted = false;
  p.run([&](rte_mbuf* m) -> rte_mbuf* {
    std::vector<uint8_t> bytes = sf::test::take_bytes(m);
    const wire::FrameInfo fi = wire::parse_frame(bytes);
    if (!fi.ok() || fi.payload_bytes == 0) return sf::test::make_mbuf_chain(sf::test::mbuf_pool(), bytes);
    if (++n == 7 && !corrupted) {
      bytes[fi.payload_offset + 2000] ^= 0x10;
      corrupted = true;
    }
    const uint32_t cuts[] = {fi.payload_offset + 1, 777, 1, 1531, 3, 1000, 2048};
    rte_mbuf* head = nullptr;
    rte_mbuf* tail = nullptr;
    size_t off = 0;
    for (size_t i = 0; off < bytes.size(); ++i) {
      const size_t len = std::min<size_t>(cuts[i % 7], bytes.size() - off);
      rte_mbuf* s = sf::test::make_mbuf_chain(sf::test::mbuf_pool(), {bytes.data() + off, len});
      if (s == nullptr) return nullptr;
      off += len;
      if (head == nullptr) {
        head = s;
      } else {
        tail->next = s;
        head->nb_segs++;
        head->pkt_len += s->pkt_len;
      }
      tail = s;
    }
    EXPECT_GE(head->nb_segs, 4);
    return head;
  });
  ASSERT_TRUE(p.client->traffic_done());
  EXPECT_TRUE(corrupted);
  EXPECT_EQ(p.client->result().status, "ok");
  EXPECT_EQ(p.server->result().messages, 6u);
  EXPECT_EQ(p.server->result().verify_errors, 0u);
  EXPECT_EQ(p.b.counters(0).drops[static_cast<int>(RxDrop::kBadIcrc)], 1u);
}

// 6. Copies of data frames whose destination MAC differs from the host's in
//    one byte (each of the six in turn), then whose destination IPv4 address
//    does (each of the four, header checksum fixed). Expect: each copy
//    dropped and counted as wrong_mac / wrong_ip; the transfer unharmed.
TEST(RxChecks, EveryAddressByteCompared) {
  Pair p(WorkloadType::kWriteBw, 4 * 4096, true, 3);
  p.connect();
  int mutated = 0;
  std::vector<rte_mbuf*> extra;
  p.run([&](rte_mbuf* m) -> rte_mbuf* {
    if (mutated < 10 && m->pkt_len > 4096) {
      std::vector<uint8_t> bytes(m->pkt_len);
      const void* d = rte_pktmbuf_read(m, 0, m->pkt_len, bytes.data());
      if (d != bytes.data()) std::memcpy(bytes.data(), d, bytes.size());
      if (mutated < 6) {
        bytes[mutated] ^= 0x01;
      } else {
        auto* ip = reinterpret_cast<wire::Ipv4Header*>(bytes.data() + wire::EthHeader::kSize);
        ip->dst.bytes[mutated - 6] ^= 0x01;
        wire::ipv4_set_checksum(*ip);
      }
      ++mutated;
      rte_mbuf* copy = sf::test::make_mbuf_chain(sf::test::mbuf_pool(), bytes);
      std::array<rte_mbuf*, 1> one{copy};
      p.b.receive(0, std::span<rte_mbuf*>(one.data(), 1), p.b.now());
    }
    return m;
  });
  ASSERT_TRUE(p.client->traffic_done());
  EXPECT_EQ(mutated, 10);
  EXPECT_EQ(p.b.counters(0).drops[static_cast<int>(RxDrop::kWrongMac)], 6u);
  EXPECT_EQ(p.b.counters(0).drops[static_cast<int>(RxDrop::kWrongIp)], 4u);
  EXPECT_EQ(p.server->result().messages, 3u);
  EXPECT_EQ(p.server->result().verify_errors, 0u);
}

// 7. Sizes whose frames leave 0-3 bytes of tailroom before the ICRC (2 KiB
//    mbufs: WRITE_ONLY 74 B of headers + 1970..1973 B, a LAST of 58 B + 1988
//    B), copied and zero-copy. Expect: some frame's ICRC split across two
//    segments in copy mode; every frame's ICRC good at the receiver, every
//    message verified.
TEST(TxHeaders, IcrcAtSegmentEnds) {
  for (const bool zc : {false, true}) {
    for (const uint64_t size : {1970u, 1971u, 1972u, 1973u, 4096u + 1988u}) {
      SCOPED_TRACE(std::to_string(size) + (zc ? " zero-copy" : " copy"));
      Pair p(WorkloadType::kWriteBw, size, true, 4, zc);
      p.connect();
      bool split = false;
      p.run([&](rte_mbuf* m) {
        const rte_mbuf* last = m;
        while (last->next != nullptr) last = last->next;
        if (m->nb_segs > 1 && last->data_len < wire::kIcrcBytes) split = true;
        return m;
      });
      ASSERT_TRUE(p.client->traffic_done());
      EXPECT_EQ(p.server->result().messages, 4u);
      EXPECT_EQ(p.server->result().verify_errors, 0u);
      EXPECT_EQ(p.b.counters(0).dropped(), 0u);
      if (!zc && size == 1972u) {
        EXPECT_TRUE(split);
      }
    }
  }
}

}  // namespace
}  // namespace sf::nic::app
