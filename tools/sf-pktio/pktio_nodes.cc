// sf-pktio nodes (see pktio_nodes.h for the frame format).
#include "tools/sf-pktio/pktio_nodes.h"

#include <rte_byteorder.h>
#include <rte_ether.h>

#include <algorithm>
#include <cstring>

static_assert(sf::pktio::kOffPayload == 34);

namespace sf::pktio {
namespace {

constexpr std::array<uint8_t, 6> kDstMac{0x02, 0, 0, 0, 0, 0x02};
constexpr std::array<uint8_t, 6> kSrcMac{0x02, 0, 0, 0, 0, 0x01};

// The payload pattern is 256-periodic: byte k of the table is uint8(k), so a
// payload run starting at value v is a memcpy from kPattern + v.
constexpr std::array<uint8_t, 512> make_pattern() {
  std::array<uint8_t, 512> t{};
  for (size_t k = 0; k < t.size(); ++k) t[k] = static_cast<uint8_t>(k);
  return t;
}
constexpr std::array<uint8_t, 512> kPattern = make_pattern();

// Sum of the n pattern bytes that start at value v.
constexpr uint32_t pattern_sum(uint32_t v, uint32_t n) {
  const uint32_t full = n / 256, r = n % 256;
  uint32_t sum = full * (255 * 256 / 2);
  const uint32_t first = std::min(r, 256 - v);  // v .. v+first-1, no wrap
  sum += first * v + first * (first - 1) / 2;
  const uint32_t rest = r - first;               // 0 .. rest-1 after the wrap
  if (rest > 0) sum += rest * (rest - 1) / 2;
  return sum;
}

// Payload bytes [index, index + n) of frame `seq`; returns their sum.
uint32_t fill_payload(uint8_t* dst, uint32_t n, uint64_t seq, uint32_t index) {
  const uint32_t v = static_cast<uint8_t>(seq + index);
  for (uint32_t done = 0; done < n;) {
    const uint32_t start = (v + done) & 0xff;
    const uint32_t chunk = std::min(n - done, 256u);
    std::memcpy(dst + done, kPattern.data() + start, chunk);
    done += chunk;
  }
  return pattern_sum(v, n);
}

void write_header(uint8_t* buf, uint32_t len, uint64_t seq) {
  std::memcpy(buf, kDstMac.data(), 6);
  std::memcpy(buf + 6, kSrcMac.data(), 6);
  const uint16_t et = rte_cpu_to_be_16(kEtherType);
  std::memcpy(buf + 12, &et, 2);
  std::memcpy(buf + kOffMagic, &kMagic, 4);
  std::memcpy(buf + kOffSeq, &seq, 8);
  std::memcpy(buf + kOffLen, &len, 4);
}

}  // namespace

void write_frame(uint8_t* buf, uint32_t len, uint64_t seq) {
  write_header(buf, len, seq);
  const uint32_t sum = fill_payload(buf + kOffPayload, len - kOffPayload, seq, 0);
  std::memcpy(buf + kOffSum, &sum, 4);
}

FrameCheck check_frame(const rte_mbuf* m, uint64_t* seq) {
  std::array<uint8_t, kOffPayload> hdr_copy;
  const auto* hdr = static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, kOffPayload, hdr_copy.data()));
  if (hdr == nullptr) return FrameCheck::kForeign;
  uint16_t et = 0;
  uint32_t magic = 0, len = 0, sum = 0;
  std::memcpy(&et, hdr + 12, 2);
  std::memcpy(&magic, hdr + kOffMagic, 4);
  if (rte_be_to_cpu_16(et) != kEtherType || magic != kMagic) return FrameCheck::kForeign;
  std::memcpy(seq, hdr + kOffSeq, 8);
  std::memcpy(&len, hdr + kOffLen, 4);
  std::memcpy(&sum, hdr + kOffSum, 4);
  if (len != rte_pktmbuf_pkt_len(m) || len < kOffPayload) return FrameCheck::kBadLength;
  // Walk the segments: payload byte i must be uint8(seq + i).
  uint32_t off = 0;  // offset in the frame of the current segment's first byte
  for (const rte_mbuf* s = m; s != nullptr; s = s->next) {
    const auto* d = rte_pktmbuf_mtod(s, const uint8_t*);
    const uint32_t n = s->data_len;
    uint32_t i = off < kOffPayload ? std::min(kOffPayload - off, n) : 0;
    while (i < n) {
      const uint32_t start = static_cast<uint8_t>(*seq + (off + i - kOffPayload));
      const uint32_t chunk = std::min(n - i, 256u);
      if (std::memcmp(d + i, kPattern.data() + start, chunk) != 0) return FrameCheck::kBadPayload;
      i += chunk;
    }
    off += n;
  }
  return sum == pattern_sum(static_cast<uint8_t>(*seq), len - kOffPayload) ? FrameCheck::kOk : FrameCheck::kBadPayload;
}

