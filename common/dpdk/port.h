// Port: one ethdev opened from any devargs string (net_ring, net_memif,
// net_pcap, net_af_xdp, net_af_packet, net_tap, net_null, a PCI BDF ...) and
// brought up in the canonical DPDK order (STYLE G14). The only class in the
// project that calls rte_eth_*.
//
// Threading: open/close/stats on the control thread; rx_burst/tx_burst from
// the one lcore that polls the queue. Move-only; closes on destruction.
#pragma once

#include <rte_ethdev.h>

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/dpdk/burst_guard.h"
#include "common/dpdk/result.h"
#include "common/time.h"

namespace sf::dpdk {

enum class LinkWait : uint8_t {
  kAuto,        // kRequireUp for PCI devices, kBestEffort for vdevs
  kRequireUp,   // link still down after the timeout -> error
  kBestEffort,  // wait up to the timeout, then continue with the link down
  kSkip,        // do not wait
};

struct PortConfig {
  std::string devargs;  // "net_memif0,role=server,socket=/tmp/x.sock", "0000:3b:00.0", ...
  uint16_t rx_queues = 1;
  uint16_t tx_queues = 1;
  uint16_t rx_desc = 1024;  // per queue, adjusted to the device limits
  uint16_t tx_desc = 1024;
  uint16_t mtu = 0;          // 0: device default
  bool mtu_best_effort = false;  // mtu above the device maximum: use the maximum (see mtu_note())
  bool multi_seg_tx = true;  // enable RTE_ETH_TX_OFFLOAD_MULTI_SEGS where offered
  bool promiscuous = true;
  LinkWait link_wait = LinkWait::kAuto;
  TimeNs link_timeout = TimeNs::from_s(3);
};

struct PortStats {
  uint64_t rx_pkts = 0, tx_pkts = 0, rx_bytes = 0, tx_bytes = 0;
  uint64_t rx_missed = 0, rx_errors = 0, tx_errors = 0, rx_nombuf = 0;
};

// The devargs a memif port is probed with: for an MTU whose frames exceed one
// memif buffer (2048 B by default) "bsize=" is added, sized to hold the
// largest frame, unless the devargs set it. DPDK 22.11's memif copy path
// splits a frame that spans several descriptors into two received packets
// when the receiver's burst ends inside it (seen here: 4154 B RoCE frames
// arriving as 2048 B + 2106 B fragments under load); one descriptor per frame
// avoids it. Other devargs are returned unchanged. Pure (unit-tested).
std::string memif_devargs_for_mtu(const std::string& devargs, uint32_t mtu_bytes);

// The largest frame a memif link between our processes may carry whatever
// the local MTU: a jumbo frame of a 9100 B switch port (flooded to every
// port), 9216 B with headers.
inline constexpr uint32_t kMemifLinkMaxFrameBytes = 9216;
// memif_devargs_for_mtu() for a link that may carry any frame up to
// kMemifLinkMaxFrameBytes (bsize 16384), or the MTU's frame if larger: what
// sf-pktio and sf-nic give a memif port whose devargs set no bsize (a user's
// bsize is kept). Frames larger than bsize mixed with one-descriptor frames
// make DPDK 22.11's memif receiver lose its ring (4,000 mixed 60 B / 2-9 KiB
// frames arrived as 91,317 at bsize 2048; docs/soak.md "Findings"). Pure.
std::string memif_devargs_for_link(const std::string& devargs, uint32_t mtu_bytes);

// Names of the ethdev ports that exist now (e.g. from --vdev / -a), in port id order.
std::vector<std::string> existing_port_names();

class Port {
 public:
  // Probes the device (rte_dev_probe) unless a port of that name exists (e.g.
  // from --vdev / -a), then configures, sets up queues on the port's socket
  // with mbufs from `pool`, starts it and waits for the link per cfg.
  static Result<Port> open(const PortConfig& cfg, rte_mempool* pool);

  Port() = default;
  Port(Port&& o) noexcept;
  Port& operator=(Port&& o) noexcept;
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;
  ~Port() { close(); }

