// Per-port credit flow-control state and its frames. See credit_port.h.
#include "common/creditfc/credit_port.h"

namespace sf {

const char* to_string(CreditRxOutcome o) {
  switch (o) {
    case CreditRxOutcome::kApplied: return "applied";
    case CreditRxOutcome::kMalformed: return "malformed";
    case CreditRxOutcome::kPartlyUnknownVl: return "partly_unknown_vl";
  }
  return "unknown";
}

CreditPort::CreditPort(const CreditFcConfig& cfg) : cfg_(cfg), tx_(cfg), rx_(cfg), arb_(cfg.vl_weight) {}

void CreditPort::on_arrival(int vl, uint32_t credits) {
  if (!rx_.on_arrival(vl, credits)) ++ctr_.rx_overrun;
}

std::size_t CreditPort::build_update(std::span<uint8_t> out, const wire::MacAddr& src) {
  const uint16_t due = rx_.updates_due();
  if (due == 0) return 0;
  std::array<wire::CreditGrant, wire::kCreditFcMaxEntries> g{};
  std::size_t n = 0;
  for (int v = 0; v < kMaxVls; ++v) {
    if ((due >> v) & 1u) g[n++] = {static_cast<uint8_t>(v), rx_.granted_total(v)};
  }
  const std::size_t bytes = wire::build_credit_frame(out, src, {g.data(), n});
  if (bytes == 0) return 0;
  rx_.sent_updates(due);
  rx_.count_update();
  ++ctr_.tx_updates;
  return bytes;
}

CreditRxOutcome CreditPort::on_frame(std::span<const uint8_t> frame, TimeNs now) {
  const wire::CreditFrameInfo fi = wire::parse_credit_frame(frame);
  if (!fi.ok()) {
    ++ctr_.rx_malformed;
    ++ctr_.rx_malformed_by_reason[static_cast<std::size_t>(fi.reason)];
    return CreditRxOutcome::kMalformed;
  }
  ++ctr_.rx_updates;
  bool unknown = false;
  for (const wire::CreditEntry& e : fi.entries) {
    if (!cfg_.vl_valid(e.vl)) {
      ++ctr_.rx_unknown_vl;
      unknown = true;
      continue;
    }
    tx_.on_update(e.vl, e.granted_total.value(), now);
  }
  return unknown ? CreditRxOutcome::kPartlyUnknownVl : CreditRxOutcome::kApplied;
}

CreditCounters CreditPort::counters() const {
  CreditCounters c = ctr_;
  const CreditStallStats& s = tx_.total_stalls();
  c.tx_without_credit = tx_.sent_without_credit();
  c.credit_stalls = s.stalls;
  c.stalled_time = s.stalled_time;
  c.stall_histogram = s.histogram;
  return c;
}

}  // namespace sf
