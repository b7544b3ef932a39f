// SONiC-style switch configuration loader. See switch_config.h and
// docs/config-reference.md. SONiC's config_db.json writes numbers as strings
// ("size": "16777216", "dynamic_th": "-3"); both spellings are accepted.
#include "switch/config/switch_config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

#include "common/config/json_loader.h"
#include "switch/lossless/headroom.h"
#include "switch/config/credit_fc_config.h"

namespace sf::sw {
namespace {

using config::ConfigError;
using config::ConfigNode;
using config::EnumName;
using config::Json;
using config::in_range;

int64_t req_int(ConfigNode& obj, std::string_view key, int64_t lo, int64_t hi) {
  return obj.child(key).as_int_or_string(lo, hi);
}

std::optional<int64_t> opt_int(ConfigNode& obj, std::string_view key, int64_t lo, int64_t hi) {
  auto c = obj.opt_child(key);
  if (!c) return std::nullopt;
  return c->as_int_or_string(lo, hi);
}

bool opt_bool_str(ConfigNode& obj, std::string_view key, bool def) {
  auto c = obj.opt_child(key);
  if (!c) return def;
  if (c->json().is_boolean()) return c->json().get<bool>();
  const std::string s = c->as<std::string>();
  if (s == "true") return true;
  if (s == "false") return false;
  c->fail("expected true or false, got \"" + s + "\"");
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t i = s.find(sep, start);
    out.push_back(s.substr(start, i == std::string_view::npos ? std::string_view::npos : i - start));
    if (i == std::string_view::npos) break;
    start = i + 1;
  }
  return out;
}

// "3", "3-4", "0,1,5-6" -> bitmask of indices 0..7.
uint8_t parse_index_set(const ConfigNode& at, std::string_view s, std::string_view what) {
  uint8_t mask = 0;
  for (std::string_view part : split(s, ',')) {
    const size_t dash = part.find('-');
    int lo = 0;
    int hi = 0;
    auto num = [&](std::string_view t, int* v) {
      const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), *v);
      return ec == std::errc() && p == t.data() + t.size() && *v >= 0 && *v <= 7;
    };
    const bool ok = dash == std::string_view::npos ? num(part, &lo) && (hi = lo, true)
                                                   : num(part.substr(0, dash), &lo) && num(part.substr(dash + 1), &hi);
    if (!ok || lo > hi) at.fail("bad " + std::string(what) + " \"" + std::string(s) + "\" (want 0..7, e.g. 3 or 3-4)");
    for (int i = lo; i <= hi; ++i) mask = static_cast<uint8_t>(mask | 1u << i);
  }
  return mask;
}

uint16_t port_index(const SwitchConfig& c, const ConfigNode& at, std::string_view name) {
  const int i = c.ports.find(name);
  if (i < 0) at.fail("unknown port \"" + std::string(name) + "\" (not in PORT)");
  return static_cast<uint16_t>(i);
}

// "Ethernet0,Ethernet4|3-4" -> ports and an index mask.
std::pair<std::vector<uint16_t>, uint8_t> parse_port_index_key(const SwitchConfig& c, const ConfigNode& at,
                                                               std::string_view key, std::string_view what) {
  const size_t bar = key.find('|');
  if (bar == std::string_view::npos) at.fail("key must be <port>[,<port>...]|<" + std::string(what) + "s>");
  std::vector<uint16_t> ports;
  for (std::string_view p : split(key.substr(0, bar), ',')) ports.push_back(port_index(c, at, p));
  return {ports, parse_index_set(at, key.substr(bar + 1), what)};
}

std::array<uint8_t, 6> mac_of(const ConfigNode& at, const std::string& s) {
  const auto m = config::parse_mac(s);
  if (!m) at.fail("bad MAC address \"" + s + "\" (want aa:bb:cc:dd:ee:ff)");
  return m->bytes;
}

// ---- DEVICE_METADATA ------------------------------------------------------

void parse_device(ConfigNode& doc, SwitchConfig& c) {
  c.mmu.total_bytes = 32ull << 20;
  c.mmu.cell_bytes = 256;
  auto dm = doc.opt_child("DEVICE_METADATA");
  if (!dm) return;
  dm->expect_object();
  for (auto& [name, node] : dm->members()) {
    if (name != "localhost") node.fail("only \"localhost\" is supported");
    node.expect_object();
    c.mmu.total_bytes = node.opt_bytes("mmu_size", c.mmu.total_bytes, in_range<uint64_t>(64 << 10, 1ull << 32));
    c.mmu.cell_bytes = static_cast<uint32_t>(opt_int(node, "cell_size", 32, 4096).value_or(256));
    c.fdb_capacity = static_cast<uint32_t>(opt_int(node, "fdb_capacity", 16, 1 << 24).value_or(65536));
    c.fdb_ageing = node.opt_duration("fdb_ageing_time", c.fdb_ageing);
    c.seed_given = node.has("seed");
    c.seed = static_cast<uint64_t>(opt_int(node, "seed", 0, INT64_MAX).value_or(1));
    node.opt<std::string>("hostname", "");
    static constexpr EnumName<int> kModels[] = {{"traditional", 0}};
    node.opt_enum<int>("buffer_model", 0, kModels);
    node.finish();
  }
}

// ---- CABLE_LENGTH, LOSSLESS_TRAFFIC_PATTERN (inputs of the headroom calculator) --

// "5m", "40m", "300m" (SONiC writes the unit), or a number of metres.
double metres_of(const ConfigNode& n) {
  double v = -1;
  if (n.json().is_number()) {
    v = n.json().get<double>();
  } else if (n.json().is_string()) {
    std::string s = n.json().get<std::string>();
    if (!s.empty() && s.back() == 'm') s.pop_back();
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) v = -1;
  }
  if (!(v >= 0 && v <= 100000)) n.fail("expected a cable length such as \"5m\" (0..100000 m)");
  return v;
}

