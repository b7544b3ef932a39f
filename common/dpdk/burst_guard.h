// BurstGuard: survives a memory fault inside a PMD's rx/tx burst caused by
// the device's memory going away under the data path, so that a peer that
// leaves never takes the process down with it.
//
// Why: DPDK 22.11's memif PMD frees its shared regions (munmap) in the EAL
// interrupt thread when the peer disconnects (memif_disconnect), with no
// synchronisation with the lcore that may be inside eth_memif_rx/tx at that
// moment, reading the ring or copying into a buffer of those regions. That
// lcore then takes SIGSEGV (docs/demo.md "Known limits", docs/invariants.md).
// The data path cannot close the window (the unmap can come at any
// instruction), so Port runs each memif burst under run_guarded(): a
// SIGSEGV (SEGV_MAPERR: unmapped memory) or SIGBUS (BUS_ADRERR) raised by
// the kernel on this thread while a guarded call runs jumps back out of it
// (siglongjmp) and run_guarded() returns true; the caller decides what the
// abandoned burst means (Port: the link must be down by then, else it
// aborts as the fault was not this race).
//
// Any other fault, a fault outside a guarded call, or a SIGSEGV sent with
// kill() gets the disposition there was before install_burst_fault_handler()
// (default: the core dump); the guard is off for the process from then on,
// which is dying.
//
// What it does not cover: the PMD's other accesses to what the disconnect
// frees that do not fault (memory rte_free()d but still mapped, a region
// re-mapped at the same address by a quick reconnect, closed eventfds).
// Those are DPDK's to fix; they have not been seen here.
//
// Cost: one sigsetjmp without the signal mask (no system call) per guarded
// burst. What an abandoned burst leaves (the PMD is not re-entered for it;
// its ring indices are reset by its next connect) is accounted for by Port
// (port.h) with the pools' per-thread balance (burst_guard_pool.h): rx: the
// packets the PMD completed are handed over, the mbufs of the one it was
// building are lost with its stack, counted exactly; tx: the PMD freed a
// prefix of the burst (the balance says which), the rest is freed by Port.
// Only a tx burst with a shared or foreign mbuf cannot be split so: it
// leaks, counted as inexact.
// Threading: any thread; the guard is per thread (thread_local).
#pragma once

namespace sf::dpdk {

// Installs the SIGSEGV and SIGBUS handler (once per process; idempotent and
// thread-safe). Control path.
void install_burst_fault_handler();

using GuardedFn = void (*)(void* ctx);
// Calls fn(ctx) with this thread's guard armed. Returns false when it
// returned normally, true when a SIGSEGV/SIGBUS cut it short (state fn
// changed after the fault's point is as the fault left it). Needs
// install_burst_fault_handler() first; not reentrant on one thread.
bool run_guarded(GuardedFn fn, void* ctx);

// Faults caught by run_guarded() in this process (any thread).
unsigned long guarded_faults();

}  // namespace sf::dpdk
