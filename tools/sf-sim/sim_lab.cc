// sf-sim's lab in virtual time. See sim_lab.h.
#include "tools/sf-sim/sim_lab.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "common/config/config_error.h"
#include "common/config/json_loader.h"
#include "nic/app/sf_nic_report.h"
#include "switch/app/switch_stats.h"

namespace sf::simlab {

namespace fs = std::filesystem;

namespace {

std::string resolve(const std::string& base_dir, const std::string& p) {
  return fs::path(p).is_absolute() ? p : (fs::path(base_dir) / p).string();
}

}  // namespace

namespace {
struct FileCache {
  std::map<std::string, config::Json> json;
  std::map<std::string, sw::SwitchConfig> switches;
  std::map<std::string, nic::app::AppConfig> apps;
};
FileCache& file_cache() {
  static FileCache c;
  return c;
}
}  // namespace

const config::Json& cached_json(const std::string& path) {
  auto& m = file_cache().json;
  if (const auto it = m.find(path); it != m.end()) return it->second;
  return m.emplace(path, config::load_file(path)).first->second;
}

const sw::SwitchConfig& cached_switch_config(const std::string& path) {
  auto& m = file_cache().switches;
  if (const auto it = m.find(path); it != m.end()) return it->second;
  return m.emplace(path, sw::load_switch_config(path)).first->second;
}

const nic::app::AppConfig& cached_app_config(const std::string& path) {
  auto& m = file_cache().apps;
  if (const auto it = m.find(path); it != m.end()) return it->second;
  return m.emplace(path, nic::app::load_app_config(path)).first->second;
}

void drop_file_cache() { file_cache() = FileCache{}; }

SimLab::SimLab(const std::string& plan_path, rte_mempool* pool, uint32_t threads) : pool_(pool), threads_(threads) {
  load(plan_path);
}

SimLab::~SimLab() {
  sim_.reset();  // frees frames in flight before the nodes go
  for (auto& n : nics_) n->node->set_app(nullptr);
}

void SimLab::load(const std::string& plan_path) {
  const config::Json& doc = cached_json(plan_path);
  const std::string dir = fs::path(plan_path).parent_path().string();
  plan_dir_ = dir;
  config::ConfigNode root(doc, "");
  root.expect_object();
  seed_ = root.opt<uint64_t>("seed", 1);
  const double limit_s = root.opt<double>("run_limit_s", 0.1);
  if (limit_s <= 0 || limit_s > 3600) root.fail_key("run_limit_s", "must be within (0, 3600] seconds of virtual time");
  run_limit_ = TimeNs(static_cast<int64_t>(limit_s * 1e9));
  ts_period_ = TimeNs::from_us(root.opt<uint32_t>("ts_period_us", 10, config::in_range<uint32_t>(1, 1000000)));
  sim_ = threads_ == 0 ? std::make_unique<sim::Simulator>(seed_)
                       : std::make_unique<sim::Simulator>(seed_, sim::Partitioned{threads_});

  if (auto sws = root.opt_child("switches")) {
    sws->expect_object();
    uint8_t idx = 0;
    for (auto& [name, n] : sws->members()) {
      auto s = std::make_unique<Sw>();
      s->name = name;
      std::vector<uint16_t> shard_map;
      if (n.json().is_object()) {
        // {"config": path, "shards": N | "shard_map": {port: shard}}
        s->cfg = cached_switch_config(resolve(dir, n.req<std::string>("config")));
        shard_map = shard_map_of(n, s->cfg);
        n.finish();
      } else {
        s->cfg = cached_switch_config(resolve(dir, n.as<std::string>()));
      }
      // The switch's WRED stream: its own DEVICE_METADATA seed when the config
      // sets one, else the plan's seed + its index (distinct per switch).
      if (!s->cfg.seed_given) s->cfg.seed = seed_ + idx;
      std::vector<std::array<uint8_t, 6>> macs;
      for (size_t p = 0; p < s->cfg.ports.ports.size(); ++p) {
        const auto& pc = s->cfg.ports.ports[p];
        macs.push_back(pc.mac ? pc.mac->bytes
                              : std::array<uint8_t, 6>{0x02, 0x53, 0x46, idx, 0x00, static_cast<uint8_t>(p)});
      }
      if (shard_map.empty()) {
        s->node = std::make_unique<sw::SwitchNode>(s->cfg, macs, pool_);
      } else {
        try {
          s->sharded = std::make_unique<sw::ShardedSwitch>(s->cfg, macs, pool_, shard_map);
        } catch (const std::invalid_argument& e) {
          n.fail(e.what());  // a config sharding does not support
        }
        s->sharded_node = std::make_unique<sw::ShardedSwitchNode>(*s->sharded);
      }
      s->id = sim_->add_node(s->sim_node(), "switch:" + name);
      switches_.push_back(std::move(s));
      ++idx;
    }
  }
  if (auto nics = root.opt_child("nics")) {
    nics->expect_object();
    for (auto& [name, n] : nics->members()) {
      auto x = std::make_unique<Nic>();
      x->name = name;
      const std::string path = resolve(dir, n.as<std::string>());
      try {
        x->cfg = cached_app_config(path);
      } catch (const config::ConfigError& e) {
        throw config::ConfigError(path + ": " + e.path(), e.reason());
      }
      x->node = std::make_unique<nic::NicNode>(nic::app::nic_config_of(x->cfg), pool_);
      for (const nic::app::AppWorkload& w : x->cfg.workloads) {
        x->workloads.push_back(std::make_unique<nic::app::Workload>(w, x->cfg.hosts[w.host], *x->node, w.host));
        x->engine.add(x->workloads.back().get());
      }
      x->node->set_app(&x->engine);
      x->id = sim_->add_node(*x->node, "nic:" + name);
      nics_.push_back(std::move(x));
    }
  }
  if (switches_.empty() && nics_.empty()) root.fail("needs \"switches\" or \"nics\"");
  config::ConfigNode links = root.child("links");
  links.expect_array();
  for (config::ConfigNode& l : links.elements()) connect_link(l);
  if (auto ev = root.opt_child("events")) load_events(*ev);
  root.finish();
  place_nodes();
  pair_workloads();
}

void SimLab::place_nodes() {
  if (threads_ <= 1) return;
  const size_t n = sim_->num_nodes();
  // Units: nodes joined by zero-delay links (they cannot be apart).
  std::vector<uint32_t> root(n);
  for (uint32_t i = 0; i < n; ++i) root[i] = i;
  const auto find = [&](uint32_t x) {
    while (root[x] != x) x = root[x] = root[root[x]];
    return x;
  };
  for (const Edge& e : edges_) {
    if (e.delay_ns == 0) root[std::max(find(e.a), find(e.b))] = std::min(find(e.a), find(e.b));
  }
  std::vector<uint64_t> weight(n, 0);
  const auto ports = [&](sim::NodeId id) -> uint64_t {
    for (const auto& sw : switches_) {
      if (sw->id == id) return sw->cfg.ports.ports.size();
    }
    for (const auto& x : nics_) {
      if (x->id == id) return x->node->num_ports();
    }
    return 1;  // an injector
  };
  for (uint32_t i = 0; i < n; ++i) weight[find(i)] += ports(i);
  std::vector<uint32_t> units;
  for (uint32_t i = 0; i < n; ++i) {
    if (find(i) == i) units.push_back(i);
  }
  std::stable_sort(units.begin(), units.end(), [&](uint32_t a, uint32_t b) { return weight[a] > weight[b]; });
  std::vector<uint64_t> load(threads_, 0);
  std::vector<uint32_t> part_of_unit(n, 0);
  for (const uint32_t u : units) {
    const auto p = static_cast<uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
    part_of_unit[u] = p;
    load[p] += weight[u];
  }
  for (uint32_t i = 0; i < n; ++i) sim_->set_partition(i, part_of_unit[find(i)]);
}

size_t SimLab::shard_ring_bytes(const std::string& plan_path) {
  try {
    const config::Json& doc = cached_json(plan_path);
    const std::string dir = fs::path(plan_path).parent_path().string();
    config::ConfigNode root(doc, "");
    auto sws = root.opt_child("switches");
    if (!sws) return 0;
    size_t bytes = 0;
    for (auto& [name, n] : sws->members()) {
      if (!n.json().is_object()) continue;
      const sw::SwitchConfig& cfg = cached_switch_config(resolve(dir, n.req<std::string>("config")));
      const std::vector<uint16_t> map = shard_map_of(n, cfg);
      size_t shards = 1;
      for (const uint16_t s : map) shards = std::max<size_t>(shards, s + 1u);
      bytes += shards * (shards - 1) * sw::ShardedSwitch::ring_sizes(cfg).bytes;
    }
    return bytes;
  } catch (const std::exception&) {
    return 0;
  }
}

std::vector<uint16_t> SimLab::shard_map_of(config::ConfigNode& entry, const sw::SwitchConfig& cfg) {
  const auto nports = static_cast<uint16_t>(cfg.ports.ports.size());
  const uint16_t max_shards = std::min<uint16_t>(nports, sw::kMaxShards);
  if (entry.has("shards") && entry.has("shard_map")) entry.fail("give \"shards\" or \"shard_map\", not both");
  if (entry.has("shards")) {
    const auto n = entry.req<uint16_t>("shards");
    if (n < 1 || n > max_shards) {
      entry.fail_key("shards", std::to_string(n) + " out of range [1, " + std::to_string(max_shards) +
                                   "] (at least one port per shard, at most " + std::to_string(sw::kMaxShards) +
                                   " shards)");
    }
    return n == 1 ? std::vector<uint16_t>{} : sw::ShardedSwitch::even_split(nports, n);
  }
  auto m = entry.opt_child("shard_map");
  if (!m) return {};
  m->expect_object();
  std::vector<int> shard(nports, -1);
  for (auto& [port, v] : m->members()) {
    const int p = cfg.ports.find(port);
    if (p < 0) v.fail("the switch has no port \"" + port + "\"");
    shard[static_cast<size_t>(p)] = v.as<int>(config::in_range<int>(0, max_shards - 1));
  }
  std::vector<uint16_t> out(nports);
  int top = 0;
  for (uint16_t p = 0; p < nports; ++p) {
    if (shard[p] < 0) m->fail("port \"" + cfg.ports.ports[p].name + "\" has no shard (the map names every port)");
    out[p] = static_cast<uint16_t>(shard[p]);
    top = std::max(top, shard[p]);
  }
  for (int s = 0; s <= top; ++s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) {
      m->fail("shard " + std::to_string(s) + " owns no port (shards are numbered 0..N-1, each with a port)");
    }
  }
  if (top == 0) return {};
  return out;
}

