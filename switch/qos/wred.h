// WRED / ECN decision per egress queue on the instantaneous queue depth:
// p = Pmax x (q - Kmin) / (Kmax - Kmin) between the thresholds, 0 below Kmin,
// 1 above Kmax (shared/reference/switch.md, WRED_PROFILE). ECT packets are
// marked CE; non-ECT packets are dropped only where WRED dropping is enabled.
// Pure: the uniform draw comes from the caller (STYLE G2).
#pragma once

#include <cstdint>
#include <string_view>

namespace sf::sw {

struct WredConfig {
  bool ecn = false;         // mark ECT packets (SONiC ecn_green etc.)
  bool wred_drop = false;   // drop non-ECT packets with the same probability
  uint64_t kmin_bytes = 0;
  uint64_t kmax_bytes = 0;
  double pmax = 0.0;        // 0..1 (SONiC gives percent)
};

enum class EcnAction : uint8_t { kPass, kMark, kDrop };
std::string_view to_string(EcnAction a);

class Wred {
 public:
  Wred() = default;
  explicit Wred(const WredConfig& c) : c_(c) {}

  bool enabled() const { return c_.ecn || c_.wred_drop; }

  // Probability for a queue holding `queue_bytes` (before this packet).
  double probability(uint64_t queue_bytes) const {
    if (queue_bytes <= c_.kmin_bytes) return 0.0;
    if (queue_bytes >= c_.kmax_bytes) return 1.0;
    return c_.pmax * static_cast<double>(queue_bytes - c_.kmin_bytes) /
           static_cast<double>(c_.kmax_bytes - c_.kmin_bytes);
  }

  // `u` is a uniform draw in [0, 1); `ect` whether the packet is ECT(0)/ECT(1)/CE.
  EcnAction decide(uint64_t queue_bytes, bool ect, double u) const {
    if (!enabled()) return EcnAction::kPass;
    const double p = probability(queue_bytes);
    if (p <= 0.0 || u >= p) return EcnAction::kPass;
    if (ect && c_.ecn) return EcnAction::kMark;
    if (!ect && c_.wred_drop) return EcnAction::kDrop;
    return EcnAction::kPass;
  }

  const WredConfig& config() const { return c_; }

 private:
  WredConfig c_;
};

}  // namespace sf::sw
