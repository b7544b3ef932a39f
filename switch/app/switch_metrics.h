// sf-switch's Prometheus metrics (--metrics-port, docs/ops.md): per port,
// queue and PG, drops by cause, PFC and its watchdog, the shared buffer, the
// FDB and CREDIT_FC ports, in the text exposition format. Runs on the
// metrics server's thread and reads what the telemetry commands read.
#pragma once

#include <string>

#include "switch/app/switch_stats.h"
#include "switch/config/switch_config.h"

namespace sf::sw {

std::string switch_metrics(const SwitchView& v, const SwitchConfig& cfg);

}  // namespace sf::sw
