// Names and construction of the congestion-control alternatives.
#include "nic/cc/congestion_control.h"

namespace sf::nic {

std::string_view to_string(CcAlgorithm a) {
  switch (a) {
    case CcAlgorithm::kNone: return "none";
    case CcAlgorithm::kDcqcn: return "dcqcn";
  }
  return "?";
}

std::optional<CcAlgorithm> cc_algorithm_from_string(std::string_view s) {
  if (s == "none") return CcAlgorithm::kNone;
  if (s == "dcqcn") return CcAlgorithm::kDcqcn;
  return std::nullopt;
}

std::string_view to_string(const CcChoice& c) {
  switch (c.algorithm) {
    case CcAlgorithm::kNone: return "none";
    case CcAlgorithm::kDcqcn:
      return c.dcqcn_params == DcqcnParamSet::kPaper ? "dcqcn-paper" : "dcqcn-nvidia";
  }
  return "?";
}

std::optional<CcChoice> cc_choice_from_string(std::string_view s) {
  if (s == "none") return CcChoice{CcAlgorithm::kNone, DcqcnParamSet::kNvidia};
  if (s == "dcqcn" || s == "dcqcn-nvidia") return CcChoice{CcAlgorithm::kDcqcn, DcqcnParamSet::kNvidia};
  if (s == "dcqcn-paper") return CcChoice{CcAlgorithm::kDcqcn, DcqcnParamSet::kPaper};
  return std::nullopt;
}

CongestionControl make_congestion_control(const CcChoice& c, BitRate line_rate) {
  switch (c.algorithm) {
    case CcAlgorithm::kDcqcn:
      return make_congestion_control(DcqcnParams::from_set(c.dcqcn_params, line_rate), line_rate);
    case CcAlgorithm::kNone:
      break;
  }
  return CongestionControl(std::in_place_type<FixedRate>, line_rate);
}

CcAlgorithm cc_algorithm(const CongestionControl& cc) {
  struct Names {
    CcAlgorithm operator()(const FixedRate&) const { return CcAlgorithm::kNone; }
    CcAlgorithm operator()(const Dcqcn&) const { return CcAlgorithm::kDcqcn; }
  };
  return std::visit(Names{}, cc);
}

}  // namespace sf::nic
