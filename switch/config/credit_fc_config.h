// CREDIT_FC table: which switch ports run credit-based link flow control
// instead of PFC, with their credit pools, update threshold, SL->VL map and
// VL arbitration table. Reference: docs/config-reference.md "CREDIT_FC".
// Kept apart from switch_config.cc so that the credit concern is one file.
#pragma once

#include "common/config/config_node.h"
#include "switch/config/switch_config.h"

namespace sf::sw {

// Parses CREDIT_FC into c.credit_fc (one entry per port, unset = PFC mode).
// Needs PORT, the buffers and PORT_QOS_MAP parsed. Throws config::ConfigError
// naming the JSON path for an inconsistent table.
void parse_credit_fc(config::ConfigNode& root, SwitchConfig& c);

}  // namespace sf::sw
