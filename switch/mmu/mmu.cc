// Shared-buffer MMU admission and release. See mmu.h.
#include "switch/mmu/mmu.h"

#include <algorithm>
#include <limits>

namespace sf::sw {

std::string_view to_string(DropReason r) {
  switch (r) {
    case DropReason::kNone: return "none";
    case DropReason::kNoBuffer: return "no_buffer";
    case DropReason::kIngressLimit: return "ingress_limit";
    case DropReason::kHeadroomOverflow: return "headroom_overflow";
    case DropReason::kEgressLimit: return "egress_limit";
    case DropReason::kBufferFull: return "buffer_full";
    case DropReason::kCount: break;
  }
  return "unknown";
}

namespace {
constexpr uint32_t kUnlimited = std::numeric_limits<uint32_t>::max();

uint32_t to_cells(uint64_t bytes, uint32_t cell) {
  const uint64_t c = (bytes + cell - 1) / cell;
  return c > kUnlimited ? kUnlimited : static_cast<uint32_t>(c);
}
}  // namespace

Mmu::Mmu(const MmuConfig& cfg)
    : cell_bytes_(cfg.cell_bytes), total_cells_(static_cast<uint32_t>(cfg.total_bytes / cfg.cell_bytes)) {
  if (cell_bytes_ != 0 && (cell_bytes_ & (cell_bytes_ - 1)) == 0) cell_shift_ = static_cast<uint8_t>(__builtin_ctz(cell_bytes_));
  pools_.reserve(cfg.pools.size());
  for (const PoolConfig& p : cfg.pools) {
    PoolState s{};
    s.mode = p.mode;
    s.size = static_cast<uint32_t>(p.size_bytes / cell_bytes_);
    s.hdrm_size = static_cast<uint32_t>(p.xoff_bytes / cell_bytes_);
    pools_.push_back(s);
  }
  auto make = [&](int16_t prof) {
    BufState b{};
    if (prof == kNoProfile) return b;
    b.profile = &cfg.profiles[static_cast<size_t>(prof)];
    b.reserved = to_cells(b.profile->reserved_bytes, cell_bytes_);
    b.static_th = to_cells(b.profile->static_th_bytes, cell_bytes_);
    b.xoff = to_cells(b.profile->xoff_bytes, cell_bytes_);
    return b;
  };
  const size_t n = cfg.num_ports();
  pgs_.resize(n * kNumPgs);
  queues_.resize(n * kNumQueues);
  for (size_t port = 0; port < n; ++port) {
    for (int i = 0; i < kNumPgs; ++i) pgs_[port * kNumPgs + i] = make(cfg.pg_profile[port][i]);
    for (int i = 0; i < kNumQueues; ++i) queues_[port * kNumQueues + i] = make(cfg.queue_profile[port][i]);
  }
}

uint32_t Mmu::queue_shared_limit(uint16_t port, uint8_t q) const {
  const BufState& b = queues_[idx(port, q)];
  return b.profile == nullptr ? 0 : shared_limit(b);
}

bool Mmu::egress_could_fit(uint16_t out_port, uint8_t queue, uint32_t cells) const {
  const BufState& eb = queues_[idx(out_port, queue)];
  if (eb.profile == nullptr) return false;
  const PoolState& ep = pools_[eb.profile->pool];
  uint64_t max_shared = ep.size;
  const ProfileConfig& pr = *eb.profile;
  if (pr.mode == ThresholdMode::kStatic) {
    if (eb.static_th != 0) max_shared = std::min<uint64_t>(max_shared, eb.static_th);
  } else if (pr.dynamic_th <= -8) {
    max_shared = 0;
  } else if (pr.dynamic_th < 7) {
    const uint64_t lim = pr.dynamic_th >= 0 ? uint64_t{ep.size} << pr.dynamic_th : uint64_t{ep.size} >> -pr.dynamic_th;
    max_shared = std::min<uint64_t>(max_shared, lim);
  }
  return cells <= eb.reserved + max_shared;
}

Admission Mmu::admit(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, uint32_t bytes) {
  if (queues_[idx(out_port, queue)].profile == nullptr) return Admission{Verdict::kDrop, DropReason::kNoBuffer, {}};
  const Admission in = admit_ingress(in_port, pg, bytes);
  if (in.verdict != Verdict::kAccept) return in;
  const Admission out = admit_egress(out_port, queue, in.ticket);
  if (out.verdict != Verdict::kAccept) release_ingress(in_port, pg, in.ticket);
  return out;
}

bool Mmu::admit_run(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, const uint32_t* cells, uint32_t n,
                    bool pg_below_limit, Ticket* tickets) {
  if (n == 0) return false;
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) total += cells[i];
  RunReserve res;
  if (!admit_run_cells(in_port, pg, out_port, queue, total, cells[n - 1], pg_below_limit, res)) return false;
  for (uint32_t i = 0; i < n; ++i) tickets[i] = res.ticket(cells[i]);
  return true;
}

