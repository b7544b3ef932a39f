// DPDK telemetry for sf-switch. See telemetry.h.
#include "switch/app/telemetry.h"

#include "switch/app/telemetry_ops.h"
#include "switch/app/telemetry_util.h"

#include <rte_telemetry.h>

#include <cstdlib>
#include <string>

namespace sf::sw {
namespace {

// Telemetry callbacks carry no user pointer in DPDK 22.11.
const SwitchView* g_view = nullptr;
const SwitchConfig* g_cfg = nullptr;

int find_port(const char* params) { return telemetry_find_port(*g_view, *g_cfg, params); }

// "NAME_OR_INDEX,VALUE" -> port index and VALUE (-1: bad port or no value).
int split_port_value(const char* params, std::string* value) {
  if (params == nullptr) return -1;
  const std::string text(params);
  const size_t comma = text.find(',');
  if (comma == std::string::npos) return -1;
  *value = text.substr(comma + 1);
  return find_port(text.substr(0, comma).c_str());
}

// The port's state as the datapath applied it (requests land within a loop iteration).
void add_port_state(rte_tel_data* d, PortId p) {
  const PortStates& st = g_view->owner(p).port_states();
  const uint8_t b = st.bits(p);
  rte_tel_data_add_dict_string(d, "admin_status", (b & kPortAdminUp) ? "up" : "down");
  rte_tel_data_add_dict_string(d, "link_status", (b & kPortLinkUp) ? "up" : "down");
  rte_tel_data_add_dict_string(d, "oper_status", st.oper_up(p) ? "up" : "down");
  rte_tel_data_add_dict_string(d, "blackhole", (b & kPortBlackhole) ? "on" : "off");
  rte_tel_data_add_dict_string(d, "loss_rate", std::to_string((b & kPortLossy) ? st.loss(p) : 0.0).c_str());
}

// Port state changes: "PORT,VALUE". The request is applied by the port's
// datapath lcore; the answer is the state requested and the state so far.
int cmd_set_port(const char* cmd, const char* params, rte_tel_data* d) {
  std::string v;
  const int pi = split_port_value(params, &v);
  if (pi < 0) return -1;
  const auto p = static_cast<PortId>(pi);
  PortStates& req = g_view->owner(p).port_requests();
  const std::string c(cmd);
  if (c.ends_with("port_admin")) {
    if (v != "up" && v != "down") return -1;
    req.request(p, PortStates::Field::kAdmin, v == "up");
  } else if (c.ends_with("port_blackhole")) {
    if (v != "on" && v != "off") return -1;
    req.request(p, PortStates::Field::kBlackhole, v == "on");
  } else if (c.ends_with("port_loss")) {
    char* end = nullptr;
    const double rate = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(rate >= 0 && rate <= 1)) return -1;
    req.request_loss(p, rate);
  } else {
    return -1;
  }
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "name", g_cfg->ports.ports[p].name.c_str());
  rte_tel_data_add_dict_string(d, "requested", v.c_str());
  add_port_state(d, p);
  return 0;
}

// Reboot: every shard flushes its queues and the FDB forgets what it learned.
int cmd_reset(const char*, const char*, rte_tel_data* d) {
  g_view->shard(0).port_requests().request_reset();
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "reset", "requested");
  return 0;
}

int cmd_ports(const char*, const char*, rte_tel_data* d) {
  rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
  for (const auto& p : g_cfg->ports.ports) rte_tel_data_add_array_string(d, p.name.c_str());
  return 0;
}