void parse_cables(ConfigNode& doc, SwitchConfig& c) {
  c.cable_m.assign(c.ports.ports.size(), 5.0);
  if (auto t = doc.opt_child("CABLE_LENGTH")) {
    t->expect_object();
    for (auto& [name, n] : t->members()) {
      n.expect_object();
      for (auto& [port, v] : n.members()) c.cable_m[port_index(c, v, port)] = metres_of(v);
    }
  }
  if (auto t = doc.opt_child("LOSSLESS_TRAFFIC_PATTERN")) {
    t->expect_object();
    for (auto& [name, n] : t->members()) {
      n.expect_object();
      c.lossless_mtu_bytes = static_cast<uint32_t>(opt_int(n, "mtu", 64, 9216).value_or(1500));
      c.small_packet_percentage = static_cast<uint32_t>(opt_int(n, "small_packet_percentage", 0, 100).value_or(100));
      n.finish();
    }
  }
}

// ---- buffers ---------------------------------------------------------------

void parse_buffers(ConfigNode& doc, SwitchConfig& c) {
  MmuConfig& m = c.mmu;
  std::map<std::string, uint16_t, std::less<>> pool_idx;
  std::map<std::string, int16_t, std::less<>> prof_idx;
  std::set<std::string, std::less<>> dynamic_headroom;  // profiles with headroom_type dynamic
  // Generated per-port lossless profiles: (template, speed, cable, MTU) -> index.
  std::map<std::tuple<int16_t, uint64_t, double, uint32_t>, int16_t> generated;
  static constexpr EnumName<PoolDir> kDirs[] = {{"ingress", PoolDir::kIngress}, {"egress", PoolDir::kEgress}};
  static constexpr EnumName<ThresholdMode> kModes[] = {{"static", ThresholdMode::kStatic},
                                                       {"dynamic", ThresholdMode::kDynamic}};
  static constexpr EnumName<DiscardAction> kDiscard[] = {{"drop", DiscardAction::kDrop},
                                                         {"trim", DiscardAction::kTrim}};

  if (auto pools = doc.opt_child("BUFFER_POOL")) {
    pools->expect_object();
    uint64_t ingress_total = 0;
    for (auto& [name, n] : pools->members()) {
      n.expect_object();
      PoolConfig p;
      p.name = name;
      p.dir = n.req_enum<PoolDir>("type", kDirs);
      p.mode = n.opt_enum<ThresholdMode>("mode", ThresholdMode::kDynamic, kModes);
      p.size_bytes = n.req_bytes("size", in_range<uint64_t>(m.cell_bytes, m.total_bytes));
      if (n.has("xoff")) {
        if (p.dir != PoolDir::kIngress) n.fail_key("xoff", "only ingress pools have a shared headroom pool");
        p.xoff_bytes = n.req_bytes("xoff", in_range<uint64_t>(0, m.total_bytes));
      }
      n.finish();
      if (p.dir == PoolDir::kIngress) {
        ingress_total += p.size_bytes + p.xoff_bytes;
        if (ingress_total > m.total_bytes) {
          n.fail_key("size", "ingress pools and headroom total " + std::to_string(ingress_total) +
                                 " exceed mmu_size " + std::to_string(m.total_bytes));
        }
      }
      pool_idx[name] = static_cast<uint16_t>(m.pools.size());
      m.pools.push_back(p);
    }
  }
  // Default pools and profiles for every PG / queue not named in BUFFER_PG /
  // BUFFER_QUEUE: alpha = 1 over a pool of the whole buffer.
  auto ensure_pool = [&](const char* name, PoolDir dir) {
    for (size_t i = 0; i < m.pools.size(); ++i) {
      if (m.pools[i].dir == dir) return static_cast<uint16_t>(i);
    }
    pool_idx[name] = static_cast<uint16_t>(m.pools.size());
    m.pools.push_back(PoolConfig{name, dir, ThresholdMode::kDynamic, m.total_bytes, 0});
    return static_cast<uint16_t>(m.pools.size() - 1);
  };

  if (auto profs = doc.opt_child("BUFFER_PROFILE")) {
    profs->expect_object();
    for (auto& [name, n] : profs->members()) {
      n.expect_object();
      ProfileConfig p;
      p.name = name;
      const std::string pool = n.req<std::string>("pool");
      const auto it = pool_idx.find(pool);
      if (it == pool_idx.end()) n.fail_key("pool", "unknown pool \"" + pool + "\" (not in BUFFER_POOL)");
      p.pool = it->second;
      const PoolConfig& pc = m.pools[p.pool];
      p.reserved_bytes = n.opt_bytes("size", 0, in_range<uint64_t>(0, pc.size_bytes));
      const bool has_dyn = n.has("dynamic_th");
      const bool has_static = n.has("static_th");
      if (has_dyn && has_static) n.fail("give dynamic_th or static_th, not both");
      if (pc.mode == ThresholdMode::kDynamic) {
        if (has_static) n.fail_key("static_th", "pool \"" + pool + "\" is dynamic; use dynamic_th");
        if (!has_dyn) n.fail("missing required key \"dynamic_th\" (pool \"" + pool + "\" is dynamic)");
        p.mode = ThresholdMode::kDynamic;
        p.dynamic_th = static_cast<int>(req_int(n, "dynamic_th", -8, 7));
      } else {
        if (has_dyn) n.fail_key("dynamic_th", "pool \"" + pool + "\" is static; use static_th");
        if (!has_static) n.fail("missing required key \"static_th\" (pool \"" + pool + "\" is static)");
        p.mode = ThresholdMode::kStatic;
        p.static_th_bytes = n.req_bytes("static_th");
        if (p.static_th_bytes > pc.size_bytes) {
          n.fail_key("static_th", std::to_string(p.static_th_bytes) + " exceeds pool size " +
                                      std::to_string(pc.size_bytes));
        }
      }
      static constexpr EnumName<bool> kHeadroomType[] = {{"static", false}, {"dynamic", true}};
      const bool dyn_headroom = n.opt_enum<bool>("headroom_type", false, kHeadroomType);
      if (dyn_headroom) {
        // SONiC dynamic model: xoff / xon come from each port's speed, cable
        // length and MTU (CABLE_LENGTH, LOSSLESS_TRAFFIC_PATTERN) when a PG is bound.
        if (pc.dir != PoolDir::kIngress) n.fail_key("headroom_type", "only ingress (PG) profiles have headroom");
        if (n.has("xoff") || n.has("xon")) n.fail_key("headroom_type", "dynamic headroom is computed; drop xoff / xon");
        p.xon_offset_bytes = n.opt_bytes("xon_offset", 0, in_range<uint64_t>(0, pc.size_bytes));
        dynamic_headroom.insert(name);
      } else if (n.has("xoff")) {
        if (pc.dir != PoolDir::kIngress) n.fail_key("xoff", "only ingress (PG) profiles have headroom");
        p.xoff_bytes = n.req_bytes("xoff");
        if (p.xoff_bytes > pc.size_bytes) {
          n.fail_key("xoff", std::to_string(p.xoff_bytes) + " exceeds pool size " + std::to_string(pc.size_bytes));
        }
        if (pc.xoff_bytes > 0 && p.xoff_bytes > pc.xoff_bytes) {
          n.fail_key("xoff", std::to_string(p.xoff_bytes) + " exceeds the shared headroom pool (BUFFER_POOL." + pool +
                                 ".xoff " + std::to_string(pc.xoff_bytes) + ")");
        }
        p.xon_bytes = n.opt_bytes("xon", 0, in_range<uint64_t>(0, pc.size_bytes));
        if (p.xon_bytes > p.xoff_bytes) {
          n.fail_key("xon", std::to_string(p.xon_bytes) + " exceeds xoff " + std::to_string(p.xoff_bytes) +
                                " (XON must resume below the XOFF point)");
        }
        p.xon_offset_bytes = n.opt_bytes("xon_offset", 0, in_range<uint64_t>(0, pc.size_bytes));
      } else if (n.has("xon") || n.has("xon_offset")) {
        n.fail("xon/xon_offset need xoff (a lossless PG profile)");
      }
      p.discard = n.opt_enum<DiscardAction>("packet_discard_action", DiscardAction::kDrop, kDiscard);
      n.finish();
      prof_idx[name] = static_cast<int16_t>(m.profiles.size());
      m.profiles.push_back(p);
    }
  }

  const size_t nports = c.ports.ports.size();
  const uint16_t ing_pool = ensure_pool("default_ingress_pool", PoolDir::kIngress);
  const uint16_t eg_pool = ensure_pool("default_egress_pool", PoolDir::kEgress);
  auto default_profile = [&](const char* name, uint16_t pool) {
    const PoolConfig& pc = m.pools[pool];
    ProfileConfig p;
    p.name = name;
    p.pool = pool;
    p.mode = pc.mode;
    p.dynamic_th = 0;
    p.static_th_bytes = pc.mode == ThresholdMode::kStatic ? pc.size_bytes : 0;
    m.profiles.push_back(p);
    return static_cast<int16_t>(m.profiles.size() - 1);
  };
  const int16_t def_ing = default_profile("default_ingress_profile", ing_pool);
  const int16_t def_eg = default_profile("default_egress_profile", eg_pool);
  m.pg_profile.assign(nports, {});
  m.queue_profile.assign(nports, {});
  for (auto& a : m.pg_profile) a.fill(def_ing);
  for (auto& a : m.queue_profile) a.fill(def_eg);

  // A copy of dynamic-headroom profile `tmpl` with xoff / xon for port `port`
  // (shared/reference/switch.md 2.3), one per (speed, cable, MTU).
  auto headroom_profile = [&](const ConfigNode& at, int16_t tmpl, uint16_t port) {
    const config::PortConfig& pc = c.ports.ports[port];
    const double cable = c.cable_m[port];
    const auto key = std::make_tuple(tmpl, pc.speed.bps(), cable, pc.mtu_bytes);
    if (auto it = generated.find(key); it != generated.end()) return it->second;
    ProfileConfig p = m.profiles[static_cast<size_t>(tmpl)];
    HeadroomParams hp;
    hp.speed = pc.speed;
    hp.cable_m = cable;
    hp.port_mtu_bytes = pc.mtu_bytes;
    hp.lossless_mtu_bytes = c.lossless_mtu_bytes;
    hp.small_packet_percentage = c.small_packet_percentage;
    hp.cell_bytes = m.cell_bytes;
    hp.shared_headroom_pool = m.pools[p.pool].xoff_bytes > 0;
    const Headroom h = compute_headroom(hp);
    p.xoff_bytes = h.xoff_bytes;
    p.xon_bytes = h.xon_bytes;
    const PoolConfig& pool = m.pools[p.pool];
    if (p.xoff_bytes > pool.size_bytes || (pool.xoff_bytes > 0 && p.xoff_bytes > pool.xoff_bytes)) {
      at.fail("computed headroom xoff " + std::to_string(p.xoff_bytes) + " for " + pc.name + " (" +
              std::to_string(pc.speed.bps() / 1000000) + "M, " + config::detail::num_str(cable) + "m) exceeds pool \"" +
              pool.name + "\"");
    }
    p.name = "pg_lossless_" + std::to_string(pc.speed.bps() / 1000000) + "_" + config::detail::num_str(cable) + "m_mtu" +
             std::to_string(pc.mtu_bytes) + "_" + p.name;
    m.profiles.push_back(p);
    const auto idx = static_cast<int16_t>(m.profiles.size() - 1);
    generated[key] = idx;
    return idx;
  };

  auto bind = [&](const char* table, PoolDir want, std::vector<std::array<int16_t, 8>>& dst, const char* what) {
    auto t = doc.opt_child(table);
    if (!t) return;
    t->expect_object();
    for (auto& [key, n] : t->members()) {
      n.expect_object();
      const auto [ports, mask] = parse_port_index_key(c, n, key, what);
      const std::string prof = n.req<std::string>("profile");
      int16_t idx = kNoProfile;
      if (prof != "NULL") {
        const auto it = prof_idx.find(prof);
        if (it == prof_idx.end()) n.fail_key("profile", "unknown profile \"" + prof + "\" (not in BUFFER_PROFILE)");
        idx = it->second;
        if (m.pools[m.profiles[static_cast<size_t>(idx)].pool].dir != want) {
          n.fail_key("profile", "profile \"" + prof + "\" uses an " +
                                    (want == PoolDir::kIngress ? "egress" : "ingress") + " pool");
        }
        if (want == PoolDir::kEgress && dynamic_headroom.count(prof) != 0) {
          n.fail_key("profile", "profile \"" + prof + "\" has dynamic headroom: a PG profile");
        }
      }
      n.finish();
      for (uint16_t p : ports) {
        int16_t use = idx;
        if (idx != kNoProfile && dynamic_headroom.count(prof) != 0) use = headroom_profile(n, idx, p);
        for (int i = 0; i < 8; ++i) {
          if (mask >> i & 1u) dst[p][i] = use;
        }
      }
    }
  };
  bind("BUFFER_PG", PoolDir::kIngress, m.pg_profile, "pg");
  bind("BUFFER_QUEUE", PoolDir::kEgress, m.queue_profile, "queue");
}

