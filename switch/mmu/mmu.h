// Shared-buffer MMU: cell accounting per ingress (port, PG) and egress
// (port, queue), reserved minimum then shared use capped by a static or a
// dynamic threshold (alpha x free shared buffer, alpha = 2^dynamic_th), and
// headroom for lossless PGs. Facts: shared/reference/switch.md sections 1-2.
//
// One Mmu per switch, owned by the datapath lcore. A sharded switch has one
// Mmu per shard, each charging only its own ports' PGs and queues, and all of
// them attached to one SharedBuffer (the physical buffer and pool counters,
// atomics); see docs/architecture.md "Sharding".
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "switch/mmu/mmu_config.h"
#include "switch/mmu/shared_buffer.h"

namespace sf::sw {

enum class Verdict : uint8_t { kAccept, kDrop, kTrim };

enum class DropReason : uint8_t {
  kNone,
  kNoBuffer,          // PG or queue has no profile
  kIngressLimit,      // lossy PG over its shared threshold
  kHeadroomOverflow,  // lossless PG over threshold with headroom full: misconfiguration
  kEgressLimit,       // queue over its shared threshold
  kBufferFull,        // physical buffer exhausted
  kCount,
};
std::string_view to_string(DropReason r);

// What a packet took from each region, returned verbatim on release so the
// counters never drift. Stored with the packet while it is queued.
struct Ticket {
  uint16_t cells = 0;
  uint16_t ing_shared = 0;  // ingress cells charged to the pool's shared part
  uint16_t ing_hdrm = 0;    // ingress cells charged to headroom
  uint16_t eg_shared = 0;   // egress cells charged to the pool's shared part
  // ingress reserved = cells - ing_shared - ing_hdrm; egress reserved = cells - eg_shared
};

struct Admission {
  Verdict verdict = Verdict::kDrop;
  DropReason reason = DropReason::kNone;  // why it would have been dropped (also for kTrim)
  Ticket ticket;                          // valid when verdict == kAccept
};

// Occupancy of one PG or queue, in cells.
struct BufferUse {
  uint32_t used = 0;      // reserved + shared + headroom
  uint32_t shared = 0;
  uint32_t hdrm = 0;
  uint32_t watermark = 0;  // max `used` since the last clear
};

class Mmu {
 public:
  // `cfg` must be validated (config loader); indices are trusted. The Mmu
  // points into `cfg`'s profiles, so `cfg` must outlive it: a temporary is
  // refused at compile time (twice an ASan use-after-free in a test).
  explicit Mmu(const MmuConfig& cfg);
  explicit Mmu(const MmuConfig&& cfg) = delete;

  // Sharding: pool and physical-buffer counters live in `shared` from now on
  // (before any admission; `shared` has one Pool per config pool and outlives
  // this Mmu). The PG / queue counters stay here.
  void attach(SharedBuffer* shared) { shared_ = shared; }
  bool attached() const { return shared_ != nullptr; }

  // A shift for the usual power-of-two cell size (a division costs tens of cycles per packet).
  uint32_t cells_for(uint32_t bytes) const {
    return cell_shift_ != kNoShift ? (bytes + cell_bytes_ - 1) >> cell_shift_ : (bytes + cell_bytes_ - 1) / cell_bytes_;
  }
  uint32_t cell_bytes() const { return cell_bytes_; }
  // Whether cells_for(b) is (b + cell_bytes() - 1) >> cell_shift().
  bool cells_by_shift() const { return cell_shift_ != kNoShift; }
  uint8_t cell_shift() const { return cell_shift_; }

