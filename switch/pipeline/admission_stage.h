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
  QueuedRun() = default;
  QueuedRun(const QueuedRun&) = delete;  // out_ may point into run_
  QueuedRun& operator=(const QueuedRun&) = delete;
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
    if (key != key_ || n_ == kCapacity) join_or_flush(key, flush);
    out_[n_++] = p;
  }
  // add() of a plain copy (no ticket yet, not trimmed, no credit slots),
  // built straight in the run: frame `m` of `bytes` from `in` to `out`,
  // `pg_q_ip` = pg | queue << 8 | ip_version << 16, its header at
  // `l3_offset` (0 when ip_version is 0). Equal to add(QueuedPkt{...}).
  template <class Flush>
  [[gnu::always_inline]] void add_plain(rte_mbuf* m, uint32_t bytes, uint16_t in, uint16_t out, uint32_t pg_q_ip,
                                        uint16_t l3_offset, Flush&& flush) {
    Cursor c = cursor();
    add_plain(c, m, bytes, in, out, pg_q_ip, l3_offset, flush);
    set(c);
  }
  // The run's state as a value, for a loop that adds many plain copies
  // (SwitchNode::receive_express): kept in registers, where the members
  // would be loaded again after every copy's stores (byte stores may alias
  // them). cursor() reads it, set() writes it back; add_plain(Cursor&, ...)
  // writes it back itself around a flush.
  struct Cursor {
    QueuedPkt* out;
    uint32_t n;
    uint32_t key;
  };
  Cursor cursor() const { return {out_, n_, key_}; }
  void set(const Cursor& c) {
    out_ = c.out;
    n_ = static_cast<uint16_t>(c.n);
    key_ = c.key;
  }
  template <class Flush>
  [[gnu::always_inline]] void add_plain(Cursor& c, rte_mbuf* m, uint32_t bytes, uint16_t in, uint16_t out,
                                        uint32_t pg_q_ip, uint16_t l3_offset, Flush&& flush) {
    static_assert(std::endian::native == std::endian::little);
    static_assert(offsetof(QueuedPkt, ticket) == 8 && sizeof(Ticket) == 8 && offsetof(QueuedPkt, bytes) == 16 &&
                  offsetof(QueuedPkt, in_port) == 20 && offsetof(QueuedPkt, out_port) == 22 &&
                  offsetof(QueuedPkt, pg) == 24 && offsetof(QueuedPkt, queue) == 25 &&
                  offsetof(QueuedPkt, ip_version) == 26 && offsetof(QueuedPkt, trimmed) == 27 &&
                  offsetof(QueuedPkt, l3_offset) == 28 && offsetof(QueuedPkt, credit_vl) == 30 &&
                  offsetof(QueuedPkt, credit_slots) == 31);
    const uint32_t key = uint32_t{out} | (pg_q_ip & 0xFFFFu) << 16;  // key_of()
    if (key != c.key || c.n == kCapacity) [[unlikely]] {
      set(c);
      join_or_flush(key, flush);
      c = cursor();
    }
    // Four word stores straight into the slot (an array of the words
    // memcpy'd whole was built on the stack and copied: two more loads
    // after narrow stores, which store forwarding cannot serve).
    auto* slot = reinterpret_cast<unsigned char*>(&c.out[c.n++]);
    store_word(slot, reinterpret_cast<uintptr_t>(m));
    store_word(slot + 8, 0);
    store_word(slot + 16, uint64_t{bytes} | uint64_t{in} << 32 | uint64_t{out} << 48);
    store_word(slot + 24, (pg_q_ip & 0xFFFFFFu) | uint64_t{l3_offset} << 32 | uint64_t{kNoCreditVl} << 48);
  }
  // Hands the run over: its copies stay at data()[0, returned n) until the
  // next add(); the run is empty again, and the next copy begins a new one
  // (its slots resolved anew: the queue's tail moves when a run is taken).
  uint16_t take() {
    const uint16_t n = n_;
    n_ = 0;
    key_ = kNoKey;
    return n;
  }
  const QueuedPkt* data() const { return out_; }
  // Where the copies are built: in the run's own array, or (in_ring())
  // straight in the slots after its egress queue's tail, which
  // admit_run_whole then commits without copying them.
  bool in_ring() const { return out_ != run_.data(); }
  QueuedPkt* staging() { return run_.data(); }
  // Where a run of `key` may be built in place: the kCapacity slots after the
  // tail of its egress queue when they are free and contiguous, else null
  // (the run's array). Asked once per run; unset: always the array.
  using SlotsFor = QueuedPkt* (*)(void* ctx, uint32_t key);
  void set_slots_for(SlotsFor fn, void* ctx) {
    slots_for_ = fn;
    slots_ctx_ = ctx;
  }
  uint16_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  uint32_t key() const { return key_; }

 private:
  // A copy of another key than key_, or the run is full: the run (if any)
  // goes to admission first. (An empty run keeps the key of the last one:
  // a copy of that key just joins it, with key_ as it is.)
  template <class Flush>
  [[gnu::always_inline]] void join_or_flush(uint32_t key, Flush& flush) {
    if (n_ != 0) flush();
    key_ = key;
    QueuedPkt* slots = slots_for_ != nullptr ? slots_for_(slots_ctx_, key) : nullptr;
    out_ = slots != nullptr ? slots : run_.data();
  }
  // No copy has this key (egress port 0xFFFF, PG and queue 0xFF).
  static constexpr uint32_t kNoKey = 0xFFFFFFFFu;
  static void store_word(unsigned char* at, uint64_t w) { std::memcpy(at, &w, 8); }
  std::array<QueuedPkt, kCapacity> run_{};
  QueuedPkt* out_ = run_.data();
  uint16_t n_ = 0;
  uint32_t key_ = kNoKey;
  SlotsFor slots_for_ = nullptr;
  void* slots_ctx_ = nullptr;
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
//
// Where the run's slots after the queue's tail are contiguous and cells are
// counted by a shift (the usual case): one pass writes each copy into its
// slot, with the ticket it has when no reserved cells are left ({c, c, 0,
// c}, one multiply), and sums cells and bytes; the checks and the MMU then
// decide; accepted, the slots are committed (tickets rewritten first from
// RunReserve when reserved cells were left), refused, they stay free.
// Otherwise admit_run_whole_by_copy (cells first, then push_run).
namespace detail {

// The checks of admit_run_whole on a run of `total` cells and `bytes`
// bytes whose last copy has `last_cells` cells and `last_bytes` bytes: WRED
// (no copy may see a depth above Kmin: no draw, no mark, no drop), PFC (the
// PG's PFC update must stay a no-op after every copy: nothing asserted, no
// headroom, shared use below the limit, which admit_run checks) and the
// MMU's admit_run_cells (charged when true; `res`: the reserved cells free
// before the run).
[[gnu::always_inline]] inline bool admit_run_checks(Mmu& mmu, const EgressQueue& q, const Wred& w, RunPfc pfc,
                                                    const QueuedPkt& p0, uint64_t total, uint64_t bytes,
                                                    uint64_t last_cells, uint32_t last_bytes, Mmu::RunReserve& res) {
  if (w.enabled() && q.bytes() + (bytes - last_bytes) > w.config().kmin_bytes) return false;
  if (pfc.enabled && (pfc.xoff || mmu.pg_use(p0.in_port, p0.pg).hdrm != 0)) return false;
  return mmu.admit_run_cells(p0.in_port, p0.pg, p0.out_port, p0.queue, total, last_cells, pfc.enabled, res);
}

inline void count_run(EgressQueue& q, QueueCounters& qc, uint16_t n) {
  qc.enqueued_packets += n;
  qc.watermark_bytes = std::max(qc.watermark_bytes, q.bytes());
}

// admit_run_whole where the slots wrap round the ring or cells are not a
// power of two: each copy's cells computed once, then push_run.
[[gnu::noinline]] inline bool admit_run_whole_by_copy(Mmu& mmu, EgressQueue& q, QueueCounters& qc, const Wred& w,
                                                      RunPfc pfc, const QueuedPkt* run, uint16_t n) {
  std::array<uint32_t, QueuedRun::kCapacity> cells;  // n <= kCapacity
  uint64_t total = 0;
  uint64_t bytes = 0;
  for (uint16_t i = 0; i < n; ++i) {
    cells[i] = mmu.cells_for(run[i].bytes);
    total += cells[i];
    bytes += run[i].bytes;
  }
  Mmu::RunReserve res;
  if (!admit_run_checks(mmu, q, w, pfc, run[0], total, bytes, cells[n - 1], run[n - 1].bytes, res)) return false;
  q.push_run(run, n, [&](uint32_t i) { return res.ticket(cells[i]); });
  count_run(q, qc, n);
  return true;
}

}  // namespace detail

