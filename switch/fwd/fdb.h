// L2 forwarding database: static and learned (MAC, VLAN) -> port entries in an
// rte_hash, with ageing of learned entries. The port (and the static flag)
// is the key's data in the hash, so a lookup reads the port the writer
// published with the key, never a slot's older port. The ageing metadata
// (key, last seen, learned/static) lives in an array indexed by the hash's
// key position, so lookups and learning never allocate.
// One Fdb per switch. `concurrent` (a sharded switch: every shard learns and
// looks up, one ages): lock-free readers and locked writers
// (RW_CONCURRENCY_LF + MULTI_WRITER_ADD). A new key is published with its
// port by rte_hash_add_key_data, a move rewrites the data atomically (the
// hash's release store; lookups load it with acquire), and the metadata
// fields are atomics, so any shard may learn, look up and refresh while the
// first ages (tests/unit/switch/fdb_race_test.cc, also under TSan). A deleted
// key's slot is reused only after the next ageing sweep, when no lookup can
// still be reading it. remove() and add_static() are control-plane calls,
// not made while shards learn the same key.
#pragma once

#include <array>
#include <bit>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "common/time.h"
#include "common/wire/ethernet.h"

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

// kStatic: a static entry on the same port (nothing to do); kStaticConflict:
// a static entry on another port (not moved; counted in static_conflict).
enum class LearnOutcome : uint8_t { kRefreshed, kLearned, kMoved, kStatic, kStaticConflict, kTableFull };

class Fdb {
 public:
  // Throws std::runtime_error at setup if the hash cannot be created.
  Fdb(uint32_t capacity, bool concurrent = false);
  ~Fdb();
  Fdb(const Fdb&) = delete;
  Fdb& operator=(const Fdb&) = delete;

  std::optional<uint16_t> lookup(const MacAddr& mac, uint16_t vlan) const;
  // Lookup cache (not in concurrent mode; cache_key() its key): a direct-mapped table of the
  // last results (port, or unknown) by key, each stamped with the table's
  // generation, which every add, move and delete advances: a slot of the
  // current generation holds what the hash would answer now. Filled by
  // lookup_bulk(), lookup() and learn(); read by lookup_bulk callers first
  // (the receive stage B: cached() per frame, the misses in one bulk).
  // (The bytes of mac then vlan as one little-endian word: wire::mac_word.)
  static uint64_t cache_key(const MacAddr& mac, uint16_t vlan) { return wire::mac_word(mac) | uint64_t{vlan} << 48; }
  // cache_key() of the MAC in the low 48 bits of `first8` (a little-endian
  // load of the MAC's six bytes and two more, e.g. a frame's first eight
  // bytes for its destination): one and, one or.
  static uint64_t cache_key_word(uint64_t first8, uint16_t vlan) {
    return (first8 & 0xFFFFFFFFFFFFull) | uint64_t{vlan} << 48;
  }
  // True, with `port` (-1: unknown), when the cache holds key `bits`.
  bool cached(uint64_t bits, int32_t& port) const { return cache_view().cached(bits, port); }
  // The cache as it is now, for probing many keys while the table does not
  // change (a receive stage pass: nothing learns before stage C): its slots
  // and generation read once, in registers, not reloaded after every store
  // of the caller's. Invalid after any learn, add, move, delete or ageing.
  class CacheView;  // below (it reads the private CacheSlot)
  CacheView cache_view() const;
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
  // A snapshot (the counters are atomic in concurrent mode: any thread may read it).
  FdbStats stats() const;
  // The entries, for `show mac` (control thread, allocates): the ageing
  // metadata's atomics and a lookup of each key's port. Read while the
  // datapath learns, an entry added or moved meanwhile may be missing or
  // show its previous port; nothing is torn.
  struct EntryView {
    MacAddr mac{};
    uint16_t vlan = 0;
    uint16_t port = 0;
    bool is_static = false;
    TimeNs last_seen;
  };
  std::vector<EntryView> entries(size_t max) const;

 private:
  enum class Slot : uint8_t { kFree, kLearned, kStatic };
  // Ageing metadata of the key at one hash position. Written by the writer
  // that added the key (key and last_seen, then state with release), read by
  // the ager (state with acquire); last_seen is refreshed by any learner.
  struct Entry {
    std::atomic<uint64_t> key{0};  // the hash key's 8 bytes (MAC, VLAN), to delete it when aged
    std::atomic<int64_t> last_seen_ns{0};
    std::atomic<Slot> state{Slot::kFree};
  };
  // Concurrent mode: frees the key slots deleted before the previous sweep.
  void free_deferred();
  void count(uint64_t& c);
  // Publishes (key, port) with rte_hash_add_key_data (a move when the key is
  // there) and records the metadata at the key's position. Returns false when the table is full.
  bool publish(const void* key, uint64_t key_bits, uint16_t port, bool is_static, TimeNs now);
  // The deleted key at `pos`: its slot is free (concurrent: at the next sweep).
  void release(int32_t pos);

  struct CacheSlot {
    uint64_t key = 0;
    uint32_t gen = 0;   // 0: never valid (gen_ starts at 1)
    int32_t port = -1;  // -1: not in the table
    int32_t pos = -1;   // the key's hash position (learn()); -1: not known
    uint32_t is_static = 0;
  };
  static constexpr uint32_t kCacheBits = 8;
  static uint32_t slot_of(uint64_t bits) {
    return static_cast<uint32_t>((bits * 0x9E3779B97F4A7C15ull) >> (64 - kCacheBits));
  }
  void cache_put(uint64_t bits, int32_t port, int32_t pos, bool is_static) const {
    if (cache_ != nullptr) cache_[slot_of(bits)] = {bits, gen_, port, pos, is_static ? 1u : 0u};
  }
  // The table changed: every cached result is stale.
  void changed();

  rte_hash* hash_ = nullptr;
  std::unique_ptr<CacheSlot[]> cache_;  // null in concurrent mode
  uint32_t gen_ = 1;
  std::unique_ptr<Entry[]> entries_;  // indexed by rte_hash key position
  size_t n_entries_ = 0;
  bool concurrent_ = false;
  std::vector<int32_t> deferred_free_;  // concurrent: slots deleted since the last sweep (capacity reserved)
  std::atomic<uint32_t> deferred_n_{0};  // its size, for size() from other threads
  FdbStats stats_;

 public:
  class CacheView {
   public:
    bool cached(uint64_t bits, int32_t& port) const {
      if (slots_ == nullptr) return false;
      const CacheSlot& c = slots_[slot_of(bits)];
      if (c.gen != gen_ || c.key != bits) return false;
      port = c.port;
      return true;
    }
    // False in concurrent mode (no cache: cached() is always false).
    bool enabled() const { return slots_ != nullptr; }
    // cached() of an enabled view in one branch: `port` is written either
    // way (with a stale slot's port when false, for the caller to overwrite).
    bool probe(uint64_t bits, int32_t& port) const {
      const CacheSlot& c = slots_[slot_of(bits)];
      port = c.port;
      return ((c.key ^ bits) | (c.gen ^ gen_)) == 0;
    }

   private:
    friend class Fdb;
    CacheView(const CacheSlot* slots, uint32_t gen) : slots_(slots), gen_(gen) {}
    const CacheSlot* slots_;
    uint32_t gen_;
  };
};

inline Fdb::CacheView Fdb::cache_view() const { return CacheView(cache_.get(), gen_); }

}  // namespace sf::sw