int cmd_port(const char*, const char* params, rte_tel_data* d) {
  const int pi = find_port(params);
  if (pi < 0) return -1;
  const auto p = static_cast<PortId>(pi);
  const SwitchNode* node = &g_view->owner(p);  // the shard that owns the port
  const PortCounters c = g_view->counters(p);
  const Mmu& mmu = node->mmu();
  const uint64_t cell = mmu.cell_bytes();
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "name", g_cfg->ports.ports[p].name.c_str());
  add_port_state(d, p);
  rte_tel_data_add_dict_u64(d, "down_events", c.down_events);
  rte_tel_data_add_dict_u64(d, "rx_packets", c.rx_packets);
  rte_tel_data_add_dict_u64(d, "rx_bytes", c.rx_bytes);
  rte_tel_data_add_dict_u64(d, "tx_packets", c.tx_packets);
  rte_tel_data_add_dict_u64(d, "tx_bytes", c.tx_bytes);
  rte_tel_data_add_dict_u64(d, "dropped", c.dropped);
  rte_tel_data_add_dict_u64(d, "dropped_mac_control", c.dropped_mac_control);
  rte_tel_data_add_dict_u64(d, "rx_mac_control", c.rx_mac_control);
  rte_tel_data_add_dict_u64(d, "flooded", c.flooded);
  rte_tel_data_add_dict_u64(d, "routed", c.routed);
  rte_tel_data_add_dict_u64(d, "held_at_ingress", c.held);
  rte_tel_data_add_dict_u64(d, "shard", g_view->shard_of(p));
  for (size_t i = 0; i < kNumDropCauses; ++i) {
    const std::string key = "drop_" + std::string(to_string(static_cast<DropCause>(i)));
    rte_tel_data_add_dict_u64(d, key.c_str(), c.drops[i]);
  }
  rte_tel_data_add_dict_u64(d, "paused_queues_mask", node->paused(p));
  rte_tel_data_add_dict_u64(d, "tx_pfc_frames", c.tx_pfc_frames);
  const PfcRxCounters& prx = node->pfc_rx(p).counters();
  const PfcTxCounters& ptx = node->pfc_tx(p).counters();
  add_array8(d, "rx_prio_pause", [&](uint8_t i) { return prx.pause_frames[i]; });
  add_array8(d, "rx_prio_pause_duration_us", [&](uint8_t i) { return static_cast<uint64_t>(prx.pause_duration[i].ns() / 1000); });
  add_array8(d, "tx_prio_pause", [&](uint8_t i) { return ptx.pause_frames[i]; });
  add_array8(d, "rx_prio_pause_transition", [&](uint8_t i) { return prx.transitions[i]; });
  add_array8(d, "tx_prio_pause_duration_us", [&](uint8_t i) { return static_cast<uint64_t>(ptx.pause_duration[i].ns() / 1000); });
  rte_tel_data_add_dict_u64(d, "rx_unsupported_op", c.rx_unsupported_op);
  rte_tel_data_add_dict_u64(d, "rx_mac_control_bad_da", c.rx_mac_control_bad_da);
  rte_tel_data_add_dict_u64(d, "rx_mac_control_malformed", c.rx_mac_control_malformed);
  rte_tel_data_add_dict_u64(d, "rx_pfc_disabled_prio", c.rx_pfc_disabled_prio);
  rte_tel_data_add_dict_u64(d, "trimmed", c.trimmed);
  rte_tel_data_add_dict_u64(d, "trimmed_tx", c.trimmed_tx);
  rte_tel_data_add_dict_u64(d, "trimmed_dropped", c.trimmed_dropped);
  rte_tel_data_add_dict_u64(d, "int_records", c.int_records);
  rte_tel_data_add_dict_u64(d, "int_bytes", c.int_bytes);
  rte_tel_data_add_dict_u64(d, "int_full", c.int_full);
  rte_tel_data_add_dict_u64(d, "int_no_room", c.int_no_room);
  rte_tel_data_add_dict_u64(d, "int_bad_shim", c.int_bad_shim);
  if (const PfcWatchdog* wd = node->pfc_wd(p)) {
    rte_tel_data_add_dict_u64(d, "pfcwd_stormed_queues_mask", wd->stormed());
    add_array8(d, "pfcwd_deadlock_detected", [&](uint8_t q) { return wd->counters().storms[q]; });
    add_array8(d, "pfcwd_deadlock_restored", [&](uint8_t q) { return wd->counters().restores[q]; });
    add_array8(d, "pfcwd_tx_dropped", [&](uint8_t q) { return wd->counters().tx_dropped[q]; });
    add_array8(d, "pfcwd_rx_dropped", [&](uint8_t q) { return wd->counters().rx_dropped[q]; });
  }
  add_array8(d, "queue_depth_bytes", [&](uint8_t q) { return node->queue_bytes(p, q); });
  add_array8(d, "queue_watermark_bytes", [&](uint8_t q) { return c.queues[q].watermark_bytes; });
  add_array8(d, "queue_tx_packets", [&](uint8_t q) { return c.queues[q].tx_packets; });
  add_array8(d, "queue_tx_bytes", [&](uint8_t q) { return c.queues[q].tx_bytes; });
  add_array8(d, "queue_ecn_marked", [&](uint8_t q) { return c.queues[q].ecn_marked; });
  add_array8(d, "queue_dropped", [&](uint8_t q) { return c.queues[q].dropped; });
  add_array8(d, "pg_occupancy_bytes", [&](uint8_t g) { return uint64_t{mmu.pg_use(p, g).used} * cell; });
  add_array8(d, "pg_headroom_bytes", [&](uint8_t g) { return uint64_t{mmu.pg_use(p, g).hdrm} * cell; });
  add_array8(d, "pg_watermark_bytes", [&](uint8_t g) { return uint64_t{mmu.pg_use(p, g).watermark} * cell; });
  return 0;
}

