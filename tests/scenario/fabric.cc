// Virtual-time fabric. See fabric.h.
#include "tests/scenario/fabric.h"

#include <fstream>
#include <stdexcept>

#include "tests/scenario/scenario.h"

namespace sf::scenario {

Fabric::Fabric(uint64_t seed, uint32_t threads)
    : sim_(threads == 0 ? std::make_unique<sim::Simulator>(seed)
                        : std::make_unique<sim::Simulator>(seed, sim::Partitioned{threads})) {}

size_t Fabric::add_switch(const std::string& name, sw::SwitchConfig cfg) {
  Switch s;
  s.cfg = std::make_unique<sw::SwitchConfig>(std::move(cfg));
  std::vector<std::array<uint8_t, 6>> macs;
  for (size_t p = 0; p < s.cfg->ports.ports.size(); ++p) {
    macs.push_back({0x02, 0x53, 0x46, static_cast<uint8_t>(switches_.size()), 0, static_cast<uint8_t>(p)});
  }
  s.node = std::make_unique<sw::SwitchNode>(*s.cfg, macs, scenario_pool());
  s.id = sim_->add_node(*s.node, name);
  switches_.push_back(std::move(s));
  return switches_.size() - 1;
}

size_t Fabric::add_sender(const std::string& name, const SenderConfig& s) {
  senders_.push_back(std::make_unique<RoceSender>(scenario_pool(), s));
  sender_ids_.push_back(sim_->add_node(*senders_.back(), name));
  return senders_.size() - 1;
}

size_t Fabric::add_sink(const std::string& name, bool record_arrivals) {
  sinks_.push_back(std::make_unique<RoceSink>(record_arrivals));
  sink_ids_.push_back(sim_->add_node(*sinks_.back(), name));
  return sinks_.size() - 1;
}

sim::LinkId Fabric::link(size_t s, PortId port, sim::NodeId other, PortId other_port, TimeNs delay) {
  return sim_->connect(switches_[s].id, port, other, other_port,
                       sim::LinkParams{switches_[s].cfg->ports.ports[port].speed, delay});
}

uint64_t Fabric::sent_frames() const {
  uint64_t n = 0;
  for (const auto& s : senders_) n += s->sent_frames();
  return n;
}

uint64_t Fabric::delivered_frames() const {
  uint64_t n = 0;
  for (const auto& s : sinks_) n += s->frames();
  return n;
}

uint64_t Fabric::switch_drops() const {
  uint64_t n = 0;
  for (const auto& s : switches_) {
    for (uint16_t p = 0; p < s.node->num_ports(); ++p) n += s.node->counters(p).dropped;
  }
  return n;
}

uint64_t Fabric::drops(sw::DropCause c) const {
  uint64_t n = 0;
  for (const auto& s : switches_) {
    for (uint16_t p = 0; p < s.node->num_ports(); ++p) n += s.node->counters(p).drops[static_cast<size_t>(c)];
  }
  return n;
}

uint64_t Fabric::buffered_bytes() const {
  uint64_t n = 0;
  for (const auto& s : switches_) n += uint64_t{s.node->mmu().total_used()} * s.node->mmu().cell_bytes();
  return n;
}

bool Fabric::senders_done() const {
  for (const auto& s : senders_) {
    if (!s->done()) return false;
  }
  return true;
}

uint64_t Fabric::rx_pause(size_t s, PortId p) const {
  uint64_t n = 0;
  for (uint64_t v : switches_[s].node->pfc_rx(p).counters().pause_frames) n += v;
  return n;
}

uint64_t Fabric::tx_pause(size_t s, PortId p) const {
  uint64_t n = 0;
  for (uint64_t v : switches_[s].node->pfc_tx(p).counters().pause_frames) n += v;
  return n;
}

config::Json sized_doc(const std::string& rel_path, const std::vector<uint32_t>& gbps) {
  config::Json doc = load_config_doc(rel_path);
  const size_t orig = doc.at("PORT").size();
  if (gbps.size() > orig) {
    widen_ports(doc, gbps.size());
  } else if (gbps.size() < orig) {
    // Narrow: drop the extra ports and rename the all-ports keys.
    config::Json& ports = doc.at("PORT");
    std::string old_list;
    for (auto it = ports.begin(); it != ports.end(); ++it) old_list += (old_list.empty() ? "" : ",") + it.key();
    config::Json kept = config::Json::object();
    size_t i = 0;
    std::string new_list;
    for (auto it = ports.begin(); it != ports.end() && i < gbps.size(); ++it, ++i) {
      kept[it.key()] = it.value();
      new_list += (new_list.empty() ? "" : ",") + it.key();
    }
    ports = kept;
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
  size_t i = 0;
  for (auto it = doc.at("PORT").begin(); it != doc.at("PORT").end(); ++it, ++i) it.value()["speed"] = gbps[i];
  return doc;
}

void add_fdb(sw::SwitchConfig& c, const wire::MacAddr& mac, uint16_t port) { c.fdb.push_back({mac.bytes, sw::kDefaultVlan, port}); }

wire::MacAddr host_mac(size_t i) { return {{0x02, 0x00, 0x00, 0x00, 0x03, static_cast<uint8_t>(i)}}; }
wire::Ipv4Addr host_ip(size_t i) { return {{10, 0, 3, static_cast<uint8_t>(i + 1)}}; }

std::string write_result(const std::string& name, const config::Json& j) {
  const std::string path = output_dir() + "/scenario_" + name + ".json";
  std::ofstream out(path);
  out << j.dump(1) << '\n';
  if (!out) throw std::runtime_error("cannot write " + path);
  return path;
}

}  // namespace sf::scenario
