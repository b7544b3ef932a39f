// perftest-style out-of-band exchange over TCP (see oob_exchange.h for the format).
#include "nic/app/oob_exchange.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>

namespace sf::nic {

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 48)) {
    if (c == '\n') {
      out += "\\n";
    } else if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    }
  }
  if (s.size() > 48) out += "...";
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(int err) { return std::strerror(err); }

std::string host_port(const std::string& host, uint16_t port) {
  // IPv6 literals in brackets, as in URLs.
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

std::string sockaddr_text(const sockaddr* sa, socklen_t len) {
  char host[NI_MAXHOST];
  char serv[NI_MAXSERV];
  if (getnameinfo(sa, len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  return host_port(host, static_cast<uint16_t>(std::stoi(serv)));
}

// Printable excerpt of a received message for error texts.
// Templates: 'h' marks one lower-case hex digit, everything else is literal.
constexpr std::string_view kHelloTmpl = "SFOOB/3 HELLO nqp=hhhh tr=hh np=hh\n";
constexpr std::string_view kPortTmpl = "SFOOB/3 PORT idx=hh gid=hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh mac=hhhhhhhhhhhh\n";
constexpr std::string_view kQpTmpl =
    "SFOOB/3 QP idx=hhhh lid=hhhh qpn=hhhhhh psn=hhhhhh rkey=hhhhhhhh va=hhhhhhhhhhhhhhhh "
    "gid=hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh mac=hhhhhhhhhhhh mtu=hhhh size=hhhhhhhhhhhhhhhh\n";
constexpr std::string_view kDoneTmpl = "SFOOB/3 DONE\n";
static_assert(kHelloTmpl.size() == kOobHelloBytes);
static_assert(kPortTmpl.size() == kOobPortBytes);
static_assert(kQpTmpl.size() == kOobQpBytes);
static_assert(kDoneTmpl.size() == kOobDoneBytes);
constexpr std::string_view kBwRepTmpl = "SFOOB/3 BWREP msgs=hhhhhhhhhhhhhhhh ns=hhhhhhhhhhhhhhhh peak=hhhhhhhhhhhhhhhh\n";
static_assert(kBwRepTmpl.size() == kOobBwReportBytes);

// The field ("qpn") whose value or name covers position `pos` of a template.
std::string field_at(std::string_view tmpl, size_t pos) {
  const size_t eq = tmpl.rfind('=', pos);
  const size_t sp = tmpl.rfind(' ', pos);
  if (eq == std::string_view::npos || (sp != std::string_view::npos && sp > eq)) {
    // In a field name or the message keyword: name the next field, if any.
    const size_t next_eq = tmpl.find('=', pos);
    if (next_eq == std::string_view::npos) return "message keyword";
    const size_t start = tmpl.rfind(' ', next_eq) + 1;
    return std::string(tmpl.substr(start, next_eq - start));
  }
  const size_t start = (sp == std::string_view::npos ? 0 : sp + 1);
  return std::string(tmpl.substr(start, eq - start));
}

// The first bytes of a message: an sf-nic message of this version? Checked
// before reading the rest, so a foreign protocol or another version (whose
// messages may be shorter) fails at once instead of at the receive timeout.
void check_version(std::string_view line, std::string_view what) {
  const std::string_view version = kOobVersion;
  if (line.substr(0, 6) != "SFOOB/") {
    throw OobError(std::string(what) + ": not an sf-nic OOB message (got '" + printable(line) + "')");
  }
  if (line.substr(0, version.size() + 1) != std::string(version) + " ") {
    const size_t end = line.find(' ');
    throw OobError(std::string(what) + ": peer speaks " +
                   printable(line.substr(0, end == std::string_view::npos ? 10 : end)) + ", this side " +
                   std::string(version));
  }
}

// Checks `line` against `tmpl`; throws naming the message and the field.
void check_template(std::string_view line, std::string_view tmpl, std::string_view what) {
  check_version(line, what);
  if (line.size() != tmpl.size()) {
    throw OobError(std::string(what) + ": expected " + std::to_string(tmpl.size()) + " bytes, got " +
                   std::to_string(line.size()));
  }
  for (size_t i = 0; i < tmpl.size(); ++i) {
    const bool ok = tmpl[i] == 'h' ? hex_value(line[i]) >= 0 : line[i] == tmpl[i];
    if (!ok) {
      throw OobError(std::string(what) + ": malformed " + field_at(tmpl, i) + " at byte " + std::to_string(i) +
                     " (got '" + printable(line) + "')");
    }
  }
}

uint64_t hex_field(std::string_view line, std::string_view tmpl, std::string_view name) {
  const size_t at = tmpl.find(std::string(" ") + std::string(name) + "=");
  const size_t start = at + name.size() + 2;
  size_t end = start;
  while (end < tmpl.size() && tmpl[end] == 'h') ++end;
  uint64_t v = 0;
  for (size_t i = start; i < end; ++i) v = (v << 4) | static_cast<uint64_t>(hex_value(line[i]));
  return v;
}

std::string hex(uint64_t v, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}

// The longest a wait goes without looking at the cancel flag.
constexpr std::chrono::milliseconds kCancelCheck{50};

bool cancelled(const std::atomic<bool>* cancel) {
  return cancel != nullptr && cancel->load(std::memory_order_relaxed);
}

// poll() for one fd until `deadline`, in slices of kCancelCheck: > 0 ready,
// 0 timed out, < 0 error; throws OobCancelled once `cancel` is set.
int poll_one(int fd, short events, Clock::time_point deadline, const std::atomic<bool>* cancel) {
  for (;;) {
    if (cancelled(cancel)) throw OobCancelled();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const bool sliced = cancel != nullptr && left > kCancelCheck;
    if (sliced) left = kCancelCheck;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0 && sliced) continue;
    return r;
  }
}

// Sleeps `d`, in slices of kCancelCheck; throws OobCancelled once `cancel` is set.
void sleep_unless_cancelled(std::chrono::milliseconds d, const std::atomic<bool>* cancel) {
  const auto until = Clock::now() + d;
  for (;;) {
    if (cancelled(cancel)) throw OobCancelled();
    const auto now = Clock::now();
    if (now >= until) return;
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, kCancelCheck));
  }
}

