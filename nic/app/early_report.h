// sf-nic's --report when a run fails before its results (EAL, ports, the
// out-of-band exchange, link, next hops, connect): FirstError keeps the
// first error logged, and EarlyReport writes {"status": "failed", "error":
// ...} at exit unless the full report was written (docs/nic-app.md
// "Report"). Failing at connect, main.cc writes the full report with
// "error" added instead (the ports' neighbour state says why).
#pragma once

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace sf::nic::app {

class FirstError final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::string first() {
    std::lock_guard<std::mutex> lock(mutex_);
    return first_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& m) override {
    if (m.level >= spdlog::level::err && first_.empty()) first_.assign(m.payload.data(), m.payload.size());
  }
  void flush_() override {}

 private:
  std::string first_;
};

// Installs a FirstError on the default logger; at destruction writes the
// short report to `path` (when set) unless `written`.
class EarlyReport {
 public:
  explicit EarlyReport(std::string path) : path_(std::move(path)), errors_(std::make_shared<FirstError>()) {
    spdlog::default_logger()->sinks().push_back(errors_);
  }
  ~EarlyReport() {
    auto& sinks = spdlog::default_logger()->sinks();
    std::erase(sinks, errors_);
    if (path_.empty() || written) return;
    const std::string e = errors_->first();
    std::ofstream(path_) << nlohmann::json{{"status", "failed"}, {"error", e.empty() ? "stopped" : e}}.dump(2) << "\n";
  }
  EarlyReport(const EarlyReport&) = delete;
  EarlyReport& operator=(const EarlyReport&) = delete;
  std::string first_error() { return errors_->first(); }
  bool written = false;  // the full report is out

 private:
  std::string path_;
  std::shared_ptr<FirstError> errors_;
};

}  // namespace sf::nic::app
