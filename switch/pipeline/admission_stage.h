// Receive stage D, MMU admission of a run (docs/architecture.md "Switch
// pipeline"). The hand-off from stage C (forward) is a QueuedRun: the
// copies stage C decided, in order, that share one (egress port, PG,
// queue) key, at most kRxStageBurst of them. A run is admitted in one step
// (admit_run_whole: one Mmu::admit_run, the copies pushed in order) when
// that is exact, i.e. every copy would be accepted copy by copy with
// nothing held, marked, dropped, trimmed and no PFC state moving; else the
// node admits it copy by copy (SwitchNode::enqueue_one, switch_node.cc),
// where the port components act (watchdog drops, hold FIFOs, trimming,
// shard rings, WRED draws).
//
// Plain memory (the MMU, the egress queue, WRED): no DPDK call, no
// allocation. Inline so that the node's flush compiles into one loop.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "switch/mmu/mmu.h"
#include "switch/pipeline/classify_stage.h"
#include "switch/pipeline/counters.h"
#include "switch/pipeline/egress_queue.h"
#include "switch/qos/wred.h"

namespace sf::sw {

// Copies waiting for admission as one run, all of one key (the hand-off
// from stage C to stage D).
class QueuedRun {
 public:
  static constexpr uint16_t kCapacity = kRxStageBurst;
  // The admission key of a copy: (egress port, PG, queue).
  // (out_port, pg and queue are adjacent in QueuedPkt: one load.)
  static uint32_t key_of(const QueuedPkt& p) {
    static_assert(offsetof(QueuedPkt, pg) == offsetof(QueuedPkt, out_port) + 2 &&
                  offsetof(QueuedPkt, queue) == offsetof(QueuedPkt, out_port) + 3);
    uint32_t k;
    std::memcpy(&k, &p.out_port, 4);
    return k;
  }

  // Adds `p`; when it cannot join the run (another key, or the run is full)
  // `flush()` admits the run first, and `p` begins the next one.
  template <class Flush>
  [[gnu::always_inline]] void add(const QueuedPkt& p, Flush&& flush) {
    const uint32_t key = key_of(p);
    if (n_ != 0 && (key != key_ || n_ == kCapacity)) flush();
    key_ = key;
    run_[n_++] = p;
  }
  // Hands the run over: its copies stay at data()[0, returned n) until the
  // next add(); the run is empty again.
  uint16_t take() {
    const uint16_t n = n_;
    n_ = 0;
    return n;
  }
  const QueuedPkt* data() const { return run_.data(); }
  uint16_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  uint32_t key() const { return key_; }

 private:
  std::array<QueuedPkt, kCapacity> run_{};
  uint16_t n_ = 0;
  uint32_t key_ = 0;
};

// What admit_run_whole reads of the PG's PFC state: whether the PG has PFC
// priorities (pfc_enable priorities of a lossless profile map to it) and
// whether one of them is asserted (XOFF sent).
struct RunPfc {
  bool enabled = false;
  bool xoff = false;
};

// Stage D for a whole run[0, n), n >= 1, of one key, into egress queue `q`
// (with WRED `w`, counters `qc`): admits and pushes every copy in one step
// and returns true when that is the outcome of admitting them copy by copy
// (the same tickets, counters and queue); else changes nothing and returns
// false. Each check holds for every copy when it holds for the last one
// (queue depth, buffer use and PG use only grow along the run; the MMU's
// limits only shrink). The caller has checked what belongs to the port
// components (watchdog drops, packets held ahead in the PG, shards).
[[gnu::always_inline]] inline bool admit_run_whole(Mmu& mmu, EgressQueue& q, QueueCounters& qc, const Wred& w, RunPfc pfc,
                                                   const QueuedPkt* run, uint16_t n) {
  const QueuedPkt& p0 = run[0];
  if (q.packets() + n > q.capacity()) return false;
  std::array<uint32_t, QueuedRun::kCapacity> cells;  // n <= kCapacity
  uint64_t total = 0;
  uint64_t bytes_before_last = 0;
  for (uint16_t i = 0; i < n; ++i) {
    cells[i] = mmu.cells_for(run[i].bytes);
    total += cells[i];
    bytes_before_last += run[i].bytes;
  }
  bytes_before_last -= run[n - 1].bytes;
  // WRED: no copy may see a depth above Kmin (no draw, no mark, no drop).
  if (w.enabled() && q.bytes() + bytes_before_last > w.config().kmin_bytes) return false;
  // PFC: the PG's PFC update must stay a no-op after every copy (nothing
  // asserted, no headroom, shared use below the limit: admit_run checks that).
  if (pfc.enabled && (pfc.xoff || mmu.pg_use(p0.in_port, p0.pg).hdrm != 0)) return false;
  Mmu::RunReserve res;
  if (!mmu.admit_run_cells(p0.in_port, p0.pg, p0.out_port, p0.queue, total, cells[n - 1], pfc.enabled, res)) {
    return false;
  }
  q.push_run(run, n, [&](uint32_t i) { return res.ticket(cells[i]); });
  qc.enqueued_packets += n;
  qc.watermark_bytes = std::max(qc.watermark_bytes, q.bytes());
  return true;
}

}  // namespace sf::sw
