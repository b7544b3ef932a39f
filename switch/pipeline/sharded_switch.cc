// ShardedSwitch: shards, rings and the two drivers. See sharded_switch.h.
#include "switch/pipeline/sharded_switch.h"

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace sf::sw {
namespace {

std::atomic<uint32_t> g_instance{0};

rte_ring* make_ring(const std::string& name, size_t esize, uint32_t count) {
  rte_ring* r = rte_ring_create_elem(name.c_str(), static_cast<unsigned>(esize), count, SOCKET_ID_ANY,
                                     RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  if (r == nullptr) {
    throw std::runtime_error("shards: rte_ring_create_elem " + name + " (" + std::to_string(count) +
                             " elements): " + rte_strerror(rte_errno));
  }
  return r;
}

// PortCounters is uint64_t fields and arrays of them only; summed word by
// word (queue watermarks are non-zero on the owning shard only).
static_assert(std::is_trivially_copyable_v<PortCounters> && sizeof(PortCounters) % sizeof(uint64_t) == 0);
void add_counters(PortCounters& into, const PortCounters& c) {
  constexpr size_t kWords = sizeof(PortCounters) / sizeof(uint64_t);
  uint64_t a[kWords], b[kWords];
  std::memcpy(a, &into, sizeof a);
  std::memcpy(b, &c, sizeof b);
  for (size_t i = 0; i < kWords; ++i) a[i] += b[i];
  std::memcpy(&into, a, sizeof a);
}

}  // namespace

// The per-lcore driver Node of one shard: the shard's SwitchNode, plus the
// rings from other shards, drained whenever the loop runs timers.
class ShardedSwitch::ShardDriver final : public Node {
 public:
  explicit ShardDriver(SwitchNode& n) : n_(n) {}
  uint16_t num_ports() const override { return n_.num_ports(); }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override { n_.receive(port, pkts, now); }
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) override {
    return n_.transmit(port, out, now);
  }
  TimeNs next_wakeup(TimeNs now) const override {
    return n_.shard_pending() || n_.holding() ? now : n_.next_wakeup(now);
  }
  void advance(TimeNs now) override {
    n_.shard_pump(now);
    n_.shard_recheck_holds(now);
    if (now >= n_.next_wakeup(now)) n_.advance(now);
  }

 private:
  SwitchNode& n_;
};

std::vector<uint16_t> ShardedSwitch::even_split(uint16_t ports, uint16_t shards) {
  std::vector<uint16_t> m(ports);
  for (uint16_t p = 0; p < ports; ++p) m[p] = static_cast<uint16_t>(uint32_t{p} * shards / ports);
  return m;
}

std::vector<uint16_t> ShardedSwitch::parse_map(const std::string& text, uint16_t ports, std::string* error) {
  std::vector<uint16_t> m;
  size_t i = 0;
  while (i <= text.size()) {
    const size_t j = std::min(text.find(',', i), text.size());
    const std::string item = text.substr(i, j - i);
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0 || v >= kMaxShards) {
      *error = "shard map '" + text + "': item '" + item + "' is not a shard number 0.." + std::to_string(kMaxShards - 1);
      return {};
    }
    m.push_back(static_cast<uint16_t>(v));
    i = j + 1;
  }
  if (m.size() != ports) {
    *error = "shard map '" + text + "': " + std::to_string(m.size()) + " entries for " + std::to_string(ports) +
             " ports (one per PORT, config order)";
    return {};
  }
  return m;
}