// ---- QoS maps --------------------------------------------------------------

template <size_t N>
std::map<std::string, std::array<uint8_t, N>, std::less<>> parse_maps(ConfigNode& doc, const char* table,
                                                                       uint8_t max_value) {
  std::map<std::string, std::array<uint8_t, N>, std::less<>> out;
  auto t = doc.opt_child(table);
  if (!t) return out;
  t->expect_object();
  for (auto& [name, n] : t->members()) {
    n.expect_object();
    std::array<uint8_t, N> a{};
    for (size_t i = 0; i < N; ++i) a[i] = static_cast<uint8_t>(N == 64 ? i >> 3 : i);  // unlisted: default
    for (auto& [k, v] : n.members()) {
      int idx = 0;
      const auto [p, ec] = std::from_chars(k.data(), k.data() + k.size(), idx);
      if (ec != std::errc() || p != k.data() + k.size() || idx < 0 || idx >= static_cast<int>(N)) {
        v.fail("key must be an integer 0.." + std::to_string(N - 1));
      }
      a[static_cast<size_t>(idx)] = static_cast<uint8_t>(v.as_int_or_string(0, max_value));
    }
    out[name] = a;
  }
  return out;
}

void parse_qos(ConfigNode& doc, SwitchConfig& c) {
  const size_t nports = c.ports.ports.size();
  PortQos def;
  for (size_t i = 0; i < 64; ++i) def.dscp_to_tc[i] = static_cast<uint8_t>(i >> 3);  // class selector
  for (uint8_t i = 0; i < 8; ++i) def.dot1p_to_tc[i] = def.tc_to_pg[i] = def.tc_to_queue[i] = def.pfc_to_queue[i] = i;
  c.qos.assign(nports, def);

  const auto dscp = parse_maps<64>(doc, "DSCP_TO_TC_MAP", 7);
  const auto dot1p = parse_maps<8>(doc, "DOT1P_TO_TC_MAP", 7);
  const auto tc_pg = parse_maps<8>(doc, "TC_TO_PRIORITY_GROUP_MAP", 7);
  const auto tc_q = parse_maps<8>(doc, "TC_TO_QUEUE_MAP", 7);
  const auto pfc_q = parse_maps<8>(doc, "MAP_PFC_PRIORITY_TO_QUEUE", 7);

  auto t = doc.opt_child("PORT_QOS_MAP");
  if (!t) return;
  t->expect_object();
  // "global" first so per-port entries override it, whatever the file order.
  std::vector<std::pair<std::string, ConfigNode>> entries = t->members();
  std::stable_partition(entries.begin(), entries.end(), [](const auto& e) { return e.first == "global"; });
  std::vector<std::string> wd_path(nports);  // where each port's pfcwd_sw_enable was set
  for (auto& entry : entries) {
    const std::string& key = entry.first;
    ConfigNode& n = entry.second;  // not a structured binding: clang 14 cannot capture those
    n.expect_object();
    std::vector<uint16_t> ports;
    if (key == "global") {
      for (size_t i = 0; i < nports; ++i) ports.push_back(static_cast<uint16_t>(i));
    } else {
      for (std::string_view p : split(key, ',')) ports.push_back(port_index(c, n, p));
    }
    auto pick = [&](auto& maps, const char* field) -> decltype(&maps.begin()->second) {
      auto f = n.opt_child(field);
      if (!f) return nullptr;
      const std::string name = f->template as<std::string>();
      auto it = maps.find(name);
      if (it == maps.end()) f->fail("unknown map \"" + name + "\"");
      return &it->second;
    };
    const auto* m_dscp = pick(dscp, "dscp_to_tc_map");
    const auto* m_dot1p = pick(dot1p, "dot1p_to_tc_map");
    const auto* m_pg = pick(tc_pg, "tc_to_pg_map");
    const auto* m_q = pick(tc_q, "tc_to_queue_map");
    const auto* m_pfc = pick(pfc_q, "pfc_to_queue_map");
    std::optional<uint8_t> pfc_en;
    std::optional<uint8_t> wd_en;
    if (auto f = n.opt_child("pfc_enable")) pfc_en = parse_index_set(*f, f->as<std::string>(), "priority");
    if (auto f = n.opt_child("pfcwd_sw_enable")) wd_en = parse_index_set(*f, f->as<std::string>(), "priority");
    static constexpr EnumName<bool> kTrust[] = {{"dscp", false}, {"dot1p", true}};
    std::optional<bool> trust;
    if (n.has("trust")) trust = n.req_enum<bool>("trust", kTrust);
    n.finish();
    for (uint16_t p : ports) {
      PortQos& q = c.qos[p];
      if (wd_en) wd_path[p] = n.key_path("pfcwd_sw_enable");
      if (m_dscp) q.dscp_to_tc = *m_dscp;
      if (m_dot1p) q.dot1p_to_tc = *m_dot1p;
      if (m_pg) q.tc_to_pg = *m_pg;
      if (m_q) q.tc_to_queue = *m_q;
      if (m_pfc) q.pfc_to_queue = *m_pfc;
      if (pfc_en) q.pfc_enable = *pfc_en;
      if (wd_en) q.pfcwd_enable = *wd_en;
      if (trust) q.trust_dot1p = *trust;
    }
  }
  for (size_t p = 0; p < nports; ++p) {
    const PortQos& q = c.qos[p];
    if ((q.pfcwd_enable & ~q.pfc_enable) != 0) {
      throw ConfigError(wd_path[p], "watchdog priorities of " + c.ports.ports[p].name +
                                        " must be lossless (in pfc_enable)");
    }
  }
}

