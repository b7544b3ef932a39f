// --sched parsing and application. See thread_sched.h.
#include "nic/app/thread_sched.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

namespace sf::nic::app {

std::string_view to_string(SchedPolicy p) {
  switch (p) {
    case SchedPolicy::kOther: return "other";
    case SchedPolicy::kNice: return "nice";
    case SchedPolicy::kFifo: return "fifo";
    case SchedPolicy::kRr: return "rr";
  }
  return "?";
}

std::string to_string(const ThreadSched& s) {
  if (s.policy == SchedPolicy::kOther) return "other";
  return std::string(to_string(s.policy)) + ":" + std::to_string(s.value);
}

std::optional<ThreadSched> parse_thread_sched(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<ThreadSched> {
    *error = "--sched '" + std::string(text) + "': " + why + " (expected " + std::string(kSchedSyntax) + ")";
    return std::nullopt;
  };
  if (text == "other") return ThreadSched{};
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return fail("unknown policy");
  const std::string_view name = text.substr(0, colon);
  const std::string_view num = text.substr(colon + 1);
  ThreadSched s;
  int lo = 0;
  int hi = 0;
  if (name == "nice") {
    s.policy = SchedPolicy::kNice;
    lo = -20;
    hi = 19;
  } else if (name == "fifo" || name == "rr") {
    s.policy = name == "fifo" ? SchedPolicy::kFifo : SchedPolicy::kRr;
    lo = 1;
    hi = 99;
  } else {
    return fail("unknown policy '" + std::string(name) + "'");
  }
  int v = 0;
  const char* end = num.data() + num.size();
  const auto [p, ec] = std::from_chars(num.data(), end, v);
  if (num.empty() || ec != std::errc() || p != end) return fail("'" + std::string(num) + "' is not an integer");
  if (v < lo || v > hi) {
    return fail(std::string(name) + " must be " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  s.value = v;
  return s;
}

ThreadSched sampler_sched(const ThreadSched& s) {
  ThreadSched t = s;
  if (s.policy == SchedPolicy::kFifo || s.policy == SchedPolicy::kRr) t.value = std::min(99, s.value + 1);
  return t;
}

std::string check_thread_sched(const ThreadSched& s) {
  if (s.policy == SchedPolicy::kOther) return "";
  const int policy = sched_getscheduler(0);
  sched_param param{};
  sched_getparam(0, &param);
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  const bool nice_ok = errno == 0;
  const std::string err = apply_thread_sched(s);
  if (policy >= 0) sched_setscheduler(0, policy, &param);
  if (nice_ok) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice);
  return err;
}

std::string apply_session_nice(const ThreadSched& s) {
  if (s.policy != SchedPolicy::kNice) return "";
  int enabled = 0;
  if (std::ifstream f("/proc/sys/kernel/sched_autogroup_enabled"); !(f >> enabled) || enabled == 0) return "";
  if (getsid(0) != getpid()) {
    return "kernel.sched_autogroup_enabled=1 and sf-nic is not its session's leader: nice " + std::to_string(s.value) +
           " only ranks it within its session's autogroup (start it with setsid for the session's nice to be set)";
  }
  std::ofstream ag("/proc/self/autogroup");
  ag << s.value << "\n";
  ag.flush();
  if (!ag) return "writing " + std::to_string(s.value) + " to /proc/self/autogroup failed";
  return "";
}

std::optional<dpdk::IdleBackoffOptions> parse_idle_mode(std::string_view text, std::string* error) {
  dpdk::IdleBackoffOptions o;
  if (text == "spin") return o;
  if (text == "backoff") {
    o.enabled = true;
    return o;
  }
  constexpr std::string_view kUntil = "until-due";
  if (text.substr(0, kUntil.size()) == kUntil) {
    o.until_due = true;
    std::string_view rest = text.substr(kUntil.size());
    if (rest.empty()) return o;
    if (rest[0] == ':') {
      rest.remove_prefix(1);
      int us = 0;
      const char* end = rest.data() + rest.size();
      const auto [p, ec] = std::from_chars(rest.data(), end, us);
      if (!rest.empty() && ec == std::errc() && p == end && us >= 1 && us <= 1000) {
        o.wake_margin = TimeNs::from_us(us);
        return o;
      }
      *error = "--idle '" + std::string(text) + "': the wake margin must be 1..1000 us (expected " +
               std::string(kIdleSyntax) + ")";
      return std::nullopt;
    }
  }
  *error = "--idle '" + std::string(text) + "': unknown mode (expected " + std::string(kIdleSyntax) + ")";
  return std::nullopt;
}

std::string apply_thread_sched(const ThreadSched& s) {
  // On Linux both calls with pid/who 0 act on the calling thread only.
  switch (s.policy) {
    case SchedPolicy::kOther:
      return "";
    case SchedPolicy::kNice:
      if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), s.value) != 0) {
        return "setpriority(" + std::to_string(s.value) + "): " + std::strerror(errno);
      }
      return "";
    case SchedPolicy::kFifo:
    case SchedPolicy::kRr: {
      sched_param sp{};
      sp.sched_priority = s.value;
      const int pol = s.policy == SchedPolicy::kFifo ? SCHED_FIFO : SCHED_RR;
      if (sched_setscheduler(0, pol, &sp) != 0) {
        return "sched_setscheduler(" + to_string(s) + "): " + std::strerror(errno);
      }
      return "";
    }
  }
  return "unknown policy";
}

}  // namespace sf::nic::app
