// L2 forwarding database: static and learned (MAC, VLAN) -> port entries in an
// rte_hash, with ageing of learned entries. Entries live in an array indexed by
// the hash's key position, so lookups and learning never allocate.
// One Fdb per switch. `concurrent` (a sharded switch: every shard learns and
// looks up, one ages): lock-free readers and locked writers
// (RW_CONCURRENCY_LF + MULTI_WRITER_ADD); a deleted key's slot is reused only
// after the next ageing sweep, when no lookup can still be reading it.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"

struct rte_hash;

namespace sf::sw {

using MacAddr = std::array<uint8_t, 6>;

struct FdbStats {
  uint64_t learned = 0;
  uint64_t moved = 0;         // a learned MAC seen on another port
  uint64_t aged = 0;
  uint64_t table_full = 0;    // learning refused: no room
  uint64_t static_conflict = 0;  // a static MAC seen on another port (not moved)
};

enum class LearnOutcome : uint8_t { kRefreshed, kLearned, kMoved, kStatic, kTableFull };

class Fdb {
 public:
  // Throws std::runtime_error at setup if the hash cannot be created.
  Fdb(uint32_t capacity, bool concurrent = false);
  ~Fdb();
  Fdb(const Fdb&) = delete;
  Fdb& operator=(const Fdb&) = delete;

  std::optional<uint16_t> lookup(const MacAddr& mac, uint16_t vlan) const;
  // ports[i] = the port of (*macs[i], vlans[i]), or -1 when unknown; one
  // rte_hash_lookup_bulk per kBulkMax keys (the receive stage's lookups).
  static constexpr uint32_t kBulkMax = 32;
  void lookup_bulk(const MacAddr* const* macs, const uint16_t* vlans, uint32_t n, int32_t* ports) const;
  LearnOutcome learn(const MacAddr& mac, uint16_t vlan, uint16_t port, TimeNs now);
  // Static entries are never aged or moved. Returns false when the table is full.
  bool add_static(const MacAddr& mac, uint16_t vlan, uint16_t port);
  bool remove(const MacAddr& mac, uint16_t vlan);
  // Removes learned entries not seen for `ageing`; returns how many.
  uint32_t age(TimeNs now, TimeNs ageing);

  // Entries in use (deleted ones whose slot is not yet free not counted).
  uint32_t size() const;
  const FdbStats& stats() const { return stats_; }

 private:
  struct Entry {
    uint16_t port = 0;
    bool is_static = false;
    bool in_use = false;
    TimeNs last_seen;
    MacAddr mac{};
    uint16_t vlan = 0;
  };
  // Concurrent mode: frees the key slots deleted before the previous sweep.
  void free_deferred();
  void count(uint64_t& c);

  rte_hash* hash_ = nullptr;
  std::vector<Entry> entries_;  // indexed by rte_hash key position
  bool concurrent_ = false;
  std::vector<int32_t> deferred_free_;  // concurrent: slots deleted since the last sweep (capacity reserved)
  std::atomic<uint32_t> deferred_n_{0};  // its size, for size() from other threads
  FdbStats stats_;
};

}  // namespace sf::sw
