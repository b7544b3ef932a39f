// The one congestion-control interface of a QP (STYLE G5): a std::variant whose
// alternative is the algorithm's state, visited per CNP / TX burst / timer.
// Adding an algorithm (Swift, HPCC, ...): write a class with the members of
// the RateController concept below, add it to the variant, add a CcAlgorithm
// value with its name, and a case in make_congestion_control(). Nothing else
// changes for the QP.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "common/time.h"
#include "nic/cc/dcqcn.h"
#include "nic/cc/fixed_rate.h"

namespace sf::nic {

// What every alternative provides (the visitors below call exactly these).
template <typename T>
concept RateController = requires(T& t, const T& ct, uint64_t bytes, TimeNs now) {
  t.on_cnp(now);
  t.on_tx_bytes(bytes, now);
  t.advance(now);
  { ct.next_deadline() } -> std::same_as<TimeNs>;
  { ct.rate() } -> std::same_as<BitRate>;
};

using CongestionControl = std::variant<FixedRate, Dcqcn>;
static_assert(RateController<FixedRate>);
static_assert(RateController<Dcqcn>);

enum class CcAlgorithm : uint8_t {
  kNone,   // FixedRate at line rate
  kDcqcn,  // Dcqcn with a DcqcnParamSet
};
std::string_view to_string(CcAlgorithm a);
std::optional<CcAlgorithm> cc_algorithm_from_string(std::string_view s);

// A choice as written in configs and on the command line:
//   "none"          no congestion control
//   "dcqcn"         DCQCN with the NVIDIA firmware parameters (what NICs run)
//   "dcqcn-nvidia"  the same, spelled out
//   "dcqcn-paper"   DCQCN with the SIGCOMM'15 paper parameters
// The parameter set is a separate enum (DcqcnParamSet), ignored for kNone.
struct CcChoice {
  CcAlgorithm algorithm = CcAlgorithm::kNone;
  DcqcnParamSet dcqcn_params = DcqcnParamSet::kNvidia;
  bool operator==(const CcChoice&) const = default;
};
// Canonical spelling: "none", "dcqcn-paper" or "dcqcn-nvidia".
std::string_view to_string(const CcChoice& c);
std::optional<CcChoice> cc_choice_from_string(std::string_view s);
// The accepted spellings, for help texts and error messages.
inline constexpr std::string_view kCcChoiceNames = "none, dcqcn, dcqcn-nvidia, dcqcn-paper";

// Setup-time construction (not per packet).
CongestionControl make_congestion_control(const CcChoice& c, BitRate line_rate);
inline CongestionControl make_congestion_control(const DcqcnParams& p, BitRate line_rate) {
  return CongestionControl(std::in_place_type<Dcqcn>, p, line_rate);
}

CcAlgorithm cc_algorithm(const CongestionControl& cc);

// Visitors: one std::visit per event, no virtual call, no allocation.
inline void cc_on_cnp(CongestionControl& cc, TimeNs now) {
  std::visit([now](auto& a) { a.on_cnp(now); }, cc);
}
inline void cc_on_tx_bytes(CongestionControl& cc, uint64_t bytes, TimeNs now) {
  std::visit([bytes, now](auto& a) { a.on_tx_bytes(bytes, now); }, cc);
}
inline void cc_advance(CongestionControl& cc, TimeNs now) {
  std::visit([now](auto& a) { a.advance(now); }, cc);
}
inline TimeNs cc_next_deadline(const CongestionControl& cc) {
  return std::visit([](const auto& a) { return a.next_deadline(); }, cc);
}
inline BitRate cc_rate(const CongestionControl& cc) {
  return std::visit([](const auto& a) { return a.rate(); }, cc);
}

}  // namespace sf::nic
