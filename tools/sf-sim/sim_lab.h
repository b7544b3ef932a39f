// sf-sim's lab: the processes of a real-time lab (sf-switch per switch
// config, sf-nic per nic.json) built as nodes of the virtual-time simulator
// instead, joined by the plan's links, and run to completion. It writes the
// files the real processes write (switch-<name>-report.json,
// timeseries-<name>.jsonl, nic-<proc>-report.json, timeseries-nic-<proc>.jsonl)
// from the same functions (switch/app switch_stats, nic/app sf_nic_report),
// so tools/lab builds the same report from either.
//
// Plan (JSON, docs/sf-sim.md):
//   {"seed": 1, "run_limit_s": 0.05, "ts_period_us": 10,
//    "switches": {"sw0": "switch.json"}, "nics": {"nic": "nic.json"},
//    (or "sw0": {"config": "switch.json", "shards": 2} / "shard_map":
//     {"Ethernet0": 0, ...}: a switch sharded over datapath lcores as
//     sf-switch --shards / --shard-map runs it, here ShardedSwitchNode)
//    "links": [{"a": {"nic": "nic", "host": "h0"}, "b": {"switch": "sw0", "port": "Ethernet0"},
//               "speed_gbps": 400, "delay_ns": 1000}]}
// A nic end may name the host's port: {"nic": "nic", "host": "h0", "port": 2}
// (1-based verbs port_num, default 1): a multi-port host has one link per port.
// Workloads of different nic processes are paired by their "oob" address
// (a client and the server listening there), as sf-nic's TCP exchange does.
// Threading: one thread, or with threads > 0 the simulator's partitioned
// engine (common/sim/simulator.h "Threading"): the nodes spread over
// `threads` partitions (place_nodes()), one thread each, the lab's own work
// (samples, the DONE barrier, reports) between runs on the caller's thread.
// Errors: config::ConfigError naming the plan path or the config file and
// its JSON path.
#pragma once

#include <rte_mempool.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/config/config_node.h"
#include "common/sim/simulator.h"
#include "nic/app/perftest_engine.h"
#include "nic/app/sf_nic_config.h"
#include "nic/host/nic_node.h"
#include "switch/app/switch_stats.h"
#include "switch/config/switch_config.h"
#include "switch/pipeline/sharded_switch.h"
#include "switch/pipeline/switch_node.h"
#include "tools/sf-sim/injector.h"

namespace sf::simlab {

struct SimResult {
  bool finished = false;   // every client workload's traffic done before run_limit
  TimeNs end;
  uint64_t events = 0;
  uint64_t trace_hash = 0;
  uint64_t failed_workloads = 0;
  uint32_t threads = 0;       // the partitioned engine's threads (0: the default engine)
  TimeNs lookahead;           // its window (the shortest link between partitions)
  uint64_t windows = 0;       // windows it ran
  // Wall-clock seconds (sf-sim --timing only; not deterministic): the
  // simulator's event loop, the time-series samples, the final reports.
  double loop_s = 0;
  double loop_cpu_s = 0;  // the event loop's CPU time (user + system): its thread's, or the process's with threads
  double samples_s = 0;
  double reports_s = 0;
  // "inject" events (docs/sf-sim.md): summed over the injectors; has_inject
  // false (and the rest 0) when the plan has none.
  bool has_inject = false;
  uint64_t inject_bursts = 0;     // bursts begun
  uint64_t inject_sent = 0;       // frames the injectors sent
  uint64_t inject_sent_bytes = 0;
  uint64_t inject_delivered = 0;  // of those, delivered to the switch ports (the links' delivered_pkts)
  uint64_t inject_received = 0;   // frames the switches sent to the injectors (freed)
  bool inject_done = true;        // every burst sent before the run ended
};

// Files read once per process: sf-sim's pool sizing (main.cc),
// SimLab::shard_ring_bytes and the SimLab constructor read the same plan and
// configs (a 1,024-host fabric: a 3.7 MB plan, 512 switch and 32 NIC configs),
// which were parsed three times. Keyed by the path as given; a file that
// fails to load is not kept, so its next reader gets the same error.
// drop_file_cache() frees them once the nodes are built.
const config::Json& cached_json(const std::string& path);
const sw::SwitchConfig& cached_switch_config(const std::string& path);
const nic::app::AppConfig& cached_app_config(const std::string& path);
void drop_file_cache();

class SimLab {
 public:
  // Reads the plan and every config it names (relative paths: from the
  // plan's directory); builds nodes, links and connected workloads.
  // EAL memory the plan's sharded switches need for their rings (sum over
  // switches of ordered shard pairs x ShardedSwitch::ring_sizes().bytes); 0
  // where the plan cannot be read (the constructor reports why).
  static size_t shard_ring_bytes(const std::string& plan_path);
  // threads 0: the simulator's default engine; 1..256: its partitioned
  // engine with that many threads (the same run whatever the count; it
  // differs from the default engine's in the order of equal-time events).
  SimLab(const std::string& plan_path, rte_mempool* pool, uint32_t threads = 0);
  ~SimLab();
  SimLab(const SimLab&) = delete;
  SimLab& operator=(const SimLab&) = delete;