void set_nonblocking(int fd, bool on) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK));
}

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list != nullptr) freeaddrinfo(list);
  }
};

void resolve(const OobOptions& opts, bool passive, AddrInfo& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const std::string port = std::to_string(opts.port);
  const int rc = getaddrinfo(opts.host.empty() ? nullptr : opts.host.c_str(), port.c_str(), &hints, &out.list);
  if (rc != 0) {
    throw OobError("cannot resolve " + host_port(opts.host, opts.port) + ": " + gai_strerror(rc));
  }
}

}  // namespace

// ---- codec ----

std::string encode_hello(const OobHello& h) {
  return std::string(kOobVersion) + " HELLO nqp=" + hex(h.num_qps & 0xffff, 4) + " tr=" + hex(h.transport, 2) +
         " np=" + hex(h.num_ports, 2) + "\n";
}

OobHello parse_hello(std::string_view line, std::string_view what) {
  check_template(line, kHelloTmpl, what);
  OobHello h;
  h.num_qps = static_cast<uint32_t>(hex_field(line, kHelloTmpl, "nqp"));
  h.transport = static_cast<uint8_t>(hex_field(line, kHelloTmpl, "tr"));
  h.num_ports = static_cast<uint8_t>(hex_field(line, kHelloTmpl, "np"));
  if (h.transport > 1) throw OobError(std::string(what) + ": unknown transport " + std::to_string(h.transport));
  if (h.num_ports < 1 || h.num_ports > kMaxConnPorts) {
    throw OobError(std::string(what) + ": np is " + std::to_string(h.num_ports) + ", want 1.." +
                   std::to_string(kMaxConnPorts));
  }
  return h;
}

std::string encode_port(uint32_t idx, const std::array<uint8_t, 16>& gid, const std::array<uint8_t, 6>& mac) {
  std::string g, m;
  for (uint8_t b : gid) g += hex(b, 2);
  for (uint8_t b : mac) m += hex(b, 2);
  return std::string(kOobVersion) + " PORT idx=" + hex(idx & 0xff, 2) + " gid=" + g + " mac=" + m + "\n";
}

void parse_port(std::string_view line, uint32_t expect_idx, std::string_view what, std::array<uint8_t, 16>* gid,
                std::array<uint8_t, 6>* mac) {
  check_template(line, kPortTmpl, what);
  const auto idx = static_cast<uint32_t>(hex_field(line, kPortTmpl, "idx"));
  if (idx != expect_idx) {
    throw OobError(std::string(what) + ": idx is " + std::to_string(idx) + ", expected " + std::to_string(expect_idx));
  }
  const size_t gid_at = kPortTmpl.find(" gid=") + 5;
  for (size_t i = 0; i < 16; ++i) {
    (*gid)[i] = static_cast<uint8_t>(hex_value(line[gid_at + 2 * i]) * 16 + hex_value(line[gid_at + 2 * i + 1]));
  }
  const size_t mac_at = kPortTmpl.find(" mac=") + 5;
  for (size_t i = 0; i < 6; ++i) {
    (*mac)[i] = static_cast<uint8_t>(hex_value(line[mac_at + 2 * i]) * 16 + hex_value(line[mac_at + 2 * i + 1]));
  }
}

