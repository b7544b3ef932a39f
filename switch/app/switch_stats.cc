// JSON views of switch counters. See switch_stats.h.
#include "switch/app/switch_stats.h"

#include <arpa/inet.h>

#include <cstdio>

namespace sf::sw {

namespace {

std::string ip_string(bool v6, const std::array<uint8_t, 16>& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, a.data(), buf, sizeof(buf));
  return buf;
}

}  // namespace

// A router port's interfaces, ARP / ND counters and the next hops on it
// (docs/switch.md "Router interfaces").
nlohmann::json router_if_snapshot(const RouterIf& rif, PortId p) {
  const RouterIfCounters& c = rif.counters(p);
  nlohmann::json addrs = nlohmann::json::array();
  for (const RouterInterface& r : rif.interfaces()) {
    if (r.port == p) addrs.push_back(ip_string(r.v6, r.addr) + "/" + std::to_string(r.prefix_len));
  }
  nlohmann::json bad = nlohmann::json::object();
  for (size_t e = 0; e < wire::kNumNeighborErrors; ++e) {
    if (c.bad_by[e] != 0) bad[std::string(wire::to_string(static_cast<wire::NeighborError>(e)))] = c.bad_by[e];
  }
  nlohmann::json nb = nlohmann::json::array();
  for (const RouterIf::NeighborView& n : rif.neighbors()) {
    if (n.port != p) continue;
    char mac[18];
    std::snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", n.mac[0], n.mac[1], n.mac[2], n.mac[3], n.mac[4],
                  n.mac[5]);
    nlohmann::json e = {{"ip", ip_string(n.v6, n.ip)}, {"state", n.resolved ? "resolved" : "incomplete"},
                        {"solicits", n.solicits}};
    if (n.resolved) e["mac"] = mac;
    nb.push_back(e);
  }
  return {{"addresses", addrs},        {"rx_arp_request", c.rx_arp_request}, {"rx_arp_reply", c.rx_arp_reply},
          {"rx_ns", c.rx_ns},          {"rx_na", c.rx_na},                   {"tx_arp_reply", c.tx_arp_reply},
          {"tx_na", c.tx_na},          {"not_ours", c.not_ours},                 {"gleaned", c.gleaned},
          {"neighbor_moves", c.neighbor_moves}, {"no_room", c.no_room},       {"bad", c.bad},
          {"bad_by", bad},             {"neighbors", nb}};
}