  // Runs until every client is done or run_limit; writes the files into `out_dir`.
  SimResult run(const std::string& out_dir);
  // Overrides the plan's seed (before run()).
  uint64_t seed() const { return seed_; }
  // sf-sim --icrc trust (before run()): the NICs do not verify received
  // frames' ICRC. No plan link corrupts frames, so only injected frames
  // (a pcap's, any bytes) could arrive with a bad one: a plan with inject
  // events is refused (std::invalid_argument, naming it).
  void trust_icrc();

 private:
  struct Sw {
    std::string name;
    sw::SwitchConfig cfg;
    std::unique_ptr<sw::SwitchNode> node;  // one shard (the plain switch)
    std::unique_ptr<sw::ShardedSwitch> sharded;  // more than one shard
    std::unique_ptr<sw::ShardedSwitchNode> sharded_node;
    sim::NodeId id = 0;
    Node& sim_node() { return sharded_node ? static_cast<Node&>(*sharded_node) : *node; }
    sw::SwitchView view() const { return sharded ? sw::SwitchView(*sharded) : sw::SwitchView(*node); }
  };
  // The shard of every port from a plan's switch entry (object form); empty: one shard.
  static std::vector<uint16_t> shard_map_of(config::ConfigNode& entry, const sw::SwitchConfig& cfg);
  struct Nic {
    std::string name;
    nic::app::AppConfig cfg;
    std::unique_ptr<nic::NicNode> node;
    std::vector<std::unique_ptr<nic::app::Workload>> workloads;
    nic::app::PerftestEngine engine;
    sim::NodeId id = 0;
  };

  void load(const std::string& plan_path);
  void connect_link(config::ConfigNode link);
  // Partitioned engine: every node to a partition, the heaviest first to the
  // lightest partition (weight: ports), nodes joined by a zero-delay link
  // together. Which partition changes only the speed, never the run.
  void place_nodes();
  // Plan "events" (failure injection, docs/sf-sim.md "Events"): scheduled on
  // the simulator's links and nodes before the run.
  void load_events(config::ConfigNode events);
  // A link named by one of its ends ("switch:port" or a host name).
  sim::LinkId event_link(config::ConfigNode& ev, const std::string& end);
  void pair_workloads();
  // Routed hosts' gateways resolved before the workloads start (run()).
  void resolve_next_hops();
  // The injector on a switch port ("inject" event), created and linked at the
  // port's speed on first use; the port must have no link in the plan.
  Injector& injector_at(config::ConfigNode& ev, const std::string& port);
  struct Inj {
    sim::NodeId sw = 0;
    PortId port = 0;
    std::unique_ptr<Injector> node;
    sim::NodeId id = 0;
    sim::LinkId link = 0;
  };

  rte_mempool* pool_;
  uint32_t threads_ = 0;
  struct Edge {
    sim::NodeId a, b;
    int64_t delay_ns;
  };
  std::vector<Edge> edges_;  // every link, for place_nodes()
  uint64_t seed_ = 1;
  TimeNs run_limit_ = TimeNs::from_ms(100);
  TimeNs ts_period_ = TimeNs::from_us(10);
  std::vector<std::unique_ptr<Sw>> switches_;
  std::vector<std::unique_ptr<Nic>> nics_;
  std::vector<Inj> injectors_;
  std::map<std::string, std::shared_ptr<const Frames>> pcaps_;  // inject events' files, read once
  std::string plan_dir_;
  std::vector<std::pair<nic::app::Workload*, nic::app::Workload*>> pairs_;  // client, server
  std::unique_ptr<sim::Simulator> sim_;
};

}  // namespace sf::simlab
