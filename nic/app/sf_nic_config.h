// sf-nic's configuration: the hosts one process carries (each on its own DPDK
// port) and the perftest-style workloads they run, from a nic.json file or
// from perftest-style flags (one host, one workload). Parsed and validated
// before anything starts; errors name the JSON path (or the flag).
// The contract with tools/lab is docs/nic-app.md ("nic.json").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/config/config_node.h"
#include "common/config/port_config.h"
#include "nic/cc/congestion_control.h"
#include "nic/verbs/verbs.h"

namespace sf::nic::app {

// perftest's six tests (ib_write_bw ... ib_send_lat).
enum class WorkloadType : uint8_t { kWriteBw, kWriteLat, kReadBw, kReadLat, kSendBw, kSendLat };
std::string_view to_string(WorkloadType t);
std::optional<WorkloadType> workload_type_from_string(std::string_view s);
inline constexpr std::string_view kWorkloadNames = "write_bw, write_lat, read_bw, read_lat, send_bw, send_lat";
bool is_latency(WorkloadType t);
bool is_send(WorkloadType t);   // SEND (needs posted receives at the server)
bool is_read(WorkloadType t);

enum class Role : uint8_t { kServer, kClient };
std::string_view to_string(Role r);

// The QP transport of a workload: RoCEv2 RC, or MRC (docs/mrc.md: sprayed
// over entropy values and every port of the host, SACK, out-of-order
// placement; WRITE and WRITE_WITH_IMM only, so write_bw and write_lat).
enum class Transport : uint8_t { kRc, kMrc };
std::string_view to_string(Transport t);
inline constexpr std::string_view kTransportNames = "rc, mrc";

// The out-of-band exchange a workload speaks: sf-nic's own (SFOOB/3,
// oob_exchange.h) or perftest's (oob_perftest.h: the peer is an unmodified
// perftest process; write_bw and read_bw, RC or one-port MRC).
enum class OobFormat : uint8_t { kSf, kPerftest };

// One port of a host (its own DPDK device, addresses and line rate).
struct AppPort {
  std::string devargs;
  config::MacAddr mac;
  std::optional<std::array<uint8_t, 4>> ipv4;
  std::optional<std::array<uint8_t, 16>> ipv6;
  uint32_t speed_gbps = 100;     // line rate the driver shapes to
  // Routed fabric: the destination MAC of every frame the port sends (its
  // next hop); the IP destination stays the peer's.
  std::optional<config::MacAddr> gateway_mac;
  // Routed fabric, resolved (docs/nic-app.md "Routed fabrics"): "ip" /
  // "ipv6" as ADDRESS/PREFIX give the on-link subnet (0: not given), and
  // "gateway" the default gateway whose MAC ARP / ND resolves.
  uint8_t ipv4_prefix = 0;
  uint8_t ipv6_prefix = 0;
  std::optional<std::array<uint8_t, 4>> gateway4;
  std::optional<std::array<uint8_t, 16>> gateway6;
};

// A host: verbs port 1 is the fields below (the single-port form's
// host-level keys, or nic.json "ports"[0]); ports 2..N are more_ports.
struct AppHost {
  std::string name;
  std::string devargs;
  config::MacAddr mac;
  std::optional<std::array<uint8_t, 4>> ipv4;
  std::optional<std::array<uint8_t, 16>> ipv6;
  uint32_t speed_gbps = 100;     // line rate the driver shapes to
  std::optional<config::MacAddr> gateway_mac;
  uint8_t ipv4_prefix = 0;
  uint8_t ipv6_prefix = 0;
  std::optional<std::array<uint8_t, 4>> gateway4;
  std::optional<std::array<uint8_t, 16>> gateway6;
  std::vector<AppPort> more_ports;  // verbs ports 2..N
  // Settings below apply to every port.
  uint32_t mtu_bytes = 4096;     // RoCE path MTU: 256, 512, 1024, 2048 or 4096
  uint8_t dscp = 26;             // data frames (RoCE lossless class)
  uint8_t cnp_dscp = 48;
  uint8_t pfc_enable = 0;        // priorities this host honours PFC for (bit p); received PFC pauses them
  // A slow receiver: its receive ring drains at this rate (0 = at once) and
  // its backlog sends PFC for the pfc_generate priorities, XOFF at pfc_xoff
  // bytes of backlog, XON at pfc_xon.
  BitRate rx_drain_rate{0};
  uint8_t pfc_generate = 0;
  uint64_t pfc_xoff_bytes = 64 * 1024;
  uint64_t pfc_xon_bytes = 32 * 1024;
  // "mrc_trim_dscp": the DSCP a trimming switch marks trimmed frames with
  // (SWITCH_TRIMMING.dscp_value); MRC data frames arriving with it are taken
  // as trimmed (NicPortConfig::mrc_trimmed_dscp_mask). 0 = none.
  uint64_t mrc_trimmed_dscp_mask = 0;
  // Verbs object limits of the host (nic/host/nic_config.h HostConfig): a
  // perftest workload takes one PD, one MR, two CQs and `qps` QPs, so the
  // defaults hold 64 workloads; a 64:1 receiver with a probe, or repeated
  // bursts, needs more ("max_qps", "max_mrs", "max_cqs", "max_pds").
  uint32_t max_qps = 64;
  uint32_t max_mrs = 64;
  uint32_t max_cqs = 128;
  uint32_t max_pds = 64;

