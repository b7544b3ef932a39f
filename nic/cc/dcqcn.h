// DCQCN reaction point (RP) for one QP: the rate machine of shared/reference/cc.md
// section 1 (paper version 1.4, NVIDIA firmware version 1.5), one state machine
// with both parameter sets. Pure logic: no clock reads, no RNG, no allocation.
// The owner (the QP) reports CNPs and transmitted bytes, calls advance() at
// next_deadline(), and paces at rate(). One object belongs to the lcore that
// owns the QP.
//
// Units: rates are BitRate (bit/s, integer), times TimeNs, alpha a real in [0, 1].
// `now` never goes backwards across calls on one object.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/time.h"

namespace sf::nic {

// How alpha moves (cc.md 1.4 vs 1.5).
enum class DcqcnAlphaUpdate : uint8_t {
  // Paper: on each CNP alpha = (1-g)*alpha + g and the alpha timer restarts;
  // each alpha_period without a CNP alpha = (1-g)*alpha.
  kOnCnp,
  // Firmware: on a fixed period (dce_tcp_rtt) measured from the first CNP,
  // alpha goes up if any CNP arrived in the period, down otherwise.
  kPeriodic,
};
std::string_view to_string(DcqcnAlphaUpdate a);

// Size of a hyper-increase step (cc.md 1.4 note b).
enum class DcqcnHyperStep : uint8_t {
  kLinear,    // paper / QCN: Rt += i * R_HAI, i = min(T, BC) - F
  kConstant,  // firmware: Rt += R_HAI per hyper event
};
std::string_view to_string(DcqcnHyperStep h);

// Whether an increase event bumps its stage counter before or after the
// regime is chosen (cc.md 1.4 note a). With kBeforeIncrease (paper text:
// "T += 1; increase()") the F-th event is the first additive one; with
// kAfterIncrease (firmware: "increase(); time_stage += 1") the (F+1)-th is.
enum class DcqcnStageCount : uint8_t { kBeforeIncrease, kAfterIncrease };
std::string_view to_string(DcqcnStageCount s);

// Named parameter sets (factories below).
enum class DcqcnParamSet : uint8_t { kPaper, kNvidia };
std::string_view to_string(DcqcnParamSet s);
std::optional<DcqcnParamSet> dcqcn_param_set_from_string(std::string_view s);

// Every DCQCN knob, with its paper symbol / NVIDIA name. See docs/cc.md for the
// table of both sets.
struct DcqcnParams {
  // --- RP: rate bounds ---
  BitRate max_rate{0};  // rpg_max_rate; 0 = the line rate given to Dcqcn
  BitRate min_rate{};   // rpg_min_rate: floor of every cut

  // --- RP: alpha ---
  double g = 0;              // alpha gain (paper g; firmware (1024 - dce_tcp_g) / 1024)
  double initial_alpha = 1;  // alpha at the QP's first CNP (initial_alpha_value / 1024)
  DcqcnAlphaUpdate alpha_update = DcqcnAlphaUpdate::kOnCnp;
  TimeNs alpha_period;       // paper K (alpha timer) / firmware dce_tcp_rtt

  // --- RP: decrease ---
  // 0: cut on every CNP at once (paper). >0: rate_reduce_monitor_period, at most
  // one cut per period, at the end of a period in which a CNP arrived.
  TimeNs rate_reduce_period;
  // rpg_min_dec_fac: one cut leaves at least this percentage of the old rate
  // (0 = no bound beyond alpha/2).
  uint32_t min_dec_factor_pct = 0;
  // Rt := Rc at a cut always (paper behaviour; firmware clamp_tgt_rate) ...
  bool clamp_tgt_rate = true;
  // ... or when a timer increase happened since the last cut
  // (clamp_tgt_rate_after_time_inc). A byte-counter increase always clamps (cc.md 1.5).
  bool clamp_tgt_rate_after_time_inc = false;
  // rate_to_set_on_first_cnp: Rc = Rt = this at the QP's first CNP; 0 = not used.
  BitRate rate_to_set_on_first_cnp{0};

  // --- RP: increase ---
  TimeNs rate_increase_period;   // paper Ti / rpg_time_reset (restarted at each cut)
  uint64_t byte_counter_bytes = 0;  // paper B / 64 * rpg_byte_reset; 0 = no byte counter
  uint32_t fast_recovery_steps = 0;  // F / rpg_threshold
  BitRate ai_rate{};   // R_AI / rpg_ai_rate
  BitRate hai_rate{};  // R_HAI / rpg_hai_rate
  DcqcnHyperStep hyper_step = DcqcnHyperStep::kLinear;
  DcqcnStageCount stage_count = DcqcnStageCount::kBeforeIncrease;

