// Receive stage C, the forwarding decision (docs/architecture.md "Switch
// pipeline"): where a classified, learned frame goes. Routed IPv4 (the LPM
// result stage B looked up, ECMP by flow hash), routed IPv6 (LPM, or SRv6
// uN through the uSID table), L2 (the FDB port, or the flood set). Each
// decision names a next hop or egress ports, or the drop cause; the caller
// (SwitchNode::forward_*, switch_node_rx.cc) rewrites the headers, counts, and
// hands each copy to admission (stage D, admission_stage.h) as a QueuedPkt.
//
// Pure logic over tables and headers: no counters, no drops, no allocation
// per packet. Inline so that SwitchNode::receive_stages compiles it into its
// loop (STYLE G4).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "common/wire/ipv4.h"
#include "common/wire/ipv6.h"
#include "common/wire/srv6.h"
#include "switch/config/switch_config.h"
#include "switch/fwd/route_table.h"
#include "switch/pipeline/counters.h"
#include "switch/pipeline/port_state.h"

namespace sf::sw {

// TTL - 1 with the header checksum updated incrementally (RFC 1624, as
// Linux's ip_decrease_ttl): the TTL is the high byte of its 16-bit word, so
// the checksum grows by 0x0100 with end-around carry. For a header whose
// checksum was valid this equals recomputing it (0xFFFF folds to 0x0000,
// which a recomputation never yields either).
inline void decrement_ttl(wire::Ipv4Header& h) {
  --h.ttl;
  uint32_t c = uint32_t{h.checksum.value()} + 0x0100u;
  c += c >= 0xFFFFu ? 1u : 0u;
  h.checksum.set(static_cast<uint16_t>(c));
}

// SRv6 uN (F3216) of one switch: its locator block, its own uSID and the
// static uSID -> next hop table (cfg.srv6). The table is 64 Ki slots,
// calloc'd (zero pages until written), not 256 KiB written per switch.
class Srv6Table {
 public:
  Srv6Table() = default;  // no SRv6: in_block() is always false
  // `port_macs[p]`: port p's own MAC (the next hops' source; none: zero).
  // Throws std::runtime_error when the table cannot be allocated.
  Srv6Table(const Srv6Config& cfg, std::span<const std::array<uint8_t, 6>> port_macs)
      : block_(cfg.block), my_usid_(cfg.my_usid) {
    slot_.reset(static_cast<uint32_t*>(std::calloc(size_t{1} << 16, sizeof(uint32_t))));
    if (!slot_) throw std::runtime_error("srv6: cannot allocate the uSID table");
    for (const auto& e : cfg.table) {
      slot_[e.usid] = static_cast<uint32_t>(next_.size() + 1);
      const uint16_t p = e.next_hop.port;
      next_.push_back({p, e.next_hop.mac, p < port_macs.size() ? port_macs[p] : std::array<uint8_t, 6>{}});
    }
  }
  bool enabled() const { return slot_ != nullptr; }
  // Whether `da` is in this switch's locator block (SRv6 uN applies).
  bool in_block(const wire::Ipv6Addr& da) const {
    return enabled() && std::equal(block_.begin(), block_.end(), da.bytes.begin());
  }
  uint16_t my_usid() const { return my_usid_; }
  // The next hop of uSID `usid`; nullptr: none.
  const NextHop* next_hop(uint16_t usid) const {
    const uint32_t s = slot_[usid];
    return s == 0 ? nullptr : &next_[s - 1];
  }

 private:
  struct FreeDeleter {
    void operator()(uint32_t* p) const { std::free(p); }
  };
  std::array<uint8_t, 4> block_{};
  uint16_t my_usid_ = 0;
  std::unique_ptr<uint32_t[], FreeDeleter> slot_;  // uSID -> index into next_ + 1, 0 none
  std::vector<NextHop> next_;
};

// A routing decision: the next hop, or (nh == nullptr) the drop cause.
struct RouteDecision {
  const NextHop* nh = nullptr;
  DropCause cause = DropCause::kNoRoute;
};

// The member of ECMP group `t` for flow hash `h`: with a port down, a live
// member (none: nullptr).
inline const NextHop* resolve_group(const RouteTable& routes, const PortStates& st, RouteTarget t, uint32_t h) {
  return st.faulty() == 0 ? &routes.resolve(t, h) : routes.resolve_live(t, h, [&st](uint16_t p) { return st.oper_up(p); });
}

// IPv4 (TTL already checked): `t` is the LPM result for the destination;
// sp / dp the UDP ports (0: not UDP) of the ECMP flow hash, used for groups only.
[[gnu::always_inline]] inline RouteDecision route_v4(const RouteTable& routes, const PortStates& st,
                                                     const std::optional<RouteTarget>& t, const wire::Ipv4Header& v4,
                                                     uint16_t sp, uint16_t dp) {
  if (!t) return {nullptr, DropCause::kNoRoute};
  if (!t->is_group) return {&routes.next_hop(t->id), DropCause::kNoRoute};
  const uint32_t h = flow_hash_v4(v4.src.bytes.data(), v4.dst.bytes.data(), v4.protocol, sp, dp);
  return {resolve_group(routes, st, *t, h), DropCause::kPortDown};
}

// IPv6: hop limit, then SRv6 uN when the destination is in the locator block
// (our own active uSID is consumed: the address is shifted in place), else
// LPM with ECMP (flow hash ^ flow label).
[[gnu::always_inline]] inline RouteDecision route_v6(const RouteTable& routes, const PortStates& st,
                                                     const Srv6Table& srv6, wire::Ipv6Header& v6, uint16_t sp,
                                                     uint16_t dp) {
  if (v6.hop_limit <= 1) return {nullptr, DropCause::kTtlExpired};
  wire::Ipv6Addr& da = v6.dst;
  if (srv6.in_block(da)) {
    if (wire::active_usid(da) == srv6.my_usid()) {
      if (wire::usid_args_zero(da)) return {nullptr, DropCause::kNoRoute};  // End: no local decap here
      wire::usid_shift(da);
    }
    return {srv6.next_hop(wire::active_usid(da)), DropCause::kNoRoute};
  }
  const auto t = routes.lookup_v6(da.bytes.data());
  if (!t) return {nullptr, DropCause::kNoRoute};
  if (!t->is_group) return {&routes.next_hop(t->id), DropCause::kNoRoute};
  const uint32_t h = flow_hash(v6.src.bytes, da.bytes, v6.next_header, sp, dp) ^ v6.flow_label();
  return {resolve_group(routes, st, *t, h), DropCause::kPortDown};
}

// L2 flooding with some port faulty: to[p] = 1 for each of the n ports but
// `in` that is `usable` (up, or found up by a probe); returns how many.
template <class Usable>
[[gnu::always_inline]] inline uint16_t flood_set(uint16_t n, uint16_t in, Usable&& usable, uint8_t* to) {
  uint16_t copies = 0;
  for (uint16_t p = 0; p < n; ++p) {
    to[p] = p != in && usable(p) ? 1 : 0;
    copies = static_cast<uint16_t>(copies + to[p]);
  }
  return copies;
}

}  // namespace sf::sw