// ECN must fire before PFC (seed 000): for a WRED/ECN queue that carries a
// lossless priority, the PG's static PFC threshold (reserved + static_th) of
// every port feeding it must lie above Kmax. Dynamic thresholds move with the
// load and cannot be checked here (that is the drift the scenarios show).
void check_ecn_before_pfc(const SwitchConfig& c, const ConfigNode& at, uint16_t port, int q, const WredConfig& w) {
  if (!w.ecn) return;
  for (int tc = 0; tc < 8; ++tc) {
    if (c.qos[port].tc_to_queue[tc] != q) continue;
    for (size_t in = 0; in < c.qos.size(); ++in) {
      const PortQos& qi = c.qos[in];
      if (!((qi.pfc_enable >> tc) & 1u)) continue;
      const int16_t prof = c.mmu.pg_profile[in][qi.tc_to_pg[tc]];
      if (prof == kNoProfile) continue;
      const ProfileConfig& p = c.mmu.profiles[static_cast<size_t>(prof)];
      if (!p.lossless() || p.mode != ThresholdMode::kStatic || p.static_th_bytes == 0) continue;
      const uint64_t pfc_at = p.reserved_bytes + p.static_th_bytes;
      if (pfc_at <= w.kmax_bytes) {
        at.fail("PFC threshold " + std::to_string(pfc_at) + " of " + c.ports.ports[in].name + " PG " +
                std::to_string(qi.tc_to_pg[tc]) + " (profile \"" + p.name + "\") is not above Kmax " +
                std::to_string(w.kmax_bytes) + ": PFC would pause before ECN marks fully");
      }
    }
  }
}