std::string encode_qp(uint32_t idx, const QpConnInfo& qp) {
  std::string gid;
  for (uint8_t b : qp.gid) gid += hex(b, 2);
  std::string mac;
  for (uint8_t b : qp.mac) mac += hex(b, 2);
  return std::string(kOobVersion) + " QP idx=" + hex(idx & 0xffff, 4) + " lid=" + hex(qp.lid, 4) +
         " qpn=" + hex(qp.qpn & 0xffffff, 6) + " psn=" + hex(qp.psn & 0xffffff, 6) + " rkey=" + hex(qp.rkey, 8) +
         " va=" + hex(qp.va, 16) + " gid=" + gid + " mac=" + mac + " mtu=" + hex(qp.mtu_bytes & 0xffff, 4) +
         " size=" + hex(qp.msg_size_bytes, 16) + "\n";
}

QpConnInfo parse_qp(std::string_view line, uint32_t expect_idx, std::string_view what) {
  check_template(line, kQpTmpl, what);
  const auto idx = static_cast<uint32_t>(hex_field(line, kQpTmpl, "idx"));
  if (idx != expect_idx) {
    throw OobError(std::string(what) + ": idx is " + std::to_string(idx) + ", expected " +
                   std::to_string(expect_idx));
  }
  QpConnInfo qp;
  qp.lid = static_cast<uint16_t>(hex_field(line, kQpTmpl, "lid"));
  qp.qpn = static_cast<uint32_t>(hex_field(line, kQpTmpl, "qpn"));
  qp.psn = static_cast<uint32_t>(hex_field(line, kQpTmpl, "psn"));
  qp.rkey = static_cast<uint32_t>(hex_field(line, kQpTmpl, "rkey"));
  qp.va = hex_field(line, kQpTmpl, "va");
  const size_t gid_at = kQpTmpl.find(" gid=") + 5;
  for (size_t i = 0; i < 16; ++i) {
    qp.gid[i] = static_cast<uint8_t>(hex_value(line[gid_at + 2 * i]) * 16 + hex_value(line[gid_at + 2 * i + 1]));
  }
  const size_t mac_at = kQpTmpl.find(" mac=") + 5;
  for (size_t i = 0; i < 6; ++i) {
    qp.mac[i] = static_cast<uint8_t>(hex_value(line[mac_at + 2 * i]) * 16 + hex_value(line[mac_at + 2 * i + 1]));
  }
  qp.mtu_bytes = static_cast<uint32_t>(hex_field(line, kQpTmpl, "mtu"));
  qp.msg_size_bytes = hex_field(line, kQpTmpl, "size");
  if (qp.mtu_bytes == 0) throw OobError(std::string(what) + ": mtu is 0");
  return qp;
}

std::string encode_done() { return std::string(kDoneTmpl); }

void parse_done(std::string_view line, std::string_view what) { check_template(line, kDoneTmpl, what); }

std::string encode_bw_report(const OobBwReport& r) {
  return std::string(kOobVersion) + " BWREP msgs=" + hex(r.messages, 16) +
         " ns=" + hex(static_cast<uint64_t>(std::max<int64_t>(0, r.elapsed_ns)), 16) +
         " peak=" + hex(static_cast<uint64_t>(std::max<int64_t>(0, r.best_msg_ns)), 16) + "\n";
}

OobBwReport parse_bw_report(std::string_view line, std::string_view what) {
  check_template(line, kBwRepTmpl, what);
  OobBwReport r;
  r.messages = hex_field(line, kBwRepTmpl, "msgs");
  const uint64_t ns = hex_field(line, kBwRepTmpl, "ns");
  const uint64_t peak = hex_field(line, kBwRepTmpl, "peak");
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (ns > kMax || peak > kMax) {
    throw OobError(std::string(what) + ": time out of range");
  }
  r.elapsed_ns = static_cast<int64_t>(ns);
  r.best_msg_ns = static_cast<int64_t>(peak);
  return r;
}

// ---- listener ----

OobListener::OobListener(const OobOptions& opts) : opts_(opts) {
  AddrInfo ai;
  resolve(opts, true, ai);
  int last_err = 0;
  for (addrinfo* a = ai.list; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last_err = errno;
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 4) == 0) {
      sockaddr_storage ss{};
      socklen_t len = sizeof ss;
      getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
      port_ = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                       : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
      fd_ = fd;
      return;
    }
    last_err = errno;
    ::close(fd);
  }
  throw OobError("cannot listen on " + host_port(opts.host, opts.port) + ": " + errno_text(last_err));
}