nlohmann::json port_snapshot(const SwitchView& v, const SwitchConfig& cfg, PortId p) {
  const SwitchNode& node = v.owner(p);
  const PortCounters c = v.counters(p);
  const Mmu& mmu = node.mmu();
  const uint64_t cell = mmu.cell_bytes();
  nlohmann::json j;
  j["name"] = cfg.ports.ports[p].name;
  j["rx_packets"] = c.rx_packets;
  j["rx_bytes"] = c.rx_bytes;
  j["tx_packets"] = c.tx_packets;
  j["tx_bytes"] = c.tx_bytes;
  j["dropped"] = c.dropped;
  j["dropped_mac_control"] = c.dropped_mac_control;
  j["rx_mac_control"] = c.rx_mac_control;
  j["flooded"] = c.flooded;
  j["flood_extra_copies"] = c.flood_extra_copies;
  j["routed"] = c.routed;
  j["held_at_ingress"] = c.held;
  j["tx_pfc_frames"] = c.tx_pfc_frames;
  {
    const PortStates& st = node.port_states();
    const uint8_t b = st.bits(p);
    j["admin_status"] = (b & kPortAdminUp) ? "up" : "down";
    j["oper_status"] = st.oper_up(p) ? "up" : "down";
    j["down_events"] = c.down_events;
    if (b & kPortBlackhole) j["blackhole"] = true;
    if (b & kPortLossy) j["loss_rate"] = st.loss(p);
  }
  if (node.credit(p) != nullptr) j["credit"] = credit_snapshot(node, p);  // CREDIT_FC ports
  if (c.rx_credit_ignored != 0) j["rx_credit_ignored"] = c.rx_credit_ignored;
  if (const RouterIf* rif = node.router_if(); rif != nullptr && rif->port_on(p)) {  // INTERFACE ports
    j["rx_trapped"] = c.rx_trapped;
    j["neighbor_solicits"] = c.neighbor_solicits;
    j["router_if"] = router_if_snapshot(*rif, p);
  }
  // PFC per priority under mlx5's names (ethtool -S).
  const PfcRxCounters& rx = node.pfc_rx(p).counters();
  const PfcTxCounters& tx = node.pfc_tx(p).counters();
  nlohmann::json pfc = nlohmann::json::object();
  for (int prio = 0; prio < kPfcPrios; ++prio) {
    const std::string n = "prio" + std::to_string(prio);
    if (rx.pause_frames[prio] == 0 && tx.pause_frames[prio] == 0 && tx.xon_frames[prio] == 0) continue;
    pfc["rx_" + n + "_pause"] = rx.pause_frames[prio];
    pfc["rx_" + n + "_pause_duration"] = node.pfc_rx(p).pause_duration_at(prio, node.last_now()).ns() / 1000;  // us
    pfc["rx_" + n + "_pause_transition"] = rx.transitions[prio];
    pfc["tx_" + n + "_pause"] = tx.pause_frames[prio];
    pfc["tx_" + n + "_xon"] = tx.xon_frames[prio];
    pfc["tx_" + n + "_pause_duration"] = tx.pause_duration[prio].ns() / 1000;
  }
  pfc["rx_global_pause"] = rx.global_pause_frames;
  pfc["rx_ignored_pause"] = rx.ignored_frames;
  pfc["rx_unsupported_op"] = c.rx_unsupported_op;
  pfc["rx_mac_control_bad_da"] = c.rx_mac_control_bad_da;
  pfc["rx_mac_control_malformed"] = c.rx_mac_control_malformed;
  pfc["rx_pfc_disabled_prio"] = c.rx_pfc_disabled_prio;
  pfc["rx_pfc_reserved_bits"] = c.rx_pfc_reserved_bits;
  j["pfc"] = pfc;
  // PFC watchdog per guarded queue (SONiC PFC_WD_QUEUE_STATS_* names).
  if (const PfcWatchdog* wd = node.pfc_wd(p)) {
    const PfcWdCounters& w = wd->counters();
    nlohmann::json wj = {{"action", std::string(to_string(wd->config().action))},
                         {"detection_time_us", wd->config().detection.ns() / 1000},
                         {"restoration_time_us", wd->config().restoration.ns() / 1000},
                         {"stormed_queues", wd->stormed()}};
    for (uint8_t q = 0; q < kNumQueues; ++q) {
      if (!((wd->config().queues >> q) & 1u)) continue;
      wj["queues"].push_back({{"queue", q},
                              {"status", (wd->stormed() >> q) & 1u ? "stormed" : "operational"},
                              {"deadlock_detected", w.storms[q]},
                              {"deadlock_restored", w.restores[q]},
                              {"tx_dropped_packets", w.tx_dropped[q]},
                              {"rx_dropped_packets", w.rx_dropped[q]},
                              {"rx_ignored_pause", w.rx_ignored_pause[q]}});
    }
    j["pfc_wd"] = wj;
  }
  j["trimmed"] = c.trimmed;
  j["trimmed_tx"] = c.trimmed_tx;
  j["trimmed_dropped"] = c.trimmed_dropped;
  if (p < cfg.int_queues.size() && cfg.int_queues[p] != 0) {
    j["int"] = {{"queues_mask", cfg.int_queues[p]}, {"records", c.int_records}, {"bytes", c.int_bytes},
                {"full", c.int_full},           {"no_room", c.int_no_room}, {"bad_shim", c.int_bad_shim}};
  }
  nlohmann::json drops = nlohmann::json::object();
  for (size_t i = 0; i < kNumDropCauses; ++i) {
    if (c.drops[i] != 0) drops[std::string(to_string(static_cast<DropCause>(i)))] = c.drops[i];
  }
  j["drops"] = drops;
  for (uint8_t q = 0; q < kNumQueues; ++q) {
    const QueueCounters& qc = c.queues[q];
    j["queues"].push_back({{"queue", q},
                           {"tx_packets", qc.tx_packets},
                           {"tx_bytes", qc.tx_bytes},
                           {"ecn_marked", qc.ecn_marked},
                           {"dropped", qc.dropped},
                           {"depth_bytes", node.queue_bytes(p, q)},
                           {"depth_packets", node.queue_packets(p, q)},
                           {"watermark_bytes", qc.watermark_bytes},
                           {"occupancy_cells", mmu.queue_use(p, q).used},
                           {"paused", (node.paused(p) >> q & 1u) != 0}});
  }
  for (uint8_t g = 0; g < kNumPgs; ++g) {
    const BufferUse& u = mmu.pg_use(p, g);
    j["pgs"].push_back({{"pg", g},
                        {"occupancy_bytes", u.used * cell},
                        {"shared_bytes", u.shared * cell},
                        {"headroom_bytes", u.hdrm * cell},
                        {"watermark_bytes", u.watermark * cell},
                        {"held_packets", v.held_packets(p, g)}});
  }
  return j;
}