// ---- WRED, SCHEDULER, QUEUE --------------------------------------------------

void parse_queues(ConfigNode& doc, SwitchConfig& c) {
  const size_t nports = c.ports.ports.size();
  c.wred.assign(nports, {});
  c.sched.assign(nports, {});
  std::map<std::string, WredConfig, std::less<>> wred;
  if (auto t = doc.opt_child("WRED_PROFILE")) {
    t->expect_object();
    static constexpr EnumName<bool> kEcn[] = {{"ecn_none", false},        {"ecn_green", true},
                                              {"ecn_yellow", false},      {"ecn_red", false},
                                              {"ecn_green_yellow", true}, {"ecn_green_red", true},
                                              {"ecn_yellow_red", false},  {"ecn_all", true}};
    for (auto& [name, n] : t->members()) {
      n.expect_object();
      WredConfig w;
      w.ecn = n.opt_enum<bool>("ecn", false, kEcn);
      w.wred_drop = opt_bool_str(n, "wred_green_enable", false);
      w.kmin_bytes = n.req_bytes("green_min_threshold");
      w.kmax_bytes = n.req_bytes("green_max_threshold");
      if (w.kmax_bytes <= w.kmin_bytes) {
        n.fail_key("green_max_threshold", std::to_string(w.kmax_bytes) + " must exceed green_min_threshold " +
                                              std::to_string(w.kmin_bytes));
      }
      w.pmax = static_cast<double>(opt_int(n, "green_drop_probability", 0, 100).value_or(100)) / 100.0;
      // Packets are not coloured (no policer marks them yellow or red): every
      // packet is green, so yellow/red thresholds could never apply. They are
      // refused, not accepted and ignored; `wred_<colour>_enable: false` says
      // what is true and is accepted.
      for (const char* color : {"yellow", "red"}) {
        const std::string s(color);
        if (opt_bool_str(n, "wred_" + s + "_enable", false)) {
          n.fail_key("wred_" + s + "_enable", "not supported: packets are not coloured (every packet is green); "
                                              "use the green_* fields");
        }
        for (const char* f : {"_min_threshold", "_max_threshold", "_drop_probability"}) {
          if (n.has(s + f)) {
            n.fail_key(s + f, "not supported: packets are not coloured (every packet is green); use green" +
                                  std::string(f));
          }
        }
      }
      n.finish();
      wred[name] = w;
    }
  }
  std::map<std::string, QueueSchedConfig, std::less<>> sched;
  if (auto t = doc.opt_child("SCHEDULER")) {
    t->expect_object();
    static constexpr EnumName<SchedType> kTypes[] = {
        {"DWRR", SchedType::kDwrr}, {"WRR", SchedType::kDwrr}, {"STRICT", SchedType::kStrict}};
    for (auto& [name, n] : t->members()) {
      n.expect_object();
      QueueSchedConfig s;
      s.type = n.opt_enum<SchedType>("type", SchedType::kDwrr, kTypes);
      s.weight = static_cast<uint32_t>(opt_int(n, "weight", 1, 100).value_or(1));
      s.priority = static_cast<uint32_t>(opt_int(n, "priority", 0, 9).value_or(0));
      n.finish();
      sched[name] = s;
    }
  }
  if (auto t = doc.opt_child("QUEUE")) {
    t->expect_object();
    for (auto& [key, n] : t->members()) {
      n.expect_object();
      const auto [ports, mask] = parse_port_index_key(c, n, key, "queue");
      std::optional<WredConfig> w;
      std::optional<QueueSchedConfig> s;
      if (auto f = n.opt_child("wred_profile")) {
        const auto it = wred.find(f->as<std::string>());
        if (it == wred.end()) f->fail("unknown WRED_PROFILE \"" + f->as<std::string>() + "\"");
        w = it->second;
      }
      if (auto f = n.opt_child("scheduler")) {
        const auto it = sched.find(f->as<std::string>());
        if (it == sched.end()) f->fail("unknown SCHEDULER \"" + f->as<std::string>() + "\"");
        s = it->second;
      }
      n.finish();
      for (uint16_t p : ports) {
        for (int q = 0; q < 8; ++q) {
          if (!(mask >> q & 1u)) continue;
          if (w) check_ecn_before_pfc(c, n.child("wred_profile"), p, q, *w);
          if (w) c.wred[p][q] = *w;
          if (s) c.sched[p][q] = *s;
        }
      }
    }
  }
}

// ---- PFC_WD ------------------------------------------------------------------

// SONiC writes watchdog times as milliseconds ("200"); a unit string
// ("200us") gives microsecond timers. 1 us .. 60 s.
TimeNs wd_time(ConfigNode& n, std::string_view key, TimeNs def) {
  auto c = n.opt_child(key);
  if (!c) return def;
  TimeNs t;
  const bool plain = c->json().is_number() ||
                     (c->json().is_string() && !c->json().get<std::string>().empty() &&
                      c->json().get<std::string>().find_first_not_of("0123456789") == std::string::npos);
  if (plain) {
    t = TimeNs::from_ms(c->as_int_or_string(0, 60000));
  } else {
    t = n.req_duration(key);
  }
  if (t < TimeNs::from_us(1) || t > TimeNs::from_s(60)) c->fail("must be 1us .. 60s (a number is milliseconds)");
  return t;
}