  // Two-stage admission. Ingress charges the (port, PG) and the physical
  // buffer; egress then charges the (port, queue). A lossless packet whose
  // egress stage does not fit yet stays charged to ingress only (held at
  // ingress, so it counts toward XOFF) and retries egress later; a lossy one
  // is released and dropped. `admit` does both stages at once.
  Admission admit_ingress(uint16_t in_port, uint8_t pg, uint32_t bytes);
  // `t` comes from admit_ingress; the returned ticket adds the egress part.
  Admission admit_egress(uint16_t out_port, uint8_t queue, Ticket t);
  bool egress_fits(uint16_t out_port, uint8_t queue, uint32_t cells) const;
  // Whether `cells` could ever fit the queue: it has a profile and the packet
  // is within reserved + the largest shared limit (static cap, or alpha x the
  // whole pool). A lossless packet that could not is dropped, never held.
  bool egress_could_fit(uint16_t out_port, uint8_t queue, uint32_t cells) const;
  Admission admit(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, uint32_t bytes);
  // A run of n packets of one (in_port, pg, out_port, queue), `cells[i]`
  // cells each, admitted at once: when admit_ingress then admit_egress for
  // each packet in order would accept every one, none taking headroom, and
  // (`pg_below_limit`) the PG's shared use stays below its shared limit after
  // every packet, this charges exactly what those calls would, fills
  // tickets[0, n) with their tickets and returns true. Otherwise it changes
  // nothing and returns false (admit the packets one by one). Exact because
  // occupancy only grows along the run and every limit only shrinks with it:
  // the checks of the last packet imply those of the earlier ones. Unattached
  // Mmu only (attached: false); the PG and queue pools must differ.
  bool admit_run(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, const uint32_t* cells, uint32_t n,
                 bool pg_below_limit, Ticket* tickets);
  // admit_run() given the run's `total` cells and its `last` packet's,
  // without the tickets: on acceptance `res` holds the reserved cells free
  // before the run, and res.ticket(cells) called for each packet in order
  // gives the tickets admit_run() would (stage D pushes as it goes).
  struct RunReserve {
    uint32_t ingress = 0;
    uint32_t egress = 0;
    Ticket ticket(uint32_t c) {
      const uint32_t ri = std::min(c, ingress);
      const uint32_t re = std::min(c, egress);
      ingress -= ri;
      egress -= re;
      return Ticket{static_cast<uint16_t>(c), static_cast<uint16_t>(c - ri), 0, static_cast<uint16_t>(c - re)};
    }
  };
  bool admit_run_cells(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, uint64_t total, uint64_t last,
                       bool pg_below_limit, RunReserve& res);

  // Return what admission charged, when the packet leaves or is dropped later.
  void release_ingress(uint16_t in_port, uint8_t pg, const Ticket& t);
  void release_egress(uint16_t out_port, uint8_t queue, const Ticket& t);
  void release(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, const Ticket& t);
  // Release of several packets of one (in_port, pg, out_port, queue) at once:
  // `sum` adds their tickets field by field (wide: a sum can exceed 16 bits).
  struct TicketSum {
    uint32_t cells = 0;
    uint32_t ing_shared = 0;
    uint32_t ing_hdrm = 0;
    uint32_t eg_shared = 0;
    void add(const Ticket& t) {
      cells += t.cells;
      ing_shared += t.ing_shared;
      ing_hdrm += t.ing_hdrm;
      eg_shared += t.eg_shared;
    }
    void add(const TicketSum& t) {
      cells += t.cells;
      ing_shared += t.ing_shared;
      ing_hdrm += t.ing_hdrm;
      eg_shared += t.eg_shared;
    }
  };
  void release_sum(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, const TicketSum& sum);

  // Current shared limit, in cells, of a PG / queue (static or alpha x free).
  uint32_t pg_shared_limit(uint16_t port, uint8_t pg) const;
  uint32_t queue_shared_limit(uint16_t port, uint8_t queue) const;

  const BufferUse& pg_use(uint16_t port, uint8_t pg) const { return pgs_[idx(port, pg)].use; }
  const BufferUse& queue_use(uint16_t port, uint8_t q) const { return queues_[idx(port, q)].use; }
  // Shared cells still free in pool `pool` (the "free" of the dynamic threshold).
  uint32_t pool_free(uint16_t pool) const;
  // With a SharedBuffer attached these are the whole switch's (all shards).
  uint32_t pool_shared_used(uint16_t pool) const {
    return shared_ ? shared_->pools[pool].shared_used.load(std::memory_order_relaxed) : pools_[pool].shared_used;
  }
  uint32_t pool_watermark(uint16_t pool) const {
    return shared_ ? shared_->pools[pool].watermark.load(std::memory_order_relaxed) : pools_[pool].watermark;
  }
  uint32_t hdrm_pool_used(uint16_t pool) const {
    return shared_ ? shared_->pools[pool].hdrm_used.load(std::memory_order_relaxed) : pools_[pool].hdrm_used;
  }
  uint32_t total_used() const { return shared_ ? shared_->total_used.load(std::memory_order_relaxed) : total_used_; }
  uint32_t total_cells() const { return total_cells_; }
  const ProfileConfig* pg_profile(uint16_t port, uint8_t pg) const { return pgs_[idx(port, pg)].profile; }
  const ProfileConfig* queue_profile(uint16_t port, uint8_t q) const { return queues_[idx(port, q)].profile; }

