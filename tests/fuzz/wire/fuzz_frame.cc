// libFuzzer target: parse_frame over arbitrary bytes (every header family,
// MRC included, also with a non-default MRC port / opcode base / trim DSCP),
// then ICRC verify and a read of every decoded field. Must never crash or read
// out of bounds (ASan), whatever the input. Also fuzzes the head/frame split,
// and asserts parse_roce_fast() == parse_frame() whenever the fast path accepts.
#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <span>

#include "common/wire/frame_parser.h"
#include "common/wire/frame_parser_fast.h"
#include "common/wire/icrc.h"

namespace {
volatile uint64_t g_sink;

void touch(const sf::wire::FrameInfo& fi) {
  uint64_t s = static_cast<uint64_t>(fi.reason) + fi.payload_bytes + fi.pad_bytes + fi.icrc_offset;
  if (fi.vlan) s += fi.vlan->vid();
  if (fi.ipv4) s += fi.ipv4->total_length.value() + fi.ipv4->dscp();
  if (fi.ipv6) s += fi.ipv6->flow_label();
  if (fi.outer_ipv6) s += fi.outer_ipv6->dst.bytes[15];
  if (fi.udp) s += fi.udp->length.value();
  if (fi.bth) s += fi.bth->psn.value() + fi.bth->dest_qp.value();
  if (fi.reth) s += fi.reth->va.value() + fi.reth->dma_length.value();
  if (fi.aeth) s += fi.aeth->msn.value();
  if (fi.immdt) s += fi.immdt->imm.value();
  if (fi.ieth) s += fi.ieth->rkey.value();
  if (fi.deth) s += fi.deth->src_qp.value();
  if (fi.atomic_eth) s += fi.atomic_eth->compare.value();
  if (fi.atomic_ack_eth) s += fi.atomic_ack_eth->orig.value();
  if (fi.pfc) s += fi.pfc->time_quanta[7].value();
  if (fi.pause) s += fi.pause->pause_quanta.value();
  const sf::wire::MrcInfo& m = fi.mrc;
  if (m.meth) s += m.meth->msg_offset.value() + m.meth->tx_ts.value();
  if (m.seth) s += m.seth->bitmap.value() + m.seth->mpr.value();
  if (m.cc) s += m.cc->service_time.value();
  if (m.neth) s += m.neth->nack_psn.value() + m.neth->ts_echo.value();
  if (m.peth) s += m.peth->tx_ts.value();
  if (m.erth) s += m.erth->tx_ts.value();
  if (m.eeth) s += m.eeth->ts_echo.value();
  // A parsed frame's payload, pad and ICRC lie inside it.
  if (fi.ok() && fi.bth != nullptr &&
      uint64_t{fi.payload_offset} + fi.payload_bytes + fi.pad_bytes > fi.frame_bytes) {
    std::abort();
  }
  g_sink = s;
}

// The fast path's contract: accepted => exactly parse_frame()'s FrameInfo.
void check_fast(std::span<const uint8_t> head, uint32_t frame_bytes) {
  sf::wire::FrameInfo fast;
  if (!sf::wire::parse_roce_fast(head, frame_bytes, fast)) return;
  touch(fast);
  if (!sf::wire::same_frame_info(fast, sf::wire::parse_frame(head, frame_bytes))) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> frame(data, size);
  const auto fi = sf::wire::parse_frame(frame);
  touch(fi);
  check_fast(frame, static_cast<uint32_t>(size));
  g_sink = static_cast<uint64_t>(sf::wire::icrc_verify(frame, fi));
  // Same bytes as a first segment of a longer (virtual) packet.
  if (size > 0) {
    const auto part = sf::wire::parse_frame(frame.first(size / 2), static_cast<uint32_t>(size + data[0]));
    touch(part);
    check_fast(frame.first(size / 2), static_cast<uint32_t>(size + data[0]));
    check_fast(frame, static_cast<uint32_t>(size / 2));
  }
  const auto nock = sf::wire::parse_frame(frame, sf::wire::ParseOptions{.verify_ipv4_checksum = false});
  touch(nock);
  sf::wire::ParseOptions alt;
  alt.mrc.udp_port = 4792;
  alt.mrc.opcode_base = 0xE0;
  alt.mrc.trimmed_dscp_mask = uint64_t{1} << 46;
  const auto mrc_alt = sf::wire::parse_frame(frame, alt);
  touch(mrc_alt);
  g_sink = static_cast<uint64_t>(sf::wire::icrc_verify(frame, mrc_alt));
  return 0;
}