int cmd_buffer(const char*, const char*, rte_tel_data* d) {
  const Mmu& mmu = g_view->shard(0).mmu();  // pool counters are the whole switch's
  const uint64_t cell = mmu.cell_bytes();
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_u64(d, "cell_bytes", cell);
  rte_tel_data_add_dict_u64(d, "total_bytes", uint64_t{mmu.total_cells()} * cell);
  rte_tel_data_add_dict_u64(d, "used_bytes", uint64_t{mmu.total_used()} * cell);
  for (size_t i = 0; i < g_cfg->mmu.pools.size(); ++i) {
    const auto pool = static_cast<uint16_t>(i);
    const std::string& n = g_cfg->mmu.pools[i].name;
    rte_tel_data_add_dict_u64(d, (n + "_shared_used_bytes").c_str(), uint64_t{mmu.pool_shared_used(pool)} * cell);
    rte_tel_data_add_dict_u64(d, (n + "_shared_free_bytes").c_str(), uint64_t{mmu.pool_free(pool)} * cell);
    rte_tel_data_add_dict_u64(d, (n + "_watermark_bytes").c_str(), uint64_t{mmu.pool_watermark(pool)} * cell);
    rte_tel_data_add_dict_u64(d, (n + "_headroom_used_bytes").c_str(), uint64_t{mmu.hdrm_pool_used(pool)} * cell);
  }
  return 0;
}

int cmd_fdb(const char*, const char*, rte_tel_data* d) {
  const Fdb& fdb = g_view->shard(0).fdb();  // shared by the shards
  const FdbStats& f = fdb.stats();
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_u64(d, "entries", fdb.size());
  rte_tel_data_add_dict_u64(d, "learned", f.learned);
  rte_tel_data_add_dict_u64(d, "moved", f.moved);
  rte_tel_data_add_dict_u64(d, "aged", f.aged);
  rte_tel_data_add_dict_u64(d, "table_full", f.table_full);
  return 0;
}

// Credit-based link FC of a CREDIT_FC port (an error for a PFC port).
int cmd_credit(const char*, const char* params, rte_tel_data* d) {
  const int pi = find_port(params);
  if (pi < 0) return -1;
  const CreditPort* cp = g_view->owner(static_cast<PortId>(pi)).credit(static_cast<PortId>(pi));
  if (cp == nullptr) return -1;
  const CreditCounters c = cp->counters();
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_u64(d, "credit_stalls", c.credit_stalls);
  rte_tel_data_add_dict_u64(d, "stalled_us", static_cast<uint64_t>(c.stalled_time.ns() / 1000));
  rte_tel_data* h = rte_tel_data_alloc();
  if (h == nullptr) return -1;
  rte_tel_data_start_array(h, RTE_TEL_U64_VAL);
  for (int b = 0; b < kStallBuckets; ++b) rte_tel_data_add_array_u64(h, c.stall_histogram[b]);
  rte_tel_data_add_dict_container(d, "stall_histogram_pow2_us", h, 0);
  rte_tel_data_add_dict_u64(d, "tx_credit_updates", c.tx_updates);
  rte_tel_data_add_dict_u64(d, "rx_credit_updates", c.rx_updates);
  rte_tel_data_add_dict_u64(d, "rx_credit_malformed", c.rx_malformed);
  rte_tel_data_add_dict_u64(d, "rx_credit_unknown_vl", c.rx_unknown_vl);
  rte_tel_data_add_dict_u64(d, "rx_overrun", c.rx_overrun);
  rte_tel_data_add_dict_u64(d, "tx_without_credit", c.tx_without_credit);
  return 0;
}

}  // namespace

bool register_switch_telemetry(const SwitchView& v, const SwitchConfig& cfg) {
  static SwitchView view = v;  // a copy: the caller's may be a temporary
  view = v;
  g_view = &view;
  g_cfg = &cfg;
  bool ok = rte_telemetry_register_cmd("/softfabric/switch/ports", cmd_ports, "Port names. Takes no parameters") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/switch/port", cmd_port,
                                   "Counters, drops by cause, queue and PG arrays. Parameter: port index or name") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/switch/buffer", cmd_buffer,
                                   "Shared buffer and pool usage. Takes no parameters") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/switch/fdb", cmd_fdb, "FDB counters. Takes no parameters") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/switch/credit", cmd_credit,
                                   "Credit FC stalls, stall histogram, update frames. Parameter: port index or name") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/switch/port_admin", cmd_set_port,
                                   "Set a port's admin status. Parameters: port index or name, up|down") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/switch/port_blackhole", cmd_set_port,
                                   "Drop everything to and from a port, link up. Parameters: port, on|off") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/switch/port_loss", cmd_set_port,
                                   "Random loss rate in [0, 1] on a port, both directions. Parameters: port, rate") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/switch/reset", cmd_reset,
                                   "Reboot: flush every queue, forget learned FDB entries. Takes no parameters") == 0;
  ok &= register_switch_ops_telemetry(v, cfg);  // sf-cli's (telemetry_ops.h)
  return ok;
}

}  // namespace sf::sw
