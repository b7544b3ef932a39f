// What sf-nic prints and writes: perftest's console report per workload,
// the --report JSON (docs/nic-app.md) and the --timeseries samples. Control
// thread only; counters of the node are read racily while it runs (plain
// monotonic uint64_t, as the switch's console does) and exactly after.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "nic/app/perftest_engine.h"
#include "nic/app/sf_nic_config.h"
#include "nic/host/nic_node.h"

namespace sf::nic::app {

// perftest's banner, QP address lines and result table for one workload.
std::string perftest_text(const Workload& w);
// A bw client's result as perftest's tables take it (messages, first post to
// last completion, the peak's time per message); what the client sends its
// write_bw / read_bw server after DONE. messages 0 when nothing completed.
Workload::PeerBw bw_result(const Workload& w);

// {"name","host","type","role","bytes","messages","seconds","goodput_gbps",
//  "msg_rate_mpps","completion_s","latency_us","status","verify_errors"}
nlohmann::json workload_json(const Workload& w);
// Counters of host `h` (its one port and all its QPs).
// The node-port counters of a host summed over its ports.
struct HostPortSum {
  NicPortCounters c;
  PfcRxCounters rx;
  PfcTxCounters tx;
};

HostPortSum port_sum(const NicNode& node, const Host& host);

nlohmann::json host_json(const NicNode& node, size_t h);
// The whole --report document.
nlohmann::json report_json(const NicNode& node, const std::vector<Workload*>& workloads);
// One --timeseries line: {"t_s", "hosts": {name: {...}}}.
nlohmann::json timeseries_sample(const NicNode& node, double t_s);

}  // namespace sf::nic::app
