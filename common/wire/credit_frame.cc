// Credit update frame builder and parser. See credit_frame.h.
#include "common/wire/credit_frame.h"

#include <cstring>

namespace sf::wire {

std::string_view to_string(CreditOpcode op) {
  switch (op) {
    case CreditOpcode::kUpdate: return "update";
  }
  return "unknown";
}

std::string_view to_string(CreditParseReason r) {
  switch (r) {
    case CreditParseReason::kOk: return "ok";
    case CreditParseReason::kTruncated: return "truncated";
    case CreditParseReason::kNotCreditFrame: return "not_credit_frame";
    case CreditParseReason::kBadVersion: return "bad_version";
    case CreditParseReason::kUnknownOpcode: return "unknown_opcode";
    case CreditParseReason::kBadCount: return "bad_count";
    case CreditParseReason::kBadVl: return "bad_vl";
    case CreditParseReason::kCount: break;
  }
  return "unknown";
}

CreditFrameInfo parse_credit_frame(std::span<const uint8_t> frame) {
  CreditFrameInfo fi;
  if (frame.size() < EthHeader::kSize + CreditUpdateHeader::kSize) {
    const auto* eth = reinterpret_cast<const EthHeader*>(frame.data());
    fi.reason = frame.size() >= EthHeader::kSize && !is_credit_frame(*eth, eth->ether_type.value())
                    ? CreditParseReason::kNotCreditFrame
                    : CreditParseReason::kTruncated;
    return fi;
  }
  const auto* eth = reinterpret_cast<const EthHeader*>(frame.data());
  if (!is_credit_frame(*eth, eth->ether_type.value())) {
    fi.reason = CreditParseReason::kNotCreditFrame;
    return fi;
  }
  const auto* h = reinterpret_cast<const CreditUpdateHeader*>(frame.data() + EthHeader::kSize);
  fi.header = h;
  if (h->version != kCreditFcVersion) {
    fi.reason = CreditParseReason::kBadVersion;
    return fi;
  }
  if (h->opcode != static_cast<uint8_t>(CreditOpcode::kUpdate)) {
    fi.reason = CreditParseReason::kUnknownOpcode;
    return fi;
  }
  if (h->count == 0 || h->count > kCreditFcMaxEntries) {
    fi.reason = CreditParseReason::kBadCount;
    return fi;
  }
  const std::size_t off = EthHeader::kSize + CreditUpdateHeader::kSize;
  if (frame.size() < off + h->count * CreditEntry::kSize) {
    fi.reason = CreditParseReason::kTruncated;
    return fi;
  }
  const auto* e = reinterpret_cast<const CreditEntry*>(frame.data() + off);
  for (std::size_t i = 0; i < h->count; ++i) {
    if (e[i].vl > kCreditFcMaxVl) {
      fi.reason = CreditParseReason::kBadVl;
      return fi;
    }
  }
  fi.entries = {e, h->count};
  fi.reason = CreditParseReason::kOk;
  return fi;
}

std::size_t build_credit_frame(std::span<uint8_t> out, const MacAddr& src, std::span<const CreditGrant> grants) {
  if (grants.empty() || grants.size() > kCreditFcMaxEntries) return 0;
  const std::size_t n = credit_frame_bytes(grants.size());
  if (out.size() < n) return 0;
  for (const CreditGrant& g : grants) {
    if (g.vl > kCreditFcMaxVl) return 0;
  }
  std::memset(out.data(), 0, n);
  auto* eth = reinterpret_cast<EthHeader*>(out.data());
  eth->dst = kCreditFcDst;
  eth->src = src;
  eth->ether_type.set(kEtherTypeCreditFc);
  auto* h = reinterpret_cast<CreditUpdateHeader*>(out.data() + EthHeader::kSize);
  h->version = kCreditFcVersion;
  h->opcode = static_cast<uint8_t>(CreditOpcode::kUpdate);
  h->count = static_cast<uint8_t>(grants.size());
  auto* e = reinterpret_cast<CreditEntry*>(out.data() + EthHeader::kSize + CreditUpdateHeader::kSize);
  for (std::size_t i = 0; i < grants.size(); ++i) {
    e[i].vl = grants[i].vl;
    e[i].granted_total.set(grants[i].granted_total);
  }
  return n;
}

}  // namespace sf::wire
