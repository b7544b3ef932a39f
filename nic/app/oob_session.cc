// One workload's out-of-band session. See oob_session.h.
#include "nic/app/oob_session.h"

#include <optional>

#include "nic/app/sf_nic_report.h"

namespace sf::nic::app {

OobSession::OobSession(Workload& w, OobOptions opts, const std::atomic<bool>& stop)
    : w_(w), opts_(std::move(opts)), stop_(stop) {
  opts_.cancel = &cancel_;
  thread_ = std::thread([this] { run(); });
}

OobSession::~OobSession() { release(); }

void OobSession::release() {
  if (!thread_.joinable()) return;
  cancel_.store(true, std::memory_order_relaxed);
  cv_.notify_all();
  thread_.join();
}

std::string OobSession::error() const {
  std::lock_guard<std::mutex> lk(mu_);
  return error_;
}

void OobSession::set_phase(Phase p) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (phase_ != Phase::kFailed) phase_ = p;
  }
  cv_.notify_all();
}

void OobSession::fail(std::string why) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (phase_ != Phase::kFailed) {
      phase_ = Phase::kFailed;
      error_ = std::move(why);
    }
  }
  cv_.notify_all();
}

// Waits (waking every 50 ms for the stop flag) until the phase is `p` or
// later; false on failure or stop.
bool OobSession::wait_for(Phase p) {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (phase_ == Phase::kFailed) return false;
    if (static_cast<int>(phase_) >= static_cast<int>(p)) return true;
    if (stop_.load(std::memory_order_relaxed) || cancel_.load(std::memory_order_relaxed)) return false;
    cv_.wait_for(lk, std::chrono::milliseconds(50));
  }
}

bool OobSession::wait_exchanged() { return wait_for(Phase::kExchanged); }
bool OobSession::wait_synced() { return wait_for(Phase::kSynced); }

void OobSession::connected(bool ok) {
  if (!ok) return fail("QPs could not be connected");
  set_phase(Phase::kConnected);
}

void OobSession::run() {
  const std::string who = "workload " + w_.config().name + " (" + opts_.host + ":" + std::to_string(opts_.port) + ")";
  try {
    std::optional<OobConnection> conn;
    if (w_.config().role == Role::kServer) {
      OobListener listener(opts_);
      try {
        conn.emplace(listener.accept());
      } catch (const OobCancelled&) {
        throw;
      } catch (const OobError& e) {
        throw OobError(std::string(e.what()) + " (the client never came: --oob-wait-s)");
      }
    } else {
      conn.emplace(OobConnection::connect(opts_));
    }
    peer_ = conn->exchange(w_.local_info());
    set_phase(Phase::kExchanged);
    if (!wait_for(Phase::kConnected)) {
      ended_.store(true, std::memory_order_release);
      return;
    }
    conn->barrier();  // both sides' QPs are in RTS
    set_phase(Phase::kSynced);
    while (!w_.traffic_done()) {
      if (stop_.load(std::memory_order_relaxed) || cancel_.load(std::memory_order_relaxed)) {
        ended_.store(true, std::memory_order_release);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    conn->barrier();  // DONE
    // write_bw / read_bw: the client sends its result, the server prints it
    // (perftest's xchg_bw_reports; a send_bw server measures its own).
    const WorkloadType t = w_.config().type;
    if (!is_latency(t) && !is_send(t)) {
      if (w_.config().role == Role::kClient) {
        const Workload::PeerBw b = bw_result(w_);
        conn->send_bw_report({b.messages, b.elapsed.ns(), b.best_msg_time.ns()});
      } else {
        const OobBwReport r = conn->recv_bw_report();
        w_.set_peer_bw({r.messages, TimeNs(r.elapsed_ns), TimeNs(r.best_msg_ns)});
      }
    }
    w_.set_peer_done();
  } catch (const OobCancelled&) {
    fail(who + ": stopped before the peer answered");
  } catch (const std::exception& e) {
    fail(who + ": " + e.what());
  }
  ended_.store(true, std::memory_order_release);
}

}  // namespace sf::nic::app