ShardedSwitch::RingSizes ShardedSwitch::ring_sizes(const SwitchConfig& cfg) {
  const uint32_t cells = static_cast<uint32_t>(cfg.mmu.total_bytes / cfg.mmu.cell_bytes);
  // Release ring: one note per cell, and with CREDIT_FC ports one more per
  // cell (+1) for credit notes (shard_ring.h).
  const bool credit = std::any_of(cfg.credit_fc.begin(), cfg.credit_fc.end(), [](const auto& c) { return c.has_value(); });
  RingSizes rs;
  rs.release_notes = credit ? 2 * cells + 1 : cells;
  // Data ring: every packet in it was ingress-admitted, so holds at least one
  // cell of the shared buffer; total_cells packets never fill it (shard_ring.h).
  rs.data_pkts = cells;
  // RING_F_EXACT_SZ: the ring holds count elements in a power of two > count.
  const auto bytes = [](size_t esize, uint32_t count) {
    const ssize_t b = rte_ring_get_memsize_elem(static_cast<unsigned>(esize), rte_align32pow2(count + 1));
    return b > 0 ? static_cast<size_t>(b) : size_t{0};
  };
  rs.bytes = bytes(sizeof(QueuedPkt), rs.data_pkts) + bytes(sizeof(ShardRelease), rs.release_notes);
  return rs;
}

ShardedSwitch::ShardedSwitch(const SwitchConfig& cfg, std::span<const std::array<uint8_t, 6>> port_macs,
                             rte_mempool* ctrl_pool, std::vector<uint16_t> shard_of_port)
    : shard_of_port_(std::move(shard_of_port)) {
  const size_t nports = cfg.ports.ports.size();
  if (shard_of_port_.size() != nports) throw std::invalid_argument("shards: the shard map needs one entry per port");
  uint16_t n = 0;
  for (const uint16_t s : shard_of_port_) n = std::max<uint16_t>(n, static_cast<uint16_t>(s + 1));
  if (n > kMaxShards) throw std::invalid_argument("shards: at most " + std::to_string(kMaxShards) + " shards");
  for (uint16_t s = 0; s < n; ++s) {
    if (std::find(shard_of_port_.begin(), shard_of_port_.end(), s) == shard_of_port_.end()) {
      throw std::invalid_argument("shards: shard " + std::to_string(s) + " owns no port");
    }
  }
  const uint32_t cells = static_cast<uint32_t>(cfg.mmu.total_bytes / cfg.mmu.cell_bytes);
  const RingSizes rs = ring_sizes(cfg);
  if (n > 1) {
    if (cells > kMaxRingCells) {
      throw std::invalid_argument("shards: mmu_size / cell size = " + std::to_string(cells) + " cells; at most " +
                                  std::to_string(kMaxRingCells) + " with more than one shard");
    }
  }
  nodes_.reserve(n);
  nodes_.push_back(std::make_unique<SwitchNode>(cfg, port_macs, ctrl_pool, ShardInit{nullptr, n > 1}));
  for (uint16_t s = 1; s < n; ++s) {
    nodes_.push_back(std::make_unique<SwitchNode>(cfg, port_macs, ctrl_pool, ShardInit{nodes_[0].get(), true}));
  }
  if (n == 1) return;  // one shard: the plain SwitchNode, no rings, no shared counters, no driver
  for (uint16_t s = 0; s < n; ++s) drivers_.push_back(std::make_unique<ShardDriver>(*nodes_[s]));

  buffer_ = std::make_unique<SharedBuffer>(cfg.mmu.pools.size());
  for (uint16_t s = 0; s < n; ++s) {
    auto l = std::make_unique<ShardLink>();
    l->self = s;
    l->num_shards = n;
    l->shard_of_port = shard_of_port_;
    links_.push_back(std::move(l));
  }
  const uint32_t id = g_instance.fetch_add(1);
  try {
    for (uint16_t src = 0; src < n; ++src) {
      for (uint16_t dst = 0; dst < n; ++dst) {
        if (src == dst) continue;
        const std::string tag = std::to_string(id) + "_" + std::to_string(src) + "_" + std::to_string(dst);
        rte_ring* d = make_ring("sfsd" + tag, sizeof(QueuedPkt), rs.data_pkts);
        rings_.push_back(d);
        rte_ring* r = make_ring("sfsr" + tag, sizeof(ShardRelease), rs.release_notes);
        rings_.push_back(r);
        links_[src]->data_out[dst] = d;
        links_[dst]->data_in[src] = d;
        links_[src]->release_out[dst] = r;
        links_[dst]->release_in[src] = r;
      }
    }
  } catch (...) {
    for (rte_ring* r : rings_) rte_ring_free(r);
    throw;
  }
  for (uint16_t s = 0; s < n; ++s) nodes_[s]->attach_shard(links_[s].get(), buffer_.get());
}