void parse_pfcwd(ConfigNode& doc, SwitchConfig& c) {
  const size_t nports = c.ports.ports.size();
  c.pfcwd.assign(nports, PfcWdConfig{});
  auto t = doc.opt_child("PFC_WD");
  if (!t) return;
  t->expect_object();
  static constexpr EnumName<PfcWdAction> kActions[] = {
      {"drop", PfcWdAction::kDrop}, {"forward", PfcWdAction::kForward}, {"alert", PfcWdAction::kAlert}};
  // GLOBAL first (its poll period applies to every port's entry, whatever the key order).
  TimeNs poll(0);
  if (t->has("GLOBAL")) {
    ConfigNode n = t->child("GLOBAL");
    n.expect_object();
    // SONiC's poll period: storms and restorations are decided at its
    // multiples (PfcWdConfig::poll). A number is milliseconds (SONiC's unit),
    // a string a duration ("50us"). Absent: exact, event-driven.
    if (auto pc = n.opt_child("POLL_INTERVAL")) {
      const bool plain = pc->json().is_number() ||
                         (pc->json().is_string() && !pc->json().get<std::string>().empty() &&
                          pc->json().get<std::string>().find_first_not_of("0123456789") == std::string::npos);
      if (plain) {
        poll = TimeNs::from_ms(*opt_int(n, "POLL_INTERVAL", 1, 1000));
      } else {
        poll = n.req_duration("POLL_INTERVAL");
        if (poll < TimeNs::from_us(1) || poll > TimeNs::from_s(1)) {
          pc->fail("must be 1us .. 1s (a number is milliseconds)");
        }
      }
    }
    static constexpr EnumName<int> kBrs[] = {{"disable", 0}};
    n.opt_enum<int>("BIG_RED_SWITCH", 0, kBrs);
    n.finish();
  }
  for (auto& [key, n] : t->members()) {
    n.expect_object();
    if (key == "GLOBAL") continue;
    std::vector<uint16_t> ports;
    for (std::string_view p : split(key, ',')) ports.push_back(port_index(c, n, p));
    PfcWdConfig w;
    w.action = n.opt_enum<PfcWdAction>("action", PfcWdAction::kDrop, kActions);
    w.detection = wd_time(n, "detection_time", TimeNs::from_ms(200));
    // SONiC's `pfcwd start` without a restoration time uses 2 x detection.
    w.restoration = wd_time(n, "restoration_time", TimeNs(2 * w.detection.ns()));
    w.poll = poll;
    // SONiC's storm history (estimated pause time per poll) is not kept:
    // `enable` is refused rather than accepted and ignored.
    static constexpr EnumName<int> kHist[] = {{"enable", 1}, {"disable", 0}};
    if (n.opt_enum<int>("pfc_stat_history", 0, kHist) != 0) {
      n.fail_key("pfc_stat_history", "enable is not supported (no storm history is kept; the watchdog's counters are in "
                                     "the report and telemetry); use disable or leave it out");
    }
    n.finish();
    for (uint16_t p : ports) {
      const PortQos& q = c.qos[p];
      const uint8_t prios = q.pfcwd_enable != 0 ? q.pfcwd_enable : q.pfc_enable;
      if (prios == 0) n.fail("port " + c.ports.ports[p].name + " has no pfc_enable priority for the watchdog to guard");
      PfcWdConfig pw = w;
      for (int prio = 0; prio < 8; ++prio) {
        if ((prios >> prio) & 1u) pw.queues = static_cast<uint8_t>(pw.queues | 1u << q.pfc_to_queue[prio]);
      }
      c.pfcwd[p] = pw;
    }
  }
}

// ---- SWITCH_TRIMMING -----------------------------------------------------------

void parse_trimming(ConfigNode& doc, SwitchConfig& c) {
  auto t = doc.opt_child("SWITCH_TRIMMING");
  if (t) {
    t->expect_object();
    for (auto& [key, n] : t->members()) {
      if (key != "GLOBAL") n.fail("only \"GLOBAL\" is supported");
      n.expect_object();
      TrimConfig tc;
      tc.size_bytes = static_cast<uint32_t>(n.opt_bytes("size", 128, in_range<uint64_t>(64, 9216)));
      ConfigNode d = n.child("dscp_value");
      if (d.json().is_string() && d.json().get<std::string>() == "from-tc") {
        d.fail("\"from-tc\" (asymmetric DSCP via TC_TO_DSCP_MAP) is not supported; give a DSCP 0..63");
      }
      tc.dscp = static_cast<uint8_t>(d.as_int_or_string(0, 63));
      ConfigNode qn = n.child("queue_index");
      if (qn.json().is_string() && qn.json().get<std::string>() == "dynamic") {
        tc.dynamic_queue = true;
      } else {
        tc.queue = static_cast<uint8_t>(qn.as_int_or_string(0, kNumQueues - 1));
      }
      n.finish();
      c.trim = tc;
    }
  }
  // A trim profile without SWITCH_TRIMMING would not know what to cut to.
  if (!c.trim) {
    for (const ProfileConfig& p : c.mmu.profiles) {
      if (p.discard == DiscardAction::kTrim) {
        throw ConfigError("BUFFER_PROFILE." + p.name + ".packet_discard_action",
                          "\"trim\" needs a SWITCH_TRIMMING.GLOBAL entry (size, dscp_value, queue_index)");
      }
    }
    return;
  }
  // The trim queue must have buffer on every port (else every trimmed packet is lost).
  if (!c.trim->dynamic_queue) {
    for (size_t p = 0; p < c.ports.ports.size(); ++p) {
      if (c.mmu.queue_profile[p][c.trim->queue] == kNoProfile) {
        throw ConfigError("SWITCH_TRIMMING.GLOBAL.queue_index", "queue " + std::to_string(c.trim->queue) + " of " +
                                                                    c.ports.ports[p].name +
                                                                    " has no buffer (BUFFER_QUEUE profile NULL)");
      }
    }
  }
}

// ---- routes, FDB, SRv6 -------------------------------------------------------

