// Trimmer::cut (trimmer.h): the frame cut in its mbuf (common/wire/trim.h
// rewrites the headers; whole segments past the cut are freed).
#include "switch/pipeline/trimmer.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "common/wire/frame_parser.h"
#include "common/wire/trim.h"

namespace sf::sw {
namespace {

// Bytes of a chained frame read at once to find its headers (Ethernet, VLAN,
// two IPv6, UDP, BTH and its extended headers end well before).
constexpr uint32_t kHeaderWindow = 256;

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

// Writes `n` bytes of `src` over the start of the chain `m` (n <= pkt_len).
void write_head(rte_mbuf* m, const uint8_t* src, uint32_t n) {
  for (rte_mbuf* seg = m; n > 0 && seg != nullptr; seg = seg->next) {
    const uint32_t k = std::min<uint32_t>(n, seg->data_len);
    std::memcpy(rte_pktmbuf_mtod(seg, uint8_t*), src, k);
    src += k;
    n -= k;
  }
}

}  // namespace

bool Trimmer::cut(QueuedPkt& p, const PortQos& ingress_qos) const {
  rte_mbuf* m = p.mbuf;
  if (p.ip_version == 0 || p.trimmed || rte_mbuf_refcnt_read(m) != 1) return false;
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  wire::FrameInfo f = wire::parse_frame({data, m->data_len}, m->pkt_len);
  wire::TrimResult r;
  if (f.reason != wire::ParseReason::kNotContiguous) {
    r = wire::trim_frame({data, m->data_len}, f, cfg_.size_bytes, cfg_.dscp);
    if (!r.ok()) return false;
  } else {
    // A chain whose first segment ends inside the headers: as a switch's
    // parser reads a header window whatever the buffer cells, the first
    // kHeaderWindow bytes are parsed and rewritten in a copy and written
    // back over the chain. Headers longer than the window: not trimmable.
    std::array<uint8_t, kHeaderWindow> win;
    const uint32_t n = std::min<uint32_t>(kHeaderWindow, m->pkt_len);
    const void* src = rte_pktmbuf_read(m, 0, n, win.data());
    if (src == nullptr) return false;
    if (src != win.data()) std::memcpy(win.data(), src, n);
    f = wire::parse_frame({win.data(), n}, m->pkt_len);
    if (f.reason == wire::ParseReason::kNotContiguous) return false;
    r = wire::trim_frame({win.data(), n}, f, cfg_.size_bytes, cfg_.dscp);
    if (!r.ok()) return false;
    write_head(m, win.data(), std::min(n, wire::trim_header_end(f)));
  }
  if (r.cut) cut_mbuf(m, r.frame_bytes);
  p.queue = cfg_.dynamic_queue ? ingress_qos.tc_to_queue[ingress_qos.dscp_to_tc[cfg_.dscp]] : cfg_.queue;
  p.bytes = m->pkt_len;
  p.trimmed = true;
  return true;
}

}  // namespace sf::sw