nlohmann::json switch_snapshot(const SwitchView& v, const SwitchConfig& cfg) {
  nlohmann::json j;
  const bool sharded = v.num_shards() > 1;
  for (PortId p = 0; p < v.num_ports(); ++p) {
    j["ports"].push_back(port_snapshot(v, cfg, p));
    if (sharded) j["ports"][p]["shard"] = v.shard_of(p);
  }
  const SwitchNode& node = v.shard(0);
  const Mmu& mmu = node.mmu();  // pool and buffer counters: the whole switch's
  const uint64_t cell = mmu.cell_bytes();
  for (size_t i = 0; i < cfg.mmu.pools.size(); ++i) {
    const auto pool = static_cast<uint16_t>(i);
    j["pools"].push_back({{"name", cfg.mmu.pools[i].name},
                          {"type", cfg.mmu.pools[i].dir == PoolDir::kIngress ? "ingress" : "egress"},
                          {"size_bytes", cfg.mmu.pools[i].size_bytes},
                          {"shared_used_bytes", mmu.pool_shared_used(pool) * cell},
                          {"shared_free_bytes", mmu.pool_free(pool) * cell},
                          {"watermark_bytes", mmu.pool_watermark(pool) * cell},
                          {"headroom_used_bytes", mmu.hdrm_pool_used(pool) * cell}});
  }
  j["buffer"] = {{"total_bytes", uint64_t{mmu.total_cells()} * cell}, {"used_bytes", uint64_t{mmu.total_used()} * cell},
                 {"cell_bytes", cell}};
  const FdbStats& f = node.fdb().stats();
  nlohmann::json wd_log = nlohmann::json::array();
  uint64_t wd_events = 0;
  for (uint16_t s = 0; s < v.num_shards(); ++s) {  // a port's events are logged by its shard
    wd_events += v.shard(s).pfc_wd_events();
    for (const SwitchNode::PfcWdLogEntry& e : v.shard(s).pfc_wd_log()) {
      wd_log.push_back({{"t_us", static_cast<double>(e.at.ns()) / 1000.0},
                        {"port", cfg.ports.ports[e.port].name},
                        {"queue", e.queue},
                        {"event", e.storm ? "storm" : "restore"}});
    }
  }
  j["pfc_wd_events"] = {{"total", wd_events}, {"log", wd_log}};
  uint64_t trimmed = 0, trimmed_tx = 0, trimmed_dropped = 0;
  for (PortId p = 0; p < v.num_ports(); ++p) {
    const PortCounters c = v.counters(p);
    trimmed += c.trimmed;
    trimmed_tx += c.trimmed_tx;
    trimmed_dropped += c.trimmed_dropped;
  }
  j["trimming"] = {{"trimmed", trimmed}, {"trimmed_tx", trimmed_tx}, {"trimmed_dropped", trimmed_dropped}};
  uint64_t int_records = 0, int_bytes = 0, int_full = 0, int_no_room = 0, int_bad_shim = 0;
  for (PortId p = 0; p < v.num_ports(); ++p) {
    const PortCounters c = v.counters(p);
    int_records += c.int_records;
    int_bytes += c.int_bytes;
    int_full += c.int_full;
    int_no_room += c.int_no_room;
    int_bad_shim += c.int_bad_shim;
  }
  j["int"] = {{"records", int_records}, {"bytes", int_bytes}, {"full", int_full}, {"no_room", int_no_room},
              {"bad_shim", int_bad_shim}};
  j["fdb"] = {{"entries", node.fdb().size()}, {"learned", f.learned}, {"moved", f.moved},
              {"aged", f.aged},             {"table_full", f.table_full}};
  if (sharded) {
    for (uint16_t s = 0; s < v.num_shards(); ++s) {
      const ShardCounters& sc = v.sharded()->shard_counters(s);
      nlohmann::json names = nlohmann::json::array();
      for (PortId p = 0; p < v.num_ports(); ++p) {
        if (v.shard_of(p) == s) names.push_back(cfg.ports.ports[p].name);
      }
      j["shards"].push_back({{"shard", s},
                             {"ports", names},
                             {"forwarded", sc.forwarded},
                             {"received", sc.received},
                             {"releases_sent", sc.releases_sent},
                             {"releases_received", sc.releases_received},
                             {"credit_notes_sent", sc.credit_notes_sent},
                             {"credit_notes_received", sc.credit_notes_received},
                             {"ring_full", sc.ring_full},
                             {"release_ring_full", sc.release_ring_full}});
    }
  }
  return j;
}