  // Verbs ports of the host (1 + more_ports) and port k (1-based) of them.
  uint8_t num_ports() const { return static_cast<uint8_t>(1 + more_ports.size()); }
  AppPort port(uint8_t k) const {
    if (k >= 2 && k - 2u < more_ports.size()) return more_ports[k - 2u];
    return {devargs, mac, ipv4, ipv6, speed_gbps, gateway_mac, ipv4_prefix, ipv6_prefix, gateway4, gateway6};
  }
};

// nic.json "ports": at most this many per host.
inline constexpr uint32_t kMaxAppPorts = 32;
// nic.json "max_qps" / "max_mrs" / "max_cqs" / "max_pds": at most this many.
inline constexpr uint32_t kMaxHostObjects = 16384;

struct AppWorkload {
  std::string name;
  size_t host = 0;               // index into AppConfig::hosts
  uint8_t port = 1;              // the host's verbs port (port_num) its QPs are bound to
  WorkloadType type = WorkloadType::kWriteBw;
  Role role = Role::kServer;
  std::string oob_host = "127.0.0.1";  // client: server to reach; server: address to bind
  uint16_t oob_port = 18515;
  OobFormat oob_format = OobFormat::kSf;  // --oob-format
  uint64_t size_bytes = 65536;   // message size (-s)
  uint64_t iterations = 1000;    // messages per QP (-n); 0 when duration_s is used
  double duration_s = 0;         // -D: run for this long instead of a count
  uint32_t qps = 1;              // -q
  uint32_t tx_depth = 128;       // -t: outstanding work requests per QP (bandwidth tests)
  CcChoice cc;                   // --cc
  BitRate rate_limit{0};         // per-QP pacing rate (ibv_modify_qp_rate_limit); 0 = line rate
  uint32_t burst_bytes = 0;      // its max_burst_sz (wire bytes); 0 = strict pacing; needs rate_limit
  bool verify = false;           // check every received byte (the sender writes a pattern)
  uint32_t start_ms = 0;         // client: start traffic this long after connecting
  // Latency probes (tools/lab, docs/nic-app.md): a latency client starts a
  // round trip at most every interval_us (0 = back to back, perftest's way;
  // > 0: each sample is its round trip's post -> reply), stops posting once
  // every other client workload of the process has finished
  // (stop_with_others), and lists every sample in the report (samples).
  uint32_t interval_us = 0;
  bool stop_with_others = false;
  bool samples = false;
  std::optional<uint8_t> dscp;   // this workload's QPs instead of the host's DSCP
  Transport transport = Transport::kRc;  // --transport
  // transport mrc: nic.json "mrc" (the verbs::mrc_modify_qp fields, same
  // names; docs/nic-app.md). The peer's per-port addresses come over OOB.
  verbs::MrcQpAttr mrc;
};

// sf-nic's MRC timers: verbs' defaults are a hardware NIC's (100 us RTO,
// 20 us probes, 15 us reordering tolerance); a software endpoint whose
// processes share cores may not run for milliseconds (an RTO then fires
// spuriously and max_timeouts of them fail the QP). nic.json "mrc" starts
// from these: base_rtt_ns 500 us (the default window is one BDP at line
// rate x base_rtt_ns: 10 us would allow 3 packets in flight at 10 Gb/s, and
// a round trip between two sf-nic processes that sleep when idle takes
// hundreds of us), rto_ns 64 ms (RC's perftest timeout 14 is 67 ms),
// probe_interval_ns and ooo_tolerance_ns 1 ms, ev_probe_interval_ns 5 ms;
// the rest as verbs. sf-lab's virtual-time runs pass the hardware timers.
verbs::MrcQpAttr app_mrc_defaults();

struct AppConfig {
  std::vector<AppHost> hosts;
  std::vector<AppWorkload> workloads;
};

// nic.json: {"hosts": {NAME: {...}}, "workloads": [{...}]} (docs/nic-app.md).
// Throws config::ConfigError naming the JSON path.
AppConfig parse_app_config(const config::Json& doc);
AppConfig load_app_config(const std::string& file_path);

// Cross-checks shared by both front ends (devargs and OOB endpoints used
// twice, a workload on an unknown host, size vs MTU); throws ConfigError
// with `where` + the offending field.
void validate_app_config(const AppConfig& cfg);

// "10.0.0.1" / "fd00::1" -> bytes; false when neither.
bool parse_ip(std::string_view text, std::optional<std::array<uint8_t, 4>>* v4,
              std::optional<std::array<uint8_t, 16>>* v6);

}  // namespace sf::nic::app
