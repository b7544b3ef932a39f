// sf-nic's operations views (docs/ops.md): DPDK telemetry commands for
// sf-cli and the Prometheus metrics text, both read on their own threads
// (telemetry's, the metrics server's), never on the data path.
//   /softfabric/nic/hosts              host names, index order
//   /softfabric/nic/host,<i|name>      the host's port counters summed over
//                                      its ports, drops by cause, PFC, QPs
//   /softfabric/nic/qps                "HOST|QPN" of every QP in use
//   /softfabric/nic/qp,HOST,QPN        one QP: state, PSNs, window,
//                                      retransmissions, CC state and rate
// Counters are read the way the time-series sampler reads them (plain
// monotonic uint64_t written by the data path). QPs are read only between
// qps_ready() (after every QP is connected, its CC chosen) and closing()
// (before the workloads and the node go), under a mutex every reader takes.
#pragma once

#include <mutex>
#include <string>

#include "nic/host/nic_node.h"

namespace sf::nic::app {

class NicOps {
 public:
  explicit NicOps(const NicNode& node) : node_(node) {}
  // Registers the telemetry commands (once per process; `this` must outlive
  // EAL). False if DPDK refused one (--no-telemetry).
  bool register_telemetry();
  void qps_ready() {
    std::lock_guard lock(mu_);
    qps_live_ = true;
  }
  // Before the workloads and the node go: from then on the commands answer
  // an error and the metrics only softfabric_info.
  void closing() {
    std::lock_guard lock(mu_);
    qps_live_ = false;
    node_live_ = false;
  }
  // The Prometheus text: per host port counters and drops, per QP rate,
  // window, retransmissions and CC state (QPs once qps_ready()).
  std::string metrics();

  const NicNode& node() const { return node_; }
  std::mutex& mutex() { return mu_; }
  bool qps_live() const { return qps_live_; }
  bool node_live() const { return node_live_; }

 private:
  const NicNode& node_;
  std::mutex mu_;
  bool qps_live_ = false;
  bool node_live_ = true;
};

}  // namespace sf::nic::app