nlohmann::json credit_snapshot(const SwitchNode& node, PortId p) {
  const CreditPort* cp = node.credit(p);
  if (cp == nullptr) return nullptr;
  const CreditCounters c = cp->counters();
  nlohmann::json j;
  j["credit_stalls"] = c.credit_stalls;
  j["stalled_us"] = c.stalled_time.ns() / 1000;
  // Bucket b counts ended stalls of [floor_us[b], floor_us[b + 1]) us; the last is open-ended.
  for (int b = 0; b < kStallBuckets; ++b) {
    j["stall_histogram"].push_back(c.stall_histogram[b]);
    j["stall_histogram_floor_us"].push_back(stall_bucket_floor_us(b));
  }
  j["tx_credit_updates"] = c.tx_updates;
  j["rx_credit_updates"] = c.rx_updates;
  j["rx_credit_malformed"] = c.rx_malformed;
  nlohmann::json why = nlohmann::json::object();
  for (size_t r = 1; r < c.rx_malformed_by_reason.size(); ++r) {
    if (c.rx_malformed_by_reason[r] != 0) {
      why[std::string(wire::to_string(static_cast<wire::CreditParseReason>(r)))] = c.rx_malformed_by_reason[r];
    }
  }
  j["rx_credit_malformed_by_reason"] = why;
  j["rx_credit_unknown_vl"] = c.rx_unknown_vl;
  j["rx_overrun"] = c.rx_overrun;
  j["tx_without_credit"] = c.tx_without_credit;
  j["update_alloc_failures"] = c.alloc_failures;
  const CreditFcConfig& f = cp->config();
  for (int vl = 0; vl < kMaxVls; ++vl) {
    if (!f.vl_valid(vl)) continue;
    j["vls"].push_back({{"vl", vl},
                        {"credits_available", cp->sender().available(vl)},
                        {"stalled", cp->sender().stalled(vl)},
                        {"stalls", cp->sender().stalls(vl).stalls},
                        {"rx_occupied", cp->receiver().occupied(vl)},
                        {"rx_granted_total", cp->receiver().granted_total(vl)}});
  }
  return j;
}

nlohmann::json timeseries_sample(const SwitchView& v, const SwitchConfig& cfg, double t_s) {
  nlohmann::json j;
  j["t_s"] = t_s;
  for (PortId p = 0; p < v.num_ports(); ++p) {
    const SwitchNode& node = v.owner(p);
    const PortCounters c = v.counters(p);
    nlohmann::json q = nlohmann::json::array();
    for (uint8_t i = 0; i < kNumQueues; ++i) {
      const QueueCounters& qc = c.queues[i];
      q.push_back({node.queue_bytes(p, i), qc.ecn_marked, qc.dropped, qc.tx_bytes});
    }
    // PFC pause frames summed over priorities: the lab's telemetry poll
    // (tools/lab launch.py poll_telemetry) reads the same three counters.
    const PfcRxCounters& prx = node.pfc_rx(p).counters();
    const PfcTxCounters& ptx = node.pfc_tx(p).counters();
    uint64_t rx_pause = 0, tx_pause = 0;
    for (int prio = 0; prio < kPfcPrios; ++prio) {
      rx_pause += prx.pause_frames[prio];
      tx_pause += ptx.pause_frames[prio];
    }
    nlohmann::json& pj = j["ports"][cfg.ports.ports[p].name];
    pj = {{"rx_bytes", c.rx_bytes},
          {"tx_bytes", c.tx_bytes},
          {"dropped", c.dropped},
          {"paused", node.paused(p)},
          {"queues", q},
          {"rx_pause", rx_pause},
          {"tx_pause", tx_pause},
          {"tx_pfc_frames", c.tx_pfc_frames}};
    // Ports the PFC watchdog guards: the queues it holds stormed now (bit = queue).
    if (const PfcWatchdog* wd = node.pfc_wd(p)) pj["pfc_wd_stormed"] = wd->stormed();
  }
  j["buffer_used_bytes"] = uint64_t{v.shard(0).mmu().total_used()} * v.shard(0).mmu().cell_bytes();
  return j;
}

}  // namespace sf::sw
