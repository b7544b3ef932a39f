// The datapath of libsfverbs inside the application's process: DPDK EAL (own
// --file-prefix), one port, a NicNode with one host, and the progress thread
// that runs the node's PollLoop (docs/ibverbs.md "Threading").
//
// Synchronisation: the NicNode and every verbs object under it are
// single-threaded by design (nic_node.h). One fair ticket lock (DeviceLock)
// serialises the progress thread's loop iterations and the application's
// verbs calls; nothing is copied between threads. Lock-free outside it: each
// CQ's completion-count hint (poll_cq on an empty CQ returns without the
// lock, a syscall or a wakeup) and the doorbell that wakes a sleeping
// progress thread when work is posted (ring()).
// Allocation: at start(); verbs control calls (create/destroy) allocate as
// the NIC does; post/poll allocate nothing.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nic/ibverbs/sfverbs_config.h"
#include "nic/verbs/device.h"

namespace sf::nic::ibverbs {

// A fair (FIFO) spin lock that yields the core after a short spin: the
// progress thread re-takes the lock every loop iteration and would starve an
// application thread behind a plain mutex on a 2-core machine.
class DeviceLock {
 public:
  void lock() {
    const uint32_t t = next_.fetch_add(1, std::memory_order_relaxed);
    if (serving_.load(std::memory_order_acquire) != t) wait(t);
  }
  // Takes the lock only if it is free now (nobody holds or waits for it).
  bool try_lock() {
    uint32_t t = serving_.load(std::memory_order_acquire);
    return next_.compare_exchange_strong(t, t + 1, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void unlock() { serving_.fetch_add(1, std::memory_order_release); }

 private:
  static constexpr uint32_t kSpins = 128;
  // The contended path, out of line: the uncontended lock() stays two atomic
  // operations inlined into every verbs call, and the time a thread spends
  // waiting for the lock shows as this one function in a profile
  // (bench/nic/ibverbs_cost.py reports it apart from the work). Not marked
  // cold: the progress thread holds the lock most of the time, so a verbs
  // call often comes here.
  [[gnu::noinline]] void wait(uint32_t t) {
    uint32_t spins = 0;
    while (serving_.load(std::memory_order_acquire) != t) {
      if (++spins < kSpins) {
        __builtin_ia32_pause();
      } else {
        std::this_thread::yield();
      }
    }
  }
  alignas(64) std::atomic<uint32_t> next_{0};
  alignas(64) std::atomic<uint32_t> serving_{0};
};

// A CQ the progress thread watches: its depth hint and its notification arm.
struct WatchedCq {
  verbs::Cq* cq = nullptr;
  std::atomic<uint32_t> depth{0};   // entries stored, as of the last locked section
  std::atomic<bool> armed{false};   // ibv_req_notify_cq, one-shot
  // Fires the CQ's completion event (the channel's fd); called under the lock.
  void (*notify)(void* arg) = nullptr;
  void* notify_arg = nullptr;
};

class Runtime {
 public:
  // The process's runtime (created on first use); nullptr with *err set when
  // the configuration is bad. `configured` false: SFVERBS_PORT unset.
  static Runtime* get(std::string* err, bool* configured);

  const SfVerbsConfig& config() const { return cfg_; }
  // SFVERBS_CC, checked: given to each RC QP as it reaches RTS.
  const CcChoice& cc() const { return cc_; }
  // Brings the datapath up (EAL, port, node, progress thread) once; later
  // calls return the first outcome. Empty string on success.
  std::string start();
  bool started() const { return node_ != nullptr; }

  DeviceLock& lock() { return lock_; }
  NicNode& node() { return *node_; }

  // CQ watch list (under the lock): the progress thread refreshes each
  // entry's depth hint and fires armed notifications.
  void watch(WatchedCq* w);
  void unwatch(WatchedCq* w);
  // Refreshes every watched CQ (under the lock): depth hints, armed events.
  void refresh();
  // The doorbell: wakes the progress thread if it sleeps. Lock-free; called
  // after a locked section that gave the NIC new work (a post, a modify, a
  // dereg waiting for frames to leave, shutdown), never from ibv_poll_cq.
  //
  // What needs a wake, and what does not. Only new work: a WR posted (or a
  // QP moved) while the thread sleeps would otherwise wait up to
  // SFVERBS_MAX_SLEEP_US for the datapath to send it. An empty ibv_poll_cq
  // needs none: a completion is stored by the loop iteration that handles
  // the frame (or the timer) it answers, the thread runs that iteration
  // without being asked (its sleep is bounded by SFVERBS_MAX_SLEEP_US and by
  // the node's next timer), and the iteration publishes the CQ's depth hint
  // before it unlocks (refresh()), which is all the poller reads. Ringing
  // there cost a futex wake (a syscall and a context switch) per empty poll
  // of an application that spins on its CQ (perftest -R's server), which on
  // a 2-core machine starved the datapath it was waiting for. An armed CQ
  // (ibv_req_notify_cq) needs none either: its event is raised in the locked
  // section that stores its next completion (refresh()), and at arm time when
  // it already holds one (op_req_notify_cq), never by a later wake.
  //
  // No lost wakeup (the sleeper, progress_main: b = bell_; lock, one
  // iteration, unlock; sleeping_ = true; futex_wait(&bell_, b); the ringer:
  // lock, work stored, unlock; bell_ += 1; if (sleeping_) wake). Every
  // access to bell_ and sleeping_ is seq_cst. If the ringer's increment
  // precedes the sleeper's read of b, the work was stored before the
  // sleeper's next locked iteration and that iteration sees it. Otherwise
  // the increment follows the read: if it also precedes the kernel's
  // comparison in futex_wait, the wait returns at once (bell_ != b); if it
  // follows that comparison, it follows the store sleeping_ = true (made
  // before the wait), so the ringer's later load sees true and wakes the
  // queued waiter. (The ringer reading false would put its load, and so its
  // increment, before that store and before the comparison: a contradiction.)
  void ring() {
    bell_.fetch_add(1, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst)) wake();
  }

  // Counters for tests (sfverbs_doorbell_stats, libsfverbs.map): doorbell
  // rings (wrapping at 2^32), futex wakes issued, progress-thread sleeps,
  // SFVERBS_POLL_YIELD yields of application threads.
  struct DoorbellStats {
    uint64_t rings = 0;
    uint64_t wakes = 0;
    uint64_t sleeps = 0;
    uint64_t poll_yields = 0;
  };
  DoorbellStats doorbell_stats() const {
    return {bell_.load(std::memory_order_relaxed), wakes_.load(std::memory_order_relaxed),
            sleeps_.load(std::memory_order_relaxed), poll_yields_.load(std::memory_order_relaxed)};
  }
  // An ibv_poll_cq that found its CQ empty: every SFVERBS_POLL_YIELD-th of a
  // thread yields its core (counted), so that an application spinning on its
  // CQ on a machine with fewer cores than busy threads lets the progress
  // threads run (docs/ibverbs.md "RDMA CM", perftest -R's server); 0 never.
  void empty_poll() {
    const uint32_t every = cfg_.poll_yield;
    if (every == 0) return;
    static thread_local uint32_t empties = 0;
    if (++empties < every) return;
    empties = 0;
    poll_yields_.fetch_add(1, std::memory_order_relaxed);
    sched_yield();
  }

  // Inline progress (SFVERBS_INLINE_PROGRESS=1): an application thread that
  // finds nothing to do in poll_cq runs one loop iteration itself when the
  // lock is free. Returns true when the iteration did work.
  bool inline_progress();
  bool inline_enabled() const { return cfg_.inline_progress; }
  // Loop iterations run by application threads (inline progress) and the
  // progress thread's stand-back sleeps (SFVERBS_STAND_BACK_US), for tests.
  uint64_t inline_runs() const { return inline_runs_.load(std::memory_order_relaxed); }
  uint64_t stand_backs() const { return stand_backs_.load(std::memory_order_relaxed); }

  // Stops the progress thread and releases DPDK (at process exit); with
  // SFVERBS_LOG=info it first logs the counters of every QP still in use
  // (an application that exits without ibv_destroy_qp, e.g. on an error).
  void shutdown();

 private:
  Runtime() = default;
  void progress_main();
  std::string bring_up();
  void wake();

  SfVerbsConfig cfg_;
  CcChoice cc_;
  DeviceLock lock_;
  std::vector<WatchedCq*> watched_;
  std::unique_ptr<NicNode> node_;
  struct Dpdk;  // EAL-side objects (pool, port, loop), runtime.cc
  std::unique_ptr<Dpdk> dpdk_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};  // the progress thread's teardown is done
  std::atomic<uint32_t> bell_{0};
  std::atomic<bool> sleeping_{false};
  std::atomic<uint64_t> wakes_{0};   // futex wakes issued (counted beside a syscall)
  std::atomic<uint64_t> sleeps_{0};  // futex waits entered by the progress thread
  std::atomic<uint64_t> poll_yields_{0};  // SFVERBS_POLL_YIELD yields (one per N empty polls)
  // Inline progress: the TSC of the last loop iteration an application thread
  // ran (SFVERBS_STAND_BACK_US reads it), and how many it ran; written under lock_.
  std::atomic<uint64_t> inline_tsc_{0};
  std::atomic<uint64_t> inline_runs_{0};
  std::atomic<uint64_t> stand_backs_{0};  // written by the progress thread only
  bool eal_up_ = false;  // set by the bring-up thread (joined before it is read)
  bool start_done_ = false;
  std::string start_err_;
};

// SFVERBS_LOG=info: one line of what QP `q`'s datapath did (transmit,
// retransmits, every receive outcome that matters for a stall), as sf-nic's
// report gives it; `when`: "destroyed" or "at exit".
void log_qp_counters(const rc::Qp& q, const char* when);

}  // namespace sf::nic::ibverbs
