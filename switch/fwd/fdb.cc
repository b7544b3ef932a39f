// L2 FDB on rte_hash. See fdb.h.
#include "switch/fwd/fdb.h"

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

namespace sf::sw {
namespace {

struct __attribute__((packed)) Key {
  uint8_t mac[6];
  uint16_t vlan;
};
static_assert(sizeof(Key) == 8);

uint64_t key_bits(const Key& k) {
  uint64_t b = 0;
  std::memcpy(&b, &k, sizeof(k));
  return b;
}

Key key_of(uint64_t b) {
  Key k{};
  std::memcpy(&k, &b, sizeof(k));
  return k;
}

// The key's bytes are Fdb::cache_key()'s word (mac, then vlan little-endian),
// built in registers and stored once: assembled in memory (a 4-, a 2- and a
// 2-byte store, then the 8-byte load of key_bits) it stalled store
// forwarding on every learn (a third of Fdb::learn's cpu-clock samples).
Key make_key(const MacAddr& mac, uint16_t vlan) { return key_of(Fdb::cache_key(mac, vlan)); }

// The hash's data word of an entry: the port, and a flag for static entries.
constexpr uintptr_t kStaticBit = uintptr_t{1} << 16;
void* data_of(uint16_t port, bool is_static) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(port) | (is_static ? kStaticBit : 0));
}
uint16_t port_of(const void* d) { return static_cast<uint16_t>(reinterpret_cast<uintptr_t>(d)); }
bool static_of(const void* d) { return (reinterpret_cast<uintptr_t>(d) & kStaticBit) != 0; }

std::atomic<uint32_t> g_instance{0};

}  // namespace

// Counters: several shards learn at once in concurrent mode.
void Fdb::count(uint64_t& c) {
  if (concurrent_) {
    std::atomic_ref<uint64_t>(c).fetch_add(1, std::memory_order_relaxed);
  } else {
    ++c;
  }
}

FdbStats Fdb::stats() const {
  if (!concurrent_) return stats_;
  auto load = [](const uint64_t& c) {
    return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(c)).load(std::memory_order_relaxed);
  };
  FdbStats s;
  s.learned = load(stats_.learned);
  s.moved = load(stats_.moved);
  s.aged = load(stats_.aged);
  s.table_full = load(stats_.table_full);
  s.static_conflict = load(stats_.static_conflict);
  return s;
}

Fdb::Fdb(uint32_t capacity, bool concurrent) : concurrent_(concurrent) {
  const std::string name = "sf_fdb_" + std::to_string(g_instance.fetch_add(1));
  rte_hash_parameters p{};
  p.name = name.c_str();
  p.entries = capacity < 8 ? 8 : capacity;
  p.key_len = sizeof(Key);
  p.hash_func = rte_hash_crc;  // SSE4.2 CRC32 where the CPU has it
  p.socket_id = SOCKET_ID_ANY;
  p.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
  if (concurrent) p.extra_flag |= RTE_HASH_EXTRA_FLAGS_MULTI_WRITER_ADD | RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF;
  hash_ = rte_hash_create(&p);
  if (hash_ == nullptr) throw std::runtime_error("fdb: rte_hash_create: " + std::string(rte_strerror(rte_errno)));
  n_entries_ = static_cast<size_t>(rte_hash_max_key_id(hash_)) + 1;
  entries_ = std::make_unique<Entry[]>(n_entries_);
  if (concurrent_) deferred_free_.reserve(n_entries_);
  if (!concurrent_) cache_ = std::make_unique<CacheSlot[]>(size_t{1} << kCacheBits);
}

void Fdb::changed() {
  if (++gen_ == 0) {  // wrapped: slots of generation 0 must not look valid
    for (size_t i = 0; i < (size_t{1} << kCacheBits); ++i) cache_[i].gen = 0;
    gen_ = 1;
  }
}