  void clear_watermarks();

 private:
  // The bodies of release_ingress / release_egress, for one Ticket or a
  // TicketSum (the same fields, wider).
  template <class T>
  void release_ingress_cells(uint16_t in_port, uint8_t pg, const T& t);
  template <class T>
  void release_egress_cells(uint16_t out_port, uint8_t queue, const T& t);

  static constexpr uint32_t kUnlimitedCells = std::numeric_limits<uint32_t>::max();

  struct PoolState {
    ThresholdMode mode;
    uint32_t size = 0;         // shared cells
    uint32_t shared_used = 0;
    uint32_t hdrm_size = 0;    // shared headroom pool cells (0 = private headroom)
    uint32_t hdrm_used = 0;
    uint32_t watermark = 0;
  };
  struct BufState {
    const ProfileConfig* profile = nullptr;
    uint32_t reserved = 0;  // cells
    uint32_t static_th = 0; // cells, 0 = unlimited
    uint32_t xoff = 0;      // headroom cells
    BufferUse use;
  };

  size_t idx(uint16_t port, uint8_t i) const { return size_t{port} * kNumPgs + i; }
  uint32_t shared_limit(const BufState& b) const;
  // shared_limit(b) were the pool's shared use `pool_used` (dynamic: alpha x (size - pool_used)).
  uint32_t shared_limit_at(const BufState& b, uint64_t pool_used) const;
  static void charge(BufState& b, uint32_t cells);

