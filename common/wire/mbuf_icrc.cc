// Incremental ICRC over mbuf chains (IcrcAccumulator continues across segments).
#include "common/wire/mbuf_icrc.h"

#include <algorithm>
#include <cstring>

#include "common/wire/frame_parser_fast.h"

namespace sf::wire {

namespace {

bool chain_has_icrc(const rte_mbuf* m, const FrameInfo& fi) {
  return m != nullptr && fi.bth != nullptr && fi.icrc_offset != 0 && fi.ip_header_bytes != 0 &&
         static_cast<uint64_t>(fi.icrc_offset) + kIcrcBytes <= m->pkt_len;
}

}  // namespace

FrameInfo parse_mbuf(const rte_mbuf* m, ParseOptions opt) {
  const std::span<const uint8_t> head(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len);
  FrameInfo fi;
  const bool defaults = opt.verify_ipv4_checksum && !opt.stop_at_udp;
  // MRC frames take the fast path only under the default MrcWireConfig (a
  // port's trim code points, e.g., make a cut frame trimmed: parse_frame()).
  const MrcWireConfig d{};
  const bool mrc_default = opt.mrc.enabled && opt.mrc.udp_port == d.udp_port &&
                           opt.mrc.opcode_base == d.opcode_base && opt.mrc.trimmed_dscp_mask == 0;
  if (!defaults || !parse_roce_fast(head, m->pkt_len, fi, mrc_default)) fi = parse_frame(head, m->pkt_len, opt);
  return fi;
}

namespace {

// The ICRC of the chain per fi (chain_has_icrc), and, with trailer non-null,
// the 4 bytes at fi.icrc_offset read where the walk stops (the last segment
// it reaches, and the next one if they are split): no second walk. Returns
// false if the segments hold fewer bytes than pkt_len promises.
bool icrc_walk(const rte_mbuf* m, const FrameInfo& fi, uint32_t* icrc, uint8_t* trailer) {
  const IcrcLayout layout = icrc_layout(fi);
  const uint32_t masked = layout.masked_bytes();
  uint8_t scratch[kIcrcMaskedMaxBytes];
  // Contiguous pointer into the mbuf, or a copy into scratch if split.
  const auto* hdr = static_cast<const uint8_t*>(rte_pktmbuf_read(m, fi.ip_offset, masked, scratch));
  if (hdr == nullptr) return false;
  IcrcAccumulator acc;
  if (!acc.begin(std::span<const uint8_t>(hdr, masked), layout)) return false;
  uint32_t off = fi.ip_offset + masked;
  uint32_t len = fi.icrc_offset - off;
  const rte_mbuf* s = m;
  for (; s != nullptr; s = s->next) {
    if (off >= s->data_len) {
      off -= s->data_len;
      continue;
    }
    const uint32_t n = std::min<uint32_t>(s->data_len - off, len);
    if (n > 0) acc.update(std::span<const uint8_t>(rte_pktmbuf_mtod_offset(s, const uint8_t*, off), n));
    len -= n;
    off += n;
    if (len == 0) break;
    off = 0;
  }
  if (len != 0 || s == nullptr) return false;
  *icrc = acc.value();
  if (trailer == nullptr) return true;
  // s holds the ICRC's first byte at off, or ends at off (= data_len: the
  // ICRC starts a later segment, as after a payload segment without
  // tailroom).
  while (s != nullptr && off >= s->data_len) {
    off -= s->data_len;
    s = s->next;
  }
  if (s == nullptr) return false;
  if (s->data_len - off >= kIcrcBytes) {
    std::memcpy(trailer, rte_pktmbuf_mtod_offset(s, const uint8_t*, off), kIcrcBytes);
    return true;
  }
  std::size_t i = 0;
  for (; s != nullptr && i < kIcrcBytes; s = s->next, off = 0) {
    const auto* p = rte_pktmbuf_mtod(s, const uint8_t*);
    for (uint32_t k = off; k < s->data_len && i < kIcrcBytes; ++k) trailer[i++] = p[k];
  }
  return i == kIcrcBytes;
}

}  // namespace

uint32_t icrc_compute_mbuf(const rte_mbuf* m, const FrameInfo& fi) {
  if (!chain_has_icrc(m, fi)) return 0;
  uint32_t icrc = 0;
  return icrc_walk(m, fi, &icrc, nullptr) ? icrc : 0;
}

IcrcStatus icrc_verify_mbuf(const rte_mbuf* m, const FrameInfo& fi) {
  if (!chain_has_icrc(m, fi)) return IcrcStatus::kNotRoce;
  uint32_t icrc = 0;
  uint8_t trailer[kIcrcBytes];
  if (!icrc_walk(m, fi, &icrc, trailer)) return IcrcStatus::kNotRoce;
  return icrc == load_le32(trailer) ? IcrcStatus::kOk : IcrcStatus::kBad;
}

bool icrc_store_mbuf(rte_mbuf* m, const FrameInfo& fi) {
  if (!chain_has_icrc(m, fi)) return false;
  uint8_t bytes[kIcrcBytes];
  store_le32(bytes, icrc_compute_mbuf(m, fi));
  uint32_t off = fi.icrc_offset;
  std::size_t i = 0;
  for (rte_mbuf* s = m; s != nullptr && i < kIcrcBytes; s = s->next) {
    if (off >= s->data_len) {
      off -= s->data_len;
      continue;
    }
    auto* dst = rte_pktmbuf_mtod_offset(s, uint8_t*, off);
    for (uint32_t k = off; k < s->data_len && i < kIcrcBytes; ++k) *dst++ = bytes[i++];
    off = 0;
  }
  return i == kIcrcBytes;
}

}  // namespace sf::wire
