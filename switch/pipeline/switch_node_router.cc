// SwitchNode and its router interfaces (switch/fwd/router_if.h, docs/switch.md
// "Router interfaces"): the glue between the pipeline and RouterIf. The
// pipeline calls these from three marked hooks ("router_if"): stage A sends
// ARP / ND on a router port to slow_frame(), slow_frame() offers it to
// router_rx(), and forward_v4 / forward_v6 call neighbor_miss() for a
// dynamic next hop not resolved yet.
#include <rte_mbuf.h>

#include "switch/pipeline/switch_node.h"

namespace sf::sw {

bool SwitchNode::router_rx(uint16_t in, QueuedPkt& pkt) {
  rte_mbuf* m = pkt.mbuf;
  switch (rif_->on_frame(in, m, now_)) {
    case RouterIf::Verdict::kPass:
      return false;
    case RouterIf::Verdict::kReply:  // the request became the answer: back out of its port
      pkt.out_port = in;
      pkt.bytes = m->pkt_len;
      pkt.ip_version = 0;
      enqueue(pkt);
      return true;
    case RouterIf::Verdict::kConsumed:
      ++ports_[in].ctr.rx_trapped;
      credit_release_flooded(in, pkt);  // credit: its slots are free now
      rte_pktmbuf_free(m);
      return true;
    case RouterIf::Verdict::kBad:
      drop(in, m, DropCause::kMalformed);
      return true;
  }
  return false;
}

void SwitchNode::neighbor_miss(uint16_t in, QueuedPkt& pkt, const NextHop& nh) {
  if (!rif_->solicit(nh.neigh, pkt.mbuf, now_)) return drop(in, pkt.mbuf, DropCause::kNoNeighbor);
  ++ports_[in].ctr.neighbor_solicits;
  pkt.out_port = nh.port;
  pkt.bytes = pkt.mbuf->pkt_len;
  pkt.ip_version = 0;
  enqueue(pkt);
}

}  // namespace sf::sw
