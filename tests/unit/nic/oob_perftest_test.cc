// perftest's out-of-band messages (nic/app/oob_perftest.h): the codec against
// bytes captured between two of Debian's ib_write_bw processes (perftest
// 4.5-0.17, tcpdump on lo), and every malformed field refused by name.
#include "nic/app/oob_perftest.h"

#include <gtest/gtest.h>

#include <string>

#include "nic/app/oob_exchange.h"

namespace sf::nic {
namespace {

// ib_write_bw's client, QP 0 (the 108 bytes of its first handshake).
const std::string kCaptured =
    std::string("0000:0001:f3432e:5eb1b4:0e4b1400:000055c8b4e15000:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:09:00:02:"
                "00000000:") + '\0';

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const OobError& e) {
    return e.what();
  }
  return "";
}

TEST(PerftestOob, ParsesWhatPerftestSends) {
  ASSERT_EQ(kCaptured.size(), kPerftestDestBytes);
  const PerftestDest d = parse_perftest_dest(kCaptured, "QP 0 info");
  EXPECT_EQ(d.lid, 0);
  EXPECT_EQ(d.out_reads, 1);
  EXPECT_EQ(d.qpn, 0xf3432eu);
  EXPECT_EQ(d.psn, 0x5eb1b4u);
  EXPECT_EQ(d.rkey, 0x0e4b1400u);
  EXPECT_EQ(d.vaddr, 0x000055c8b4e15000ull);
  const std::array<uint8_t, 16> gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 9, 0, 2};
  EXPECT_EQ(d.gid, gid);
  EXPECT_EQ(d.srqn, 0u);
  // And writes the same bytes back.
  EXPECT_EQ(encode_perftest_dest(d), kCaptured);
}

TEST(PerftestOob, TheOtherStepsAsCaptured) {
  // version "6.06" + 12 NULs; cycle buffer 4096 and cache line 64 in network
  // order; MTU "5\0" (IBV_MTU_4096).
  EXPECT_EQ(encode_perftest_version(), std::string("6.06") + std::string(12, '\0'));
  EXPECT_EQ(parse_perftest_version(encode_perftest_version(), "v"), "6.06");
  EXPECT_EQ(encode_perftest_u32(4096), std::string("\x00\x00\x10\x00", 4));
  EXPECT_EQ(parse_perftest_u32(std::string("\x00\x00\x00\x40", 4), "c"), 64u);
  EXPECT_EQ(encode_perftest_mtu(4096), std::string("5\0", 2));
  EXPECT_EQ(encode_perftest_mtu(1024), std::string("3\0", 2));
  EXPECT_EQ(parse_perftest_mtu(std::string("5\0", 2), "m"), 4096u);
  EXPECT_EQ(parse_perftest_mtu(std::string("1\0", 2), "m"), 256u);
  // The client's report after ib_write_bw -s 65536 -n 300: size, iterations,
  // peak 15.79..., average 0.345..., message rate, big-endian.
  const std::string rep = std::string("\x00\x00\x00\x00\x00\x01\x00\x00"
                                      "\x00\x00\x00\x00\x00\x00\x01\x2c"
                                      "\x40\x2f\x93\xcb\xf0\xc0\xae\x65"
                                      "\x3f\xd6\x1e\x60\x98\x1d\xab\x0e"
                                      "\x3f\x45\x99\xaa\x54\x8c\xf9\x0c", 40);
  const PerftestBwRep r = parse_perftest_bw_rep(rep, "r");
  EXPECT_EQ(r.size, 65536u);
  EXPECT_EQ(r.iters, 300u);
  EXPECT_NEAR(r.bw_peak, 15.79, 0.01);
  EXPECT_NEAR(r.bw_avg, 0.3456, 0.001);
  EXPECT_GT(r.msg_rate_mpps, 0.0);
  EXPECT_EQ(encode_perftest_bw_rep(r), rep);
}