  // --- NP (used by the receiving side, CnpLimiter) ---
  TimeNs cnp_interval;   // paper N / min_time_between_cnps
  uint8_t cnp_dscp = 48;  // cnp_dscp
  uint8_t cnp_pcp = 6;    // cnp_802p_prio

  // SIGCOMM'15 paper set, cc.md 1.4 table, rates scaled to `line` as in the
  // paper's 40 G setting (R_AI 40 Mb/s at 40 G; R_HAI 200 Mb/s at 40 G, the
  // authors' sample config).
  static DcqcnParams paper(BitRate line);
  // NVIDIA ConnectX firmware defaults, cc.md 1.5 / 1.6 (absolute values, not
  // scaled; `line` is the cap).
  static DcqcnParams nvidia(BitRate line);
  static DcqcnParams from_set(DcqcnParamSet set, BitRate line);

  // nullopt when usable, otherwise the name of the first bad field and why
  // (e.g. "alpha_period: must be > 0"). Static text: no allocation.
  std::optional<std::string_view> validate() const;
};

// The regime of the most recent rate change.
enum class DcqcnStage : uint8_t {
  kIdle,          // at max rate, not limiting: no timers (before the first CNP, or fully recovered)
  kDecrease,      // the last change was a cut
  kFastRecovery,  // Rc = (Rt + Rc) / 2
  kAdditive,      // Rt += R_AI, then Rc = (Rt + Rc) / 2
  kHyper,         // Rt += R_HAI (* i), then Rc = (Rt + Rc) / 2
};
std::string_view to_string(DcqcnStage s);

struct DcqcnCounters {
  uint64_t cnps = 0;                 // CNPs received (every one, coalesced or not)
  uint64_t cuts = 0;                 // rate decreases applied
  uint64_t fast_recovery_steps = 0;  // increase events in fast recovery
  uint64_t additive_steps = 0;       // increase events in additive increase
  uint64_t hyper_steps = 0;          // increase events in hyper increase
  uint64_t timer_events = 0;         // rate-increase timer expiries (T += 1)
  uint64_t byte_counter_events = 0;  // byte-counter expiries (BC += 1)
  uint64_t min_rate_clamps = 0;      // cuts that hit min_rate
};

class Dcqcn {
 public:
  // `params` must validate(); max_rate 0 or above line_rate means line_rate.
  explicit Dcqcn(const DcqcnParams& params, BitRate line_rate);

  // A CNP for this QP arrived. Runs the events due before `now` first.
  void on_cnp(TimeNs now);
  // The QP put `bytes` on the wire (byte counter). Runs due events first.
  void on_tx_bytes(uint64_t bytes, TimeNs now);
  // Runs every timer due at or before `now`, in time order.
  void advance(TimeNs now);
  // Earliest time advance() has work (a pending cut or the increase timer);
  // TimeNs::max() when idle. Alpha is evaluated lazily and needs no wakeup.
  TimeNs next_deadline() const;

  BitRate rate() const { return BitRate(rc_bps_); }          // Rc: the pacing rate
  BitRate target_rate() const { return BitRate(rt_bps_); }   // Rt
  BitRate max_rate() const { return BitRate(max_bps_); }
  // Alpha as of the latest call (on_cnp / on_tx_bytes / advance).
  double alpha() const { return alpha_; }
  DcqcnStage stage() const { return stage_; }
  uint32_t time_stage() const { return t_; }   // T: timer events since the last cut
  uint32_t byte_stage() const { return bc_; }  // BC: byte-counter events since the last cut
  const DcqcnCounters& counters() const { return ctr_; }
  const DcqcnParams& params() const { return p_; }

 private:
  enum class IncreaseCause : uint8_t { kTimer, kBytes };

  void catch_up_alpha(TimeNs now);
  void cut(TimeNs now);
  void increase_event(IncreaseCause cause);
  void increase();

  DcqcnParams p_;
  uint64_t max_bps_;
  uint64_t min_bps_;
  uint64_t rc_bps_;
  uint64_t rt_bps_;
  double alpha_;
  DcqcnStage stage_ = DcqcnStage::kIdle;
  bool seen_first_cnp_ = false;
  // Alpha: kOnCnp: time of the last alpha event; kPeriodic: start of the current period.
  TimeNs alpha_mark_;
  bool alpha_cnp_seen_ = false;      // kPeriodic: a CNP arrived in the current alpha period
  TimeNs decrease_origin_;           // decrease periods start at origin + n * period
  TimeNs cut_deadline_ = TimeNs::max();  // pending cut (rate_reduce_period > 0)
  TimeNs increase_deadline_ = TimeNs::max();
  uint32_t t_ = 0;   // T / time_stage
  uint32_t bc_ = 0;  // BC / byte_stage
  uint64_t bytes_ = 0;  // bytes since the last byte-counter event
  DcqcnCounters ctr_;
};

}  // namespace sf::nic
