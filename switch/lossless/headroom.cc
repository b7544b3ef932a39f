// Headroom calculator. See headroom.h.
#include "switch/lossless/headroom.h"

#include <cmath>

namespace sf::sw {

uint32_t peer_response_quanta(BitRate speed) {
  const double g = speed.gbps_value();
  if (g <= 10) return 67;
  if (g <= 25) return 80;
  if (g <= 40) return 118;
  if (g <= 50) return 147;
  if (g <= 100) return 394;
  if (g <= 200) return 453;
  return 905;
}

namespace {
uint64_t ceil_1k(double bytes) { return static_cast<uint64_t>(std::ceil(bytes / 1024.0)) * 1024; }
}  // namespace

Headroom compute_headroom(const HeadroomParams& p) {
  const double cell = p.cell_bytes;
  const double worst = cell > 128 ? cell / 64 : 2 * cell / (1 + cell);
  const double spp = p.small_packet_percentage;
  const double occupancy = (100 - spp + spp * worst) / 100;
  const double speed_mbps = static_cast<double>(p.speed.bps()) / 1e6;
  constexpr double kLightInFibreMps = 198e6;
  const double on_cable = 2 * p.cable_m * speed_mbps * 1e9 / kLightInFibreMps / (8 * 1024);
  const double on_gearbox = speed_mbps * p.gearbox_delay_ns / (8 * 1024);
  Headroom h;
  h.peer_response_bytes = uint64_t{peer_response_quanta(p.speed)} * 512 / 8;
  const double propagation = p.port_mtu_bytes + on_cable + 2 * on_gearbox + p.mac_phy_delay_bytes +
                             static_cast<double>(h.peer_response_bytes);
  h.xoff_bytes = ceil_1k(p.lossless_mtu_bytes + propagation * occupancy);
  h.xon_bytes = ceil_1k(p.pipeline_latency_bytes);
  h.size_bytes = p.shared_headroom_pool ? h.xon_bytes : h.xoff_bytes + h.xon_bytes;
  return h;
}

}  // namespace sf::sw
