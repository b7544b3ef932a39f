// Receive stage D, MMU admission of a run (docs/architecture.md "Switch
// pipeline"). The hand-off from stage C (forward) is a QueuedRun: the
// copies stage C decided, in order, that share one (egress port, PG,
// queue) key, at most kRxStageBurst of them. A run is admitted in one step
// (admit_run_whole: one Mmu::admit_run, the copies pushed in order) when
// that is exact, i.e. every copy would be accepted copy by copy with
// nothing held, marked, dropped, trimmed and no PFC state moving; else the
// node admits it copy by copy (SwitchNode::enqueue_one, switch_node_admit.cc),
// where the port components act (watchdog drops, hold FIFOs, trimming,
// shard rings, WRED draws).
//
// Plain memory (the MMU, the egress queue, WRED): no DPDK call, no
// allocation. Inline so that the node's flush compiles into one loop.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "switch/mmu/mmu.h"
#include "switch/pipeline/classify_stage.h"
#include "switch/pipeline/credit_link.h"
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
    static_assert(std::endian::native == std::endian::little);  // key_for
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
  // add() of a plain copy (no ticket yet, not trimmed, no credit slots),
  // built straight in the run: frame `m` of `bytes` from `in` to `out`,
  // `pg_q_ip` = pg | queue << 8 | ip_version << 16, its header at
  // `l3_offset` (0 when ip_version is 0). Equal to add(QueuedPkt{...}).
  template <class Flush>
  [[gnu::always_inline]] void add_plain(rte_mbuf* m, uint32_t bytes, uint16_t in, uint16_t out, uint32_t pg_q_ip,
                                        uint16_t l3_offset, Flush&& flush) {
    static_assert(std::endian::native == std::endian::little);
    static_assert(offsetof(QueuedPkt, ticket) == 8 && sizeof(Ticket) == 8 && offsetof(QueuedPkt, bytes) == 16 &&
                  offsetof(QueuedPkt, in_port) == 20 && offsetof(QueuedPkt, out_port) == 22 &&
                  offsetof(QueuedPkt, pg) == 24 && offsetof(QueuedPkt, queue) == 25 &&
                  offsetof(QueuedPkt, ip_version) == 26 && offsetof(QueuedPkt, trimmed) == 27 &&
                  offsetof(QueuedPkt, l3_offset) == 28 && offsetof(QueuedPkt, credit_vl) == 30 &&
                  offsetof(QueuedPkt, credit_slots) == 31);
    const uint32_t key = uint32_t{out} | (pg_q_ip & 0xFFFFu) << 16;  // key_of()
    if (n_ != 0 && (key != key_ || n_ == kCapacity)) flush();
    key_ = key;
    // Four word stores straight into the slot (an array of the words
    // memcpy'd whole was built on the stack and copied: two more loads
    // after narrow stores, which store forwarding cannot serve).
    auto* slot = reinterpret_cast<unsigned char*>(&run_[n_++]);
    store_word(slot, reinterpret_cast<uintptr_t>(m));
    store_word(slot + 8, 0);
    store_word(slot + 16, uint64_t{bytes} | uint64_t{in} << 32 | uint64_t{out} << 48);
    store_word(slot + 24, (pg_q_ip & 0xFFFFFFu) | uint64_t{l3_offset} << 32 | uint64_t{kNoCreditVl} << 48);
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
  static void store_word(unsigned char* at, uint64_t w) { std::memcpy(at, &w, 8); }
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
  if (res.ingress == 0 && res.egress == 0) {  // no reserved cells left: res.ticket(c) is {c, c, 0, c}
    q.push_run(run, n, [&](uint32_t i) {
      const auto c = static_cast<uint16_t>(cells[i]);
      return Ticket{c, c, 0, c};
    });
  } else {
    q.push_run(run, n, [&](uint32_t i) { return res.ticket(cells[i]); });
  }
  qc.enqueued_packets += n;
  qc.watermark_bytes = std::max(qc.watermark_bytes, q.bytes());
  return true;
}

}  // namespace sf::sw
