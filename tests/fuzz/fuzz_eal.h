// EAL and the mbuf pool of the libFuzzer targets that feed real mbufs to a
// node (fuzz_switch, fuzz_nic), set up once per process from
// LLVMFuzzerInitialize. Gtest-free (the fuzz build has no gtest).
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <span>

namespace sf::fuzz {

// A finding: prints "<target>: <what>" and aborts.
[[noreturn]] void fail(const char* target, const char* what);

// Starts EAL for `target` and returns its mbuf pool; aborts on any failure.
// EAL: anonymous memory (--no-huge, 256 MiB), no devices, no shared runtime
// files (nothing survives a crash), file prefix sf-<target>-<pid> (with - for _), one
// lcore: the first CPU this process may run on. The pool (named `target`)
// holds `mbufs` mbufs of `data_room` bytes + headroom and has no per-lcore
// cache, so rte_mempool_avail_count is exact. `reserve` is filled with mbufs
// taken out for good: with a full pool the ring would silently refuse a
// double free, which then could not show in the count.
rte_mempool* start_eal(const char* target, const char* argv0, uint32_t mbufs, uint16_t data_room,
                       std::span<rte_mbuf*> reserve);

// Aborts ("<target>: mbuf leak: ...<after>") unless `pool` has `avail_before`
// free mbufs again.
void check_no_leak(const char* target, rte_mempool* pool, unsigned avail_before, const char* after = "");

// True when the environment variable `name` is set to a value starting with 1.
bool env_flag(const char* name);

}  // namespace sf::fuzz
