// libsfverbs' environment configuration. See sfverbs_config.h.
#include "nic/ibverbs/sfverbs_config.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string_view>

namespace sf::nic::ibverbs {

namespace {

bool parse_mac_text(const std::string& s, wire::MacAddr* m) {
  unsigned b[6];
  char tail = 0;
  if (std::sscanf(s.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6) {
    return false;
  }
  for (int i = 0; i < 6; ++i) m->bytes[i] = static_cast<uint8_t>(b[i]);
  return true;
}

bool parse_u32(const char* s, uint32_t lo, uint32_t hi, uint32_t* v) {
  const char* e = s + std::strlen(s);
  const auto [p, ec] = std::from_chars(s, e, *v);
  return ec == std::errc{} && p == e && *v >= lo && *v <= hi;
}

// "a.b.c.d" or an IPv6 address into the config's families; false if neither.
bool parse_ip(const std::string& s, bool* v4, wire::Ipv4Addr* a4, wire::Ipv6Addr* a6) {
  if (inet_pton(AF_INET, s.c_str(), a4->bytes.data()) == 1) {
    *v4 = true;
    return true;
  }
  if (inet_pton(AF_INET6, s.c_str(), a6->bytes.data()) == 1) {
    *v4 = false;
    return true;
  }
  return false;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) {
    if (!cur.empty()) out.push_back(cur);
  }
  return out;
}

}  // namespace

wire::MacAddr derived_mac(const wire::Ipv4Addr& ip) {
  return wire::MacAddr{{0x02, 0x00, ip.bytes[0], ip.bytes[1], ip.bytes[2], ip.bytes[3]}};
}

wire::MacAddr derived_mac(const wire::Ipv6Addr& ip) {
  return wire::MacAddr{{0x02, 0x00, ip.bytes[12], ip.bytes[13], ip.bytes[14], ip.bytes[15]}};
}

wire::MacAddr resolve_mac(const SfVerbsConfig& cfg, const uint8_t gid[16]) {
  static constexpr uint8_t kV4Prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  const bool v4 = std::memcmp(gid, kV4Prefix, 12) == 0;
  wire::Ipv4Addr a4;
  wire::Ipv6Addr a6;
  std::memcpy(a4.bytes.data(), gid + 12, 4);
  std::memcpy(a6.bytes.data(), gid, 16);
  for (const Neighbour& n : cfg.neighbours) {
    if (n.v4 == v4 && (v4 ? n.ipv4 == a4 : n.ipv6 == a6)) return n.mac;
  }
  return v4 ? derived_mac(a4) : derived_mac(a6);
}

std::string parse_config(const std::function<const char*(const char*)>& get, SfVerbsConfig* out, bool* configured) {
  SfVerbsConfig c;
  *configured = false;
  const char* port = get("SFVERBS_PORT");
  if (port == nullptr || *port == '\0') {
    *out = c;
    return {};
  }
  c.devargs = port;
  if (const char* v = get("SFVERBS_DEVICE"); v != nullptr) {
    c.device_name = v;
    if (c.device_name.empty() || c.device_name.size() >= 64) return "SFVERBS_DEVICE: want 1..63 characters";
  }
  const char* ip = get("SFVERBS_IP");
  if (ip == nullptr || *ip == '\0') return "SFVERBS_IP: the port's IPv4 and/or IPv6 address (its GIDs) is required";
  for (const std::string& a : split(ip, ',')) {
    bool v4 = false;
    wire::Ipv4Addr a4;
    wire::Ipv6Addr a6;
    if (!parse_ip(a, &v4, &a4, &a6)) return "SFVERBS_IP: '" + a + "' is not an IPv4 or IPv6 address";
    if (v4 ? c.ipv4.has_value() : c.ipv6.has_value()) return "SFVERBS_IP: two addresses of one family";
    if (v4) c.ipv4 = a4;
    else c.ipv6 = a6;
  }
  if (const char* v = get("SFVERBS_MAC"); v != nullptr) {
    if (!parse_mac_text(v, &c.mac)) return std::string("SFVERBS_MAC: '") + v + "' is not a MAC (aa:bb:cc:dd:ee:ff)";
  } else {
    c.mac = c.ipv4 ? derived_mac(*c.ipv4) : derived_mac(*c.ipv6);
  }
  if (const char* v = get("SFVERBS_GATEWAY_MAC"); v != nullptr) {
    wire::MacAddr g;
    if (!parse_mac_text(v, &g)) return std::string("SFVERBS_GATEWAY_MAC: '") + v + "' is not a MAC";
    c.gateway_mac = g;
  }
  if (const char* v = get("SFVERBS_NEIGH"); v != nullptr) {
    for (const std::string& e : split(v, ',')) {
      const size_t eq = e.find('=');
      Neighbour n;
      if (eq == std::string::npos || !parse_ip(e.substr(0, eq), &n.v4, &n.ipv4, &n.ipv6) ||
          !parse_mac_text(e.substr(eq + 1), &n.mac)) {
        return "SFVERBS_NEIGH: '" + e + "' is not IP=MAC";
      }
      c.neighbours.push_back(n);
    }
  }
  if (const char* v = get("SFVERBS_SPEED_GBPS"); v != nullptr && !parse_u32(v, 1, 800, &c.speed_gbps)) {
    return std::string("SFVERBS_SPEED_GBPS: '") + v + "' is not 1..800";
  }
  if (const char* v = get("SFVERBS_MTU"); v != nullptr) {
    if (!parse_u32(v, 256, 4096, &c.mtu_bytes) || (c.mtu_bytes & (c.mtu_bytes - 1)) != 0) {
      return std::string("SFVERBS_MTU: '") + v + "' is not 256, 512, 1024, 2048 or 4096";
    }
  }
  if (const char* v = get("SFVERBS_IDLE"); v != nullptr) {
    const std::string s = v;
    if (s == "backoff") c.idle = IdleMode::kBackoff;
    else if (s == "spin") c.idle = IdleMode::kSpin;
    else return "SFVERBS_IDLE: '" + s + "' is not backoff or spin";
  }
  if (const char* v = get("SFVERBS_INLINE_PROGRESS"); v != nullptr) {
    const std::string s = v;
    if (s != "0" && s != "1") return "SFVERBS_INLINE_PROGRESS: '" + s + "' is not 0 or 1";
    c.inline_progress = s == "1";
  }
  if (const char* v = get("SFVERBS_STAND_BACK_US"); v != nullptr) {
    if (!parse_u32(v, 0, 100000, &c.stand_back_us)) return std::string("SFVERBS_STAND_BACK_US: '") + v + "' is not 0..100000";
    if (c.stand_back_us != 0 && !c.inline_progress) {
      return "SFVERBS_STAND_BACK_US: needs SFVERBS_INLINE_PROGRESS=1 (without it no application thread runs the loop)";
    }
  }
  if (const char* v = get("SFVERBS_PROGRESS_SCHED"); v != nullptr) c.progress_sched = v;
  if (const char* v = get("SFVERBS_TRANSPORT"); v != nullptr) {
    const std::string s = v;
    if (s != "rc" && s != "mrc") return "SFVERBS_TRANSPORT: '" + s + "' is not rc or mrc";
    c.mrc = s == "mrc";
  }
  if (const char* v = get("SFVERBS_CC"); v != nullptr) c.cc = v;
  if (const char* v = get("SFVERBS_MAX_SLEEP_US"); v != nullptr && !parse_u32(v, 1, 100000, &c.max_sleep_us)) {
    return std::string("SFVERBS_MAX_SLEEP_US: '") + v + "' is not 1..100000";
  }
  if (const char* v = get("SFVERBS_POLL_YIELD"); v != nullptr) {
    c.poll_yield_auto = std::string_view(v) == "auto";
    if (!c.poll_yield_auto && !parse_u32(v, 0, 1000000, &c.poll_yield)) {
      return std::string("SFVERBS_POLL_YIELD: '") + v + "' is not auto or 0..1000000";
    }
  }
  if (const char* v = get("SFVERBS_EAL"); v != nullptr) c.eal_extra = split(v, ' ');
  if (const char* v = get("SFVERBS_LOG"); v != nullptr) {
    c.log_level = v;
    if (c.log_level != "debug" && c.log_level != "info" && c.log_level != "warn" && c.log_level != "error") {
      return "SFVERBS_LOG: '" + c.log_level + "' is not debug, info, warn or error";
    }
  }
  *out = c;
  *configured = true;
  return {};
}

uint32_t effective_poll_yield(const SfVerbsConfig& c, unsigned cpus) {
  if (!c.poll_yield_auto) return c.poll_yield;
  return cpus < kAutoPollYieldBelowCpus ? kAutoPollYield : 0;
}

}  // namespace sf::nic::ibverbs