void SimLab::connect_link(config::ConfigNode link) {
  link.expect_object();
  // Each end's configured line rate (PORT.speed, a nic port's speed), which
  // the link's speed_gbps must equal: the link serialises at one rate, so a
  // port configured otherwise would be silently overridden.
  struct EndSpeed {
    std::string what;
    uint32_t gbps = 0;
  };
  std::vector<EndSpeed> speeds;
  auto end = [&](const char* key) -> std::pair<sim::NodeId, PortId> {
    config::ConfigNode e = link.child(key);
    e.expect_object();
    if (e.has("switch")) {
      const auto name = e.req<std::string>("switch");
      const auto port = e.req<std::string>("port");
      e.finish();
      for (const auto& s : switches_) {
        if (s->name != name) continue;
        const int p = s->cfg.ports.find(port);
        if (p < 0) e.fail_key("port", "switch " + name + " has no port \"" + port + "\"");
        speeds.push_back({"switch " + name + " PORT." + port + ".speed",
                          s->cfg.ports.ports[static_cast<size_t>(p)].speed_gbps});
        return {s->id, static_cast<PortId>(p)};
      }
      e.fail_key("switch", "unknown switch \"" + name + "\"");
    }
    const auto name = e.req<std::string>("nic");
    const auto host = e.req<std::string>("host");
    // A multi-port host has one link per port (one per plane): port k (1-based).
    const auto port = e.opt<uint32_t>("port", 1, config::in_range<uint32_t>(1, 255));
    e.finish();
    for (const auto& n : nics_) {
      if (n->name != name) continue;
      for (size_t h = 0; h < n->cfg.hosts.size(); ++h) {
        if (n->cfg.hosts[h].name != host) continue;
        const nic::Host& nh = n->node->host(h);
        if (port > nh.num_ports()) {
          e.fail_key("port", "host " + host + " of nic process " + name + " has " + std::to_string(nh.num_ports()) +
                                 " port" + (nh.num_ports() == 1 ? "" : "s") + " (port is 1-based)");
        }
        speeds.push_back({"nic process " + name + " host " + host +
                              (port > 1 ? " port " + std::to_string(port) : std::string()) + " speed",
                          n->cfg.hosts[h].port(static_cast<uint8_t>(port)).speed_gbps});
        return {n->id, nh.node_port(static_cast<uint8_t>(port))};
      }
      e.fail_key("host", "nic process " + name + " has no host \"" + host + "\"");
    }
    e.fail_key("nic", "unknown nic process \"" + name + "\"");
  };
  const auto a = end("a");
  const auto b = end("b");
  const double gbps = link.req<double>("speed_gbps");
  if (gbps <= 0 || gbps > 1600) link.fail_key("speed_gbps", "must be within (0, 1600]");
  for (const EndSpeed& es : speeds) {
    if (static_cast<double>(es.gbps) != gbps) {
      char rate[32];
      std::snprintf(rate, sizeof rate, "%g", gbps);
      link.fail_key("speed_gbps", std::string(rate) + " Gb/s differs from " + es.what + " (" + std::to_string(es.gbps) +
                                      " Gb/s): the link runs at one rate, so set both to the same speed");
    }
  }
  const auto delay_ns = link.opt<uint64_t>("delay_ns", 1000, config::in_range<uint64_t>(0, 1000000000));
  link.finish();
  try {
    sim_->connect(a.first, a.second, b.first, b.second,
                  {BitRate::gbps(gbps), TimeNs(static_cast<int64_t>(delay_ns))});
    edges_.push_back({a.first, b.first, static_cast<int64_t>(delay_ns)});
  } catch (const std::exception& e) {
    link.fail(e.what());  // a port used twice
  }
}