  uint32_t cell_bytes_;
  static constexpr uint8_t kNoShift = 0xFF;
  uint8_t cell_shift_ = kNoShift;  // log2(cell_bytes_) when a power of two
  uint32_t total_cells_;
  uint32_t total_used_ = 0;        // this Mmu's cells (the switch's, unless attached)
  SharedBuffer* shared_ = nullptr;  // sharding: the switch-wide pool counters
  std::vector<PoolState> pools_;    // shared_used / hdrm_used: this Mmu's part
  std::vector<BufState> pgs_;     // [port * 8 + pg]
  std::vector<BufState> queues_;  // [port * 8 + queue]
};

// Inline: on the per-packet path (admission, PFC).
inline uint32_t Mmu::pool_free(uint16_t pool) const {
  const PoolState& p = pools_[pool];
  const uint32_t used = shared_ ? shared_->pools[pool].shared_used.load(std::memory_order_relaxed) : p.shared_used;
  return p.size > used ? p.size - used : 0;
}

// Static: the profile's byte cap (0 = unlimited). Dynamic: alpha x free shared
// cells of the pool, alpha = 2^dynamic_th, with -8 meaning 0 and 7 unlimited
// (SONiC/NVIDIA encoding).
inline uint32_t Mmu::shared_limit(const BufState& b) const {
  const ProfileConfig& pr = *b.profile;
  if (pr.mode == ThresholdMode::kStatic) return b.static_th == 0 ? kUnlimitedCells : b.static_th;
  if (pr.dynamic_th <= -8) return 0;
  if (pr.dynamic_th >= 7) return kUnlimitedCells;
  const uint64_t free = pool_free(pr.pool);
  const uint64_t lim = pr.dynamic_th >= 0 ? free << pr.dynamic_th : free >> -pr.dynamic_th;
  return lim > kUnlimitedCells ? kUnlimitedCells : static_cast<uint32_t>(lim);
}

inline uint32_t Mmu::shared_limit_at(const BufState& b, uint64_t pool_used) const {
  const ProfileConfig& pr = *b.profile;
  if (pr.mode == ThresholdMode::kStatic) return b.static_th == 0 ? kUnlimitedCells : b.static_th;
  if (pr.dynamic_th <= -8) return 0;
  if (pr.dynamic_th >= 7) return kUnlimitedCells;
  const uint64_t size = pools_[pr.pool].size;
  const uint64_t free = size > pool_used ? size - pool_used : 0;
  const uint64_t lim = pr.dynamic_th >= 0 ? free << pr.dynamic_th : free >> -pr.dynamic_th;
  return lim > kUnlimitedCells ? kUnlimitedCells : static_cast<uint32_t>(lim);
}

inline uint32_t Mmu::pg_shared_limit(uint16_t port, uint8_t pg) const {
  const BufState& b = pgs_[idx(port, pg)];
  return b.profile == nullptr ? 0 : shared_limit(b);
}

// Inline as well (per packet): charge, egress_fits, release.
inline void Mmu::charge(BufState& b, uint32_t cells) {
  b.use.used += cells;
  b.use.watermark = std::max(b.use.watermark, b.use.used);
}

inline bool Mmu::egress_fits(uint16_t out_port, uint8_t queue, uint32_t cells) const {
  const BufState& eb = queues_[idx(out_port, queue)];
  if (eb.profile == nullptr) return false;
  const uint32_t res_used = eb.use.used - eb.use.shared;
  const uint32_t res_free = res_used < eb.reserved ? eb.reserved - res_used : 0;
  const uint32_t over = cells > res_free ? cells - res_free : 0;
  if (over == 0) return true;
  const PoolState& ep = pools_[eb.profile->pool];
  return uint64_t{eb.use.shared} + over <= shared_limit(eb) &&
         uint64_t{pool_shared_used(eb.profile->pool)} + over <= ep.size;
}

// Inline as well (per packet, bodies as they were in mmu.cc): admission.
[[gnu::always_inline]] inline Admission Mmu::admit_ingress(uint16_t in_port, uint8_t pg, uint32_t bytes) {
  Admission a;
  BufState& ib = pgs_[idx(in_port, pg)];
  if (ib.profile == nullptr) {
    a.reason = DropReason::kNoBuffer;
    return a;
  }
  const uint32_t cells = cells_for(bytes);
  SharedBuffer::Pool* gp = shared_ ? &shared_->pools[ib.profile->pool] : nullptr;
  if (shared_ != nullptr ? !try_add(shared_->total_used, cells, total_cells_) : total_used_ + cells > total_cells_) {
    a.reason = DropReason::kBufferFull;
    return a;
  }
  auto refuse = [&](DropReason r, Verdict v) {
    if (shared_ != nullptr) shared_->total_used.fetch_sub(cells, std::memory_order_relaxed);
    a.reason = r;
    a.verdict = v;
    return a;
  };
  // Reserved first, then shared under the PG's limit, then headroom (lossless
  // only). The shared part must also fit the pool itself.
  const uint32_t res_used = ib.use.used - ib.use.shared - ib.use.hdrm;
  const uint32_t res_free = res_used < ib.reserved ? ib.reserved - res_used : 0;
  const uint32_t over = cells > res_free ? cells - res_free : 0;
  uint32_t shared = 0;
  uint32_t hdrm = 0;
  PoolState& ip = pools_[ib.profile->pool];
  if (over > 0) {
    bool fits_shared = uint64_t{ib.use.shared} + over <= shared_limit(ib);
    if (fits_shared) {
      fits_shared = gp != nullptr ? try_add(gp->shared_used, over, ip.size) : uint64_t{ip.shared_used} + over <= ip.size;
    }
    if (fits_shared) {
      shared = over;
    } else if (ib.profile->lossless()) {
      if (ib.use.hdrm + over > ib.xoff) return refuse(DropReason::kHeadroomOverflow, Verdict::kDrop);
      bool fits_pool = true;
      if (gp != nullptr) {
        if (ip.hdrm_size == 0) {
          gp->hdrm_used.fetch_add(over, std::memory_order_relaxed);
        } else {
          fits_pool = try_add(gp->hdrm_used, over, ip.hdrm_size);
        }
      } else {
        fits_pool = ip.hdrm_size == 0 || ip.hdrm_used + over <= ip.hdrm_size;
      }
      if (!fits_pool) return refuse(DropReason::kHeadroomOverflow, Verdict::kDrop);
      hdrm = over;
    } else {
      return refuse(DropReason::kIngressLimit,
                    ib.profile->discard == DiscardAction::kTrim ? Verdict::kTrim : Verdict::kDrop);
    }
  }
  ib.use.shared += shared;
  ib.use.hdrm += hdrm;
  charge(ib, cells);
  ip.shared_used += shared;
  ip.hdrm_used += hdrm;
  ip.watermark = std::max(ip.watermark, ip.shared_used);
  total_used_ += cells;
  if (gp != nullptr && shared > 0) raise_to(gp->watermark, gp->shared_used.load(std::memory_order_relaxed));
  a.verdict = Verdict::kAccept;
  a.ticket = Ticket{static_cast<uint16_t>(cells), static_cast<uint16_t>(shared), static_cast<uint16_t>(hdrm), 0};
  return a;
}

[[gnu::always_inline]] inline Admission Mmu::admit_egress(uint16_t out_port, uint8_t queue, Ticket t) {
  Admission a;
  BufState& eb = queues_[idx(out_port, queue)];
  if (eb.profile == nullptr) {
    a.reason = DropReason::kNoBuffer;
    return a;
  }
  // egress_fits's test, with its `over` kept for the charge below.
  const uint32_t res_used = eb.use.used - eb.use.shared;
  const uint32_t res_free = res_used < eb.reserved ? eb.reserved - res_used : 0;
  const uint32_t over = t.cells > res_free ? t.cells - res_free : 0;
  PoolState& ep = pools_[eb.profile->pool];
  if (over != 0 && !(uint64_t{eb.use.shared} + over <= shared_limit(eb) &&
                     uint64_t{pool_shared_used(eb.profile->pool)} + over <= ep.size)) {
    a.reason = DropReason::kEgressLimit;
    a.verdict = eb.profile->discard == DiscardAction::kTrim ? Verdict::kTrim : Verdict::kDrop;
    return a;
  }
  eb.use.shared += over;
  charge(eb, t.cells);
  ep.shared_used += over;
  ep.watermark = std::max(ep.watermark, ep.shared_used);
  if (shared_ != nullptr && over > 0) {
    // egress_fits checked the pool; shards admitting at the same moment may
    // pass it by a packet each (docs/invariants.md "Sharding").
    SharedBuffer::Pool& gp = shared_->pools[eb.profile->pool];
    raise_to(gp.watermark, gp.shared_used.fetch_add(over, std::memory_order_relaxed) + over);
  }
  a.verdict = Verdict::kAccept;
  a.ticket = t;
  a.ticket.eg_shared = static_cast<uint16_t>(over);
  return a;
}

template <class T>
inline void Mmu::release_ingress_cells(uint16_t in_port, uint8_t pg, const T& t) {
  BufState& ib = pgs_[idx(in_port, pg)];
  PoolState& ip = pools_[ib.profile->pool];
  ib.use.used -= t.cells;
  ib.use.shared -= t.ing_shared;
  ib.use.hdrm -= t.ing_hdrm;
  ip.shared_used -= t.ing_shared;
  ip.hdrm_used -= t.ing_hdrm;
  total_used_ -= t.cells;
  if (shared_ != nullptr) {  // sharding: the switch-wide counters too
    SharedBuffer::Pool& gp = shared_->pools[ib.profile->pool];
    if (t.ing_shared != 0) gp.shared_used.fetch_sub(t.ing_shared, std::memory_order_relaxed);
    if (t.ing_hdrm != 0) gp.hdrm_used.fetch_sub(t.ing_hdrm, std::memory_order_relaxed);
    shared_->total_used.fetch_sub(t.cells, std::memory_order_relaxed);
  }
}

template <class T>
inline void Mmu::release_egress_cells(uint16_t out_port, uint8_t queue, const T& t) {
  BufState& eb = queues_[idx(out_port, queue)];
  PoolState& ep = pools_[eb.profile->pool];
  eb.use.used -= t.cells;
  eb.use.shared -= t.eg_shared;
  ep.shared_used -= t.eg_shared;
  if (shared_ != nullptr && t.eg_shared != 0) {
    shared_->pools[eb.profile->pool].shared_used.fetch_sub(t.eg_shared, std::memory_order_relaxed);
  }
}

inline void Mmu::release_ingress(uint16_t in_port, uint8_t pg, const Ticket& t) {
  release_ingress_cells(in_port, pg, t);
}

inline void Mmu::release_egress(uint16_t out_port, uint8_t queue, const Ticket& t) {
  release_egress_cells(out_port, queue, t);
}

inline void Mmu::release(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, const Ticket& t) {
  release_ingress_cells(in_port, pg, t);
  release_egress_cells(out_port, queue, t);
}

inline void Mmu::release_sum(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, const TicketSum& t) {
  release_ingress_cells(in_port, pg, t);
  release_egress_cells(out_port, queue, t);
}

}  // namespace sf::sw
