// The Prometheus endpoint. See metrics_server.h.
#include "common/app/metrics_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>

namespace sf::app {
namespace {

std::string format_double(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Writes all of `data` (a slow or gone client ends the answer, not the server).
void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

std::string response(std::string_view status, std::string_view type, std::string_view body, bool head) {
  std::string out = "HTTP/1.0 ";
  out += status;
  out += "\r\nContent-Type: ";
  out += type;
  out += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!head) out += body;
  return out;
}

}  // namespace

// ---- MetricsText ----------------------------------------------------------------

MetricsText::Family& MetricsText::family(std::string_view name, Type type, std::string_view help) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    order_.emplace_back(name);
    it = families_.emplace(std::string(name), Family{type, std::string(help), {}}).first;
  }
  return it->second;
}

void MetricsText::append_labels(std::string& out, const Labels& labels) {
  if (labels.empty()) return;
  out += '{';
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) out += ',';
    first = false;
    out += k;
    out += "=\"";
    for (const char c : v) {
      if (c == '\\') {
        out += "\\\\";
      } else if (c == '"') {
        out += "\\\"";
      } else if (c == '\n') {
        out += "\\n";
      } else {
        out += c;
      }
    }
    out += '"';
  }
  out += '}';
}

void MetricsText::add(std::string_view name, Type type, std::string_view help, const Labels& labels, double value) {
  Family& f = family(name, type, help);
  f.samples += name;
  append_labels(f.samples, labels);
  f.samples += ' ';
  f.samples += format_double(value);
  f.samples += '\n';
}

void MetricsText::add(std::string_view name, Type type, std::string_view help, const Labels& labels,
                      uint64_t value) {
  Family& f = family(name, type, help);
  f.samples += name;
  append_labels(f.samples, labels);
  f.samples += ' ';
  f.samples += std::to_string(value);
  f.samples += '\n';
}

std::string MetricsText::str() const {
  std::string out;
  for (const std::string& name : order_) {
    const Family& f = families_.find(name)->second;
    out += "# HELP " + name + " ";
    for (const char c : f.help) {  // HELP escapes backslash and newline
      if (c == '\\') {
        out += "\\\\";
      } else if (c == '\n') {
        out += "\\n";
      } else {
        out += c;
      }
    }
    out += "\n# TYPE " + name + (f.type == Type::kCounter ? " counter\n" : " gauge\n");
    out += f.samples;
  }
  return out;
}

// ---- MetricsServer --------------------------------------------------------------

std::string MetricsServer::listen(const std::string& addr, uint16_t port) {
  const std::string where = (addr.find(':') != std::string::npos ? "[" + addr + "]" : addr) + ":" +
                            std::to_string(port);
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family = AF_INET;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, addr.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    len = sizeof *v4;
  } else if (inet_pton(AF_INET6, addr.c_str(), &v6->sin6_addr) == 1) {
    family = AF_INET6;
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    len = sizeof *v6;
  } else {
    return addr + ": not an IPv4 or IPv6 address";
  }
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return where + ": socket: " + std::strerror(errno);
  // SO_REUSEADDR lets a restart bind past TIME_WAIT; a port another process
  // listens on is still refused (EADDRINUSE).
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(fd, 16) != 0) {
    const std::string err = where + ": " + std::strerror(errno);
    ::close(fd);
    return err;
  }
  sockaddr_storage bound{};
  socklen_t blen = sizeof bound;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &blen) == 0) {
    port_ = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                    : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  }
  fd_ = fd;
  return "";
}

void MetricsServer::serve(Render render) {
  if (fd_ < 0 || thread_.joinable()) return;
  render_ = std::move(render);
  stop_.store(false);
  thread_ = std::thread([this] { run(); });
}

void MetricsServer::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

void MetricsServer::run() {
  while (!stop_.load()) {
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, 100);  // wakes every 100 ms to see stop()
    if (r <= 0) continue;
    const int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;
    handle(conn);
    ::close(conn);
  }
}

void MetricsServer::handle(int conn) {
  // The request head, at most 8 KiB, within 2 s (one client at a time: a
  // scraper, not the internet).
  std::string req;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (req.find("\r\n\r\n") == std::string::npos && req.find("\n\n") == std::string::npos && req.size() < 8192) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || stop_.load()) return;
    pollfd p{conn, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 100))) <= 0) continue;
    char buf[2048];
    const ssize_t n = ::recv(conn, buf, sizeof buf, 0);
    if (n <= 0) return;
    req.append(buf, static_cast<size_t>(n));
  }
  const size_t eol = req.find_first_of("\r\n");
  const std::string line = req.substr(0, eol);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? std::string::npos : line.find(' ', sp1 + 1);
  if (sp1 == std::string::npos) {
    write_all(conn, response("400 Bad Request", "text/plain", "bad request\n", false));
    return;
  }
  const std::string method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 == std::string::npos ? std::string::npos : sp2 - sp1 - 1);
  if (const size_t q = target.find('?'); q != std::string::npos) target.resize(q);
  const bool head = method == "HEAD";
  if (method != "GET" && !head) {
    write_all(conn, response("405 Method Not Allowed", "text/plain", "GET /metrics\n", false));
    return;
  }
  if (target != "/metrics") {
    write_all(conn, response("404 Not Found", "text/plain", "softfabric: the metrics are at /metrics\n", head));
    return;
  }
  scrapes_.fetch_add(1, std::memory_order_relaxed);
  write_all(conn, response("200 OK", "text/plain; version=0.0.4; charset=utf-8", render_(), head));
}

std::optional<int> listen_metrics_flags(MetricsServer& server, std::string& addr, uint16_t port, std::string_view prog) {
  if (port != 0) {
    if (addr.empty()) addr = "127.0.0.1";
    if (const std::string err = server.listen(addr, port); !err.empty()) {
      std::cerr << prog << ": --metrics-port: cannot listen on " << err << "\n";
      return 2;
    }
  } else if (!addr.empty()) {
    std::cerr << prog << ": --metrics-addr needs --metrics-port\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace sf::app
