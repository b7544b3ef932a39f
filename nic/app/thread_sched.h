// ThreadSched: the scheduling class sf-nic asks for its data-path thread
// (--sched), so that on a shared machine the OS takes less of the time the
// pacer needs (docs/nic-app.md "Scheduling"). Parsed and validated before
// anything starts; applied to the data-path thread just before its loop
// starts (the time-series sampler, started earlier, is given
// sampler_sched() of it so that it samples on time too).
//   other        the default time-sharing class, nice 0 (nothing is changed)
//   nice:N       time-sharing at nice N (-20..19; below 0 needs CAP_SYS_NICE)
//   fifo:N       SCHED_FIFO at priority N (1..99) -- a busy-polling thread at a
//   rr:N         real-time priority meets the kernel's RT throttling
//                (sched_rt_runtime_us), so only for a loop that sleeps
// Control path only.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/dpdk/idle_backoff.h"

namespace sf::nic::app {

enum class SchedPolicy : uint8_t { kOther, kNice, kFifo, kRr };
std::string_view to_string(SchedPolicy p);

struct ThreadSched {
  SchedPolicy policy = SchedPolicy::kOther;
  int value = 0;  // nice level (kNice) or real-time priority (kFifo, kRr)
  bool operator==(const ThreadSched&) const = default;
};
std::string to_string(const ThreadSched& s);  // "other", "nice:-20", "fifo:50"

inline constexpr std::string_view kSchedSyntax = "other, nice:N (-20..19), fifo:N or rr:N (1..99)";

// "nice:-20" -> ThreadSched; std::nullopt and *error set (naming the text and
// the accepted forms) for anything else.
std::optional<ThreadSched> parse_thread_sched(std::string_view text, std::string* error);

// With kernel.sched_autogroup_enabled=1 the scheduler first shares a core
// between sessions (autogroups), and a thread's nice only ranks it within its
// own; so for nice:N, when sf-nic leads its own session (setsid), this sets
// the session's autogroup nice to N as well (/proc/self/autogroup). Returns
// "" (done, or nothing to do) or a warning of why the nice stays session-local.
std::string apply_session_nice(const ThreadSched& s);

// The sampler thread's scheduling for a data path at `s`: a real-time
// policy one priority above (at most 99) so that a sample is taken when due
// even while the data path runs; a nice level the same; other stays other.
ThreadSched sampler_sched(const ThreadSched& s);

// Checks that `s` may be applied (privileges) by applying it to the calling
// thread and restoring what it had. Returns "" or why not.
std::string check_thread_sched(const ThreadSched& s);

// Applies `s` to the calling thread. Returns "" or why not (the system call
// and its errno text, e.g. EPERM without CAP_SYS_NICE).
std::string apply_thread_sched(const ThreadSched& s);

// --idle: what the data-path loop does when an iteration found no work.
//   spin             poll again (a dedicated core; the default)
//   backoff          spin, rte_pause, then doubling sleeps (many processes on
//                    few cores; the same as --backoff)
//   until-due[:US]   sleep until US microseconds (default 10) before the next
//                    departure or timer, at most 50 us, then spin to it: a
//                    pacer's core is free between departures (with fifo:N the
//                    loop must sleep, or it starves the core)
inline constexpr std::string_view kIdleSyntax = "spin, backoff, until-due or until-due:US (US = 1..1000)";
std::optional<dpdk::IdleBackoffOptions> parse_idle_mode(std::string_view text, std::string* error);

}  // namespace sf::nic::app
