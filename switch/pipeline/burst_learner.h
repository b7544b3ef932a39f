// FDB learning and destination lookups of one receive burst (stage C of
// SwitchNode::receive_stages and stage C's slow step slow_frame(); docs/
// architecture.md "Switch pipeline"). Consecutive frames of a burst mostly
// share their source (learned once per burst) and destination (looked up
// once until a learn changes the table), so the last of each is cached for
// the burst. Stage B looked every destination of a stage pass up before
// stage C learned anything, so the keys learned or moved in the pass (to the
// ingress port) are recorded: dst_after_bulk() corrects stage B's result
// with them.
//
// State of one SwitchNode (one lcore); the Fdb is passed in (a sharded
// switch's shards share one).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "common/time.h"
#include "switch/fwd/fdb.h"
#include "switch/pipeline/classify_stage.h"

namespace sf::sw {

class BurstLearner {
 public:
  // A new receive() burst: the cache holds for one burst (one `now`, no
  // ageing in between); also after the FDB changed behind it (reset).
  // Field by field, not `cache_ = {}`: that built the value on the stack
  // with a 4-byte store inside two 16-byte loads (a store-forwarding stall
  // on every burst, ~5 % of the bench's cpu-clock samples in the multi mix).
  void begin_burst() {
    Cache& c = cache_;
    c.src_key = 0;
    c.src_port = kNoPort;
    c.dst_valid = false;
    c.dst_vlan = 0;
    c.dst_port = std::nullopt;
    c.dst_mac = MacAddr{};
  }
  // A new stage pass: no key learned in it yet.
  void begin_pass() {
    new_n_ = 0;
    overflow_ = false;
  }

  // Learns (mac, vlan) on `port`, unless it is the source just learned.
  void learn(Fdb& fdb, const MacAddr& mac, uint16_t vlan, uint16_t port, TimeNs now) {
    const uint64_t key = Fdb::cache_key(mac, vlan);
    if (key == cache_.src_key && port == cache_.src_port) return;
    learn_slow(fdb, mac, vlan, port, now);
  }
  // Stage C's learn of a frame's source (mac, vlan): learn() with its key
  // built by the caller (Fdb::cache_key_word of the frame's bytes 6-13) and
  // the multicast test after the cache check (the cached source is always
  // unicast): a frame whose source was just learned costs one compare.
  void learn_source(Fdb& fdb, uint64_t key, const MacAddr& mac, uint16_t vlan, uint16_t port, TimeNs now) {
    if (key == cache_.src_key && port == cache_.src_port) return;
    if ((mac[0] & 1u) != 0) return;  // multicast / broadcast source: not learned
    learn_slow(fdb, mac, vlan, port, now);
  }
  // Whether learn_source(key, port) would do nothing (the source just learned).
  bool source_cached(uint64_t key, uint16_t port) const { return key == cache_.src_key && port == cache_.src_port; }
  // The port of (mac, vlan), through the cached last destination.
  std::optional<uint16_t> lookup(const Fdb& fdb, const MacAddr& mac, uint16_t vlan) {
    Cache& c = cache_;
    if (c.dst_valid && c.dst_vlan == vlan && mac_eq(c.dst_mac, mac)) return c.dst_port;
    c.dst_port = fdb.lookup(mac, vlan);
    c.dst_valid = true;
    c.dst_mac = mac;
    c.dst_vlan = vlan;
    return c.dst_port;
  }
  // Stage C: the port of unicast destination (mac, vlan) of a frame that
  // arrived on `in`, given stage B's bulk result `bulk`; -1: unknown. A key
  // learned or moved earlier in this pass (it now maps to `in`) overrides
  // it; past kRxStageBurst such keys, a live lookup. (A plain int, not an
  // optional: returning std::optional<uint16_t> cost 8 instructions a packet.)
  int32_t dst_after_bulk(const Fdb& fdb, int32_t bulk, const MacAddr& mac, uint16_t vlan, uint16_t in) const {
    if (new_n_ == 0) return bulk;  // nothing learned in the pass (overflow_ implies new_n_ != 0)
    if (overflow_) {
      const std::optional<uint16_t> p = fdb.lookup(mac, vlan);
      return p ? int32_t{*p} : -1;
    }
    int32_t out = bulk;
    for (uint16_t k = 0; k < new_n_; ++k) {
      if (new_[k].vlan == vlan && mac_eq(new_[k].mac, mac)) out = in;
    }
    return out;
  }

 private:
  void learn_slow(Fdb& fdb, const MacAddr& mac, uint16_t vlan, uint16_t port, TimeNs now) {
    Cache& c = cache_;
    const LearnOutcome o = fdb.learn(mac, vlan, port, now);
    // A refused learn (a static MAC seen on another port, a full table) is
    // counted by the FDB for every frame, as frame by frame: not cached.
    if (o != LearnOutcome::kStaticConflict && o != LearnOutcome::kTableFull) {
      c.src_key = Fdb::cache_key(mac, vlan);
      c.src_port = port;
    }
    if (o == LearnOutcome::kLearned || o == LearnOutcome::kMoved) {
      c.dst_valid = false;
      if (new_n_ < kRxStageBurst) {
        new_[new_n_++] = {mac, vlan};
      } else {
        overflow_ = true;
      }
    }
  }
  // The last source learned and destination looked up in this burst.
  // src_key: Fdb::cache_key of the source; src_port kNoPort: none yet.
  static constexpr uint32_t kNoPort = 0xFFFFFFFFu;
  struct Cache {
    uint64_t src_key = 0;
    uint32_t src_port = kNoPort;
    bool dst_valid = false;
    uint16_t dst_vlan = 0;
    std::optional<uint16_t> dst_port;
    MacAddr dst_mac{};
  };
  // begin_burst() resets Cache field by field (one wide store of `{}` and
  // the narrow loads after it stalled store forwarding): a field added here
  // is added there too; the size catches most additions.
  static_assert(sizeof(Cache) == 32 && sizeof(MacAddr) == 6 && sizeof(std::optional<uint16_t>) == 4,
                "Cache changed: reset the new field in begin_burst()");
  Cache cache_;
  // Keys learned or moved (to the ingress port) in the current stage pass.
  struct Key {
    MacAddr mac{};
    uint16_t vlan = 0;
  };
  std::array<Key, kRxStageBurst> new_{};
  uint16_t new_n_ = 0;
  bool overflow_ = false;  // more than kRxStageBurst: dst_after_bulk looks up live
};

}  // namespace sf::sw