sim::LinkId SimLab::event_link(config::ConfigNode& ev, const std::string& end) {
  const size_t colon = end.find(':');
  std::optional<sim::LinkId> l;
  if (colon != std::string::npos) {
    const std::string name = end.substr(0, colon);
    for (const auto& s : switches_) {
      if (s->name != name) continue;
      const int p = s->cfg.ports.find(end.substr(colon + 1));
      if (p >= 0) l = sim_->link_of(s->id, static_cast<PortId>(p));
    }
  } else {
    for (const auto& n : nics_) {
      for (size_t h = 0; h < n->cfg.hosts.size(); ++h) {
        if (n->cfg.hosts[h].name == end) l = sim_->link_of(n->id, static_cast<PortId>(h));
      }
    }
  }
  if (!l) ev.fail_key("link", "no link has the end \"" + end + "\"");
  return *l;
}

void SimLab::load_events(config::ConfigNode events) {
  events.expect_array();
  for (config::ConfigNode& ev : events.elements()) {
    ev.expect_object();
    const auto kind = ev.req<std::string>("kind");
    auto ms = [&](const char* key) {
      const auto v = ev.req<double>(key);
      if (!(v >= 0 && v <= 3.6e6)) ev.fail_key(key, "must be within [0, 3600000] ms");
      return TimeNs(static_cast<int64_t>(v * 1e6));
    };
    auto switch_id = [&]() {
      const auto name = ev.req<std::string>("switch");
      for (const auto& s : switches_) {
        if (s->name == name) return s->id;
      }
      ev.fail_key("switch", "unknown switch \"" + name + "\"");
    };
    auto link = [&]() {
      // [a, b]: both ends of one link (either names it; both must agree).
      config::ConfigNode ends = ev.child("link");
      ends.expect_array();
      std::optional<sim::LinkId> l;
      for (config::ConfigNode& e : ends.elements()) {
        const sim::LinkId x = event_link(ev, e.as<std::string>());
        if (l && *l != x) ev.fail_key("link", "the two ends are not one link");
        l = x;
      }
      if (!l) ev.fail_key("link", "want [end_a, end_b]");
      return *l;
    };
    try {
      if (kind == "link_down" || kind == "link_up") {
        sim_->set_link_state_at(link(), ms("at_ms"), kind == "link_up");
      } else if (kind == "flap") {
        const sim::LinkId l = link();
        sim_->flap_link(l, ms("at_ms"), ms("until_ms"), ms("period_ms"), ms("down_ms"));
      } else if (kind == "blackhole") {
        const TimeNs at = ms("at_ms");
        const TimeNs until = ev.has("until_ms") ? ms("until_ms") : TimeNs::max();
        if (ev.has("port")) {
          const auto port = ev.req<std::string>("port");
          const size_t colon = port.find(':');
          std::optional<std::pair<sim::NodeId, PortId>> where;
          for (const auto& s : switches_) {
            if (colon == std::string::npos || s->name != port.substr(0, colon)) continue;
            const int p = s->cfg.ports.find(port.substr(colon + 1));
            if (p >= 0) where = std::pair{s->id, static_cast<PortId>(p)};
          }
          if (!where) ev.fail_key("port", "no switch port \"" + port + "\"");
          sim_->blackhole_port(where->first, where->second, at, until);
        } else {
          sim_->blackhole_node(switch_id(), at, until);
        }
      } else if (kind == "loss") {
        const sim::LinkId l = link();
        const auto rate = ev.req<double>("rate");
        sim_->set_link_loss_at(l, ev.has("at_ms") ? ms("at_ms") : TimeNs(0), rate);
      } else if (kind == "reboot") {
        const sim::NodeId n = switch_id();
        sim_->reboot_node(n, ms("at_ms"), ms("down_ms"));
      } else if (kind == "inject") {
        // A misbehaving host on a switch port: a pcap's frames, `count` of
        // them (cycled; default: the file's), at `rate_gbps` (default: back
        // to back at the port's speed) from `at_ms`.
        Injector& inj = injector_at(ev, ev.req<std::string>("port"));
        const std::string path = resolve(plan_dir_, ev.req<std::string>("pcap"));
        auto& frames = pcaps_[path];
        if (!frames) {
          try {
            frames = std::make_shared<const Frames>(read_pcap_frames(path));
          } catch (const std::runtime_error& e) {
            pcaps_.erase(path);
            ev.fail_key("pcap", e.what());
          }
        }
        Injector::Burst b;
        b.at = ms("at_ms");
        b.frames = frames;
        b.count = ev.opt<uint64_t>("count", frames->size(), config::in_range<uint64_t>(1, uint64_t{1} << 32));
        const double gbps = ev.opt<double>("rate_gbps", 0.0);
        if (!(gbps >= 0 && gbps <= 1600)) ev.fail_key("rate_gbps", "must be within [0, 1600] (0: the port's speed)");
        b.rate = BitRate::gbps(gbps);
        inj.add(std::move(b));
      } else {
        ev.fail_key("kind", "\"" + kind + "\" is not one of link_down, link_up, flap, blackhole, loss, reboot, inject");
      }
    } catch (const std::invalid_argument& e) {
      ev.fail(e.what());  // the simulator's refusal (bad period, rate...)
    }
    ev.finish();
  }
}