bool Mmu::admit_run_cells(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, uint64_t total,
                          uint64_t last, bool pg_below_limit, RunReserve& res) {
  if (shared_ != nullptr) return false;
  BufState& ib = pgs_[idx(in_port, pg)];
  BufState& eb = queues_[idx(out_port, queue)];
  if (ib.profile == nullptr || eb.profile == nullptr || ib.profile->pool == eb.profile->pool) return false;
  const uint64_t before_last = total - last;
  if (total_used_ + total > total_cells_) return false;
  // The part of `total` cells beyond `res_free` reserved cells, and the part
  // of the last packet's cells beyond what reserve is left for it.
  struct Split {
    uint64_t over;
    uint64_t over_last;
  };
  auto split = [&](uint32_t res_free) {
    const uint64_t left = res_free > before_last ? res_free - before_last : 0;
    return Split{total > res_free ? total - res_free : 0, last > left ? last - left : 0};
  };
  // Ingress: reserved, then shared under the PG's limit and within the pool.
  // The last packet's check (limit at the pool use before it) covers every
  // earlier one: their shared use after them is no larger, their limit no smaller.
  PoolState& ip = pools_[ib.profile->pool];
  const uint32_t ires_used = ib.use.used - ib.use.shared - ib.use.hdrm;
  const uint32_t ires_free = ires_used < ib.reserved ? ib.reserved - ires_used : 0;
  const Split is = split(ires_free);
  if (is.over_last > 0 && (uint64_t{ib.use.shared} + is.over > shared_limit_at(ib, uint64_t{ip.shared_used} + is.over - is.over_last) ||
                           uint64_t{ip.shared_used} + is.over > ip.size)) {
    return false;
  }
  if (pg_below_limit && uint64_t{ib.use.shared} + is.over >= shared_limit_at(ib, uint64_t{ip.shared_used} + is.over)) return false;
  // Egress: the same for the queue (its pool differs, so ingress charges do not move its limit).
  PoolState& ep = pools_[eb.profile->pool];
  const uint32_t eres_used = eb.use.used - eb.use.shared;
  const uint32_t eres_free = eres_used < eb.reserved ? eb.reserved - eres_used : 0;
  const Split es = split(eres_free);
  if (es.over_last > 0 && (uint64_t{eb.use.shared} + es.over > shared_limit_at(eb, uint64_t{ep.shared_used} + es.over - es.over_last) ||
                           uint64_t{ep.shared_used} + es.over > ep.size)) {
    return false;
  }
  // Accepted: each packet's ticket takes reserved cells first, as
  // admit_ingress / admit_egress (RunReserve::ticket).
  res.ingress = ires_free;
  res.egress = eres_free;
  const auto t32 = static_cast<uint32_t>(total);
  ib.use.shared += static_cast<uint32_t>(is.over);
  charge(ib, t32);
  ip.shared_used += static_cast<uint32_t>(is.over);
  ip.watermark = std::max(ip.watermark, ip.shared_used);
  total_used_ += t32;
  eb.use.shared += static_cast<uint32_t>(es.over);
  charge(eb, t32);
  ep.shared_used += static_cast<uint32_t>(es.over);
  ep.watermark = std::max(ep.watermark, ep.shared_used);
  return true;
}

void Mmu::clear_watermarks() {
  for (BufState& b : pgs_) b.use.watermark = b.use.used;
  for (BufState& b : queues_) b.use.watermark = b.use.used;
  for (PoolState& p : pools_) p.watermark = p.shared_used;
  if (shared_ != nullptr) {
    for (size_t i = 0; i < shared_->num_pools; ++i) {
      shared_->pools[i].watermark.store(shared_->pools[i].shared_used.load(std::memory_order_relaxed),
                                        std::memory_order_relaxed);
    }
  }
}

}  // namespace sf::sw