TEST(PerftestOob, ConnInfoBothWays) {
  QpConnInfo q;
  q.qpn = 0x123456;
  q.psn = 0xabcdef;
  q.rkey = 0xdeadbeef;
  q.va = 0x7f0000001000;
  q.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
  q.mac = {2, 0, 0, 0, 0, 1};
  const PerftestDest d = to_perftest_dest(q, 16);
  EXPECT_EQ(d.out_reads, 16);
  const QpConnInfo back = to_conn_info(parse_perftest_dest(encode_perftest_dest(d), "x"), 1024, 4096);
  EXPECT_EQ(back.qpn, q.qpn);
  EXPECT_EQ(back.psn, q.psn);
  EXPECT_EQ(back.rkey, q.rkey);
  EXPECT_EQ(back.va, q.va);
  EXPECT_EQ(back.gid, q.gid);
  EXPECT_EQ(back.mtu_bytes, 1024u);
  EXPECT_EQ(back.msg_size_bytes, 4096u);
  EXPECT_EQ(back.out_reads, 16);
  EXPECT_EQ(back.mac, (std::array<uint8_t, 6>{}));  // perftest carries none: the port's next hop
}

TEST(PerftestOob, BadMessagesNameTheField) {
  auto with = [](size_t at, char c) {
    std::string m = kCaptured;
    m[at] = c;
    return m;
  };
  EXPECT_NE(error_of([&] { parse_perftest_dest(kCaptured.substr(0, 100), "QP 0 info"); }).find("want 108 bytes"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_perftest_dest(with(12, 'g'), "QP 0 info"); }).find("qpn: not a hex digit"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_perftest_dest(with(4, '-'), "QP 0 info"); }).find("lid: want ':'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_perftest_dest(with(60, 'z'), "QP 0 info"); }).find("gid"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_perftest_dest(with(107, 'x'), "QP 0 info"); }).find("NUL"), std::string::npos);
  std::string zero_qpn = kCaptured;
  zero_qpn.replace(10, 6, "000000");
  EXPECT_NE(error_of([&] { parse_perftest_dest(zero_qpn, "QP 0 info"); }).find("qpn: 0"), std::string::npos);
  // sf-nic's own exchange where perftest's was expected: a clear hint.
  const std::string sf = std::string("SFOOB/3 HELLO nq");
  EXPECT_NE(error_of([&] { parse_perftest_version(sf, "perftest version"); }).find("--oob-format perftest"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_perftest_mtu(std::string("7\0", 2), "MTU"); }).find("IBV_MTU"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_perftest_u32("abc", "cycle"); }).find("want 4 bytes"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_perftest_bw_rep(std::string(39, '\0'), "BW report"); }).find("want 40 bytes"),
            std::string::npos);
}

// The steps after the MTU per tool, as captured (docs/perftest.md): count
// the 108-byte QP-0 messages after the rounds.
TEST(PerftestOob, StepPlansAsCaptured) {
  for (const char* t : {"write_bw", "read_bw"}) {
    const auto p = perftest_plan(t);
    ASSERT_TRUE(p.has_value()) << t;
    EXPECT_EQ(p->between_rounds, 0);
    EXPECT_EQ(p->before_traffic, 1);
    EXPECT_EQ(p->after_traffic, 1);
    EXPECT_TRUE(p->bw_report && p->close && !p->slot1_address) << t;
  }
  const auto send = perftest_plan("send_bw");
  ASSERT_TRUE(send.has_value());
  EXPECT_EQ(send->between_rounds, 1);
  EXPECT_EQ(send->before_traffic, 1);
  EXPECT_EQ(send->after_traffic, 0);
  EXPECT_TRUE(send->close && !send->bw_report);
  for (const char* t : {"read_lat", "send_lat", "write_lat"}) {
    const auto p = perftest_plan(t);
    ASSERT_TRUE(p.has_value()) << t;
    EXPECT_EQ(p->between_rounds + p->before_traffic, 2) << t;  // 4 messages of 1 QP before the traffic
    EXPECT_EQ(p->after_traffic, 0);
    EXPECT_FALSE(p->bw_report);
    EXPECT_EQ(p->close, std::string(t) != "write_lat") << t;  // ib_send_lat's client sends it first
    EXPECT_EQ(p->slot1_address, std::string(t) != "send_lat") << t;  // the peer WRITEs / READs there
  }
  for (const char* t : {"atomic_bw", "write", ""}) EXPECT_FALSE(perftest_plan(t)) << t;
}

}  // namespace
}  // namespace sf::nic
