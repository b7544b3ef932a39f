// Virtual-time scenario support (tests/scenario): switch configs from the
// shipped JSON files or from test text, a star fabric (N senders -> switch ->
// one sink) on the simulator, and the seed-000 incast experiment with its
// 1 us time series and JSON result file.
//
// Paths: SF_SOURCE_ROOT (set by meson) locates config/switch/*.json;
// SF_SCENARIO_OUT (the build dir, set by meson) receives the result files.
// Threading: the test thread only; EAL must be up (eal_test_main).
#pragma once

#include <rte_mempool.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/config/config_node.h"
#include "common/sim/simulator.h"
#include "switch/config/switch_config.h"
#include "switch/pipeline/counters.h"
#include "switch/pipeline/switch_node.h"
#include "tests/scenario/hosts.h"

namespace sf::scenario {

// The scenario mbuf pool: 16383 mbufs with room for 4 KiB-MTU RoCE frames
// (created on first use, after EAL).
rte_mempool* scenario_pool();
inline constexpr uint32_t kMaxFrameBytes = 4224;

std::string source_root();  // SF_SOURCE_ROOT; throws when unset
std::string output_dir();   // SF_SCENARIO_OUT, or "." when unset

// A shipped config document, path relative to the source root.
config::Json load_config_doc(const std::string& rel_path);
// Widens a document to `n` ports: ports past the existing ones copy the first
// port's PORT entry (named Ethernet<4i>), and every table key naming exactly
// the original port list ("Ethernet0,...,Ethernet12|3") names all n ports.
void widen_ports(config::Json& doc, size_t n);

// `"PORT": {...}` with n ports Ethernet0, Ethernet4 ... at `speed_gbps`, MTU 9100.
std::string port_table(size_t n, uint32_t speed_gbps);
// The same ports' comma-joined names ("Ethernet0,Ethernet4,...") for table keys.
std::string port_list(size_t n);

// Host addresses of the star fabric: sender i and the sink.
wire::MacAddr sender_mac(size_t i);
wire::MacAddr sink_mac();
wire::Ipv4Addr sender_ip(size_t i);
wire::Ipv4Addr sink_ip();

// N senders on switch ports 0..N-1, one sink on port N (the config needs
// N+1 ports). Links run at each switch port's configured speed with `delay`.
// The sink's MAC is a static FDB entry, so every frame is known unicast.
class StarFabric {
 public:
  // `track_offers` false: the switch is offered transmit on every idle port
  // (SwitchNode::set_offer_tracking), the reference for the tracked offers.
  StarFabric(sw::SwitchConfig cfg, const std::vector<SenderConfig>& senders, uint64_t seed, TimeNs delay,
             bool record_arrivals = false, bool track_offers = true);
  StarFabric(const StarFabric&) = delete;
  StarFabric& operator=(const StarFabric&) = delete;

  sim::Simulator& sim() { return *sim_; }
  const sim::Simulator& sim() const { return *sim_; }
  sw::SwitchNode& sw() { return *sw_; }
  const sw::SwitchNode& sw() const { return *sw_; }
  const sw::SwitchConfig& cfg() const { return cfg_; }
  RoceSink& sink() { return *sink_; }
  const RoceSink& sink() const { return *sink_; }
  RoceSender& sender(size_t i) { return *senders_[i]; }
  size_t num_senders() const { return senders_.size(); }
  uint16_t sink_port() const { return static_cast<uint16_t>(senders_.size()); }
  sim::LinkId sink_link() const { return sink_link_; }

  uint64_t sent_frames() const;
  uint64_t switch_drops() const;  // all causes, all ports
  std::array<uint64_t, sw::kNumDropCauses> drops_by_cause() const;
  // Every sender is done and every frame was delivered or dropped.
  bool finished() const;

 private:
  sw::SwitchConfig cfg_;
  std::vector<std::array<uint8_t, 6>> macs_;
  std::unique_ptr<sw::SwitchNode> sw_;
  std::unique_ptr<RoceSink> sink_;
  std::vector<std::unique_ptr<RoceSender>> senders_;
  std::unique_ptr<sim::Simulator> sim_;  // last: destroyed first (it frees frames in flight)
  sim::LinkId sink_link_ = 0;
};

// ---- the seed-000 incast ------------------------------------------------------

struct IncastParams {
  std::string name;                 // result file scenario_<name>.json
  std::string config_file;          // relative to the source root
  size_t senders = 4;
  uint32_t frame_bytes = 1098;      // 1024 B payload WRITE_ONLY
  uint64_t budget_bytes = 0;        // per sender, frame bytes
  uint64_t seed = 1;                // switch WRED stream and simulator
  TimeNs delay = TimeNs::from_us(1);
  TimeNs sample = TimeNs::from_us(1);
  TimeNs max_time = TimeNs::from_ms(5);
};

struct IncastSample {
  TimeNs at;
  uint64_t queue_bytes;     // RoCE queue of the sink port
  uint64_t buffered_bytes;  // cells held by the senders' RoCE PGs (queued + held at ingress)
  uint32_t held_packets;    // waiting at ingress
  uint64_t ecn_marked;      // cumulative, RoCE queue of the sink port
  uint64_t dropped;         // cumulative, all ports
  uint64_t delivered_bytes; // cumulative, at the sink
  std::vector<uint64_t> delivered_by_sender;  // cumulative, at the sink
  bool operator==(const IncastSample&) const = default;
};

struct IncastResult {
  uint16_t sink_port = 0;
  uint8_t pg = 0;
  uint8_t queue = 0;
  uint64_t kmin_bytes = 0;
  uint64_t kmax_bytes = 0;
  uint64_t queue_limit_bytes_at_start = 0;  // MMU shared limit of the queue, empty buffer
  uint64_t sent_frames = 0;
  uint64_t sent_bytes = 0;
  uint64_t delivered_frames = 0;
  uint64_t delivered_bytes = 0;
  uint64_t ecn_marked = 0;   // switch counter
  uint64_t sink_ce = 0;      // CE frames seen at the sink
  uint64_t ce_pattern = 0;   // RoceSink::ce_pattern_hash
  uint64_t max_queue_bytes = 0;     // queue watermark counter
  uint64_t max_buffered_bytes = 0;  // over the samples
  uint64_t held_total = 0;          // arrivals held at ingress
  std::array<uint64_t, sw::kNumDropCauses> drops{};
  uint64_t dropped = 0;
  TimeNs first_drop = TimeNs::max();  // first sample showing a drop
  // Longest run of consecutive samples with buffered_bytes > Kmin that ends
  // before the first drop, and the marks made during it.
  TimeNs over_kmin_window;
  TimeNs over_kmin_start;
  uint64_t marks_in_window = 0;
  TimeNs end;
  uint64_t trace_hash = 0;
  uint64_t events = 0;
  uint32_t sender_alloc_failures = 0;
  bool mbufs_returned = false;  // the pool is full again after teardown
  std::vector<IncastSample> samples;
};

IncastResult run_incast(const IncastParams& p);
// Writes <output_dir>/scenario_<p.name>.json; returns its path.
std::string write_incast_json(const IncastParams& p, const IncastResult& r);

}  // namespace sf::scenario
