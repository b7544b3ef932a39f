// Names and construction of the congestion-control alternatives.
#include "nic/cc/congestion_control.h"

namespace sf::nic {

std::string_view to_string(AckKind k) {
  switch (k) {
    case AckKind::kAck: return "ack";
    case AckKind::kNackTrim: return "nack_trim";
    case AckKind::kNackLoss: return "nack_loss";
  }
  return "?";
}

std::string_view to_string(CcAlgorithm a) {
  switch (a) {
    case CcAlgorithm::kNone: return "none";
    case CcAlgorithm::kDcqcn: return "dcqcn";
    case CcAlgorithm::kSwift: return "swift";
    case CcAlgorithm::kBbr: return "bbr";
    case CcAlgorithm::kHpcc: return "hpcc";
    case CcAlgorithm::kNscc: return "nscc";
  }
  return "?";
}

std::optional<CcAlgorithm> cc_algorithm_from_string(std::string_view s) {
  if (s == "none") return CcAlgorithm::kNone;
  if (s == "dcqcn") return CcAlgorithm::kDcqcn;
  if (s == "swift") return CcAlgorithm::kSwift;
  if (s == "bbr") return CcAlgorithm::kBbr;
  if (s == "hpcc") return CcAlgorithm::kHpcc;
  if (s == "nscc") return CcAlgorithm::kNscc;
  return std::nullopt;
}

const char* cc_refusal(CcAlgorithm a, bool mrc) {
  if (!mrc) {
    return a == CcAlgorithm::kNscc ? "nscc runs on MRC QPs only (UET NSCC needs per-EV ECN and SACKs), not on RC"
                                   : nullptr;
  }
  if (a == CcAlgorithm::kNone || a == CcAlgorithm::kNscc) return nullptr;
  return "an MRC QP runs nscc or none (dcqcn, swift, bbr and hpcc run on RC QPs)";
}

bool cc_needs_acks(CcAlgorithm a) {
  return a == CcAlgorithm::kSwift || a == CcAlgorithm::kBbr || a == CcAlgorithm::kHpcc || a == CcAlgorithm::kNscc;
}

std::string_view to_string(const CcChoice& c) {
  switch (c.algorithm) {
    case CcAlgorithm::kDcqcn:
      return c.dcqcn_params == DcqcnParamSet::kPaper ? "dcqcn-paper" : "dcqcn-nvidia";
    case CcAlgorithm::kNone:
    case CcAlgorithm::kSwift:
    case CcAlgorithm::kBbr:
    case CcAlgorithm::kHpcc:
    case CcAlgorithm::kNscc:
      return to_string(c.algorithm);
  }
  return "?";
}

std::optional<CcChoice> cc_choice_from_string(std::string_view s, CcEvents events) {
  if (s == "dcqcn" || s == "dcqcn-nvidia") return CcChoice{CcAlgorithm::kDcqcn, DcqcnParamSet::kNvidia};
  if (s == "dcqcn-paper") return CcChoice{CcAlgorithm::kDcqcn, DcqcnParamSet::kPaper};
  const auto a = cc_algorithm_from_string(s);
  if (!a || *a == CcAlgorithm::kDcqcn) return std::nullopt;
  if (cc_needs_acks(*a) && events != CcEvents::kAckDriven) return std::nullopt;
  return CcChoice{*a, DcqcnParamSet::kNvidia};
}

namespace {
template <typename P>
P params_or_default(const CcChoice& c) {
  const P* p = std::get_if<P>(&c.params);
  return p != nullptr ? *p : P{};
}
}  // namespace

CongestionControl make_congestion_control(const CcChoice& c, BitRate line_rate) {
  switch (c.algorithm) {
    case CcAlgorithm::kDcqcn:
      return make_congestion_control(DcqcnParams::from_set(c.dcqcn_params, line_rate), line_rate);
    case CcAlgorithm::kSwift: return make_congestion_control(params_or_default<SwiftParams>(c), line_rate);
    case CcAlgorithm::kBbr: return make_congestion_control(params_or_default<BbrParams>(c), line_rate);
    case CcAlgorithm::kHpcc: return make_congestion_control(params_or_default<HpccParams>(c), line_rate);
    case CcAlgorithm::kNscc: return make_congestion_control(params_or_default<NsccParams>(c), line_rate);
    case CcAlgorithm::kNone:
      break;
  }
  return CongestionControl(std::in_place_type<FixedRate>, line_rate);
}

CcAlgorithm cc_algorithm(const CongestionControl& cc) {
  struct Names {
    CcAlgorithm operator()(const FixedRate&) const { return CcAlgorithm::kNone; }
    CcAlgorithm operator()(const Dcqcn&) const { return CcAlgorithm::kDcqcn; }
    CcAlgorithm operator()(const Swift&) const { return CcAlgorithm::kSwift; }
    CcAlgorithm operator()(const Bbr&) const { return CcAlgorithm::kBbr; }
    CcAlgorithm operator()(const Hpcc&) const { return CcAlgorithm::kHpcc; }
    CcAlgorithm operator()(const Nscc&) const { return CcAlgorithm::kNscc; }
  };
  return std::visit(Names{}, cc);
}

}  // namespace sf::nic