void SimLab::trust_icrc() {
  if (!injectors_.empty()) {
    throw std::invalid_argument("--icrc trust: the plan has inject events, whose frames may carry any ICRC: use --icrc check");
  }
  for (auto& n : nics_) n->node->set_icrc_check(false);
}

Injector& SimLab::injector_at(config::ConfigNode& ev, const std::string& port) {
  const size_t colon = port.find(':');
  for (const auto& s : switches_) {
    if (colon == std::string::npos || s->name != port.substr(0, colon)) continue;
    const int p = s->cfg.ports.find(port.substr(colon + 1));
    if (p < 0) break;
    for (Inj& x : injectors_) {
      if (x.sw == s->id && x.port == static_cast<PortId>(p)) return *x.node;
    }
    if (sim_->link_of(s->id, static_cast<PortId>(p))) {
      ev.fail_key("port", "\"" + port + "\" has a link in the plan: an injector takes a port with none");
    }
    const BitRate rate = BitRate::gbps(s->cfg.ports.ports[static_cast<size_t>(p)].speed_gbps);
    Inj x;
    x.sw = s->id;
    x.port = static_cast<PortId>(p);
    constexpr TimeNs kDelay = TimeNs(1000);
    x.node = std::make_unique<Injector>(pool_, rate, kDelay);
    x.id = sim_->add_node(*x.node, "inject:" + port);
    x.link = sim_->connect(x.id, 0, s->id, x.port, {rate, kDelay});
    edges_.push_back({x.id, s->id, kDelay.ns()});
    injectors_.push_back(std::move(x));
    return *injectors_.back().node;
  }
  ev.fail_key("port", "no switch port \"" + port + "\"");
}

