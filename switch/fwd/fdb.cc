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

Key make_key(const MacAddr& mac, uint16_t vlan) {
  Key k{};
  std::memcpy(k.mac, mac.data(), 6);
  k.vlan = vlan;
  return k;
}

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
  entries_.resize(static_cast<size_t>(rte_hash_max_key_id(hash_)) + 1);
  if (concurrent_) deferred_free_.reserve(entries_.size());
}

void Fdb::free_deferred() {
  for (const int32_t pos : deferred_free_) rte_hash_free_key_with_position(hash_, pos);
  deferred_free_.clear();
  deferred_n_.store(0, std::memory_order_relaxed);
}

Fdb::~Fdb() { rte_hash_free(hash_); }

std::optional<uint16_t> Fdb::lookup(const MacAddr& mac, uint16_t vlan) const {
  const Key k = make_key(mac, vlan);
  const int32_t pos = rte_hash_lookup(hash_, &k);
  if (pos < 0) return std::nullopt;
  return entries_[static_cast<size_t>(pos)].port;
}

void Fdb::lookup_bulk(const MacAddr* const* macs, const uint16_t* vlans, uint32_t n, int32_t* ports) const {
  Key keys[kBulkMax];
  const void* ptrs[kBulkMax];
  int32_t pos[kBulkMax];
  for (uint32_t done = 0; done < n; done += kBulkMax) {
    const uint32_t k = n - done < kBulkMax ? n - done : kBulkMax;
    for (uint32_t i = 0; i < k; ++i) {
      keys[i] = make_key(*macs[done + i], vlans[done + i]);
      ptrs[i] = &keys[i];
    }
    rte_hash_lookup_bulk(hash_, ptrs, k, pos);
    for (uint32_t i = 0; i < k; ++i) ports[done + i] = pos[i] < 0 ? -1 : entries_[static_cast<size_t>(pos[i])].port;
  }
}

LearnOutcome Fdb::learn(const MacAddr& mac, uint16_t vlan, uint16_t port, TimeNs now) {
  const Key k = make_key(mac, vlan);
  int32_t pos = rte_hash_lookup(hash_, &k);
  if (pos >= 0) {
    Entry& e = entries_[static_cast<size_t>(pos)];
    if (e.is_static) {
      if (e.port != port) count(stats_.static_conflict);
      return LearnOutcome::kStatic;
    }
    e.last_seen = now;
    if (e.port == port) return LearnOutcome::kRefreshed;
    e.port = port;
    count(stats_.moved);
    return LearnOutcome::kMoved;
  }
  pos = rte_hash_add_key(hash_, &k);
  if (pos < 0) {
    count(stats_.table_full);
    return LearnOutcome::kTableFull;
  }
  entries_[static_cast<size_t>(pos)] = Entry{port, false, true, now, mac, vlan};
  count(stats_.learned);
  return LearnOutcome::kLearned;
}

bool Fdb::add_static(const MacAddr& mac, uint16_t vlan, uint16_t port) {
  const Key k = make_key(mac, vlan);
  const int32_t pos = rte_hash_add_key(hash_, &k);
  if (pos < 0) return false;
  entries_[static_cast<size_t>(pos)] = Entry{port, true, true, TimeNs(0), mac, vlan};
  return true;
}

bool Fdb::remove(const MacAddr& mac, uint16_t vlan) {
  const Key k = make_key(mac, vlan);
  const int32_t pos = rte_hash_del_key(hash_, &k);
  if (pos < 0) return false;
  entries_[static_cast<size_t>(pos)].in_use = false;
  if (concurrent_) {
    deferred_free_.push_back(pos);
    deferred_n_.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

uint32_t Fdb::age(TimeNs now, TimeNs ageing) {
  uint32_t n = 0;
  // Slots deleted a sweep ago (a second: no lookup still reads them) may now be reused.
  if (concurrent_) free_deferred();
  for (Entry& e : entries_) {
    if (!e.in_use || e.is_static || now - e.last_seen < ageing) continue;
    const Key k = make_key(e.mac, e.vlan);
    const int32_t pos = rte_hash_del_key(hash_, &k);
    e.in_use = false;
    if (concurrent_ && pos >= 0) {
      deferred_free_.push_back(pos);
      deferred_n_.fetch_add(1, std::memory_order_relaxed);
    }
    ++n;
  }
  stats_.aged += n;
  return n;
}

uint32_t Fdb::size() const {
  // Concurrent mode keeps deleted keys' slots until the next sweep; rte_hash counts them.
  return static_cast<uint32_t>(rte_hash_count(hash_)) - deferred_n_.load(std::memory_order_relaxed);
}

}  // namespace sf::sw