void Fdb::free_deferred() {
  for (const int32_t pos : deferred_free_) rte_hash_free_key_with_position(hash_, pos);
  deferred_free_.clear();
  deferred_n_.store(0, std::memory_order_relaxed);
}

Fdb::~Fdb() { rte_hash_free(hash_); }

std::optional<uint16_t> Fdb::lookup(const MacAddr& mac, uint16_t vlan) const {
  const uint64_t bits = cache_key(mac, vlan);
  int32_t port;
  if (cached(bits, port)) return port >= 0 ? std::optional<uint16_t>(static_cast<uint16_t>(port)) : std::nullopt;
  const Key k = make_key(mac, vlan);
  void* d = nullptr;
  const int32_t pos = rte_hash_lookup_data(hash_, &k, &d);
  if (pos < 0) {
    cache_put(bits, -1, -1, false);
    return std::nullopt;
  }
  cache_put(bits, port_of(d), pos, static_of(d));
  return port_of(d);
}

void Fdb::lookup_bulk(const MacAddr* const* macs, const uint16_t* vlans, uint32_t n, int32_t* ports) const {
  static_assert(kBulkMax <= RTE_HASH_LOOKUP_BULK_MAX);
  Key keys[kBulkMax];
  const void* ptrs[kBulkMax];
  void* data[kBulkMax];
  for (uint32_t done = 0; done < n; done += kBulkMax) {
    const uint32_t k = n - done < kBulkMax ? n - done : kBulkMax;
    for (uint32_t i = 0; i < k; ++i) {
      keys[i] = make_key(*macs[done + i], vlans[done + i]);
      ptrs[i] = &keys[i];
    }
    uint64_t hits = 0;
    rte_hash_lookup_bulk_data(hash_, ptrs, k, &hits, data);
    for (uint32_t i = 0; i < k; ++i) {
      const bool hit = (hits >> i & 1) != 0;
      ports[done + i] = hit ? port_of(data[i]) : -1;
      if (cache_ != nullptr) {
        const uint64_t bits = key_bits(keys[i]);
        CacheSlot& c = cache_[slot_of(bits)];
        if (c.gen != gen_ || c.key != bits) c = {bits, gen_, ports[done + i], -1, hit && static_of(data[i]) ? 1u : 0u};
      }
    }
  }
}

bool Fdb::publish(const void* key, uint64_t bits, uint16_t port, bool is_static, TimeNs now) {
  if (cache_ != nullptr) changed();
  if (rte_hash_add_key_data(hash_, key, data_of(port, is_static)) < 0) return false;
  // rte_hash_add_key_data does not say where the key went; a lookup does. The
  // key may be gone already (the ager, or remove()): then nothing to record.
  const int32_t pos = rte_hash_lookup(hash_, key);
  if (pos < 0) return true;
  Entry& e = entries_[static_cast<size_t>(pos)];
  e.key.store(bits, std::memory_order_relaxed);
  e.last_seen_ns.store(now.ns(), std::memory_order_relaxed);
  e.state.store(is_static ? Slot::kStatic : Slot::kLearned, std::memory_order_release);
  return true;
}

LearnOutcome Fdb::learn(const MacAddr& mac, uint16_t vlan, uint16_t port, TimeNs now) {
  const Key k = make_key(mac, vlan);
  void* d = nullptr;
  int32_t pos;
  const uint64_t bits = key_bits(k);
  const CacheSlot* c = cache_ != nullptr ? &cache_[slot_of(bits)] : nullptr;
  if (c != nullptr && c->gen == gen_ && c->key == bits && c->pos >= 0) {
    // What rte_hash_lookup_data answers (the key is there: pos known).
    pos = c->pos;
    d = data_of(static_cast<uint16_t>(c->port), c->is_static != 0);
  } else {
    pos = rte_hash_lookup_data(hash_, &k, &d);
    if (pos >= 0) cache_put(bits, port_of(d), pos, static_of(d));
  }
  if (pos >= 0) {
    if (static_of(d)) {
      if (port_of(d) == port) return LearnOutcome::kStatic;
      count(stats_.static_conflict);
      return LearnOutcome::kStaticConflict;
    }
    entries_[static_cast<size_t>(pos)].last_seen_ns.store(now.ns(), std::memory_order_relaxed);
    if (port_of(d) == port) return LearnOutcome::kRefreshed;
    // A move: the new port replaces the data word in one store.
    if (!publish(&k, key_bits(k), port, false, now)) {
      count(stats_.table_full);  // the key was aged meanwhile and the table filled up
      return LearnOutcome::kTableFull;
    }
    count(stats_.moved);
    return LearnOutcome::kMoved;
  }
  if (!publish(&k, key_bits(k), port, false, now)) {
    count(stats_.table_full);
    return LearnOutcome::kTableFull;
  }
  count(stats_.learned);
  return LearnOutcome::kLearned;
}

