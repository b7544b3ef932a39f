// Packet trimming as a component (SWITCH_TRIMMING; BUFFER_PROFILE
// packet_discard_action trim; shared/reference/switch.md section 5;
// docs/architecture.md "Switch pipeline"). Where admission refuses a packet
// for a trim profile, the node asks the Trimmer to cut it to
// SWITCH_TRIMMING.size bytes keeping Ethernet / IP / UDP / BTH intact
// (common/wire/trim.h: lengths and IPv4 checksum fixed, DSCP rewritten) and
// to name its trim queue; the node then admits it there (SwitchNode::trim,
// switch_node_trim.cc). Flooded copies (shared bytes), non-IP frames and
// packets trimmed already are not trimmable: the node drops them under the
// original cause.
//
// SWITCH_TRIMMING is switch-wide: the node holds one Trimmer, or none
// without the table (a null pointer, tested only where admission refused a
// packet: nothing on the path of an admitted one). No allocation; cutting
// frees the segments past the cut.
#pragma once

#include <algorithm>
#include <cstdint>

#include "switch/config/switch_config.h"
#include "switch/mmu/mmu.h"
#include "switch/pipeline/egress_queue.h"

namespace sf::sw {

class Trimmer {
 public:
  explicit Trimmer(const TrimConfig& cfg) : cfg_(cfg) {}
  const TrimConfig& config() const { return cfg_; }

  // Cuts the copy `p` (its mbuf, written in place; a chain whose first segment
  // ends inside the headers through a copy of its first kHeaderWindow bytes)
  // to its headers; sets p.queue (the trim queue; queue_index "dynamic": the
  // trim DSCP -> TC -> queue by `qos`, the INGRESS port's maps, as any packet),
  // p.bytes, p.trimmed. False, nothing changed: not trimmable (no IP, trimmed
  // already, shared bytes, headers past kHeaderWindow, ...). trimmer.cc.
  bool cut(QueuedPkt& p, const PortQos& qos) const;

  // A trimmed packet's ingress ticket `t` (admitted for the whole packet)
  // split into the part it keeps (`want` cells at most: reserved cells
  // first, then shared, then headroom: what a re-admission right after the
  // release would take) and the part given back. Sharded trimming at the
  // egress shard (SwitchNode::shard_trim); the egress part of `t` is not read.
  struct TicketSplit {
    Ticket keep;
    Ticket give;
  };
  static TicketSplit split_ticket(const Ticket& t, uint32_t want) {
    want = std::min<uint32_t>(want, t.cells);
    const uint32_t reserved = t.cells - t.ing_shared - t.ing_hdrm;
    TicketSplit s;
    s.keep.cells = static_cast<uint16_t>(want);
    const uint32_t res_keep = std::min(reserved, want);
    s.keep.ing_shared = static_cast<uint16_t>(std::min<uint32_t>(t.ing_shared, want - res_keep));
    s.keep.ing_hdrm = static_cast<uint16_t>(std::min<uint32_t>(t.ing_hdrm, want - res_keep - s.keep.ing_shared));
    s.give.cells = static_cast<uint16_t>(t.cells - s.keep.cells);
    s.give.ing_shared = static_cast<uint16_t>(t.ing_shared - s.keep.ing_shared);
    s.give.ing_hdrm = static_cast<uint16_t>(t.ing_hdrm - s.keep.ing_hdrm);
    return s;
  }

 private:
  TrimConfig cfg_;
};

}  // namespace sf::sw
