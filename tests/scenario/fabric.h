// A general virtual-time fabric for the lossless scenarios (tests/scenario):
// any number of switches (each a SwitchNode that sends PFC: its control
// frames come from the scenario pool), RoCE senders and sinks, wired by the
// test through sim().connect(). Owns every node; the simulator is destroyed
// first so the frames in flight are freed before their owners go.
//
// Also: switch configs from the shipped seed files resized to any port list
// with per-port speeds, and the per-port figures the scenarios report.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/config/config_node.h"
#include "common/sim/simulator.h"
#include "switch/config/switch_config.h"
#include "switch/pipeline/switch_node.h"
#include "tests/scenario/hosts.h"

namespace sf::scenario {

class Fabric {
 public:
  // threads 0: the simulator's default engine; 1..N: its partitioned engine
  // (common/sim/simulator.h "Threading"), nodes in partition id mod threads.
  explicit Fabric(uint64_t seed, uint32_t threads = 0);
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  // Adds a switch; `fdb` entries (MAC -> port) are added to its config.
  size_t add_switch(const std::string& name, sw::SwitchConfig cfg);
  size_t add_sender(const std::string& name, const SenderConfig& s);
  size_t add_sink(const std::string& name, bool record_arrivals = false);

  sim::NodeId switch_id(size_t i) const { return switches_[i].id; }
  sim::NodeId sender_id(size_t i) const { return sender_ids_[i]; }
  sim::NodeId sink_id(size_t i) const { return sink_ids_[i]; }
  // A link at `port`'s configured speed of switch `sw`.
  sim::LinkId link(size_t sw, PortId port, sim::NodeId other, PortId other_port, TimeNs delay);

  sim::Simulator& sim() { return *sim_; }
  sw::SwitchNode& sw(size_t i) { return *switches_[i].node; }
  const sw::SwitchNode& sw(size_t i) const { return *switches_[i].node; }
  const sw::SwitchConfig& cfg(size_t i) const { return *switches_[i].cfg; }
  RoceSender& sender(size_t i) { return *senders_[i]; }
  RoceSink& sink(size_t i) { return *sinks_[i]; }
  size_t num_switches() const { return switches_.size(); }
  size_t num_senders() const { return senders_.size(); }

  uint64_t sent_frames() const;
  uint64_t delivered_frames() const;
  uint64_t switch_drops() const;
  uint64_t drops(sw::DropCause c) const;
  uint64_t buffered_bytes() const;  // every switch's MMU in use
  bool senders_done() const;
  // PFC frames received by port `p` of switch `s` (all priorities).
  uint64_t rx_pause(size_t s, PortId p) const;
  uint64_t tx_pause(size_t s, PortId p) const;

 private:
  struct Switch {
    std::unique_ptr<sw::SwitchConfig> cfg;
    std::unique_ptr<sw::SwitchNode> node;
    sim::NodeId id = 0;
  };
  std::vector<Switch> switches_;
  std::vector<std::unique_ptr<RoceSender>> senders_;
  std::vector<std::unique_ptr<RoceSink>> sinks_;
  std::vector<sim::NodeId> sender_ids_;
  std::vector<sim::NodeId> sink_ids_;
  std::unique_ptr<sim::Simulator> sim_;  // last: destroyed first
};

// A shipped switch document with exactly `gbps.size()` ports (Ethernet0,
// Ethernet4, ...) at those speeds; tables keyed by the original port list
// name them all.
config::Json sized_doc(const std::string& rel_path, const std::vector<uint32_t>& gbps);
void add_fdb(sw::SwitchConfig& c, const wire::MacAddr& mac, uint16_t port);

// Host addresses for fabric scenarios: host i.
wire::MacAddr host_mac(size_t i);
wire::Ipv4Addr host_ip(size_t i);

// Writes <output_dir>/scenario_<name>.json; returns its path.
std::string write_result(const std::string& name, const config::Json& j);

}  // namespace sf::scenario