void SimLab::pair_workloads() {
  // Servers by their listening address; clients connect to one.
  std::map<std::pair<std::string, uint16_t>, nic::app::Workload*> servers;
  for (const auto& n : nics_) {
    for (const auto& w : n->workloads) {
      if (w->config().role == nic::app::Role::kServer) servers[{w->config().oob_host, w->config().oob_port}] = w.get();
    }
  }
  for (const auto& n : nics_) {
    for (const auto& w : n->workloads) {
      const nic::app::AppWorkload& c = w->config();
      if (c.role != nic::app::Role::kClient) continue;
      auto it = servers.find({c.oob_host, c.oob_port});
      if (it == servers.end()) it = servers.find({"0.0.0.0", c.oob_port});
      if (it == servers.end()) {
        throw config::ConfigError("nics." + n->name, "workload " + c.name + ": no server workload listens on " +
                                                         c.oob_host + ":" + std::to_string(c.oob_port));
      }
      nic::app::Workload* s = it->second;
      std::string err = s->connect(w->local_info(), TimeNs(0));
      if (err.empty()) err = w->connect(s->local_info(), TimeNs(0));
      if (!err.empty()) throw config::ConfigError("nics." + n->name, "workload " + c.name + ": " + err);
      pairs_.push_back({w.get(), s});
      servers.erase(it);
    }
  }
  if (!servers.empty()) {
    throw config::ConfigError("nics", "server workload " + servers.begin()->second->config().name +
                                          " has no client");
  }
}