[[gnu::always_inline]] inline bool admit_run_whole(Mmu& mmu, EgressQueue& q, QueueCounters& qc, const Wred& w, RunPfc pfc,
                                                   const QueuedPkt* run, uint16_t n) {
  if (q.packets() + n > q.capacity()) return false;
  QueuedPkt* slots = q.tail_slots(n);
  if (slots == nullptr || !mmu.cells_by_shift()) [[unlikely]] {
    return detail::admit_run_whole_by_copy(mmu, q, qc, w, pfc, run, n);
  }
  static_assert(std::endian::native == std::endian::little && sizeof(Ticket) == 8 && offsetof(Ticket, cells) == 0 &&
                offsetof(Ticket, ing_shared) == 2 && offsetof(Ticket, ing_hdrm) == 4 &&
                offsetof(Ticket, eg_shared) == 6);
  constexpr uint64_t kPlainTicket = 0x0001'0000'0001'0001u;  // c x this = Ticket{c, c, 0, c}
  const uint32_t round = mmu.cell_bytes() - 1;
  const uint8_t shift = mmu.cell_shift();
  uint64_t total = 0;
  uint64_t bytes = 0;
  // Word by word, as QueuedRun::add_plain stored them: a copy in 16-byte
  // loads spans two 8-byte stores, which store forwarding cannot serve while
  // they wait in the store buffer (the last copies of a run, flushed right
  // after stage C wrote them). Word 1, the ticket, is not read.
  static_assert(sizeof(QueuedPkt) == 32 && offsetof(QueuedPkt, ticket) == 8 && offsetof(QueuedPkt, bytes) == 16);
  if (run == slots) {
    // Built in place (QueuedRun::in_ring): only the tickets are written.
    for (uint16_t i = 0; i < n; ++i) {
      const uint32_t b = slots[i].bytes;
      const uint32_t c = (b + round) >> shift;  // cells_for(b)
      const uint64_t t = uint64_t{static_cast<uint16_t>(c)} * kPlainTicket;
      std::memcpy(reinterpret_cast<unsigned char*>(slots + i) + 8, &t, 8);
      total += c;
      bytes += b;
    }
  } else {
    const auto* from = reinterpret_cast<const unsigned char*>(run);
    auto* to = reinterpret_cast<unsigned char*>(slots);
    for (uint16_t i = 0; i < n; ++i, from += 32, to += 32) {
      uint64_t w0;
      uint64_t w2;
      uint64_t w3;
      std::memcpy(&w0, from, 8);
      std::memcpy(&w2, from + 16, 8);
      // An empty asm between the loads: the compiler may not merge w2 and w3
      // into one 16-byte load.
      asm("" : "+r"(w2));
      std::memcpy(&w3, from + 24, 8);
      const auto b = static_cast<uint32_t>(w2);  // bytes
      const uint32_t c = (b + round) >> shift;   // cells_for(b)
      const uint64_t t = uint64_t{static_cast<uint16_t>(c)} * kPlainTicket;
      std::memcpy(to, &w0, 8);
      std::memcpy(to + 8, &t, 8);
      std::memcpy(to + 16, &w2, 8);
      std::memcpy(to + 24, &w3, 8);
      total += c;
      bytes += b;
    }
  }
  const uint32_t last_bytes = run[n - 1].bytes;
  Mmu::RunReserve res;
  if (!detail::admit_run_checks(mmu, q, w, pfc, run[0], total, bytes, (last_bytes + round) >> shift, last_bytes, res)) {
    return false;
  }
  if (res.ingress != 0 || res.egress != 0) {  // reserved cells left: the tickets of admit_run
    for (uint16_t i = 0; i < n; ++i) slots[i].ticket = res.ticket((run[i].bytes + round) >> shift);
  }
  q.commit_run(n, bytes);
  detail::count_run(q, qc, n);
  return true;
}

}  // namespace sf::sw
