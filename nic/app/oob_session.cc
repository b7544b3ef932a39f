// One workload's out-of-band session. See oob_session.h.
#include "nic/app/oob_session.h"

#include <cmath>
#include <optional>

#include "nic/app/oob_perftest.h"
#include "nic/app/perftest_report.h"
#include "nic/app/sf_nic_report.h"
#include "nic/rc/qp.h"

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
    const bool done = w_.config().oob_format == OobFormat::kPerftest ? run_perftest(*conn) : run_sf(*conn);
    if (!done) {
      ended_.store(true, std::memory_order_release);
      return;
    }
    w_.set_peer_done();
  } catch (const OobCancelled&) {
    fail(who + ": stopped before the peer answered");
  } catch (const std::exception& e) {
    fail(who + ": " + e.what());
  }
  ended_.store(true, std::memory_order_release);
}

bool OobSession::wait_traffic() {
  while (!w_.traffic_done()) {
    if (stop_.load(std::memory_order_relaxed) || cancel_.load(std::memory_order_relaxed)) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

bool OobSession::run_sf(OobConnection& conn) {
  peer_ = conn.exchange(w_.local_info());
  set_phase(Phase::kExchanged);
  if (!wait_for(Phase::kConnected)) return false;
  conn.barrier();  // both sides' QPs are in RTS
  set_phase(Phase::kSynced);
  if (!wait_traffic()) return false;
  conn.barrier();  // DONE
  // write_bw / read_bw: the client sends its result, the server prints it
  // (perftest's xchg_bw_reports; a send_bw server measures its own).
  const WorkloadType t = w_.config().type;
  if (!is_latency(t) && !is_send(t)) {
    if (w_.config().role == Role::kClient) {
      const Workload::PeerBw b = bw_result(w_);
      conn.send_bw_report({b.messages, b.elapsed.ns(), b.best_msg_time.ns()});
    } else {
      const OobBwReport r = conn.recv_bw_report();
      w_.set_peer_bw({r.messages, TimeNs(r.elapsed_ns), TimeNs(r.best_msg_ns)});
    }
  }
  return true;
}

// perftest's steps for a bw test (oob_perftest.h); sf-nic writes, then reads,
// in each. The peer's QP count is checked through the repeats: perftest sends
// every QP's info twice, so a peer with more QPs repeats a different QP in
// the second round and one with fewer repeats its first QP inside the first.
bool OobSession::run_perftest(OobConnection& conn) {
  const AppWorkload& cfg = w_.config();
  const std::optional<PerftestPlan> plan = perftest_plan(to_string(cfg.type));
  if (!plan) throw OobError("perftest's exchange is not spoken for " + std::string(to_string(cfg.type)));
  const std::vector<QpConnInfo>& local = w_.local_info();
  const std::string from = " from " + conn.peer();
  auto step = [&](const std::string& mine, size_t n, const std::string& what) { return conn.swap(mine, n, what); };

  const std::string version =
      parse_perftest_version(step(encode_perftest_version(), kPerftestVersionBytes, "perftest version"),
                             "perftest version" + from);
  const uint32_t cycle = parse_perftest_u32(step(encode_perftest_u32(kPerftestCycleBuffer), 4, "cycle buffer size"),
                                            "cycle buffer size" + from);
  const uint32_t cache_line = parse_perftest_u32(
      step(encode_perftest_u32(kPerftestCacheLine), 4, "cache line size"), "cache line size" + from);
  if (cycle == 0 || cache_line == 0 || cycle > (1u << 30)) {
    throw OobError("perftest " + version + from + " announced cycle buffer " + std::to_string(cycle) +
                   " and cache line " + std::to_string(cache_line) + " bytes");
  }
  if (cycle > kPerftestCycleBuffer && cfg.size_bytes <= cycle / 2) {
    throw OobError("perftest " + version + from + " cycles its addresses over " + std::to_string(cycle) +
                   " bytes, more than sf-nic's " + std::to_string(kPerftestCycleBuffer) + " for -s " +
                   std::to_string(cfg.size_bytes) + " (use -s > " + std::to_string(cycle / 2) + ")");
  }
  const uint32_t my_mtu = local.empty() ? 4096 : local[0].mtu_bytes;
  const uint32_t peer_mtu = parse_perftest_mtu(step(encode_perftest_mtu(my_mtu), 2, "MTU"), "MTU" + from);
  const uint32_t mtu = std::min(my_mtu, peer_mtu);

  std::vector<std::string> mine;
  std::vector<PerftestDest> theirs;
  // A latency test's slot 1 (region + size) is where the peer writes / reads.
  const uint64_t slot1 = plan->slot1_address ? cfg.size_bytes : 0;
  for (QpConnInfo q : local) {
    q.va += slot1;
    mine.push_back(encode_perftest_dest(to_perftest_dest(q, rc::kMaxRdAtomic)));
  }
  auto mismatch = [&]() {
    return OobError("perftest" + from + " has a different number of QPs than this side's " +
                    std::to_string(local.size()) + " (-q must match)");
  };
  peer_.clear();
  for (size_t i = 0; i < mine.size(); ++i) {
    const std::string what = "QP " + std::to_string(i) + " info";
    const PerftestDest d = parse_perftest_dest(step(mine[i], kPerftestDestBytes, what), what + from);
    for (const PerftestDest& e : theirs) {
      if (e.qpn == d.qpn) throw mismatch();
    }
    theirs.push_back(d);
    peer_.push_back(to_conn_info(d, mtu, cfg.size_bytes));
    peer_.back().va -= slot1;  // sf-nic writes / reads at the peer's va + size
    // Not carried: the transport is this side's (an MRC peer is configured
    // so: libsfverbs' SFVERBS_TRANSPORT=mrc), one port.
    peer_.back().transport = local[i].transport;
  }
  set_phase(Phase::kExchanged);
  if (!wait_for(Phase::kConnected)) return false;
  auto handshakes = [&](int n, const std::string& what) {
    for (int k = 0; k < n; ++k) parse_perftest_dest(step(mine[0], kPerftestDestBytes, what), what + from);
  };
  handshakes(plan->between_rounds, "connected handshake");  // send_bw
  for (size_t i = 0; i < mine.size(); ++i) {
    const std::string what = "QP " + std::to_string(i) + " info (again)";
    if (parse_perftest_dest(step(mine[i], kPerftestDestBytes, what), what + from) != theirs[i]) throw mismatch();
  }
  // Both sides' QPs are in RTR: after the last, the client's traffic starts.
  handshakes(plan->before_traffic, "start handshake");
  set_phase(Phase::kSynced);
  if (!wait_traffic()) return false;
  try {
    return end_perftest(conn, *plan, mine[0], from);
  } catch (const OobCancelled&) {
    throw;
  } catch (const OobError& e) {
    // perftest's -a and -b add steps (docs/perftest.md "-a and -b").
    throw OobError(std::string(e.what()) + "; perftest's steps after the traffic are not this test's: is the peer " +
                   "run with -a (every size) or -b (bidirectional)? sf-nic serves -a only as a write_bw / read_bw " +
                   "server given -a, and no -b");
  }
}

// The steps after the traffic: end handshakes, the report, the close.
bool OobSession::end_perftest(OobConnection& conn, const PerftestPlan& plan, const std::string& mine0,
                              const std::string& from) {
  auto step = [&](const std::string& mine, size_t n, const std::string& what) { return conn.swap(mine, n, what); };
  for (int k = 0; k < plan.after_traffic; ++k) {
    parse_perftest_dest(step(mine0, kPerftestDestBytes, "end handshake"), "end handshake" + from);
  }
  if (plan.bw_report && !exchange_perftest_report(conn, from)) return false;
  // write_lat has no closing step: perftest closes its socket once its
  // last completion is in (or sends the closing handshake, answered then).
  // This side waits for it, so its NIC keeps running (the session has not
  // ended) and the ACK of the peer's last WRITE is not lost with a process
  // that left first; 2 s at most (another sf-nic would wait as well).
  const bool peer_closes = !plan.close && conn.wait_end(std::chrono::seconds(2)) == OobConnection::End::kData;
  if (plan.close || peer_closes) {
    parse_perftest_dest(step(mine0, kPerftestDestBytes, "closing handshake"), "closing handshake" + from);
    if (step(std::string(kPerftestDone), kPerftestDone.size(), "done") != kPerftestDone) {
      throw OobError("perftest" + from + " did not end with \"done\"");
    }
  }
  return true;
}

// write_bw / read_bw after the end handshake: the client's result, which
// the server prints.
bool OobSession::exchange_perftest_report(OobConnection& conn, const std::string& from) {
  const AppWorkload& cfg = w_.config();
  auto step = [&](const std::string& mine, size_t n, const std::string& what) { return conn.swap(mine, n, what); };

  // The report: the client's result, which the server prints. perftest's
  // server sends its own (unfilled) record back; sf-nic's server sends zeros.
  PerftestBwRep my_rep;
  if (cfg.role == Role::kClient) {
    const Workload::PeerBw b = bw_result(w_);
    my_rep.size = cfg.size_bytes;
    my_rep.iters = b.messages;
    if (b.messages > 0 && b.elapsed > TimeNs::zero()) {
      const BwReport r = compute_bw({cfg.size_bytes, b.messages, b.elapsed, b.best_msg_time}, BwUnits::kGbps);
      my_rep.bw_peak = r.bw_peak;
      my_rep.bw_avg = r.bw_avg;
      my_rep.msg_rate_mpps = r.msg_rate_mpps;
    }
  }
  const PerftestBwRep rep = parse_perftest_bw_rep(
      step(encode_perftest_bw_rep(my_rep), kPerftestBwRepBytes, "BW report"), "BW report" + from);
  if (cfg.role == Role::kServer) {
    if (rep.size != cfg.size_bytes) {
      throw OobError("perftest" + from + " ran -s " + std::to_string(rep.size) + ", this side -s " +
                     std::to_string(cfg.size_bytes) + " (the sizes must match: the region is sized by -s)");
    }
    // Units cancel: the message rate gives the time, the peak / average ratio the best message time.
    Workload::PeerBw b;
    if (rep.iters > 0 && std::isfinite(rep.msg_rate_mpps) && rep.msg_rate_mpps > 0) {
      b.messages = rep.iters;
      const double elapsed_ns = static_cast<double>(rep.iters) / rep.msg_rate_mpps * 1e3;
      b.elapsed = TimeNs(static_cast<int64_t>(std::llround(elapsed_ns)));
      if (std::isfinite(rep.bw_peak) && std::isfinite(rep.bw_avg) && rep.bw_peak > 0 && rep.bw_avg > 0) {
        b.best_msg_time = TimeNs(static_cast<int64_t>(
            std::llround(elapsed_ns / static_cast<double>(rep.iters) * rep.bw_avg / rep.bw_peak)));
      }
    }
    w_.set_peer_bw(b);
  }
  return true;
}

}  // namespace sf::nic::app
