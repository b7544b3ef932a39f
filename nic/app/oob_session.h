// The out-of-band side of one sf-nic workload, on its own control thread,
// in three phases that the main thread steps through (perftest's order):
//   1. exchange: the server listens (the client connects, retrying) and both
//      send their QP info; the main thread waits for every workload's peer
//      info, then moves the QPs to RTS;
//   2. sync: after connected() both sides meet at a barrier, so no request
//      reaches a peer QP that is not yet in RTR; the main thread starts the
//      data path when every session is synced;
//   3. done: once the workload's traffic is done, a second barrier; the peer's
//      DONE marks the workload finished (Workload::set_peer_done).
// With oob_format perftest the same phases run perftest's steps
// (oob_perftest.h) against an unmodified perftest peer.
// A failure in any phase is kept as an error message (never thrown across
// threads). Threading: the session's thread plus the main thread through
// the synchronised accessors below.
// Lifetime: the thread reads the Workload and the session itself until it
// ends, so release() (and the destructor) stop it -- every wait of the
// exchange looks at the session's cancel flag at least every 50 ms -- and
// join it; the owner destroys the Workload only after that. It is never
// detached (a detached thread blocked on a silent peer woke up after main()
// had destroyed both: a use-after-free when SIGINT came mid-run).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nic/app/oob_exchange.h"
#include "nic/app/oob_perftest.h"
#include "nic/app/perftest_engine.h"

namespace sf::nic::app {

class OobSession {
 public:
  // `stop` is the process's stop flag (SIGINT); the session gives up waiting when it is set.
  OobSession(Workload& w, OobOptions opts, const std::atomic<bool>& stop);
  ~OobSession();
  OobSession(const OobSession&) = delete;
  OobSession& operator=(const OobSession&) = delete;

  // Phase 1 result: true with peer_info() filled, false with error() set.
  // Blocks until the exchange ended.
  bool wait_exchanged();
  const std::vector<QpConnInfo>& peer_info() const { return peer_; }
  // Main thread: the QPs are in RTS (or failed: connected(false) ends the session).
  void connected(bool ok);
  // Phase 2 result (blocks).
  bool wait_synced();
  // The thread has ended (phase 3 done, failed, or stopped); never blocks.
  bool ended() const { return ended_.load(std::memory_order_acquire); }
  std::string error() const;
  // Stops the thread if it has not ended (a peer that never says DONE must
  // not keep the process alive after SIGINT) and joins it, within ~50 ms.
  // Idempotent.
  void release();

 private:
  enum class Phase : uint8_t { kExchanging, kExchanged, kConnected, kSynced, kFailed };
  void run();
  // The exchange after connect, sf-nic's own or perftest's (oob_perftest.h);
  // false: stopped while waiting for the main thread.
  bool run_sf(OobConnection& conn);
  bool run_perftest(OobConnection& conn);
  bool end_perftest(OobConnection& conn, const PerftestPlan& plan, const std::string& mine0, const std::string& from);
  bool exchange_perftest_report(OobConnection& conn, const std::string& from);
  // Until the workload's traffic is done; false when stopped.
  bool wait_traffic();
  void set_phase(Phase p);
  bool wait_for(Phase p);
  void fail(std::string why);

  Workload& w_;
  OobOptions opts_;
  const std::atomic<bool>& stop_;
  std::vector<QpConnInfo> peer_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  Phase phase_ = Phase::kExchanging;
  std::string error_;
  std::atomic<bool> ended_{false};
  std::atomic<bool> cancel_{false};  // release(): every wait of the exchange gives up
  std::thread thread_;
};

}  // namespace sf::nic::app
