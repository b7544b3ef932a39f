// Virtual-time scenario support. See scenario.h.
#include "tests/scenario/scenario.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "common/config/json_loader.h"
#include "common/dpdk/mempool.h"

namespace sf::scenario {

rte_mempool* scenario_pool() {
  static rte_mempool* pool = [] {
    auto mp = dpdk::create_pktmbuf_pool("sf_scenario_pool", 16383, 256,
                                        static_cast<uint16_t>(kMaxFrameBytes + RTE_PKTMBUF_HEADROOM));
    if (!mp) throw std::runtime_error("scenario pool: " + mp.error());
    return *mp;
  }();
  return pool;
}

std::string source_root() {
  const char* r = std::getenv("SF_SOURCE_ROOT");
  if (r == nullptr || *r == '\0') throw std::runtime_error("SF_SOURCE_ROOT is not set (run through meson test)");
  return r;
}

std::string output_dir() {
  const char* o = std::getenv("SF_SCENARIO_OUT");
  return o != nullptr && *o != '\0' ? o : ".";
}

config::Json load_config_doc(const std::string& rel_path) { return config::load_file(source_root() + "/" + rel_path); }

void widen_ports(config::Json& doc, size_t n) {
  config::Json& ports = doc.at("PORT");
  std::string old_list;
  for (auto it = ports.begin(); it != ports.end(); ++it) old_list += (old_list.empty() ? "" : ",") + it.key();
  const config::Json first = ports.begin().value();
  for (size_t i = ports.size(); i < n; ++i) {
    const std::string name = "Ethernet" + std::to_string(4 * i);
    config::Json p = first;
    p["devargs"] = "sim_" + name;
    ports[name] = p;
  }
  std::string new_list;
  for (auto it = ports.begin(); it != ports.end(); ++it) new_list += (new_list.empty() ? "" : ",") + it.key();
  const std::string old_prefix = old_list + "|";
  for (auto table = doc.begin(); table != doc.end(); ++table) {
    if (!table.value().is_object() || table.key() == "PORT") continue;
    config::Json renamed = config::Json::object();
    for (auto e = table.value().begin(); e != table.value().end(); ++e) {
      const std::string& k = e.key();
      const bool all = k.compare(0, old_prefix.size(), old_prefix) == 0;
      renamed[all ? new_list + k.substr(old_list.size()) : k] = e.value();
    }
    table.value() = renamed;
  }
}

std::string port_table(size_t n, uint32_t speed_gbps) {
  std::string t = "\"PORT\": {";
  for (size_t i = 0; i < n; ++i) {
    t += (i == 0 ? "" : ", ") + std::string("\"Ethernet") + std::to_string(4 * i) + "\": {\"devargs\": \"sim" +
         std::to_string(i) + "\", \"speed\": " + std::to_string(speed_gbps) + ", \"mtu\": 9100}";
  }
  return t + "}";
}

std::string port_list(size_t n) {
  std::string l;
  for (size_t i = 0; i < n; ++i) l += (i == 0 ? "Ethernet" : ",Ethernet") + std::to_string(4 * i);
  return l;
}

wire::MacAddr sender_mac(size_t i) { return {{0x02, 0x00, 0x00, 0x00, 0x01, static_cast<uint8_t>(i)}}; }
wire::MacAddr sink_mac() { return {{0x02, 0x00, 0x00, 0x00, 0x02, 0x01}}; }
wire::Ipv4Addr sender_ip(size_t i) { return {{10, 0, 1, static_cast<uint8_t>(i + 1)}}; }
wire::Ipv4Addr sink_ip() { return {{10, 0, 2, 1}}; }

StarFabric::StarFabric(sw::SwitchConfig cfg, const std::vector<SenderConfig>& senders, uint64_t seed, TimeNs delay,
                       bool record_arrivals, bool track_offers)
    : cfg_(std::move(cfg)) {
  const size_t n = senders.size();
  if (cfg_.ports.ports.size() != n + 1) throw std::invalid_argument("StarFabric: the config needs senders + 1 ports");
  cfg_.seed = seed;
  cfg_.fdb.push_back({sink_mac().bytes, sw::kDefaultVlan, static_cast<uint16_t>(n)});
  for (size_t p = 0; p <= n; ++p) macs_.push_back({0x02, 0x53, 0x46, 0x00, 0x00, static_cast<uint8_t>(p)});
  sw_ = std::make_unique<sw::SwitchNode>(cfg_, macs_);
  sw_->set_offer_tracking(track_offers);
  sink_ = std::make_unique<RoceSink>(record_arrivals);
  for (const SenderConfig& s : senders) senders_.push_back(std::make_unique<RoceSender>(scenario_pool(), s));
  sim_ = std::make_unique<sim::Simulator>(seed);
  const sim::NodeId sw_id = sim_->add_node(*sw_, "switch");
  const sim::NodeId sink_id = sim_->add_node(*sink_, "sink");
  for (size_t i = 0; i < n; ++i) {
    const sim::NodeId id = sim_->add_node(*senders_[i], "sender" + std::to_string(i));
    sim_->connect(id, 0, sw_id, static_cast<PortId>(i), sim::LinkParams{cfg_.ports.ports[i].speed, delay});
  }
  sink_link_ = sim_->connect(sw_id, static_cast<PortId>(n), sink_id, 0, sim::LinkParams{cfg_.ports.ports[n].speed, delay});
}

uint64_t StarFabric::sent_frames() const {
  uint64_t s = 0;
  for (const auto& snd : senders_) s += snd->sent_frames();
  return s;
}

uint64_t StarFabric::switch_drops() const {
  uint64_t d = 0;
  for (uint16_t p = 0; p < sw_->num_ports(); ++p) d += sw_->counters(p).dropped;
  return d;
}

std::array<uint64_t, sw::kNumDropCauses> StarFabric::drops_by_cause() const {
  std::array<uint64_t, sw::kNumDropCauses> d{};
  for (uint16_t p = 0; p < sw_->num_ports(); ++p) {
    for (size_t c = 0; c < d.size(); ++c) d[c] += sw_->counters(p).drops[c];
  }
  return d;
}

bool StarFabric::finished() const {
  for (const auto& snd : senders_) {
    if (!snd->done()) return false;
  }
  return sink_->frames() + switch_drops() == sent_frames();
}

// ---- incast ---------------------------------------------------------------------

IncastResult run_incast(const IncastParams& p) {
  config::Json doc = load_config_doc(p.config_file);
  widen_ports(doc, p.senders + 1);
  sw::SwitchConfig cfg = sw::parse_switch_config(doc);

  std::vector<SenderConfig> senders;
  for (size_t i = 0; i < p.senders; ++i) {
    SenderConfig s;
    s.src_mac = sender_mac(i);
    s.dst_mac = sink_mac();
    s.src_ip = sender_ip(i);
    s.dst_ip = sink_ip();
    s.udp_src_port = static_cast<uint16_t>(0xC000 + i);
    s.dest_qp = static_cast<uint32_t>(0x100 + i);
    s.frame_bytes = p.frame_bytes;
    s.rate = cfg.ports.ports[i].speed;
    s.budget_bytes = p.budget_bytes;
    senders.push_back(s);
  }

  IncastResult r;
  rte_mempool* pool = scenario_pool();
  const unsigned pool_before = rte_mempool_avail_count(pool);
  {
    StarFabric fab(std::move(cfg), senders, p.seed, p.delay);
    const sw::SwitchConfig& c = fab.cfg();
    const sw::SwitchNode& sw = fab.sw();
    const sw::Mmu& mmu = sw.mmu();
    r.sink_port = fab.sink_port();
    const uint8_t tc = c.qos[0].dscp_to_tc[senders[0].dscp];
    r.pg = c.qos[0].tc_to_pg[tc];
    r.queue = c.qos[r.sink_port].tc_to_queue[tc];
    r.kmin_bytes = c.wred[r.sink_port][r.queue].kmin_bytes;
    r.kmax_bytes = c.wred[r.sink_port][r.queue].kmax_bytes;
    r.queue_limit_bytes_at_start = uint64_t{mmu.queue_shared_limit(r.sink_port, r.queue)} * mmu.cell_bytes();

    for (TimeNs t = p.sample; t <= p.max_time; t += p.sample) {
      fab.sim().run_until(t);
      IncastSample s{};
      s.at = t;
      s.queue_bytes = sw.queue_bytes(r.sink_port, r.queue);
      for (uint16_t i = 0; i < p.senders; ++i) {
        s.buffered_bytes += uint64_t{mmu.pg_use(i, r.pg).used} * mmu.cell_bytes();
        s.held_packets += sw.held_packets(i, r.pg);
      }
      s.ecn_marked = sw.counters(r.sink_port).queues[r.queue].ecn_marked;
      s.dropped = fab.switch_drops();
      s.delivered_bytes = fab.sink().bytes();
      for (size_t i = 0; i < p.senders; ++i) s.delivered_by_sender.push_back(fab.sink().source_bytes(sender_ip(i).bytes[3]));
      r.samples.push_back(s);
      if (fab.finished()) break;
    }
    r.end = fab.sim().now();
    for (size_t i = 0; i < p.senders; ++i) {
      r.sent_frames += fab.sender(i).sent_frames();
      r.sent_bytes += fab.sender(i).sent_bytes();
      r.sender_alloc_failures += static_cast<uint32_t>(fab.sender(i).alloc_failures());
    }
    r.delivered_frames = fab.sink().frames();
    r.delivered_bytes = fab.sink().bytes();
    r.ecn_marked = sw.counters(r.sink_port).queues[r.queue].ecn_marked;
    r.sink_ce = fab.sink().ce_frames();
    r.ce_pattern = fab.sink().ce_pattern_hash();
    r.max_queue_bytes = sw.counters(r.sink_port).queues[r.queue].watermark_bytes;
    for (uint16_t i = 0; i < p.senders; ++i) r.held_total += sw.counters(i).held;
    r.drops = fab.drops_by_cause();
    r.dropped = fab.switch_drops();
    r.trace_hash = fab.sim().trace_hash();
    r.events = fab.sim().events_processed();
  }
  r.mbufs_returned = rte_mempool_avail_count(pool) == pool_before;

  // Derived figures.
  size_t run_start = 0;
  for (size_t i = 0; i < r.samples.size(); ++i) {
    const IncastSample& s = r.samples[i];
    r.max_buffered_bytes = std::max(r.max_buffered_bytes, s.buffered_bytes);
    if (s.dropped > 0 && r.first_drop == TimeNs::max()) r.first_drop = s.at;
    const bool over = s.buffered_bytes > r.kmin_bytes && s.dropped == 0;
    if (!over) {
      run_start = i + 1;
      continue;
    }
    const TimeNs len = s.at - r.samples[run_start].at + p.sample;
    if (len > r.over_kmin_window) {
      r.over_kmin_window = len;
      r.over_kmin_start = r.samples[run_start].at;
      const uint64_t before = run_start > 0 ? r.samples[run_start - 1].ecn_marked : 0;
      r.marks_in_window = s.ecn_marked - before;
    }
  }
  return r;
}

std::string write_incast_json(const IncastParams& p, const IncastResult& r) {
  using Json = config::Json;
  Json j;
  j["scenario"] = p.name;
  j["config"] = p.config_file;
  j["senders"] = p.senders;
  j["frame_bytes"] = p.frame_bytes;
  j["budget_bytes_per_sender"] = p.budget_bytes;
  j["seed"] = p.seed;
  j["link_delay_ns"] = p.delay.ns();
  j["sample_ns"] = p.sample.ns();
  j["sink_port"] = r.sink_port;
  j["pg"] = r.pg;
  j["queue"] = r.queue;
  j["kmin_bytes"] = r.kmin_bytes;
  j["kmax_bytes"] = r.kmax_bytes;
  j["queue_limit_bytes_empty_buffer"] = r.queue_limit_bytes_at_start;
  j["sent"] = {{"frames", r.sent_frames}, {"bytes", r.sent_bytes}};
  j["delivered"] = {{"frames", r.delivered_frames}, {"bytes", r.delivered_bytes}};
  j["ecn_marked"] = r.ecn_marked;
  j["sink_ce_frames"] = r.sink_ce;
  j["max_queue_bytes"] = r.max_queue_bytes;
  j["max_buffered_bytes"] = r.max_buffered_bytes;
  j["held_at_ingress_total"] = r.held_total;
  if (!r.samples.empty()) j["delivered_bytes_by_sender"] = r.samples.back().delivered_by_sender;
  Json drops = Json::object();
  for (size_t c = 0; c < r.drops.size(); ++c) {
    if (r.drops[c] != 0) drops[std::string(sw::to_string(static_cast<sw::DropCause>(c)))] = r.drops[c];
  }
  j["drops"] = {{"total", r.dropped}, {"by_cause", drops}};
  j["first_drop_ns"] = r.first_drop == TimeNs::max() ? Json(nullptr) : Json(r.first_drop.ns());
  j["buffered_over_kmin_window"] = {{"start_ns", r.over_kmin_start.ns()},
                                    {"length_ns", r.over_kmin_window.ns()},
                                    {"ecn_marks", r.marks_in_window}};
  j["end_ns"] = r.end.ns();
  j["sim_events"] = r.events;
  j["trace_hash"] = r.trace_hash;
  Json ts = Json::object();
  Json t = Json::array(), q = Json::array(), b = Json::array(), h = Json::array(), m = Json::array(),
       d = Json::array(), del = Json::array();
  for (const IncastSample& s : r.samples) {
    t.push_back(s.at.ns());
    q.push_back(s.queue_bytes);
    b.push_back(s.buffered_bytes);
    h.push_back(s.held_packets);
    m.push_back(s.ecn_marked);
    d.push_back(s.dropped);
    del.push_back(s.delivered_bytes);
  }
  ts["t_ns"] = t;
  ts["queue_bytes"] = q;
  ts["buffered_bytes"] = b;
  ts["held_packets"] = h;
  ts["ecn_marked"] = m;
  ts["dropped"] = d;
  ts["delivered_bytes"] = del;
  Json by_sender = Json::array();
  for (size_t i = 0; i < p.senders; ++i) {
    Json series = Json::array();
    for (const IncastSample& s : r.samples) series.push_back(s.delivered_by_sender[i]);
    by_sender.push_back(series);
  }
  ts["delivered_bytes_by_sender"] = by_sender;
  j["time_series"] = ts;
  const std::string path = output_dir() + "/scenario_" + p.name + ".json";
  std::ofstream out(path);
  out << j.dump(1) << '\n';
  if (!out) throw std::runtime_error("cannot write " + path);
  return path;
}

}  // namespace sf::scenario