ShardedSwitch::~ShardedSwitch() {
  // Packets still in the data rings: freed (their cells die with the shards).
  std::array<QueuedPkt, 32> pkts;
  for (auto& l : links_) {
    for (uint16_t s = 0; s < l->num_shards; ++s) {
      if (l->data_in[s] == nullptr) continue;
      unsigned k;
      while ((k = rte_ring_dequeue_burst_elem(l->data_in[s], pkts.data(), sizeof(QueuedPkt), pkts.size(), nullptr)) > 0) {
        for (unsigned i = 0; i < k; ++i) rte_pktmbuf_free(pkts[i].mbuf);
      }
    }
  }
  drivers_.clear();
  nodes_.clear();
  for (rte_ring* r : rings_) rte_ring_free(r);
}

const ShardCounters& ShardedSwitch::shard_counters(uint16_t s) const {
  static const ShardCounters kNone{};
  return links_.empty() ? kNone : links_[s]->ctr;
}

PortCounters ShardedSwitch::counters(PortId p) const {
  PortCounters c{};
  for (const auto& n : nodes_) add_counters(c, n->counters(p));
  return c;
}

uint32_t ShardedSwitch::held_packets(PortId p, uint8_t pg) const {
  uint32_t h = 0;
  for (const auto& n : nodes_) h += n->held_packets(p, pg);
  return h;
}

uint64_t ShardedSwitch::pfc_wd_events() const {
  uint64_t e = 0;
  for (const auto& n : nodes_) e += n->pfc_wd_events();
  return e;
}

bool ShardedSwitch::pump_all(TimeNs now) {
  if (links_.empty()) return false;
  bool any = false;
  for (;;) {
    bool moved = false;
    for (auto& n : nodes_) moved |= n->shard_pump(now);
    if (!moved) return any;
    any = true;
  }
}

void ShardedSwitchNode::receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) {
  sw_.shard(sw_.shard_of(port)).receive(port, pkts, now);
  sw_.pump_all(now);
}

uint16_t ShardedSwitchNode::transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) {
  const uint16_t owner = sw_.shard_of(port);
  const uint16_t n = sw_.shard(owner).transmit(port, out, now);
  sw_.pump_all(now);
  if (n > 0) {
    // What left freed shared pool cells: the other shards' holds may move
    // now (the one-shard switch re-checks every hold after each packet sent).
    for (uint16_t s = 0; s < sw_.num_shards(); ++s) {
      if (s != owner) sw_.shard(s).shard_recheck_holds(now);
    }
    sw_.pump_all(now);
  }
  return n;
}

TimeNs ShardedSwitchNode::next_wakeup(TimeNs now) const {
  TimeNs t = TimeNs::max();
  for (uint16_t s = 0; s < sw_.num_shards(); ++s) t = std::min(t, sw_.shard(s).next_wakeup(now));
  return t;
}

void ShardedSwitchNode::advance(TimeNs now) {
  for (uint16_t s = 0; s < sw_.num_shards(); ++s) {
    SwitchNode& n = sw_.shard(s);
    if (now >= n.next_wakeup(now)) n.advance(now);
  }
  sw_.pump_all(now);
}

void ShardedSwitchNode::set_port_link(PortId port, bool up, TimeNs now) {
  sw_.shard(sw_.shard_of(port)).set_port_link(port, up, now);
  sw_.pump_all(now);
}

void ShardedSwitchNode::reset(TimeNs now) {
  for (uint16_t s = 0; s < sw_.num_shards(); ++s) sw_.shard(s).reset(now);
  sw_.pump_all(now);
}

}  // namespace sf::sw
