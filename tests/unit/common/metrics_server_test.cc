// common/app/metrics_server: the exposition text (HELP/TYPE once per family,
// samples grouped, label values escaped, special floats) and the HTTP/1.0
// server on a loopback socket (200 / 404 / 405, HEAD, a busy port refused).
#include "common/app/metrics_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace sf::app {
namespace {

using Type = MetricsText::Type;

TEST(MetricsText, FamiliesGroupedWithOneHelpAndTypeEach) {
  MetricsText m;
  m.add("a_total", Type::kCounter, "A things.", {{"port", "p0"}}, uint64_t{1});
  m.add("b_bytes", Type::kGauge, "B bytes.", {}, uint64_t{7});
  m.add("a_total", Type::kCounter, "ignored: first help wins", {{"port", "p1"}}, uint64_t{2});
  EXPECT_EQ(m.str(),
            "# HELP a_total A things.\n# TYPE a_total counter\na_total{port=\"p0\"} 1\na_total{port=\"p1\"} 2\n"
            "# HELP b_bytes B bytes.\n# TYPE b_bytes gauge\nb_bytes 7\n");
}

TEST(MetricsText, LabelValuesAndHelpEscaped) {
  MetricsText m;
  m.add("x", Type::kGauge, "back\\slash\nnewline", {{"l", "a\"b\\c\nd"}, {"k", "v"}}, uint64_t{0});
  EXPECT_EQ(m.str(), "# HELP x back\\\\slash\\nnewline\n# TYPE x gauge\nx{l=\"a\\\"b\\\\c\\nd\",k=\"v\"} 0\n");
}

TEST(MetricsText, NumbersRoundTrip) {
  MetricsText m;
  m.add("f", Type::kGauge, "h", {{"i", "0"}}, 0.5);
  m.add("f", Type::kGauge, "h", {{"i", "1"}}, std::numeric_limits<double>::infinity());
  m.add("f", Type::kGauge, "h", {{"i", "2"}}, std::nan(""));
  m.add("f", Type::kGauge, "h", {{"i", "3"}}, 1e-9);
  m.add("u", Type::kCounter, "h", {}, std::numeric_limits<uint64_t>::max());
  const std::string s = m.str();
  EXPECT_NE(s.find("f{i=\"0\"} 0.5\n"), std::string::npos) << s;
  EXPECT_NE(s.find("f{i=\"1\"} +Inf\n"), std::string::npos) << s;
  EXPECT_NE(s.find("f{i=\"2\"} NaN\n"), std::string::npos) << s;
  EXPECT_NE(s.find("f{i=\"3\"} 1e-09\n"), std::string::npos) << s;
  EXPECT_NE(s.find("u 18446744073709551615\n"), std::string::npos) << s;
}

// One request on a fresh connection; the whole answer (the server closes).
std::string request(uint16_t port, const std::string& req) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

TEST(MetricsServer, ServesMetricsAndRefusesTheRest) {
  MetricsServer s;
  ASSERT_EQ(s.listen("127.0.0.1", 0), "");
  ASSERT_NE(s.port(), 0);
  s.serve([] { return std::string("x 1\n"); });
  const std::string ok = request(s.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos) << ok;
  EXPECT_NE(ok.find("Content-Length: 4\r\n"), std::string::npos) << ok;
  EXPECT_EQ(ok.substr(ok.size() - 8), "\r\n\r\nx 1\n") << ok;
  const std::string head = request(s.port(), "HEAD /metrics HTTP/1.0\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << head;
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n") << "HEAD carries no body: " << head;
  EXPECT_EQ(request(s.port(), "GET / HTTP/1.0\r\n\r\n").rfind("HTTP/1.0 404", 0), 0u);
  EXPECT_EQ(request(s.port(), "POST /metrics HTTP/1.0\r\n\r\n").rfind("HTTP/1.0 405", 0), 0u);
  EXPECT_EQ(request(s.port(), "garbage\r\n\r\n").rfind("HTTP/1.0 400", 0), 0u);
  EXPECT_EQ(s.scrapes(), 2u);  // GET and HEAD of /metrics
  s.stop();
  s.stop();  // idempotent
  EXPECT_FALSE(s.listening());
}

TEST(MetricsServer, BusyPortAndBadAddressRefused) {
  MetricsServer a;
  ASSERT_EQ(a.listen("127.0.0.1", 0), "");
  MetricsServer b;
  const std::string err = b.listen("127.0.0.1", a.port());
  EXPECT_EQ(err, "127.0.0.1:" + std::to_string(a.port()) + ": Address already in use");
  EXPECT_FALSE(b.listening());
  EXPECT_EQ(b.listen("localhost", 9100), "localhost: not an IPv4 or IPv6 address");
}

}  // namespace
}  // namespace sf::app
