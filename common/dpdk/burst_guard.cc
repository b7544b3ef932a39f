// Fault guard for PMD bursts. See burst_guard.h.
#include "common/dpdk/burst_guard.h"

#include <setjmp.h>
#include <signal.h>

#include <atomic>
#include <mutex>

namespace sf::dpdk {

namespace {

// initial-exec: the handler reads it, and no TLS lookup may allocate there.
__attribute__((tls_model("initial-exec"))) thread_local sigjmp_buf* t_env = nullptr;
std::atomic<unsigned long> g_faults{0};
struct sigaction g_old_segv {};
struct sigaction g_old_bus {};
std::once_flag g_once;

// A fault of memory that is not (or no longer) mapped, or past the end of
// a mapped file: what an unmapped or truncated region gives. Not a signal
// sent by kill() (si_code <= 0) nor a protection fault on mapped memory.
bool unmapped_fault(int sig, const siginfo_t* si) {
  if (si == nullptr || si->si_code <= 0) return false;
  return sig == SIGSEGV ? si->si_code == SEGV_MAPERR : si->si_code == BUS_ADRERR;
}

extern "C" void on_fault(int sig, siginfo_t* si, void*) {
  if (sigjmp_buf* e = t_env; e != nullptr && unmapped_fault(sig, si)) {
    t_env = nullptr;
    g_faults.fetch_add(1, std::memory_order_relaxed);
    siglongjmp(*e, 1);  // SA_NODEFER: the signal is not left blocked
  }
  // Not ours: the previous disposition; a fault runs the faulting
  // instruction again under it, a sent signal is sent again.
  sigaction(sig, sig == SIGBUS ? &g_old_bus : &g_old_segv, nullptr);
  if (si == nullptr || si->si_code <= 0) raise(sig);
}

}  // namespace

void install_burst_fault_handler() {
  std::call_once(g_once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_old_segv);
    sigaction(SIGBUS, &sa, &g_old_bus);
  });
}

bool run_guarded(GuardedFn fn, void* ctx) {
  sigjmp_buf env;
  if (sigsetjmp(env, 0) != 0) return true;  // from on_fault; t_env already cleared
  t_env = &env;
  fn(ctx);
  t_env = nullptr;
  return false;
}

unsigned long guarded_faults() { return g_faults.load(std::memory_order_relaxed); }

}  // namespace sf::dpdk