bool parse_ip(std::string_view s, bool* v6, std::array<uint8_t, 16>* out) {
  const std::string str(s);
  out->fill(0);
  if (inet_pton(AF_INET, str.c_str(), out->data()) == 1) {
    *v6 = false;
    return true;
  }
  if (inet_pton(AF_INET6, str.c_str(), out->data()) == 1) {
    *v6 = true;
    return true;
  }
  return false;
}

std::string ip_text(bool v6, const std::array<uint8_t, 16>& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, a.data(), buf, sizeof(buf));
  return buf;
}

// INTERFACE: "<port>": {} (the port is a router port; "vrf_name" may only
// say "default") and "<port>|<ip>/<len>": {} (an address on it).
void parse_interfaces(ConfigNode& doc, SwitchConfig& c) {
  auto t = doc.opt_child("INTERFACE");
  if (!t) return;
  t->expect_object();
  std::vector<std::string> keys;  // of c.interfaces, for the overlap message
  for (auto& [key, n] : t->members()) {
    n.expect_object();
    const size_t bar = key.find('|');
    const uint16_t port = port_index(c, n, std::string_view(key).substr(0, bar));
    if (bar == std::string::npos) {
      if (n.has("vrf_name") && n.req<std::string>("vrf_name") != "default") {
        n.fail_key("vrf_name", "only the default VRF is supported");
      }
      n.finish();
      continue;
    }
    const std::string_view a = std::string_view(key).substr(bar + 1);
    const size_t slash = a.find('/');
    RouterInterface r;
    r.port = port;
    int len = -1;
    if (slash != std::string_view::npos) {
      const auto d = a.substr(slash + 1);
      const auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), len);
      if (ec != std::errc() || p != d.data() + d.size()) len = -1;
    }
    if (slash == std::string_view::npos || !parse_ip(a.substr(0, slash), &r.v6, &r.addr) || len < 1 ||
        len > (r.v6 ? 128 : 32)) {
      n.fail("key must be <port>|<address>/<prefix length>, such as Ethernet0|10.0.1.1/24 or Ethernet0|fd00:1::1/64");
    }
    r.prefix_len = static_cast<uint8_t>(len);
    if (r.v6 ? r.addr[0] == 0xFF : (r.addr[0] >= 224 || r.addr[0] == 0 || r.addr[0] == 127)) {
      n.fail("address " + ip_text(r.v6, r.addr) + " is not a unicast host address");
    }
    if (!r.v6 && len <= 30) {
      const uint32_t ip = uint32_t{r.addr[0]} << 24 | uint32_t{r.addr[1]} << 16 | uint32_t{r.addr[2]} << 8 | r.addr[3];
      const uint32_t host = ip & ((1u << (32 - len)) - 1);
      if (host == 0 || host == (1u << (32 - len)) - 1) {
        n.fail("address " + ip_text(false, r.addr) + " is the " + (host == 0 ? "network" : "broadcast") +
               " address of its /" + std::to_string(len));
      }
    }
    for (size_t i = 0; i < c.interfaces.size(); ++i) {
      const RouterInterface& o = c.interfaces[i];
      if (o.v6 != r.v6) continue;
      if (on_subnet(o, r.addr) || on_subnet(r, o.addr)) {
        n.fail("subnet overlaps INTERFACE \"" + keys[i] + "\" (one subnet per router interface)");
      }
    }
    n.finish();
    keys.push_back(key);
    c.interfaces.push_back(r);
  }
}

