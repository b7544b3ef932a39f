// Trimmer::cut (trimmer.h): the frame cut in its mbuf (common/wire/trim.h
// rewrites the headers; whole segments past the cut are freed).
#include "switch/pipeline/trimmer.h"

#include <rte_mbuf.h>

#include "common/wire/frame_parser.h"
#include "common/wire/trim.h"

namespace sf::sw {
namespace {

// Shortens `m` to `keep` bytes (keep <= pkt_len), freeing whole segments past it.
void cut_mbuf(rte_mbuf* m, uint32_t keep) {
  uint32_t left = keep;
  uint16_t segs = 1;
  rte_mbuf* seg = m;
  while (left > seg->data_len && seg->next != nullptr) {
    left -= seg->data_len;
    seg = seg->next;
    ++segs;
  }
  rte_mbuf* rest = seg->next;
  seg->next = nullptr;
  seg->data_len = static_cast<uint16_t>(left);
  if (rest != nullptr) rte_pktmbuf_free(rest);
  m->pkt_len = keep;
  m->nb_segs = segs;
}

}  // namespace

bool Trimmer::cut(QueuedPkt& p, const PortQos& qos) const {
  rte_mbuf* m = p.mbuf;
  if (p.ip_version == 0 || p.trimmed || rte_mbuf_refcnt_read(m) != 1) return false;
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  const wire::FrameInfo f = wire::parse_frame({data, m->data_len}, m->pkt_len);
  const wire::TrimResult r = wire::trim_frame({data, m->data_len}, f, cfg_.size_bytes, cfg_.dscp);
  if (!r.ok()) return false;
  if (r.cut) cut_mbuf(m, r.frame_bytes);
  p.queue = cfg_.dynamic_queue ? qos.tc_to_queue[qos.dscp_to_tc[cfg_.dscp]] : cfg_.queue;
  p.bytes = m->pkt_len;
  p.trimmed = true;
  return true;
}

}  // namespace sf::sw