  // Data path (PacketIo). Ownership of received mbufs passes to the caller;
  // of the first n transmitted to the PMD.
  // memif ports run each burst under a fault guard (burst_guard.h): a peer
  // that leaves while we are inside the PMD (its memory unmapped under us)
  // is an abandoned burst, not a crash, and every mbuf is accounted for
  // (burst_guard_pool.h, with the port's pools counted: create_pktmbuf_pool):
  // rx: the packets the PMD had completed are returned; the mbufs of the one
  // it was building are lost, counted in burst_fault_leaked_mbufs().
  // tx: all n count as taken; the packets the PMD had not yet copied (and
  // freed) are freed here and counted in burst_fault_pkts(). Where the
  // accounting cannot be exact (an uncounted pool, a shared mbuf in a tx
  // burst) the tx packets leak as before, counted in burst_fault_pkts() and
  // burst_fault_inexact().
  uint16_t rx_burst(std::span<rte_mbuf*> pkts, uint16_t queue = 0) {
    if (guarded_) return burst_guarded(pkts.data(), static_cast<uint16_t>(pkts.size()), queue, false);
    return rte_eth_rx_burst(port_id_, queue, pkts.data(), static_cast<uint16_t>(pkts.size()));
  }
  uint16_t tx_burst(std::span<rte_mbuf*> pkts, uint16_t queue = 0) {
    if (guarded_) return burst_guarded(pkts.data(), static_cast<uint16_t>(pkts.size()), queue, true);
    return rte_eth_tx_burst(port_id_, queue, pkts.data(), static_cast<uint16_t>(pkts.size()));
  }
  // Bursts cut short by a fault (the peer left inside them), and the tx
  // packets lost with them; data-path thread.
  uint64_t burst_faults() const { return burst_faults_; }
  uint64_t burst_fault_pkts() const { return burst_fault_pkts_; }
  // mbufs abandoned bursts left out of every pool (never returned), and the
  // faults whose mbufs could not be counted exactly (then burst_fault_pkts()
  // tx packets may have leaked too).
  uint64_t burst_fault_leaked_mbufs() const { return burst_fault_leaked_mbufs_; }
  uint64_t burst_fault_inexact() const { return burst_fault_inexact_; }
  bool guarded() const { return guarded_; }
  // memif ports are guarded from open(); tests guard another port to drive
  // a fault through it (a burst callback that touches unmapped memory).
  void guard_bursts_for_test() {
    install_burst_fault_handler();
    guarded_ = true;
  }

  bool is_open() const { return open_; }
  uint16_t port_id() const { return port_id_; }
  const std::string& name() const { return name_; }
  const std::string& driver() const { return driver_; }
  // The MTU the port carries: the device's, or for memif (which reports a
  // 1500 B maximum it does not enforce) the one asked for.
  uint16_t mtu() const { return mtu_; }
  // Why the MTU differs from the one asked for; empty if it does not.
  const std::string& mtu_note() const { return mtu_note_; }
  // The device's MAC address (rte_eth_macaddr_get); zero if unknown.
  std::array<uint8_t, 6> mac() const;
  bool multi_seg_tx() const { return multi_seg_tx_; }

  bool link_up() const;
  uint32_t link_speed_mbps() const;
  // Polls the link every 10 ms until up or `timeout`; error names the port.
  Status wait_link_up(TimeNs timeout) const;

  Result<PortStats> stats() const;
  // Extended statistics by name (driver-specific names, e.g. "rx_good_packets").
  Result<std::map<std::string, uint64_t>> xstats() const;
  Result<uint64_t> xstat(const std::string& name) const;
  Status reset_stats();

  // Stops and closes the port; detaches the device if open() probed it.
  void close();

 private:
  std::string name_;
  std::string driver_;
  std::string mtu_note_;
  std::string bus_device_;  // device name for rte_eal_hotplug_remove
  std::string bus_;
  uint16_t port_id_ = RTE_MAX_ETHPORTS;
  uint16_t mtu_ = 0;
  uint16_t unenforced_mtu_ = 0;  // memif: asked for above the reported maximum, carried anyway
  bool open_ = false;
  bool probed_ = false;
  bool multi_seg_tx_ = false;
  bool guarded_ = false;        // memif: bursts under run_guarded()
  rte_mempool* pool_ = nullptr;  // the rx queues' mbufs (a fault's accounting)
  uint64_t burst_faults_ = 0;
  uint64_t burst_fault_pkts_ = 0;
  uint64_t burst_fault_leaked_mbufs_ = 0;
  uint64_t burst_fault_inexact_ = 0;

  uint16_t burst_guarded(rte_mbuf** pkts, uint16_t n, uint16_t queue, bool tx);
};

}  // namespace sf::dpdk