void parse_routes(ConfigNode& doc, SwitchConfig& c) {
  parse_interfaces(doc, c);
  // NEIGH: "<port>|<ip>": {"neigh": "<mac>", "family": "IPv4"|"IPv6"}
  std::map<std::pair<uint16_t, std::array<uint8_t, 16>>, std::array<uint8_t, 6>> neigh;
  if (auto t = doc.opt_child("NEIGH")) {
    t->expect_object();
    for (auto& [key, n] : t->members()) {
      n.expect_object();
      const size_t bar = key.find('|');
      if (bar == std::string::npos) n.fail("key must be <port>|<ip>");
      const uint16_t port = port_index(c, n, std::string_view(key).substr(0, bar));
      bool v6 = false;
      std::array<uint8_t, 16> ip{};
      if (!parse_ip(std::string_view(key).substr(bar + 1), &v6, &ip)) n.fail("bad IP address in key");
      static constexpr EnumName<bool> kFam[] = {{"IPv4", false}, {"IPv6", true}};
      if (n.has("family") && n.req_enum<bool>("family", kFam) != v6) n.fail_key("family", "does not match the address");
      neigh[{port, ip}] = mac_of(n.child("neigh"), n.req<std::string>("neigh"));
      n.finish();
    }
  }
  if (auto t = doc.opt_child("STATIC_ROUTE")) {
    t->expect_object();
    for (auto& [key, n] : t->members()) {
      n.expect_object();
      std::string_view k = key;
      if (const size_t bar = k.find('|'); bar != std::string_view::npos) {  // "vrf|prefix"
        // One routing table: the default VRF. Another VRF's routes are refused,
        // not installed in the default table.
        if (k.substr(0, bar) != "default") {
          n.fail("VRF \"" + std::string(k.substr(0, bar)) +
                 "\" is not supported: only the default VRF (key \"PREFIX\" or \"default|PREFIX\")");
        }
        k = k.substr(bar + 1);
      }
      const size_t slash = k.find('/');
      StaticRoute r;
      int depth = -1;
      if (slash != std::string_view::npos) {
        const auto d = k.substr(slash + 1);
        const auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), depth);
        if (ec != std::errc() || p != d.data() + d.size()) depth = -1;
      }
      if (slash == std::string_view::npos || !parse_ip(k.substr(0, slash), &r.v6, &r.prefix) || depth < 1 ||
          depth > (r.v6 ? 128 : 32)) {
        n.fail("key must be a prefix such as 10.0.0.0/8 or fd00::/16");
      }
      r.depth = static_cast<uint8_t>(depth);
      const std::string hops = n.req<std::string>("nexthop");
      const std::string ifs = n.req<std::string>("ifname");
      const auto hop_list = split(hops, ',');
      const auto if_list = split(ifs, ',');
      if (hop_list.size() != if_list.size()) n.fail_key("ifname", "needs one port per nexthop");
      for (size_t i = 0; i < hop_list.size(); ++i) {
        const uint16_t port = port_index(c, n.child("ifname"), if_list[i]);
        bool v6 = false;
        std::array<uint8_t, 16> ip{};
        if (!parse_ip(hop_list[i], &v6, &ip)) n.fail_key("nexthop", "bad IP address \"" + std::string(hop_list[i]) + "\"");
        RouteNextHop nh;
        nh.port = port;
        nh.v6 = v6;
        nh.ip = ip;
        if (const auto it = neigh.find({port, ip}); it != neigh.end()) {
          nh.mac = it->second;
        } else {
          // On a router interface subnet of the port: resolved at run time (ARP / ND).
          for (const RouterInterface& rif : c.interfaces) {
            if (rif.port != port || rif.v6 != v6 || !on_subnet(rif, ip)) continue;
            if (rif.addr == ip) n.fail_key("nexthop", std::string(hop_list[i]) + " is the switch's own INTERFACE address");
            nh.dynamic = true;
          }
          if (!nh.dynamic) {
            n.fail_key("nexthop", "no NEIGH entry for " + std::string(hop_list[i]) + " on " + std::string(if_list[i]) +
                                      ", and it is on no INTERFACE subnet of " + std::string(if_list[i]) +
                                      " (where the switch would resolve it by ARP / ND)");
          }
        }
        r.next_hops.push_back(nh);
      }
      n.finish();
      c.routes.push_back(std::move(r));
    }
  }
  if (auto t = doc.opt_child("FDB")) {
    t->expect_object();
    for (auto& [key, n] : t->members()) {
      n.expect_object();
      StaticFdbEntry e;
      std::string_view mac = key;
      if (const size_t bar = mac.find('|'); bar != std::string_view::npos) {
        const std::string_view vl = mac.substr(0, bar);
        int vid = -1;
        if (vl.substr(0, 4) == "Vlan") std::from_chars(vl.data() + 4, vl.data() + vl.size(), vid);
        // 0 (priority tag) and 4095 are not VLANs; untagged frames are Vlan1.
        if (vid < 1 || vid > 4094) n.fail("key must be [Vlan<id>|]<mac> with id 1..4094 (untagged frames are Vlan1)");
        e.vlan = static_cast<uint16_t>(vid);
        mac = mac.substr(bar + 1);
      }
      e.mac = mac_of(n, std::string(mac));
      e.port = port_index(c, n.child("port"), n.req<std::string>("port"));
      static constexpr EnumName<int> kType[] = {{"static", 0}};
      n.opt_enum<int>("type", 0, kType);
      n.finish();
      c.fdb.push_back(e);
    }
  }
  if (auto s = doc.opt_child("SRV6")) {
    s->expect_object();
    Srv6Config v;
    const std::string block = s->req<std::string>("locator_block");
    bool v6 = false;
    std::array<uint8_t, 16> ip{};
    const size_t slash = block.find('/');
    if (slash == std::string::npos || block.substr(slash + 1) != "32" || !parse_ip(block.substr(0, slash), &v6, &ip) ||
        !v6) {
      s->fail_key("locator_block", "expected a /32 IPv6 block such as fcbb:bbbb::/32");
    }
    std::copy_n(ip.begin(), 4, v.block.begin());
    auto usid_of = [](const ConfigNode& at, std::string_view t) {
      unsigned v16 = 0;
      const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v16, 16);
      if (ec != std::errc() || p != t.data() + t.size() || t.empty() || v16 == 0 || v16 > 0xFFFF) {
        at.fail("uSID must be 1..4 hex digits, not 0");
      }
      return static_cast<uint16_t>(v16);
    };
    v.my_usid = usid_of(s->child("usid"), s->req<std::string>("usid"));
    if (auto t = s->opt_child("next")) {
      t->expect_object();
      for (auto& [key, n] : t->members()) {
        n.expect_object();
        Srv6Config::Entry e;
        e.usid = usid_of(n, key);
        e.next_hop.port = port_index(c, n.child("port"), n.req<std::string>("port"));
        e.next_hop.mac = mac_of(n.child("mac"), n.req<std::string>("mac"));
        n.finish();
        v.table.push_back(e);
      }
    }
    s->finish();
    c.srv6 = v;
  }
}

// ---- INT -----------------------------------------------------------------------

// INT: {"<port>[,<port>...]|<queues>": {"enable": "true"}}: HPCC hop records
// appended at egress dequeue from those queues (docs/config-reference.md "INT").
// Later keys override earlier ones for the queues they name.
void parse_int(ConfigNode& doc, SwitchConfig& c) {
  c.int_queues.assign(c.ports.ports.size(), 0);
  auto t = doc.opt_child("INT");
  if (!t) return;
  t->expect_object();
  for (auto& [key, n] : t->members()) {
    n.expect_object();
    const auto [ports, mask] = parse_port_index_key(c, n, key, "queue");
    const bool on = opt_bool_str(n, "enable", true);
    n.finish();
    for (uint16_t p : ports) {
      c.int_queues[p] = static_cast<uint8_t>(on ? (c.int_queues[p] | mask) : (c.int_queues[p] & ~mask));
    }
  }
}

}  // namespace

bool on_subnet(const RouterInterface& rif, const std::array<uint8_t, 16>& ip) {
  const unsigned bits = rif.prefix_len;
  for (unsigned i = 0; i < bits / 8; ++i) {
    if (rif.addr[i] != ip[i]) return false;
  }
  if (bits % 8 == 0) return true;
  const auto mask = static_cast<uint8_t>(0xFF << (8 - bits % 8));
  return (rif.addr[bits / 8] & mask) == (ip[bits / 8] & mask);
}

SwitchConfig parse_switch_config(const Json& doc) {
  ConfigNode root(doc, "");
  root.expect_object();
  SwitchConfig c;
  parse_device(root, c);
  c.ports = config::parse_ports(root.child("PORT"));
  parse_cables(root, c);
  parse_buffers(root, c);
  parse_qos(root, c);
  parse_queues(root, c);
  parse_routes(root, c);
  parse_pfcwd(root, c);
  parse_trimming(root, c);
  parse_credit_fc(root, c);  // credit_fc_config.cc
  parse_int(root, c);
  root.finish();
  return c;
}

SwitchConfig load_switch_config(const std::string& file_path) {
  return parse_switch_config(config::load_file(file_path));
}

}  // namespace sf::sw
