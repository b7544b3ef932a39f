// Congestion-control choice and parameters from a config object (nic.json's
// workload "cc" and "cc_params"; docs/cc.md "Configuration"). Setup time
// only: the data path never sees JSON. Errors throw config's ConfigError
// with the JSON path of the bad key ("workloads[0].cc_params.beta: ...").
#pragma once

#include <string_view>

#include "common/config/config_node.h"
#include "nic/cc/congestion_control.h"

namespace sf::nic {

// Reads `n`'s "cc" (default "none"; every name of kCcChoiceNamesAckDriven)
// and, for swift / bbr / hpcc / nscc, the optional object "cc_params" whose
// keys are the algorithm's parameter names (docs/cc.md), durations as ns or
// "25us", rates as "10M" / Gb/s numbers; unknown keys, keys of another
// algorithm, out-of-range values and a "cc_params" for none / dcqcn are
// errors naming their path. The packet size the windows count is the QP's
// path MTU (not configurable).
CcChoice parse_cc_choice(config::ConfigNode& n);

}  // namespace sf::nic
