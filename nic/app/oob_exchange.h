// Out-of-band connection setup for sf-nic tests, as perftest does it: the
// server listens on a TCP port (default 18515), the client connects, both
// exchange per-QP connection info (QpConnInfo) and at the end meet at a
// "done" barrier so both sides finish together. Control thread only:
// blocking sockets with poll() timeouts; never used on the data path.
//
// Wire format (version 3, fixed-length text lines, all numbers lower-case hex):
//   hello   "SFOOB/3 HELLO nqp=NNNN tr=TT np=PP\n"                       (35 bytes)
//            tr: the transport (00 RC, 01 MRC; must match), np: the host's ports
//   per QP  "SFOOB/3 QP idx=IIII lid=LLLL qpn=QQQQQQ psn=PPPPPP rkey=KKKKKKKK
//            va=VVVVVVVVVVVVVVVV gid=<32 hex> mac=<12 hex> mtu=MMMM size=SSSSSSSSSSSSSSSS\n"
//            (one line, single spaces, 170 bytes; version 2 added the MAC)
//   per port "SFOOB/3 PORT idx=II gid=<32 hex> mac=<12 hex>\n"            (74 bytes)
//            (version 3: an MRC QP sprays over every port, plane p to port p + 1)
//   barrier "SFOOB/3 DONE\n"                                             (13 bytes)
// The client sends first and the server answers (perftest's order). Every
// message is checked on receipt; a bad, truncated, or foreign message is an
// OobError naming the peer, the message and the field, never a crash.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "nic/app/qp_conn_info.h"

namespace sf::nic {

inline constexpr uint16_t kOobDefaultPort = 18515;  // perftest's default port
inline constexpr std::string_view kOobVersion = "SFOOB/3";

// Every failure of the exchange (setup time: exceptions are fine here).
class OobError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OobOptions {
  std::string host = "127.0.0.1";  // client: the server to reach; server: address to bind
  uint16_t port = kOobDefaultPort;  // server: 0 = any free port (see OobListener::port())
  uint32_t connect_attempts = 10;   // client: tries before giving up (>= 1)
  std::chrono::milliseconds retry_interval{500};  // client: wait between tries
  std::chrono::milliseconds io_timeout{30000};    // each receive and send
  // server: how long accept() waits for a client (a client that died before
  // connecting must not hold the server for io_timeout); 0 = io_timeout.
  std::chrono::milliseconds accept_timeout{0};
  // When set, every wait (accept, connect and its retries, send, receive)
  // looks at it at least every 50 ms and gives up with OobCancelled once it
  // is true: the owner of a session thread can stop and join it.
  const std::atomic<bool>* cancel = nullptr;
};

// A wait given up because OobOptions::cancel was set.
class OobCancelled : public OobError {
 public:
  OobCancelled() : OobError("cancelled") {}
};

class OobConnection;

// The server's listening socket.
class OobListener {
 public:
  explicit OobListener(const OobOptions& opts);  // bind + listen; OobError on failure
  ~OobListener();
  OobListener(const OobListener&) = delete;
  OobListener& operator=(const OobListener&) = delete;
  OobListener(OobListener&& o) noexcept;
  OobListener& operator=(OobListener&& o) noexcept;

  uint16_t port() const { return port_; }  // the bound port (useful with port 0)
  // Waits up to accept_timeout (io_timeout if 0) for one client.
  OobConnection accept();

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  OobOptions opts_;
};

// A bw client's result as the server prints it (perftest's server prints the
// client's BW table): messages, first post to last completion, and the
// shortest average time per message (0 = none).
struct OobBwReport {
  uint64_t messages = 0;
  int64_t elapsed_ns = 0;
  int64_t best_msg_ns = 0;
};

class OobConnection {
 public:
  // Client side: connect_attempts tries, retry_interval apart.
  static OobConnection connect(const OobOptions& opts);

  ~OobConnection();
  OobConnection(const OobConnection&) = delete;
  OobConnection& operator=(const OobConnection&) = delete;
  OobConnection(OobConnection&& o) noexcept;
  OobConnection& operator=(OobConnection&& o) noexcept;

  // Sends `local` and returns the peer's QPs (same count required: one line
  // per QP, in QP order). Client sends first, server receives first.
  std::vector<QpConnInfo> exchange(std::span<const QpConnInfo> local);
  // Both sides send DONE and wait for the peer's.
  void barrier();
  // After the DONE barrier of a write/read bw test (perftest's
  // xchg_bw_reports): the client sends its result, the server receives it.
  void send_bw_report(const OobBwReport& r);
  OobBwReport recv_bw_report();

  // One step of a symmetric exchange (perftest's, oob_perftest.h): sends
  // `mine`, then receives `n` bytes, on either side.
  std::string swap(std::string_view mine, size_t n, std::string_view what) {
    send_all(mine, what);
    return recv_exact(n, std::string(what) + " from " + peer_);
  }

  // Waits at most `limit` for the peer to close the connection or to send
  // something (left unread).
  enum class End : uint8_t { kClosed, kData, kTimeout };
  End wait_end(std::chrono::milliseconds limit);

  bool is_server() const { return server_; }
  const std::string& peer() const { return peer_; }  // "host:port" for messages

 private:
  OobConnection(int fd, bool server, std::string peer, std::chrono::milliseconds io_timeout,
                const std::atomic<bool>* cancel)
      : fd_(fd), server_(server), peer_(std::move(peer)), io_timeout_(io_timeout), cancel_(cancel) {}
  friend class OobListener;

  void send_all(std::string_view bytes, std::string_view what);
  std::string recv_exact(size_t n, std::string_view what);

  int fd_ = -1;
  bool server_ = false;
  std::string peer_;
  std::chrono::milliseconds io_timeout_{};
  const std::atomic<bool>* cancel_ = nullptr;
};

// The message codec, public for tests and tools. parse_* throw OobError
// with `what` naming the message ("QP 2 info from 127.0.0.1:18515").
struct OobHello {
  uint32_t num_qps = 0;
  uint8_t transport = 0;  // QpConnInfo::transport
  uint8_t num_ports = 1;
};
std::string encode_hello(const OobHello& h);
OobHello parse_hello(std::string_view line, std::string_view what);
std::string encode_port(uint32_t idx, const std::array<uint8_t, 16>& gid, const std::array<uint8_t, 6>& mac);
void parse_port(std::string_view line, uint32_t expect_idx, std::string_view what, std::array<uint8_t, 16>* gid,
                std::array<uint8_t, 6>* mac);
std::string encode_qp(uint32_t idx, const QpConnInfo& qp);
QpConnInfo parse_qp(std::string_view line, uint32_t expect_idx, std::string_view what);
std::string encode_done();
void parse_done(std::string_view line, std::string_view what);
std::string encode_bw_report(const OobBwReport& r);
OobBwReport parse_bw_report(std::string_view line, std::string_view what);
// A received message as an error text shows it: printable ASCII, other
// bytes (NUL, ...) as \xNN, at most 48 bytes. Shared by both formats.
std::string printable(std::string_view s);
// A lower-case hex digit's value, else -1.
int hex_value(char c);
inline constexpr size_t kOobHelloBytes = 35;
inline constexpr size_t kOobPortBytes = 74;
inline constexpr size_t kOobQpBytes = 170;
inline constexpr size_t kOobDoneBytes = 13;
inline constexpr size_t kOobBwReportBytes = 78;

}  // namespace sf::nic