bool Fdb::add_static(const MacAddr& mac, uint16_t vlan, uint16_t port) {
  const Key k = make_key(mac, vlan);
  return publish(&k, key_bits(k), port, true, TimeNs(0));
}

void Fdb::release(int32_t pos) {
  if (cache_ != nullptr) changed();
  entries_[static_cast<size_t>(pos)].state.store(Slot::kFree, std::memory_order_relaxed);
  if (concurrent_) {
    deferred_free_.push_back(pos);
    deferred_n_.fetch_add(1, std::memory_order_relaxed);
  }
}

bool Fdb::remove(const MacAddr& mac, uint16_t vlan) {
  const Key k = make_key(mac, vlan);
  const int32_t pos = rte_hash_del_key(hash_, &k);
  if (pos < 0) return false;
  release(pos);
  return true;
}

uint32_t Fdb::age(TimeNs now, TimeNs ageing) {
  uint32_t n = 0;
  // Slots deleted a sweep ago (a second: no lookup still reads them) may now be reused.
  if (concurrent_) free_deferred();
  for (size_t i = 0; i < n_entries_; ++i) {
    Entry& e = entries_[i];
    if (e.state.load(std::memory_order_acquire) != Slot::kLearned) continue;
    if (now - TimeNs(e.last_seen_ns.load(std::memory_order_relaxed)) < ageing) continue;
    const Key k = key_of(e.key.load(std::memory_order_relaxed));
    const int32_t pos = rte_hash_del_key(hash_, &k);
    if (pos < 0) {
      e.state.store(Slot::kFree, std::memory_order_relaxed);  // removed meanwhile
      continue;
    }
    release(pos);
    ++n;
  }
  if (concurrent_) {
    std::atomic_ref<uint64_t>(stats_.aged).fetch_add(n, std::memory_order_relaxed);
  } else {
    stats_.aged += n;
  }
  return n;
}

std::vector<Fdb::EntryView> Fdb::entries(size_t max) const {
  std::vector<EntryView> out;
  for (size_t i = 0; i < n_entries_ && out.size() < max; ++i) {
    const Slot st = entries_[i].state.load(std::memory_order_acquire);
    if (st == Slot::kFree) continue;
    const Key k = key_of(entries_[i].key.load(std::memory_order_relaxed));
    void* data = nullptr;
    if (rte_hash_lookup_data(hash_, &k, &data) < 0) continue;  // aged or deleted meanwhile
    EntryView e;
    std::memcpy(e.mac.data(), k.mac, 6);
    e.vlan = k.vlan;
    e.port = port_of(data);
    e.is_static = static_of(data);
    e.last_seen = TimeNs(entries_[i].last_seen_ns.load(std::memory_order_relaxed));
    out.push_back(e);
  }
  return out;
}

uint32_t Fdb::size() const {
  // Concurrent mode keeps deleted keys' slots until the next sweep; rte_hash counts them.
  return static_cast<uint32_t>(rte_hash_count(hash_)) - deferred_n_.load(std::memory_order_relaxed);
}

}  // namespace sf::sw
