// sf-nic configuration: nic.json schema and cross-checks. See sf_nic_config.h.
#include "nic/app/sf_nic_config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "common/config/json_loader.h"
#include "nic/cc/cc_config.h"

namespace sf::nic::app {

namespace {

constexpr std::array<std::pair<std::string_view, WorkloadType>, 6> kTypes{{
    {"write_bw", WorkloadType::kWriteBw},
    {"write_lat", WorkloadType::kWriteLat},
    {"read_bw", WorkloadType::kReadBw},
    {"read_lat", WorkloadType::kReadLat},
    {"send_bw", WorkloadType::kSendBw},
    {"send_lat", WorkloadType::kSendLat},
}};

constexpr std::array<config::EnumName<Role>, 2> kRoles{{{"server", Role::kServer}, {"client", Role::kClient}}};
constexpr std::array<config::EnumName<Transport>, 2> kTransports{{{"rc", Transport::kRc}, {"mrc", Transport::kMrc}}};
constexpr std::array<config::EnumName<OobFormat>, 2> kOobFormats{{{"sf", OobFormat::kSf}, {"perftest", OobFormat::kPerftest}}};

bool valid_mtu(uint32_t m) { return m == 256 || m == 512 || m == 1024 || m == 2048 || m == 4096; }

uint8_t parse_prios(config::ConfigNode& n, std::string_view key);

config::MacAddr parse_unicast_mac(config::ConfigNode& n, std::string_view key) {
  const auto text = n.req<std::string>(key);
  const auto mac = config::parse_mac(text);
  if (!mac) n.fail_key(key, "\"" + text + "\" is not a MAC address (aa:bb:cc:dd:ee:ff)");
  if (mac->is_multicast() || mac->is_zero()) n.fail_key(key, "must be a unicast, non-zero address");
  return *mac;
}

// One port's device, addresses, speed and gateway: the host-level keys of
// the single-port form or a "ports" entry (the line rate as "speed" or
// "speed_gbps", not both).
AppPort parse_port(config::ConfigNode& n) {
  AppPort p;
  p.devargs = n.req<std::string>("devargs");
  if (p.devargs.empty()) n.fail_key("devargs", "must not be empty");
  p.mac = parse_unicast_mac(n, "mac");
  bool any_ip = false;
  // ADDRESS or ADDRESS/PREFIX (the routed form's on-link subnet).
  auto split_prefix = [&](std::string_view key, std::string ip, bool v6, uint8_t* prefix) {
    const size_t slash = ip.find('/');
    if (slash == std::string::npos) return ip;
    const std::string len = ip.substr(slash + 1);
    unsigned v = 0;
    const auto r = std::from_chars(len.data(), len.data() + len.size(), v);
    const unsigned max = v6 ? 128 : 32;
    if (r.ec != std::errc() || r.ptr != len.data() + len.size() || v < 1 || v > max) {
      n.fail_key(key, "\"" + ip + "\": the prefix length after '/' must be 1.." + std::to_string(max));
    }
    *prefix = static_cast<uint8_t>(v);
    return ip.substr(0, slash);
  };
  if (n.has("ip")) {
    const auto text = n.req<std::string>("ip");
    const bool v6 = text.find(':') != std::string::npos;
    uint8_t prefix = 0;
    const std::string ip = split_prefix("ip", text, v6, &prefix);
    if (!parse_ip(ip, &p.ipv4, &p.ipv6)) n.fail_key("ip", "\"" + text + "\" is neither an IPv4 nor an IPv6 address");
    (p.ipv4 ? p.ipv4_prefix : p.ipv6_prefix) = prefix;
    any_ip = true;
  }
  if (n.has("ipv6")) {
    const auto text = n.req<std::string>("ipv6");
    std::optional<std::array<uint8_t, 4>> v4;
    const std::string ip = split_prefix("ipv6", text, true, &p.ipv6_prefix);
    if (!parse_ip(ip, &v4, &p.ipv6) || v4) n.fail_key("ipv6", "\"" + text + "\" is not an IPv6 address");
    any_ip = true;
  }
  if (!any_ip) n.fail("needs \"ip\" (IPv4 or IPv6) or \"ipv6\"");
  constexpr config::Range<uint32_t> kSpeed = config::in_range<uint32_t>(1, 800);
  if (n.has("speed_gbps") && n.has("speed")) n.fail("give \"speed_gbps\" or \"speed\", not both");
  p.speed_gbps = n.has("speed_gbps") ? n.req<uint32_t>("speed_gbps", kSpeed) : n.opt<uint32_t>("speed", 100, kSpeed);
  if (n.has("gateway_mac")) p.gateway_mac = parse_unicast_mac(n, "gateway_mac");
  if (n.has("gateway")) {
    if (p.gateway_mac) n.fail_key("gateway", "give \"gateway\" (resolved by ARP / ND) or \"gateway_mac\" (static), not both");
    const auto text = n.req<std::string>("gateway");
    std::optional<std::array<uint8_t, 4>> g4;
    std::optional<std::array<uint8_t, 16>> g6;
    if (!parse_ip(text, &g4, &g6)) n.fail_key("gateway", "\"" + text + "\" is neither an IPv4 nor an IPv6 address");
    if (g4 ? !p.ipv4 : !p.ipv6) {
      n.fail_key("gateway", "\"" + text + "\" is an " + (g4 ? "IPv4" : "IPv6") + " address but the port has none");
    }
    const uint8_t* mine = g4 ? p.ipv4->data() : p.ipv6->data();
    const uint8_t* gw = g4 ? g4->data() : g6->data();
    const size_t bytes = g4 ? 4 : 16;
    if (std::equal(mine, mine + bytes, gw)) n.fail_key("gateway", "\"" + text + "\" is the port's own address");
    const unsigned prefix = g4 ? p.ipv4_prefix : p.ipv6_prefix;
    bool on_link = true;
    for (unsigned b = 0; b < prefix; ++b) {
      const uint8_t bit = static_cast<uint8_t>(0x80 >> (b % 8));
      if ((mine[b / 8] & bit) != (gw[b / 8] & bit)) on_link = false;
    }
    if (!on_link) {
      n.fail_key("gateway", "\"" + text + "\" is outside the port's subnet (/" + std::to_string(prefix) +
                 "): a gateway must be on link");
    }
    p.gateway4 = g4;
    p.gateway6 = g6;
  }
  return p;
}

AppHost parse_host(const std::string& name, config::ConfigNode n) {
  n.expect_object();
  AppHost h;
  h.name = name;
  if (n.has("ports")) {
    // Per-port devices and addresses: the host-level ones would be a second,
    // conflicting answer.
    for (const char* k : {"devargs", "mac", "ip", "ipv6", "speed", "speed_gbps", "gateway_mac", "gateway"}) {
      if (n.has(k)) n.fail_key(k, "not with \"ports\" (give it in each ports[i] entry)");
    }
    config::ConfigNode ports = n.child("ports");
    ports.expect_array();
    std::vector<config::ConfigNode> entries = ports.elements();
    if (entries.empty()) ports.fail("at least one port");
    if (entries.size() > kMaxAppPorts) ports.fail("at most " + std::to_string(kMaxAppPorts) + " ports per host");
    for (size_t i = 0; i < entries.size(); ++i) {
      entries[i].expect_object();
      AppPort p = parse_port(entries[i]);
      entries[i].finish();
      if (i == 0) {
        h.devargs = p.devargs;
        h.mac = p.mac;
        h.ipv4 = p.ipv4;
        h.ipv6 = p.ipv6;
        h.speed_gbps = p.speed_gbps;
        h.gateway_mac = p.gateway_mac;
        h.ipv4_prefix = p.ipv4_prefix;
        h.ipv6_prefix = p.ipv6_prefix;
        h.gateway4 = p.gateway4;
        h.gateway6 = p.gateway6;
      } else {
        h.more_ports.push_back(std::move(p));
      }
    }
  } else {
    const AppPort p = parse_port(n);
    h.devargs = p.devargs;
    h.mac = p.mac;
    h.ipv4 = p.ipv4;
    h.ipv6 = p.ipv6;
    h.speed_gbps = p.speed_gbps;
    h.gateway_mac = p.gateway_mac;
    h.ipv4_prefix = p.ipv4_prefix;
    h.ipv6_prefix = p.ipv6_prefix;
    h.gateway4 = p.gateway4;
    h.gateway6 = p.gateway6;
  }
  h.mtu_bytes = n.opt<uint32_t>("mtu", 4096);
  if (!valid_mtu(h.mtu_bytes)) n.fail_key("mtu", std::to_string(h.mtu_bytes) + " is not a RoCE MTU (256, 512, 1024, 2048, 4096)");
  h.dscp = n.opt<uint8_t>("dscp", 26, config::in_range<uint8_t>(0, 63));
  h.cnp_dscp = n.opt<uint8_t>("cnp_dscp", 48, config::in_range<uint8_t>(0, 63));
  h.pfc_enable = parse_prios(n, "pfc_enable");
  h.rx_drain_rate = n.has("rx_drain_rate") ? n.req_rate("rx_drain_rate") : BitRate(0);
  if (n.has("mrc_trim_dscp")) {
    h.mrc_trimmed_dscp_mask = uint64_t{1} << n.req<uint8_t>("mrc_trim_dscp", config::in_range<uint8_t>(0, 63));
  }
  h.pfc_generate = parse_prios(n, "pfc_generate");
  h.pfc_xoff_bytes = n.opt_bytes("pfc_xoff", h.pfc_xoff_bytes, {1, 1ull << 32});
  h.pfc_xon_bytes = n.opt_bytes("pfc_xon", h.pfc_xon_bytes, {0, 1ull << 32});
  if (h.pfc_xon_bytes >= h.pfc_xoff_bytes) n.fail_key("pfc_xon", "must be below pfc_xoff");
  if (h.pfc_generate != 0 && h.rx_drain_rate.bps() == 0) {
    n.fail_key("pfc_generate", "needs rx_drain_rate (there is no receive backlog without it)");
  }
  // Verbs object limits (HostConfig): each in [1, kMaxHostObjects].
  constexpr config::Range<uint32_t> kObjects = config::in_range<uint32_t>(1, kMaxHostObjects);
  h.max_qps = n.opt<uint32_t>("max_qps", h.max_qps, kObjects);
  h.max_mrs = n.opt<uint32_t>("max_mrs", h.max_mrs, kObjects);
  h.max_cqs = n.opt<uint32_t>("max_cqs", h.max_cqs, kObjects);
  h.max_pds = n.opt<uint32_t>("max_pds", h.max_pds, kObjects);
  n.finish();
  return h;
}

// SONiC spelling of a priority set: "3" or "3,4"; 0 when absent.
uint8_t parse_prios(config::ConfigNode& n, std::string_view key) {
  if (!n.has(key)) return 0;
  {
    const auto text = n.req<std::string>(key);
    uint8_t mask = 0;
    size_t i = 0;
    while (i < text.size()) {
      const size_t j = std::min(text.find(',', i), text.size());
      const std::string tok = text.substr(i, j - i);
      if (tok.size() != 1 || tok[0] < '0' || tok[0] > '7') {
        n.fail_key(key, "\"" + text + "\": want priorities 0-7 separated by commas, e.g. \"3,4\"");
      }
      mask = static_cast<uint8_t>(mask | 1u << (tok[0] - '0'));
      i = j + 1;
    }
    return mask;
  }
}

}  // namespace

verbs::MrcQpAttr app_mrc_defaults() {
  verbs::MrcQpAttr a;
  a.base_rtt_ns = 500'000;
  a.rto_ns = 64'000'000;
  a.probe_interval_ns = 1'000'000;
  a.ooo_tolerance_ns = 1'000'000;
  a.ev_probe_interval_ns = 5'000'000;
  return a;
}

namespace {

// nic.json "mrc.srv6" (ev_mode srv6): {"block": "fcbb:bbbb::/32", "hop_limit":
// 64, "planes": [{"before": ["1"], "uplinks": ["3", "4"], "after": ["2",
// "8001"]}, ...]}: uSIDs as 1..4 hex digits, one entry per plane (docs/mrc.md
// "SRv6 uSID paths"). Checked here with the JSON path, as mrc_modify_qp would.
void parse_srv6(config::ConfigNode t, uint16_t planes, verbs::MrcQpAttr& a) {
  t.expect_object();
  verbs::MrcSrv6Path& p = a.srv6;
  const auto block = t.req<std::string>("block");
  std::optional<std::array<uint8_t, 4>> v4;
  std::optional<std::array<uint8_t, 16>> v6;
  const size_t slash = block.find('/');
  if (slash == std::string::npos || block.substr(slash + 1) != "32" || !parse_ip(block.substr(0, slash), &v4, &v6) ||
      !v6 || std::all_of(v6->begin(), v6->begin() + 4, [](uint8_t b) { return b == 0; })) {
    t.fail_key("block", "\"" + block + "\": expected a non-zero /32 IPv6 locator block such as fcbb:bbbb::/32 (F3216)");
  }
  std::copy_n(v6->begin(), 4, p.block);
  p.hop_limit = t.opt<uint8_t>("hop_limit", p.hop_limit, config::in_range<uint8_t>(1, 255));
  config::ConfigNode pl = t.child("planes");
  const std::vector<config::ConfigNode> list = pl.elements();
  if (list.size() != planes) {
    t.fail_key("planes", std::to_string(list.size()) + " plane template(s), the QP has " + std::to_string(planes) +
                             " plane(s): one per plane");
  }
  p.num_planes = static_cast<uint8_t>(planes);
  for (size_t i = 0; i < list.size(); ++i) {
    config::ConfigNode e = list[i];
    e.expect_object();
    auto usids = [&](const char* key, uint16_t* out, int cap, bool required) -> uint8_t {
      if (!required && !e.has(key)) return 0;
      config::ConfigNode arr = e.child(key);
      const std::vector<config::ConfigNode> v = arr.elements();
      if (static_cast<int>(v.size()) > cap || (required && v.empty())) {
        e.fail_key(key, std::to_string(v.size()) + " uSID(s): " + (required ? "1" : "0") + ".." + std::to_string(cap));
      }
      for (size_t k = 0; k < v.size(); ++k) {
        const auto txt = v[k].as<std::string>();
        unsigned u = 0;
        const auto [end, ec] = std::from_chars(txt.data(), txt.data() + txt.size(), u, 16);
        if (ec != std::errc() || end != txt.data() + txt.size() || txt.empty() || u == 0 || u > 0xFFFF) {
          v[k].fail("\"" + txt + "\": a uSID is 1..4 hex digits, not 0");
        }
        out[k] = static_cast<uint16_t>(u);
      }
      return static_cast<uint8_t>(v.size());
    };
    verbs::MrcSrv6Plane& q = p.plane[i];
    q.num_before = usids("before", q.before, verbs::kMrcSrv6MaxUsids - 1, false);
    q.num_uplinks = usids("uplinks", q.uplinks, verbs::kMrcSrv6MaxUplinks, true);
    q.num_after = usids("after", q.after, verbs::kMrcSrv6MaxUsids - 1, false);
    if (q.num_before + 1 + q.num_after > verbs::kMrcSrv6MaxUsids) {
      e.fail("before (" + std::to_string(q.num_before) + ") + 1 uplink + after (" + std::to_string(q.num_after) +
             ") uSIDs: at most 6 fit one address after a 32-bit block");
    }
    if (q.num_uplinks > a.num_evs / planes) {
      e.fail_key("uplinks", std::to_string(q.num_uplinks) + " uplinks but only " + std::to_string(a.num_evs / planes) +
                                " EV(s) per plane: some would never be used");
    }
    e.finish();
  }
  t.finish();
}

// nic.json "mrc": the verbs::MrcQpAttr fields by their names (times in ns,
// as mrc_modify_qp takes them), checked here with the JSON path so nothing
// fails later at connect. Absent keys keep the verbs defaults.
verbs::MrcQpAttr parse_mrc(std::optional<config::ConfigNode> m, const AppHost& host) {
  using config::in_range;
  verbs::MrcQpAttr a = app_mrc_defaults();
  if (!m) return a;
  m->expect_object();
  a.num_evs = m->opt<uint16_t>("num_evs", a.num_evs, in_range<uint16_t>(1, 256));
  a.num_planes = m->opt<uint16_t>("num_planes", a.num_planes, in_range<uint16_t>(0, kMaxAppPorts));
  if (a.num_planes > host.num_ports()) {
    m->fail_key("num_planes", "host \"" + host.name + "\" has " + std::to_string(host.num_ports()) +
                                  " port(s): one plane per port at most (0 = one per port)");
  }
  const uint16_t planes = a.num_planes == 0 ? host.num_ports() : a.num_planes;
  if (a.num_evs % planes != 0) {
    m->fail_key("num_evs", std::to_string(a.num_evs) + " is not a multiple of the " + std::to_string(planes) +
                               " plane(s)");
  }
  a.backup_per_plane = m->opt<uint16_t>("backup_per_plane", a.backup_per_plane, in_range<uint16_t>(0, 255));
  if (a.backup_per_plane >= a.num_evs / planes) m->fail_key("backup_per_plane", "must be below num_evs / planes");
  a.ev_base = m->opt<uint32_t>("ev_base", a.ev_base, in_range<uint32_t>(0, 0x3FFF));
  a.probes_to_readmit = m->opt<uint16_t>("probes_to_readmit", a.probes_to_readmit, in_range<uint16_t>(1, 1000));
  a.mpr = m->opt<uint16_t>("mpr", a.mpr, in_range<uint16_t>(1, 256));
  a.sack_align = m->opt<uint8_t>("sack_align", a.sack_align, in_range<uint8_t>(1, 8));
  if (a.sack_align != 1 && a.sack_align != 8) m->fail_key("sack_align", "1 (CACK + 1) or 8 (UET's 8-aligned base)");
  a.window_bytes = m->opt<uint32_t>("window_bytes", a.window_bytes, in_range<uint32_t>(0, UINT32_MAX));
  a.base_rtt_ns = m->opt<uint32_t>("base_rtt_ns", a.base_rtt_ns, in_range<uint32_t>(100, 10'000'000));
  a.rto_ns = m->opt<uint32_t>("rto_ns", a.rto_ns, in_range<uint32_t>(1000, 1'000'000'000));
  a.ooo_tolerance_ns = m->opt<uint32_t>("ooo_tolerance_ns", a.ooo_tolerance_ns, in_range<uint32_t>(0, a.rto_ns));
  a.probe_interval_ns = m->opt<uint32_t>("probe_interval_ns", a.probe_interval_ns, in_range<uint32_t>(1000, a.rto_ns));
  a.ev_probe_interval_ns =
      m->opt<uint32_t>("ev_probe_interval_ns", a.ev_probe_interval_ns, in_range<uint32_t>(1000, 1'000'000'000));
  a.sack_every_pkts = m->opt<uint16_t>("sack_every_pkts", a.sack_every_pkts, in_range<uint16_t>(1, 64));
  a.sack_delay_ns = m->opt<uint32_t>("sack_delay_ns", a.sack_delay_ns, in_range<uint32_t>(0, 1'000'000));
  a.max_timeouts = m->opt<uint8_t>("max_timeouts", a.max_timeouts, in_range<uint8_t>(1, 255));
  a.rcv_pen_rq = m->opt<uint8_t>("rcv_pen_rq", a.rcv_pen_rq, in_range<uint8_t>(0, 127));
  a.rcv_pen_ooo_pct = m->opt<uint8_t>("rcv_pen_ooo_pct", a.rcv_pen_ooo_pct, in_range<uint8_t>(1, 100));
  if (m->has("trim_lasthop_dscp")) a.trim_lasthop_dscp = m->opt<uint8_t>("trim_lasthop_dscp", 0, in_range<uint8_t>(0, 63));
  a.seed = m->opt<uint64_t>("seed", a.seed);
  a.ev_probe_endpoint = m->opt<bool>("ev_probe_endpoint", a.ev_probe_endpoint);
  if (m->has("ev_mode")) {
    const auto mode = m->req<std::string>("ev_mode");
    if (mode == "srv6") {
      a.ev_mode = verbs::MrcEvMode::kSrv6;
      for (uint8_t k = 1; k <= host.num_ports(); ++k) {
        if (!host.port(k).ipv6) {
          m->fail_key("ev_mode", "\"srv6\" needs an IPv6 address on every port of host \"" + host.name +
                                     "\" (the inner header is IPv6); port " + std::to_string(k) + " has none");
        }
      }
    } else if (mode != "udp_sport") {
      m->fail_key("ev_mode", "\"" + mode + "\" is not one of udp_sport, srv6");
    }
  }
  if (std::optional<config::ConfigNode> t = m->opt_child("srv6")) {
    if (a.ev_mode != verbs::MrcEvMode::kSrv6) m->fail_key("srv6", "needs \"ev_mode\": \"srv6\"");
    parse_srv6(*t, planes, a);
  } else if (a.ev_mode == verbs::MrcEvMode::kSrv6) {
    m->fail_key("ev_mode", "\"srv6\" needs the uSID path template \"srv6\" (block, planes)");
  }
  m->finish();
  return a;
}

AppWorkload parse_workload(config::ConfigNode n, const std::vector<AppHost>& hosts) {
  n.expect_object();
  AppWorkload w;
  w.name = n.req<std::string>("name");
  const auto host = n.req<std::string>("host");
  const auto it = std::find_if(hosts.begin(), hosts.end(), [&](const AppHost& h) { return h.name == host; });
  if (it == hosts.end()) n.fail_key("host", "unknown host \"" + host + "\"");
  w.host = static_cast<size_t>(it - hosts.begin());
  w.port = static_cast<uint8_t>(n.opt<uint32_t>("port", 1, config::in_range<uint32_t>(1, kMaxAppPorts)));
  if (w.port > it->num_ports()) {
    n.fail_key("port", "host \"" + host + "\" has " + std::to_string(it->num_ports()) + " port" +
                           (it->num_ports() == 1 ? "" : "s") + " (port is 1-based)");
  }
  const auto type = n.req<std::string>("type");
  const auto t = workload_type_from_string(type);
  if (!t) n.fail_key("type", "\"" + type + "\" is not one of " + std::string(kWorkloadNames));
  w.type = *t;
  w.role = n.req_enum<Role>("role", kRoles);
  const auto oob = n.req<std::string>("oob");
  const size_t colon = oob.rfind(':');
  if (colon == std::string::npos || colon == 0) n.fail_key("oob", "\"" + oob + "\": want HOST:PORT");
  w.oob_host = oob.substr(0, colon);
  try {
    const unsigned long port = std::stoul(oob.substr(colon + 1));
    if (port == 0 || port > 65535) throw std::out_of_range("port");
    w.oob_port = static_cast<uint16_t>(port);
  } catch (const std::exception&) {
    n.fail_key("oob", "\"" + oob + "\": the port must be 1-65535");
  }
  w.oob_format = n.opt_enum<OobFormat>("oob_format", OobFormat::kSf, kOobFormats);
  w.size_bytes = n.opt_bytes("size", 65536, {1, 1ull << 31});
  w.iterations = n.opt<uint64_t>("iterations", 1000, config::in_range<uint64_t>(0, 1ull << 40));
  w.duration_s = n.opt<double>("duration_s", 0.0);
  if (w.duration_s < 0 || w.duration_s > 86400) n.fail_key("duration_s", "must be within [0, 86400]");
  if (w.iterations == 0 && w.duration_s == 0) n.fail("needs \"iterations\" > 0 or \"duration_s\" > 0");
  w.qps = n.opt<uint32_t>("qps", 1, config::in_range<uint32_t>(1, 64));
  w.tx_depth = n.opt<uint32_t>("tx_depth", 128, config::in_range<uint32_t>(1, 4096));
  w.cc = parse_cc_choice(n);  // "cc", "cc_params" (nic/cc/cc_config.h)
  w.rate_limit = n.has("rate_limit") ? n.req_rate("rate_limit", {BitRate::mbps(1), BitRate::gbps(800)}) : BitRate(0);
  w.burst_bytes = static_cast<uint32_t>(n.opt_bytes("burst_size", 0, {0, UINT32_MAX}));
  if (w.burst_bytes != 0 && w.rate_limit.bps() == 0) {
    n.fail_key("burst_size", "needs \"rate_limit\" (a burst bucket of an unpaced QP; EINVAL in ibv_modify_qp_rate_limit)");
  }
  w.verify = n.opt<bool>("verify", false);
  w.start_ms = n.opt<uint32_t>("start_ms", 0, config::in_range<uint32_t>(0, 3600000));
  w.interval_us = n.opt<uint32_t>("interval_us", 0, config::in_range<uint32_t>(0, 10000000));
  w.stop_with_others = n.opt<bool>("stop_with_others", false);
  w.samples = n.opt<bool>("samples", false);
  if (n.has("dscp")) w.dscp = n.opt<uint8_t>("dscp", 26, config::in_range<uint8_t>(0, 63));
  w.transport = n.opt_enum<Transport>("transport", Transport::kRc, kTransports);
  if (std::optional<config::ConfigNode> m = n.opt_child("mrc")) {
    if (w.transport != Transport::kMrc) n.fail_key("mrc", "needs \"transport\": \"mrc\"");
    w.mrc = parse_mrc(*m, *it);
  } else if (w.transport == Transport::kMrc) {
    w.mrc = parse_mrc(std::nullopt, *it);
  }
  // nscc runs on MRC QPs only; an MRC QP runs nscc or none (rc::Qp::cc_refusal).
  if (const char* why = cc_refusal(w.cc.algorithm, w.transport == Transport::kMrc)) n.fail_key("cc", why);
  n.finish();
  return w;
}

}  // namespace

std::string_view to_string(WorkloadType t) {
  for (const auto& [name, v] : kTypes) {
    if (v == t) return name;
  }
  return "unknown";
}

std::optional<WorkloadType> workload_type_from_string(std::string_view s) {
  for (const auto& [name, v] : kTypes) {
    if (name == s) return v;
  }
  return std::nullopt;
}

bool is_latency(WorkloadType t) {
  return t == WorkloadType::kWriteLat || t == WorkloadType::kReadLat || t == WorkloadType::kSendLat;
}
bool is_send(WorkloadType t) { return t == WorkloadType::kSendBw || t == WorkloadType::kSendLat; }
bool is_read(WorkloadType t) { return t == WorkloadType::kReadBw || t == WorkloadType::kReadLat; }

std::string_view to_string(Role r) { return r == Role::kServer ? "server" : "client"; }

std::string_view to_string(Transport t) { return t == Transport::kMrc ? "mrc" : "rc"; }

bool parse_ip(std::string_view text, std::optional<std::array<uint8_t, 4>>* v4,
              std::optional<std::array<uint8_t, 16>>* v6) {
  const std::string s(text);
  std::array<uint8_t, 4> a4{};
  std::array<uint8_t, 16> a6{};
  if (inet_pton(AF_INET, s.c_str(), a4.data()) == 1) {
    *v4 = a4;
    return true;
  }
  if (inet_pton(AF_INET6, s.c_str(), a6.data()) == 1) {
    *v6 = a6;
    return true;
  }
  return false;
}

void validate_app_config(const AppConfig& cfg) {
  if (cfg.hosts.empty()) throw config::ConfigError("hosts", "at least one host is needed");
  if (cfg.workloads.empty()) throw config::ConfigError("workloads", "at least one workload is needed");
  // devargs and MACs are unique over every port of every host (value -> owning host).
  std::map<std::string, std::string> devargs, macs;
  for (const AppHost& h : cfg.hosts) {
    for (uint8_t k = 1; k <= h.num_ports(); ++k) {
      const AppPort p = h.port(k);
      const std::string where =
          "hosts." + h.name + (h.more_ports.empty() ? "" : ".ports[" + std::to_string(k - 1) + "]");
      auto owner = [&](const std::string& other) {
        return other == h.name ? std::string("another port of this host") : std::string("another host");
      };
      if (const auto [it, fresh] = devargs.emplace(p.devargs, h.name); !fresh) {
        throw config::ConfigError(where + ".devargs", "\"" + p.devargs + "\" is used by " + owner(it->second));
      }
      if (const auto [it, fresh] = macs.emplace(p.mac.to_string(), h.name); !fresh) {
        throw config::ConfigError(where + ".mac", p.mac.to_string() + " is used by " + owner(it->second));
      }
    }
  }
  std::set<std::string> names;
  std::set<std::pair<std::string, uint16_t>> listening;
  for (size_t i = 0; i < cfg.workloads.size(); ++i) {
    const AppWorkload& w = cfg.workloads[i];
    const std::string where = "workloads[" + std::to_string(i) + "]";
    if (!names.insert(w.name).second) throw config::ConfigError(where + ".name", "\"" + w.name + "\" is used twice");
    if (w.host >= cfg.hosts.size()) throw config::ConfigError(where + ".host", "no such host");
    if (w.port < 1 || w.port > cfg.hosts[w.host].num_ports()) {
      throw config::ConfigError(where + ".port", "host " + cfg.hosts[w.host].name + " has no port " +
                                                     std::to_string(w.port) + " (port is 1-based)");
    }
    if (w.role == Role::kServer && !listening.insert({w.oob_host, w.oob_port}).second) {
      throw config::ConfigError(where + ".oob", "two server workloads listen on " + w.oob_host + ":" +
                                                    std::to_string(w.oob_port));
    }
    if (is_latency(w.type) && w.qps != 1) {
      throw config::ConfigError(where + ".qps", "latency tests run on one QP (perftest's ib_*_lat do too)");
    }
    if (w.transport == Transport::kMrc && w.type != WorkloadType::kWriteBw && w.type != WorkloadType::kWriteLat) {
      throw config::ConfigError(where + ".transport", "mrc carries WRITE and WRITE_WITH_IMM only: write_bw or "
                                                      "write_lat, not " + std::string(to_string(w.type)));
    }
    if (w.oob_format == OobFormat::kPerftest) {
      // perftest's exchange (oob_perftest.h): its steps are known for every
      // test of RC; it carries no MAC, so the port needs a next hop.
      const std::string f = where + ".oob_format";
      if (w.type == WorkloadType::kWriteLat && (w.duration_s > 0 || w.interval_us != 0)) {
        // perftest 4.5's ib_write_lat server starts the ping-pong, so ours
        // does and our client answers (Workload::lat_starter): a client
        // that only answers cannot pace, nor end the run by time.
        throw config::ConfigError(f, std::string("write_lat with perftest's exchange: its server starts the "
                                                 "ping-pong and the client answers, so no ") +
                                         (w.duration_s > 0 ? "duration_s (give iterations)" : "interval_us"));
      }
      // MRC (libsfverbs' SFVERBS_TRANSPORT=mrc on the other side): one GID per
      // QP is all the exchange carries, so one plane.
      if (w.transport == Transport::kMrc && cfg.hosts[w.host].num_ports() > 1) {
        throw config::ConfigError(f, "perftest's exchange carries one address per QP: an MRC workload speaking it "
                                     "sprays over one port (host " + cfg.hosts[w.host].name + " has " +
                                     std::to_string(cfg.hosts[w.host].num_ports()) + ")");
      }
      if (w.verify) {
        throw config::ConfigError(f, "--verify writes WRITE_WITH_IMM a perftest peer does not expect: not with "
                                     "perftest's exchange");
      }
      const AppPort p = cfg.hosts[w.host].port(w.port);
      if (!p.gateway_mac && !p.gateway4 && !p.gateway6) {
        throw config::ConfigError(f, "perftest's exchange carries no MAC: give host " + cfg.hosts[w.host].name +
                                         "'s port a next hop, \"gateway_mac\" (--gateway-mac: on one L2 segment "
                                         "the peer's MAC) or \"gateway\" (resolved by ARP / ND)");
      }
    }
    if (w.type == WorkloadType::kWriteLat && w.size_bytes < 2) {
      throw config::ConfigError(where + ".size", "write_lat needs at least 2 bytes (the last one is the marker)");
    }
    if (is_latency(w.type) && w.size_bytes > cfg.hosts[w.host].mtu_bytes * 1024ull) {
      throw config::ConfigError(where + ".size", "latency tests take messages of at most 1024 MTUs");
    }
    const bool lat_client = is_latency(w.type) && w.role == Role::kClient;
    if (!lat_client && (w.interval_us != 0 || w.stop_with_others || w.samples)) {
      const char* key = w.interval_us != 0 ? ".interval_us" : w.stop_with_others ? ".stop_with_others" : ".samples";
      throw config::ConfigError(where + key, "only a latency client (write_lat, read_lat, send_lat; role client) "
                                             "takes interval_us, stop_with_others and samples");
    }
    if (w.stop_with_others) {
      const bool other = std::any_of(cfg.workloads.begin(), cfg.workloads.end(), [](const AppWorkload& o) {
        return o.role == Role::kClient && !o.stop_with_others;
      });
      if (!other) {
        throw config::ConfigError(where + ".stop_with_others",
                                  "no other client workload in this process to stop with");
      }
    }
  }
}

AppConfig parse_app_config(const config::Json& doc) {
  config::ConfigNode root(doc, "");
  root.expect_object();
  AppConfig cfg;
  config::ConfigNode hosts = root.child("hosts");
  hosts.expect_object();
  for (auto& [name, n] : hosts.members()) cfg.hosts.push_back(parse_host(name, n));
  config::ConfigNode wl = root.child("workloads");
  wl.expect_array();
  for (config::ConfigNode& n : wl.elements()) cfg.workloads.push_back(parse_workload(n, cfg.hosts));
  root.finish();
  validate_app_config(cfg);
  return cfg;
}

AppConfig load_app_config(const std::string& file_path) { return parse_app_config(config::load_file(file_path)); }

}  // namespace sf::nic::app
