// libsfverbs' configuration: environment variables read once per process
// (docs/ibverbs.md "Environment"), parsed into an immutable struct before
// anything starts. Pure (no EAL, no I/O beyond getenv in from_env), so it is
// unit-tested.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/wire/ethernet.h"
#include "common/wire/ipv4.h"
#include "common/wire/ipv6.h"

namespace sf::nic::ibverbs {

// A static neighbour: the MAC that frames to a peer's address go to (what
// the kernel's ARP / ND table gives a hardware RoCE NIC).
struct Neighbour {
  bool v4 = true;
  wire::Ipv4Addr ipv4;
  wire::Ipv6Addr ipv6;
  wire::MacAddr mac;
};

// How the datapath makes progress (docs/ibverbs.md "Threading").
enum class IdleMode : uint8_t { kBackoff, kSpin };

struct SfVerbsConfig {
  std::string device_name = "sf0";     // SFVERBS_DEVICE: ibv_get_device_name()
  std::string devargs;                 // SFVERBS_PORT: a --vdev string or a PCI address
  std::optional<wire::Ipv4Addr> ipv4;  // SFVERBS_IP (GID index 0)
  std::optional<wire::Ipv6Addr> ipv6;  // SFVERBS_IP (GID index 1)
  wire::MacAddr mac;                   // SFVERBS_MAC, default derived from the address
  std::optional<wire::MacAddr> gateway_mac;  // SFVERBS_GATEWAY_MAC: routed next hop
  std::vector<Neighbour> neighbours;   // SFVERBS_NEIGH: ip=mac,...
  uint32_t speed_gbps = 100;           // SFVERBS_SPEED_GBPS: line rate the driver shapes to
  uint32_t mtu_bytes = 4096;           // SFVERBS_MTU: RoCE MTU 256..4096
  IdleMode idle = IdleMode::kBackoff;  // SFVERBS_IDLE: backoff | spin
  bool inline_progress = false;        // SFVERBS_INLINE_PROGRESS=1: poll_cq on an empty CQ runs the loop
  // SFVERBS_STAND_BACK_US (with inline progress only; 0: off): the progress
  // thread sleeps while an application thread ran the loop within this many
  // microseconds (one busy thread a process instead of two).
  uint32_t stand_back_us = 0;
  bool mrc = false;                    // SFVERBS_TRANSPORT=mrc: every IBV_QPT_RC QP is an MRC QP (docs/mrc.md)
  std::string cc = "none";             // SFVERBS_CC: each QP's congestion control (runtime.cc checks)
  std::string progress_sched = "other";  // SFVERBS_PROGRESS_SCHED: other | nice:N | fifo:N | rr:N (runtime.cc checks)
  uint32_t max_sleep_us = 100;         // SFVERBS_MAX_SLEEP_US: longest idle sleep of the progress thread
  // SFVERBS_POLL_YIELD: an application thread yields its core (sched_yield)
  // once per this many ibv_poll_cq calls that found their CQ empty; 0 never.
  // auto (the default): effective_poll_yield() decides from the CPUs the
  // process may run on; Runtime::get() stores the decision in poll_yield.
  uint32_t poll_yield = 0;
  bool poll_yield_auto = true;
  std::vector<std::string> eal_extra;  // SFVERBS_EAL: extra EAL arguments, space separated
  std::string log_level = "warn";      // SFVERBS_LOG: debug | info | warn | error
};

// SFVERBS_POLL_YIELD=auto: kAutoPollYield on a process allowed fewer than
// kAutoPollYieldBelowCpus CPUs (an application thread spinning on its CQ and
// the progress threads of both ends of a link then share cores: perftest -R's
// server starved the datapath, docs/ibverbs.md), else 0; an explicit value
// as given.
inline constexpr uint32_t kAutoPollYield = 1024;
inline constexpr unsigned kAutoPollYieldBelowCpus = 4;
uint32_t effective_poll_yield(const SfVerbsConfig& c, unsigned cpus);

// Parses the variables `get(name)` returns (nullptr = unset). Returns an
// error text naming the variable, or empty on success. SFVERBS_PORT unset is
// not an error: the device list is then empty (`configured` false).
std::string parse_config(const std::function<const char*(const char*)>& get, SfVerbsConfig* out, bool* configured);

// The locally administered MAC derived from an address when SFVERBS_MAC
// (or a neighbour entry) does not name one: 02:00 and the IPv4 address's four
// bytes (an IPv6 address: its last four). Peers resolve each other the same way.
wire::MacAddr derived_mac(const wire::Ipv4Addr& ip);
wire::MacAddr derived_mac(const wire::Ipv6Addr& ip);

// The MAC for a destination GID (16 bytes; IPv4-mapped or IPv6): the
// neighbour table's entry, else derived_mac().
wire::MacAddr resolve_mac(const SfVerbsConfig& cfg, const uint8_t gid[16]);

}  // namespace sf::nic::ibverbs