// ---- GenNode ----

GenNode::GenNode(uint16_t ports, rte_mempool* pool, uint32_t frame_bytes, uint64_t count)
    : ports_(std::min<uint16_t>(ports, kMaxPorts)),
      pool_(pool),
      frame_bytes_(std::max(frame_bytes, kMinFrameBytes)),
      count_(count) {}

void GenNode::receive(PortId, std::span<rte_mbuf*> pkts, TimeNs) {
  rx_ignored_ += pkts.size();
  rte_pktmbuf_free_bulk(pkts.data(), static_cast<unsigned>(pkts.size()));
}

rte_mbuf* GenNode::build(uint64_t seq) {
  const uint32_t room = rte_pktmbuf_data_room_size(pool_) - RTE_PKTMBUF_HEADROOM;
  rte_mbuf* head = rte_pktmbuf_alloc(pool_);
  if (head == nullptr) return nullptr;
  if (frame_bytes_ <= room) {
    auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(head, static_cast<uint16_t>(frame_bytes_)));
    write_frame(d, frame_bytes_, seq);
    return head;
  }
  // Chained frame: header and first payload bytes in the head segment.
  auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(head, static_cast<uint16_t>(room)));
  write_header(d, frame_bytes_, seq);
  uint32_t sum = fill_payload(d + kOffPayload, room - kOffPayload, seq, 0);
  uint32_t done = room;
  rte_mbuf* tail = head;
  while (done < frame_bytes_) {
    rte_mbuf* s = rte_pktmbuf_alloc(pool_);
    if (s == nullptr) {
      rte_pktmbuf_free(head);
      return nullptr;
    }
    const uint32_t n = std::min(room, frame_bytes_ - done);
    auto* sd = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(s, static_cast<uint16_t>(n)));
    sum += fill_payload(sd, n, seq, done - kOffPayload);
    tail->next = s;
    tail = s;
    head->nb_segs++;
    head->pkt_len += n;
    done += n;
  }
  std::memcpy(d + kOffSum, &sum, 4);
  return head;
}

uint16_t GenNode::transmit(PortId port, std::span<rte_mbuf*> out, TimeNs) {
  uint16_t n = 0;
  uint64_t& seq = next_seq_[port];
  while (n < out.size() && (count_ == 0 || seq < count_)) {
    rte_mbuf* m = build(seq);
    if (m == nullptr) {
      ++alloc_failures_;
      break;
    }
    out[n++] = m;
    ++seq;
  }
  return n;
}

bool GenNode::done() const {
  if (count_ == 0) return false;
  for (uint16_t p = 0; p < ports_; ++p) {
    if (next_seq_[p] < count_) return false;
  }
  return true;
}

uint64_t GenNode::generated() const {
  uint64_t t = 0;
  for (uint16_t p = 0; p < ports_; ++p) t += next_seq_[p];
  return t;
}

// ---- SinkNode ----