OobListener::~OobListener() {
  if (fd_ >= 0) ::close(fd_);
}

OobListener::OobListener(OobListener&& o) noexcept : fd_(o.fd_), port_(o.port_), opts_(std::move(o.opts_)) {
  o.fd_ = -1;
}

OobListener& OobListener::operator=(OobListener&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    port_ = o.port_;
    opts_ = std::move(o.opts_);
    o.fd_ = -1;
  }
  return *this;
}

OobConnection OobListener::accept() {
  const auto wait = opts_.accept_timeout.count() > 0 ? opts_.accept_timeout : opts_.io_timeout;
  const auto deadline = Clock::now() + wait;
  const int r = poll_one(fd_, POLLIN, deadline, opts_.cancel);
  if (r == 0) {
    throw OobError("no client connected to " + host_port(opts_.host, port_) + " within " +
                   std::to_string(wait.count()) + " ms");
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  const int fd = r < 0 ? -1 : ::accept4(fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
  if (fd < 0) throw OobError("accept on " + host_port(opts_.host, port_) + " failed: " + errno_text(errno));
  return OobConnection(fd, true, sockaddr_text(reinterpret_cast<sockaddr*>(&ss), len), opts_.io_timeout,
                       opts_.cancel);
}

// ---- connection ----

OobConnection OobConnection::connect(const OobOptions& opts) {
  const std::string target = host_port(opts.host, opts.port);
  const uint32_t attempts = std::max<uint32_t>(1, opts.connect_attempts);
  std::string last_error = "no address";
  for (uint32_t attempt = 1; attempt <= attempts; ++attempt) {
    AddrInfo ai;
    resolve(opts, false, ai);
    for (addrinfo* a = ai.list; a != nullptr; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) {
        last_error = errno_text(errno);
        continue;
      }
      set_nonblocking(fd, true);
      int err = 0;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
        err = errno;
        if (err == EINPROGRESS) {
          int r = 0;
          try {
            r = poll_one(fd, POLLOUT, Clock::now() + opts.io_timeout, opts.cancel);
          } catch (const OobCancelled&) {
            ::close(fd);
            throw;
          }
          if (r == 0) {
            err = ETIMEDOUT;
          } else {
            socklen_t len = sizeof err;
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
          }
        }
      }
      if (err == 0) {
        set_nonblocking(fd, false);
        return OobConnection(fd, false, target, opts.io_timeout, opts.cancel);
      }
      last_error = errno_text(err);
      ::close(fd);
    }
    if (attempt < attempts) sleep_unless_cancelled(opts.retry_interval, opts.cancel);
  }
  throw OobError("cannot connect to " + target + " after " + std::to_string(attempts) + " attempt" +
                 (attempts == 1 ? "" : "s") + " (" + std::to_string(opts.retry_interval.count()) +
                 " ms apart): " + last_error);
}

OobConnection::~OobConnection() {
  if (fd_ >= 0) ::close(fd_);
}

OobConnection::OobConnection(OobConnection&& o) noexcept
    : fd_(o.fd_), server_(o.server_), peer_(std::move(o.peer_)), io_timeout_(o.io_timeout_), cancel_(o.cancel_) {
  o.fd_ = -1;
}

OobConnection& OobConnection::operator=(OobConnection&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    server_ = o.server_;
    peer_ = std::move(o.peer_);
    io_timeout_ = o.io_timeout_;
    cancel_ = o.cancel_;
    o.fd_ = -1;
  }
  return *this;
}

void OobConnection::send_all(std::string_view bytes, std::string_view what) {
  const auto deadline = Clock::now() + io_timeout_;
  size_t sent = 0;
  while (sent < bytes.size()) {
    if (poll_one(fd_, POLLOUT, deadline, cancel_) == 0) {
      throw OobError("timed out after " + std::to_string(io_timeout_.count()) + " ms sending " +
                     std::string(what) + " to " + peer_);
    }
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw OobError("sending " + std::string(what) + " to " + peer_ + " failed: " + errno_text(errno));
    }
    sent += static_cast<size_t>(n);
  }
}

