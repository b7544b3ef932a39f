// What the switch's telemetry callbacks (telemetry.cc, telemetry_ops.cc)
// share: the port a command names and an array of eight values.
#pragma once

#include <rte_telemetry.h>

#include <cstdint>
#include <cstdlib>

#include "switch/app/switch_stats.h"
#include "switch/config/switch_config.h"

namespace sf::sw {

// A port by name (Ethernet8) or index; -1 when `params` names none.
inline int telemetry_find_port(const SwitchView& view, const SwitchConfig& cfg, const char* params) {
  if (params == nullptr || *params == '\0') return -1;
  const int by_name = cfg.ports.find(params);
  if (by_name >= 0) return by_name;
  char* end = nullptr;
  const long v = std::strtol(params, &end, 10);
  if (*end != '\0' || v < 0 || v >= view.num_ports()) return -1;
  return static_cast<int>(v);
}

// Adds an array of 8 values (per priority or queue) under `name`.
template <class F>
void add_array8(rte_tel_data* d, const char* name, F value) {
  rte_tel_data* a = rte_tel_data_alloc();
  if (a == nullptr) return;
  rte_tel_data_start_array(a, RTE_TEL_U64_VAL);
  for (uint8_t i = 0; i < 8; ++i) rte_tel_data_add_array_u64(a, value(i));
  rte_tel_data_add_dict_container(d, name, a, 0);
}

}  // namespace sf::sw
