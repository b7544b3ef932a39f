// Fault guard for PMD bursts. See burst_guard.h.
#include "common/dpdk/burst_guard.h"

#include <setjmp.h>
#include <signal.h>

#include <atomic>
#include <mutex>

namespace sf::dpdk {

namespace {

thread_local sigjmp_buf* t_env = nullptr;
std::atomic<unsigned long> g_faults{0};
struct sigaction g_old_segv {};
struct sigaction g_old_bus {};
std::once_flag g_once;

extern "C" void on_fault(int sig, siginfo_t*, void*) {
  if (sigjmp_buf* e = t_env; e != nullptr) {
    t_env = nullptr;
    g_faults.fetch_add(1, std::memory_order_relaxed);
    siglongjmp(*e, 1);  // SA_NODEFER: the signal is not left blocked
  }
  // Not inside a guarded call: the previous disposition, and the faulting
  // instruction runs again under it.
  sigaction(sig, sig == SIGBUS ? &g_old_bus : &g_old_segv, nullptr);
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