std::string OobConnection::recv_exact(size_t n, std::string_view what) {
  const auto deadline = Clock::now() + io_timeout_;
  std::string buf(n, '\0');
  size_t got = 0;
  while (got < n) {
    if (poll_one(fd_, POLLIN, deadline, cancel_) == 0) {
      throw OobError("timed out after " + std::to_string(io_timeout_.count()) + " ms waiting for " +
                     std::string(what) + " from " + peer_ + " (" + std::to_string(got) + " of " +
                     std::to_string(n) + " bytes received)");
    }
    const ssize_t r = ::recv(fd_, buf.data() + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw OobError("receiving " + std::string(what) + " from " + peer_ + " failed: " + errno_text(errno));
    }
    if (r == 0) {
      throw OobError(peer_ + " closed the connection after " + std::to_string(got) + " of " + std::to_string(n) +
                     " bytes of " + std::string(what) +
                     (got > 0 ? " (got '" + printable(std::string_view(buf).substr(0, got)) + "')" : ""));
    }
    got += static_cast<size_t>(r);
  }
  return buf;
}

OobConnection::End OobConnection::wait_end(std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  char c = 0;
  for (;;) {
    if (poll_one(fd_, POLLIN, deadline, cancel_) == 0) return End::kTimeout;
    const ssize_t r = ::recv(fd_, &c, 1, MSG_PEEK);
    if (r > 0) return End::kData;
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    return End::kClosed;  // end of stream, or reset by the peer
  }
}

std::vector<QpConnInfo> OobConnection::exchange(std::span<const QpConnInfo> local) {
  if (local.empty()) throw OobError("no QP to exchange");
  const QpConnInfo& me = local[0];  // transport and ports: the same in every QP
  const OobHello my_hello{static_cast<uint32_t>(local.size()), me.transport, me.num_ports};
  std::string mine = encode_hello(my_hello);
  for (size_t i = 0; i < local.size(); ++i) mine += encode_qp(static_cast<uint32_t>(i), local[i]);
  for (uint32_t k = 0; k < me.num_ports; ++k) mine += encode_port(k, me.port_gid[k], me.port_mac[k]);
  const std::string hello_what = "HELLO from " + peer_;

  auto receive_peer = [&]() {
    std::string line = recv_exact(kOobVersion.size() + 1, hello_what);
    check_version(line, hello_what);
    line += recv_exact(kOobHelloBytes - line.size(), hello_what);
    const OobHello h = parse_hello(line, hello_what);
    auto refuse = [&](const std::string& why) {
      if (server_) send_all(encode_hello(my_hello), "HELLO");  // so the client can say why too
      throw OobError(why);
    };
    if (h.num_qps != local.size()) {
      refuse(peer_ + " has " + std::to_string(h.num_qps) + " QPs, this side " + std::to_string(local.size()) +
             " (the number of QPs, -q, must match)");
    }
    if (h.transport != me.transport) {
      auto name = [](uint8_t t) { return t == 1 ? std::string("mrc") : std::string("rc"); };
      refuse(peer_ + " uses transport " + name(h.transport) + ", this side " + name(me.transport) +
             " (--transport must match)");
    }
    std::vector<QpConnInfo> remote;
    remote.reserve(h.num_qps);
    for (uint32_t i = 0; i < h.num_qps; ++i) {
      const std::string what = "QP " + std::to_string(i) + " info from " + peer_;
      remote.push_back(parse_qp(recv_exact(kOobQpBytes, what), i, what));
    }
    QpConnInfo ports;
    ports.transport = h.transport;
    ports.num_ports = h.num_ports;
    for (uint32_t k = 0; k < h.num_ports; ++k) {
      const std::string what = "port " + std::to_string(k + 1) + " info from " + peer_;
      parse_port(recv_exact(kOobPortBytes, what), k, what, &ports.port_gid[k], &ports.port_mac[k]);
    }
    for (QpConnInfo& q : remote) {
      q.transport = ports.transport;
      q.num_ports = ports.num_ports;
      q.port_gid = ports.port_gid;
      q.port_mac = ports.port_mac;
    }
    return remote;
  };

  if (server_) {
    std::vector<QpConnInfo> remote = receive_peer();
    send_all(mine, "QP info");
    return remote;
  }
  send_all(mine, "QP info");
  return receive_peer();
}

void OobConnection::send_bw_report(const OobBwReport& r) { send_all(encode_bw_report(r), "BW report"); }

OobBwReport OobConnection::recv_bw_report() {
  const std::string what = "BW report from " + peer_;
  return parse_bw_report(recv_exact(kOobBwReportBytes, what), what);
}

void OobConnection::barrier() {
  const std::string what = "DONE from " + peer_;
  if (server_) {
    parse_done(recv_exact(kOobDoneBytes, what), what);
    send_all(encode_done(), "DONE");
  } else {
    send_all(encode_done(), "DONE");
    parse_done(recv_exact(kOobDoneBytes, what), what);
  }
}

}  // namespace sf::nic