void SimLab::resolve_next_hops() {
  // As sf-nic before its workloads (nic/app/main.cc step 7b): routed ports
  // with a "gateway" resolve it by ARP / ND through the switches' router
  // interfaces, the apps detached, until every gateway answered or gave up
  // (Neighbors::kMaxProbes requests a kProbeInterval apart: ~3 virtual
  // seconds of nothing but probes when one never answers); then a workload
  // whose peer a port cannot reach fails the run, as it fails sf-nic's
  // connect. Without gateways nothing runs here (virtual time stays 0).
  auto settled = [&] {
    for (const auto& n : nics_) {
      if (!n->node->neighbors().settled()) return false;
    }
    return true;
  };
  if (settled()) return;
  for (auto& n : nics_) n->node->set_app(nullptr);
  const TimeNs limit = sim_->now() + TimeNs::from_s(10);
  // Checked after 1 us, then in steps doubling up to 1 ms (an answer takes
  // a few link round trips; a gateway that never answers takes seconds).
  for (TimeNs step = TimeNs::from_us(1); !settled() && sim_->now() < limit;
       step = std::min(TimeNs(step.ns() * 2), TimeNs::from_ms(1))) {
    sim_->run_for(step);
  }
  for (auto& n : nics_) {
    n->node->set_app(&n->engine);
    sim_->wake(n->id);  // the workloads start now
  }
  for (auto& [c, s] : pairs_) {
    for (auto [w, peer] : {std::pair{c, s}, std::pair{s, c}}) {
      if (std::string e = w->route_error(peer->local_info()); !e.empty()) {
        throw std::runtime_error("workload " + w->config().name + ": " + e);
      }
    }
  }
}

