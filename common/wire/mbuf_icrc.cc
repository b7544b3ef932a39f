// Incremental ICRC over mbuf chains (IcrcAccumulator continues across segments).
#include "common/wire/mbuf_icrc.h"

#include "common/wire/frame_parser_fast.h"

namespace sf::wire {

namespace {

bool chain_has_icrc(const rte_mbuf* m, const FrameInfo& fi) {
  return m != nullptr && fi.bth != nullptr && fi.icrc_offset != 0 && fi.ip_header_bytes != 0 &&
         static_cast<uint64_t>(fi.icrc_offset) + kIcrcBytes <= m->pkt_len;
}

// Calls fn(span) for each contiguous piece of packet bytes [off, off + len).
template <typename Fn>
void for_each_piece(const rte_mbuf* m, uint32_t off, uint32_t len, Fn&& fn) {
  for (const rte_mbuf* s = m; s != nullptr && len > 0; s = s->next) {
    if (off >= s->data_len) {
      off -= s->data_len;
      continue;
    }
    const uint32_t n = std::min<uint32_t>(s->data_len - off, len);
    fn(std::span<const uint8_t>(rte_pktmbuf_mtod_offset(s, const uint8_t*, off), n));
    len -= n;
    off = 0;
  }
}

}  // namespace

FrameInfo parse_mbuf(const rte_mbuf* m, ParseOptions opt) {
  const std::span<const uint8_t> head(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len);
  FrameInfo fi;
  const bool defaults = opt.verify_ipv4_checksum && !opt.stop_at_udp;
  if (!defaults || !parse_roce_fast(head, m->pkt_len, fi)) fi = parse_frame(head, m->pkt_len, opt);
  return fi;
}

uint32_t icrc_compute_mbuf(const rte_mbuf* m, const FrameInfo& fi) {
  if (!chain_has_icrc(m, fi)) return 0;
  const IcrcLayout layout = icrc_layout(fi);
  const uint32_t masked = layout.masked_bytes();
  uint8_t scratch[kIcrcMaskedMaxBytes];
  // Contiguous pointer into the mbuf, or a copy into scratch if split.
  const auto* hdr = static_cast<const uint8_t*>(rte_pktmbuf_read(m, fi.ip_offset, masked, scratch));
  if (hdr == nullptr) return 0;
  IcrcAccumulator acc;
  if (!acc.begin(std::span<const uint8_t>(hdr, masked), layout)) return 0;
  const uint32_t start = fi.ip_offset + masked;
  for_each_piece(m, start, fi.icrc_offset - start, [&](std::span<const uint8_t> piece) { acc.update(piece); });
  return acc.value();
}

IcrcStatus icrc_verify_mbuf(const rte_mbuf* m, const FrameInfo& fi) {
  if (!chain_has_icrc(m, fi)) return IcrcStatus::kNotRoce;
  uint8_t buf[kIcrcBytes];
  const auto* p = static_cast<const uint8_t*>(rte_pktmbuf_read(m, fi.icrc_offset, kIcrcBytes, buf));
  if (p == nullptr) return IcrcStatus::kNotRoce;
  return icrc_compute_mbuf(m, fi) == load_le32(p) ? IcrcStatus::kOk : IcrcStatus::kBad;
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