void SinkNode::receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) {
  PortResult& r = res_[port];
  if (r.first_rx == TimeNs::max()) r.first_rx = now;
  r.last_rx = now;
  for (rte_mbuf* m : pkts) {
    ++r.rx_pkts;
    r.rx_bytes += rte_pktmbuf_pkt_len(m);
    r.rx_wire_bytes += wire_bytes(rte_pktmbuf_pkt_len(m));
    if (m->nb_segs > 1) ++r.multi_seg;
    r.max_segs = std::max<uint64_t>(r.max_segs, m->nb_segs);
    uint64_t seq = 0;
    switch (check_frame(m, &seq)) {
      case FrameCheck::kForeign:
        ++r.foreign;
        if (flow_base_ != 0) count_flow(m, now);
        break;
      case FrameCheck::kBadLength:
      case FrameCheck::kBadPayload:
        ++r.payload_errors;
        [[fallthrough]];
      case FrameCheck::kOk:
        if (seq > r.next_seq) r.lost += seq - r.next_seq;
        if (seq < r.next_seq) {
          ++r.reordered;
        } else {
          r.next_seq = seq + 1;
        }
        break;
    }
  }
  rte_pktmbuf_free_bulk(pkts.data(), static_cast<unsigned>(pkts.size()));
}

void SinkNode::count_flow(const rte_mbuf* m, TimeNs now) {
  constexpr uint32_t kOffEtherType = 12, kOffIp = 14, kOffIpProto = kOffIp + 9;
  constexpr uint32_t kHdrBytes = kOffIp + 60 + 2;  // Ethernet + the longest IPv4 header + UDP sport
  std::array<uint8_t, kHdrBytes> copy;
  const uint32_t len = std::min<uint32_t>(kHdrBytes, rte_pktmbuf_pkt_len(m));
  const auto* h = static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, len, copy.data()));
  uint32_t idx = kMaxFlows;
  if (h != nullptr && len >= kOffIp + 20 && h[kOffEtherType] == 0x08 && h[kOffEtherType + 1] == 0x00 &&
      h[kOffIpProto] == 17) {
    const uint32_t ihl = (h[kOffIp] & 0x0Fu) * 4;
    if (ihl >= 20 && kOffIp + ihl + 2 <= len) {
      const uint32_t sport = (uint32_t{h[kOffIp + ihl]} << 8) | h[kOffIp + ihl + 1];
      if (sport >= flow_base_) idx = sport - flow_base_;
    }
  }
  if (idx >= kMaxFlows) {
    ++flow_other_;
    return;
  }
  FlowResult& f = flows_[idx];
  ++f.pkts;
  f.bytes += rte_pktmbuf_pkt_len(m);
  if (f.first_rx == TimeNs::max()) f.first_rx = now;
  f.last_rx = now;
}

uint64_t SinkNode::total_rx() const {
  uint64_t t = 0;
  for (uint16_t p = 0; p < ports_; ++p) t += res_[p].rx_pkts;
  return t;
}

TimeNs SinkNode::last_rx() const {
  TimeNs t = TimeNs::zero();
  for (uint16_t p = 0; p < ports_; ++p) t = std::max(t, res_[p].last_rx);
  return t;
}

// ---- FwdNode ----

FwdNode::~FwdNode() {
  for (auto& q : q_) {
    for (; q.head != q.tail; ++q.head) rte_pktmbuf_free(q.slots[q.head % kQueuePkts]);
  }
}

void FwdNode::receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs) {
  const PortId out = ports_ == 2 ? static_cast<PortId>(1 - port) : port;
  Queue& q = q_[out];
  for (rte_mbuf* m : pkts) {
    if (q.tail - q.head == kQueuePkts) {
      rte_pktmbuf_free(m);
      ++drops_;
      continue;
    }
    if (swap_) {
      auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
      std::swap(eth->src_addr, eth->dst_addr);
    }
    q.slots[q.tail++ % kQueuePkts] = m;
  }
}

uint16_t FwdNode::transmit(PortId port, std::span<rte_mbuf*> out, TimeNs) {
  Queue& q = q_[port];
  uint16_t n = 0;
  while (n < out.size() && q.head != q.tail) out[n++] = q.slots[q.head++ % kQueuePkts];
  forwarded_ += n;
  return n;
}

uint32_t FwdNode::queued() const {
  uint32_t t = 0;
  for (const auto& q : q_) t += q.tail - q.head;
  return t;
}

}  // namespace sf::pktio
