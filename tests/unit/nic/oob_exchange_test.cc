// Out-of-band QP exchange over TCP on 127.0.0.1: two threads of one test play
// server and client; malformed and truncated peers; refused connections with
// bounded retries. No sleeping: timeouts used here are 0 ms or never reached.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "nic/app/oob_exchange.h"

namespace sf::nic {
namespace {

OobOptions loopback(uint16_t port) {
  OobOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.connect_attempts = 3;
  o.retry_interval = std::chrono::milliseconds(1);
  o.io_timeout = std::chrono::milliseconds(10000);  // a safety net, never reached when the test passes
  return o;
}

QpConnInfo qp(uint32_t base) {
  QpConnInfo q;
  q.lid = 0;
  q.qpn = 0x100 + base;
  q.psn = 0xabcd00 + base;
  q.rkey = 0x1000 * (base + 1);
  q.va = 0x7f0000000000ull + base * 0x10000;
  for (size_t i = 0; i < 16; ++i) q.gid[i] = static_cast<uint8_t>(i * 17 + base);
  for (size_t i = 0; i < 6; ++i) q.mac[i] = static_cast<uint8_t>(0xA0 + i + base);
  q.mtu_bytes = 4096;
  q.msg_size_bytes = 65536;
  return q;
}

// A raw TCP client that sends `bytes` and then closes (or stays open).
int raw_connect(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const OobError& e) {
    return e.what();
  }
  return "";
}

// 1. The codec round-trips and has the documented fixed sizes.
TEST(OobCodec, RoundTripAndSizes) {
  EXPECT_EQ(encode_hello({4, 0, 1}), "SFOOB/3 HELLO nqp=0004 tr=00 np=01\n");
  EXPECT_EQ(encode_hello({4, 1, 8}).size(), kOobHelloBytes);
  const OobHello h = parse_hello(encode_hello({300, 1, 8}), "t");
  EXPECT_EQ(h.num_qps, 300u);
  EXPECT_EQ(h.transport, 1u);
  EXPECT_EQ(h.num_ports, 8u);
  std::array<uint8_t, 16> gid{};
  gid[15] = 0x42;
  const std::array<uint8_t, 6> mac{2, 0, 0, 0, 0, 7};
  const std::string port = encode_port(3, gid, mac);
  EXPECT_EQ(port.size(), kOobPortBytes);
  EXPECT_EQ(port.substr(0, 20), "SFOOB/3 PORT idx=03 ");
  std::array<uint8_t, 16> gid_back{};
  std::array<uint8_t, 6> mac_back{};
  parse_port(port, 3, "t", &gid_back, &mac_back);
  EXPECT_EQ(gid_back, gid);
  EXPECT_EQ(mac_back, mac);
  const QpConnInfo q = qp(3);
  const std::string line = encode_qp(2, q);
  EXPECT_EQ(line.size(), kOobQpBytes);
  EXPECT_EQ(line.substr(0, 40), "SFOOB/3 QP idx=0002 lid=0000 qpn=000103 ");
  EXPECT_EQ(parse_qp(line, 2, "t"), q);
  EXPECT_EQ(encode_done(), "SFOOB/3 DONE\n");
  parse_done(encode_done(), "t");
  // A bw client's result for its server (perftest's xchg_bw_reports).
  const OobBwReport r{5000, 1234567890, 240000};
  EXPECT_EQ(encode_bw_report(r).size(), kOobBwReportBytes);
  const OobBwReport back = parse_bw_report(encode_bw_report(r), "t");
  EXPECT_EQ(back.messages, 5000u);
  EXPECT_EQ(back.elapsed_ns, 1234567890);
  EXPECT_EQ(back.best_msg_ns, 240000);
  std::string bad = encode_bw_report(r);
  bad[bad.find("ns=") + 3] = 'x';
  EXPECT_NE(error_of([&] { parse_bw_report(bad, "BW report"); }).find("malformed ns"), std::string::npos);
}

// 2. Bad messages are errors that name the message and the field.
TEST(OobCodec, BadMessagesNameTheField) {
  std::string line = encode_qp(0, qp(0));
  line[line.find("rkey=") + 7] = 'G';
  std::string e = error_of([&] { parse_qp(line, 0, "QP 0 info from x"); });
  EXPECT_NE(e.find("QP 0 info from x"), std::string::npos) << e;
  EXPECT_NE(e.find("malformed rkey"), std::string::npos) << e;
  e = error_of([&] { parse_qp(encode_qp(1, qp(0)), 0, "QP 0"); });
  EXPECT_NE(e.find("idx is 1, expected 0"), std::string::npos) << e;
  e = error_of([] { parse_hello("GET / HTTP/1.1\r\nHost: x\n", "HELLO"); });
  EXPECT_NE(e.find("not an sf-nic OOB message"), std::string::npos) << e;
  e = error_of([] { parse_hello("SFOOB/2 HELLO nqp=0004\n", "HELLO"); });
  EXPECT_NE(e.find("peer speaks SFOOB/2"), std::string::npos) << e;
  e = error_of([] { parse_hello("SFOOB/3 HELLO nqp=0004 tr=07 np=01\n", "HELLO"); });
  EXPECT_NE(e.find("unknown transport 7"), std::string::npos) << e;
  e = error_of([] { parse_hello("SFOOB/3 HELLO nqp=0004 tr=00 np=00\n", "HELLO"); });
  EXPECT_NE(e.find("np is 0"), std::string::npos) << e;
  e = error_of([] { parse_hello("SFOOB/1 HELLO nqp=0004\n", "HELLO"); });
  EXPECT_NE(e.find("peer speaks SFOOB/1"), std::string::npos) << e;
  std::string zero_mtu = encode_qp(0, qp(0));
  zero_mtu.replace(zero_mtu.find("mtu=") + 4, 4, "0000");
  e = error_of([&] { parse_qp(zero_mtu, 0, "QP 0"); });
  EXPECT_NE(e.find("mtu is 0"), std::string::npos) << e;
}

// 3. Server and client on 127.0.0.1 exchange 4 QPs each, then meet at the barrier.
TEST(OobExchange, FourQpsBothWays) {
  OobListener listener(loopback(0));
  ASSERT_NE(listener.port(), 0);
  std::vector<QpConnInfo> server_qps;
  std::vector<QpConnInfo> client_qps;
  for (uint32_t i = 0; i < 4; ++i) {
    server_qps.push_back(qp(i));
    client_qps.push_back(qp(100 + i));
  }
  auto server = std::async(std::launch::async, [&] {
    OobConnection c = listener.accept();
    EXPECT_TRUE(c.is_server());
    auto remote = c.exchange(server_qps);
    c.barrier();
    const OobBwReport r = c.recv_bw_report();  // the client's result (write_bw / read_bw)
    EXPECT_EQ(r.messages, 77u);
    EXPECT_EQ(r.elapsed_ns, 9000);
    return remote;
  });
  OobConnection c = OobConnection::connect(loopback(listener.port()));
  EXPECT_FALSE(c.is_server());
  EXPECT_EQ(c.peer(), "127.0.0.1:" + std::to_string(listener.port()));
  const auto from_server = c.exchange(client_qps);
  c.barrier();
  c.send_bw_report({77, 9000, 100});
  const auto from_client = server.get();
  EXPECT_EQ(from_server, server_qps);
  EXPECT_EQ(from_client, client_qps);
}

// 4. A peer that sends garbage: the server's exchange fails with a clear error.
TEST(OobExchange, MalformedPeerMessage) {
  OobListener listener(loopback(0));
  const int fd = raw_connect(listener.port());
  const std::string junk = "HELLO WORLD, I AM NOT SF-NIC\n";
  ASSERT_EQ(::send(fd, junk.data(), junk.size(), 0), static_cast<ssize_t>(junk.size()));
  OobConnection c = listener.accept();
  const std::vector<QpConnInfo> mine{qp(0)};
  const std::string e = error_of([&] { c.exchange(mine); });
  EXPECT_NE(e.find("HELLO from 127.0.0.1:"), std::string::npos) << e;
  EXPECT_NE(e.find("not an sf-nic OOB message"), std::string::npos) << e;
  ::close(fd);
}

// 5. A peer that sends half a QP line and hangs up: truncation is reported
// with the byte counts.
TEST(OobExchange, TruncatedPeerMessage) {
  OobListener listener(loopback(0));
  const int fd = raw_connect(listener.port());
  const std::string partial = encode_hello({1, 0, 1}) + encode_qp(0, qp(0)).substr(0, 60);
  ASSERT_EQ(::send(fd, partial.data(), partial.size(), 0), static_cast<ssize_t>(partial.size()));
  ::close(fd);
  OobConnection c = listener.accept();
  const std::vector<QpConnInfo> mine{qp(0)};
  const std::string e = error_of([&] { c.exchange(mine); });
  EXPECT_NE(e.find("closed the connection after 60 of 170 bytes of QP 0 info"), std::string::npos) << e;
}

// 6. Different QP counts: both sides fail and say why.
TEST(OobExchange, QpCountMismatch) {
  OobListener listener(loopback(0));
  auto server = std::async(std::launch::async, [&] {
    OobConnection c = listener.accept();
    const std::vector<QpConnInfo> two{qp(0), qp(1)};
    return error_of([&] { c.exchange(two); });
  });
  OobConnection c = OobConnection::connect(loopback(listener.port()));
  const std::vector<QpConnInfo> four{qp(0), qp(1), qp(2), qp(3)};
  const std::string client_err = error_of([&] { c.exchange(four); });
  const std::string server_err = server.get();
  EXPECT_NE(server_err.find("has 4 QPs, this side 2"), std::string::npos) << server_err;
  EXPECT_NE(client_err.find("has 2 QPs, this side 4"), std::string::npos) << client_err;
}

// 6b. Different transports: both sides fail and say why; the ports of a
// multi-port host reach the peer in every QP's info.
TEST(OobExchange, TransportMismatchAndPorts) {
  {
    OobListener listener(loopback(0));
    auto server = std::async(std::launch::async, [&] {
      OobConnection c = listener.accept();
      std::vector<QpConnInfo> rc{qp(0)};
      return error_of([&] { c.exchange(rc); });
    });
    OobConnection c = OobConnection::connect(loopback(listener.port()));
    std::vector<QpConnInfo> mrc{qp(1)};
    mrc[0].transport = 1;
    const std::string client_err = error_of([&] { c.exchange(mrc); });
    const std::string server_err = server.get();
    EXPECT_NE(server_err.find("uses transport mrc, this side rc"), std::string::npos) << server_err;
    EXPECT_NE(client_err.find("uses transport rc, this side mrc"), std::string::npos) << client_err;
  }
  OobListener listener(loopback(0));
  std::vector<QpConnInfo> srv{qp(0), qp(1)};
  for (QpConnInfo& q : srv) {
    q.transport = 1;
    q.num_ports = 3;
    for (uint8_t k = 0; k < 3; ++k) {
      q.port_gid[k][15] = static_cast<uint8_t>(10 + k);
      q.port_mac[k] = {2, 0, 0, 0, 1, k};
    }
  }
  auto server = std::async(std::launch::async, [&] {
    OobConnection c = listener.accept();
    std::vector<QpConnInfo> mine = srv;
    return c.exchange(mine);
  });
  OobConnection c = OobConnection::connect(loopback(listener.port()));
  std::vector<QpConnInfo> cli{qp(5), qp(6)};
  for (QpConnInfo& q : cli) q.transport = 1;
  const auto from_server = c.exchange(cli);
  EXPECT_EQ(from_server, srv);
  EXPECT_EQ(from_server[1].port_gid[2][15], 12);
  EXPECT_EQ(server.get(), cli);
}

// 7. Nobody listening: the client tries exactly connect_attempts times
// (1 ms apart) and names host:port in the error.
TEST(OobExchange, RefusedConnectionBoundedRetries) {
  uint16_t port = 0;
  {
    OobListener probe(loopback(0));  // a port that was just free; closed at scope end
    port = probe.port();
  }
  OobOptions o = loopback(port);
  o.connect_attempts = 3;
  const std::string e = error_of([&] { OobConnection::connect(o); });
  EXPECT_NE(e.find("cannot connect to 127.0.0.1:" + std::to_string(port)), std::string::npos) << e;
  EXPECT_NE(e.find("after 3 attempts"), std::string::npos) << e;
  EXPECT_NE(e.find("refused"), std::string::npos) << e;
}

// 8. A silent peer with io_timeout 0: the receive times out at once (no waiting).
TEST(OobExchange, SilentPeerTimesOut) {
  OobOptions o = loopback(0);
  o.io_timeout = std::chrono::milliseconds(0);
  OobListener listener(o);
  const int fd = raw_connect(listener.port());
  OobConnection c = listener.accept();  // the client is already connected: poll(0) sees it
  const std::vector<QpConnInfo> mine{qp(0)};
  const std::string e = error_of([&] { c.exchange(mine); });
  EXPECT_NE(e.find("timed out after 0 ms waiting for HELLO"), std::string::npos) << e;
  ::close(fd);
}

// 9. Listening on a port in use names it.
TEST(OobExchange, PortInUse) {
  OobListener first(loopback(0));
  const std::string e = error_of([&] { OobListener second(loopback(first.port())); });
  EXPECT_NE(e.find("cannot listen on 127.0.0.1:" + std::to_string(first.port())), std::string::npos) << e;
}

// 10. A server whose client never comes: accept() gives up after
// accept_timeout, not the (long) io_timeout, naming address and wait.
TEST(OobExchange, AcceptGivesUpAfterAcceptTimeout) {
  OobOptions o = loopback(0);
  o.io_timeout = std::chrono::milliseconds(600000);  // sf-nic's: a silent peer mid-test
  o.accept_timeout = std::chrono::milliseconds(1);
  OobListener listener(o);
  const std::string e = error_of([&] { listener.accept(); });
  EXPECT_NE(e.find("no client connected to 127.0.0.1:" + std::to_string(listener.port()) + " within 1 ms"),
            std::string::npos)
      << e;
}

// 11. The cancel flag ends every wait: accept, the connect retries and a
// receive from a silent peer, each with 600 s timeouts (the test would hang
// without it). Set before the wait and from another thread during it.
TEST(OobExchange, CancelEndsEveryWait) {
  std::atomic<bool> cancel{true};
  OobOptions o = loopback(0);
  o.io_timeout = std::chrono::milliseconds(600000);
  o.cancel = &cancel;
  OobListener listener(o);
  EXPECT_THROW(listener.accept(), OobCancelled);

  uint16_t closed_port = 0;
  {
    OobListener probe(loopback(0));
    closed_port = probe.port();
  }
  OobOptions oc = o;
  oc.port = closed_port;
  oc.connect_attempts = 1000;
  oc.retry_interval = std::chrono::milliseconds(600000);
  EXPECT_THROW(OobConnection::connect(oc), OobCancelled);

  // A connected peer that never speaks; the flag set while the receive waits.
  cancel = false;
  const int fd = raw_connect(listener.port());
  OobConnection c = listener.accept();
  auto waiting = std::async(std::launch::async, [&] { return error_of([&] { c.barrier(); }); });
  cancel = true;
  EXPECT_EQ(waiting.get(), "cancelled");
  ::close(fd);
}

}  // namespace
}  // namespace sf::nic
