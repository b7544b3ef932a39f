// The one congestion-control interface of a QP (STYLE G5): a std::variant whose
// alternative is the algorithm's state, visited per CNP / TX burst / timer and,
// for the ACK-driven algorithms, per ACK / SACK / NACK and RTO.
// Adding an algorithm: write a class with the members of the RateController
// concept below (and of AckController if it reacts to ACKs), add it to the
// variant, add a CcAlgorithm value with its name, and a case in
// make_congestion_control(). Nothing else changes for the QP.
// docs/cc.md "Interface" is the integrator's guide.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "common/time.h"
#include "nic/cc/bbr.h"
#include "nic/cc/cc_event.h"
#include "nic/cc/dcqcn.h"
#include "nic/cc/fixed_rate.h"
#include "nic/cc/hpcc.h"
#include "nic/cc/nscc.h"
#include "nic/cc/swift.h"

namespace sf::nic {

// What every alternative provides (the rate visitors below call exactly these).
template <typename T>
concept RateController = requires(T& t, const T& ct, uint64_t bytes, TimeNs now) {
  t.on_cnp(now);
  t.on_tx_bytes(bytes, now);
  t.advance(now);
  { ct.next_deadline() } -> std::same_as<TimeNs>;
  { ct.rate() } -> std::same_as<BitRate>;
};

// What the ACK-driven alternatives add: ACK / SACK / NACK feedback, the
// retransmission timeout, and a window (bytes in flight). An alternative
// without these (FixedRate, Dcqcn) ignores ACKs and RTOs and has no window
// (kNoWindow): the ACK visitors skip it at compile time.
template <typename T>
concept AckController = RateController<T> && requires(T& t, const T& ct, const AckEvent& a, TimeNs now) {
  t.on_ack(a, now);
  t.on_rto(now);
  { ct.window_bytes() } -> std::same_as<uint64_t>;
};

using CongestionControl = std::variant<FixedRate, Dcqcn, Swift, Bbr, Hpcc, Nscc>;
static_assert(RateController<FixedRate>);
static_assert(RateController<Dcqcn>);
static_assert(!AckController<FixedRate> && !AckController<Dcqcn>);
static_assert(AckController<Swift>);
static_assert(AckController<Bbr>);
static_assert(AckController<Hpcc>);
static_assert(AckController<Nscc>);

enum class CcAlgorithm : uint8_t {
  kNone,   // FixedRate at line rate
  kDcqcn,  // Dcqcn with a DcqcnParamSet
  kSwift,  // Swift (delay, fabric + endpoint windows)
  kBbr,    // BBR-style (RTprop, BtlBw, pacing)
  kHpcc,   // HPCC (INT)
  kNscc,   // NSCC (UET, for MRC QPs)
};
std::string_view to_string(CcAlgorithm a);
std::optional<CcAlgorithm> cc_algorithm_from_string(std::string_view s);
// True for the algorithms that need on_ack / on_rto (AckController).
bool cc_needs_acks(CcAlgorithm a);
// Why `a` cannot run on a QP of this transport (nullptr: it can). RC runs
// all but nscc; MRC runs nscc or none (docs/cc.md "MRC integration": its
// SACKs carry what NSCC reads; no CNPs for DCQCN, no INT echo for HPCC, no
// per-packet delivery stamps for BBR, no turnaround split for Swift).
const char* cc_refusal(CcAlgorithm a, bool mrc);

// Which events the caller delivers. A choice is honoured or refused, never
// accepted and ignored: a caller that does not call cc_on_ack() (today's RC
// QP: CNP, TX bytes and timers only) parses with kRateOnly and so refuses
// swift / bbr / hpcc / nscc; one that does parses with kAckDriven.
enum class CcEvents : uint8_t { kRateOnly, kAckDriven };

// A choice as written in configs and on the command line:
//   "none"          no congestion control
//   "dcqcn"         DCQCN with the NVIDIA firmware parameters (what NICs run)
//   "dcqcn-nvidia"  the same, spelled out
//   "dcqcn-paper"   DCQCN with the SIGCOMM'15 paper parameters
//   "swift", "bbr", "hpcc", "nscc"   (CcEvents::kAckDriven only)
// The parameter set is a separate enum (DcqcnParamSet), ignored but for kDcqcn.
// The parameters of an ACK-driven choice (nic.json "cc_params", docs/cc.md);
// monostate = the algorithm's defaults. Must match `algorithm` (the config
// layer builds them together; make_congestion_control ignores a mismatch).
using CcParams = std::variant<std::monostate, SwiftParams, BbrParams, HpccParams, NsccParams>;
struct CcChoice {
  CcAlgorithm algorithm = CcAlgorithm::kNone;
  DcqcnParamSet dcqcn_params = DcqcnParamSet::kNvidia;
  CcParams params{};
  bool operator==(const CcChoice&) const = default;
};
// Canonical spelling: "none", "dcqcn-paper", "dcqcn-nvidia", "swift", "bbr", "hpcc", "nscc".
std::string_view to_string(const CcChoice& c);
std::optional<CcChoice> cc_choice_from_string(std::string_view s, CcEvents events = CcEvents::kRateOnly);
// The accepted spellings, for help texts and error messages.
inline constexpr std::string_view kCcChoiceNames = "none, dcqcn, dcqcn-nvidia, dcqcn-paper";
inline constexpr std::string_view kCcChoiceNamesAckDriven =
    "none, dcqcn, dcqcn-nvidia, dcqcn-paper, swift, bbr, hpcc, nscc";

// Setup-time construction (not per packet). The ACK-driven algorithms get
// their default parameters (each header cites its source) at `line_rate`.
CongestionControl make_congestion_control(const CcChoice& c, BitRate line_rate);
inline CongestionControl make_congestion_control(const DcqcnParams& p, BitRate line_rate) {
  return CongestionControl(std::in_place_type<Dcqcn>, p, line_rate);
}
// With explicit parameters; each must validate() (checked by the caller, who
// reports the bad field with its config path).
inline CongestionControl make_congestion_control(const SwiftParams& p, BitRate line_rate) {
  return CongestionControl(std::in_place_type<Swift>, p, line_rate);
}
inline CongestionControl make_congestion_control(const BbrParams& p, BitRate line_rate) {
  return CongestionControl(std::in_place_type<Bbr>, p, line_rate);
}
inline CongestionControl make_congestion_control(const HpccParams& p, BitRate line_rate) {
  return CongestionControl(std::in_place_type<Hpcc>, p, line_rate);
}
inline CongestionControl make_congestion_control(const NsccParams& p, BitRate line_rate) {
  return CongestionControl(std::in_place_type<Nscc>, p, line_rate);
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
// An ACK / SACK / NACK for this QP (docs/cc.md "Interface" says how to fill it).
inline void cc_on_ack(CongestionControl& cc, const AckEvent& ev, TimeNs now) {
  std::visit(
      [&ev, now](auto& a) {
        if constexpr (AckController<std::remove_cvref_t<decltype(a)>>) a.on_ack(ev, now);
      },
      cc);
}
// The QP's retransmission timer fired.
inline void cc_on_rto(CongestionControl& cc, TimeNs now) {
  std::visit(
      [now](auto& a) {
        if constexpr (AckController<std::remove_cvref_t<decltype(a)>>) a.on_rto(now);
      },
      cc);
}
// Bytes the QP may have in flight; kNoWindow when the algorithm sets none.
inline uint64_t cc_window_bytes(const CongestionControl& cc) {
  return std::visit(
      [](const auto& a) -> uint64_t {
        if constexpr (AckController<std::remove_cvref_t<decltype(a)>>) {
          return a.window_bytes();
        } else {
          return kNoWindow;
        }
      },
      cc);
}

}  // namespace sf::nic
