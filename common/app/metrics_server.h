// A Prometheus metrics endpoint for sf-switch and sf-nic (docs/ops.md): a
// small HTTP/1.0 server on a plain TCP socket, run by one thread of its own
// (never a datapath lcore). Each GET /metrics calls the app's render
// function on that thread, which reads the counters the way DPDK telemetry
// does (plain monotonic uint64_t written by one lcore, read racily: a sample
// may be a few packets stale, never torn on x86-64).
//
// Two steps so a busy port is refused before EAL starts: listen() binds at
// argument time, serve() starts the thread once there is something to read.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace sf::app {

// The text exposition format (version 0.0.4): one HELP and one TYPE line per
// family, the family's samples together, label values escaped.
class MetricsText {
 public:
  enum class Type { kCounter, kGauge };
  using Labels = std::vector<std::pair<std::string, std::string>>;
  // A sample of family `name` (declared on first use with `type` and `help`).
  void add(std::string_view name, Type type, std::string_view help, const Labels& labels, double value);
  void add(std::string_view name, Type type, std::string_view help, const Labels& labels, uint64_t value);
  std::string str() const;

 private:
  struct Family {
    Type type;
    std::string help;
    std::string samples;
  };
  Family& family(std::string_view name, Type type, std::string_view help);
  static void append_labels(std::string& out, const Labels& labels);
  std::vector<std::string> order_;
  std::map<std::string, Family, std::less<>> families_;
};

class MetricsServer {
 public:
  using Render = std::function<std::string()>;
  MetricsServer() = default;
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  ~MetricsServer() { stop(); }

  // Binds addr:port (IPv4 or IPv6 literal) and listens. Returns "" or an
  // error naming the address ("127.0.0.1:9100: Address already in use").
  std::string listen(const std::string& addr, uint16_t port);
  // Starts the server thread: GET /metrics answers render()'s text, anything
  // else 404 (or 405 for a method other than GET/HEAD). Needs listen().
  void serve(Render render);
  // Stops the thread and closes the socket (idempotent).
  void stop();
  bool listening() const { return fd_ >= 0; }
  // The bound port (the one asked for, or the kernel's choice for port 0).
  uint16_t port() const { return port_; }
  uint64_t scrapes() const { return scrapes_.load(std::memory_order_relaxed); }

 private:
  void run();
  void handle(int conn);
  int fd_ = -1;
  uint16_t port_ = 0;
  Render render_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> scrapes_{0};
  std::thread thread_;
};

// The apps' --metrics-port / --metrics-addr, bound at argument time: an
// address without a port is refused, the address defaults to 127.0.0.1
// (written back to `addr`), a port that cannot be bound is refused. Returns
// std::nullopt to go on, else exit status 2 after a line on stderr naming
// `prog`.
std::optional<int> listen_metrics_flags(MetricsServer& server, std::string& addr, uint16_t port, std::string_view prog);

}  // namespace sf::app
