// Lossless PG headroom per SONiC's dynamic buffer model ("well-known formula",
// buffer_headroom_mellanox.lua; shared/reference/switch.md section 2.3): after
// XOFF a PG must absorb what is already on the cable, in the MAC/PHY and
// gearbox, what the peer sends while the pause travels and until it reacts,
// and one lossless MTU already started.
#pragma once

#include <cstdint>

#include "common/time.h"

namespace sf::sw {

struct HeadroomParams {
  BitRate speed;
  double cable_m = 5;
  uint32_t port_mtu_bytes = 9100;
  uint32_t lossless_mtu_bytes = 1500;
  uint32_t cell_bytes = 96;                 // ASIC_TABLE cell_size (Spectrum-1: 96)
  uint32_t small_packet_percentage = 100;   // LOSSLESS_TRAFFIC_PATTERN
  double mac_phy_delay_bytes = 0.8 * 1024;  // ASIC_TABLE mac_phy_delay (KB)
  double pipeline_latency_bytes = 18 * 1024;  // ASIC_TABLE pipeline_latency (KB)
  double gearbox_delay_ns = 0;
  bool shared_headroom_pool = false;        // size = xon only (the pool holds xoff)
};

struct Headroom {
  uint64_t xoff_bytes = 0;
  uint64_t xon_bytes = 0;
  uint64_t size_bytes = 0;
  uint64_t peer_response_bytes = 0;
};

// Pause quanta a peer may take to react at `speed` (802.3 31B.3.7): 10G 67,
// 25G 80, 40G 118, 50G 147, 100G 394, 200G 453, 400G and above 905.
uint32_t peer_response_quanta(BitRate speed);

Headroom compute_headroom(const HeadroomParams& p);

}  // namespace sf::sw
