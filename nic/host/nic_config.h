// Configuration of a NicNode: the hosts it carries (each with its ports and
// each port's MAC, IPv4 and/or IPv6 address and gateway) and each node
// port's line rate, receive backlog model and PFC settings. Immutable once
// the node is built.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/node.h"
#include "common/pfc/pfc_generator.h"
#include "common/time.h"
#include "common/wire/ethernet.h"
#include "common/wire/ipv4.h"
#include "common/wire/ipv6.h"
#include "nic/host/neighbor.h"
#include "nic/rc/qp.h"

namespace sf::nic {

// The addresses of one verbs port of a host. Seed 002: every plane port of a
// multi-port NIC is its own address (MAC, IP, GID table).
struct HostPortAddr {
  wire::MacAddr mac;
  std::optional<wire::Ipv4Addr> ipv4;  // GID index 0 (::ffff:a.b.c.d)
  std::optional<wire::Ipv6Addr> ipv6;  // GID index 1
  // A routed fabric's next hop: every frame the port sends has this
  // destination MAC (what a routed RoCE NIC's ARP gives for a remote
  // subnet); the IP destination stays the peer's. Unset: the peer's MAC
  // (the QP's ah_attr.dmac).
  std::optional<wire::MacAddr> gateway_mac;
};

struct HostConfig {
  std::string name;
  // The address of every port without its own entry in port_addrs (the
  // single-port form; a host whose ports share one address).
  wire::MacAddr mac;
  std::optional<wire::Ipv4Addr> ipv4;  // GID index 0 (::ffff:a.b.c.d)
  std::optional<wire::Ipv6Addr> ipv6;  // GID index 1
  std::optional<wire::MacAddr> gateway_mac;
  // Routed form (docs/nic.md "ARP, ND and next hops"): prefix lengths and a
  // default gateway resolved by ARP / ND (Neighbors); its MAC then replaces
  // gateway_mac. Empty: the L2 form. `l3` is every port's unless port_l3
  // has one entry per port (port_num k = port_l3[k-1]).
  PortL3 l3;
  std::vector<PortL3> port_l3;
  std::vector<PortId> ports;           // node ports of this host; verbs port_num k = ports[k-1]
  // Per-port addresses: empty (every port uses mac/ipv4/ipv6/gateway_mac
  // above), or one per entry of `ports` (port_num k = port_addrs[k-1]).
  std::vector<HostPortAddr> port_addrs;
  uint32_t max_qps = 64;
  uint32_t max_mrs = 64;
  uint32_t max_cqs = 128;  // two per perftest workload (send, receive): 64 workloads on one host
  uint32_t max_pds = 64;   // one per perftest workload: a 64:1 incast receiver holds 64
  // Zero-copy transmit: a WRITE/SEND frame's payload of at least
  // rc::kZeroCopyMinBytes is an external mbuf segment pointing into the MR
  // (rte_pktmbuf_attach_extbuf, one shared-info refcount per MR) instead of a
  // copy; dereg_mr is EBUSY while such frames are alive. No IOVA is given, so
  // only for drivers that copy with the CPU and free at tx_burst (memif in
  // copy mode, null, pcap, tap), or a caller that frees every frame before the
  // host goes (a test, nic_node_bench); not under a simulator whose links
  // outlive the hosts (sf-sim), never a DMA device. Frames referencing an MR
  // must be freed before its Host is destroyed (the shared info lives in the
  // Host). docs/nic.md "Zero-copy transmit".
  bool tx_zero_copy = false;
  rc::RcConfig rc;
};

struct NicPortConfig {
  BitRate line_rate = BitRate::gbps(100);
  // The port's RoCE MTU (ibv_query_port's active_mtu); reported, a QP's
  // path_mtu is what sizes its frames.
  uint32_t mtu_bytes = 4096;
  // Receive backlog: 0 = frames are processed as they arrive; otherwise the
  // host drains its receive ring at this rate (a slow PCIe/host), the ring
  // holds rx_ring_pkts frames, and PFC can be asserted from its occupancy.
  BitRate rx_drain_rate{0};
  uint32_t rx_ring_pkts = 1024;
  bool pfc_honour = true;                // pause our priorities on received PFC/PAUSE
  uint8_t pfc_generate_mask = 0;         // priorities we may pause the peer for
  // Bit d set: an MRC data frame arriving with IP DSCP d was trimmed by a
  // switch (SWITCH_TRIMMING.dscp_value), whatever size it was cut to
  // (wire::MrcWireConfig::trimmed_dscp_mask). 0: only a frame cut to its
  // headers counts as trimmed; one cut to 128 B (sf-switch's trim size)
  // then fails its ICRC.
  uint64_t mrc_trimmed_dscp_mask = 0;
  Hysteresis pfc_backlog{64 * 1024, 32 * 1024};  // bytes of receive backlog per priority
  uint16_t pfc_quanta = 0xFFFF;
  // Priority of a received frame: its VLAN PCP, else DSCP >> 3 (DSCP 26 -> 3).
  // Timing wheel geometry.
  TimeNs wheel_slot = TimeNs(64);
  uint32_t wheel_slots = 8192;
};

struct NicConfig {
  std::vector<HostConfig> hosts;
  std::vector<NicPortConfig> ports;  // one per node port
};

}  // namespace sf::nic