SimResult SimLab::run(const std::string& out_dir) {
  fs::create_directories(out_dir);
  std::vector<std::ofstream> sw_ts, nic_ts;
  for (const auto& s : switches_) sw_ts.emplace_back(out_dir + "/timeseries-" + s->name + ".jsonl");
  for (const auto& n : nics_) nic_ts.emplace_back(out_dir + "/timeseries-nic-" + n->name + ".jsonl");
  auto all_done = [&] {
    bool done = true;
    for (const Inj& x : injectors_) done = done && x.node->done(sim_->now());
    for (auto& [c, s] : pairs_) {
      if (c->traffic_done()) {
        s->set_peer_done();  // the DONE barrier of the real run
        c->set_peer_done();
      } else {
        done = false;
      }
    }
    return done;
  };
  SimResult r;
  using Clock = std::chrono::steady_clock;
  // CPU time (user + system), this thread's or with --threads the process's (every
  // partition's thread): the loop's cost on a loaded machine.
  const auto thread_cpu_s = [this] {
    timespec ts{};
    clock_gettime(threads_ > 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  const auto secs = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  resolve_next_hops();
  TimeNs next = TimeNs(0);
  while (true) {
    const auto t0 = Clock::now();
    const double t_s = sim_->now().sec();
    for (size_t i = 0; i < switches_.size(); ++i) {
      sw_ts[i] << sw::timeseries_sample(switches_[i]->view(), switches_[i]->cfg, t_s).dump() << "\n";
    }
    for (size_t i = 0; i < nics_.size(); ++i) nic_ts[i] << nic::app::timeseries_sample(*nics_[i]->node, t_s).dump() << "\n";
    const auto t1 = Clock::now();
    r.samples_s += secs(t0, t1);
    if (all_done()) {
      r.finished = true;
      break;
    }
    if (sim_->now() >= run_limit_) break;
    next = next + ts_period_;
    const double c1 = thread_cpu_s();
    sim_->run_until(next);
    r.loop_s += secs(t1, Clock::now());
    r.loop_cpu_s += thread_cpu_s() - c1;
  }
  const auto t_reports = Clock::now();
  r.end = sim_->now();
  r.events = sim_->events_processed();
  r.trace_hash = sim_->trace_hash();
  r.threads = sim_->threads();
  r.lookahead = sim_->lookahead();
  r.windows = sim_->windows();
  r.has_inject = !injectors_.empty();
  for (const Inj& x : injectors_) {
    const Injector::Stats& st = x.node->stats();
    r.inject_bursts += st.bursts;
    r.inject_sent += st.sent;
    r.inject_sent_bytes += st.sent_bytes;
    r.inject_received += st.received;
    r.inject_delivered += sim_->stats(x.link, sim::LinkDir::kAtoB).delivered_pkts;
    r.inject_done = r.inject_done && x.node->done(sim_->now());
  }
  for (const auto& s : switches_) {
    const sw::SwitchView v = s->view();
    nlohmann::json rep = sw::switch_snapshot(v, s->cfg);
    uint64_t left = 0;
    for (PortId p = 0; p < v.num_ports(); ++p) {
      for (uint8_t q = 0; q < sw::kNumQueues; ++q) left += v.owner(p).queue_packets(p, q);
    }
    rep["tx_left_at_stop"] = left;
    rep["virtual_time"] = true;
    rep["seed"] = s->cfg.seed;  // its WRED stream: DEVICE_METADATA's, else plan seed + index
    std::ofstream(out_dir + "/switch-" + s->name + "-report.json") << rep.dump(2) << "\n";
  }
  for (const auto& n : nics_) {
    std::vector<nic::app::Workload*> wl;
    for (const auto& w : n->workloads) {
      wl.push_back(w.get());
      if (w->result().failed) ++r.failed_workloads;
    }
    std::ofstream(out_dir + "/nic-" + n->name + "-report.json") << nic::app::report_json(*n->node, wl).dump(2) << "\n";
  }
  r.reports_s = secs(t_reports, Clock::now());
  return r;
}

}  // namespace sf::simlab
