// NicConfig from JSON. See nic_config_json.h.
#include "nic/host/nic_config_json.h"

#include <arpa/inet.h>

#include <cstring>

namespace sf::nic {

namespace {

std::vector<std::string> string_list(config::ConfigNode& n, std::string_view key) {
  std::vector<std::string> out;
  config::ConfigNode arr = n.child(key);
  arr.expect_array();
  for (const config::ConfigNode& e : arr.elements()) out.push_back(e.as<std::string>());
  return out;
}

}  // namespace

NicDocument parse_nic_config(const config::Json& doc) {
  config::ConfigNode root(doc, "");
  root.expect_object();
  NicDocument out;
  out.ports = config::parse_ports(root.child("PORT"));
  const size_t n_ports = out.ports.ports.size();
  out.nic.ports.resize(n_ports);
  for (size_t i = 0; i < n_ports; ++i) out.nic.ports[i].line_rate = out.ports.ports[i].speed;

  std::vector<std::string> owner(n_ports);
  config::ConfigNode hosts = root.child("NIC_HOST");
  hosts.expect_object();
  for (auto& [name, h] : hosts.members()) {
    h.expect_object();
    HostConfig hc;
    hc.name = name;
    const std::string mac_text = h.req<std::string>("mac");
    const auto mac = config::parse_mac(mac_text);
    if (!mac || mac->is_multicast() || mac->is_zero()) {
      h.fail_key("mac", "\"" + mac_text + "\" is not a unicast MAC address (aa:bb:cc:dd:ee:ff)");
    }
    hc.mac.bytes = mac->bytes;
    if (h.has("ipv4")) {
      const std::string t = h.req<std::string>("ipv4");
      wire::Ipv4Addr a;
      if (inet_pton(AF_INET, t.c_str(), a.bytes.data()) != 1) h.fail_key("ipv4", "\"" + t + "\" is not an IPv4 address");
      hc.ipv4 = a;
    }
    if (h.has("ipv6")) {
      const std::string t = h.req<std::string>("ipv6");
      wire::Ipv6Addr a;
      if (inet_pton(AF_INET6, t.c_str(), a.bytes.data()) != 1) h.fail_key("ipv6", "\"" + t + "\" is not an IPv6 address");
      hc.ipv6 = a;
    }
    if (!hc.ipv4 && !hc.ipv6) h.fail("needs \"ipv4\" or \"ipv6\"");
    for (const std::string& pn : string_list(h, "ports")) {
      const int p = out.ports.find(pn);
      if (p < 0) h.fail_key("ports", "\"" + pn + "\" is not in the PORT table");
      if (!owner[p].empty()) h.fail_key("ports", "\"" + pn + "\" already belongs to " + hosts.key_path(owner[p]));
      owner[p] = name;
      hc.ports.push_back(static_cast<PortId>(p));
    }
    if (hc.ports.empty()) h.fail_key("ports", "a host needs at least one port");
    hc.max_qps = h.opt<uint32_t>("max_qps", 64, config::in_range<uint32_t>(1, 65536));
    hc.max_mrs = h.opt<uint32_t>("max_mrs", 64, config::in_range<uint32_t>(1, 1u << 16));
    hc.max_cqs = h.opt<uint32_t>("max_cqs", 64, config::in_range<uint32_t>(1, 1u << 16));
    hc.max_pds = h.opt<uint32_t>("max_pds", 16, config::in_range<uint32_t>(1, 1u << 16));
    if (auto rc = h.opt_child("rc")) {
      rc->expect_object();
      hc.rc.max_unacked_psns = rc->opt<uint32_t>("max_unacked_psns", hc.rc.max_unacked_psns,
                                                 config::in_range<uint32_t>(1, 1u << 22));
      hc.rc.ack_req_every_pkts = rc->opt<uint32_t>("ack_req_every_pkts", hc.rc.ack_req_every_pkts,
                                                   config::in_range<uint32_t>(1, 1u << 22));
      hc.rc.cnp_interval = rc->opt_duration("cnp_interval", hc.rc.cnp_interval);
      hc.rc.cnp_dscp = rc->opt<uint8_t>("cnp_dscp", hc.rc.cnp_dscp, config::in_range<uint8_t>(0, 63));
      hc.rc.ecn_capable = rc->opt<bool>("ecn", hc.rc.ecn_capable);
      rc->finish();
    }
    h.finish();
    out.nic.hosts.push_back(std::move(hc));
  }
  if (out.nic.hosts.empty()) hosts.fail("at least one host is required");
  for (size_t p = 0; p < n_ports; ++p) {
    if (owner[p].empty()) hosts.fail("port \"" + out.ports.ports[p].name + "\" belongs to no host");
  }

  if (auto np = root.opt_child("NIC_PORT")) {
    np->expect_object();
    for (auto& [pname, n] : np->members()) {
      const int p = out.ports.find(pname);
      if (p < 0) n.fail("\"" + pname + "\" is not in the PORT table");
      n.expect_object();
      NicPortConfig& pc = out.nic.ports[p];
      pc.rx_drain_rate = n.opt_rate("rx_drain_rate", BitRate(0));
      pc.rx_ring_pkts = n.opt<uint32_t>("rx_ring_pkts", pc.rx_ring_pkts, config::in_range<uint32_t>(1, 1u << 20));
      pc.pfc_honour = n.opt<bool>("pfc_honour", pc.pfc_honour);
      if (n.has("pfc_generate")) {
        config::ConfigNode arr = n.child("pfc_generate");
        arr.expect_array();
        for (const config::ConfigNode& e : arr.elements()) {
          pc.pfc_generate_mask |= static_cast<uint8_t>(1u << e.as<uint8_t>(config::in_range<uint8_t>(0, 7)));
        }
      }
      pc.pfc_backlog.xoff_at = n.opt_bytes("pfc_xoff", pc.pfc_backlog.xoff_at, config::in_range<uint64_t>(1, 1ull << 32));
      pc.pfc_backlog.xon_at = n.opt_bytes("pfc_xon", pc.pfc_backlog.xon_at, config::in_range<uint64_t>(0, 1ull << 32));
      if (pc.pfc_backlog.xon_at >= pc.pfc_backlog.xoff_at) n.fail_key("pfc_xon", "must be below pfc_xoff");
      pc.pfc_quanta = n.opt<uint16_t>("pfc_quanta", pc.pfc_quanta, config::in_range<uint16_t>(1, 0xFFFF));
      if (pc.pfc_generate_mask != 0 && pc.rx_drain_rate.bps() == 0) {
        n.fail_key("pfc_generate", "needs rx_drain_rate (there is no receive backlog without it)");
      }
      n.finish();
    }
  }
  root.finish();
  return out;
}

}  // namespace sf::nic
